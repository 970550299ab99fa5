"""docs/recipes/torchrl.md: TorchRL's masked PPO on the learner env and PettingZooWrapper, a few thousand steps.

The recipe's envs raise ``IllegalActionError`` on an illegal action, so a run that finishes sent none to them."""

from __future__ import annotations

import pytest
from recipe_helpers import load_recipe

pytest.importorskip("torchrl")


@pytest.mark.slow
def test_torchrl_recipe_trains_without_illegal_actions() -> None:
    out = load_recipe("torchrl").main(["--steps", "4096", "--deals", "10"])
    assert out["illegal_actions"] == 0
    assert out["report"].illegal_actions == 0, "the trained policy played an illegal action in the arena"
