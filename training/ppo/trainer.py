"""Masked PPO on the batched engine: a learner against batched opponents, trained with torch alone.

    python training/train.py --config configs/ppo_vec_german_whist.yaml
    python training/train.py --config configs/ppo_vec_german_whist.yaml --seed 1 --set n_envs=512
    python training/train.py --config configs/ppo_vec_german_whist.yaml --resume   # after an interruption
    python training/train.py --config configs/ppo_vec_german_whist_warm.yaml       # warm start, vs the heuristic

The twin of the sb3 trainer (``training/sb3/``: sb3-contrib's ``MaskablePPO`` on one single-agent env per process
slot) on :func:`whist_env.vector.make_learner_env`, where the other seats play inside the engine, batched. What is
the same: the network (sb3's ``MlpPolicy``: separate actor and critic MLPs of ``net_arch`` with ``tanh``, orthogonal
initialisation, Adam with ``eps=1e-5``), the PPO loss (clipped objective on normalised advantages, value MSE,
entropy bonus, gradient clipping), the YAML config with ``--set key=value`` and ``--seed`` overrides, TensorBoard
scalars (``runs/<run>/tb``), checkpoints and ``--resume``. What differs: a rollout is ``n_steps`` steps of ``n_envs``
environments stepped as one batch (so ``n_envs`` is large and ``n_steps`` small for the same rollout size), and the
illegal actions' logits are set to a large negative number before the softmax.

Opponents: ``opponents`` maps names the learner env takes (``random``; ``heuristic``: the numba port of the
heuristic, whose decisions are the Python agent's; ``pretrained`` and ``pretrained(path=<exported .npz>)``: a frozen
network, played as :class:`~whist_env.agents.pretrained.PretrainedAgent` plays it) to draw weights; with
``self_play``, frozen snapshots of the learner (greedy numpy copies of its actor, batched callables ``(obs, mask) ->
actions``) take ``self_play_weight`` of the draws. Each opponent seat draws its player at the start of every rollout.

Warm start (``pretrain:``, as ``train.py``'s; ``training/ppo/warm_start.py``): before PPO, the game's heuristic is
played batched on the engine and cloned into the actor and the critic, with DAgger rounds in which the cloned network
plays on the engine and the heuristic labels its states; the teacher's dataset is cached in
:mod:`whist_env.learning.cloning`'s format (``pretrain.cache_dir``). ``canonical_suits``: the learner sees trump as
spades (:class:`LearnerView`), as in ``train.py``; the exported policy's metadata says so.

At the end the actor is exported to the numpy format of the shipped agents (``runs/<run>/policy.npz``, played by
``make_agent("pretrained(path=...)", game)``) and evaluated on ``final_eval_deals`` duplicate deals against each of
``eval_opponents``: on the batched engine's arena (:func:`whist_env.evaluation.batched.evaluate_batched`; the same
deals,
and the same results for deterministic agents, as :func:`whist_env.evaluation.evaluate`'s) when every agent has a
batched form, else on the AEC arena. With ``eval_freq``, the same evaluation runs during training too (at the start,
then every ``eval_freq`` steps, on ``eval_deals`` deals). A run writes what ``train.py``'s does: ``eval.csv`` (every
evaluation), ``learning_curve.png``, ``report.md`` (with the wall time of each phase: set-up, warm start, PPO, final
evaluation; also ``runs/<run>/phases.json``, kept across ``--resume``), and ``eval.json`` (the final table, with this
session's CPU time per phase and the rollout's timers).

Where it lives: the config is :class:`training.config.PPOVecConfig`; the trainer and its loop
``training/ppo/loop.py``; rollouts ``training/ppo/rollout.py``; PPO's update ``training/ppo/update.py``; the network
and its kernels :mod:`whist_env.learning.net`; this module is the trainer's side of the run contract
(:mod:`training.run`, which owns the command line, resume and the report).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from training.config import PPOVecConfig, load_config_as
from training.ppo.loop import PPOVec, evaluate_policy, find_checkpoint
from training.ppo.rollout import now


class PPOSession:
    """A run of :class:`~training.ppo.loop.PPOVec` in progress (see :class:`training.run.Session`)."""

    envs = None
    final_phase = "final evaluation"

    def __init__(self, config: PPOVecConfig, run_dir: Path, found: tuple[Path, dict[str, Any]] | None) -> None:
        self.config, self.run_dir = config, run_dir
        self.cpu_mark = time.process_time()
        self.phase_cpu: dict[str, float] = {}  # this session's CPU seconds per phase (the wall times are the clock's)
        aside = None
        if "heuristic" in config.opponents or "heuristic" in config.eval_opponents or config.pretrain is not None:
            from whist_env.learning.warmup import compile_aside

            aside = compile_aside(config.game, config.game_options)  # the heuristic's port compiles on the other core
        self.trainer = PPOVec(config, run_dir, self.log)
        if found is not None:
            self.trainer.load_state(found[1])
            self.log(f"resuming from {found[0].name} ({self.trainer.num_timesteps:,} steps)")
        else:
            self.log(f"{config.game} on {self.trainer.device}: {config.total_timesteps:,} steps -> {run_dir}")
        if aside is not None:  # the engine's kernels compile here meanwhile (the first run after an install: ~30 s)
            from whist_env.learning.warmup import compile_learner_path

            compile_learner_path(config.game, config.game_options)
            aside.wait()
        self.lap("set-up")
        self.summary: dict[str, Any] = {}

    def log(self, line: str) -> None:
        print(f"[{self.config.run_name}] {line}", flush=True)

    def lap(self, phase: str) -> None:
        self.phase_cpu[phase], self.cpu_mark = time.process_time() - self.cpu_mark, time.process_time()

    @property
    def steps(self) -> int:
        return int(self.trainer.num_timesteps)

    @property
    def history(self) -> list[dict[str, Any]]:
        return list(self.trainer.history)

    def warm_start(self) -> None:
        from training.ppo.warm_start import warm_start

        warm_start(self.trainer.model, self.config, self.trainer.view, self.run_dir)
        self.lap("warm start")

    def train(self) -> float:
        w0, c0 = now()
        self.trainer.train()
        wall, cpu = time.perf_counter() - w0, time.process_time() - c0
        self.lap("PPO")
        timers = self.trainer.timers
        self.summary = {"timesteps": self.steps, "wall_s": wall, "cpu_s": cpu, "timers_wall_s": timers.wall,
                        "timers_cpu_s": timers.cpu}  # fmt: skip
        return float(self.trainer.ppo_wall_s)

    def save(self) -> None:
        if self.trainer.saved_step != self.trainer.num_timesteps:  # the end of the run is checkpointed too
            self.trainer.save_checkpoint()

    def export(self) -> Path:
        from whist_env.learning.net import export_actor

        config = self.config
        return Path(export_actor(self.trainer.model, self.run_dir / "policy.npz", config.game, config.game_options,
                                 config.canonical_suits))  # fmt: skip

    def evaluate(self, policy: Path) -> list[dict[str, Any]]:
        config = self.config
        rows: list[dict[str, Any]] = []
        if config.final_eval_deals:
            self.log(
                f"final evaluation: {config.final_eval_deals} duplicate deals vs {', '.join(config.eval_opponents)}"
            )
            rows = evaluate_policy(config, policy, progress=True)
        self.lap("final evaluation")
        self.summary["eval"] = rows
        wall = round(self.trainer.ppo_wall_s, 1)
        return [{**row, "timesteps": self.steps, "wall_s": wall, "kind": "final"} for row in rows]

    def close(self) -> None:
        """Also writes ``eval.json`` after a final evaluation: its table, the wall time (``phases.json``) and this
        session's CPU time of every phase, and the rollout's timers."""
        if "eval" in self.summary:
            phases = self.run_dir / "phases.json"
            self.summary["phases_s"] = json.loads(phases.read_text()) if phases.exists() else {}
            self.summary["phases_cpu_s"] = self.phase_cpu
            (self.run_dir / "eval.json").write_text(json.dumps(self.summary, indent=2))
        if self.trainer.writer is not None:
            self.trainer.writer.close()


class PPOTrainer:
    """The ppo trainer's side of the run contract (:class:`training.run.Trainer`)."""

    name = "ppo"
    config_class = PPOVecConfig
    length = "total_timesteps"
    resumable = ("total_timesteps",)
    exit_codes: dict[type[BaseException], int] = {}

    def add_flags(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--device", help="override device (auto, cpu, cuda)")

    def load_config(self, path: Path, overrides: dict[str, Any]) -> PPOVecConfig:
        return load_config_as(PPOVecConfig, path, overrides)

    def find_checkpoint(self, run_dir: Path) -> tuple[Path, dict[str, Any]] | None:
        return find_checkpoint(run_dir)

    def metadata(self, found: tuple[Path, Any]) -> dict[str, Any] | None:
        stored: dict[str, Any] | None = found[1].get("metadata")
        return stored

    def start(self, config: PPOVecConfig, run_dir: Path, args: argparse.Namespace) -> PPOSession:
        return PPOSession(config, run_dir, None)

    def resume(
        self, config: PPOVecConfig, run_dir: Path, found: tuple[Path, Any], args: argparse.Namespace
    ) -> PPOSession:
        return PPOSession(config, run_dir, found)

    def leave(self, args: argparse.Namespace, status: int) -> None:
        pass


TRAINER = PPOTrainer()

if __name__ == "__main__":
    sys.exit("run it with python training/train.py --config configs/ppo_vec_<game>.yaml")
