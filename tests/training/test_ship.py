"""``training/ship.py``: a finished run becomes a shipped-style agent: the exported network, its evaluation on
duplicate deals, and a model card naming the command, the data, the table and the layout fingerprint."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from train_helpers import REPO, tiny_args

from training.ship import main as ship
from training.train import main as train
from whist_env import make
from whist_env.agents.pretrained import PretrainedAgent
from whist_env.fingerprint import layout_fingerprint, read_metadata


@pytest.mark.slow
def test_a_finished_run_ships_with_a_card(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = tmp_path / "runs"
    small_warm_start = [
        "--set",
        "pretrain.deals=20",
        "--set",
        "pretrain.relabel_deals=10",
        "--set",
        "pretrain.workers=1",
    ]
    args = tiny_args(REPO / "configs" / "german_whist.yaml", runs, "r", 256, *small_warm_start)
    assert train(args) == 0
    out = tmp_path / "shipped"
    assert ship(["--run", str(runs / "r"), "--out-dir", str(out), "--deals", "6", "--workers", "1"]) == 0
    npz, card = out / "pretrained.npz", (out / "model_card.md").read_text()
    meta = read_metadata(npz)
    assert meta is not None and meta.game_id == "german_whist_v0"
    env = make("german_whist_v0")
    assert meta.layout_fingerprint == layout_fingerprint(env.unwrapped.encoder.layout)
    assert meta.layout_fingerprint in card and "python training/train.py" in card
    for field in ("Training command", "Time on 2 cores", "Data", "Evaluation", "Fingerprint"):  # the template's
        assert f"## {field}" in card
    table = [line for line in card.splitlines() if line.startswith("| `pretrained` |")]
    assert [line.split(" | ")[1] for line in table] == ["random", "heuristic"]
    assert all(line.rstrip(" |").endswith("| 0") for line in table)  # no illegal action
    # --card-only writes the same card from the run's saved evaluation, and refuses another evaluation's settings
    (out / "model_card.md").unlink()
    assert ship(["--run", str(runs / "r"), "--out-dir", str(out), "--deals", "6", "--card-only"]) == 0
    assert (out / "model_card.md").read_text() == card
    assert ship(["--run", str(runs / "r"), "--out-dir", str(out), "--deals", "7", "--card-only"]) == 2
    assert "holds no evaluation of this file" in capsys.readouterr().err
    # the file plays: legal moves in every seat
    agent = PretrainedAgent("german_whist_v0", path=npz)
    env.reset(seed=3)
    rng = np.random.default_rng(0)
    for name in env.agent_iter():
        _, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        view = env.unwrapped.view(name)
        action = agent.act(view, rng)
        assert view.legal >> action & 1
        env.step(action)


def test_a_run_without_a_model_is_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert ship(["--run", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "model.zip does not exist" in err
