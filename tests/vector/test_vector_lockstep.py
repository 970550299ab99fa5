"""Proof of identity: the batched engine in lockstep with the rules and the AEC env (its encoder), decision by decision
(:func:`whist_env.testing.lockstep`, the check the recipe gives every new engine).

Each environment of a batch has an AEC twin dealt the same decks (the batch's own: the twin's ``draw_deck`` reads
the batch's current deck) and given the same random legal actions. At every decision the seat to act, the action
mask, the observation (bit for bit, also of a random other seat), the rewards, the terminations, the full state
(``state()``) and the exported rules state must be equal.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import whist_env.vector as vector
from whist_env.registry import get_spec
from whist_env.testing import lockstep

ROOT = Path(__file__).resolve().parents[2]
VECTOR_GAMES = vector.vector_game_ids()


def grid_cases() -> list[tuple[str, dict[str, Any]]]:
    """Every game with a batched engine x every entry of its option grid."""
    return [(g, dict(options)) for g in VECTOR_GAMES for options in get_spec(g).option_grid]


@pytest.mark.parametrize(("game_id", "options"), grid_cases(), ids=lambda v: str(v))
def test_lockstep_over_the_option_grid(game_id: str, options: dict[str, Any]) -> None:
    """>= 1,000 deals per game over its option grid (the fast suite), uint8 observations."""
    per_case = -(-1000 // len(get_spec(game_id).option_grid))
    assert lockstep(game_id, options, num_envs=16, min_deals=per_case, seed=len(options)) >= per_case


@pytest.mark.parametrize("game_id", VECTOR_GAMES)
def test_lockstep_float32_observations(game_id: str) -> None:
    options = dict(get_spec(game_id).option_grid[-1])
    assert lockstep(game_id, options, num_envs=5, min_deals=20, seed=3, obs_dtype="float32") >= 20


@pytest.mark.slow
@pytest.mark.parametrize(("game_id", "options"), grid_cases(), ids=lambda v: str(v))
def test_lockstep_many_deals(game_id: str, options: dict[str, Any]) -> None:
    """>= 20,000 deals per game over its option grid."""
    per_case = -(-20000 // len(get_spec(game_id).option_grid))
    assert lockstep(game_id, options, num_envs=64, min_deals=per_case, seed=100 + len(options)) >= per_case


@pytest.mark.parametrize("game_id", VECTOR_GAMES)
def test_lockstep_without_the_jit(game_id: str) -> None:
    """The kernels as plain Python (NUMBA_DISABLE_JIT=1) agree with the rules too (a few deals)."""
    options = dict(get_spec(game_id).option_grid[-1])
    code = (
        "import numba; assert numba.config.DISABLE_JIT; "
        "from whist_env.testing import lockstep; "
        f"print('deals', lockstep({game_id!r}, {options!r}, num_envs=2, min_deals=3, seed=5))"
    )
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert int(done.stdout.split()[-1]) >= 3
