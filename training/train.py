"""Train an agent on one whist_env game, evaluate it on duplicate deals, write a report: the one command for every
trainer. A config's ``trainer:`` key says which runs it: ``sb3`` (the default, this script: sb3-contrib's
MaskablePPO), ``ppo`` (handed to ``training/ppo/trainer.py``: masked PPO on the batched engine) or ``rllib`` (handed to
``training/rllib/trainer.py``), with the rest of the command line as it is.

    python training/train.py --config configs/ppo_vec_german_whist_warm.yaml   # trainer: ppo (README command 1)
    python training/train.py --config configs/german_whist.yaml
    python training/train.py --config configs/german_whist.yaml --total-timesteps 50000 --seed 1
    python training/train.py --config configs/german_whist.yaml --resume      # after an interruption
    python training/train.py --resume --run-name german_whist_s0              # the same, by the run's name

What it does with an ``sb3`` config, in order:

1. reads ``configs/<name>.yaml`` into a typed :class:`~training.config.TrainConfig` (an unknown key is an
   error naming the allowed ones); flags override it (``--set key=value`` for any key);
2. builds ``n_envs`` single-agent environments (``whist_env.envs.single_agent``): the learner in one seat,
   the configured opponents (and, with ``self_play``, frozen snapshots of the learner) in the others;
3. trains ``MaskablePPO`` with the legal-action masks, logging to TensorBoard (``runs/<run>/tb``); between
   rollouts it evaluates against the ``eval_opponents`` on duplicate deals, refreshes the self-play
   snapshots, and writes checkpoints from which ``--resume`` continues exactly;
4. saves ``runs/<run>/model.zip``, evaluates it on ``final_eval_deals`` duplicate deals per opponent, and
   writes ``eval.csv``, ``learning_curve.png`` and ``report.md`` next to ``config.yaml``.

The trained model plays through ``whist_env.agents.ModelAgent`` (``make_agent("model:runs/<run>/model.zip",
game)``).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # run as a script: make the `training` package importable
    sys.path.insert(0, str(REPO))

from training.checkpoint import CheckpointWriteError  # noqa: E402
from training.config import (  # noqa: E402
    ConfigError,
    TrainConfig,
    field_docs,
    from_dict,
    load_config,
    missing_config,
    parse_set,
    save_config,
)

RESUMABLE = ("total_timesteps",)
"""What a resumed run may change (extend the run)."""
IGNORED_ON_RESUME = ("run_name", "runs_dir")
"""Where the run is; they locate the run directory, and a moved directory still resumes."""


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description="Train MaskablePPO on a whist_env game (see the module docstring).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Config keys (--set key=value):\n" + "\n".join(f"  {k}: {v}" for k, v in field_docs().items()),
    )
    p.add_argument("--config", type=Path, help="configs/<name>.yaml (not needed with --resume --run-name)")
    p.add_argument("--total-timesteps", type=int, help="override total_timesteps (with --resume: extend the run)")
    p.add_argument("--seed", type=int, help="override seed")
    p.add_argument("--run-name", help="override run_name (default <config stem>_s<seed>)")
    p.add_argument("--runs-dir", help="override runs_dir (default runs)")
    p.add_argument("--n-envs", type=int, help="override n_envs")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override any config key")
    p.add_argument(
        "--resume",
        action="store_true",
        help="continue the run from its newest valid checkpoint (give the command that started it, plus --resume)",
    )
    p.add_argument(
        "--overwrite",
        action="store_true",
        help="start the run again from zero: delete an existing run directory of the same name (with --resume: "
        "only when it has no valid checkpoint)",
    )
    p.add_argument("--debug", action="store_true", help="show the traceback of an error")
    return p.parse_args(argv)


def _warn(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _differences(saved: TrainConfig, requested: TrainConfig) -> list[str]:
    """``key: saved X, now Y`` for every key (but those a resume may change) where the two configs differ."""
    a, b = saved.to_dict(), requested.to_dict()
    skip = RESUMABLE + IGNORED_ON_RESUME
    return [f"{k}: saved {a[k]!r}, now {b[k]!r}" for k in a if k not in skip and a[k] != b[k]]


def resolve_config(args: argparse.Namespace) -> tuple[TrainConfig, Path, tuple[Path, dict[str, Any]] | None]:
    """The run's config, its directory, and the checkpoint it resumes from (with its ``state.pkl``) or None.

    Raises:
        ConfigError: a bad config or flag, a run directory in the way, or a ``--resume`` that cannot resume (no
            saved run, a command whose config differs from the saved one, no valid checkpoint).
    """
    overrides: dict[str, Any] = parse_set(args.set)
    for flag, key in (("total_timesteps", "total_timesteps"), ("seed", "seed"), ("run_name", "run_name"),
                      ("runs_dir", "runs_dir"), ("n_envs", "n_envs")):  # fmt: skip
        if getattr(args, flag) is not None:
            overrides[key] = getattr(args, flag)
    if args.resume:
        return _resolve_resume(args, overrides)
    if args.config is None:
        raise missing_config(TrainConfig)
    config = load_config(args.config, overrides)
    run_dir = Path(config.runs_dir) / config.run_name
    if run_dir.exists():
        if not args.overwrite:
            raise ConfigError(
                f"{run_dir} already exists: pass --resume to continue it, --overwrite to start it again, or "
                f"--run-name to start another"
            )
        shutil.rmtree(run_dir)
    return config, run_dir, None


def _resolve_resume(
    args: argparse.Namespace, overrides: dict[str, Any]
) -> tuple[TrainConfig, Path, tuple[Path, dict[str, Any]] | None]:
    from training.checkpoint import check_layout, clean_leftovers, find_checkpoint

    if args.config is None and "run_name" not in overrides:
        raise ConfigError("--resume needs --run-name NAME or the --config (and --seed) the run was started with")
    requested: TrainConfig | None = None
    if args.config is not None:
        requested = load_config(args.config, overrides)
        run_dir = Path(requested.runs_dir) / requested.run_name
    else:
        run_dir = Path(overrides.get("runs_dir", "runs")) / overrides["run_name"]
    saved_path = run_dir / "config.yaml"
    if not saved_path.exists():
        raise ConfigError(f"--resume: {saved_path} does not exist; start the run without --resume")
    saved = load_config(saved_path)
    if requested is None:  # --run-name alone: the flags and --set overrides are checked against the saved config
        unknown = sorted(k for k in overrides if k not in saved.to_dict())
        if unknown:
            raise ConfigError(f"--set: unknown key(s) {', '.join(map(repr, unknown))} in the --set override")
        requested = from_dict({**saved.to_dict(), **overrides}, source="--resume")
    differs = _differences(saved, requested)
    if differs:
        raise ConfigError(
            f"--resume: this command's config differs from the run's saved {saved_path} in {'; '.join(differs)}. "
            f"Resume with the command that started the run ({run_dir / 'command.txt'}) plus --resume; only "
            f"--total-timesteps may change"
        )
    config = saved
    if "total_timesteps" in overrides:  # extend the run; without the flag it keeps its own length, not the file's
        config.total_timesteps = requested.total_timesteps
    clean_leftovers(run_dir / "checkpoints", warn=_warn)  # a write the run was killed in: never resumed from
    found = find_checkpoint(run_dir, warn=_warn)
    if found is None:
        if not args.overwrite:
            raise ConfigError(
                f"--resume: {run_dir} has no valid checkpoint to resume from; pass --overwrite (with --resume) to "
                f"start the run again from zero"
            )
        command = run_dir / "command.txt"
        original = command.read_text() if command.exists() else None
        shutil.rmtree(run_dir)
        if original is not None:  # the report keeps naming the command that started the run
            run_dir.mkdir(parents=True)
            command.write_text(original)
        print(f"[{config.run_name}] --resume --overwrite: no valid checkpoint, starting again from zero", flush=True)
    else:
        from whist_env.errors import ModelMismatchError
        from whist_env.fingerprint import read_metadata

        try:
            stored = read_metadata(found[0] / "model.zip")
        except ModelMismatchError as err:  # a damaged record
            raise ConfigError(f"--resume: {err}") from err
        check_layout(None if stored is None else stored.to_dict(), config.game, config.game_options, found[0])
    return config, run_dir, found


def make_evaluate(config: TrainConfig, encoder: Any, run_dir: Path | None = None):  # noqa: ANN201 (callbacks.EvalFn)
    """The periodic and final evaluation: the greedy policy against each ``eval_opponents`` entry.

    With a ``run_dir``, where every agent has a batched form (:func:`training.evaluation.batched_ok`), each evaluation
    exports the policy of that moment to ``run_dir/policy.npz`` (the one exporter,
    :func:`whist_env.agents.pretrained.export_policy`) and plays it on the batched arena, as ``ppo_vec`` does: the same
    deals and the same greedy decisions as the AEC arena, in seconds instead of a minute. Otherwise one evaluation agent
    serves the whole run on the AEC arena; before every evaluation the model's current weights are copied into it
    (:meth:`~whist_env.learning.sb3.PolicyAgent.sync`), so each evaluation plays the policy of that moment. The
    start-up and final evaluations show their progress (with an ETA) on stderr.
    """
    from training import evaluation
    from whist_env.agents.pretrained import export_policy
    from whist_env.learning.sb3 import PolicyAgent

    learner: PolicyAgent | str | None = None
    batched = run_dir is not None and evaluation.batched_ok(
        config.game, config.game_options, ["pretrained", *config.eval_opponents]
    )

    def run(model: Any, timesteps: int, deals: int, kind: str) -> list[dict[str, Any]]:
        nonlocal learner
        if batched:
            assert run_dir is not None
            path = export_policy(
                model.policy, run_dir / "policy.npz", config.game, config.game_options, config.canonical_suits
            )
            learner = f"pretrained(path={path})"
        elif learner is None:
            learner = PolicyAgent.from_policy(model.policy, encoder, True, canonical_suits=config.canonical_suits)
        else:
            assert isinstance(learner, PolicyAgent)
            learner.sync(model.policy)
        workers = config.eval_workers if kind == "final" else 1
        progress = kind == "final" or timesteps == 0
        rows = []
        for name in config.eval_opponents:
            if progress:
                what = "final" if kind == "final" else "start-up"
                _warn(f"[{config.run_name}] {what} evaluation vs {name}: {deals} duplicate deals")
            r = evaluation.evaluate_learner(
                config.game, config.game_options, learner, name, deals, config.eval_seed, workers, progress, batched
            )
            rows.append({"timesteps": timesteps, "wall_s": 0.0, "kind": kind, "opponent": name, **r})
        return rows

    return run


def _resume_hint(run_dir: Path | None, command: str | None) -> str:
    """What ``--resume`` will continue from after an interruption, in one line."""
    from training.checkpoint import latest_checkpoint, step_of

    if run_dir is None:
        return "interrupted before the run started"
    found = latest_checkpoint(run_dir)
    if found is None:
        return "interrupted: there is no checkpoint yet, so nothing to resume; start the run again with --overwrite"
    again = f" ({command} --resume)" if command else ""
    return f"interrupted: --resume will continue from {found} ({step_of(found):,} steps){again}"


def trainer_of(argv: list[str]) -> str:
    """The trainer of the run a command line names: the ``trainer`` key of its ``--config`` (a ``--set trainer=...``
    wins), or of the saved ``config.yaml`` of ``--resume --run-name``; ``sb3`` where there is none to read (this
    script's own checks then say what is missing).

    Raises:
        ConfigError: for an unknown trainer, naming the allowed ones.
    """
    import yaml

    from training.config import TRAINERS

    p = argparse.ArgumentParser(add_help=False)
    for flag in ("--config", "--run-name", "--runs-dir"):
        p.add_argument(flag)
    p.add_argument("--resume", action="store_true")
    p.add_argument("--set", action="append", default=[])
    known, _ = p.parse_known_args(argv)
    path = Path(known.config) if known.config else None
    if path is None and known.resume and known.run_name:
        path = Path(known.runs_dir or "runs") / known.run_name / "config.yaml"
    trainer: Any = "sb3"
    if path is not None and path.is_file():
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError):
            data = None  # the trainer's own loader reports it
        if isinstance(data, dict):
            trainer = data.get("trainer", "sb3")
    for item in known.set:
        key, _, value = item.partition("=")
        if key.strip() == "trainer":
            trainer = value.strip()
    if trainer not in TRAINERS:
        allowed = "; ".join(f"{k}: {v}" for k, v in TRAINERS.items())
        raise ConfigError(f"trainer must be one of {', '.join(TRAINERS)} ({allowed}), got {trainer!r}")
    return str(trainer)


def _flag(argv: list[str], flag: str) -> str | None:
    """The value of ``flag`` in ``argv`` (``--flag value`` or ``--flag=value``), or None."""
    for i, item in enumerate(argv):
        if item == flag and i + 1 < len(argv):
            return argv[i + 1]
        if item.startswith(flag + "="):
            return item.split("=", 1)[1]
    return None


def main(argv: list[str] | None = None) -> int:
    """Run ``train.py``; returns the exit status (0 done, 2 a bad config or command or a checkpoint that could not
    be written, 130 interrupted). A ``ppo`` or ``rllib`` config is handed to its trainer's ``main`` with the same
    command line."""
    given = list(sys.argv[1:] if argv is None else argv)
    if not {"-h", "--help"} & set(given):
        try:
            trainer = trainer_of(given)
        except ConfigError as err:
            print(f"error: {err}", file=sys.stderr)
            return 2
        if trainer == "ppo":
            from training.ppo.trainer import main as ppo_main

            if "--config" not in given:  # --resume --run-name: ppo_vec reads the run's saved config as its --config
                runs = _flag(given, "--runs-dir") or "runs"
                given = ["--config", str(Path(runs) / str(_flag(given, "--run-name")) / "config.yaml"), *given]
            return ppo_main(given, script="train.py")
        if trainer == "rllib":
            from training.rllib.trainer import main as rllib_main

            return rllib_main(given, script="train.py")
    args = parse_args(argv)
    where: dict[str, Any] = {"run_dir": None, "command": None}
    try:
        return _run(args, argv, where)
    except (ConfigError, CheckpointWriteError) as err:
        if args.debug:
            raise
        print(f"error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        if args.debug:
            raise
        print(f"\n{_resume_hint(where['run_dir'], where['command'])}", file=sys.stderr, flush=True)
        return 130


def _run(args: argparse.Namespace, argv: list[str] | None, where: dict[str, Any]) -> int:
    t_start = time.perf_counter()
    config, run_dir, found = resolve_config(args)
    where["run_dir"] = run_dir

    import torch

    from training.checkpoint import restore_model_state, restore_rng
    from training.report import PhaseClock, plot_learning_curve, write_command, write_eval_csv, write_report
    from training.sb3.callbacks import TrainingCallback
    from training.sb3.envs import build_vec_env, probe_encoder
    from whist_env.learning.sb3 import make_ppo, run_ppo

    torch.set_num_threads(config.torch_threads)
    run_dir.mkdir(parents=True, exist_ok=True)
    save_config(config, run_dir / "config.yaml")
    command = write_command(run_dir, "train.py", argv)
    where["command"] = command
    clock = PhaseClock(run_dir / "phases.json", start=t_start)
    encoder = probe_encoder(config)
    venv = build_vec_env(config)
    schedule = None
    if found is not None:
        from sb3_contrib import MaskablePPO

        checkpoint, extra = found
        model = MaskablePPO.load(checkpoint / "model.zip", env=venv, device=config.device, force_reset=False)
        model.tensorboard_log = str(run_dir / "tb")
        for env_index, snapshot in enumerate(extra["env_states"]):
            venv.env_method("set_state", snapshot, indices=[env_index])
        restore_model_state(model, extra["model_state"])
        restore_rng(extra["rng"])
        schedule = extra["schedule"]
        print(f"[{config.run_name}] resuming from {checkpoint.name} ({model.num_timesteps:,} steps)", flush=True)
    else:
        model = make_ppo(
            venv,
            seed=config.seed,
            net_arch=config.net_arch,
            learning_rate=config.learning_rate,
            lr_schedule=config.lr_schedule,
            device=config.device,
            tensorboard_log=str(run_dir / "tb"),
            n_steps=config.n_steps,
            batch_size=config.batch_size,
            n_epochs=config.n_epochs,
            gamma=config.gamma,
            gae_lambda=config.gae_lambda,
            clip_range=config.clip_range,
            ent_coef=config.ent_coef,
            vf_coef=config.vf_coef,
            max_grad_norm=config.max_grad_norm,
        )
        print(f"[{config.run_name}] {config.game}: {config.total_timesteps:,} steps -> {run_dir}", flush=True)
    clock.lap("set-up")
    if found is None and config.pretrain is not None:  # warm start: the cloned weights are what PPO fine-tunes
        from training.sb3.warm_start import warm_start

        warm_start(model, config, encoder, run_dir)
        clock.lap("warm start")
    evaluate = make_evaluate(config, encoder, run_dir)
    callback = TrainingCallback(config, run_dir, evaluate, encoder, schedule)
    callback.attach(model)
    run_ppo(model, config.total_timesteps, callback.tasks(), on_start=callback.on_start, resume=found is not None)

    # The end of training is checkpointed too, so that a run interrupted in the final evaluation resumes there.
    callback.checkpoint()
    model.save(run_dir / "model.zip")
    from whist_env.fingerprint import save_model_metadata  # the game, all its options, the layout: checked on load

    save_model_metadata(run_dir / "model.zip", config.game, config.game_options, canonical_suits=config.canonical_suits)
    venv.close()
    clock.set("PPO", callback.wall_s())
    print(f"[{config.run_name}] final evaluation: {config.final_eval_deals} duplicate deals per opponent", flush=True)
    history = [r for r in callback.history if r["kind"] != "final"]
    finals = evaluate(model, model.num_timesteps, config.final_eval_deals, "final")
    for row in finals:
        row["wall_s"] = round(callback.wall_s(), 1)
    clock.lap("final evaluation")
    history += finals
    write_eval_csv(run_dir / "eval.csv", history)
    plot_learning_curve(run_dir / "learning_curve.png", history, config.run_name)
    write_report(run_dir / "report.md", config.to_dict(), finals, command, clock.summary(), model.num_timesteps)
    print(f"\n{config.run_name}: {config.game}, {model.num_timesteps:,} steps; {clock.summary()}")
    for r in finals:
        print(
            f"  vs {r['opponent']:<10} learner {r['mean']:+.3f} ± {r['ci95']:.3f} per deal, learner − opponent "
            f"{r['diff']:+.3f} ± {r['diff_ci95']:.3f} ({r['deals']} duplicate deals, tables won {r['win_rate']:.1%}, "
            f"illegal actions {r['illegal_actions']})"
        )
    print(f"  report: {run_dir / 'report.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
