"""The Humbug heuristic's numba port decides as the Python agent does, and its hidden-hand memory is the agent's.

The Python agent remembers, per deal, the layout it studied and the opponent cards it saw on the table since; the
port reads that memory from the deal's history in the row (``opponent_cards_seen``). Both are checked against the
Python agent playing whole games, every seat's views fed to its agent in order.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import whist_env.vector as vector
from whist_env.agents import endgame
from whist_env.games.humbug.engine_heuristic import remembered_pool
from whist_env.games.humbug.heuristic import HumbugHeuristic
from whist_env.registry import get_spec
from whist_env.testing import compare_positions
from whist_env.vector.core import HAND
from whist_env.vector.heuristics import ported_games
from whist_env.vector.learner import random_actions

GAME = "humbug_v0"
GRID = [dict(options) for options in get_spec(GAME).option_grid]
PER_ENTRY = 10_000 // len(GRID) + 1  # >= 10,000 positions over the option grid


def test_humbug_is_ported() -> None:
    assert GAME in ported_games()


@pytest.mark.parametrize("options", [{}, {"num_deals": 3}])
def test_the_pool_is_the_python_agents_memory_in_whole_games(options: dict[str, int]) -> None:
    """At every decision of a hidden-hand game, the pool the port reads from the row equals the one the Python
    agent's memory gives (its dealt hand less the cards seen go, among the visible ones); some of them hold cards
    the opponent has already played unseen, so the memory is not simply the opponent's hand."""
    num_envs = 16
    venv = vector.make(GAME, num_envs, seed=5, **options)
    game = venv.game
    agents = [[HumbugHeuristic(**options) for _ in range(2)] for _ in range(num_envs)]
    rng = np.random.default_rng(5)
    ts = venv.reset()
    decisions = not_the_hand = episodes = 0
    while episodes < 2 * num_envs:
        for i in range(num_envs):
            seat = int(ts.current_player[i])
            if seat < 0:
                agents[i] = [HumbugHeuristic(**options) for _ in range(2)]
                episodes += 1
                continue
            view = game.view(venv.export_state(i), seat)
            agents[i][seat].act(view, rng)
            mem = agents[i][seat]._memory[seat][-1]
            assert (mem.deal_index, mem.dealer) == (view.deal_index, view.dealer)
            visible = view.unseen | (1 << view.turn_up)
            row = venv._state[i]  # the engine row the port reads
            pool = remembered_pool(row, seat, view.unseen)
            assert pool == mem.theirs & ~mem.gone & visible, (i, seat, view.summary())
            decisions += 1
            not_the_hand += pool != row[HAND + 1 - seat]
        acts = np.zeros(num_envs, np.int64)  # an ended episode ignores its action
        live = np.flatnonzero(ts.current_player >= 0)
        acts[live] = random_actions(ts.action_mask[live] != 0, rng)
        ts = venv.step(acts)
    assert decisions > 2 * num_envs * 52 * 0.9
    assert not_the_hand > decisions // 10


@pytest.mark.parametrize("k", range(len(GRID)))
def test_port_equals_python_heuristic(k: int, monkeypatch: pytest.MonkeyPatch) -> None:
    solved = 0  # positions the Python agent solved exactly (the ending with both hands known)
    solve = endgame.solve_fast

    def counted(*args: Any) -> tuple[int, int]:
        nonlocal solved
        solved += 1
        return solve(*args)

    monkeypatch.setattr(endgame, "solve_fast", counted)
    decided = compare_positions(GAME, GRID[k], PER_ENTRY, seed=k)
    assert decided.total() >= PER_ENTRY
    assert len(decided) > 40  # most cards were some decision
    # exact endings were compared: often with the opponent's hand in view, rarely from the hidden-hand memory (it
    # misses the cards the opponent followed with to tricks it won, so its pool is seldom exact)
    assert solved > (PER_ENTRY // 10 if GRID[k].get("mode") == "open_table" else 10)


@pytest.mark.slow
@pytest.mark.parametrize("k", range(len(GRID)))
def test_port_equals_python_heuristic_in_heuristic_play(k: int) -> None:
    """Mostly the heuristic's own play (the positions an arena or a learner meets), on more positions."""
    decided = compare_positions(GAME, GRID[k], 4 * PER_ENTRY, seed=100 + k, num_envs=64, heuristic_share=0.95)
    assert decided.total() >= 4 * PER_ENTRY
