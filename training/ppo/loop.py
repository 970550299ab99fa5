"""The trainer of ``ppo_vec``: :class:`PPOVec` holds the learner env, the network and Adam, and runs the loop
(rollouts: ``training/ppo/rollout.py``; PPO's update: ``training/ppo/update.py``), with self-play snapshots,
evaluations during training on the batched arena (:func:`evaluate_policy`) and atomic checkpoints that resume
exactly (:func:`find_checkpoint`: plain data, :mod:`training.checkpoint`). The run's life is
``training/ppo/trainer.py``'s."""

from __future__ import annotations

import dataclasses
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from training.config import PPOVecConfig
from training.ppo.rollout import LearnerView, Snapshot, Timers, collect_rollout, env_state, now, set_env_state
from training.ppo.update import ppo_update
from whist_env.fingerprint import ModelMetadata
from whist_env.learning.net import build_actor_critic, export_actor, numpy_actor
from whist_env.registry import get_spec

REQUIRED = ("num_timesteps", "model", "optimizer", "rng", "trainer_rng", "env", "snapshots")
"""The keys a checkpoint's state must hold."""


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
        self.metadata = ModelMetadata.for_game(
            config.game, config.game_options, canonical_suits=config.canonical_suits
        ).to_dict()

    # -------------------------------------------------------------- opponents
    def draw_opponents(self) -> list[Any]:
        """One player per other seat (relative seats 1..n-1) for the next rollout, drawn from the weights; with
        ``partner``, the partner's seat is that player (``self``: a frozen copy of the learner as it is now)."""
        c = self.config
        names = list(c.opponents)
        total = sum(c.opponents.values())
        share = c.self_play_weight if (c.self_play and self.snapshots) else 0.0
        pool: list[Any] = [*names, *self.snapshots]
        weights = [(1.0 - share) * c.opponents[k] / total for k in names]
        weights += [share / len(self.snapshots)] * len(self.snapshots) if share else [0.0] * len(self.snapshots)
        picks = self.rng.choice(len(pool), size=self.env.num_players - 1, p=np.asarray(weights) / sum(weights))
        players = [pool[i] for i in picks]
        if c.partner:
            offset = get_spec(c.game).partner_offset
            assert offset is not None  # the config checked it
            players[offset - 1] = (
                Snapshot(numpy_actor(self.model), self.num_timesteps, self.view) if c.partner == "self" else c.partner
            )
        return players

    # -------------------------------------------------------------- rollouts and updates
    def collect(self) -> dict[str, Any]:
        """One rollout of ``n_steps`` batched steps (:func:`training.ppo.rollout.collect_rollout`); returns its
        tensors and GAE advantages and returns."""
        assert self._obs is not None
        batch, self._obs = collect_rollout(
            self.config, self.env, self.view, self.model, self._obs, self.device, self.timers, self._count_episodes
        )
        self.num_timesteps += self.config.n_steps * self.config.n_envs
        return batch

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
        """PPO's epochs over one rollout (:func:`training.ppo.update.ppo_update`); returns the mean losses."""
        return ppo_update(self.config, self.model, self.optimizer, batch, self.rng, self.num_timesteps)

    def begin(self) -> None:
        """Deal the first episodes (the env reset to the run's seed), unless a rollout or a checkpoint did."""
        if self._obs is None:
            self._obs, _ = self.env.reset(seed=self.config.seed)

    def rollout(self) -> dict[str, float]:
        """One rollout against the opponents set in the env, then its update; returns the update's mean losses.
        :meth:`train`'s step, and that of a loop driven from outside (``training/exploit.py``: a time budget)."""
        batch = self.collect()
        u0, uc0 = now()
        stats = self.update(batch)
        self.timers.add("update", u0, uc0)
        return stats

    def train(self) -> None:
        """Train until ``total_timesteps``, checkpointing on the way (a resumed trainer goes on from its step)."""
        c = self.config
        if self.run_dir is not None and self.writer is None:
            self.writer = tensorboard_writer(self.run_dir / "tb")
        self.begin()
        w0 = time.perf_counter()
        self._evaluate_if_due(w0)  # the start (a resumed run: only if it stopped before one that was due)
        self.ppo_wall_s += time.perf_counter() - w0
        while self.num_timesteps < c.total_timesteps:
            self.env.set_opponents(self.draw_opponents())
            w0 = time.perf_counter()
            stats = self.rollout()
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
            "snapshots": [{"step": s.step, "policy": s.policy.arrays()} for s in self.snapshots],
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
        from whist_env.agents.pretrained import NumpyPolicy

        self.snapshots = [
            Snapshot(NumpyPolicy.from_arrays(s["policy"], what="a checkpoint's snapshot"), int(s["step"]), self.view)
            for s in state["snapshots"]
        ]
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
        """Write ``checkpoints/step_<n>/`` atomically as plain data (:func:`training.checkpoint.save_checkpoint`)
        and drop all but the newest ``keep_checkpoints``.

        Raises:
            CheckpointWriteError: it could not be written (disk full, ...); the previous one is intact.
        """
        from training.checkpoint import save_checkpoint

        assert self.run_dir is not None
        # the header keeps the game, options and layout that --resume checks (training.checkpoint.check_layout)
        final = save_checkpoint(self.run_dir, "ppo", self.num_timesteps, self.state(), self.metadata,
                                self.config.keep_checkpoints)  # fmt: skip
        self.saved_step = self.num_timesteps
        return final


def tensorboard_writer(path: Path) -> Any:
    """A TensorBoard ``SummaryWriter`` at ``path``, or None when tensorboard is not installed."""
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:
        return None
    return SummaryWriter(str(path))


def find_checkpoint(run_dir: Path) -> tuple[Path, dict[str, Any]] | None:
    """The newest checkpoint of the run that loads whole, with its state and the header's ``metadata`` (a damaged
    one is skipped with a warning), or None."""
    from training.checkpoint import find_state

    found = find_state(run_dir, "ppo", REQUIRED, warn=lambda line: print(line, file=sys.stderr, flush=True))
    return None if found is None else (found[0], {**found[1]["state"], "metadata": found[1]["metadata"]})


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
