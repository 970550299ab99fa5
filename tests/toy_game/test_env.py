"""The toy Low Whist through its PettingZoo face and with the agents."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

from whist_env.agents.base import RandomAgent
from whist_env.cards import cards_of
from whist_env.errors import OptionError
from whist_env.search.pimc import PIMCAgent
from whist_env.testing import play_random_episode

from . import env as low_whist_v0
from .heuristic import LowWhistHeuristic
from .rules import LowWhist

# the same two warnings test_conformance.py expects from api_test for a dict observation
EXPECTED = ("Observation is not a NumPy array", "Observation space for each agent probably should be")


def _no_unexpected_warnings(fn: Any, *args: Any, **kwargs: Any) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn(*args, **kwargs)
    unexpected = [str(w.message) for w in caught if not any(e in str(w.message) for e in EXPECTED)]
    unexpected = [m for m in unexpected if "ignoring unknown reset option" not in m]
    assert not unexpected, f"unexpected warnings: {unexpected}"


@pytest.mark.parametrize("options", low_whist_v0.OPTION_GRID)
def test_pettingzoo_api_and_seed_tests(options: dict[str, Any]) -> None:
    _no_unexpected_warnings(api_test, low_whist_v0.env(**options), num_cycles=200)
    _no_unexpected_warnings(api_test, low_whist_v0.raw_env(**options), num_cycles=100)
    _no_unexpected_warnings(seed_test, lambda: low_whist_v0.env(**options), num_cycles=200)


@pytest.mark.parametrize("options", low_whist_v0.OPTION_GRID)
def test_views_are_honest_and_observations_decode_back(options: dict[str, Any]) -> None:
    raw = low_whist_v0.raw_env(**options)
    game, layout = raw.game, raw.encoder.layout
    rng = np.random.default_rng(7)
    for state in play_random_episode(game, rng, check=False):
        for seat in range(game.num_players):
            v = game.view(state, seat)
            assert v.known[seat] == state.hands[seat] == v.hand
            assert all(v.known[o] & ~state.hands[o] == 0 for o in range(game.num_players))
            assert (v.legal != 0) == (state.to_act == seat and not state.done)
            for o in range(game.num_players):
                if o != seat:
                    assert state.hands[o] & ~v.unseen == 0, "another seat's hand shows"
        if state.done:
            break
        view = game.view(state, state.to_act)
        decoded = layout.unpack(raw.encoder.encode(view))
        assert decoded["hand"] == cards_of(view.hand) and decoded["unseen"] == cards_of(view.unseen)
        assert decoded["trump"] == "NT" and decoded["to_act"] == "me"
        assert decoded["tricks_left"] == 13 - sum(view.tricks_won)


def test_state_render_and_illegal_action() -> None:
    env = low_whist_v0.raw_env(render_mode="ansi")
    env.reset(seed=0)
    assert env.state_space.contains(env.state())
    assert "low_whist_v0" in env.render()
    obs = env.observe(env.agent_selection)
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    with pytest.raises(ValueError, match=r"seat \d cannot play .*; legal: "):
        env.step(illegal)


@pytest.mark.parametrize("make_agent", [RandomAgent, LowWhistHeuristic])
def test_agents_play_legal_cards_to_the_end(make_agent: Any, low_whist_spec: Any) -> None:
    game = LowWhist()
    rng = np.random.default_rng(3)
    agent = make_agent()
    state = game.new_episode(rng)
    while not state.done:
        view = game.view(state, state.to_act)
        action = agent.act(view, rng)
        assert view.legal >> action & 1
        game.step(state, action, rng)


def test_pimc_is_refused_in_a_game_the_solver_does_not_cover(low_whist_spec: Any) -> None:
    """PIMC reads the game through the registry (the fixture registers the toy): the toy has no search (its low cards
    win), so PIMC is an error that says so, never its fallback standing in."""
    with pytest.raises(OptionError, match="pimc: low_whist_v0 has no search agent"):
        PIMCAgent("low_whist_v0", samples=2, fallback=LowWhistHeuristic())


def test_heuristic_takes_more_tricks_than_random_players() -> None:
    game = LowWhist()
    rng = np.random.default_rng(9)
    heuristic, random_agent = LowWhistHeuristic(), RandomAgent()
    total = 0
    deals = 40
    for _ in range(deals):
        state = game.new_episode(rng)
        while not state.done:
            agent = heuristic if state.to_act == 0 else random_agent
            game.step(state, agent.act(game.view(state, state.to_act), rng), rng)
        total += state.scores[0]
    assert total / deals > 13 / 4 + 0.5  # well above a random seat's share (3.25)
