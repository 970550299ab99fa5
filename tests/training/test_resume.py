"""Kill a training run with SIGKILL, resume it with ``--resume``, and get exactly the uninterrupted run."""

from __future__ import annotations

import csv
import io
import os
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

from train_helpers import REPO, tiny_args  # noqa: E402

from training.checkpoint import latest_checkpoint, load_extra  # noqa: E402

TRAIN = str(REPO / "training" / "train.py")
TOTAL = 768


def args_for(runs: Path, name: str) -> list[str]:
    extra = ["--set", "self_play=true", "--set", "self_play_refresh=256", "--set", "self_play_pool=2"]
    return tiny_args(REPO / "configs" / "german_whist.yaml", runs, name, TOTAL, *extra)


def tensors(path: Path, member: str) -> dict:
    with zipfile.ZipFile(path) as z:
        return torch.load(io.BytesIO(z.read(member)), weights_only=False)


def eval_rows(run: Path) -> list[dict[str, str]]:
    with open(run / "eval.csv") as f:
        return [{k: v for k, v in row.items() if k != "wall_s"} for row in csv.DictReader(f)]


@pytest.mark.slow
def test_killed_run_resumes_exactly(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    subprocess.run([sys.executable, TRAIN, *args_for(tmp_path, "straight")], check=True, env=env, capture_output=True)

    proc = subprocess.Popen(
        [sys.executable, TRAIN, *args_for(tmp_path, "killed")],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    run = tmp_path / "killed"
    deadline = time.time() + 120
    while time.time() < deadline:
        ckpt = latest_checkpoint(run)
        if ckpt is not None and int(ckpt.name.split("_")[1]) >= 256:
            break
        assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL  # killed mid-run, not finished
    assert not (run / "model.zip").exists()
    killed_at = load_extra(latest_checkpoint(run))["num_timesteps"]  # type: ignore[arg-type]
    assert 256 <= killed_at < TOTAL

    out = subprocess.run(
        [sys.executable, TRAIN, "--resume", "--run-name", "killed", "--runs-dir", str(tmp_path)],
        check=True,
        env=env,
        capture_output=True,
        text=True,
    )
    assert f"resuming from step_{killed_at:012d}" in out.stdout

    straight = tmp_path / "straight"
    for member in ("policy.pth", "policy.optimizer.pth"):
        a, b = tensors(straight / "model.zip", member), tensors(run / "model.zip", member)
        if member == "policy.pth":
            assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
        else:
            for k in a["state"]:
                assert torch.equal(a["state"][k]["exp_avg"], b["state"][k]["exp_avg"])
                assert torch.equal(a["state"][k]["exp_avg_sq"], b["state"][k]["exp_avg_sq"])
                assert a["state"][k]["step"] == b["state"][k]["step"]
    assert eval_rows(run) == eval_rows(straight)  # the history from before the kill is kept, none twice
    extra_a = load_extra(latest_checkpoint(straight))  # type: ignore[arg-type]
    extra_b = load_extra(latest_checkpoint(run))  # type: ignore[arg-type]
    assert extra_a["num_timesteps"] == extra_b["num_timesteps"] == TOTAL
    assert [s for s, _ in extra_b["schedule"]["snapshots"]] == [s for s, _ in extra_a["schedule"]["snapshots"]]
    assert extra_b["env_states"][0]["episode"] == extra_a["env_states"][0]["episode"]
