"""Proof of identity: the batched engine in lockstep with the rules and the AEC env (its encoder), decision by decision.

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

import numpy as np
import pytest

import whist_env.vector as vector
from whist_env import make
from whist_env.registry import get_spec
from whist_env.rules.core import PHASE_OVER, State
from whist_env.rules.core import _all_slots as all_slots

ROOT = Path(__file__).resolve().parents[2]
VECTOR_GAMES = vector.vector_game_ids()
# slots of a rules state the engine does not keep (the last deal's summary feeds only ``infos``)
NOT_KEPT = {"deal_summary"}


def grid_cases() -> list[tuple[str, dict[str, Any]]]:
    """Every game with a batched engine x every entry of its option grid."""
    return [(g, dict(options)) for g in VECTOR_GAMES for options in get_spec(g).option_grid]


def pieces_differing(layout: Any, got: np.ndarray, want: np.ndarray) -> list[str]:
    """Names of the layout pieces where two observations differ (for failure messages)."""
    return [p.name for p in layout.pieces if not np.array_equal(got[layout.slice(p.name)], want[layout.slice(p.name)])]


def state_fields(state: State) -> dict[str, Any]:
    """A rules state's slots (lists stay lists and tuples tuples: an export must give the rules' own types)."""
    return {name: getattr(state, name) for name in all_slots(type(state)) if name not in NOT_KEPT}


def lockstep(
    game_id: str, options: dict[str, Any], num_envs: int, min_deals: int, seed: int, obs_dtype: str | None = None
) -> int:
    """Play ``num_envs`` environments in lockstep with their AEC twins until ``min_deals`` deals are done.

    Returns:
        The number of deals played (every one compared at every decision).
    """
    rng = np.random.default_rng(seed)
    venv = vector.make(game_id, num_envs, seed=seed, obs_dtype=obs_dtype, **options)
    layout = venv.encoder.layout
    n = venv.num_players
    deck_field, dealer_field = venv.field("deck"), venv.field("dealer")
    twins = [make(game_id, raw=True, **options) for _ in range(num_envs)]
    # Oh Hell's drawn trump card: each env draws it from its own generator; the twin is given the batch's
    drawn = venv.field("drawn_card") if "drawn_card" in venv.game_fields else None

    def batch_deck(i: int, state: State) -> list[int]:
        if drawn is not None and drawn[i, 0] >= 0:
            state.drawn_card = int(drawn[i, 0])  # type: ignore[attr-defined]
        return [int(c) for c in deck_field[i]]

    def start(i: int, deck: list[int], dealer: int) -> dict[str, Any]:
        extra = {"trump_card": int(drawn[i, 0])} if drawn is not None and drawn[i, 0] >= 0 else {}
        return {"deck": deck, "dealer": dealer, **extra}

    for i, twin in enumerate(twins):
        # the twin's later deals are the batch's: the instance attribute shadows the rules' draw_deck
        twin.game.draw_deck = lambda _rng, state, i=i: batch_deck(i, state)  # type: ignore[method-assign]
    decks = np.array([rng.permutation(52) for _ in range(num_envs)])
    dealers = rng.integers(n, size=num_envs)
    ts = venv.reset(options={"decks": decks, "dealers": dealers})
    for i, twin in enumerate(twins):
        twin.reset(options=start(i, decks[i].tolist(), int(dealers[i])))
    deals = 0
    step = 0
    while True:
        check(venv, twins, ts, layout, rng, step)
        if deals >= min_deals:
            return deals
        legal = ts.action_mask.astype(bool)
        # a random legal card per env (any number where the episode ended: the action is ignored)
        pick = np.where(legal.any(axis=1), (rng.random(legal.shape) * legal).argmax(axis=1), 7)
        was_over = ts.terminated.copy()
        before = venv.field("deal_index")[:, 0].copy()
        ts = venv.step(pick)
        step += 1
        after = venv.field("deal_index")[:, 0]
        for i, twin in enumerate(twins):
            if was_over[i]:
                twin.reset(options=start(i, [int(c) for c in deck_field[i]], int(dealer_field[i, 0])))
            else:
                twin.step(int(pick[i]))
                deals += int(ts.terminated[i] or after[i] != before[i])


def check(venv: Any, twins: list[Any], ts: Any, layout: Any, rng: np.random.Generator, step: int) -> None:
    """Every environment of the batch equals its twin now."""
    n = venv.num_players
    agents = twins[0].possible_agents
    seats = rng.integers(n, size=venv.num_envs)
    other_obs, other_mask = venv.observe(seats)
    assert ts.observation.dtype == venv.obs_dtype and ts.action_mask.dtype == np.int8
    full = venv.state() if step % 7 == 0 else None
    for i, twin in enumerate(twins):
        state = twin.game_state
        where = f"env {i} step {step}"
        over = state.phase == PHASE_OVER
        assert bool(ts.terminated[i]) == all(twin.terminations.values()) == over, where
        assert not ts.truncated[i]
        assert int(ts.current_player[i]) == state.to_act, where
        seat = state.history[-1][0] if over else state.to_act
        want = twin.observe(agents[seat])
        got = ts.observation[i].astype(np.float32)
        assert np.array_equal(got, want["observation"]), (where, pieces_differing(layout, got, want["observation"]))
        assert np.array_equal(ts.action_mask[i], want["action_mask"]), where
        assert ts.rewards[i].tolist() == [float(twin.rewards[a]) for a in agents], where
        other = twin.observe(agents[seats[i]])
        got = other_obs[i].astype(np.float32)
        assert np.array_equal(got, other["observation"]), (
            where,
            seats[i],
            pieces_differing(layout, got, other["observation"]),
        )
        assert np.array_equal(other_mask[i], other["action_mask"]), (where, seats[i])
        if full is not None:
            assert np.array_equal(full[i], twin.state()), where
        assert state_fields(venv.export_state(i)) == state_fields(state), where


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
        "import sys, numba; assert numba.config.DISABLE_JIT; sys.path.insert(0, sys.argv[1]); "
        "from test_vector_lockstep import lockstep; "
        f"print('deals', lockstep({game_id!r}, {options!r}, num_envs=2, min_deals=3, seed=5))"
    )
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1", "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", code, str(Path(__file__).parent)], env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert int(done.stdout.split()[-1]) >= 3
