"""The toy through the registry and the GameSpec API, with the conformance suite's own checks (all of them:
the slow ones in a slow test)."""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import test_conformance as conformance

import whist_env
from whist_env import registry
from whist_env.agents import heuristic_for
from whist_env.errors import OptionError
from whist_env.search.pimc import PIMCAgent

from .heuristic import LowWhistHeuristic
from .rules import LowWhist
from .spec import SPEC


def _conformance_checks(parameters: list[str], slow: bool = False) -> list[Callable[..., None]]:
    """The conformance suite's test functions taking exactly ``parameters``: the fast ones, or the slow ones."""
    checks = []
    for name, fn in vars(conformance).items():
        if not name.startswith("test_") or not callable(fn):
            continue
        marked_slow = any(mark.name == "slow" for mark in getattr(fn, "pytestmark", []))
        if marked_slow == slow and list(inspect.signature(fn).parameters) == parameters:
            checks.append(fn)
    return checks


PER_OPTIONS = _conformance_checks(["game_id", "options"])
PER_GAME = _conformance_checks(["game_id"])
SLOW_PER_OPTIONS = _conformance_checks(["game_id", "options"], slow=True)
SLOW_PER_GAME = _conformance_checks(["game_id"], slow=True)


def test_the_registry_knows_the_toy(low_whist_spec: Any) -> None:
    game_id = low_whist_spec.game_id
    assert game_id in registry.game_ids() and registry.get_spec(game_id) is low_whist_spec
    assert low_whist_spec.sides(4) == (0, 1, 2, 3)  # no partnerships
    assert isinstance(low_whist_spec.make_rules(num_deals=2), LowWhist)
    assert low_whist_spec.heuristic_cls() is LowWhistHeuristic
    assert low_whist_spec.search is None


def test_gymnasium_builds_the_toy_from_its_registration_and_forgets_it_after(low_whist_spec: Any) -> None:
    import gymnasium

    gym_id = whist_env.gymnasium_id(low_whist_spec.game_id)
    assert gym_id == "whist_env/low_whist-v0"
    env = gymnasium.make(gym_id, opponents="random", num_deals=1)
    obs, info = env.reset(seed=0)
    assert env.observation_space.contains(obs) and info["action_mask"].any()
    envs = gymnasium.make_vec(gym_id, num_envs=2)  # the toy's batched engine: the learner env
    assert not isinstance(envs, gymnasium.vector.SyncVectorEnv) and envs.reset(seed=0)[0].shape[0] == 2
    whist_env.unregister(low_whist_spec.game_id)
    try:
        assert gym_id not in gymnasium.registry
        # the same game without a batched engine: Gymnasium's SyncVectorEnv over the single-agent env
        whist_env.register(dataclasses.replace(low_whist_spec, engine=None, engine_heuristic=None))
        envs = gymnasium.make_vec(gym_id, num_envs=2)
        assert isinstance(envs, gymnasium.vector.SyncVectorEnv) and envs.reset(seed=0)[0].shape[0] == 2
        whist_env.unregister(low_whist_spec.game_id)
    finally:
        whist_env.register(low_whist_spec)
    assert gym_id in gymnasium.registry


def test_the_conformance_checks_pass_over_the_option_grid(low_whist_spec: Any) -> None:
    game_id = low_whist_spec.game_id
    assert len(PER_OPTIONS) >= 10 and len(PER_GAME) >= 3, "the conformance suite's checks were not found"
    for options in low_whist_spec.option_grid:
        for check in PER_OPTIONS:
            check(game_id, dict(options))
    for check in PER_GAME:
        check(game_id)


@pytest.mark.slow
def test_the_slow_conformance_checks_pass_over_the_option_grid(low_whist_spec: Any) -> None:
    game_id = low_whist_spec.game_id
    assert SLOW_PER_OPTIONS or SLOW_PER_GAME, "the conformance suite's slow checks were not found"
    for options in low_whist_spec.option_grid:
        for check in SLOW_PER_OPTIONS:
            check(game_id, dict(options))
    for check in SLOW_PER_GAME:
        check(game_id)


def test_the_heuristic_plays_it_and_pimc_is_refused(low_whist_spec: Any) -> None:
    game_id = low_whist_spec.game_id
    env = whist_env.make(game_id, raw=True)
    env.reset(seed=2)
    heuristic = heuristic_for(game_id)
    assert isinstance(heuristic, LowWhistHeuristic)
    with pytest.raises(OptionError, match=f"pimc: {game_id} has no search agent"):
        PIMCAgent(game_id, samples=2)  # no search for this game: an error, not the heuristic standing in
    rng = np.random.default_rng(0)
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        action = heuristic.act(env.view(agent), rng)
        assert obs["action_mask"][action]
        env.step(action)


@pytest.mark.parametrize("options", [dict(o) for o in SPEC.option_grid])
def test_the_toy_encoder_equals_its_reference(low_whist_spec: Any, options: dict[str, Any]) -> None:
    # the recipe's reference twin (reference.py, named by the spec) along random games, as for the built-in games
    from whist_env.testing import reference_mismatches

    assert low_whist_spec.reference_cls() is not None
    checked, report = reference_mismatches(low_whist_spec.game_id, options, num_games=4, seed=3)
    assert report is None, report
    assert checked >= 4 * 52 * 4  # four deals of 52 cards, every seat's view after every action
