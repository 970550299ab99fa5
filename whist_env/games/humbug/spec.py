"""The spec of Humbug (``whist_env/humbug_v0.py`` is its PettingZoo face)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from whist_env.encoding.trick import TrickEncoder
from whist_env.games.humbug.encoding import HumbugEncoder
from whist_env.games.humbug.rules import Humbug
from whist_env.rules.core import State
from whist_env.spec import GameSpec, SearchSpec, sides_of

NUM_TRICKS = 26


def make_encoder(game: Humbug) -> TrickEncoder:
    """The observation encoder (a series adds the balance and the deals left)."""
    return HumbugEncoder(game.config.num_deals)


def search_rules(options: Mapping[str, Any]) -> tuple[tuple[int, ...], tuple[bool, ...], tuple[bool, ...]]:
    """Two players; all 26 tricks count and suit must always be followed."""
    return sides_of(2, None), (True,) * NUM_TRICKS, (True,) * NUM_TRICKS


SPEC: GameSpec[Humbug, State] = GameSpec(
    game_id=Humbug.game_id,
    rules_cls=Humbug,
    make_encoder=make_encoder,
    heuristic="whist_env.games.humbug.heuristic:HumbugHeuristic",
    reference="whist_env.games.humbug.reference:HumbugReference",
    engine="whist_env.games.humbug.engine:HumbugVector",
    engine_heuristic="whist_env.games.humbug.engine_heuristic:act_kernel",
    pretrained="whist_env.games.humbug:pretrained.npz",
    single_deal={"num_deals": 1},
    unit="one deal of 26 tricks: ±(trick difference)",
    search=SearchSpec(max_tricks=12, rules=search_rules),
    option_grid=(
        {},
        {"mode": "open_table"},
        {"mode": "open_table", "include_history": False},
        {"num_deals": 3},
        {"mode": "open_table", "num_deals": 2},
    ),
)
