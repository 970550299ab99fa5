"""``TrickGame.info``: each seat's info as numbers with fixed keys, the same for every seat but in the declared keys."""

from __future__ import annotations

import numpy as np
import pytest

from whist_env.registry import game_ids, get_spec

OPTIONS = {"oh_hell_v0": {"num_players": 5}}


@pytest.mark.parametrize("game_id", game_ids())
def test_info_differs_between_seats_only_in_the_declared_keys(game_id: str) -> None:
    """``info_seat_keys``: the environment builds one info a trick and sets only these keys per seat, so every other
    key must be the same for every seat; ``info`` is ``info_now`` and the summary."""
    game = get_spec(game_id).make_rules(**OPTIONS.get(game_id, {}))
    keys = game.info_seat_keys
    assert keys is not None, f"{game_id} declares no info_seat_keys: the env builds an info per seat"
    rng = np.random.default_rng(0)
    differed = set()
    for _ in range(3):
        state = game.new_episode(rng)
        while True:
            infos = [game.info(state, s) for s in range(state.num_players)]
            assert infos[0] == {**game.info_now(state, 0), **game.summary_info(state)}
            for seat, info in enumerate(infos):
                assert game.info_seat(state, seat) == {k: info[k] for k in keys}
            for info in infos[1:]:
                assert {k: v for k, v in info.items() if k not in keys} == {
                    k: v for k, v in infos[0].items() if k not in keys
                }
                differed |= {k for k in keys if info[k] != infos[0][k]}
            if state.done:
                break
            actions = game.legal_actions(state)
            game.step(state, actions[int(rng.choice(len(actions)))], rng)
    assert differed == set(keys), f"declared per seat but never different: {set(keys) - differed}"


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
