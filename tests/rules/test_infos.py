"""``TrickGame.infos``: every seat's ``info``, each seat with dicts of its own."""

from __future__ import annotations

import numpy as np
import pytest

from whist_env.registry import game_ids, get_spec

OPTIONS = {"oh_hell_v0": {"num_players": 5}}


@pytest.mark.parametrize("game_id", game_ids())
def test_infos_equal_each_seats_info_in_own_dicts(game_id: str) -> None:
    game = get_spec(game_id).make_rules(**OPTIONS.get(game_id, {}))
    rng = np.random.default_rng(0)
    for _ in range(3):
        state = game.new_episode(rng)
        while True:
            infos = game.infos(state)
            assert infos == [game.info(state, s) for s in range(state.num_players)]
            assert len({id(i) for i in infos}) == len(infos)
            summaries = [id(i["deal_summary"]) for i in infos if "deal_summary" in i]
            assert len(set(summaries)) == len(summaries)
            if state.done:
                break
            actions = game.legal_actions(state)
            game.step(state, actions[int(rng.integers(len(actions)))], rng)
