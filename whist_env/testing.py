"""Helpers for testing games and agents: random legal play through the rules, the option grid, and the fast encoder
held to its plain reference twin.

Used by the project's own conformance tests; a new game's tests call them too (``docs/adding_a_game.md``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from whist_env.agents.base import random_action
from whist_env.encoding.layout import Layout
from whist_env.registry import game_ids, get_spec
from whist_env.rules.core import State, TrickGame
from whist_env.view import PlayerView


def option_cases() -> list[tuple[str, dict[str, Any]]]:
    """``(game_id, options)`` for every registered game and every entry of its spec's ``option_grid``."""
    return [(game_id, dict(options)) for game_id in game_ids() for options in get_spec(game_id).option_grid]


def same_info(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Whether two infos hold the same keys and values (their numpy arrays compared by value)."""
    return a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)


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


def mismatch_report(layout: Layout, fast: np.ndarray, ref: np.ndarray, view: PlayerView) -> str:
    """Which pieces differ between two observation vectors, each side in words, and the view."""
    lines = [f"fast encoder != reference for seat {view.seat} (phase {view.phase}, to act {view.to_act}):"]
    for piece in layout.pieces:
        part = layout.slice(piece.name)
        if fast[part].tobytes() != ref[part].tobytes():
            one = Layout([piece])
            lines.append(
                f"  piece {piece.name!r} [{part.start}:{part.stop}]: fast {one.unpack(fast[part])[piece.name]!r}, "
                f"reference {one.unpack(ref[part])[piece.name]!r}"
            )
    lines.append(view.summary())
    return "\n".join(lines)


def reference_mismatches(
    game_id: str, options: dict[str, Any], num_games: int, seed: int, max_views: int | None = None
) -> tuple[int, str | None]:
    """Play random episodes and hold the game's fast encoder to its reference encoder (``GameSpec.reference``) at
    every seat's view after every action, bit for bit (``encode`` and ``encode_with_mask``).

    Args:
        game_id: a registered game whose spec names a reference encoder.
        options: its options.
        num_games: episodes to play at most.
        seed: seeds the deals and the random choices.
        max_views: stop after the episode in which this many views have been compared (None: no limit).

    Returns:
        ``(views compared, None)``, or at the first difference ``(views compared, a report naming the pieces)``.

    Raises:
        ValueError: for a game whose spec names no reference encoder.
    """
    spec = get_spec(game_id)
    reference_cls = spec.reference_cls()
    if reference_cls is None:
        raise ValueError(f"{game_id}'s spec names no reference encoder (GameSpec.reference)")
    game = spec.make_rules(**options)
    fast = spec.make_encoder(game)
    layout = fast.layout
    reference = reference_cls(game)
    rng = np.random.default_rng(seed)
    checked = 0
    for episode in range(num_games):
        for state in play_random_episode(game, rng, check=False):
            for seat in range(state.num_players):
                view = game.view(state, seat)
                if checked == 0:
                    # the reference declares its pieces on its own: same names, sizes and order as the layout
                    order = reference.order(view)
                    if order != [(p.name, p.size) for p in layout.pieces]:
                        return checked, f"the reference's pieces {order} differ from the layout's {layout.pieces}"
                ref = reference.encode(view)
                for got in (fast.encode(view), fast.encode_with_mask(view)[0]):
                    if got.dtype != np.float32 or got.shape != ref.shape or got.tobytes() != ref.tobytes():
                        return checked, mismatch_report(layout, got, ref, view)
                checked += 1
        if not state.done:
            return checked, f"episode {episode} did not end"
        if max_views is not None and checked >= max_views:
            break
    return checked, None


__all__ = [
    "case_id",
    "mismatch_report",
    "option_cases",
    "play_random_episode",
    "random_action",
    "reference_mismatches",
    "same_info",
]
