"""The PIMC agent: legal play everywhere, and nothing read but the view and the generator."""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import pytest

from whist_env.registry import game_ids, get_spec
from whist_env.rules.core import PHASE_PLAY
from whist_env.search.pimc import PIMCAgent
from whist_env.search.sampler import sample_deal
from whist_env.search.solver import solved_games

GAMES: list[tuple[str, dict[str, Any]]] = [
    ("classic_whist_v0", {"episode": "deal"}),
    ("humbug_v0", {"mode": "open_table"}),
    ("humbug_v0", {}),
    ("humbug_whist_v0", {"episode": "deal"}),
    ("german_whist_v0", {}),
    ("german_whist_v0", {"count_all_tricks": True, "phase1_follow_suit": False}),
]


def test_every_game_has_a_search_agent() -> None:
    """``pimc`` plays every registered game: the solver's PIMC where the solver covers the game, the game's own search
    elsewhere (Oh Hell's playouts, ``tests/games/oh_hell/test_oh_hell_search.py``); a game with neither refuses it,
    never a stand-in (``tests/toy_game``: in Oh Hell it once played as the heuristic, 0.000 ± 0.000 against it)."""
    from whist_env.agents import make_agent
    from whist_env.cli.eval import main
    from whist_env.errors import OptionError
    from whist_env.games.oh_hell.search import OhHellSearch

    assert {g for g, _ in GAMES} == set(solved_games()), "a new game with a search: add it to GAMES"
    own = [g for g in game_ids() if get_spec(g).search is None]
    assert own == ["oh_hell_v0"] and all(get_spec(g).searchable for g in game_ids())
    assert isinstance(make_agent("pimc", "oh_hell_v0"), OhHellSearch)
    with pytest.raises(OptionError, match="oh_hell_v0 has a search of its own: make_agent\\('pimc', 'oh_hell_v0'\\)"):
        PIMCAgent("oh_hell_v0")  # the solver's agent, asked for a game its solver does not cover
    with pytest.raises(OptionError, match="bid_samples is for a game with bids.*takes samples, time_budget"):
        make_agent("pimc:bid_samples=5", "german_whist_v0")
    assert isinstance(make_agent("pimc", "german_whist_v0"), PIMCAgent)
    agents = ["pimc:samples=2,bid_samples=2", "heuristic"]
    assert main(["oh_hell_v0", "--agents", *agents, "--deals", "1", "--quiet", "--option", "hand_size=4"]) == 0


def test_act_takes_only_a_view_and_a_generator() -> None:
    assert list(inspect.signature(PIMCAgent.act).parameters) == ["self", "view", "rng"]


@pytest.mark.parametrize(("game_id", "options"), GAMES)
def test_pimc_plays_legal_actions(game_id: str, options: dict[str, Any]) -> None:
    game = get_spec(game_id).make_rules(**options)
    # search every trick (max_tricks large) with few samples, so that each kind of position is met
    agents = [PIMCAgent(game_id, samples=2, max_tricks=5, **options) for _ in range(game.num_players)]
    rng = np.random.default_rng(0)
    for episode in range(2):
        state = game.new_episode(np.random.default_rng(episode))
        while not state.done:
            seat = state.to_act
            view = game.view(state, seat)
            action = agents[seat].act(view, rng)
            assert (view.legal >> action) & 1, f"illegal {action} in {view.summary()}"
            game.step(state, action, rng)


@pytest.mark.parametrize(("game_id", "options"), GAMES)
def test_act_with_totals_is_act_and_its_card_totals(game_id: str, options: dict[str, Any]) -> None:
    """``act_with_totals`` (whist-serve's study panel) plays what ``act`` plays and shows the totals it chose from:
    those of ``card_totals`` with the same generator where it searched, None elsewhere."""
    game = get_spec(game_id).make_rules(**options)
    agent = PIMCAgent(game_id, samples=2, max_tricks=5, **options)
    searched = 0
    state = game.new_episode(np.random.default_rng(3))
    for step in range(200):
        if state.done:
            break
        view = game.view(state, state.to_act)
        action, totals = agent.act_with_totals(view, np.random.default_rng(step))
        assert action == agent.act(view, np.random.default_rng(step))
        if totals is not None:
            searched += 1
            assert totals == agent.card_totals(view, np.random.default_rng(step)) and action in totals
        game.step(state, action, np.random.default_rng(step))
    assert searched > 0


@pytest.mark.parametrize(("game_id", "options"), GAMES)
def test_hidden_cards_do_not_change_the_choice(game_id: str, options: dict[str, Any]) -> None:
    """Two states that differ only in cards the seat cannot see get the same card from the same generator."""
    game = get_spec(game_id).make_rules(**options)
    agent = PIMCAgent(game_id, samples=3, max_tricks=4, **options)
    rng = np.random.default_rng(1)
    checked = 0
    for episode in range(3):
        state = game.new_episode(np.random.default_rng(10 + episode))
        while not state.done:
            seat = state.to_act
            view = game.view(state, seat)
            if state.phase == PHASE_PLAY and game.legal_mask(state).bit_count() > 1:
                deal = sample_deal(view, rng)  # another hidden layout (and stock order) with the same view
                other = state.copy()
                other.hands = list(deal.hands)
                if deal.stock:
                    k = state.trick_number
                    other.stock = (*state.stock[: 2 * k], *deal.stock)  # type: ignore[attr-defined]
                twin = game.view(other, seat)
                assert twin == view
                a = agent.act(view, np.random.default_rng(99))
                b = agent.act(twin, np.random.default_rng(99))
                assert a == b
                checked += 1
            actions = game.legal_actions(state)
            game.step(state, actions[int(rng.integers(len(actions)))], rng)
    assert checked > 10


def test_perfect_information_plays_a_best_card() -> None:
    """With every card known (open-table Humbug) PIMC plays a card of the double-dummy value."""
    from whist_env.search.solver import Solver, position_from_state

    game = get_spec("humbug_v0").make_rules(mode="open_table")
    agent = PIMCAgent("humbug_v0", samples=1, max_tricks=6, mode="open_table")
    solver = Solver(tt_bits=14)
    rng = np.random.default_rng(3)
    state = game.new_episode(rng)
    while not state.done:
        view = game.view(state, state.to_act)
        if 26 - state.trick_number <= 6:
            result = solver.solve(position_from_state(game, state))
            action = agent.act(view, rng)
            assert result.card_values[action] == result.value
        else:
            actions = game.legal_actions(state)
            action = actions[int(rng.integers(len(actions)))]
        game.step(state, action, rng)


def test_fallback_outside_the_search() -> None:
    """Before ``max_tricks`` and outside card play the agent plays as its fallback."""
    game = get_spec("humbug_whist_v0").make_rules(episode="deal")
    agent = PIMCAgent("humbug_whist_v0", samples=2)
    state = game.new_episode(np.random.default_rng(0))
    view = game.view(state, state.to_act)
    assert view.phase == "exchange"
    rng = np.random.default_rng(0)
    assert agent.act(view, rng) == agent.fallback.act(view, np.random.default_rng(0))
    with pytest.raises(ValueError, match="samples"):
        PIMCAgent("humbug_v0", samples=0)


def test_make_pimc_by_name() -> None:
    from whist_env.search.pimc import make_pimc

    agent = make_pimc("pimc:samples=5,max_tricks=6,time_budget=0.5", "classic_whist_v0", episode="deal")
    assert (agent.samples, agent.max_tricks, agent.time_budget) == (5, 6, 0.5)
    assert make_pimc("pimc", "humbug_v0").samples == 20
    with pytest.raises(ValueError, match="known: samples"):
        make_pimc("pimc:k=3", "humbug_v0")
