"""docs/recipes/torchrl.md: TorchRL's masked PPO on the learner env and PettingZooWrapper, a few thousand steps.

The learner env counts the illegal actions that reached it (it is built with ``illegal_reward``, for the random step
TorchRL's GymWrapper takes while it is built, before the collector starts); the raw AEC env and the arena raise or
count theirs."""

from __future__ import annotations

import warnings

import pytest
from recipe_helpers import load_recipe

pytest.importorskip("torchrl")


@pytest.mark.slow
def test_torchrl_recipe_trains_without_illegal_actions() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = load_recipe("torchrl").main(["--steps", "4096", "--deals", "10"])
    collector_warnings = [str(w.message) for w in caught if "Collector" in str(w.message)]
    assert not collector_warnings, f"the recipe's Collector warns: {collector_warnings}"
    assert out["illegal_actions"] == 0
    assert out["report"].illegal_actions == 0, "the trained policy played an illegal action in the arena"
