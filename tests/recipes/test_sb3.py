"""docs/recipes/sb3.md: sb3-contrib's MaskablePPO on the single-agent env, trained a few thousand steps."""

from __future__ import annotations

import pytest
from recipe_helpers import load_recipe

pytest.importorskip("sb3_contrib")


@pytest.mark.slow
def test_sb3_recipe_trains_without_illegal_actions() -> None:
    out = load_recipe("sb3").main(["--steps", "2048", "--deals", "10"])
    assert out["steps"] >= 2048
    assert out["illegal_actions"] == 0, "an illegal action reached the env during training"
    assert out["report"].illegal_actions == 0, "the trained policy played an illegal action in the arena"
