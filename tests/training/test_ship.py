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
    assert str(tmp_path) not in card  # the machine's runs folder became the default runs/ (portable_command)
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
    assert err.count("\n") == 1 and "config.yaml does not exist" in err
    for trainer, wanted in (("sb3", "with model.zip"), ("ppo", "with policy.npz and report.md")):
        (tmp_path / "config.yaml").write_text(f"trainer: {trainer}\ngame: german_whist_v0\n")
        assert ship(["--run", str(tmp_path)]) == 2
        err = capsys.readouterr().err
        assert (
            err.count("\n") == 1
            and f"holds no final network: --run must name a finished training run ({wanted})" in err
        )
    (tmp_path / "config.yaml").write_text("trainer: rllib\ngame: german_whist_v0\n")
    assert ship(["--run", str(tmp_path)]) == 2
    assert "trained by trainer 'rllib'; ship.py ships the runs of trainers sb3 and ppo" in capsys.readouterr().err
    for flag, value in (("--pimc-deals", "-1"), ("--deals", "0"), ("--seed", "-1"), ("--workers", "0")):
        assert ship(["--run", str(tmp_path), flag, value]) == 2  # before the run is read (was: after its evaluation)
        assert f"{flag} must be at least" in capsys.readouterr().err


@pytest.mark.slow
def test_a_fast_path_run_ships_its_policy(tmp_path: Path) -> None:
    """A ``trainer: ppo`` run ships the ``policy.npz`` it exported at its end: the same weights, a card naming the
    fast path's command, network and every phase's time."""
    from whist_env.agents.pretrained import load_policy

    config = REPO / "configs" / "ppo_vec_german_whist_warm.yaml"
    small = ["n_envs=8", "n_steps=16", "batch_size=64", "net_arch=[32]", "final_eval_deals=4", "eval_freq=0"]
    small += ["pretrain.deals=20", "pretrain.relabel_deals=10", "pretrain.epochs=1"]
    args = ["--config", str(config), "--runs-dir", str(tmp_path / "runs"), "--run-name", "p"]
    args += ["--total-timesteps", "256"] + [a for s in small for a in ("--set", s)]
    assert train(args) == 0
    run, out = tmp_path / "runs" / "p", tmp_path / "shipped"
    assert ship(["--run", str(run), "--out-dir", str(out), "--deals", "4", "--workers", "1"]) == 0
    shipped, trained = (
        load_policy(out / "pretrained.npz", "german_whist_v0"),
        load_policy(run / "policy.npz", "german_whist_v0"),
    )
    assert all(np.array_equal(a, b) for a, b in zip(shipped.arrays().values(), trained.arrays().values(), strict=True))
    meta = read_metadata(out / "pretrained.npz")
    assert meta is not None and meta.canonical_suits  # the recipe's learner sees trump as spades: so must the agent
    assert meta == read_metadata(run / "policy.npz")
    card = (out / "model_card.md").read_text()
    assert "| Canonical suits | True |" in card
    assert "python training/train.py --config" in card and "the fast path's" in card  # the command that was run
    assert "set-up " in card and "warm start " in card and "PPO " in card
    assert "periodic evaluations" not in card  # this run evaluated at its end only


def test_a_cards_command_names_no_folder_of_the_machine_it_ran_on(tmp_path: Path) -> None:
    from training.ship import portable_command

    run = tmp_path / "somewhere" / "r"
    run.mkdir(parents=True)
    assert portable_command(run) == "(not recorded)"
    (run / "command.txt").write_text(
        f"python training/train.py --config configs/x.yaml --run-name r --runs-dir {run.parent} --resume\n"
        f"python training/ship.py --run {run}\n"
    )
    assert portable_command(run) == (
        "python training/train.py --config configs/x.yaml --run-name r --resume\npython training/ship.py --run runs/r"
    )


def test_the_shipped_cards_name_no_folder_of_a_machine() -> None:
    games = REPO / "whist_env" / "games"
    cards = sorted(games.glob("*/model_card.md"))
    assert len(cards) == len(list(games.glob("*/pretrained.npz"))) == 5, cards  # every shipped network's card is read
    for card in cards:
        text = card.read_text()
        assert "/work/" not in text and "--runs-dir /" not in text, card
