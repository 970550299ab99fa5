"""docs/recipes/cleanrl.md: a CleanRL-style masked PPO on the batched learner env, trained a few thousand steps.

The learner env raises ``IllegalActionError`` on an illegal action, so a run that finishes sent none."""

from __future__ import annotations

import pytest
from recipe_helpers import load_recipe

pytest.importorskip("torch")
pytest.importorskip("numba")  # the batched engine behind gymnasium.make_vec


@pytest.mark.slow
def test_cleanrl_recipe_trains_without_illegal_actions() -> None:
    out = load_recipe("cleanrl").main(["--steps", "4096", "--deals", "10"])
    assert out["illegal_actions"] == 0
    assert out["report"].illegal_actions == 0, "the trained policy played an illegal action in the arena"
