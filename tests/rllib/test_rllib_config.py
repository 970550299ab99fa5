"""``training/rllib/config.py`` and the CLI's errors: the same conventions as ``training/train.py``; no Ray needed."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from training.config import ConfigError
from training.rllib.config import RLlibConfig, load_rllib_config
from whist_env.registry import game_ids

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "training" / "train.py"
CONFIGS = sorted((REPO / "configs").glob("rllib_*.yaml"))


def _resolve(argv: list[str]) -> tuple[Any, Path, Any]:
    """The run contract's resolution of an rllib command line (no Ray started)."""
    from training import run

    chosen = run.trainer("rllib")
    return run.resolve(chosen, run.parse_args(chosen, argv))


def test_one_rllib_config_per_game_and_all_load() -> None:
    games = set()
    for path in CONFIGS:
        config = load_rllib_config(path)
        assert isinstance(config, RLlibConfig) and config.run_name == f"{path.stem}_s0"
        games.add(config.game)
    assert games == set(game_ids())


def test_unknown_key_names_the_allowed_keys(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("game: humbug_v0\nnum_env_runner: 2\n")
    with pytest.raises(ConfigError) as err:
        load_rllib_config(path)
    assert "'num_env_runner'" in str(err.value)
    for field in dataclasses.fields(RLlibConfig):
        assert field.name in str(err.value)


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ({"opponents": {"heuristc": 1.0}}, "opponents: unknown agent 'heuristc'"),
        ({"opponents": {"main": -1.0}}, "opponents: opponents must map"),
        ({"snapshot_pool": 0}, "'snapshot' has a weight but snapshot_pool is 0"),
        ({"minibatch_size": 9000}, "must not exceed train_batch_size"),
        ({"game_options": {"num_players": 9}}, "game_options:"),
        ({"iterations": 0}, "iterations must be positive"),
        ({"num_env_runners": "two"}, "num_env_runners must be int"),
    ],
)
def test_bad_values_are_named(override: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_rllib_config(REPO / "configs" / "rllib_oh_hell.yaml", override)


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p))
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, env=env, timeout=120, check=False
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--set", "bogus=1"], "error: --set: unknown key(s) 'bogus' in the --set override"),
        (["--set", "opponents={heuristc: 1}"], "error: opponents: unknown agent 'heuristc'"),
        (["--num-env-runners", "-1"], "error: num_env_runners and snapshot_pool must be 0 or more"),
        (["--resume"], "does not exist; start the run without --resume"),
    ],
)
def test_a_config_error_is_one_clear_line(tmp_path: Path, args: list[str], message: str) -> None:
    out = cli("--config", str(REPO / "configs" / "rllib_german_whist.yaml"), "--runs-dir", str(tmp_path), *args)
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and message in out.stderr and "Traceback" not in out.stderr
    assert not list(tmp_path.iterdir())  # nothing is written for a refused run


def test_missing_config_file_is_one_line(tmp_path: Path) -> None:
    out = cli("--config", str(tmp_path / "nope.yaml"))
    assert out.returncode == 2 and out.stderr.startswith("error: config file") and out.stderr.count("\n") == 1


def test_resume_by_run_name_reads_the_saved_config_like_any_config(tmp_path: Path) -> None:
    """``--resume --run-name`` without ``--config``: a damaged saved config.yaml is a ConfigError (it was an
    AttributeError), and a sound one is read with the --set overrides."""
    saved = tmp_path / "r" / "config.yaml"
    saved.parent.mkdir()
    argv = ["--resume", "--run-name", "r", "--runs-dir", str(tmp_path)]
    for text, match in [("", "'game' is required"), ("- a list\n", "mapping"), ("game: [", "not valid YAML")]:
        saved.write_text(text)
        with pytest.raises(ConfigError, match=match):
            _resolve(argv)
    saved.write_text((REPO / "configs" / "rllib_german_whist.yaml").read_text() + "run_name: r\n")
    with pytest.raises(ConfigError, match="unknown key"):
        _resolve([*argv, "--set", "bogus=1"])
    with pytest.raises(ConfigError, match="no valid checkpoint to resume from"):
        _resolve([*argv, "--set", "iterations=7"])  # a resume may extend the run
    with pytest.raises(ConfigError, match="differs from the run's saved"):
        _resolve([*argv, "--set", "eval_deals=7"])  # not change what it is


def test_resume_refuses_a_checkpoint_of_another_observation_layout(tmp_path: Path) -> None:
    """The checkpoint's ``whist_env.json`` keeps the game's metadata; ``--resume`` checks it before Ray starts, and
    refuses a checkpoint written under another observation layout with an error naming it."""
    import json

    from training.rllib import trainer as rllib_selfplay
    from whist_env.fingerprint import ModelMetadata
    from whist_env.learning.rllib.agent import META_FILE

    checkpoint = tmp_path / "r" / "checkpoints" / "iter_000001"
    checkpoint.mkdir(parents=True)
    (checkpoint / rllib_selfplay.LEAGUE_FILE).write_text("{}")
    meta = {
        "game": "german_whist_v0",
        "game_options": {},
        "metadata": ModelMetadata.for_game("german_whist_v0").to_dict(),
    }
    (checkpoint / META_FILE).write_text(json.dumps(meta))
    config = (REPO / "configs" / "rllib_german_whist.yaml").read_text()
    (tmp_path / "r" / "config.yaml").write_text(config + f"run_name: r\nruns_dir: {tmp_path}\n")
    argv = [
        "--config",
        str(REPO / "configs" / "rllib_german_whist.yaml"),
        "--runs-dir",
        str(tmp_path),
        "--run-name",
        "r",
    ]
    assert _resolve([*argv, "--resume"])[1] == tmp_path / "r"  # the same layout: resumes
    meta["metadata"]["layout_fingerprint"] = "0" * 16
    (checkpoint / META_FILE).write_text(json.dumps(meta))
    with pytest.raises(ConfigError, match="layout") as err:
        _resolve([*argv, "--resume"])
    assert "0" * 16 in str(err.value) and "--overwrite" in str(err.value)


def test_resume_overwrite_follows_the_run_contract(tmp_path: Path) -> None:
    """``--resume --overwrite`` on an rllib run (the run contract's rule, every trainer's; no Ray started): without a
    valid checkpoint the run starts again from zero and keeps the command that started it; with one it resumes."""
    import json

    from training.rllib.trainer import LEAGUE_FILE
    from whist_env.fingerprint import ModelMetadata
    from whist_env.learning.rllib.agent import META_FILE

    run = tmp_path / "r"
    run.mkdir()
    config = (REPO / "configs" / "rllib_german_whist.yaml").read_text()
    (run / "config.yaml").write_text(config + f"run_name: r\nruns_dir: {tmp_path}\n")
    (run / "command.txt").write_text("python training/train.py --config configs/rllib_german_whist.yaml\n")
    argv = ["--resume", "--overwrite", "--run-name", "r", "--runs-dir", str(tmp_path)]
    _, run_dir, found = _resolve(argv)
    assert found is None and run_dir == run and sorted(p.name for p in run.iterdir()) == ["command.txt"]
    checkpoint = run / "checkpoints" / "iter_000001"
    checkpoint.mkdir(parents=True)
    (checkpoint / LEAGUE_FILE).write_text("{}")
    metadata = ModelMetadata.for_game("german_whist_v0").to_dict()
    (checkpoint / META_FILE).write_text(json.dumps({"game": "german_whist_v0", "metadata": metadata}))
    (run / "config.yaml").write_text(config + f"run_name: r\nruns_dir: {tmp_path}\n")
    _, _, found = _resolve(argv)
    assert found is not None and found[0] == checkpoint  # a valid checkpoint: --overwrite does not discard it
