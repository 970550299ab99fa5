"""Learner-side suit canonicalisation: the learner sees its game with the suits renamed so that trump is spades.

    >>> canon = CanonicalSuits(encoder.layout)
    >>> obs_c, mask_c, perm = canon.forward(obs, mask)        # what the network reads
    >>> action = canon.action_back(chosen_in_renamed_game, perm)  # what the environment receives

Trump is the one suit the rules single out; renaming it to spades (the other suits keep their order; no renaming
without a trump) lets a network learn each trump-dependent pattern once instead of four times
(``docs/results_features.md``: the largest single gain in German Whist). The environment's observation is not
changed: the renaming lives on the learner's side, in :class:`CanonicalSuits` (numpy only, built on
:class:`whist_env.encoding.features.SuitPermuter`), applied by the training env wrapper
(:class:`CanonicalSuitsWrapper`),
behaviour cloning, and every agent that plays a model trained this way (the model's metadata records
``canonical_suits``).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from whist_env.encoding.features import PERMUTATIONS, SuitPermuter
from whist_env.encoding.layout import Layout

__all__ = ["CanonicalSuits", "CanonicalSuitsWrapper"]

_IDENTITY = PERMUTATIONS.index(tuple(range(len(PERMUTATIONS[0]))))


class CanonicalSuits:
    """Renames observations and masks so that trump is spades, and the chosen actions back.

    Works on one row (``obs`` of shape ``(size,)``, ``mask`` of shape ``(num_actions,)``, an int action) or a
    batch (``(n, size)``, ``(n, num_actions)``, ``(n,)`` actions). A layout without a ``trump`` piece (a game
    that never has one) is renamed by the identity.

    Args:
        layout: the observation layout of the game (``encoder.layout``).
    """

    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        self._permuter = SuitPermuter(layout) if "trump" in layout.offsets else None

    def perm(self, obs: np.ndarray) -> np.ndarray:
        """The permutation id of each row of ``obs`` (``(n,)``; one row gives ``(1,)``)."""
        rows = np.atleast_2d(obs)
        if self._permuter is None:
            return np.full(len(rows), _IDENTITY, np.int64)
        return self._permuter.canonical(rows)

    def forward(self, obs: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(obs', mask', perm)``: the observation and mask in the renamed game, and the renaming per row.

        One row in gives one row out (``perm`` of shape ``(1,)``); dtypes are kept.
        """
        single = np.ndim(obs) == 1
        rows, masks = np.atleast_2d(obs), np.atleast_2d(mask)
        if len(rows) != len(masks):
            raise ValueError(f"{len(rows)} observations but {len(masks)} masks: give one mask per observation")
        perm = self.perm(rows)
        if self._permuter is not None:
            rows, masks = self._permuter.obs(rows, perm), self._permuter.mask(masks, perm)
        return (rows[0], masks[0], perm) if single else (rows, masks, perm)

    def obs(self, obs: np.ndarray) -> np.ndarray:
        """The observation(s) alone in the renamed game (the mask does not matter)."""
        rows = np.atleast_2d(obs)
        out = rows if self._permuter is None else self._permuter.obs(rows, self.perm(rows))
        return out[0] if np.ndim(obs) == 1 else out

    def columns(self, cols: np.ndarray, perm: np.ndarray) -> np.ndarray:
        """The non-zero entries' columns of observations (``(n, k)``, padded with the layout's size), renamed by
        ``perm`` (from :meth:`perm` of the same observations): the columns of :meth:`obs`'s non-zero entries
        (:meth:`whist_env.encoding.features.SuitPermuter.obs_columns`)."""
        return cols if self._permuter is None else self._permuter.obs_columns(cols, perm)

    def mask(self, mask: np.ndarray, perm: np.ndarray) -> np.ndarray:
        """Action mask(s) renamed by ``perm`` (from :meth:`forward` or :meth:`perm` of the same observations)."""
        rows = np.atleast_2d(mask)
        out = rows if self._permuter is None else self._permuter.mask(rows, np.asarray(perm, np.int64))
        return out[0] if np.ndim(mask) == 1 else out

    def action(self, action: Any, perm: np.ndarray) -> Any:
        """Real actions renamed into the renamed game (a teacher's label); an int for an int."""
        return self._map(action, perm, back=False)

    def action_back(self, action: Any, perm: np.ndarray) -> Any:
        """Actions chosen in the renamed game, as the real game's actions; an int for an int."""
        return self._map(action, perm, back=True)

    def _map(self, action: Any, perm: np.ndarray, back: bool) -> Any:
        single = np.ndim(action) == 0
        acts = np.atleast_1d(np.asarray(action, np.int64))
        if self._permuter is None:
            out = acts
        else:
            perm = np.broadcast_to(np.asarray(perm, np.int64), acts.shape)
            out = self._permuter.action_back(acts, perm) if back else self._permuter.action(acts, perm)
        return int(out[0]) if single else out


class CanonicalSuitsWrapper(gym.Wrapper):
    """A single-agent whist env (``whist_env.envs.single_agent``) as the learner sees it with trump renamed spades.

    The observation and :meth:`action_masks` are renamed; the action the learner sends is renamed back before
    the wrapped env plays it. The observation space (a flat ``Box``, or a ``Dict`` with ``observation`` and
    ``action_mask``) is the wrapped env's: renaming moves values, it does not change their range.

    Args:
        env: the env to wrap; it must have ``encoder`` (its observation encoder) and ``action_masks()``.
    """

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self.canonical = CanonicalSuits(env.get_wrapper_attr("encoder").layout)
        self._perm = np.array([_IDENTITY], np.int64)

    def _rename(self, obs: Any) -> Any:
        if isinstance(obs, dict):  # a Dict space: the mask inside is renamed with the observation
            flat, mask, self._perm = self.canonical.forward(obs["observation"], obs["action_mask"])
            return {**obs, "observation": flat, "action_mask": mask}
        self._perm = self.canonical.perm(obs)
        return self.canonical.obs(obs)

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        return self._rename(obs), info

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        real: Any = action
        if 0 <= int(action) < self.action_space.n:  # type: ignore[attr-defined]
            # An action outside the space goes through unchanged: the wrapped env names the error.
            real = self.canonical.action_back(int(action), self._perm)
        obs, reward, terminated, truncated, info = self.env.step(real)
        return self._rename(obs), float(reward), terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        """The legal actions of the renamed game (bool, ``(num_actions,)``)."""
        mask = self.env.get_wrapper_attr("action_masks")()
        return self.canonical.mask(mask, self._perm)

    def set_state(self, snapshot: Any) -> Any:
        """Restore the wrapped env (see its ``set_state``); returns the renamed observation."""
        return self._rename(self.env.get_wrapper_attr("set_state")(snapshot))
