"""The distillation experiment of docs/results_training.md (training/experiments/distill_opening.py), on a few deals:
it writes a network the agents play and a dataset a later round aggregates."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from training.experiments.distill_opening import main
from whist_env.agents import make_agent


def test_a_round_writes_a_playable_network_and_its_dataset(tmp_path: Path) -> None:
    main(["--game", "classic_whist_v0", "--deals", "4", "--epochs", "1", "--out", str(tmp_path / "r1")])
    with np.load(tmp_path / "r1.data.npz") as data:
        opening, label, mask = data["opening"], data["label"], data["mask"]
        assert opening.any() and (~opening).any()
        assert mask[np.arange(len(label)), label].all()  # every label is a legal card
    r1 = str(tmp_path / "r1")
    main(["--game", "classic_whist_v0", "--init", r1 + ".npz", "--aggregate", r1 + ".data.npz", "--deals", "2",
          "--epochs", "1", "--seed", "3", "--out", str(tmp_path / "r2")])  # fmt: skip
    agent = make_agent(f"pretrained(path={str(tmp_path / 'r2.npz')!r})", "classic_whist_v0", episode="deal")
    assert agent.policy.canonical_suits and agent.policy.hidden_sizes == [256, 256]
