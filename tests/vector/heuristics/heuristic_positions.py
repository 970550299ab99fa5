"""Lockstep of a batched heuristic port with the Python heuristic, decision by decision (shared by the game tests).

A batch of engine environments is played by a mix of the batched heuristic and random legal actions. At every
decision the port's action (``BatchedHeuristic.act_state``) must equal the Python agent's
(``make_agent("heuristic", game, **options).act(view, rng)``) for the view the rules give the seat to act of the
exported state. One Python agent per environment and seat, fed that seat's decisions in order, so that an agent
with a memory (Humbug's) sees what it would see in a game.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

import whist_env.vector as vector
from whist_env.agents import make_agent
from whist_env.registry import get_spec
from whist_env.vector.heuristics import BatchedHeuristic
from whist_env.vector.learner import random_actions


def grid_of(game_id: str) -> list[dict[str, Any]]:
    """The game's option grid."""
    return [dict(options) for options in get_spec(game_id).option_grid]


def compare_positions(
    game_id: str, options: dict[str, Any], positions: int, seed: int, num_envs: int = 32, heuristic_share: float = 0.6
) -> Counter[int]:
    """Play until at least ``positions`` decisions were compared; returns how often each action was the decision.

    Raises:
        AssertionError: at the first decision where the port and the Python agent differ, with the view.
    """
    venv = vector.make(game_id, num_envs, seed=seed, **options)
    game = venv.game
    batched = BatchedHeuristic(game_id, **options)
    agents = [[make_agent("heuristic", game_id, **options) for _ in range(venv.num_players)] for _ in range(num_envs)]
    rng = np.random.default_rng(seed)
    every = np.arange(num_envs)
    ts = venv.reset()
    decided: Counter[int] = Counter()
    while decided.total() < positions:
        got = batched.act_state(venv, every)
        for i in every:
            seat = int(ts.current_player[i])
            if seat < 0:
                assert got[i] == -1
                agents[i] = [make_agent("heuristic", game_id, **options) for _ in range(venv.num_players)]
                continue
            view = game.view(venv.export_state(int(i)), seat)
            want = agents[i][seat].act(view, rng)
            assert got[i] == want, (
                f"{game_id} {options}: env {i} seat {seat}: port plays {got[i]}, Python {want}\n{view.summary()}"
            )
            decided[want] += 1
        acts = got.copy()
        live = np.flatnonzero(ts.current_player >= 0)
        rand = live[rng.random(len(live)) >= heuristic_share]
        if len(rand):
            acts[rand] = random_actions(ts.action_mask[rand] != 0, rng)
        acts[ts.current_player < 0] = 0  # an ended episode ignores its action
        ts = venv.step(acts)
    return decided
