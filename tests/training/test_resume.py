"""Kill a training run with SIGKILL (during a checkpoint write and between checkpoints), fill its disk, resume it
with ``--resume`` each time, and get exactly the uninterrupted run (issue #26; the chain: ``fault_helpers``)."""

from __future__ import annotations

import csv
import io
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

from fault_helpers import Runs, fault_chain  # noqa: E402
from train_helpers import REPO, sb3_checkpoint, tiny_args  # noqa: E402

TRAIN = str(REPO / "training" / "train.py")
TOTAL, FREQ = 640, 128  # tiny_args: a rollout, an evaluation and a checkpoint every 128 steps


def command(runs: Path, name: str, *more: str) -> list[str]:
    extra = ["--set", "self_play=true", "--set", "self_play_refresh=256", "--set", "self_play_pool=2"]
    return [sys.executable, TRAIN, *tiny_args(REPO / "configs" / "german_whist.yaml", runs, name, TOTAL, *extra), *more]


def tensors(path: Path, member: str) -> Any:
    with zipfile.ZipFile(path) as z:
        return torch.load(io.BytesIO(z.read(member)), weights_only=False)


def eval_rows(run: Path) -> list[dict[str, str]]:
    with open(run / "eval.csv") as f:
        return [{k: v for k, v in row.items() if k != "wall_s"} for row in csv.DictReader(f)]


@pytest.fixture
def start(tmp_path: Path) -> Iterator[Runs]:
    runs = Runs(tmp_path / "logs")
    yield runs
    runs.kill_all()


@pytest.mark.slow
def test_killed_during_and_between_checkpoint_writes_and_on_a_full_disk_resumes_exactly(
    tmp_path: Path, start: Runs
) -> None:
    """The sb3 path is deterministic (seeded generators, every random state in the checkpoint), so the run that was
    killed twice and stopped by a full disk ends bit for bit as the uninterrupted one."""
    straight = start(command(tmp_path, "straight"))
    assert straight.finish() == 0, straight.err[-3000:]
    where = fault_chain(start, lambda *more: command(tmp_path, "faults", *more), tmp_path / "faults", TOTAL, FREQ)

    a, b = tmp_path / "straight", tmp_path / "faults"
    for member in ("policy.pth", "policy.optimizer.pth"):
        x, y = tensors(a / "model.zip", member), tensors(b / "model.zip", member)
        if member == "policy.pth":
            assert x.keys() == y.keys() and all(torch.equal(x[k], y[k]) for k in x), where
        else:
            for k in x["state"]:
                assert torch.equal(x["state"][k]["exp_avg"], y["state"][k]["exp_avg"]), where
                assert torch.equal(x["state"][k]["exp_avg_sq"], y["state"][k]["exp_avg_sq"]), where
                assert x["state"][k]["step"] == y["state"][k]["step"], where
    assert eval_rows(b) == eval_rows(a), where  # the evaluation history: none lost, none twice, the same numbers
    (_, head_a), (_, head_b) = (sb3_checkpoint(r) for r in (a, b))
    extra_a, extra_b = head_a["state"], head_b["state"]
    assert head_a["step"] == head_b["step"] == TOTAL
    assert [s for s, _ in extra_b["schedule"]["snapshots"]] == [s for s, _ in extra_a["schedule"]["snapshots"]]
    assert extra_b["env_states"][0]["episode"] == extra_a["env_states"][0]["episode"]
