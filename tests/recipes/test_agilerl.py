"""docs/recipes/agilerl.md: AgileRL's masked DQN in a turn-based loop over the raw AEC env, a few thousand steps.

The recipe's envs raise ``IllegalActionError`` on an illegal action, so a run that finishes sent none to them."""

from __future__ import annotations

import pytest
from recipe_helpers import load_recipe


@pytest.mark.slow
def test_agilerl_recipe_trains_without_illegal_actions() -> None:
    out = load_recipe("agilerl").main(["--steps", "2000", "--deals", "10"])
    assert out["illegal_actions"] == 0
    assert out["report"].illegal_actions == 0, "the trained policy played an illegal action in the arena"
