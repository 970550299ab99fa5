"""Every agent plays only legal actions, in every game and option of the conformance grid."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from whist_env.agents import RandomAgent, heuristic_for, make_agent
from whist_env.registry import get_spec
from whist_env.testing import case_id, option_cases

CASES = [pytest.param(g, o, id=case_id(g, o)) for g, o in option_cases()]


def play(game_id: str, options: dict[str, Any], seed: int, decisions: int, lineup: str) -> int:
    """Play episodes with heuristic ("H") and random ("R") seats until ``decisions``; returns episodes played."""
    game = get_spec(game_id).make_rules(**options)
    n = game.num_players
    rng = np.random.default_rng(seed)
    done_decisions = episodes = 0
    while done_decisions < decisions:
        agents = [
            heuristic_for(game_id, **options) if lineup[(s + episodes) % len(lineup)] == "H" else RandomAgent()
            for s in range(n)
        ]
        state = game.new_episode(rng)
        while not state.done and done_decisions < decisions:
            seat = state.to_act
            view = game.view(state, seat)
            action = agents[seat].act(view, rng)
            assert isinstance(action, int), f"{type(agents[seat]).__name__} returned {action!r}"
            assert (view.legal >> action) & 1, f"illegal {game.describe_action(action)}\n{view.summary()}"
            game.step(state, action, rng)
            done_decisions += 1
        episodes += 1
    return episodes


@pytest.mark.parametrize(("game_id", "options"), CASES)
def test_heuristic_plays_only_legal_actions(game_id: str, options: dict[str, Any]) -> None:
    play(game_id, options, seed=1, decisions=1200, lineup="HR")
    play(game_id, options, seed=2, decisions=600, lineup="H")


@pytest.mark.slow
@pytest.mark.parametrize(("game_id", "options"), CASES)
def test_heuristic_plays_only_legal_actions_long(game_id: str, options: dict[str, Any]) -> None:
    play(game_id, options, seed=11, decisions=6_000, lineup="HRR")
    play(game_id, options, seed=12, decisions=3_000, lineup="H")


@pytest.mark.parametrize(("game_id", "options"), CASES)
def test_random_agent_plays_only_legal_actions(game_id: str, options: dict[str, Any]) -> None:
    play(game_id, options, seed=3, decisions=400, lineup="R")


@pytest.mark.parametrize("game_id", sorted({g for g, _ in option_cases()}))
def test_make_agent_names(game_id: str) -> None:
    assert isinstance(make_agent("random", game_id), RandomAgent)
    agent = make_agent("heuristic", game_id)
    assert agent.name == "heuristic" and type(agent).__doc__ and len(type(agent).__doc__ or "") > 200


def test_random_agent_is_random_action_on_the_view() -> None:
    # One implementation: the agent draws exactly as random_action does on its view's mask, uniformly.
    from whist_env.agents.base import random_action
    from whist_env.games.oh_hell.rules import OhHell

    game = OhHell(num_players=3, episode="deal")
    state = game.new_episode(np.random.default_rng(0))
    view = game.view(state, state.to_act)  # the first bid: bids 0..k are legal
    legal = view.legal_actions()
    a, b = np.random.default_rng(5), np.random.default_rng(5)
    picks = [RandomAgent().act(view, a) for _ in range(600)]
    assert picks == [random_action(view.legal, b) for _ in range(600)]
    assert set(picks) == set(legal)
    with pytest.raises(ValueError, match="no legal action"):
        random_action(0, a)
