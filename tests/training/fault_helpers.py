"""Shared pieces of the fault tests (issue #26): a trainer run in a subprocess that a test can kill with SIGKILL,
and the chain of faults that ``train.py`` and ``ppo_vec.py`` both go through before they must end exactly where an
uninterrupted run ends.

The chain, on one run directory:

1. SIGKILL (to the whole process group) *during* the write of a seeded checkpoint: held between its complete
   temporary directory and the move into place by ``WHIST_TEST_CHECKPOINT_FAULT=pause@<name>``;
2. ``--resume``: the half-written checkpoint is removed with a warning and never used, the run continues from the
   newest whole one, and is killed *between* checkpoints, a seeded moment after a seeded checkpoint;
3. ``--resume`` on a "full disk" (``enospc@<name>`` fails the next checkpoint write): one line on stderr, exit 2,
   the previous checkpoint intact;
4. ``--resume`` once more, the fault removed: from that checkpoint to the end.

``WHIST_FAULT_SEED`` picks other kill points (the default is fixed, so that CI is stable).
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from train_helpers import REPO

from training.checkpoint import FAULT_ENV, checkpoint_dirs, step_of

SEED = int(os.environ.get("WHIST_FAULT_SEED", "26"))


class Run:
    """A trainer in its own process group (killed as a whole), its output in files the test reads as they grow."""

    def __init__(self, cmd: list[str], logs: Path, fault: str | None = None) -> None:
        env = {**os.environ, "PYTHONHASHSEED": "0", "PYTHONPATH": str(REPO)}
        env.pop(FAULT_ENV, None)
        if fault is not None:
            env[FAULT_ENV] = fault
        logs.mkdir(parents=True, exist_ok=True)
        self.out_path, self.err_path = logs / "stdout", logs / "stderr"
        with open(self.out_path, "w") as out, open(self.err_path, "w") as err:
            self.proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=env, start_new_session=True)

    @property
    def out(self) -> str:
        return self.out_path.read_text()

    @property
    def err(self) -> str:
        return self.err_path.read_text()

    def wait_for(self, condition: Callable[[], bool], what: str, limit: float = 240.0) -> None:
        deadline = time.monotonic() + limit
        while not condition():
            assert self.proc.poll() is None, f"ended (exit {self.proc.returncode}) before {what}:\n{self.err[-3000:]}"
            assert time.monotonic() < deadline, f"no {what} within {limit:.0f} s"
            time.sleep(0.01)

    def kill(self) -> None:
        """SIGKILL to the run and everything it started (a failed test must not leave them running)."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=60)

    def finish(self, limit: float = 300.0) -> int:
        try:
            return self.proc.wait(timeout=limit)
        finally:
            self.kill()


class Runs:
    """Starts runs, each with its own log directory; :meth:`kill_all` ends whatever a failed test left running."""

    def __init__(self, logs: Path) -> None:
        self.logs = logs
        self.started: list[Run] = []

    def __call__(self, cmd: list[str], fault: str | None = None) -> Run:
        self.started.append(Run(cmd, self.logs / str(len(self.started)), fault))
        return self.started[-1]

    def kill_all(self) -> None:
        for run in self.started:
            run.kill()


def newest(run_dir: Path) -> int:
    """The step of the newest checkpoint in place (every one in place is whole), 0 for none."""
    found = checkpoint_dirs(run_dir)
    return (step_of(found[0]) or 0) if found else 0


def hidden_leftovers(run_dir: Path) -> list[str]:
    """What is in the checkpoints directory under a hidden name (a write's temporary or moved-aside directory)."""
    return sorted(p.name for p in (run_dir / "checkpoints").iterdir() if p.name.startswith("."))


def fault_chain(start: Runs, command: Callable[..., list[str]], run_dir: Path, total: int, freq: int) -> str:
    """Steps 1-4 of the module docstring on the run ``run_dir`` (``command(*more)``: the command that starts it, plus
    ``more``), checkpointed every ``freq`` steps up to ``total``; returns a line saying where it was killed."""
    rng = random.Random(SEED)
    name = "step_{:012d}".format
    root = run_dir / "checkpoints"

    # 1. SIGKILL during the write of checkpoint k1 (the 2nd or 3rd): the newest whole checkpoint is the one before
    k1 = rng.choice([2, 3]) * freq
    run = start(command(), fault=f"pause@{name(k1)}")
    run.wait_for(lambda: "paused before moving" in run.err, f"the write of {name(k1)}")
    run.kill()
    assert run.proc.returncode == -signal.SIGKILL
    assert newest(run_dir) == k1 - freq and hidden_leftovers(run_dir) == [f".{name(k1)}.tmp"]

    # 2. --resume: the half-written one is removed, never used; SIGKILL between checkpoints, a while after s2
    s2 = rng.randrange(k1, total - 2 * freq + 1, freq)
    delay = rng.uniform(0.0, 0.1)
    run = start(command("--resume"))
    run.wait_for(lambda: newest(run_dir) >= s2, f"checkpoint {name(s2)}")
    time.sleep(delay)
    run.kill()
    assert run.proc.returncode == -signal.SIGKILL, "the run ended before it was killed"
    assert f"resuming from {name(k1 - freq)}" in run.out, run.out[-3000:]
    assert f"warning: removed the incomplete checkpoint {root / f'.{name(k1)}.tmp'}" in run.err, run.err[-3000:]
    killed_at = newest(run_dir)
    assert s2 <= killed_at < total

    # 3. --resume on a full disk: the next checkpoint cannot be written; one line, exit 2, the previous one intact
    run = start(command("--resume"), fault=f"enospc@{name(killed_at + freq)}")
    assert run.finish() == 2, run.err[-3000:]
    errors = [line for line in run.err.splitlines() if line.startswith("error:")]
    assert "Traceback" not in run.err and errors == [
        f"error: could not write checkpoint {root / name(killed_at + freq)}: No space left on device; the previous "
        f"checkpoint {root / name(killed_at)} is intact (--resume continues from it)"
    ], run.err[-3000:]
    assert newest(run_dir) == killed_at and hidden_leftovers(run_dir) == []

    # 4. --resume without the fault: from the intact checkpoint to the end
    run = start(command("--resume"))
    assert run.finish() == 0, run.err[-3000:]
    assert f"resuming from {name(killed_at)}" in run.out, run.out[-3000:]
    assert newest(run_dir) == total
    return f"WHIST_FAULT_SEED={SEED}: killed in the write of {k1}, then after {killed_at} ({s2} + {delay:.2f} s)"
