"""Agents by name: ``make_agent("heuristic", "humbug_v0")``, ``heuristic_for(game_id, **options)``.

Names follow the agent-spec grammar of :mod:`whist_env.agents.agent_spec` (docs/agents.md): ``random``,
``heuristic``, ``model:<path>`` (a saved MaskablePPO model), ``rllib:<checkpoint dir>`` (an RLlib checkpoint of
``training/rllib/trainer.py``; Ray is imported on first use), ``pimc`` or ``pimc:samples=K,max_tricks=N`` (numba
is imported on first use), ``pretrained`` (the network shipped for the game, played with numpy) or
``pretrained(path=<exported .npz>)``, and nested forms such as ``pimc(samples=20, fallback=pretrained)``.

Each kind of agent is one line of :data:`AGENT_BUILDERS`: the ``"module:function"`` of its builder, next to the
agent, imported when an agent of that kind is first made (so numba, torch and ray stay unimported until then).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from whist_env.agents.agent_spec import AgentSpec, MakeAgent, parse_agent_spec
from whist_env.agents.base import Agent, RandomAgent
from whist_env.agents.heuristic import HeuristicAgent
from whist_env.errors import OptionError
from whist_env.registry import GameRef, spec_of
from whist_env.spec import GameSpec, load

Builder = Callable[[AgentSpec, GameSpec[Any, Any], dict[str, Any], MakeAgent], Agent]
"""``(agent spec, game's spec, game's options, make a nested agent) -> agent``: one per kind of agent."""


@dataclass(frozen=True)
class AgentBuilder:
    """How one kind of agent is made.

    Attributes:
        builder: ``"module:function"`` of its :data:`Builder` (imported on first use).
        spellings: how the lobby and the error messages write the kind (:data:`AGENT_NAMES`).
    """

    builder: str
    spellings: tuple[str, ...]


def random_agent(agent: AgentSpec, game: GameSpec[Any, Any], options: dict[str, Any], make: MakeAgent) -> Agent:
    """``random``: uniform over the legal actions (the game's options are checked as the environment checks them)."""
    _check_options(game, options)
    return RandomAgent()


def heuristic_agent(agent: AgentSpec, game: GameSpec[Any, Any], options: dict[str, Any], make: MakeAgent) -> Agent:
    """``heuristic``: the game's rule-based agent (its spec's ``heuristic``)."""
    return heuristic_for(game, **options)


# agent kind (a name of the grammar's AGENT_KINDS) -> its builder and spellings, in the lobby's order
AGENT_BUILDERS: dict[str, AgentBuilder] = {
    "random": AgentBuilder("whist_env.agents.factory:random_agent", ("random",)),
    "heuristic": AgentBuilder("whist_env.agents.factory:heuristic_agent", ("heuristic",)),
    "model": AgentBuilder("whist_env.agents.model:model_agent", ("model:<path>",)),
    "pimc": AgentBuilder(
        "whist_env.search.pimc:pimc_agent",
        ("pimc[:samples=K,max_tricks=N]", "pimc(samples=K, fallback=<agent spec>)"),
    ),
    "pretrained": AgentBuilder("whist_env.agents.pretrained:pretrained_agent", ("pretrained[(path=<exported .npz>)]",)),
    "rllib": AgentBuilder("whist_env.learning.rllib.agent:rllib_agent", ("rllib:<checkpoint dir>",)),
}

AGENT_NAMES = tuple(spelling for entry in AGENT_BUILDERS.values() for spelling in entry.spellings)


def heuristic_class(game_id: GameRef) -> type[HeuristicAgent]:
    """The rule-based agent class of a game (its spec's ``heuristic``), by id or by spec.

    Raises:
        OptionError: for an unknown game, naming the known ones.
    """
    return spec_of(game_id).heuristic_cls()


def heuristic_for(game_id: GameRef, **options: Any) -> HeuristicAgent:
    """The rule-based agent of a game (by id or by spec) played with ``options`` (validated like the env's)."""
    spec = spec_of(game_id)
    cls = spec.heuristic_cls()
    _check_options(spec, options)
    return cls(**options)


def make_agent(name: str | AgentSpec, game_id: GameRef, **options: Any) -> Agent:
    """An agent by its spec for a game played with ``options``.

    Args:
        name: an agent spec (:mod:`whist_env.agents.agent_spec`, ``docs/agents.md``): ``"random"``,
            ``"heuristic"``, ``"model:<path to a saved MaskablePPO .zip>"``, ``"pimc:samples=10,max_tricks=7"``,
            ``"pimc(samples=20, fallback=model(path=runs/x/model.zip))"``, ``"pretrained"``,
            ``"pretrained(path=policy.npz)"``, or an already parsed
            :class:`~whist_env.agents.agent_spec.AgentSpec`.
        game_id: the environment id, or the game's spec (looked up once, here).
        **options: the game's options.

    Raises:
        OptionError: for a spec the grammar rejects (naming what is allowed), an unknown game, or ``pretrained``
            for a game that ships no weights.
        ModelMismatchError: for a ``pretrained`` network made for other options or another layout.
        ImportError: for ``rllib:<checkpoint dir>`` without Ray installed (naming the extra to install).
    """
    agent = parse_agent_spec(name) if isinstance(name, str) else name
    entry = AGENT_BUILDERS.get(agent.name)
    if entry is None:
        raise OptionError(
            f"agent {agent.name!r} is not available yet (the grammar knows it; no loader is implemented); "
            f"use a saved model instead: 'model:<path to the .zip>'"
        )
    spec = spec_of(game_id)
    build: Builder = load(entry.builder)
    return build(agent, spec, options, lambda nested: make_agent(nested, spec, **options))


def _check_options(game: GameSpec[Any, Any], options: dict[str, Any]) -> None:
    # Build the rules once: a bad option fails here, with the rules' own message.
    game.make_rules(**options)
