"""docs/recipes/tianshou.md: Tianshou's multi-agent DQN (masked) on the raw AEC env, trained a few thousand steps.

The recipe's envs raise ``IllegalActionError`` on an illegal action, so a run that finishes sent none to them."""

from __future__ import annotations

import pytest
from recipe_helpers import load_recipe

pytest.importorskip("tianshou")


@pytest.mark.slow
def test_tianshou_recipe_trains_without_illegal_actions() -> None:
    out = load_recipe("tianshou").main(["--steps", "1000", "--deals", "10"])
    assert out["illegal_actions"] == 0
    assert out["report"].illegal_actions == 0, "the trained policy played an illegal action in the arena"
