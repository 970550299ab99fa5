"""``whist_env.vector``: many episodes of a game stepped together by compiled kernels, arrays in and out (issue #14).

    >>> import whist_env.vector
    >>> venv = whist_env.vector.make("classic_whist_v0", 1024, seed=0)
    >>> ts = venv.reset()
    >>> ts = venv.step(actions)  # (1024,) ints: the card each env's seat to act plays

:func:`make` returns a :class:`~whist_env.vector.core.RawVectorEnv`; :meth:`~RawVectorEnv.reset` and
:meth:`~RawVectorEnv.step` return a :class:`TimeStep` of arrays, one row per environment: ``current_player``,
``observation`` (the seat to act's, equal to the AEC env's observation of that seat, as ``uint8`` or
``float32``), ``action_mask``, ``rewards`` (every seat), ``terminated`` and ``truncated``. An environment whose
episode ended starts a new one on the next ``step()`` and ignores the action given for it there.

:func:`make_learner_env` (:mod:`whist_env.vector.learner`) is a ``gymnasium.vector.VectorEnv`` for one learner
whose other seats are played inside, batched (random, or a policy callable ``(obs, mask) -> actions``);
:mod:`whist_env.vector.sb3` makes it an SB3 ``VecEnv`` that sb3-contrib's ``MaskablePPO`` trains on as is.

This package imports numba (the ``vector`` extra); ``import whist_env`` never imports it. Games with a batched
engine: all five (every option of each).
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import Any

from whist_env.errors import OptionError
from whist_env.registry import game_ids, get_spec
from whist_env.vector.core import RawVectorEnv, TimeStep
from whist_env.vector.learner import LearnerVectorEnv, make_learner_env


def _kernel_module(game_id: str) -> str:
    """Where a game's batched engine lives: ``whist_env/vector/<game>.py``, named after the game; its ``ENGINE`` is
    the game's :class:`RawVectorEnv` subclass."""
    return f"whist_env.vector.{game_id.removesuffix('_v0')}"


def vector_game_ids() -> list[str]:
    """The registered games that have a batched engine."""
    return [g for g in game_ids() if importlib.util.find_spec(_kernel_module(g)) is not None]


def make(game_id: str, num_envs: int, seed: Any = None, obs_dtype: str | None = None, **options: Any) -> RawVectorEnv:
    """``num_envs`` environments of ``game_id`` in one batch.

    Args:
        game_id: a registered game with a batched engine (:func:`vector_game_ids`).
        num_envs: the batch size ``B``.
        seed: seeds every environment's generator (an int >= 0; None: fresh entropy).
        obs_dtype: ``"uint8"`` or ``"float32"``; None: uint8 where every piece of the layout is binary, else float32.
        **options: the game's options, exactly as its AEC env takes them.

    Raises:
        OptionError: for an unknown game, a game without a batched engine yet, or a bad option.
    """
    if game_id not in game_ids():
        raise OptionError(f"unknown game {game_id!r}; games with a batched engine: {vector_game_ids()}")
    if game_id not in vector_game_ids():
        raise OptionError(
            f"{game_id} has no batched engine yet; games with one: {vector_game_ids()} (use the AEC env meanwhile)"
        )
    cls: type[RawVectorEnv] = importlib.import_module(_kernel_module(game_id)).ENGINE
    env: RawVectorEnv = cls(get_spec(game_id), num_envs, seed=seed, obs_dtype=obs_dtype, **options)
    return env


__all__ = ["TimeStep", "RawVectorEnv", "LearnerVectorEnv", "make", "make_learner_env", "vector_game_ids"]
