"""Building the vectorised training environments and their opponents from a :class:`TrainConfig`."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import gymnasium as gym

from training.config import TrainConfig
from whist_env.agents.base import Agent
from whist_env.encoding.canonical import CanonicalSuitsWrapper
from whist_env.encoding.trick import TrickEncoder
from whist_env.envs.single_agent import OpponentPool, make_single_agent
from whist_env.registry import get_spec


def opponent_pool(config: TrainConfig, snapshots: Sequence[Agent] = ()) -> OpponentPool:
    """The scripted opponents of ``config`` (with their weights), plus self-play ``snapshots`` that together
    get ``config.self_play_weight`` of the draws."""
    names = list(config.opponents)
    total = sum(config.opponents.values())
    share = config.self_play_weight if snapshots else 0.0
    agents: list[Agent | str] = [*names, *snapshots]
    weights = [(1.0 - share) * config.opponents[k] / total for k in names]
    if snapshots:
        weights += [share / len(snapshots)] * len(snapshots)
    return OpponentPool(agents, weights)


def partner_spec(config: TrainConfig) -> str | None:
    """``config.partner`` for :func:`make_single_agent` (empty means: drawn like the opponents)."""
    return config.partner or None


def _make_env(config: TrainConfig) -> gym.Env:
    import multiprocessing
    import signal

    import torch

    # One thread per worker process: snapshot opponents run small networks, and the cores are few.
    torch.set_num_threads(1)
    if multiprocessing.parent_process() is not None:  # a SubprocVecEnv worker: Ctrl-C is the parent's to handle
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    env: gym.Env = make_single_agent(
        config.game,
        opponents=opponent_pool(config),
        learner_seat=config.learner_seat,
        partner=partner_spec(config),
        illegal_reward=config.illegal_reward,
        step_info="lean",  # SB3's DummyVecEnv deep-copies every step's info, and the trainer reads none mid-episode
        **config.game_options,
    )
    if config.canonical_suits:  # innermost, so that every other wrapper sees the learner's (renamed) game
        env = CanonicalSuitsWrapper(env)
    if config.search_reward:
        from training.sb3.search_reward import Phase1SolverReward  # the solver (numba) only where it is used

        env = Phase1SolverReward(env)
    # SB3's episode statistics (ep_rew_mean) in the game's units: inside the reward scaling, outside the wrappers
    # that end an episode early (the solver's reward)
    env = monitored(env)
    if config.reward_scale != 1.0:
        scale = config.reward_scale
        env = gym.wrappers.TransformReward(env, lambda r: float(r) * scale)
    return env


def monitored(env: gym.Env) -> gym.Env:
    """``env`` in SB3's ``Monitor``, which writes ``info["episode"]`` (the env leaves that key to it) so that SB3 logs
    ``ep_rew_mean``; a checkpoint's ``set_state`` lets it step on in the middle of an episode (``--resume``), where a
    plain Monitor wants a reset first. The part of that episode played before the checkpoint is not in its return."""
    from stable_baselines3.common.monitor import Monitor

    class ResumableMonitor(Monitor):
        def set_state(self, snapshot: Any) -> Any:
            obs = self.env.get_wrapper_attr("set_state")(snapshot)
            self.needs_reset = False
            self.rewards = []
            return obs

    return ResumableMonitor(env)


def env_fns(config: TrainConfig) -> list[Callable[[], gym.Env]]:
    """One picklable constructor per environment (``SubprocVecEnv`` sends them to its workers)."""
    return [functools.partial(_make_env, config) for _ in range(config.n_envs)]


def build_vec_env(config: TrainConfig) -> Any:
    """A ``DummyVecEnv`` or ``SubprocVecEnv`` (``config.vec_env``) of ``config.n_envs`` environments."""
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    fns = env_fns(config)
    return SubprocVecEnv(fns) if config.vec_env == "subproc" else DummyVecEnv(fns)


def close_vec_env(venv: Any) -> None:
    """Close ``venv``, also after a Ctrl-C in the middle of a ``SubprocVecEnv`` step.

    SB3's ``close`` reads every worker's reply to a step still in flight. A Ctrl-C that lands while the step's replies
    are being read leaves some of them read already, and ``close`` then waits for them for ever. The workers hold
    nothing worth keeping (the run resumes from its checkpoint), so an interrupted step's workers are terminated.
    """
    from stable_baselines3.common.vec_env import SubprocVecEnv

    inner = venv.unwrapped
    if isinstance(inner, SubprocVecEnv) and inner.waiting and not inner.closed:
        for process in inner.processes:
            process.terminate()
        for process in inner.processes:
            process.join()
        for remote in inner.remotes:
            remote.close()
        inner.closed = True
    venv.close()


def probe_encoder(config: TrainConfig) -> TrickEncoder:
    """The observation encoder of ``config``'s game and options (from the game's spec; no env is built)."""
    spec = get_spec(config.game)
    return spec.make_encoder(spec.make_rules(**config.game_options))
