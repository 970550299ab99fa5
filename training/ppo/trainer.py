"""Masked PPO on the batched engine: a learner against batched opponents, trained with torch alone.

    python training/ppo/trainer.py --config configs/ppo_vec_german_whist.yaml
    python training/ppo/trainer.py --config configs/ppo_vec_german_whist.yaml --seed 1 --set n_envs=512
    python training/ppo/trainer.py --config configs/ppo_vec_german_whist.yaml --resume     # after an interruption
    python training/ppo/trainer.py --config configs/ppo_vec_german_whist_warm.yaml         # warm start, vs the
    heuristic

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
and its kernels :mod:`whist_env.learning.net`; this module is the command line.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:  # run as a script: make the `training` package importable
    sys.path.insert(0, str(REPO))

from training.config import (  # noqa: E402
    ConfigError,
    PPOVecConfig,
    field_docs,
    load_config_as,
    parse_set,
    save_config,
)
from training.ppo.loop import PPOVec, evaluate_policy, find_checkpoint  # noqa: E402
from training.ppo.rollout import LearnerView, Snapshot, now  # noqa: E402  (Snapshot, LearnerView: see below)
from whist_env.learning.net import export_actor  # noqa: E402

__all__ = ["LearnerView", "PPOVec", "PPOVecConfig", "Snapshot", "main"]
"""``Snapshot`` and ``LearnerView`` stay importable from here: checkpoints written before the split pickled them as
``training.ppo.trainer.Snapshot`` and ``training.ppo.trainer.LearnerView``."""

RESUMABLE = ("total_timesteps", "run_name", "runs_dir")
"""Keys a resumed run may differ in: its length (extend it) and where it is."""


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
    from training.checkpoint import check_layout, clean_leftovers

    # a write the run was killed in: never resumed from
    clean_leftovers(run_dir / "checkpoints", warn=lambda line: print(line, file=sys.stderr, flush=True))
    found = find_checkpoint(run_dir)
    if found is None:
        raise ConfigError(
            f"--resume: {run_dir} has no valid checkpoint to resume from; start it again with --overwrite"
        )
    check_layout(found[1].get("metadata"), config.game, config.game_options, found[0])
    return config, run_dir, found


def main(argv: list[str] | None = None, *, script: str = "ppo/trainer.py") -> int:
    """Run ``ppo_vec.py``; returns the exit status (0 done, 2 a bad config or command or a checkpoint that could not
    be written). ``script``: the command the run records (``train.py`` when that handed the config over)."""
    from training.checkpoint import CheckpointWriteError

    args = parse_args(argv)
    try:
        return _run(args, argv, script)
    except (ConfigError, CheckpointWriteError) as err:
        if args.debug:
            raise
        print(f"error: {err}", file=sys.stderr)
        return 2


def _run(args: argparse.Namespace, argv: list[str] | None, script: str) -> int:
    t_start, cpu_mark = time.perf_counter(), time.process_time()
    phase_cpu: dict[str, float] = {}  # this session's CPU seconds per phase (the wall times are the clock's)

    def lap(phase: str) -> None:
        nonlocal cpu_mark
        clock.lap(phase)
        phase_cpu[phase], cpu_mark = time.process_time() - cpu_mark, time.process_time()

    config, run_dir, found = resolve(args)
    aside = None
    if "heuristic" in config.opponents or "heuristic" in config.eval_opponents or config.pretrain is not None:
        from whist_env.learning.warmup import compile_aside

        aside = compile_aside(config.game, config.game_options)  # the heuristic's port compiles on the other core
    run_dir.mkdir(parents=True, exist_ok=True)
    save_config(config, run_dir / "config.yaml")
    from training.report import PhaseClock, write_command

    command = write_command(run_dir, script, argv)

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
        from whist_env.learning.warmup import compile_learner_path

        compile_learner_path(config.game, config.game_options)
        aside.wait()
    lap("set-up")
    if found is None and config.pretrain is not None:  # warm start: the cloned weights are what PPO fine-tunes
        from training.ppo.warm_start import warm_start

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
        run_dir / "report.md", dataclasses.asdict(config), finals, command, clock.summary(),
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
    sys.exit(main())
