"""``make_agent("pimc", ...)`` builds the search agent, which plays legal cards."""

from __future__ import annotations

import numpy as np

from whist_env.agents import make_agent
from whist_env.registry import get_spec
from whist_env.search.pimc import PIMCAgent


def test_make_agent_pimc_by_name_plays_legal_cards() -> None:
    agent = make_agent("pimc:samples=4,max_tricks=3", "german_whist_v0")
    assert isinstance(agent, PIMCAgent)
    game = get_spec("german_whist_v0").make_rules()
    rng = np.random.default_rng(0)
    state = game.new_episode(rng)
    while not state.done:
        view = game.view(state, state.to_act)
        action = agent.act(view, rng)
        assert view.legal >> action & 1
        game.step(state, action, rng)


def test_pimc_is_exported_lazily() -> None:
    import whist_env.agents as agents

    assert agents.PIMCAgent is PIMCAgent
