"""The learner env of :mod:`whist_env.vector.learner` as a stable-baselines3 ``VecEnv``, for sb3-contrib's
``MaskablePPO`` as is.

    >>> from gymnasium.vector import AutoresetMode
    >>> from sb3_contrib import MaskablePPO
    >>> from whist_env.vector import make_learner_env
    >>> from whist_env.learning.sb3_vec import as_sb3_vec_env
    >>> venv = as_sb3_vec_env(make_learner_env("german_whist_v0", 64, seed=0, autoreset_mode=AutoresetMode.SAME_STEP))
    >>> MaskablePPO("MlpPolicy", venv).learn(10_000)

``action_masks()`` and ``env_method("action_masks")`` give the learner's (B, A) masks (MaskablePPO stacks the
latter). SB3's own autoreset is the learner env's same-step one (the env must be made with
``autoreset_mode=AutoresetMode.SAME_STEP``): where ``dones[i]``, the observation is the next episode's and
``infos[i]["terminal_observation"]`` the ended one's. :func:`as_sb3_vec_env` wraps the adapter in SB3's
``VecMonitor``, which writes ``infos[i]["episode"]`` (the learner's return and length) so that SB3 logs
``ep_rew_mean``.

stable-baselines3 is an optional dependency (the ``train`` extra): it is imported when this module is, never by
``import whist_env.vector``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode
from stable_baselines3.common.vec_env import VecEnv, VecMonitor

from whist_env.errors import OptionError
from whist_env.vector.learner import LearnerVectorEnv


class VecEnvAdapter(VecEnv):
    """A :class:`LearnerVectorEnv` as an SB3 ``VecEnv`` (one batched env; every method acts on all of it).

    Args:
        env: the learner env, made with ``autoreset_mode=AutoresetMode.SAME_STEP``.

    Raises:
        OptionError: for a learner env in another autoreset mode.
    """

    def __init__(self, env: LearnerVectorEnv) -> None:
        if env.autoreset_mode != AutoresetMode.SAME_STEP:
            raise OptionError(
                f"{env.game_id}: SB3's VecEnv resets an ended episode in the same step; make the learner env with "
                f"make_learner_env(..., autoreset_mode=AutoresetMode.SAME_STEP) (this one is {env.autoreset_mode})"
            )
        self.env = env
        super().__init__(env.num_envs, env.single_observation_space, env.single_action_space)
        self._actions: np.ndarray | None = None

    def reset(self) -> np.ndarray:
        """Start every episode anew (with the seed given to :meth:`seed`, if any)."""
        seed = self._seeds[0] if self._seeds and self._seeds[0] is not None else None
        obs, _ = self.env.reset(seed=seed)
        self._reset_seeds()
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = actions

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        """The learner env's step, with SB3's dones and per-environment info dicts."""
        actions, self._actions = self._actions, None
        obs, rewards, terminated, truncated, infos = self.env.step(np.asarray(actions).reshape(-1).astype(np.int64))
        dones = terminated | truncated
        out: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        for i in np.flatnonzero(dones):
            out[i] = {
                "terminal_observation": infos["final_obs"][i],
                "TimeLimit.truncated": bool(truncated[i] and not terminated[i]),
                "returns": infos["final_info"]["returns"][i],
                "learner_seat": int(infos["final_info"]["learner_seat"][i]),
            }
        return obs, rewards, dones, out

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions in every environment.  # (B, A) bool"""
        return self.env.action_masks()

    def close(self) -> None:
        self.env.close()

    def _indices(self, indices: Any) -> list[int]:
        return list(self._get_indices(indices))

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        """The learner env's attribute, once per environment asked for (an AttributeError when it has none)."""
        value = getattr(self.env, attr_name)
        return [value for _ in self._indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        """Set an attribute of the learner env (shared by every environment: ``indices`` must be all of them)."""
        self._all(indices, "set_attr")
        setattr(self.env, attr_name, value)

    def env_method(self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any) -> list[Any]:
        """``action_masks`` gives each environment's row; any other method of the learner env is called once and
        applies to every environment (``indices`` must be all of them)."""
        rows = self._indices(indices)
        if method_name == "action_masks":
            masks = self.env.action_masks()
            return [masks[i] for i in rows]
        self._all(indices, "env_method")
        return [getattr(self.env, method_name)(*method_args, **method_kwargs)] * len(rows)

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        return [False] * len(self._indices(indices))

    def _all(self, indices: Any, what: str) -> None:
        if sorted(self._indices(indices)) != list(range(self.num_envs)):
            raise ValueError(
                f"{self.env.game_id}: {what} acts on the whole batched env; pass indices=None (all environments)"
            )

    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        """Seed the next :meth:`reset` (one seed for the whole batch)."""
        self._seeds = [seed] * self.num_envs
        return self._seeds


def as_sb3_vec_env(env: LearnerVectorEnv, monitor: bool = True) -> VecEnv:
    """``env`` (same-step autoreset) as an SB3 ``VecEnv`` that ``MaskablePPO`` trains on as is (see the module
    docstring): a :class:`VecEnvAdapter`, in SB3's ``VecMonitor`` unless ``monitor`` is False.

    Raises:
        OptionError: for a learner env in another autoreset mode.
    """
    adapter = VecEnvAdapter(env)
    return VecMonitor(adapter) if monitor else adapter


__all__ = ["VecEnvAdapter", "as_sb3_vec_env"]
