"""The rule-based agents of :mod:`whist_env.agents` as numba code on the batched engine's state block.

    >>> import numpy as np
    >>> from whist_env.vector import make
    >>> from whist_env.vector.heuristics import BatchedHeuristic
    >>> venv = make("classic_whist_v0", 1024, seed=0)
    >>> ts = venv.reset()
    >>> actions = BatchedHeuristic("classic_whist_v0").act_state(venv, np.arange(1024))

:class:`BatchedHeuristic` is a batched agent in the ``act_state`` form: for each environment it reads the seat to
act's view from the state row and makes the decision ``make_agent("heuristic", game, **options)`` makes from that
view, in one jitted loop over the batch. :mod:`whist_env.vector.heuristics.table` holds the shared reasoning (the
Table and the building blocks); each game's port (``whist_env/games/<name>/engine_heuristic.py``, named by its spec's
``engine_heuristic``) reads its view quantities from the row and decides in ``act_row``; its ``act_kernel(state, cfg,
envs, out)``, the loop over the batch, is rendered from :mod:`whist_env.vector.template`.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from whist_env.errors import OptionError
from whist_env.registry import GameRef, game_ids, get_spec, spec_of
from whist_env.vector.core import RawVectorEnv


def ported_games() -> list[str]:
    """The registered games whose heuristic has a batched port (the games :class:`BatchedHeuristic` plays)."""
    return [g for g in game_ids() if get_spec(g).engine_heuristic is not None]


class BatchedHeuristic:
    """The game's heuristic agent over a batch of the engine's environments (the ``act_state`` batched agent).

    It is deterministic, like the Python agent: the same state row gives the same decision.

    Args:
        game_id: a game whose heuristic is ported (:func:`ported_games`), by id or by spec.
        **options: the game's options, as its env takes them (checked as the env checks them).

    Raises:
        OptionError: for an unknown game, a game not ported yet, or a bad option, naming what is allowed.
    """

    name = "heuristic"

    def __init__(self, game_id: GameRef, **options: Any) -> None:
        spec = spec_of(game_id)  # an unknown game: names the known ones
        if spec.engine_heuristic is None:
            raise OptionError(
                f"the heuristic of {spec.game_id!r} has no batched (numba) port yet; ported: "
                f"{', '.join(ported_games())} (use make_agent('heuristic', ...) through the AEC env for the others)"
            )
        self.game_id: str = spec.game_id
        self.options = dict(options)
        self.config = spec.make_rules(**options).config  # checks the options as the env does
        kernel = spec.engine_heuristic_kernel()
        assert kernel is not None  # ported_games() holds only games whose spec names a port
        self._kernel = kernel

    def act_state(self, venv: RawVectorEnv, envs: Any) -> np.ndarray:
        """The decision of the seat to act in each environment of ``envs``, read from ``venv``'s state block.

        Args:
            venv: a batched engine of this game with these options.
            envs: environment indices (k,).

        Returns:
            The actions (k,) int64; -1 where an episode is over (nobody to act; the engine ignores the action).

        Raises:
            ValueError: for an engine of another game or other options, or bad indices.
        """
        if venv.game_id != self.game_id or venv.game.config != self.config:
            raise ValueError(
                f"this BatchedHeuristic plays {self.game_id} with {dataclasses.asdict(self.config)}; the engine "
                f"given runs {venv.game_id} with {dataclasses.asdict(venv.game.config)} (build one for its options)"
            )
        rows = np.asarray(envs)
        if rows.ndim != 1 or not (np.issubdtype(rows.dtype, np.integer) or rows.size == 0):
            raise ValueError(f"envs must be a 1-D array of environment indices, got shape {rows.shape} {rows.dtype}")
        rows = rows.astype(np.int64)
        if rows.size and (rows.min() < 0 or rows.max() >= venv.num_envs):
            raise ValueError(f"envs must lie in 0..{venv.num_envs - 1}, got {rows.min()}..{rows.max()}")
        out = np.empty(len(rows), np.int64)
        self._kernel(venv._state, venv.config, rows, out)
        return out

    def __repr__(self) -> str:
        opts = ", ".join(f"{k}={v!r}" for k, v in self.options.items())
        return f"BatchedHeuristic({self.game_id!r}{', ' if opts else ''}{opts})"


__all__ = ["BatchedHeuristic", "ported_games"]
