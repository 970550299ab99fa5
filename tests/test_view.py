"""PlayerView and the games' typed extras: the fast constructors set every field, and only fields."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from whist_env import make
from whist_env.registry import game_ids
from whist_env.view import NO_EXTRAS, PlayerView, ViewExtras


@pytest.mark.parametrize("game_id", game_ids())
def test_the_rules_view_sets_every_field(game_id: str) -> None:
    """TrickGame.view sets the fields one by one on a bare instance (for speed): none may be left out."""
    game = make(game_id, raw=True).game
    state = game.new_episode(np.random.default_rng(1))
    names = [f.name for f in dataclasses.fields(PlayerView)]
    for seat in range(state.num_players):
        view = game.view(state, seat)
        values = {name: getattr(view, name) for name in names}  # a field left unset raises AttributeError
        assert view == PlayerView(**values)


def test_player_view_takes_keywords_only() -> None:
    with pytest.raises(TypeError):
        PlayerView("classic_whist_v0", 0)  # type: ignore[misc]


@pytest.mark.parametrize("game_id", game_ids())
def test_extras_equal_the_checked_constructor_along_random_games(game_id: str) -> None:
    game = make(game_id, raw=True).game
    rng = np.random.default_rng(3)
    state = game.new_episode(rng)
    kinds = set()
    while True:
        for seat in range(state.num_players):
            extra = game.view(state, seat).extra
            kinds.add(type(extra))
            # the constructor does not check the names (see ViewExtras): every one set is a field,
            # and every field without a default is set
            names = {f.name for f in dataclasses.fields(extra)}
            required = {f.name for f in dataclasses.fields(extra) if f.default is dataclasses.MISSING}
            assert required <= set(vars(extra)) <= names, (set(vars(extra)), names)
        if state.done:
            break
        actions = game.legal_actions(state)
        game.step(state, actions[int(rng.integers(len(actions)))], rng)
    (kind,) = kinds
    assert kind is not ViewExtras and issubclass(kind, ViewExtras)


def test_extras_are_frozen_and_summary_prints_them() -> None:
    game = make("oh_hell_v0", raw=True).game
    state = game.new_episode(np.random.default_rng(0))
    view = game.view(state, 0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        view.extra.hand_size = 3  # type: ignore[attr-defined, misc]
    summary = view.summary()
    assert "bids: (-1, -1, -1, -1)" in summary and "hand_size:" in summary
    assert "stock_size" not in summary  # a common field at its default is left out


def test_no_extras_by_default() -> None:
    names = [f.name for f in dataclasses.fields(PlayerView) if f.name != "extra"]
    view = PlayerView(**{name: 0 for name in names})  # type: ignore[arg-type]
    assert view.extra is NO_EXTRAS and view.extra.stock_size == 0 and view.extra.items() == []


def test_extras_survive_pickle_and_copy() -> None:
    import copy
    import pickle

    game = make("german_whist_v0", raw=True).game
    state = game.new_episode(np.random.default_rng(1))
    extra = game.view(state, 1).extra
    for twin in (pickle.loads(pickle.dumps(extra)), copy.deepcopy(extra), dataclasses.replace(extra)):
        assert twin == extra and type(twin) is type(extra) and hash(twin) == hash(extra)
