"""The batched engines: which games have one (their spec names it, ``GameSpec.engine``), and
:func:`make`, which builds one. ``whist_env.vector`` re-exports both; the learner env builds on them."""

from __future__ import annotations

from typing import Any

from whist_env.errors import OptionError
from whist_env.registry import GameRef, game_ids, get_spec, spec_of, unknown_game
from whist_env.spec import load
from whist_env.vector.core import RawVectorEnv


def vector_game_ids() -> list[str]:
    """The registered games that have a batched engine."""
    return [g for g in game_ids() if get_spec(g).engine is not None]


def make(
    game_id: GameRef, num_envs: int, seed: Any = None, obs_dtype: str | None = None, **options: Any
) -> RawVectorEnv:
    """``num_envs`` environments of a game in one batch.

    Args:
        game_id: a registered game with a batched engine (:func:`vector_game_ids`), or the spec of a game with one.
        num_envs: the batch size ``B``.
        seed: seeds every environment's generator (an int >= 0; None: fresh entropy).
        obs_dtype: ``"uint8"`` or ``"float32"``; None: uint8 where every piece of the layout is binary, else float32.
        **options: the game's options, exactly as its AEC env takes them.

    Raises:
        OptionError: for an unknown game, a game without a batched engine yet, or a bad option.
    """
    if isinstance(game_id, str) and game_id not in game_ids():
        raise unknown_game(game_id, vector_game_ids(), "games with a batched engine")
    spec = spec_of(game_id)
    if spec.engine is None:
        raise OptionError(
            f"{spec.game_id} has no batched engine yet; games with one: {vector_game_ids()} (use the AEC env meanwhile)"
        )
    cls: type[RawVectorEnv] = load(spec.engine)  # its module, and numba with it, is imported now
    env: RawVectorEnv = cls(spec, num_envs, seed=seed, obs_dtype=obs_dtype, **options)
    return env
