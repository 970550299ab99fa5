"""The rollouts of ``ppo_vec`` (``training/ppo/loop.py``'s loop): what the learner sees of the batched env
(:class:`LearnerView`), the frozen copies of the learner that play opponent seats (:class:`Snapshot`), one rollout of
``n_steps`` batched steps with its GAE advantages (:func:`collect_rollout`, :func:`gae`), the env's state for a
checkpoint (:func:`env_state`), and the time spent per phase (:class:`Timers`)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from whist_env.learning.net import SparseRows

if TYPE_CHECKING:
    from training.config import PPOVecConfig


# ---------------------------------------------------------------------------------------------- the learner's view
class LearnerView:
    """What the learner sees of the env: the observations and masks with the suits renamed so that trump is spades
    (``canonical_suits``: :class:`whist_env.encoding.canonical.CanonicalSuits`), or as they are; its actions renamed
    back.

    Args:
        game: the game id.
        options: its options.
        canonical_suits: rename, or not (then every method passes its arguments through).
    """

    def __init__(self, game: str, options: dict[str, Any], canonical_suits: bool) -> None:
        self.canonical: Any = None
        if canonical_suits:
            from whist_env.encoding.canonical import CanonicalSuits
            from whist_env.registry import get_spec

            spec = get_spec(game)
            self.canonical = CanonicalSuits(spec.make_encoder(spec.make_rules(**options)).layout)

    def forward(self, obs: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """``(obs', mask', perm)`` of a batch ``(k, D)``, ``(k, A)`` (``perm`` None without renaming)."""
        if self.canonical is None:
            return obs, mask, None
        return self.canonical.forward(obs, mask)  # type: ignore[no-any-return]

    def sparse(
        self, obs: np.ndarray, mask: np.ndarray, device: Any
    ) -> tuple[SparseRows, np.ndarray, np.ndarray | None]:
        """:meth:`forward` with the observations as the network reads them: ``(rows, mask', perm)``, ``rows`` the
        columns of the non-zero entries of :meth:`forward`'s observations (:class:`SparseRows` on ``device``).

        The env's dense rows are scanned once (:meth:`SparseRows.of`) and the renaming is applied to the found
        columns (:meth:`whist_env.encoding.canonical.CanonicalSuits.columns`), not to a dense copy; each row's renamed
        columns are then sorted, so that the rows are exactly ``SparseRows.of(forward(obs, mask)[0])`` (tested): the
        first layers add the same weight rows in the same order, and training gives the same network to the last
        bit as the scan of the renamed dense rows (unsorted, the sums' rounding differed and so did the runs)."""
        import torch

        rows = SparseRows.of(torch.as_tensor(obs))
        if self.canonical is None:
            return rows.to(device), mask, None
        perm = self.canonical.perm(obs)
        cols = torch.from_numpy(np.sort(self.canonical.columns(rows.cols.numpy(), perm), axis=1))
        return SparseRows(cols, rows.vals).to(device), self.canonical.mask(mask, perm), perm

    def back(self, actions: np.ndarray, perm: np.ndarray | None) -> np.ndarray:
        """The learner's ``actions`` (k,) as the real game's."""
        return actions if perm is None else self.canonical.action_back(actions, perm)


class Snapshot:
    """A frozen copy of the learner's actor as a batched opponent ``(obs (k, D), mask (k, A)) -> actions (k,)``:
    the argmax of the legal actions' logits, in the learner's view (``view``: its suits renamed, or not; numpy).
    A checkpoint keeps the pool as each snapshot's step and its policy's arrays."""

    def __init__(self, policy: Any, step: int, view: LearnerView | None = None) -> None:
        self.policy = policy
        self.step = step
        self.view = view

    def __call__(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        view, perm = self.view, None
        if view is not None:
            obs, mask, perm = view.forward(obs, mask)
        logits = self.policy.logits(obs)
        actions = np.where(mask, logits, -np.inf).argmax(axis=1).astype(np.int64)
        return actions if view is None else np.asarray(view.back(actions, perm), np.int64)

    def __repr__(self) -> str:
        return f"Snapshot(step={self.step})"


# ---------------------------------------------------------------------------------------------- env state
_LEARNER_FIELDS = ("_seat", "_player", "_obs", "_mask", "_pending", "_autoreset", "_ready")
_ENGINE_FIELDS = ("_state", "_rng", "_bad", "_started")


def env_state(env: Any) -> dict[str, Any]:
    """Everything that decides the learner env's future (the engine's state block and generators, the learner
    env's seats, pending rewards and generator), copied, for a checkpoint."""
    out: dict[str, Any] = {k: np.copy(getattr(env, k)) for k in _LEARNER_FIELDS}
    out["rng"] = env._rng.bit_generator.state
    out["engine"] = {k: np.copy(getattr(env.venv, k)) for k in _ENGINE_FIELDS}
    return out


def set_env_state(env: Any, state: dict[str, Any]) -> None:
    """Put :func:`env_state`'s values back into an env built with the same game, options and ``n_envs``."""
    for k in _LEARNER_FIELDS:
        if k not in state:  # a checkpoint from before next-step autoreset: never one to do (same-step)
            continue
        value = state[k]
        setattr(env, k, value.copy() if value.ndim else value.item())
    env._rng.bit_generator.state = state["rng"]
    for k, value in state["engine"].items():
        setattr(env.venv, k, value.copy() if value.ndim else value.item())


# ---------------------------------------------------------------------------------------------- timers and rollouts
class Timers:
    """Wall and CPU seconds spent per phase (``env``: stepping incl. the opponents; ``forward``: the policy in
    rollouts; ``update``: PPO's epochs), for the benchmark's breakdown."""

    def __init__(self) -> None:
        self.wall: dict[str, float] = {"env": 0.0, "forward": 0.0, "update": 0.0}
        self.cpu: dict[str, float] = dict(self.wall)

    def add(self, name: str, wall0: float, cpu0: float) -> None:
        self.wall[name] += time.perf_counter() - wall0
        self.cpu[name] += time.process_time() - cpu0


def now() -> tuple[float, float]:
    """(wall, process CPU) seconds, the start of a :meth:`Timers.add`."""
    return time.perf_counter(), time.process_time()


def collect_rollout(
    config: PPOVecConfig,
    env: Any,
    view: LearnerView,
    model: Any,
    obs_np: np.ndarray,
    device: Any,
    timers: Timers,
    count_episodes: Callable[[np.ndarray, np.ndarray], None],
) -> tuple[dict[str, Any], np.ndarray]:
    """One rollout of ``n_steps`` batched steps of the learner env ``env`` from its observation ``obs_np``, the
    learner's actions sampled from ``model`` in its ``view``; ``count_episodes(reward, ended)`` sees every step's
    rewards, ``timers`` get the policy's and the env's time. Returns the rollout's tensors on ``device`` (``obs``:
    :class:`SparseRows`; ``mask``, ``act``, ``logp``, GAE's ``adv`` and ``ret``; ``n_steps * n_envs`` rows) and the
    observation after its last step."""
    import torch

    c, dev = config, device
    t_steps, b = c.n_steps, c.n_envs
    num_actions = int(env.venv.num_actions)
    obs_parts: list[SparseRows] = []
    mask_buf = torch.zeros((t_steps, b, num_actions), dtype=torch.bool, device=dev)
    act_buf = torch.zeros((t_steps, b), dtype=torch.int64, device=dev)
    logp_buf = torch.zeros((t_steps, b), dtype=torch.float32, device=dev)
    val_buf = torch.zeros((t_steps + 1, b), dtype=torch.float32, device=dev)
    rew, done = np.zeros((t_steps, b), np.float32), np.zeros((t_steps, b), np.float32)
    mask_np = env.action_masks()
    for t in range(t_steps):
        w0, c0 = now()
        rows, mask_buf[t], act_buf[t], logp_buf[t], val_buf[t], actions = _sample(model, view, obs_np, mask_np, dev)
        obs_parts.append(rows)
        timers.add("forward", w0, c0)
        w0, c0 = now()
        obs_np, reward, terminated, truncated, infos = env.step(actions)
        mask_np = env.action_masks()
        timers.add("env", w0, c0)
        rew[t] = reward * c.reward_scale
        done[t] = terminated | truncated
        count_episodes(reward, done[t] > 0)
    w0, c0 = now()
    val_buf[t_steps] = _value(model, view, obs_np, mask_np, dev)  # bootstraps the last step's advantage
    obs = SparseRows.cat(obs_parts, int(env.venv.observation_size))
    timers.add("forward", w0, c0)
    values = val_buf.cpu().numpy()
    adv = gae(rew, values, done, c.gamma, c.gae_lambda)
    flat = {"mask": mask_buf.reshape(t_steps * b, -1), "act": act_buf.reshape(-1), "logp": logp_buf.reshape(-1)}
    returns = torch.as_tensor((adv + values[:-1]).reshape(-1), device=dev)
    return {"obs": obs, **flat, "adv": torch.as_tensor(adv.reshape(-1), device=dev), "ret": returns}, obs_np


def _value(model: Any, view: LearnerView, obs_np: np.ndarray, mask_np: np.ndarray, dev: Any) -> Any:
    """The critic's value of every env's observation ``obs_np``."""
    import torch

    with torch.no_grad():
        rows = view.sparse(obs_np, mask_np, dev)[0]
        return model(rows, torch.ones(mask_np.shape, dtype=torch.bool, device=dev))[1]


def _sample(model: Any, view: LearnerView, obs_np: np.ndarray, mask_np: np.ndarray, dev: Any) -> tuple[Any, ...]:
    """The learner's move in every env, sampled from ``model`` in its ``view``: the observation's sparse rows, the
    legal mask, the action and its log-probability in the learner's view, the critic's value, and the actions in the
    env's own suits."""
    import torch

    rows, legal, perm = view.sparse(obs_np, mask_np, dev)
    with torch.no_grad():
        mask = torch.as_tensor(legal, device=dev)
        logits, value = model(rows, mask)
        log_probs = torch.log_softmax(logits, -1)
        action = torch.multinomial(log_probs.exp(), 1).squeeze(1)
        logp = log_probs.gather(1, action[:, None]).squeeze(1)
    return rows, mask, action, logp, value, view.back(action.cpu().numpy(), perm)


def gae(rewards: np.ndarray, values: np.ndarray, dones: np.ndarray, gamma: float, lam: float) -> np.ndarray:
    """Generalised advantage estimates (T, B) of a rollout.

    Args:
        rewards: (T, B) the reward of each step.
        values: (T + 1, B) the critic's value of each step's observation, and of the observation after the last.
        dones: (T, B) 1 where the step ended its episode (same-step autoreset: the next observation is the next
            episode's, so nothing is bootstrapped through it; episodes are never truncated here).
        gamma: discount.
        lam: GAE's lambda.
    """
    adv = np.zeros_like(rewards)
    last = np.zeros(rewards.shape[1], np.float32)
    for t in range(rewards.shape[0] - 1, -1, -1):
        live = 1.0 - dones[t]
        delta = rewards[t] + gamma * values[t + 1] * live - values[t]
        last = delta + gamma * lam * live * last
        adv[t] = last
    return adv
