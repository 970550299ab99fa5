"""The German Whist heuristic's numba port decides as the Python agent does: the prize play of stage 1 and the
two-player play of stage 2, on >= 10,000 positions over the option grid; its card values are the Python floats."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any, cast

import numpy as np
import pytest

from whist_env.cards import NUM_CARDS
from whist_env.games.german_whist import heuristic as python_agent
from whist_env.games.german_whist.engine_heuristic import card_value, draw_value
from whist_env.games.german_whist.heuristic import GermanWhistHeuristic
from whist_env.games.german_whist.heuristic import card_value as python_card_value
from whist_env.registry import get_spec
from whist_env.testing import compare_positions
from whist_env.vector.core import NO_TRUMP
from whist_env.vector.heuristics import ported_games
from whist_env.view import PlayerView

GAME = "german_whist_v0"
GRID = [dict(options) for options in get_spec(GAME).option_grid]
PER_ENTRY = 10_000 // len(GRID) + 1  # >= 10,000 positions over the option grid


def test_german_whist_is_ported() -> None:
    assert GAME in ported_games()


def test_card_values_are_the_python_floats() -> None:
    for trump in (*range(4), None):
        for c in range(NUM_CARDS):
            assert card_value(c, NO_TRUMP if trump is None else trump) == python_card_value(c, trump), (c, trump)


def test_draw_value_is_the_python_average_to_the_last_bit() -> None:
    rng = np.random.default_rng(0)
    agent = GermanWhistHeuristic()
    for _ in range(2000):
        pool = sum(1 << int(c) for c in np.flatnonzero(rng.random(NUM_CARDS) < rng.uniform(0.0, 1.0)))
        turn_up = int(rng.integers(NUM_CARDS))
        trump = int(rng.integers(4))
        view = cast(PlayerView, SimpleNamespace(unseen=pool, turn_up=turn_up, trump=trump))
        assert draw_value(pool & ~(1 << turn_up), trump) == agent.draw_value(view)


@pytest.mark.parametrize("k", range(len(GRID)))
def test_port_equals_python_heuristic(k: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # which rule the Python agent decided by, to check that every one of them was compared
    rules: Counter[str] = Counter()

    def counted(name: str, rule: Callable[..., int]) -> Callable[..., int]:
        def run(*args: Any) -> int:
            gain = args[-1] if name != "two_player_play" else 0.0
            rules[name + (" gain" if gain > 0 else "")] += 1
            return rule(*args)

        return run

    for name in ("lead", "follow"):
        monkeypatch.setattr(GermanWhistHeuristic, name, counted(name, getattr(GermanWhistHeuristic, name)))
    monkeypatch.setattr(python_agent, "two_player_play", counted("two_player_play", python_agent.two_player_play))
    decided = compare_positions(GAME, GRID[k], PER_ENTRY, seed=k)
    assert decided.total() >= PER_ENTRY
    assert len(decided) > 40  # most cards were some decision
    for rule in ("lead", "lead gain", "follow", "follow gain", "two_player_play"):
        assert rules[rule] > PER_ENTRY // 50, rules


@pytest.mark.slow
@pytest.mark.parametrize("k", range(len(GRID)))
def test_port_equals_python_heuristic_in_heuristic_play(k: int) -> None:
    """Mostly the heuristic's own play (the positions an arena or a learner meets), on more positions."""
    decided = compare_positions(GAME, GRID[k], 4 * PER_ENTRY, seed=100 + k, num_envs=64, heuristic_share=0.95)
    assert decided.total() >= 4 * PER_ENTRY
