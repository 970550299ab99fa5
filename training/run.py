"""One run's life, the same for every trainer: the command line, the run directory, resume, exit codes, the report.

``training/train.py`` calls :func:`main`; the config's ``trainer:`` key alone picks the :class:`Trainer` (``sb3``,
``ppo``, ``rllib``: :data:`TRAINERS`, each in its own folder of ``training/``). What every trainer gets from here:

* **flags**: ``--config``, its length (``--total-timesteps``; RLlib's ``--iterations``), ``--seed``, ``--run-name``,
  ``--runs-dir``, ``--set key=value``, ``--resume``, ``--overwrite``, ``--debug``, plus the trainer's own
  (:meth:`Trainer.add_flags`: sb3's ``--n-envs``, ppo's ``--device``, RLlib's ``--num-env-runners`` and
  ``--address``);
* **one rule set** (:func:`resolve`): a fresh run refuses a run directory in the way unless ``--overwrite`` (which
  deletes it). ``--resume`` takes the run's saved config (from ``--config`` or ``--run-name``); the command's config
  may differ from it only in the trainer's :attr:`Trainer.resumable` keys (its length: extend the run); a write the
  run was killed in is removed, never resumed from; the newest checkpoint that loads whole is resumed from, after a
  check that it was made for this game and layout; with none, ``--resume --overwrite`` starts the run again from zero
  (keeping ``command.txt``) and ``--resume`` alone is an error;
* **the run directory**: ``config.yaml``, ``command.txt`` (``python training/train.py ...``), ``phases.json``, then
  what the trainer writes (checkpoints, the policy, ``eval.csv``, ``learning_curve.png``, ``report.md``);
* **exit codes**: 0 done; 2 a bad config or command, or a checkpoint that could not be written (one line on stderr,
  ``--debug`` for the traceback); 130 on Ctrl-C, with the line saying what ``--resume`` continues from; a trainer may
  add its own (:attr:`Trainer.exit_codes`: RLlib's env runners that keep failing end with 1).

A fourth trainer is a folder with a class that implements :class:`Trainer` and its :class:`Session`, a config class
(a dataclass of :mod:`training.config`), and a line in :data:`TRAINERS` and ``training.config.TRAINERS``.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import shutil
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from training.checkpoint import CheckpointWriteError, check_layout, clean_leftovers
from training.config import ConfigError, field_docs, parse_set, save_config
from training.report import PhaseClock, plot_learning_curve, write_command, write_eval_csv, write_report

TRAINERS = {"sb3": "training.sb3.trainer:TRAINER", "ppo": "training.ppo.trainer:TRAINER",
            "rllib": "training.rllib.trainer:TRAINER"}  # fmt: skip
"""Each trainer's :class:`Trainer`, by the config's ``trainer:`` key (imported when picked)."""


class Session(Protocol):
    """A trainer's run in progress, started or resumed by its :class:`Trainer`; :func:`run` drives it."""

    steps: int
    """Environment steps trained so far (what the report counts)."""
    history: list[dict[str, Any]]
    """The evaluations during training, as rows of ``eval.csv``."""
    envs: str | None
    """How the environments ran, in words, for the report (None: the config's ``n_envs``)."""
    final_phase: str | None
    """The phase :meth:`evaluate`'s time goes to (``"final evaluation"``), or None when the final evaluation was
    part of training (RLlib's last iteration)."""

    def warm_start(self) -> None:
        """Clone the config's teacher before training (only on a fresh run whose config has ``pretrain:``)."""

    def train(self) -> float:
        """Train to the config's length, checkpointing on the way; returns the training's wall seconds."""

    def save(self) -> None:
        """Checkpoint the end of training (a run interrupted in its final evaluation resumes there)."""

    def export(self) -> Path:
        """Write the trained policy where users play it from (``policy.npz``; sb3: ``model.zip`` too)."""

    def evaluate(self, policy: Path) -> list[dict[str, Any]]:
        """The final evaluation: a row per opponent (``eval.csv``'s columns, ``kind`` ``final``)."""

    def close(self) -> None:
        """Release what the session holds (environments, writers, Ray)."""


class Trainer(Protocol):
    """What :func:`run` needs of a trainer; one instance per trainer, ``TRAINER`` in its module."""

    name: str
    config_class: type
    length: str
    """The config key that says how long the run is (``total_timesteps``; RLlib's ``iterations``)."""
    resumable: tuple[str, ...]
    """The keys a resumed run's command may change (its length at least)."""
    exit_codes: Mapping[type[BaseException], int]
    """The trainer's own errors that end a run with a status of their own (printed in one line)."""

    def add_flags(self, parser: argparse.ArgumentParser) -> None:
        """Add the trainer's own flags; each sets the config key of its name (``--n-envs``: ``n_envs``)."""

    def load_config(self, path: Path, overrides: dict[str, Any]) -> Any:
        """The config in ``path`` with ``overrides`` (a :class:`~training.config.ConfigError` naming what is wrong)."""

    def find_checkpoint(self, run_dir: Path) -> tuple[Path, Any] | None:
        """The newest checkpoint of the run that loads whole, with what was loaded from it (damaged ones skipped
        with a warning), or None."""

    def metadata(self, found: tuple[Path, Any]) -> Mapping[str, Any] | None:
        """The model metadata stored in a checkpoint (game, options, layout fingerprint) for the layout check."""

    def start(self, config: Any, run_dir: Path, args: argparse.Namespace) -> Session:
        """A fresh session: the environments and a new model."""

    def resume(self, config: Any, run_dir: Path, found: tuple[Path, Any], args: argparse.Namespace) -> Session:
        """A session continued exactly from the checkpoint ``found``."""

    def leave(self, args: argparse.Namespace, status: int) -> None:
        """Called with the exit status before :func:`main` returns (RLlib on a cluster ends the process there)."""


def trainer(name: str) -> Trainer:
    """The :class:`Trainer` of ``name`` (a key of :data:`TRAINERS`)."""
    module, _, attr = TRAINERS[name].partition(":")
    found: Trainer = getattr(importlib.import_module(module), attr)
    return found


# ---------------------------------------------------------------------------------------------- the command line
def trainer_of(argv: list[str]) -> str:
    """The trainer of the run a command line names: the ``trainer`` key of its ``--config`` (a ``--set trainer=...``
    wins), or of the saved ``config.yaml`` of ``--resume --run-name``; ``sb3`` where there is none to read (the
    trainer's own checks then say what is missing).

    Raises:
        ConfigError: for an unknown trainer, naming the allowed ones.
    """
    import yaml

    from training.config import TRAINERS as ABOUT

    p = argparse.ArgumentParser(add_help=False)
    for flag in ("--config", "--run-name", "--runs-dir"):
        p.add_argument(flag)
    p.add_argument("--resume", action="store_true")
    p.add_argument("--set", action="append", default=[])
    known, _ = p.parse_known_args(argv)
    path = Path(known.config) if known.config else None
    if path is None and known.resume and known.run_name:
        path = Path(known.runs_dir or "runs") / known.run_name / "config.yaml"
    name: Any = "sb3"
    if path is not None and path.is_file():
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError, ValueError, RecursionError):  # ValueError: not UTF-8, or a long int
            data = None  # the trainer's own loader reports it
        if isinstance(data, dict):
            name = data.get("trainer", "sb3")
    for item in known.set:
        key, _, value = item.partition("=")
        if key.strip() == "trainer":
            name = value.strip()
    if name not in ABOUT:
        allowed = "; ".join(f"{k}: {v}" for k, v in ABOUT.items())
        raise ConfigError(f"trainer must be one of {', '.join(ABOUT)} ({allowed}), got {name!r}")
    return str(name)


def parse_args(chosen: Trainer, argv: list[str] | None = None) -> argparse.Namespace:
    """The command line of a run of ``chosen``: the common flags and the trainer's own."""
    p = argparse.ArgumentParser(
        prog="training/train.py",
        description=f"Train an agent on a whist_env game with the {chosen.name} trainer (see training/train.py).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Config keys (--set key=value):\n"
        + "\n".join(f"  {k}: {v}" for k, v in field_docs(chosen.config_class).items()),
    )
    p.add_argument("--config", type=Path, help="configs/<name>.yaml (not needed with --resume --run-name)")
    flag = "--" + chosen.length.replace("_", "-")
    p.add_argument(flag, dest=chosen.length, type=int, help=f"override {chosen.length} (with --resume: extend the run)")
    p.add_argument("--seed", type=int, help="override seed")
    p.add_argument("--run-name", help="override run_name (default <config stem>_s<seed>)")
    p.add_argument("--runs-dir", help="override runs_dir (default runs)")
    chosen.add_flags(p)
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


def _overrides(chosen: Trainer, args: argparse.Namespace) -> dict[str, Any]:
    """``--set`` and the flags that set a config key, as one mapping of overrides."""
    overrides: dict[str, Any] = parse_set(args.set)
    keys = {f.name for f in dataclasses.fields(chosen.config_class)}
    for key, value in vars(args).items():
        if key in keys and value is not None:
            overrides[key] = value
    return overrides


def _warn(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------- resolve
def resolve(chosen: Trainer, args: argparse.Namespace) -> tuple[Any, Path, tuple[Path, Any] | None]:
    """The run's config, its directory, and the checkpoint it resumes from (None: from zero), by the one rule set of
    the module docstring.

    Raises:
        ConfigError: a bad config or flag, a run directory in the way, or a ``--resume`` that cannot resume (no
            saved run, a command whose config differs from the saved one, no valid checkpoint).
    """
    overrides = _overrides(chosen, args)
    if args.resume:
        return _resolve_resume(chosen, args, overrides)
    if args.config is None:
        from training.config import missing_config

        raise missing_config(chosen.config_class)
    config = chosen.load_config(args.config, overrides)
    run_dir = Path(config.runs_dir) / config.run_name
    if run_dir.exists():
        if not args.overwrite:
            raise ConfigError(
                f"{run_dir} already exists: pass --resume to continue it, --overwrite to start it again, or "
                f"--run-name to start another"
            )
        shutil.rmtree(run_dir)
    return config, run_dir, None


def _saved_and_requested(chosen: Trainer, args: argparse.Namespace, overrides: dict[str, Any]) -> tuple[Any, Any, Path]:
    """The run's saved config, the one this command asks for, and the run directory."""
    if args.config is None and "run_name" not in overrides:
        raise ConfigError("--resume needs --run-name NAME or the --config (and --seed) the run was started with")
    requested = None
    if args.config is not None:
        requested = chosen.load_config(args.config, overrides)
        run_dir = Path(requested.runs_dir) / requested.run_name
    else:
        run_dir = Path(overrides.get("runs_dir", "runs")) / overrides["run_name"]
    saved_path = run_dir / "config.yaml"
    if not saved_path.exists():
        raise ConfigError(f"--resume: {saved_path} does not exist; start the run without --resume")
    saved = chosen.load_config(saved_path, {})
    if requested is None:  # --run-name alone: the flags and --set overrides apply to the saved config
        requested = chosen.load_config(saved_path, overrides)
    return saved, requested, run_dir


def _resolve_resume(
    chosen: Trainer, args: argparse.Namespace, overrides: dict[str, Any]
) -> tuple[Any, Path, tuple[Path, Any] | None]:
    saved, requested, run_dir = _saved_and_requested(chosen, args, overrides)
    a, b = dataclasses.asdict(saved), dataclasses.asdict(requested)
    free = (*chosen.resumable, "run_name", "runs_dir")  # a moved run directory still resumes
    differs = [f"{k}: saved {a[k]!r}, now {b[k]!r}" for k in a if k not in free and a[k] != b[k]]
    if differs:
        flags = ", ".join("--" + k.replace("_", "-") for k in chosen.resumable)
        raise ConfigError(
            f"--resume: this command's config differs from the run's saved {run_dir / 'config.yaml'} in "
            f"{'; '.join(differs)}. Resume with the command that started the run ({run_dir / 'command.txt'}) plus "
            f"--resume; only {flags} may change"
        )
    config = saved
    for key in chosen.resumable:  # given: they change the run; not given: it keeps its own, not the file's
        if key in overrides:
            setattr(config, key, getattr(requested, key))
    clean_leftovers(run_dir / "checkpoints", warn=_warn)  # a write the run was killed in: never resumed from
    found = chosen.find_checkpoint(run_dir)
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
        return config, run_dir, None
    check_layout(chosen.metadata(found), config.game, config.game_options, found[0])
    return config, run_dir, found


# ---------------------------------------------------------------------------------------------- the run
def main(argv: list[str] | None = None) -> int:
    """Run ``training/train.py``; returns the exit status (see the module docstring)."""
    given = list(sys.argv[1:] if argv is None else argv)
    try:
        chosen = trainer(trainer_of(given))
    except ConfigError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    args = parse_args(chosen, given)
    where: dict[str, Any] = {"run_dir": None}
    known: tuple[type[BaseException], ...] = (ConfigError, CheckpointWriteError, *chosen.exit_codes)
    status = 2
    try:
        status = run(chosen, args, given, where)
    except KeyboardInterrupt:
        if args.debug:
            raise
        print(f"\n{resume_hint(chosen, where['run_dir'])}", file=sys.stderr, flush=True)
        status = 130
    except Exception as err:
        if args.debug or not isinstance(err, known):
            raise
        print(f"error: {err}", file=sys.stderr)
        status = chosen.exit_codes.get(type(err), 2)
    chosen.leave(args, status)
    return status


def resume_hint(chosen: Trainer, run_dir: Path | None) -> str:
    """What ``--resume`` will continue from after an interruption, in one line."""
    if run_dir is None:
        return "interrupted before the run started"
    found = chosen.find_checkpoint(run_dir)
    command = run_dir / "command.txt"
    again = f" ({command.read_text().strip()} --resume)" if command.exists() else ""
    if found is None:
        return "interrupted: there is no checkpoint yet, so nothing to resume; start the run again with --overwrite"
    return f"interrupted: --resume will continue from {found[0]}{again}"


def run(chosen: Trainer, args: argparse.Namespace, argv: list[str], where: dict[str, Any]) -> int:
    """One run: resolve it, start or resume the trainer's session, warm start, train, save, export, evaluate, and
    write ``eval.csv``, the learning curve and ``report.md``."""
    t_start = time.perf_counter()
    config, run_dir, found = resolve(chosen, args)
    where["run_dir"] = run_dir
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
    except OSError as err:  # --runs-dir names a file, or a folder it may not write
        raise ConfigError(f"cannot make the run directory {run_dir}: {err.strerror or err}") from None
    save_config(config, run_dir / "config.yaml")
    command = write_command(run_dir, "train.py", argv)
    if found is None:  # a fresh run (a resumed one keeps the times of its earlier sessions)
        (run_dir / "phases.json").unlink(missing_ok=True)
    clock = PhaseClock(run_dir / "phases.json", start=t_start)
    session = chosen.resume(config, run_dir, found, args) if found is not None else chosen.start(config, run_dir, args)
    try:
        clock.lap("set-up")
        if found is None and getattr(config, "pretrain", None) is not None:  # the cloned weights are what PPO tunes
            session.warm_start()
            clock.lap("warm start")
        clock.set("PPO", session.train())
        session.save()
        policy = session.export()
        finals = session.evaluate(policy)
        if session.final_phase:
            clock.lap(session.final_phase)
        history = [row for row in session.history if row["kind"] != "final"] + finals
        write_eval_csv(run_dir / "eval.csv", history)
        plot_learning_curve(run_dir / "learning_curve.png", history, config.run_name)
        write_report(run_dir / "report.md", dataclasses.asdict(config), finals, command, clock.summary(),
                     session.steps, envs=session.envs)  # fmt: skip
    finally:
        session.close()
    print_summary(config, session.steps, clock.summary(), finals, run_dir)
    return 0


def print_summary(config: Any, steps: int, phases: str, finals: list[dict[str, Any]], run_dir: Path) -> None:
    """The run's last lines: its length and phases, then the final evaluation, a line per opponent."""
    print(f"\n{config.run_name}: {config.game}, {steps:,} steps; {phases}", flush=True)
    for r in finals:
        where = f", {r['engine']} arena" if "engine" in r else ""
        print(
            f"  vs {r['opponent']:<10} learner {r['mean']:+.3f} ± {r['ci95']:.3f} per {r.get('unit', 'deal')}, "
            f"learner − opponent {r['diff']:+.3f} ± {r['diff_ci95']:.3f} ({r['deals']} duplicate deals{where}, "
            f"tables won {r['win_rate']:.1%}, illegal actions {r['illegal_actions']})",
            flush=True,
        )
    print(f"  report: {run_dir / 'report.md'}", flush=True)
