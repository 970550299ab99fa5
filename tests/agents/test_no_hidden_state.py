"""Agents decide from the view alone: states that differ only in hidden cards give the same decision."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import numpy as np
import pytest

from whist_env.agents import RandomAgent, heuristic_for
from whist_env.cards import cards_of
from whist_env.registry import game_ids, get_spec
from whist_env.rules.core import State, TrickGame
from whist_env.testing import random_action
from whist_env.view import PlayerView

# options under which some cards are hidden from the seat to act (the defaults, and a few more)
HIDDEN_CASES = [
    ("classic_whist_v0", {"episode": "deal"}),
    ("classic_whist_v0", {"episode": "deal", "include_history": False}),
    ("oh_hell_v0", {"episode": "deal"}),
    ("oh_hell_v0", {"episode": "deal", "num_players": 5, "trump_mode": "drawn_card"}),
    ("german_whist_v0", {}),
    ("german_whist_v0", {"include_history": False, "phase1_follow_suit": False}),
    ("humbug_whist_v0", {"episode": "deal"}),
]


def hidden_places(game: TrickGame, state: State, seat: int, unseen: int) -> list[tuple[str, int]]:
    """Places (``("hand", s)``, ``("stock", 0)``, ...) holding cards ``seat`` cannot see, with those cards."""
    places: list[tuple[str, int]] = []
    for s in range(state.num_players):
        if s != seat and state.hands[s] & unseen:
            places.append(("hand", s))
    if hasattr(state, "stock") and state.trick_number < 13:
        places.append(("stock", 0))
    if hasattr(state, "blinds"):
        places += [("blind", s) for s in (0, 1) if state.blinds[s]]
    if getattr(state, "set_aside", 0):
        places.append(("aside", 0))
    return places


def place_cards(state: Any, place: tuple[str, int], unseen: int) -> int:
    kind, s = place
    if kind == "hand":
        return int(state.hands[s] & unseen)
    if kind == "stock":
        k = state.trick_number
        m = 0
        for c in state.stock[2 * k + 1 :]:  # below the face-up card
            m |= 1 << c
        return m & unseen
    if kind == "blind":
        return int(state.blinds[s] & unseen)
    return int(state.set_aside & unseen)


def swap(state: Any, place: tuple[str, int], old: int, new: int) -> None:
    """Replace card ``old`` by ``new`` in ``place`` (the caller does the reverse elsewhere)."""
    kind, s = place
    bit_old, bit_new = 1 << old, 1 << new
    if kind == "hand":
        state.hands[s] = state.hands[s] & ~bit_old | bit_new
        dealt = list(state.dealt)
        if dealt[s] & bit_old:
            dealt[s] = dealt[s] & ~bit_old | bit_new
            state.dealt = tuple(dealt)
        for name in ("draws",):  # German Whist: a hidden draw of that seat
            if hasattr(state, name) and getattr(state, name)[s] & bit_old:
                getattr(state, name)[s] = getattr(state, name)[s] & ~bit_old | bit_new
    elif kind == "stock":
        state.stock = tuple(new if c == old else c for c in state.stock)
    elif kind == "blind":
        state.blinds[s] = state.blinds[s] & ~bit_old | bit_new
    else:
        state.set_aside = state.set_aside & ~bit_old | bit_new


def perturbed(game: TrickGame, state: State, seat: int, rng: np.random.Generator) -> State | None:
    """A copy of ``state`` with two cards ``seat`` cannot see swapped between two hidden places."""
    view = game.view(state, seat)
    unseen = view.unseen
    for other in range(state.num_players):
        if other != seat:
            unseen &= ~view.known[other]
    places = [p for p in hidden_places(game, state, seat, unseen) if place_cards(state, p, unseen)]
    if len(places) < 2:
        return None
    i, j = rng.choice(len(places), size=2, replace=False)
    a, b = places[int(i)], places[int(j)]
    ca = cards_of(place_cards(state, a, unseen))
    cb = cards_of(place_cards(state, b, unseen))
    x, y = ca[int(rng.integers(len(ca)))], cb[int(rng.integers(len(cb)))]
    new = state.copy()
    swap(new, a, x, y)
    swap(new, b, y, x)
    return new


@pytest.mark.parametrize(("game_id", "options"), [pytest.param(g, o, id=f"{g}-{o}") for g, o in HIDDEN_CASES])
def test_same_view_same_decision(game_id: str, options: dict[str, Any]) -> None:
    assert game_id in game_ids(), f"{game_id} is not registered: the case list names a game that went away"
    game = get_spec(game_id).make_rules(**options)
    rng = np.random.default_rng(7)
    checked = 0
    for _ in range(10):
        agents = [heuristic_for(game_id, **options) for _ in range(game.num_players)]
        state = game.new_episode(rng)
        while not state.done:
            seat = state.to_act
            view = game.view(state, seat)
            other = perturbed(game, state, seat, rng)
            if other is not None:
                other_view = game.view(other, seat)
                assert other_view == view, "the perturbation touched something the seat can see"
                for agent in (agents[seat], RandomAgent()):
                    a1 = copy.deepcopy(agent).act(view, np.random.default_rng(5))
                    a2 = copy.deepcopy(agent).act(other_view, np.random.default_rng(5))
                    assert a1 == a2, f"{type(agent).__name__} decided differently on the same view"
                checked += 1
            action = agents[seat].act(view, rng) if rng.random() < 0.7 else random_action(view.legal, rng)
            game.step(state, action, rng)
    assert checked > 40


def test_a_view_holds_no_state_and_no_hidden_card() -> None:
    game = get_spec("classic_whist_v0").make_rules(episode="deal")
    rng = np.random.default_rng(0)
    state = game.new_episode(rng)
    view = game.view(state, state.to_act)
    for f in dataclasses.fields(PlayerView):
        value = getattr(view, f.name)
        assert not isinstance(value, State)
    for s in range(4):
        if s != view.seat:
            # what the view knows of another hand is at most the turn-up card
            assert (view.known[s] & state.hands[s]) == view.known[s]
            assert view.known[s].bit_count() <= 1
    # the agent acts on the view alone
    action = heuristic_for("classic_whist_v0", episode="deal").act(view, rng)
    assert (view.legal >> action) & 1
