"""The classic Whist heuristic's numba port decides as the Python agent does, position by position."""

from __future__ import annotations

import pytest

from whist_env.registry import get_spec
from whist_env.testing import compare_positions

GAME = "classic_whist_v0"
GRID = [dict(options) for options in get_spec(GAME).option_grid]
PER_ENTRY = 10_000 // len(GRID) + 1  # >= 10,000 positions over the option grid


@pytest.mark.parametrize("k", range(len(GRID)))
def test_port_equals_python_heuristic(k: int) -> None:
    decided = compare_positions(GAME, GRID[k], PER_ENTRY, seed=k)
    assert decided.total() >= PER_ENTRY
    assert len(decided) > 40  # most cards were some decision


@pytest.mark.parametrize("k", range(len(GRID)))
def test_port_equals_python_heuristic_in_heuristic_play(k: int) -> None:
    """Mostly the heuristic's own play (the positions an arena or a learner meets): 40,000 more positions."""
    decided = compare_positions(GAME, GRID[k], 4 * PER_ENTRY, seed=100 + k, num_envs=64, heuristic_share=0.95)
    assert decided.total() >= 4 * PER_ENTRY
