"""One Ctrl-C (SIGINT to the whole process group, as a terminal sends it) during training or during the final
evaluation: a clean stop, no traceback from the run or its workers, a line naming the checkpoint ``--resume``
continues from, exit status 130."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

pytest.importorskip("sb3_contrib")

from train_helpers import REPO, latest_checkpoint, tiny_args  # noqa: E402

TRAIN = str(REPO / "training" / "train.py")


class Run:
    """``train.py`` in its own process group, its output collected line by line as it comes."""

    def __init__(self, args: list[str]) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, TRAIN, *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
            # as a terminal starts it: a shell's background job (CI's, nohup's) ignores SIGINT, and a Python started
            # with SIGINT ignored keeps ignoring it, so the Ctrl-C under test would never arrive
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        self.out: list[str] = []
        self.err: list[str] = []
        self.readers = [
            threading.Thread(target=self._read, args=(self.proc.stdout, self.out), daemon=True),
            threading.Thread(target=self._read, args=(self.proc.stderr, self.err), daemon=True),
        ]
        for t in self.readers:
            t.start()

    @staticmethod
    def _read(stream: object, into: list[str]) -> None:
        for line in stream:  # type: ignore[attr-defined]
            into.append(line)

    def wait_for(self, condition: object, what: str, limit: float = 180.0) -> None:
        deadline = time.monotonic() + limit
        while not condition():  # type: ignore[operator]
            assert self.proc.poll() is None, f"ended before {what}:\n{''.join(self.out)}{''.join(self.err)}"
            assert time.monotonic() < deadline, f"no {what} within {limit:.0f} s"
            time.sleep(0.05)

    def kill(self) -> None:
        """Stop the run and its workers for good (a failed test must not leave them training)."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=30)

    def ctrl_c(self) -> tuple[int, str, str]:
        os.killpg(self.proc.pid, signal.SIGINT)
        try:
            code = self.proc.wait(timeout=120)
        except subprocess.TimeoutExpired:  # say where the run was: what it printed last
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=30)
            tail = "".join(self.out[-5:]) + "".join(self.err[-20:])
            raise AssertionError(f"the run ignored Ctrl-C for 120 s; its last output:\n{tail}") from None
        for t in self.readers:
            t.join(timeout=10)
        return code, "".join(self.out), "".join(self.err)


@pytest.fixture
def start() -> Iterator[Callable[[list[str]], Run]]:
    """Starts runs; whatever a test leaves running (a failed wait, a run that ignored Ctrl-C) is killed after it."""
    started: list[Run] = []

    def run(args: list[str]) -> Run:
        started.append(Run(args))
        return started[-1]

    yield run
    for r in started:
        r.kill()


def test_a_step_interrupted_between_its_replies_still_closes() -> None:
    """The race behind a Ctrl-C that once hung a run: the interrupt lands after the first worker's reply to a
    ``SubprocVecEnv`` step has been read and before the second's. SB3's own ``close`` would wait for the first reply
    again, for ever; :func:`training.sb3.envs.close_vec_env` ends the workers instead."""
    import numpy as np

    from training.config import load_config
    from training.sb3.envs import build_vec_env, close_vec_env

    config = load_config(REPO / "configs" / "german_whist.yaml", {"n_envs": 2, "batch_size": 64, "vec_env": "subproc"})
    venv = build_vec_env(config)
    venv.reset()
    masks = np.stack(venv.env_method("action_masks"))
    venv.step_async(masks.argmax(axis=1))
    venv.remotes[0].recv()  # the first reply read; the interrupt lands here, before the second is
    assert not venv.remotes[0].poll(1.0)  # nothing more will come from the first worker: SB3's close would block
    closing = threading.Thread(target=close_vec_env, args=(venv,), daemon=True)
    closing.start()
    closing.join(timeout=60)
    assert not closing.is_alive(), "close_vec_env waited on a reply already read"
    assert venv.closed and not any(p.is_alive() for p in venv.processes)


@pytest.mark.slow
def test_ctrl_c_during_training(tmp_path: Path, start: Callable[[list[str]], Run]) -> None:
    args = tiny_args(REPO / "configs" / "german_whist.yaml", tmp_path, "c", 10_000_000, "--set", "vec_env=subproc")
    run = start(args)
    run.wait_for(lambda: latest_checkpoint(tmp_path / "c") is not None, "checkpoint")
    code, out, err = run.ctrl_c()
    assert code == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    hint = [line for line in err.splitlines() if line.startswith("interrupted:")]
    assert len(hint) == 1 and "--resume will continue from" in hint[0]
    assert str(latest_checkpoint(tmp_path / "c")) in hint[0]


@pytest.mark.slow
def test_ctrl_c_before_the_first_checkpoint_says_there_is_none(
    tmp_path: Path, start: Callable[[list[str]], Run]
) -> None:
    args = tiny_args(REPO / "configs" / "german_whist.yaml", tmp_path, "n", 10_000_000)
    run = start([*args, "--set", "checkpoint_freq=100000000"])
    run.wait_for(lambda: any("steps ->" in line for line in run.out), "start of training")
    code, out, err = run.ctrl_c()
    assert code == 130 and "Traceback" not in err, err
    assert "no checkpoint yet" in err


@pytest.mark.slow
def test_ctrl_c_during_the_final_evaluation_with_workers(tmp_path: Path, start: Callable[[list[str]], Run]) -> None:
    args = tiny_args(REPO / "configs" / "german_whist.yaml", tmp_path, "f", 128)
    args += ["--set", "final_eval_deals=20000", "--set", "eval_workers=2"]
    run = start(args)
    # the workers have finished a first chunk of deals: the progress line of the final evaluation
    run.wait_for(lambda: any("/20000 [" in line for line in run.err), "final evaluation progress")  # tqdm: n/total [
    code, out, err = run.ctrl_c()
    assert code == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert "--resume will continue from" in err and "step_000000000128" in err


@pytest.mark.slow
def test_ctrl_c_during_training_on_the_batched_engine(tmp_path: Path, start: Callable[[list[str]], Run]) -> None:
    """The ppo trainer under the same run contract: exit 130, the hint, and the newest checkpoint whole (it loads,
    and ``--resume`` continues from it)."""
    from training.ppo.loop import find_checkpoint

    tiny = ["--set", "n_envs=32", "--set", "n_steps=8", "--set", "batch_size=64", "--set", "n_epochs=1",
            "--set", "net_arch=[32]", "--set", "checkpoint_freq=256", "--set", "final_eval_deals=4"]  # fmt: skip
    args = ["--config", str(REPO / "configs" / "ppo_vec_german_whist.yaml"), "--runs-dir", str(tmp_path),
            "--run-name", "p", "--total-timesteps", "100000000", *tiny]  # fmt: skip
    run = start(args)
    # once an episode has ended (its kernels compiled: a fresh install compiles them then, and numba's compiler may
    # swallow a Ctrl-C that lands inside it) and two checkpoints are written
    run.wait_for(lambda: any("ep_rew_mean" in line for line in run.out), "the first episode's end")
    run.wait_for(lambda: len(list((tmp_path / "p" / "checkpoints").glob("step_*"))) >= 2, "two checkpoints")
    code, out, err = run.ctrl_c()
    assert code == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    found = find_checkpoint(tmp_path / "p")
    assert found is not None and found[1]["num_timesteps"] >= 256
    hint = [line for line in err.splitlines() if line.startswith("interrupted:")]
    assert len(hint) == 1 and f"--resume will continue from {found[0]}" in hint[0], err
    assert "python training/train.py --config" in hint[0]  # the command to give again
