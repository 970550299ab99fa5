"""The spec of classic partnership Whist (``whist_env/classic_whist_v0.py`` is its PettingZoo face)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from whist_env.encoding.trick import TrickEncoder
from whist_env.games.classic_whist.encoding import ClassicWhistEncoder
from whist_env.games.classic_whist.rules import PARTNER_OFFSET, ClassicWhist, ClassicWhistState
from whist_env.spec import GameSpec, SearchSpec, sides_of

NUM_TRICKS = 13


def make_encoder(game: ClassicWhist) -> TrickEncoder:
    """The observation encoder (the same layout for every option)."""
    return ClassicWhistEncoder()


def search_rules(options: Mapping[str, Any]) -> tuple[tuple[int, ...], tuple[bool, ...], tuple[bool, ...]]:
    """Two partnerships; every trick counts and suit must always be followed."""
    return sides_of(4, PARTNER_OFFSET), (True,) * NUM_TRICKS, (True,) * NUM_TRICKS


SPEC: GameSpec[ClassicWhist, ClassicWhistState] = GameSpec(
    game_id=ClassicWhist.game_id,
    rules_cls=ClassicWhist,
    make_encoder=make_encoder,
    heuristic="whist_env.games.classic_whist.heuristic:ClassicWhistHeuristic",
    reference="whist_env.games.classic_whist.reference:ClassicWhistReference",
    engine="whist_env.games.classic_whist.engine:ClassicWhistVector",
    engine_heuristic="whist_env.games.classic_whist.engine_heuristic:act_kernel",
    pretrained="whist_env.games.classic_whist:pretrained.npz",
    single_deal={"episode": "deal"},
    unit="one deal: the partnership's ±(tricks − 6) (+ honours when on)",
    partner_offset=PARTNER_OFFSET,
    search=SearchSpec(max_tricks=7, rules=search_rules),
    option_grid=(
        {},
        {"episode": "deal"},
        {"episode": "deal", "include_history": False},
        {"target_points": 7, "reward": "points"},
        {"target_points": 10, "honours": True},
        {"honours": True, "rubber": True},
        {"rubber": True, "reward": "points", "honours": True},
        {"trump_rotation": True, "honours": True, "reward": "points"},
    ),
)
