"""``training/rllib/trainer.py``'s checkpoints without Ray: written through the one atomic write of
``training.checkpoint`` (a hidden temporary directory moved into place), a write on a full disk is one line with
exit status 2 and leaves the previous checkpoint whole, a resumed run's ``progress.jsonl`` holds each iteration
once, and env runners that keep failing stop the run with exit status 1. (A real run killed during a checkpoint
write and resumed: ``test_rllib_selfplay.py``.)"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from training import run as contract
from training import train
from training.checkpoint import FAULT_ENV, CheckpointWriteError
from training.rllib import trainer as rllib_selfplay
from training.rllib.config import RLlibConfig, load_rllib_config
from whist_env.learning.rllib.agent import checkpoints_of

REPO = Path(__file__).resolve().parents[2]


class StandInAlgorithm:
    """What ``save_checkpoint`` needs of RLlib's ``Algorithm``: ``save_to_path`` (a few files, as RLlib writes)."""

    def __init__(self, full_disk: bool = False) -> None:
        self.full_disk = full_disk

    def save_to_path(self, path: str) -> None:
        root = Path(path)
        (root / "learner_group" / "learner" / "rl_module" / "main").mkdir(parents=True)
        (root / "rllib_checkpoint.json").write_text('{"type": "Algorithm"}')
        if self.full_disk:  # a real ENOSPC from a real write, half-way through the checkpoint
            with open("/dev/full", "wb") as f:
                f.write(b"\x00" * 100_000)
                f.flush()
        (root / "learner_group" / "learner" / "rl_module" / "main" / "module_state.pkl").write_bytes(b"\x80" * 64)


def config(tmp_path: Path) -> RLlibConfig:
    return load_rllib_config(REPO / "configs" / "rllib_german_whist.yaml", {"runs_dir": str(tmp_path)})


def league(iteration: int) -> dict[str, Any]:
    return {"iteration": iteration, "snapshots": 1, "next_slot": 1, "env_steps": 400 * iteration}


def snapshot(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def test_a_checkpoint_is_moved_into_place_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    renames: list[tuple[str, str]] = []
    real = os.replace
    monkeypatch.setattr(os, "replace", lambda a, b: (renames.append((Path(a).name, Path(b).name)), real(a, b))[1])
    cfg = config(tmp_path)
    path = rllib_selfplay.save_checkpoint(StandInAlgorithm(), cfg, tmp_path / "r", league(1))
    assert renames == [(".iter_000001.tmp", "iter_000001")]
    assert {"rllib_checkpoint.json", "whist_env.json", "league.json"} <= {p.name for p in path.iterdir()}
    assert rllib_selfplay.latest_checkpoint(tmp_path / "r") == path


@pytest.mark.parametrize("fault", ["injected", "/dev/full"])
def test_a_full_disk_is_one_line_and_the_previous_checkpoint_stays_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], fault: str
) -> None:
    if fault == "/dev/full" and not os.path.exists("/dev/full"):
        pytest.skip("needs /dev/full (Linux), a device that is always full")
    cfg, run_dir = config(tmp_path), tmp_path / "r"
    previous = rllib_selfplay.save_checkpoint(StandInAlgorithm(), cfg, run_dir, league(1))
    before = snapshot(previous)
    if fault == "injected":
        monkeypatch.setenv(FAULT_ENV, "enospc@iter_000002")
    algo = StandInAlgorithm(full_disk=fault == "/dev/full")
    with pytest.raises(CheckpointWriteError) as caught:
        rllib_selfplay.save_checkpoint(algo, cfg, run_dir, league(2))
    root = run_dir / "checkpoints"
    assert str(caught.value) == (
        f"could not write checkpoint {root / 'iter_000002'}: No space left on device; the previous checkpoint "
        f"{previous} is intact (--resume continues from it)"
    )
    assert sorted(p.name for p in root.iterdir()) == ["iter_000001"] and snapshot(previous) == before
    assert rllib_selfplay.latest_checkpoint(run_dir) == previous and checkpoints_of(run_dir) == [previous]
    assert json.loads((previous / "league.json").read_text()) == league(1)

    # the command line: one line on stderr, exit status 2 (the real training loop, Ray and all, is stood in for)
    def run(*args: Any) -> int:
        rllib_selfplay.save_checkpoint(algo, cfg, run_dir, league(2))
        return 0

    monkeypatch.setattr(contract, "run", run)
    capsys.readouterr()
    assert train.main(["--config", str(REPO / "configs" / "rllib_german_whist.yaml")]) == 2
    err = capsys.readouterr().err
    assert err == f"error: {caught.value}\n"


def test_resuming_drops_the_progress_rows_after_the_checkpoint(tmp_path: Path) -> None:
    """Iterations done after the last checkpoint are done again by the resumed run: their rows go (and a row that the
    kill cut short), so that each iteration has one row."""
    progress = tmp_path / "progress.jsonl"
    rows = [json.dumps({"iteration": i, "env_steps": 400 * i}) + "\n" for i in (1, 2, 3, 4)]
    progress.write_text("".join(rows) + '{"iteration": 5, "env_st')
    rllib_selfplay.forget_progress_after(progress, 2)
    assert progress.read_text() == "".join(rows[:2])
    rllib_selfplay.forget_progress_after(progress, 2)
    assert progress.read_text() == "".join(rows[:2])


class StopRunError(Exception):
    """Ends a stood-in run before its last iteration (which would evaluate and write a checkpoint)."""


class FailingRunnersAlgorithm:
    """An ``Algorithm`` whose env runners sample nothing in the iterations ``empty`` (as RLlib reports an iteration
    whose runners all failed: PPO returns early, no env steps) and 100 steps in the others; iteration ``stop``
    raises :class:`StopRunError`."""

    def __init__(self, empty: set[int], stop: int = 0) -> None:
        self.empty, self.stop, self.calls = empty, stop, 0

    def train(self) -> dict[str, Any]:
        self.calls += 1
        if self.calls == self.stop:
            raise StopRunError
        steps = 0 if self.calls in self.empty else 100
        return {"env_runners": {"num_env_steps_sampled": steps}}


def test_env_runners_that_keep_failing_stop_the_run_with_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A failed iteration now and then is reported and the run goes on (Ray restarts the runner); three in a row
    stop it with one line and exit status 1, instead of running to the end with nothing trained and status 0."""
    cfg = load_rllib_config(REPO / "configs" / "rllib_german_whist.yaml",
                            {"runs_dir": str(tmp_path), "engine": "aec", "iterations": 8, "snapshot_every": 100,
                             "eval_every": 100, "checkpoint_every": 100})  # fmt: skip
    run_dir = tmp_path / "r"
    run_dir.mkdir()
    state = {"iteration": 0, "snapshots": 0, "next_slot": 0, "env_steps": 0}
    flaky = FailingRunnersAlgorithm(empty={2, 4, 5}, stop=7)
    with pytest.raises(StopRunError):  # never three in a row: the run goes on
        rllib_selfplay._train(flaky, cfg, run_dir, state)
    assert state["iteration"] == 6 and state["env_steps"] == 300
    err = capsys.readouterr().err
    assert err.count("sampled no env steps") == 3 and "iteration 4 sampled no env steps" in err
    assert err.count(rllib_selfplay.ray_logs()) == 3, "each line names the folder of Ray's logs"

    state = {"iteration": 0, "snapshots": 0, "next_slot": 0, "env_steps": 0}
    broken = FailingRunnersAlgorithm(empty={3, 4, 5, 6, 7}, stop=8)
    with pytest.raises(rllib_selfplay.EnvRunnerFailureError, match=r"3 iterations in a row \(up to 5\)") as failed:
        rllib_selfplay._train(broken, cfg, run_dir, state)
    assert rllib_selfplay.ray_logs() in str(failed.value)
    assert broken.calls == 5

    # the command line: one line on stderr, exit status 1 (the rest of the run, Ray and all, is stood in for)
    def run(*args: Any) -> int:
        rllib_selfplay._train(FailingRunnersAlgorithm(empty=set(range(1, 9))), cfg, run_dir, dict(state, iteration=0))
        return 0

    monkeypatch.setattr(contract, "run", run)
    capsys.readouterr()
    assert train.main(["--config", str(REPO / "configs" / "rllib_german_whist.yaml")]) == 1
    err = capsys.readouterr().err
    assert err.splitlines()[-1].startswith("error: ") and "the env runners keep failing" in err


def test_the_folder_of_ray_logs_is_found_as_ray_finds_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """The messages of a failing run send the user to Ray's logs: under RAY_TMPDIR, else TMPDIR (Linux), else /tmp."""
    monkeypatch.setenv("RAY_TMPDIR", "/scratch/ray-here")
    monkeypatch.setenv("TMPDIR", "/scratch/tmp")
    assert rllib_selfplay.ray_logs() == "/scratch/ray-here/ray/session_latest/logs/"
    monkeypatch.delenv("RAY_TMPDIR")
    assert rllib_selfplay.ray_logs() == "/scratch/tmp/ray/session_latest/logs/"
    monkeypatch.delenv("TMPDIR")
    assert rllib_selfplay.ray_logs() == "/tmp/ray/session_latest/logs/"
