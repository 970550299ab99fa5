"""The spec of German Whist (``whist_env/german_whist_v0.py`` is its PettingZoo face)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from whist_env.encoding.trick import TrickEncoder
from whist_env.games.german_whist.encoding import GermanWhistEncoder
from whist_env.games.german_whist.rules import PHASE1_TRICKS, GermanWhist, GermanWhistState
from whist_env.spec import GameSpec, SearchSpec, sides_of

NUM_TRICKS = 2 * PHASE1_TRICKS


def make_encoder(game: GermanWhist) -> TrickEncoder:
    """The observation encoder: a series and the reward's span change its layout."""
    cfg = game.config
    span = 1 if cfg.reward == "win" else (26 if cfg.count_all_tricks else 13)
    return GermanWhistEncoder(cfg.num_deals, span)


def hidden_masks(state: GermanWhistState) -> list[int]:
    """The stock (face-up card included), the next face-down draw, then each player's face-down draws."""
    k = state.trick_number
    stock = 0
    next_draw = 0
    if k < PHASE1_TRICKS:
        for c in state.stock[2 * k :]:
            stock |= 1 << c
        next_draw = 1 << state.stock[2 * k + 1]
    return [stock, next_draw, state.draws[0], state.draws[1]]


def search_rules(options: Mapping[str, Any]) -> tuple[tuple[int, ...], tuple[bool, ...], tuple[bool, ...]]:
    """Two players; phase-1 tricks count only with ``count_all_tricks``, and need not be followed without
    ``phase1_follow_suit``."""
    count_all = bool(options.get("count_all_tricks", False))
    follow1 = bool(options.get("phase1_follow_suit", True))
    counts = (count_all,) * PHASE1_TRICKS + (True,) * PHASE1_TRICKS
    follow = (follow1,) * PHASE1_TRICKS + (True,) * PHASE1_TRICKS
    return sides_of(2, None), counts, follow


def stock_draws(stock: Sequence[int], trick_number: int) -> tuple[tuple[int, int], ...]:
    """Draws per trick of a deal, from the stock still on the table (face-up card first).

    After phase-1 trick ``k`` (1-based) the winner takes the face-up card and the loser the next one
    (RULES.md §5.2); ``stock`` holds the ``26 - 2 * trick_number`` cards left.
    """
    draws = [(-1, -1)] * NUM_TRICKS
    for i in range(len(stock) // 2):
        draws[trick_number + i] = (stock[2 * i], stock[2 * i + 1])
    return tuple(draws)


def table_stock(state: GermanWhistState) -> tuple[int, ...]:
    """The stock still on the table in a state, in order, face-up card first (empty in phase 2)."""
    k = state.trick_number
    return tuple(state.stock)[2 * k :] if k < PHASE1_TRICKS else ()


SPEC: GameSpec[GermanWhist, GermanWhistState] = GameSpec(
    game_id=GermanWhist.game_id,
    rules_cls=GermanWhist,
    make_encoder=make_encoder,
    hidden_pieces=(
        ("stock", "cards left in the stock, the face-up card included"),
        ("next_draw", "the face-down card under the face-up one: the loser of this trick draws it"),
        ("draws[player_0]", "cards player_0 drew face down this deal"),
        ("draws[player_1]", "cards player_1 drew face down this deal"),
    ),
    hidden_masks=hidden_masks,
    heuristic="whist_env.games.german_whist.heuristic:GermanWhistHeuristic",
    reference="whist_env.games.german_whist.reference:GermanWhistReference",
    engine="whist_env.games.german_whist.engine:GermanWhistVector",
    engine_heuristic="whist_env.games.german_whist.engine_heuristic:act_kernel",
    pretrained="whist_env.games.german_whist:pretrained.npz",
    single_deal={"num_deals": 1},
    unit="one deal: ±1 for the majority of the scoring tricks (or the trick difference)",
    search=SearchSpec(
        max_tricks=13, rules=search_rules, draws=stock_draws, table_stock=table_stock, open_from=PHASE1_TRICKS
    ),
    option_grid=(
        {},
        {"phase1_follow_suit": False},
        {"count_all_tricks": True},
        {"reward": "trick_diff"},
        {"count_all_tricks": True, "reward": "trick_diff", "num_deals": 3},
        {"include_history": False},
        {"phase1_follow_suit": False, "include_history": False, "num_deals": 2},
    ),
)
