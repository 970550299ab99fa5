"""The one callback of a training run: periodic evaluation, self-play snapshots, checkpoints, progress.

Everything happens between two rollouts (``on_rollout_start``, after the PPO update), where the model,
the environments and the random states form a consistent whole that a checkpoint can capture.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from stable_baselines3.common.callbacks import BaseCallback

from training.checkpoint import capture_model_state, capture_rng, save_checkpoint
from training.config import TrainConfig
from training.envs import opponent_pool, partner_spec
from training.policy_agent import PolicyAgent, actor_of
from training.report import plot_learning_curve, write_eval_csv

# evaluate(model, timesteps, num_deals, kind) -> rows for the history
EvalFn = Callable[[Any, int, int, str], list[dict[str, Any]]]


class TrainingCallback(BaseCallback):
    """Evaluates every ``eval_freq`` steps, snapshots the learner for self-play every ``self_play_refresh``
    steps, checkpoints every ``checkpoint_freq`` steps and prints a progress line.

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
        super().__init__(verbose=0)
        self.config = config
        self.run_dir = run_dir
        self.evaluate = evaluate
        self.encoder = encoder
        s = schedule or {}
        self.history: list[dict[str, Any]] = list(s.get("history", []))
        self.snapshots: list[tuple[int, dict[str, Any]]] = list(s.get("snapshots", []))
        self.next_eval: int = s.get("next_eval", 0)
        self.next_checkpoint: int = s.get("next_checkpoint", config.checkpoint_freq)
        self.next_snapshot: int = s.get("next_snapshot", config.self_play_refresh)
        self.wall_before: float = s.get("wall_s", 0.0)  # wall time of earlier sessions of this run
        self._t0 = time.time()
        self._last_print = 0.0
        self._pool_sent = False

    # ------------------------------------------------------------------ state for checkpoints
    def wall_s(self) -> float:
        """Wall time of the run so far, over all its sessions."""
        return self.wall_before + time.time() - self._t0

    def state(self) -> dict[str, Any]:
        """The callback's resumable state."""
        return {
            "history": list(self.history),
            "snapshots": list(self.snapshots),
            "next_eval": self.next_eval,
            "next_checkpoint": self.next_checkpoint,
            "next_snapshot": self.next_snapshot,
            "wall_s": self.wall_s(),
        }

    def checkpoint(self) -> Path:
        """Save a checkpoint of the whole run now."""
        env = self.training_env
        extra = {
            "schedule": self.state(),
            "model_state": capture_model_state(self.model),
            "env_states": env.env_method("get_state"),
            "rng": capture_rng(),
            "num_timesteps": self.model.num_timesteps,
        }
        path = save_checkpoint(self.run_dir, self.model, extra, self.config.keep_checkpoints)
        from whist_env.fingerprint import save_model_metadata  # the game, all its options, the layout: checked on load

        save_model_metadata(path / "model.zip", self.config.game, self.config.game_options)
        return path

    # ------------------------------------------------------------------ self-play
    def snapshot_agents(self) -> list[PolicyAgent]:
        """The frozen snapshots as opponents (sampling, not argmax, for variety)."""
        agents = []
        for step, weights in self.snapshots:
            actor = actor_of(self.model.policy)
            actor.load_state_dict(weights)
            agents.append(PolicyAgent(actor, self.encoder, deterministic=False, name=f"snapshot@{step}"))
        return agents

    def send_pool(self) -> None:
        """Give every environment the scripted opponents plus the current snapshots."""
        pool = opponent_pool(self.config, self.snapshot_agents())
        self.training_env.env_method("set_opponents", pool, partner_spec(self.config))
        self._pool_sent = True

    # ------------------------------------------------------------------ hooks
    def _on_training_start(self) -> None:
        if self.config.self_play and self.snapshots:
            self.send_pool()  # a resumed run: its snapshots go back into the envs' seats

    def _on_rollout_start(self) -> None:
        t = self.num_timesteps
        cfg = self.config
        if t >= self.next_eval:
            rows = self.evaluate(self.model, t, cfg.eval_deals, "periodic")
            for row in rows:
                row["wall_s"] = round(self.wall_s(), 1)
                self.logger.record(f"eval/reward_vs_{row['opponent']}", row["mean"])
                self.logger.record(f"eval/diff_vs_{row['opponent']}", row["diff"])
                self.logger.record(f"eval/win_rate_vs_{row['opponent']}", row["win_rate"])
            self.history.extend(rows)
            write_eval_csv(self.run_dir / "eval.csv", self.history)
            plot_learning_curve(self.run_dir / "learning_curve.png", self.history, cfg.run_name)
            self.next_eval = (t // cfg.eval_freq + 1) * cfg.eval_freq
            self._print(t, force=True)
        if cfg.self_play and t >= self.next_snapshot:
            self.snapshots.append((t, actor_of(self.model.policy).state_dict()))
            self.snapshots = self.snapshots[-cfg.self_play_pool :]
            self.send_pool()
            self.next_snapshot = (t // cfg.self_play_refresh + 1) * cfg.self_play_refresh
        if t >= self.next_checkpoint:
            self.next_checkpoint = (t // cfg.checkpoint_freq + 1) * cfg.checkpoint_freq
            self.checkpoint()
        self._print(t)

    def _on_step(self) -> bool:
        return True

    def _print(self, t: int, force: bool = False) -> None:
        now = time.time()
        if not force and now - self._last_print < 10.0:
            return
        self._last_print = now
        total = self.config.total_timesteps
        elapsed = now - self._t0
        done_here = t - self.model._num_timesteps_at_start
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
