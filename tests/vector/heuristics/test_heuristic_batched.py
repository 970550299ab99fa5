"""BatchedHeuristic's checks: what it plays, and the clear errors for what it does not."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import whist_env.vector as vector
import whist_env.vector.heuristics as heuristics
from whist_env import registry
from whist_env.errors import OptionError
from whist_env.vector.heuristics import BatchedHeuristic, ported_games


def test_ported_games_are_listed() -> None:
    assert {"classic_whist_v0", "humbug_whist_v0"} <= set(ported_games())


def test_a_game_not_ported_is_refused_naming_the_ported_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    """A game is ported when its spec names the port (``engine_heuristic``): without it, it is refused."""
    spec = registry.get_spec("humbug_whist_v0")
    monkeypatch.setitem(registry._LOADED, spec.game_id, dataclasses.replace(spec, engine_heuristic=None))
    assert spec.game_id not in heuristics.ported_games()
    with pytest.raises(
        OptionError, match=r"humbug_whist_v0' has no batched \(numba\) port yet; ported: classic_whist_v0"
    ):
        BatchedHeuristic("humbug_whist_v0")


def test_unknown_games_and_bad_options_are_refused() -> None:
    with pytest.raises(OptionError, match="bridge"):
        BatchedHeuristic("bridge")
    with pytest.raises(OptionError, match="target_points"):
        BatchedHeuristic("classic_whist_v0", target_points=6)


def test_an_engine_of_other_options_or_bad_indices_are_refused_and_nothing_changes() -> None:
    venv = vector.make("classic_whist_v0", 4, seed=0, episode="deal")
    venv.reset()
    before = venv.state().copy()
    with pytest.raises(ValueError, match="build one for its options"):
        BatchedHeuristic("classic_whist_v0").act_state(venv, np.arange(4))
    agent = BatchedHeuristic("classic_whist_v0", episode="deal")
    with pytest.raises(ValueError, match=r"envs must lie in 0\.\.3"):
        agent.act_state(venv, np.array([0, 4]))
    with pytest.raises(ValueError, match="1-D array"):
        agent.act_state(venv, np.zeros((2, 2), np.int64))
    assert np.array_equal(venv.state(), before)
    assert agent.act_state(venv, np.array([], np.int64)).shape == (0,)


def test_every_action_is_legal_and_an_ended_episode_gets_minus_one() -> None:
    venv = vector.make("humbug_whist_v0", 16, seed=1, episode="deal")
    agent = BatchedHeuristic("humbug_whist_v0", episode="deal")
    ts = venv.reset()
    every = np.arange(16)
    ended = 0
    for _ in range(400):
        acts = agent.act_state(venv, every)
        live = ts.current_player >= 0
        assert (acts[~live] == -1).all()
        assert ts.action_mask[live, acts[live]].all()
        ended += int((~live).sum())
        ts = venv.step(np.where(live, acts, 0))
    assert ended > 0
