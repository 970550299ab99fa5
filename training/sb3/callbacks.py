"""The tasks of a training run between two rollouts: periodic evaluation, self-play snapshots, checkpoints,
progress lines. The loop that runs them is the package's (:func:`whist_env.learning.sb3.run_ppo`).

Everything happens between two rollouts (after the PPO update), where the model, the environments and the
random states form a consistent whole that a checkpoint can capture.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from training.checkpoint import capture_model_state, capture_rng, save_checkpoint
from training.config import TrainConfig
from training.report import plot_learning_curve, write_eval_csv
from training.sb3.envs import opponent_pool, partner_spec
from whist_env.learning.sb3 import Periodic, PolicyAgent, actor_of

# evaluate(model, timesteps, num_deals, kind) -> rows for the history
EvalFn = Callable[[Any, int, int, str], list[dict[str, Any]]]


class TrainingCallback:
    """Evaluates every ``eval_freq`` steps, snapshots the learner for self-play every ``self_play_refresh``
    steps, checkpoints every ``checkpoint_freq`` steps and prints a progress line: the :meth:`tasks` of
    :func:`whist_env.learning.sb3.run_ppo`.

    Args:
        config: the run's configuration.
        run_dir: ``runs/<run_name>``.
        evaluate: plays the current policy against the evaluation opponents.
        encoder: the game's observation encoder (for snapshot agents).
        schedule: the resumable state (see :meth:`state`); fresh when None.
    """

    def __init__(
        self,
        config: TrainConfig,
        run_dir: Path,
        evaluate: EvalFn,
        encoder: Any,
        schedule: dict[str, Any] | None = None,
    ) -> None:
        self.config = config
        self.run_dir = run_dir
        self.evaluate = evaluate
        self.encoder = encoder
        s = schedule or {}
        self.history: list[dict[str, Any]] = list(s.get("history", []))
        self.snapshots: list[tuple[int, dict[str, Any]]] = list(s.get("snapshots", []))
        self.eval_task = Periodic("eval", config.eval_freq, self._evaluate, s.get("next_eval", 0))
        self.snapshot_task = Periodic(
            "snapshot", config.self_play_refresh, self._snapshot, s.get("next_snapshot", config.self_play_refresh)
        )
        self.checkpoint_task = Periodic(
            "checkpoint", config.checkpoint_freq, self._checkpoint, s.get("next_checkpoint", config.checkpoint_freq)
        )
        self.wall_before: float = s.get("wall_s", 0.0)  # wall time of earlier sessions of this run
        self.model: Any = None
        self._t0 = time.time()
        self._last_print = 0.0
        self._start_timesteps = 0

    def attach(self, model: Any) -> None:
        """The model the tasks work on (set before :func:`~whist_env.learning.sb3.run_ppo`)."""
        self.model = model
        self._start_timesteps = model.num_timesteps

    def tasks(self) -> list[Periodic]:
        """In order: evaluate, snapshot (with self-play), checkpoint (after the snapshot it holds), print."""
        every_rollout = Periodic("progress", 1, self._print)
        snapshot = [self.snapshot_task] if self.config.self_play else []
        return [self.eval_task, *snapshot, self.checkpoint_task, every_rollout]

    @property
    def training_env(self) -> Any:
        """The model's vectorised environments."""
        return self.model.get_env()

    # ------------------------------------------------------------------ state for checkpoints
    def wall_s(self) -> float:
        """Wall time of the run so far, over all its sessions."""
        return self.wall_before + time.time() - self._t0

    def state(self) -> dict[str, Any]:
        """The callback's resumable state."""
        return {
            "history": list(self.history),
            "snapshots": list(self.snapshots),
            "next_eval": self.eval_task.next,
            "next_checkpoint": self.checkpoint_task.next,
            "next_snapshot": self.snapshot_task.next,
            "wall_s": self.wall_s(),
        }

    def checkpoint(self) -> Path:
        """Save a checkpoint of the whole run now.

        Raises:
            CheckpointWriteError: it could not be written (disk full, ...); the previous one is intact.
        """
        from whist_env.fingerprint import ModelMetadata  # the game, all its options, the layout: checked on resume

        cfg, policy = self.config, self.model.policy
        state = {
            "policy": policy.state_dict(),
            "optimizer": policy.optimizer.state_dict(),
            "schedule": self.state(),
            "model_state": capture_model_state(self.model),
            "env_states": self.training_env.env_method("get_state"),
            "rng": capture_rng(),
        }
        metadata = ModelMetadata.for_game(cfg.game, cfg.game_options, canonical_suits=cfg.canonical_suits).to_dict()
        return save_checkpoint(self.run_dir, "sb3", self.model.num_timesteps, state, metadata, cfg.keep_checkpoints)

    # ------------------------------------------------------------------ self-play
    def snapshot_agents(self) -> list[PolicyAgent]:
        """The frozen snapshots as opponents (sampling, not argmax, for variety)."""
        agents = []
        for step, weights in self.snapshots:
            actor = actor_of(self.model.policy)
            actor.load_state_dict(weights)
            name = f"snapshot@{step}"
            agents.append(PolicyAgent(actor, self.encoder, False, name, canonical_suits=self.config.canonical_suits))
        return agents

    def send_pool(self) -> None:
        """Give every environment the scripted opponents plus the current snapshots."""
        pool = opponent_pool(self.config, self.snapshot_agents())
        self.training_env.env_method("set_opponents", pool, partner_spec(self.config))

    # ------------------------------------------------------------------ tasks
    def on_start(self) -> None:
        """Before the first rollout: a resumed run's snapshots go back into the envs' seats."""
        if self.config.self_play and self.snapshots:
            self.send_pool()

    def _evaluate(self, t: int) -> None:
        cfg = self.config
        rows = self.evaluate(self.model, t, cfg.eval_deals, "periodic")
        for row in rows:
            row["wall_s"] = round(self.wall_s(), 1)
            self.model.logger.record(f"eval/reward_vs_{row['opponent']}", row["mean"])
            self.model.logger.record(f"eval/diff_vs_{row['opponent']}", row["diff"])
            self.model.logger.record(f"eval/win_rate_vs_{row['opponent']}", row["win_rate"])
        self.history.extend(rows)
        write_eval_csv(self.run_dir / "eval.csv", self.history)
        plot_learning_curve(self.run_dir / "learning_curve.png", self.history, cfg.run_name)
        self._print(t, force=True)

    def _snapshot(self, t: int) -> None:
        self.snapshots.append((t, actor_of(self.model.policy).state_dict()))
        self.snapshots = self.snapshots[-self.config.self_play_pool :]
        self.send_pool()

    def _checkpoint(self, t: int) -> None:
        self.checkpoint()

    def _print(self, t: int, force: bool = False) -> None:
        now = time.time()
        if not force and now - self._last_print < 10.0:
            return
        self._last_print = now
        total = self.config.total_timesteps
        elapsed = now - self._t0
        done_here = t - self._start_timesteps
        rate = done_here / elapsed if elapsed > 0 and done_here > 0 else 0.0
        eta = (total - t) / rate if rate > 0 else float("nan")
        ep = [e["r"] for e in self.model.ep_info_buffer or []]
        ep_txt = f" | ep return {sum(ep) / len(ep):+.3f}" if ep else ""
        last = {}
        for row in self.history:
            last[row["opponent"]] = row
        ev = ", ".join(f"{k} {r['diff']:+.3f}±{r['diff_ci95']:.3f}" for k, r in last.items())
        eta_txt = f"{eta / 60:.1f} min" if eta == eta else "?"
        print(
            f"[{self.config.run_name}] {t:,}/{total:,} steps ({100 * t / total:.0f}%) | {rate:,.0f} steps/s | "
            f"ETA {eta_txt}{ep_txt} | learner − opponent: {ev or '-'}",
            flush=True,
            file=sys.stdout,
        )
