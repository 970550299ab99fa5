"""``train.py``'s errors: one line to stderr, exit status 2, a traceback only with ``--debug``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("yaml")

from train_helpers import REPO  # noqa: E402

from training.config import ConfigError  # noqa: E402
from training.train import main  # noqa: E402

GERMAN = str(REPO / "configs" / "german_whist.yaml")


def one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    return err


def test_missing_config_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--config", str(tmp_path / "nope.yaml"), "--runs-dir", str(tmp_path)]) == 2
    err = one_line_error(capsys)
    assert "nope.yaml does not exist" in err and "configs/*.yaml" not in err
    assert "the configs are: sb3: " in err and "german_whist.yaml" in err
    assert "; ppo: " in err and "ppo_vec_german_whist_warm.yaml" in err and "; rllib: " in err  # every trainer's


def test_no_config_lists_the_configs_and_a_near_name_is_suggested(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(REPO)
    assert main(["--runs-dir", str(tmp_path)]) == 2
    err = one_line_error(capsys)
    assert "--config is required; the configs are: sb3: configs/classic_whist.yaml, configs/german_whist.yaml" in err
    assert main(["--config", "configs/german.yaml", "--runs-dir", str(tmp_path)]) == 2
    assert "(did you mean configs/german_whist.yaml?)" in one_line_error(capsys)
    # a misspelt config of another trainer: train.py cannot read its trainer key, the suggestion spans them all
    assert main(["--config", "configs/ppo_vec_german_whist_wram.yaml", "--runs-dir", str(tmp_path)]) == 2
    assert "(did you mean configs/ppo_vec_german_whist_warm.yaml?)" in one_line_error(capsys)
    assert main(["--config", "configs/rllib_german_whst.yaml", "--runs-dir", str(tmp_path)]) == 2
    assert "(did you mean configs/rllib_german_whist.yaml?)" in one_line_error(capsys)


def test_unknown_set_key_is_named_as_an_override_not_a_yaml_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--config", GERMAN, "--runs-dir", str(tmp_path), "--set", "foo=1"]) == 2
    err = one_line_error(capsys)
    assert "--set" in err and "'foo'" in err and "not a key of" in err and "Allowed keys:" in err


@pytest.mark.parametrize("text", ["[]\n", "- game: german_whist_v0\n", "just a string\n"])
def test_a_yaml_file_that_is_not_a_mapping(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str) -> None:
    path = tmp_path / "list.yaml"
    path.write_text(text)
    assert main(["--config", str(path), "--runs-dir", str(tmp_path)]) == 2
    err = one_line_error(capsys)
    assert "must be a mapping" in err and "'game' is required" not in err


def test_debug_shows_the_exception(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        main(["--config", str(tmp_path / "nope.yaml"), "--debug"])


def test_as_a_script_no_traceback_and_status_2(tmp_path: Path) -> None:
    script = str(REPO / "training" / "train.py")
    out = subprocess.run(
        [sys.executable, script, "--config", str(tmp_path / "nope.yaml")], capture_output=True, text=True
    )
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr
