"""Masked PPO on the batched engine in one file: a learner against batched opponents, trained with torch alone.

    python training/ppo_vec.py --config configs/ppo_vec_german_whist.yaml
    python training/ppo_vec.py --config configs/ppo_vec_german_whist.yaml --seed 1 --set n_envs=512
    python training/ppo_vec.py --config configs/ppo_vec_german_whist.yaml --resume     # after an interruption
    python training/ppo_vec.py --config configs/ppo_vec_german_whist_warm.yaml         # warm start, vs the heuristic

The twin of ``training/train.py`` (sb3-contrib's ``MaskablePPO`` on one single-agent env per process slot) on
:func:`whist_env.vector.make_learner_env`, where the other seats play inside the engine, batched. What is the same:
the network (sb3's ``MlpPolicy``: separate actor and critic MLPs of ``net_arch`` with ``tanh``, orthogonal
initialisation, Adam with ``eps=1e-5``), the PPO loss (clipped objective on normalised advantages, value MSE,
entropy bonus, gradient clipping), the YAML config with ``--set key=value`` and ``--seed`` overrides, TensorBoard
scalars (``runs/<run>/tb``), checkpoints and ``--resume``. What differs: a rollout is ``n_steps`` steps of ``n_envs``
environments stepped as one batch (so ``n_envs`` is large and ``n_steps`` small for the same rollout size), and the
illegal actions' logits are set to a large negative number before the softmax.

Opponents: ``opponents`` maps names the learner env takes (``random``; ``heuristic``: the numba port of the
heuristic, whose decisions are the Python agent's) to draw weights; with ``self_play``, frozen snapshots of the
learner (greedy numpy copies of its actor, batched callables ``(obs, mask) -> actions``) take ``self_play_weight``
of the draws. Each opponent seat draws its player at the start of every rollout.

Warm start (``pretrain:``, as ``train.py``'s; ``training/vec_pretrain.py``): before PPO, the game's heuristic is
played batched on the engine and cloned into the actor and the critic, with DAgger rounds in which the cloned network
plays on the engine and the heuristic labels its states; the teacher's dataset is cached in
:mod:`whist_env.pretrain`'s format (``pretrain.cache_dir``). ``canonical_suits``: the learner sees trump as spades
(:class:`LearnerView`), as in ``train.py``; the exported policy's metadata says so.

At the end the actor is exported to the numpy format of the shipped agents (``runs/<run>/policy.npz``, played by
``make_agent("pretrained(path=...)", game)``) and evaluated on ``final_eval_deals`` duplicate deals against each of
``eval_opponents``: on the batched engine's arena (:func:`whist_env.vector.arena.evaluate_batched`; the same deals,
and the same results for deterministic agents, as :func:`whist_env.evaluation.evaluate`'s) when every agent has a
batched form, else on the AEC arena. With ``eval_freq``, the same evaluation runs during training too (at the start,
then every ``eval_freq`` steps, on ``eval_deals`` deals). A run writes what ``train.py``'s does: ``eval.csv`` (every
evaluation), ``learning_curve.png``, ``report.md`` (with the wall time of each phase: set-up, warm start, PPO, final
evaluation; also ``runs/<run>/phases.json``, kept across ``--resume``), and ``eval.json`` (the final table, with this
session's CPU time per phase and the rollout's timers).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shlex
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # run as a script: make the `training` package importable
    sys.path.insert(0, str(REPO))

from training.config import (  # noqa: E402
    ConfigError,
    PPOConfig,
    PretrainConfig,
    field_docs,
    load_config_as,
    parse_set,
    save_config,
)
from whist_env.vector.net import (  # noqa: E402  (the network and its kernels; first_layers for the tests' twin checks)
    SparseRows,
    build_actor_critic,
    export_actor,
    first_layers,
    numpy_actor,
)

__all__ = ["PPOVec", "PPOVecConfig", "SparseRows", "build_actor_critic", "export_actor", "first_layers", "numpy_actor"]

CHECKPOINT_FILE = "state.pt"
"""The one file of a checkpoint directory ``checkpoints/step_<n>/``."""
RESUMABLE = ("total_timesteps", "run_name", "runs_dir")
"""Keys a resumed run may differ in: its length (extend it) and where it is."""


@dataclasses.dataclass
class PPOVecConfig(PPOConfig):
    """Everything one ``ppo_vec`` run needs; the saved ``runs/<run_name>/config.yaml`` reproduces it. The fields
    and checks shared with ``train.py``'s config are :class:`training.config.PPOConfig`'s; here are the defaults that
    suit the batched engine, and what differs."""

    config_prefix: ClassVar[str] = "ppo_vec_"  # its configs in configs/ (training.config.available_configs)

    n_envs: int = 256
    """Environments stepped as one batch."""
    n_steps: int = 16
    """Steps per environment per rollout (a rollout is ``n_steps * n_envs`` decisions)."""
    batch_size: int = 1024
    """Minibatch size of a PPO update."""
    opponents: dict[str, float] = dataclasses.field(default_factory=lambda: {"random": 1.0})
    """Opponents the learner env plays itself (``random``, ``heuristic``) and their draw weights; every opponent
    seat draws one per rollout."""
    eval_freq: int = 0
    """Timesteps between two evaluations during training (the first at the start; 0: none), each on ``eval_deals``
    duplicate deals per opponent of ``eval_opponents``, the same deals every time (``runs/<run>/eval.csv``)."""
    eval_deals: int = 2000
    """Duplicate deals per opponent in each evaluation during training (the batched arena plays them in seconds)."""
    final_eval_deals: int = 1000
    """Duplicate deals per opponent in the final evaluation (0: none)."""
    eval_opponents: list[str] = dataclasses.field(default_factory=lambda: ["random"])
    """Opponents of the evaluations (agent names ``whist_env.agents`` knows)."""
    eval_workers: int = 1
    """Processes of the evaluations when they play on the AEC arena (agents without a batched form)."""
    device: str = "auto"
    """torch device: ``auto`` (cuda when available, else cpu), ``cpu``, ``cuda``, ``cuda:1``, ..."""
    pretrain: PretrainConfig | None = None
    """Warm start before PPO (keys: ``pretrain.*``; the teacher is the game's heuristic, played batched on the
    engine: ``training/vec_pretrain.py``); absent or null: PPO starts from random weights."""
    trainer: str = "ppo"
    """The trainer of this config: ``ppo`` (this one; ``python training/train.py --config <file>`` hands it here)."""

    def validate(self) -> None:
        """Cross-field checks.

        Raises:
            ConfigError: naming the field, the bad value and what is allowed.
        """
        from whist_env.vector import vector_game_ids

        self.validate_run("ppo", vector_game_ids(), "games with a batched engine")
        self.validate_ppo()
        for name in ("eval_freq", "final_eval_deals"):
            if getattr(self, name) < 0:
                raise ConfigError(f"{name} must be 0 or more, got {getattr(self, name)}")
        if not (self.device == "auto" or self.device == "cpu" or self.device.startswith("cuda")):
            raise ConfigError(f"device must be 'auto', 'cpu' or 'cuda[:N]', got {self.device!r}")
        if self.device.startswith("cuda"):
            import torch

            if not torch.cuda.is_available():
                raise ConfigError(f"device {self.device!r}: torch sees no CUDA device here; use 'auto' or 'cpu'")
        self._validate_env()
        if self.pretrain is not None:
            self._validate_pretrain(self.pretrain)

    def _validate_pretrain(self, p: PretrainConfig) -> None:
        """The section's own checks, and a teacher with a batched form for this game."""
        from training.vec_pretrain import ENGINE_TEACHERS
        from whist_env.errors import OptionError
        from whist_env.vector.heuristics import BatchedHeuristic

        p.validate(self.game, self.game_options)
        if p.teacher not in ENGINE_TEACHERS:
            raise ConfigError(
                f"pretrain.teacher: ppo_vec plays the teacher batched on the engine, which only "
                f"{', '.join(ENGINE_TEACHERS)} can, got {p.teacher!r} (train.py's warm start takes any agent)"
            )
        try:
            BatchedHeuristic(self.game, **self.game_options)
        except OptionError as err:
            raise ConfigError(f"pretrain.teacher: {err}") from err

    def _validate_env(self) -> None:
        """The game options, seat and opponents, checked by building the env (one environment) and the agents."""
        from gymnasium.vector import AutoresetMode

        from whist_env.agents import make_agent
        from whist_env.errors import OptionError
        from whist_env.vector import make_learner_env

        if isinstance(self.learner_seat, str) and self.learner_seat != "random":
            raise ConfigError(f"learner_seat must be 'random' or a seat number, got {self.learner_seat!r}")
        for name in self.opponents:
            try:
                make_learner_env(
                    self.game,
                    1,
                    opponents=name,
                    learner_seat=self.learner_seat,
                    autoreset_mode=AutoresetMode.SAME_STEP,
                    **self.game_options,
                )
            except OptionError as err:
                raise ConfigError(f"opponents {name!r} (or game_options, learner_seat): {err}") from err
        for name in self.eval_opponents:
            try:
                make_agent(name, self.game, **self.game_options)
            except OptionError as err:
                raise ConfigError(f"eval_opponents: {err}") from err


# ---------------------------------------------------------------------------------------------- the learner's view
class LearnerView:
    """What the learner sees of the env: the observations and masks with the suits renamed so that trump is spades
    (``canonical_suits``: :class:`whist_env.canonical.CanonicalSuits`), or as they are; its actions renamed back.

    Args:
        game: the game id.
        options: its options.
        canonical_suits: rename, or not (then every method passes its arguments through).
    """

    def __init__(self, game: str, options: dict[str, Any], canonical_suits: bool) -> None:
        self.canonical: Any = None
        if canonical_suits:
            from whist_env.canonical import CanonicalSuits
            from whist_env.registry import get_spec

            spec = get_spec(game)
            self.canonical = CanonicalSuits(spec.make_encoder(spec.make_rules(**options)).layout)

    def forward(self, obs: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """``(obs', mask', perm)`` of a batch ``(k, D)``, ``(k, A)`` (``perm`` None without renaming)."""
        if self.canonical is None:
            return obs, mask, None
        return self.canonical.forward(obs, mask)  # type: ignore[no-any-return]

    def back(self, actions: np.ndarray, perm: np.ndarray | None) -> np.ndarray:
        """The learner's ``actions`` (k,) as the real game's."""
        return actions if perm is None else self.canonical.action_back(actions, perm)


class Snapshot:
    """A frozen copy of the learner's actor as a batched opponent ``(obs (k, D), mask (k, A)) -> actions (k,)``:
    the argmax of the legal actions' logits, in the learner's view (``view``: its suits renamed, or not; numpy;
    picklable, so checkpoints keep the pool)."""

    def __init__(self, policy: Any, step: int, view: LearnerView | None = None) -> None:
        self.policy = policy
        self.step = step
        self.view = view

    def __call__(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        view = getattr(self, "view", None)  # a snapshot pickled before views existed
        perm = None
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


# ---------------------------------------------------------------------------------------------- the trainer
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


class PPOVec:
    """The trainer: an env, the network, Adam, and the loop (:meth:`train`).

    Args:
        config: the run's config.
        run_dir: where checkpoints, TensorBoard logs and the exported policy go (None: nowhere; no checkpoints).
        log: called with one line per rollout (None: silent).
    """

    def __init__(self, config: PPOVecConfig, run_dir: Path | None = None, log: Callable[[str], None] | None = None):
        import torch
        from gymnasium.vector import AutoresetMode

        from whist_env.vector import make_learner_env

        self.config = config
        self.run_dir = run_dir
        self.log = log
        if config.device == "auto":
            self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        else:
            self.device = torch.device(config.device)
        torch.set_num_threads(config.torch_threads)
        torch.manual_seed(config.seed)
        names = list(config.opponents)
        self.env = make_learner_env(
            config.game,
            config.n_envs,
            opponents=names[0],
            learner_seat=config.learner_seat,
            seed=config.seed,
            autoreset_mode=AutoresetMode.SAME_STEP,  # the rollout and GAE below read each step as SB3's do
            **config.game_options,
        )
        self.obs_size = int(self.env.venv.observation_size)
        self.num_actions = int(self.env.venv.num_actions)
        self.model = build_actor_critic(self.obs_size, self.num_actions, list(config.net_arch)).to(self.device)
        self.view = LearnerView(config.game, dict(config.game_options), config.canonical_suits)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=config.learning_rate, eps=1e-5)
        self.rng = np.random.default_rng(np.random.SeedSequence(config.seed, spawn_key=(7,)))
        self.num_timesteps = 0
        self.snapshots: list[Snapshot] = []
        self.next_snapshot = config.self_play_refresh
        self.next_checkpoint = config.checkpoint_freq
        self.episode_returns: list[float] = []
        self.episode_lengths: list[int] = []
        # the learner's return and decisions so far in each environment's episode (the env leaves them to the caller)
        self.episode_progress = (np.zeros(config.n_envs, np.float64), np.zeros(config.n_envs, np.int64))
        self.timers = Timers()
        self.ppo_wall_s = 0.0  # PPO's wall time over every session of the run (a checkpoint carries it)
        self.history: list[dict[str, Any]] = []  # the evaluations during training (rows of eval.csv)
        self.next_eval = 0  # the step of the next one (eval_freq > 0 and a run directory)
        self.saved_step = -1  # the step of the newest checkpoint this trainer wrote or resumed from
        self.writer: Any = None
        self._obs: np.ndarray | None = None

    # -------------------------------------------------------------- opponents
    def draw_opponents(self) -> list[Any]:
        """One player per opponent seat (relative seats 1..n-1) for the next rollout, drawn from the weights."""
        c = self.config
        names = list(c.opponents)
        total = sum(c.opponents.values())
        share = c.self_play_weight if (c.self_play and self.snapshots) else 0.0
        pool: list[Any] = [*names, *self.snapshots]
        weights = [(1.0 - share) * c.opponents[k] / total for k in names]
        weights += [share / len(self.snapshots)] * len(self.snapshots) if share else [0.0] * len(self.snapshots)
        picks = self.rng.choice(len(pool), size=self.env.num_players - 1, p=np.asarray(weights) / sum(weights))
        return [pool[i] for i in picks]

    # -------------------------------------------------------------- rollouts and updates
    def collect(self) -> dict[str, Any]:
        """One rollout of ``n_steps`` batched steps; returns its tensors and GAE advantages and returns."""
        import torch

        c, dev = self.config, self.device
        t_steps, b = c.n_steps, c.n_envs
        obs_parts: list[SparseRows] = []
        mask_buf = torch.zeros((t_steps, b, self.num_actions), dtype=torch.bool, device=dev)
        act_buf = torch.zeros((t_steps, b), dtype=torch.int64, device=dev)
        logp_buf = torch.zeros((t_steps, b), dtype=torch.float32, device=dev)
        val_buf = torch.zeros((t_steps + 1, b), dtype=torch.float32, device=dev)
        rew = np.zeros((t_steps, b), np.float32)
        done = np.zeros((t_steps, b), np.float32)
        assert self._obs is not None
        obs_np, mask_np = self._obs, self.env.action_masks()
        for t in range(t_steps):
            w0, c0 = now()
            seen, legal, perm = self.view.forward(obs_np, mask_np)
            with torch.no_grad():
                rows = SparseRows.of(torch.as_tensor(seen, device=dev))
                mask = torch.as_tensor(legal, device=dev)
                logits, value = self.model(rows, mask)
                log_probs = torch.log_softmax(logits, -1)
                action = torch.multinomial(log_probs.exp(), 1).squeeze(1)
                obs_parts.append(rows)
                mask_buf[t], act_buf[t] = mask, action
                logp_buf[t] = log_probs.gather(1, action[:, None]).squeeze(1)
                val_buf[t] = value
                actions = self.view.back(action.cpu().numpy(), perm)
            self.timers.add("forward", w0, c0)
            w0, c0 = now()
            obs_np, reward, terminated, truncated, infos = self.env.step(actions)
            mask_np = self.env.action_masks()
            self.timers.add("env", w0, c0)
            rew[t] = reward * c.reward_scale
            done[t] = terminated | truncated
            self._count_episodes(reward, done[t] > 0)
        w0, c0 = now()
        with torch.no_grad():
            last = SparseRows.of(torch.as_tensor(self.view.forward(obs_np, mask_np)[0], device=dev))
            val_buf[t_steps] = self.model(last, torch.ones((b, self.num_actions), dtype=torch.bool, device=dev))[1]
            obs = SparseRows.cat(obs_parts, self.obs_size)
        self.timers.add("forward", w0, c0)
        self._obs = obs_np
        values = val_buf.cpu().numpy()
        adv = gae(rew, values, done, c.gamma, c.gae_lambda)
        returns = adv + values[:-1]
        self.num_timesteps += t_steps * b
        return {
            "obs": obs,
            "mask": mask_buf.reshape(t_steps * b, -1),
            "act": act_buf.reshape(-1),
            "logp": logp_buf.reshape(-1),
            "adv": torch.as_tensor(adv.reshape(-1), device=dev),
            "ret": torch.as_tensor(returns.reshape(-1), device=dev),
        }

    def _count_episodes(self, reward: np.ndarray, ended: np.ndarray) -> None:
        """Add a step (same-step autoreset: ``reward`` is the ended episode's last) to the episodes in progress, and
        the ended ones to :attr:`episode_returns` and :attr:`episode_lengths`."""
        ret, length = self.episode_progress
        ret += reward
        length += 1
        if ended.any():
            self.episode_returns += ret[ended].tolist()
            self.episode_lengths += length[ended].tolist()
            ret[ended], length[ended] = 0.0, 0

    def update(self, batch: dict[str, Any]) -> dict[str, float]:
        """``n_epochs`` passes of minibatch PPO over one rollout; returns the last epoch's mean losses."""
        import torch

        c = self.config
        if c.lr_schedule == "linear":
            frac = max(1.0 - self.num_timesteps / c.total_timesteps, 0.0)
            for group in self.optimizer.param_groups:
                group["lr"] = c.learning_rate * frac
        n = batch["act"].shape[0]
        stats: dict[str, list[float]] = {k: [] for k in ("policy_loss", "value_loss", "entropy", "approx_kl", "clip")}
        for _ in range(c.n_epochs):
            order = torch.as_tensor(self.rng.permutation(n), device=self.device)
            for start in range(0, n, c.batch_size):
                idx = order[start : start + c.batch_size]
                logits, values = self.model(batch["obs"][idx], batch["mask"][idx])
                log_probs = torch.log_softmax(logits, -1)
                logp = log_probs.gather(1, batch["act"][idx][:, None]).squeeze(1)
                ratio = torch.exp(logp - batch["logp"][idx])
                adv = batch["adv"][idx]
                adv = (adv - adv.mean()) / (adv.std() + 1e-8)
                policy_loss = -torch.min(adv * ratio, adv * ratio.clamp(1 - c.clip_range, 1 + c.clip_range)).mean()
                value_loss = torch.nn.functional.mse_loss(values, batch["ret"][idx])
                # masked entropy: an illegal action's probability underflows to exactly 0, so it adds 0 * finite
                entropy = -(log_probs.exp() * log_probs).sum(-1).mean()
                loss = policy_loss - c.ent_coef * entropy + c.vf_coef * value_loss
                self.optimizer.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), c.max_grad_norm)
                self.optimizer.step()
                with torch.no_grad():
                    log_ratio = logp - batch["logp"][idx]
                    stats["approx_kl"].append(float(((ratio - 1) - log_ratio).mean()))
                    stats["clip"].append(float(((ratio - 1).abs() > c.clip_range).float().mean()))
                stats["policy_loss"].append(policy_loss.item())
                stats["value_loss"].append(value_loss.item())
                stats["entropy"].append(entropy.item())
        return {k: float(np.mean(v)) for k, v in stats.items()}

    def train(self) -> None:
        """Train until ``total_timesteps``, checkpointing on the way (a resumed trainer goes on from its step)."""
        c = self.config
        if self.run_dir is not None and self.writer is None:
            self.writer = tensorboard_writer(self.run_dir / "tb")
        if self._obs is None:
            self._obs, _ = self.env.reset(seed=c.seed)
        w0 = time.perf_counter()
        self._evaluate_if_due(w0)  # the start (a resumed run: only if it stopped before one that was due)
        self.ppo_wall_s += time.perf_counter() - w0
        while self.num_timesteps < c.total_timesteps:
            self.env.set_opponents(self.draw_opponents())
            w0 = time.perf_counter()
            batch = self.collect()
            u0, uc0 = now()
            stats = self.update(batch)
            self.timers.add("update", u0, uc0)
            self._report(stats, time.perf_counter() - w0)
            if c.self_play and self.num_timesteps >= self.next_snapshot:
                snapshot = Snapshot(numpy_actor(self.model), self.num_timesteps, self.view)
                self.snapshots = [*self.snapshots, snapshot]
                self.snapshots = self.snapshots[-c.self_play_pool :]
                self.next_snapshot += c.self_play_refresh
            self._evaluate_if_due(w0)
            self.ppo_wall_s += time.perf_counter() - w0
            if self.run_dir is not None and (self.num_timesteps >= self.next_checkpoint):
                self.save_checkpoint()
                while self.next_checkpoint <= self.num_timesteps:
                    self.next_checkpoint += c.checkpoint_freq

    def _evaluate_if_due(self, w0: float) -> None:
        """When an evaluation is due (``eval_freq``): export the actor to ``policy.npz``, play it against each of
        ``eval_opponents`` on ``eval_deals`` duplicate deals (:func:`evaluate_policy`: the final evaluation's deals),
        add the rows to :attr:`history` and rewrite ``eval.csv`` and ``learning_curve.png`` (``w0``: when this lap of
        :attr:`ppo_wall_s` began)."""
        from training.report import plot_learning_curve, write_eval_csv

        c = self.config
        if not c.eval_freq or self.run_dir is None or self.num_timesteps < self.next_eval:
            return
        policy = export_actor(self.model, self.run_dir / "policy.npz", c.game, c.game_options, c.canonical_suits)
        rows = evaluate_policy(c, policy, c.eval_deals)
        wall = self.ppo_wall_s + time.perf_counter() - w0
        for row in rows:
            row.update(timesteps=self.num_timesteps, wall_s=round(wall, 1), kind="periodic")
            if self.writer is not None:
                self.writer.add_scalar(f"eval/diff_vs_{row['opponent']}", row["diff"], self.num_timesteps)
                self.writer.add_scalar(f"eval/reward_vs_{row['opponent']}", row["mean"], self.num_timesteps)
        self.history += rows
        write_eval_csv(self.run_dir / "eval.csv", self.history)
        plot_learning_curve(self.run_dir / "learning_curve.png", self.history, c.run_name)
        if self.log is not None:
            t, total = self.num_timesteps, c.total_timesteps
            done = f"{t:,}/{total:,} steps ({100 * t / total:.0f}%)"
            diffs = ", ".join(f"{r['opponent']} {r['diff']:+.3f} ± {r['diff_ci95']:.3f}" for r in rows)
            self.log(f"evaluation at {done}, {c.eval_deals:,} duplicate deals: learner − opponent: {diffs}")
        while self.next_eval <= self.num_timesteps:
            self.next_eval += c.eval_freq

    def _report(self, stats: dict[str, float], seconds: float) -> None:
        rows = self.config.n_envs * self.config.n_steps
        recent_r = self.episode_returns[-1000:]
        recent_l = self.episode_lengths[-1000:]
        scalars = {f"train/{k}": v for k, v in stats.items()}
        scalars["time/steps_per_s"] = rows / max(seconds, 1e-9)
        if recent_r:
            scalars["rollout/ep_rew_mean"] = float(np.mean(recent_r))
            scalars["rollout/ep_len_mean"] = float(np.mean(recent_l))
        if self.writer is not None:
            for k, v in scalars.items():
                self.writer.add_scalar(k, v, self.num_timesteps)
        self.episode_returns, self.episode_lengths = recent_r, recent_l
        if self.log is not None:
            ret = f"ep_rew_mean {scalars['rollout/ep_rew_mean']:+.3f}" if recent_r else "no episode ended yet"
            self.log(
                f"{self.num_timesteps:>10,} steps  {ret}  entropy {stats['entropy']:.3f}  "
                f"kl {stats['approx_kl']:.4f}  {scalars['time/steps_per_s']:,.0f} steps/s"
            )

    # -------------------------------------------------------------- checkpoints
    def state(self) -> dict[str, Any]:
        """Everything a resumed run needs to continue exactly (for :meth:`save_checkpoint`)."""
        import torch

        from training.checkpoint import capture_rng

        return {
            "num_timesteps": self.num_timesteps,
            "config": dataclasses.asdict(self.config),
            "model": self.model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "rng": capture_rng(),
            "torch_cuda_rng": torch.cuda.get_rng_state_all() if self.device.type == "cuda" else None,
            "trainer_rng": self.rng.bit_generator.state,
            "env": env_state(self.env),
            "obs": None if self._obs is None else self._obs.copy(),
            "snapshots": self.snapshots,
            "next_snapshot": self.next_snapshot,
            "next_checkpoint": self.next_checkpoint,
            "episodes": (self.episode_returns, self.episode_lengths),
            "episode_progress": tuple(a.copy() for a in self.episode_progress),
            "ppo_wall_s": self.ppo_wall_s,
            "history": self.history,
            "next_eval": self.next_eval,
        }

    def load_state(self, state: dict[str, Any]) -> None:
        """Continue from :meth:`state`'s values (a trainer built with the same config)."""
        import torch

        from training.checkpoint import restore_rng

        self.num_timesteps = int(state["num_timesteps"])
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        restore_rng(state["rng"])
        if state["torch_cuda_rng"] is not None and self.device.type == "cuda":
            torch.cuda.set_rng_state_all(state["torch_cuda_rng"])
        self.rng.bit_generator.state = state["trainer_rng"]
        set_env_state(self.env, state["env"])
        self._obs = state["obs"]
        self.snapshots = list(state["snapshots"])
        self.next_snapshot = int(state["next_snapshot"])
        self.next_checkpoint = int(state["next_checkpoint"])
        self.episode_returns, self.episode_lengths = (list(x) for x in state["episodes"])
        if "episode_progress" in state:
            ret, length = state["episode_progress"]
        else:  # a checkpoint from when the env counted them
            ret, length = state["env"]["_return"], state["env"]["_length"]
        self.episode_progress = (ret.copy(), length.copy())
        self.ppo_wall_s = float(state.get("ppo_wall_s", 0.0))
        self.history = list(state.get("history", []))
        self.next_eval = int(state.get("next_eval", 0))
        self.saved_step = self.num_timesteps

    def save_checkpoint(self) -> Path:
        """Write ``checkpoints/step_<n>/state.pt`` atomically (:func:`training.checkpoint.write_checkpoint_dir`:
        a temporary directory moved into place) and drop all but the newest ``keep_checkpoints``.

        Raises:
            CheckpointWriteError: it could not be written (disk full, ...); the previous one is intact.
        """
        import torch

        from training.checkpoint import checkpoint_dirs, step_of, write_checkpoint_dir

        assert self.run_dir is not None

        def write(tmp: Path) -> None:
            with open(tmp / CHECKPOINT_FILE, "wb") as f:
                torch.save(self.state(), f)
                f.flush()
                os.fsync(f.fileno())

        final = write_checkpoint_dir(self.run_dir / "checkpoints" / f"step_{self.num_timesteps:012d}", write)
        self.saved_step = self.num_timesteps
        older = [p for p in checkpoint_dirs(self.run_dir) if (step_of(p) or 0) < self.num_timesteps]
        for p in older[self.config.keep_checkpoints - 1 :]:
            shutil.rmtree(p, ignore_errors=True)
        return final


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


def tensorboard_writer(path: Path) -> Any:
    """A TensorBoard ``SummaryWriter`` at ``path``, or None when tensorboard is not installed."""
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:
        return None
    return SummaryWriter(str(path))


def find_checkpoint(run_dir: Path) -> tuple[Path, dict[str, Any]] | None:
    """The newest checkpoint of the run that loads whole (a damaged one is skipped with a warning), or None."""
    import torch

    from training.checkpoint import checkpoint_dirs, step_of

    for path in checkpoint_dirs(run_dir):
        try:
            state = torch.load(path / CHECKPOINT_FILE, map_location="cpu", weights_only=False)
            if state["num_timesteps"] != step_of(path):
                raise ValueError("its step differs from the directory's")
            return path, state
        except Exception as err:  # noqa: BLE001 (a damaged file raises almost anything)
            print(f"warning: skipping damaged checkpoint {path}: {type(err).__name__}: {err}", file=sys.stderr)
    return None


# ---------------------------------------------------------------------------------------------- evaluation
def evaluate_policy(
    config: PPOVecConfig, policy_path: Path, deals: int | None = None, progress: bool = False
) -> list[dict[str, Any]]:
    """The exported actor against each of ``eval_opponents`` on ``deals`` (default ``final_eval_deals``) duplicate
    deals, the same ones at every evaluation of the run (seed ``1_000_003 + seed``, as ``train.py``'s; the arena's
    one-deal unit when the training options allow it with the same observation layout, else whole episodes:
    :func:`training.evaluation.single_deal_ok`), on the batched engine's arena when every agent has a batched form
    (:func:`training.evaluation.batched_ok`: the same deals and, for the network and the heuristic, the same cards as
    the AEC arena's), else on the AEC arena in ``eval_workers`` processes."""
    from training.evaluation import batched_ok, evaluate_learner

    learner = f"pretrained(path={policy_path})"
    batched = batched_ok(config.game, dict(config.game_options), [learner, *config.eval_opponents])
    return [
        {
            "opponent": opponent,
            **evaluate_learner(
                config.game,
                dict(config.game_options),
                learner,
                opponent,
                config.final_eval_deals if deals is None else deals,
                config.eval_seed,
                workers=config.eval_workers,
                progress=progress,
                batched=batched,
            ),
        }
        for opponent in config.eval_opponents
    ]


# ---------------------------------------------------------------------------------------------- command line
def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description="Masked PPO on the batched engine (see the module docstring).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Config keys (--set key=value):\n"
        + "\n".join(f"  {k}: {v}" for k, v in field_docs(PPOVecConfig).items()),
    )
    p.add_argument("--config", type=Path, required=True, help="configs/ppo_vec_<game>.yaml")
    p.add_argument("--seed", type=int, help="override seed")
    p.add_argument("--total-timesteps", type=int, help="override total_timesteps (with --resume: extend the run)")
    p.add_argument("--run-name", help="override run_name (default <config stem>_s<seed>)")
    p.add_argument("--runs-dir", help="override runs_dir (default runs)")
    p.add_argument("--device", help="override device (auto, cpu, cuda)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override any config key")
    p.add_argument("--resume", action="store_true", help="continue the run from its newest checkpoint")
    p.add_argument("--overwrite", action="store_true", help="delete an existing run of the same name and start anew")
    p.add_argument("--debug", action="store_true", help="show the traceback of an error")
    return p.parse_args(argv)


def resolve(args: argparse.Namespace) -> tuple[PPOVecConfig, Path, tuple[Path, dict[str, Any]] | None]:
    """The run's config, its directory and the checkpoint it resumes from (None: a fresh run).

    Raises:
        ConfigError: a bad config or flag, a run directory in the way, or a ``--resume`` that cannot resume (no
            saved run or checkpoint, or a config that differs from the saved one in more than ``total_timesteps``).
    """
    overrides: dict[str, Any] = parse_set(args.set)
    for flag in ("seed", "total_timesteps", "run_name", "runs_dir", "device"):
        if getattr(args, flag) is not None:
            overrides[flag] = getattr(args, flag)
    config = load_config_as(PPOVecConfig, args.config, overrides)
    run_dir = Path(config.runs_dir) / config.run_name
    if not args.resume:
        if run_dir.exists():
            if not args.overwrite:
                raise ConfigError(
                    f"{run_dir} already exists: pass --resume to continue it, --overwrite to start it "
                    "again, or --run-name to start another"
                )
            shutil.rmtree(run_dir)
        return config, run_dir, None
    saved_path = run_dir / "config.yaml"
    if not saved_path.exists():
        raise ConfigError(f"--resume: {saved_path} does not exist; start the run without --resume")
    saved = load_config_as(PPOVecConfig, saved_path)
    a, b = dataclasses.asdict(saved), dataclasses.asdict(config)
    differs = [f"{k}: saved {a[k]!r}, now {b[k]!r}" for k in a if k not in RESUMABLE and a[k] != b[k]]
    if differs:
        raise ConfigError(
            f"--resume: this command's config differs from the run's saved {saved_path} in "
            f"{'; '.join(differs)}. Resume with the command that started the run plus --resume; only "
            "--total-timesteps may change"
        )
    if "total_timesteps" not in overrides:  # without the flag a resumed run keeps its own length, not the file's
        config.total_timesteps = saved.total_timesteps
    from training.checkpoint import clean_leftovers

    # a write the run was killed in: never resumed from
    clean_leftovers(run_dir / "checkpoints", warn=lambda line: print(line, file=sys.stderr, flush=True))
    found = find_checkpoint(run_dir)
    if found is None:
        raise ConfigError(
            f"--resume: {run_dir} has no valid checkpoint to resume from; start it again with --overwrite"
        )
    return config, run_dir, found


def main(argv: list[str] | None = None) -> int:
    """Run ``ppo_vec.py``; returns the exit status (0 done, 2 a bad config or command or a checkpoint that could not
    be written)."""
    from training.checkpoint import CheckpointWriteError

    args = parse_args(argv)
    try:
        return _run(args, argv)
    except (ConfigError, CheckpointWriteError) as err:
        if args.debug:
            raise
        print(f"error: {err}", file=sys.stderr)
        return 2


def _run(args: argparse.Namespace, argv: list[str] | None) -> int:
    t_start, cpu_mark = time.perf_counter(), time.process_time()
    phase_cpu: dict[str, float] = {}  # this session's CPU seconds per phase (the wall times are the clock's)

    def lap(phase: str) -> None:
        nonlocal cpu_mark
        clock.lap(phase)
        phase_cpu[phase], cpu_mark = time.process_time() - cpu_mark, time.process_time()

    config, run_dir, found = resolve(args)
    aside = None
    if "heuristic" in config.opponents or "heuristic" in config.eval_opponents or config.pretrain is not None:
        from whist_env.vector.warmup import compile_aside

        aside = compile_aside(config.game, config.game_options)  # the heuristic's port compiles on the other core
    run_dir.mkdir(parents=True, exist_ok=True)
    save_config(config, run_dir / "config.yaml")
    command = run_dir / "command.txt"
    if not command.exists():
        given = argv if argv is not None else sys.argv[1:]
        command.write_text("python training/ppo_vec.py " + " ".join(shlex.quote(a) for a in given) + "\n")
    from training.report import PhaseClock

    clock = PhaseClock(run_dir / "phases.json", start=t_start)

    def log(line: str) -> None:
        print(f"[{config.run_name}] {line}", flush=True)

    trainer = PPOVec(config, run_dir, log)
    if found is not None:
        trainer.load_state(found[1])
        log(f"resuming from {found[0].name} ({trainer.num_timesteps:,} steps)")
    else:
        log(f"{config.game} on {trainer.device}: {config.total_timesteps:,} steps -> {run_dir}")
    if aside is not None:  # the engine's kernels compile here meanwhile (the first run after an install: ~30 s each)
        from whist_env.vector.warmup import compile_learner_path

        compile_learner_path(config.game, config.game_options)
        aside.wait()
    lap("set-up")
    if found is None and config.pretrain is not None:  # warm start: the cloned weights are what PPO fine-tunes
        from training.vec_pretrain import warm_start

        warm_start(trainer.model, config, trainer.view, run_dir)
        lap("warm start")
    w0, c0 = now()
    trainer.train()
    if trainer.saved_step != trainer.num_timesteps:  # the end of the run is checkpointed too
        trainer.save_checkpoint()
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    clock.set("PPO", trainer.ppo_wall_s)
    phase_cpu["PPO"], cpu_mark = time.process_time() - cpu_mark, time.process_time()
    policy = export_actor(
        trainer.model, run_dir / "policy.npz", config.game, config.game_options, config.canonical_suits
    )
    summary: dict[str, Any] = {
        "timesteps": trainer.num_timesteps,
        "wall_s": wall,
        "cpu_s": cpu,
        "timers_wall_s": trainer.timers.wall,
        "timers_cpu_s": trainer.timers.cpu,
    }
    if config.final_eval_deals:
        log(f"final evaluation: {config.final_eval_deals} duplicate deals vs {', '.join(config.eval_opponents)}")
        summary["eval"] = evaluate_policy(config, policy, progress=True)
        lap("final evaluation")
    summary["phases_s"] = dict(clock.seconds)
    summary["phases_cpu_s"] = phase_cpu
    (run_dir / "eval.json").write_text(json.dumps(summary, indent=2))
    from training.report import plot_learning_curve, write_eval_csv, write_report

    finals = [
        {**row, "timesteps": trainer.num_timesteps, "wall_s": round(trainer.ppo_wall_s, 1), "kind": "final"}
        for row in summary.get("eval", [])
    ]
    history = trainer.history + finals
    write_eval_csv(run_dir / "eval.csv", history)
    plot_learning_curve(run_dir / "learning_curve.png", history, config.run_name)
    write_report(
        run_dir / "report.md", dataclasses.asdict(config), finals, command.read_text().strip(), clock.summary(),
        trainer.num_timesteps,
    )  # fmt: skip
    if trainer.writer is not None:
        trainer.writer.close()
    print(f"\n{config.run_name}: {config.game}, {trainer.num_timesteps:,} steps; {clock.summary()}", flush=True)
    for row in summary.get("eval", []):
        print(
            f"  vs {row['opponent']:<10} learner {row['mean']:+.3f} ± {row['ci95']:.3f} per {row['unit']}, learner − "
            f"opponent {row['diff']:+.3f} ± {row['diff_ci95']:.3f} ({row['deals']} duplicate deals, "
            f"{row['engine']} arena, tables won {row['win_rate']:.1%}, illegal actions {row['illegal_actions']})",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    # main() of the module, not of the script: checkpoints pickle Snapshot as training.ppo_vec.Snapshot, which loads
    # anywhere (as __main__.Snapshot it would load only in this script)
    from training import ppo_vec

    sys.exit(ppo_vec.main())
