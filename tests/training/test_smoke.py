"""A run of a few hundred steps for every config in ``configs/``: everything a run writes is there."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

pytest.importorskip("sb3_contrib")

from train_helpers import CONFIGS, sb3_checkpoint, tiny_args  # noqa: E402

from training.config import load_config  # noqa: E402
from training.train import main  # noqa: E402


@pytest.mark.slow
@pytest.mark.parametrize("config", CONFIGS, ids=[p.stem for p in CONFIGS])
def test_smoke_run_writes_everything(config: Path, tmp_path: Path) -> None:
    assert main(tiny_args(config, tmp_path, "smoke")) == 0
    run = tmp_path / "smoke"
    for name in ("config.yaml", "model.zip", "eval.csv", "learning_curve.png", "report.md"):
        assert (run / name).is_file(), name
    assert list((run / "tb").rglob("events.out.tfevents.*"))
    saved = load_config(run / "config.yaml")
    assert saved.total_timesteps == 256 and saved.game == load_config(config).game
    rows = list(csv.DictReader(open(run / "eval.csv")))
    finals = [r for r in rows if r["kind"] == "final"]
    assert {r["opponent"] for r in finals} == set(saved.eval_opponents)
    assert all(int(r["illegal_actions"]) == 0 for r in rows)
    assert [int(r["timesteps"]) for r in rows if r["kind"] == "periodic"][::2] == [0, 128]
    assert sb3_checkpoint(run)[1]["step"] == 256
    assert "| random |" in (run / "report.md").read_text()


@pytest.mark.slow
def test_smoke_subproc_vec_env_self_play_and_eval_workers(tmp_path: Path) -> None:
    config = Path(CONFIGS[0]).parent / "humbug.yaml"
    args = tiny_args(config, tmp_path, "sp", 512, "--set", "vec_env=subproc", "--set", "self_play=true")
    args += ["--set", "self_play_refresh=128", "--set", "self_play_pool=2", "--set", "eval_workers=2"]
    assert main(args) == 0
    state = sb3_checkpoint(tmp_path / "sp")[1]["state"]
    snapshots = [step for step, _ in state["schedule"]["snapshots"]]
    assert snapshots == [256, 384]  # taken at 128, 256 and 384; the pool keeps the newest two


def test_existing_run_needs_resume_or_overwrite(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "taken").mkdir()
    args = ["--config", str(CONFIGS[0]), "--runs-dir", str(tmp_path), "--run-name", "taken"]
    assert main(args) == 2
    assert "--resume" in capsys.readouterr().err
