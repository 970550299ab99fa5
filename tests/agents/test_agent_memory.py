"""Agents with memory (Humbug's heuristic): one memory per game, and saved/restored exactly."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from whist_env import make
from whist_env.agents.factory import heuristic_for
from whist_env.envs.single_agent import make_single_agent
from whist_env.games.humbug.heuristic import HumbugHeuristic
from whist_env.testing import random_action


@pytest.mark.parametrize("include_history", [None, False])
def test_one_agent_shared_by_two_games_plays_each_as_a_private_copy(include_history: bool | None) -> None:
    """Two games in step, one shared agent at seat 1 of both: every decision equals a private copy's."""
    game = make("humbug_v0", raw=True, include_history=include_history).game
    shared = heuristic_for("humbug_v0", include_history=include_history)
    rng = np.random.default_rng(0)
    compared = 0
    for episode in range(6):
        states = [game.new_episode(np.random.default_rng([episode, k])) for k in range(2)]
        private = [HumbugHeuristic(include_history=include_history) for _ in states]
        while not all(s.done for s in states):
            for k, state in enumerate(states):  # one decision in each game in turn
                if state.done:
                    continue
                seat = state.to_act
                view = game.view(state, seat)
                if seat == 1:
                    action = shared.act(view, rng)
                    assert action == private[k].act(view, rng), f"episode {episode}, game {k}: play changed"
                    compared += 1
                else:
                    action = random_action(view.legal, rng)
                game.step(state, action, rng)
    assert compared > 200


def test_memory_is_bounded_per_seat() -> None:
    game = make("humbug_v0", raw=True).game
    agent = HumbugHeuristic()
    rng = np.random.default_rng(1)
    for i in range(20):  # many deals started and abandoned at the study step
        state = game.new_episode(np.random.default_rng(i))
        agent.act(game.view(state, state.to_act), rng)
    assert all(len(deals) <= 8 for deals in agent.get_state().values())


def test_get_state_and_set_state_round_trip() -> None:
    game = make("humbug_v0", raw=True).game
    agent = HumbugHeuristic()
    rng = np.random.default_rng(2)
    state = game.new_episode(rng)
    for _ in range(9):
        view = game.view(state, state.to_act)
        game.step(state, agent.act(view, rng), rng)
    saved = agent.get_state()
    other = HumbugHeuristic()
    other.set_state(copy.deepcopy(saved))
    assert other.get_state() == saved
    while not state.done:  # the restored copy decides exactly as the original
        view = game.view(state, state.to_act)
        action = agent.act(view, rng)
        assert other.act(view, rng) == action
        game.step(state, action, rng)


def test_a_resumed_humbug_env_continues_exactly() -> None:
    """The single-agent env's snapshot carries the heuristic's memory (what training checkpoints save)."""
    diverged_without_memory = 0
    for seed in range(8):
        env = make_single_agent("humbug_v0", opponents="heuristic", learner_seat=0)
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        for _ in range(3):
            env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
        snap = env.get_state()
        assert snap["agent_memory"], "the heuristic's memory is in the snapshot"

        def play_out(e: object, r: np.random.Generator) -> list[tuple[bytes, float]]:
            out = []
            done = False
            while not done:
                obs, reward, done, _, _ = e.step(int(r.choice(np.flatnonzero(e.action_masks()))))  # type: ignore[attr-defined]
                out.append((obs.tobytes(), float(reward)))
            return out

        expected = play_out(env, np.random.default_rng(99))
        fresh = make_single_agent("humbug_v0", opponents="heuristic", learner_seat=0)
        fresh.set_state(snap)
        assert play_out(fresh, np.random.default_rng(99)) == expected
        forgetful = make_single_agent("humbug_v0", opponents="heuristic", learner_seat=0)
        forgetful.set_state({**snap, "agent_memory": {}})
        diverged_without_memory += play_out(forgetful, np.random.default_rng(99)) != expected
    assert diverged_without_memory > 0  # the memory matters, so restoring it is what keeps the run exact
