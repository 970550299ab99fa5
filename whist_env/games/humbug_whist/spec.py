"""The spec of Swedish Humbug whist (``whist_env/humbug_whist_v0.py`` is its PettingZoo face)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from whist_env.encoding.trick import TrickEncoder
from whist_env.games.humbug_whist.encoding import HumbugWhistEncoder
from whist_env.games.humbug_whist.rules import HumbugWhist, HumbugWhistState
from whist_env.spec import GameSpec, SearchSpec, sides_of

NUM_TRICKS = 13


def make_encoder(game: HumbugWhist) -> TrickEncoder:
    """The observation encoder (the same layout for every option)."""
    return HumbugWhistEncoder()


def hidden_masks(state: HumbugWhistState) -> list[int]:
    """Both blinds (while untaken), then both hands put away."""
    return [*state.blinds, *state.put_away]


def search_rules(options: Mapping[str, Any]) -> tuple[tuple[int, ...], tuple[bool, ...], tuple[bool, ...]]:
    """Two players in the card play after the exchange; every trick counts, suit must be followed."""
    return sides_of(2, None), (True,) * NUM_TRICKS, (True,) * NUM_TRICKS


SPEC: GameSpec[HumbugWhist, HumbugWhistState] = GameSpec(
    game_id=HumbugWhist.game_id,
    rules_cls=HumbugWhist,
    make_encoder=make_encoder,
    hidden_pieces=(
        *((f"blind[player_{s}]", f"the face-down blind at player_{s}'s right while untaken") for s in (0, 1)),
        *((f"put_away[player_{s}]", f"the hand player_{s} put away by exchanging") for s in (0, 1)),
    ),
    hidden_masks=hidden_masks,
    heuristic="whist_env.games.humbug_whist.heuristic:HumbugWhistHeuristic",
    reference="whist_env.games.humbug_whist.reference:HumbugWhistReference",
    engine="whist_env.games.humbug_whist.engine:HumbugWhistVector",
    engine_heuristic="whist_env.games.humbug_whist.engine_heuristic:act_kernel",
    pretrained="whist_env.games.humbug_whist:pretrained.npz",
    single_deal={"episode": "deal"},
    unit="one deal after the exchange: ±(trick difference)",
    search=SearchSpec(max_tricks=13, rules=search_rules),
    # Together the entries take every value of every option.
    option_grid=(
        {},
        {"exchange_order": "simultaneous"},
        {"episode": "game"},
        {"episode": "deal"},
        {"include_history": False},
        {"episode": "deal", "exchange_order": "simultaneous", "include_history": False},
        {"episode": "game", "exchange_order": "simultaneous"},
    ),
)
