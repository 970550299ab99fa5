"""The registry of batched engines: which games have one (a kernel module named after the game), and
:func:`make`, which builds one. ``whist_env.vector`` re-exports both; the learner env builds on them."""

from __future__ import annotations

import importlib
import importlib.util
from typing import Any

from whist_env.errors import OptionError
from whist_env.registry import game_ids, get_spec
from whist_env.vector.core import RawVectorEnv


def _kernel_module(game_id: str) -> str:
    """Where a game's batched engine lives: ``whist_env/games/<game>/engine.py``, named after the game; its ``ENGINE`` is
    the game's :class:`RawVectorEnv` subclass."""
    return f"whist_env.games.{game_id.removesuffix('_v0')}.engine"


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
