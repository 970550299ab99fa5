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
whose other seats are played inside, batched (random, or a policy callable ``(obs, mask) -> actions``), with next-step
(Gymnasium's default) or same-step autoreset; :mod:`whist_env.learning.sb3_vec` makes a same-step one an SB3 ``VecEnv``
that sb3-contrib's ``MaskablePPO`` trains on as is.

This package imports numba (the ``vector`` extra); ``import whist_env`` never imports it. Games with a batched
engine: all five (every option of each).
"""

from __future__ import annotations

from whist_env.vector.core import RawVectorEnv, TimeStep
from whist_env.vector.engines import make, vector_game_ids
from whist_env.vector.learner import LearnerVectorEnv, make_learner_env

__all__ = ["TimeStep", "RawVectorEnv", "LearnerVectorEnv", "make", "make_learner_env", "vector_game_ids"]
