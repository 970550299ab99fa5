"""training.report's shared pieces: the command on record (``command.txt``) and the report's envs line."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from training.report import PhaseClock, write_command, write_report


def test_the_command_is_written_once_from_the_given_argv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "argv", ["pytest", "--not-this"])
    first = write_command(tmp_path, "rllib/trainer.py", ["--config", "configs/my run.yaml"])
    assert first == "python training/rllib/trainer.py --config 'configs/my run.yaml'"
    assert (tmp_path / "command.txt").read_text() == first + "\n"
    # a resumed run keeps reporting the command that started it
    assert write_command(tmp_path, "rllib/trainer.py", ["--config", "x.yaml", "--resume"]) == first


def test_without_argv_the_command_is_this_process_s(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "argv", ["training/train.py", "--config", "configs/humbug.yaml"])
    assert write_command(tmp_path, "train.py", None) == "python training/train.py --config configs/humbug.yaml"


def _config(**extra: object) -> dict[str, object]:
    return {
        "run_name": "r", "game": "humbug_v0", "game_options": {}, "opponents": {"heuristic": 1.0}, "seed": 3,
        "net_arch": [64], **extra,
    }  # fmt: skip


def test_the_report_names_how_the_envs_ran(tmp_path: Path) -> None:
    path = tmp_path / "report.md"
    write_report(path, _config(trainer="ppo", n_envs=256), [], "python training/ppo/trainer.py", "1 s", 512)
    assert "seed 3, 256 envs (stepped as one batch), net [64]" in path.read_text()
    assert "masked PPO on the batched engine" in path.read_text()
    write_report(path, _config(trainer="rllib"), [], "cmd", "1 s", 512, envs="2 env runners × 8 envs (batched)")
    assert "seed 3, 2 env runners × 8 envs (batched), net [64]" in path.read_text()


def test_the_wall_time_mentions_periodic_evaluations_only_when_there_were_some(tmp_path: Path) -> None:
    """The PPO phase's time includes the evaluations made during training: the report says so only for a run whose
    ``eval.csv`` holds some (a run evaluated at its end only has none to include)."""
    from training.report import write_eval_csv

    path = tmp_path / "report.md"

    def row(kind: str) -> dict[str, object]:
        return {
            "timesteps": 512, "wall_s": 1.0, "kind": kind, "opponent": "heuristic", "mean": 0.1, "ci95": 0.1,
            "diff": 0.2, "diff_ci95": 0.1, "win_rate": 0.5, "illegal_actions": 0, "deals": 10, "unit": "deal",
        }  # fmt: skip

    for rows, said in (([], False), ([row("final")], False), ([row("periodic"), row("final")], True)):
        if rows:
            write_eval_csv(tmp_path / "eval.csv", rows)
        write_report(path, _config(trainer="ppo", n_envs=8), [], "cmd", "PPO 0.5 min", 512)
        assert ("(PPO's includes its periodic evaluations)" in path.read_text()) == said, rows
        assert "- wall time: PPO 0.5 min" in path.read_text()


@pytest.mark.parametrize(
    "damaged", ["", '{"set-up": 1', "[1, 2]", '{"PPO": "long"}', '{"PPO": true}', "[" * 5000, "\xff"]
)
def test_a_damaged_phases_file_loses_the_times_not_the_resume(
    tmp_path: Path, damaged: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run killed while its phases.json was written (by a version that wrote it in place) could not resume: the
    clock's read raised JSONDecodeError."""
    path = tmp_path / "phases.json"
    path.write_text(damaged, encoding="latin1")
    clock = PhaseClock(path, start=0.0)
    assert clock.seconds == {}
    assert f"warning: {path} is damaged" in capsys.readouterr().err
    clock.set("PPO", 12.5)
    assert PhaseClock(path, start=0.0).seconds == {"PPO": 12.5}  # written whole, read back without a word
    assert capsys.readouterr().err == "" and [p.name for p in tmp_path.iterdir()] == ["phases.json"]


def test_the_phases_add_up_over_sessions(tmp_path: Path) -> None:
    path = tmp_path / "phases.json"
    first = PhaseClock(path, start=0.0)
    first.set("set-up", 1.0)
    first.set("warm start", 2.0)
    second = PhaseClock(path, start=0.0)
    second.set("set-up", second.seconds["set-up"] + 0.5)
    assert PhaseClock(path, start=0.0).seconds == {"set-up": 1.5, "warm start": 2.0}
