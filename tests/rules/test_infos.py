"""``TrickGame.infos``: every seat's ``info``, each seat with a dict of its own, as numbers with fixed keys."""

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
            if state.done:
                break
            actions = game.legal_actions(state)
            game.step(state, actions[int(rng.choice(len(actions)))], rng)


@pytest.mark.parametrize("game_id", game_ids())
def test_info_is_numbers_with_the_same_keys_and_lengths_all_episode(game_id: str) -> None:
    """Every value an int or a tuple of ints whose length never changes; the deal summary always there, with
    ``last_deal`` -1 until the first deal ends and then the index of the deal it describes."""
    game = get_spec(game_id).make_rules(**OPTIONS.get(game_id, {}))
    rng = np.random.default_rng(1)
    first = None
    for _ in range(2):
        state = game.new_episode(rng)
        while True:
            info = game.info(state, 0)
            shape = {k: len(v) if isinstance(v, tuple) else None for k, v in info.items()}
            first = first or shape
            assert shape == first
            for key, value in info.items():
                assert all(type(v) is int for v in (value if isinstance(value, tuple) else (value,))), (key, value)
            assert game.phase_names[info["phase"]] == game.view(state, 0).phase
            if state.deal_summary:
                assert info["last_deal"] in (state.deal_index, state.deal_index - 1)
            else:
                assert info["last_deal"] == -1
            if state.done:
                assert info["last_deal"] == state.deal_index
                break
            actions = game.legal_actions(state)
            game.step(state, actions[int(rng.choice(len(actions)))], rng)
