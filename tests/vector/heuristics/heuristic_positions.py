"""Lockstep of a batched heuristic port with the Python heuristic, decision by decision (shared by the game tests):
:func:`whist_env.testing.compare_positions`, the library's check for any port.

A batch of engine environments is played by a mix of the batched heuristic and random legal actions. At every
decision the port's action (``BatchedHeuristic.act_state``) must equal the Python agent's
(``make_agent("heuristic", game, **options).act(view, rng)``) for the view the rules give the seat to act of the
exported state. One Python agent per environment and seat, fed that seat's decisions in order, so that an agent
with a memory (Humbug's) sees what it would see in a game.
"""

from __future__ import annotations

from typing import Any

from whist_env.registry import get_spec
from whist_env.testing import compare_positions

__all__ = ["compare_positions", "grid_of"]


def grid_of(game_id: str) -> list[dict[str, Any]]:
    """The game's option grid."""
    return [dict(options) for options in get_spec(game_id).option_grid]
