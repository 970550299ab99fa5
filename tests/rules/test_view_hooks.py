"""``TrickGame.view`` does the work of the hooks a game leaves as they are inline (``known_out_of_play``,
``turn_up_visible``, ``recall_for``, ``trump_visible``): its plain twin calls every hook. The two give the same view
for every seat at every position of random games, over every game's option grid."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from whist_env.registry import get_spec
from whist_env.testing import case_id, option_cases

PLAIN_FLAGS = ("_plain_out_of_play", "_plain_turn_up", "_plain_recall", "_plain_trump")


@pytest.mark.parametrize(("game_id", "options"), [pytest.param(g, o, id=case_id(g, o)) for g, o in option_cases()])
def test_view_with_hooks_inline_equals_the_view_calling_every_hook(game_id: str, options: dict[str, Any]) -> None:
    spec = get_spec(game_id)
    fast, plain = spec.make_rules(**options), spec.make_rules(**options)
    for flag in PLAIN_FLAGS:
        setattr(plain, flag, False)
    rng = np.random.default_rng(7)
    positions = 0
    for _ in range(4):
        state = fast.new_episode(rng)
        while True:
            for seat in range(state.num_players):
                assert fast.view(state, seat) == plain.view(state, seat), (positions, seat)
            positions += 1
            if state.done:
                break
            actions = fast.legal_actions(state)
            fast.step(state, actions[int(rng.choice(len(actions)))], rng)
    assert positions > 20


def test_a_game_that_overrides_a_hook_is_called() -> None:
    """German Whist overrides turn_up_visible (the stock's face-up card): its flag is off and the hook decides."""
    game = get_spec("german_whist_v0").make_rules()
    assert not game._plain_turn_up and game._plain_trump
    state = game.new_episode(np.random.default_rng(0))
    assert game.view(state, 0).turn_up == game.turn_up_visible(state, 0) >= 0
