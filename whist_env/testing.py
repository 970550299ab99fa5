"""Helpers for testing games and agents: random legal play through the rules, and the option grid.

Used by the project's own conformance tests; handy for checking a new game or agent too.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from whist_env.agents.base import random_action
from whist_env.registry import game_ids, get_spec
from whist_env.rules.core import State, TrickGame


def option_cases() -> list[tuple[str, dict[str, Any]]]:
    """``(game_id, options)`` for every registered game and every entry of its spec's ``option_grid``."""
    return [(game_id, dict(options)) for game_id in game_ids() for options in get_spec(game_id).option_grid]


def case_id(game_id: str, options: dict[str, Any]) -> str:
    """A readable test id: ``classic_whist_v0[episode=deal]``."""
    return f"{game_id}[{','.join(f'{k}={v}' for k, v in options.items()) or 'default'}]"


def play_random_episode(game: TrickGame, rng: np.random.Generator, check: bool = True, **start: Any) -> Iterator[State]:
    """Play one episode with random legal actions, yielding the state at the start and after each action.

    Args:
        game: the rules.
        rng: the generator for deals and choices.
        check: run ``game.check_invariants`` after every action.
        **start: passed to ``game.new_episode`` (``deck``, ``dealer``, ...).
    """
    state = game.new_episode(rng, **start)
    if check:
        game.check_invariants(state)
    yield state
    while not state.done:
        game.step(state, random_action(game.legal_mask(state), rng), rng)
        if check:
            game.check_invariants(state)
        yield state


__all__ = ["case_id", "option_cases", "play_random_episode", "random_action"]
