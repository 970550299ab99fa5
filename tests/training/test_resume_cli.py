"""``--resume`` from the command line: the original command (with its ``--set`` overrides) plus ``--resume``
continues the run; a different config is an error saying what differs; the newest *valid* checkpoint is found
whatever ``checkpoints/latest`` says; without one the run stops, unless ``--overwrite`` asks to start again."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

pytest.importorskip("sb3_contrib")

from train_helpers import REPO, sb3_checkpoint, tiny_args  # noqa: E402

from training.checkpoint import LATEST  # noqa: E402
from training.config import load_config  # noqa: E402
from training.train import main  # noqa: E402

CONFIG = REPO / "configs" / "german_whist.yaml"


def original(runs: Path, total: int = 128) -> list[str]:
    return tiny_args(CONFIG, runs, "r", total)


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished run of 256 steps (checkpoints at 128 and 256)."""
    runs = tmp_path_factory.mktemp("runs")
    assert main(original(runs, 256)) == 0
    return runs


def copy_of(finished: Path, tmp_path: Path) -> Path:
    shutil.copytree(finished, tmp_path / "runs")
    return tmp_path / "runs"


@pytest.mark.slow
def test_the_original_command_with_its_overrides_plus_resume(
    finished: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = copy_of(finished, tmp_path)
    capsys.readouterr()
    assert main([*original(runs, 256), "--resume", "--total-timesteps", "384"]) == 0
    assert "resuming from step_000000000256 (256 steps)" in capsys.readouterr().out
    assert sb3_checkpoint(runs / "r")[1]["step"] == 384


@pytest.mark.slow
def test_a_different_override_says_what_differs(
    finished: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = copy_of(finished, tmp_path)
    capsys.readouterr()
    assert main([*original(runs, 256), "--set", "ent_coef=0.1", "--seed", "3", "--resume"]) == 2
    err = capsys.readouterr().err
    saved = load_config(CONFIG)  # the config file's own values: the run changed neither of them
    assert saved.ent_coef != 0.1 and saved.seed != 3
    assert err.count("\n") == 1, err
    assert f"ent_coef: saved {saved.ent_coef}, now 0.1" in err and f"seed: saved {saved.seed}, now 3" in err, err
    assert "n_envs" not in err  # the overrides the run was started with are no difference
    assert main(["--resume", "--run-name", "r", "--runs-dir", str(runs), "--set", "n_epochs=3"]) == 2
    assert "n_epochs: saved 1, now 3" in capsys.readouterr().err


@pytest.mark.slow
def test_resumes_from_the_newest_valid_checkpoint_whatever_latest_says(
    finished: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = copy_of(finished, tmp_path)
    checkpoints = runs / "r" / "checkpoints"
    (checkpoints / LATEST).unlink()
    newest = checkpoints / "step_000000000256"
    (newest / "arrays.npz").write_bytes((newest / "arrays.npz").read_bytes()[:100])  # truncated
    capsys.readouterr()
    assert main(["--resume", "--run-name", "r", "--runs-dir", str(runs)]) == 0
    out, err = capsys.readouterr()
    assert "resuming from step_000000000128 (128 steps)" in out
    warning = [line for line in err.splitlines() if "damaged" in line]
    assert len(warning) == 1 and str(newest) in warning[0] and "arrays.npz" in warning[0]
    assert sb3_checkpoint(runs / "r")[0] == newest  # trained again from 128 to 256: a valid one now


@pytest.mark.slow
def test_no_valid_checkpoint_stops_unless_overwrite(
    finished: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = copy_of(finished, tmp_path)
    for checkpoint in (runs / "r" / "checkpoints").glob("step_*"):
        (checkpoint / "checkpoint.json").write_bytes(b"")
    capsys.readouterr()
    assert main(["--resume", "--run-name", "r", "--runs-dir", str(runs)]) == 2
    err = capsys.readouterr().err
    assert "no valid checkpoint" in err and "--overwrite" in err
    assert len([line for line in err.splitlines() if line.startswith("warning: skipping damaged")]) == 2
    assert main(["--resume", "--overwrite", "--run-name", "r", "--runs-dir", str(runs)]) == 0
    assert "starting again from zero" in capsys.readouterr().out
    assert sb3_checkpoint(runs / "r")[1]["step"] == 256
    assert (runs / "r" / "command.txt").read_text() == (finished / "r" / "command.txt").read_text()


@pytest.mark.slow
def test_without_total_timesteps_the_run_keeps_its_own_length(
    finished: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = copy_of(finished, tmp_path)
    args = original(runs, 256)
    i = args.index("--total-timesteps")
    del args[i : i + 2]  # the config file says 1,000,000: not a reason to extend the run
    assert main([*args, "--resume"]) == 0
    assert "resuming from step_000000000256" in capsys.readouterr().out
    assert load_config(runs / "r" / "config.yaml").total_timesteps == 256


@pytest.mark.slow
def test_a_checkpoint_of_another_observation_layout_is_refused(
    finished: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The checkpoint's model keeps the layout it was trained on; a resume under another layout (a release that
    changed it) stops with an error naming the layout, not a shape error deep in torch."""
    runs = copy_of(finished, tmp_path)
    checkpoint = sb3_checkpoint(runs / "r")[0]
    header = json.loads((checkpoint / "checkpoint.json").read_text())
    assert header["metadata"]["layout_fingerprint"]
    header["metadata"]["layout_fingerprint"] = "0" * 16
    (checkpoint / "checkpoint.json").write_text(json.dumps(header))
    capsys.readouterr()
    assert main(["--resume", "--run-name", "r", "--runs-dir", str(runs), "--total-timesteps", "384"]) == 2
    err = capsys.readouterr().err
    assert "layout" in err and "0" * 16 in err and "--overwrite" in err
