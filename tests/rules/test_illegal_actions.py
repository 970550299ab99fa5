"""The rules refuse every number that is not a legal action with ``IllegalActionError``, in every phase of every game
and option grid, and leave the state as it was."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest

from whist_env.errors import IllegalActionError
from whist_env.registry import get_spec
from whist_env.testing import case_id, option_cases, state_fields


@pytest.mark.parametrize(("game_id", "options"), option_cases(), ids=[case_id(*c) for c in option_cases()])
def test_a_number_that_is_no_action_is_illegal_and_changes_nothing(game_id: str, options: dict[str, Any]) -> None:
    """Found by a hostile-input audit: in Oh Hell's bidding a negative action raised ``ValueError: negative shift
    count`` from the rules (the environments refuse it before the rules see it; the rules' own users did not)."""
    game = get_spec(game_id).make_rules(**options)
    rng = np.random.default_rng(3)
    state = game.new_episode(rng)
    phases = set()
    while not state.done:
        phases.add(game.view(state, state.to_act).phase)
        for action in (-1, -53, game.num_actions, 2**70, -(2**70)):
            before = copy.deepcopy(state)
            with pytest.raises(IllegalActionError, match=f"cannot play action {action} \\(outside 0..") as err:
                game.step(state, action, np.random.default_rng(0))
            assert err.value.action == action and state_fields(state) == state_fields(before)
        game.step(state, int(rng.choice(game.view(state, state.to_act).legal_actions())), rng)
    assert phases
