"""The one interface every agent implements: ``act(view, rng) -> action``.

An agent receives only a :class:`~whist_env.view.PlayerView` (what its seat may know) and a
``numpy.random.Generator``; it can therefore not read hidden cards. An agent that is explicitly
allowed to see the full state must say so in its class name (``Cheating...``) and is never used as
a fair opponent.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from whist_env.view import PlayerView


@runtime_checkable
class Agent(Protocol):
    """Chooses a legal action for the seat whose view it is given."""

    name: str

    def act(self, view: PlayerView, rng: np.random.Generator) -> int:
        """Return a legal action (``view.legal`` has its bit set) for ``view.seat``."""
        ...


class RandomAgent:
    """Uniformly random over the legal actions."""

    name = "random"

    def act(self, view: PlayerView, rng: np.random.Generator) -> int:
        if not view.legal:
            raise ValueError(f"seat {view.seat} has no legal action (phase {view.phase}, to act {view.to_act})")
        return random_action(view.legal, rng)


def random_action(legal: int, rng: np.random.Generator) -> int:
    """A uniformly random action from an int mask of legal actions (one ``rng.integers`` draw).

    Raises:
        ValueError: when ``legal`` is empty.
    """
    k = legal.bit_count()
    if k == 0:
        raise ValueError("no legal action to choose from: the legal-action mask is empty")
    for _ in range(int(rng.integers(k))):
        legal &= legal - 1
    return (legal & -legal).bit_length() - 1
