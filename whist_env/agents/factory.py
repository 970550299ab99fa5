"""Agents by name: ``make_agent("heuristic", "humbug_v0")``, ``heuristic_for(game_id, **options)``.

Names follow the agent-spec grammar of :mod:`whist_env.agents.agent_spec` (docs/agents.md): ``random``,
``heuristic``, ``model:<path>`` (a saved MaskablePPO model), ``rllib:<checkpoint dir>`` (an RLlib checkpoint of
``training/rllib_selfplay.py``; Ray is imported on first use), ``pimc`` or ``pimc:samples=K,max_tricks=N`` (numba
is imported on first use), ``pretrained`` (the network shipped for the game, played with numpy) or
``pretrained(path=<exported .npz>)``, and nested forms such as ``pimc(samples=20, fallback=pretrained)``.
"""

from __future__ import annotations

from typing import Any

from whist_env.agents.agent_spec import AgentSpec, parse_agent_spec
from whist_env.agents.base import Agent, RandomAgent
from whist_env.agents.heuristic import HeuristicAgent
from whist_env.errors import OptionError
from whist_env.registry import get_spec

AGENT_NAMES = (
    "random",
    "heuristic",
    "model:<path>",
    "pimc[:samples=K,max_tricks=N]",
    "pimc(samples=K, fallback=<agent spec>)",
    "pretrained[(path=<exported .npz>)]",
    "rllib:<checkpoint dir>",
)


def heuristic_class(game_id: str) -> type[HeuristicAgent]:
    """The rule-based agent class of a game (its spec's ``heuristic``).

    Raises:
        OptionError: for an unknown game, naming the known ones.
    """
    return get_spec(game_id).heuristic_cls()


def heuristic_for(game_id: str, **options: Any) -> HeuristicAgent:
    """The rule-based agent of ``game_id`` for a game with ``options`` (validated like the env's)."""
    cls = heuristic_class(game_id)
    _check_options(game_id, options)
    return cls(**options)


def make_agent(name: str | AgentSpec, game_id: str, **options: Any) -> Agent:
    """An agent by its spec for ``game_id`` played with ``options``.

    Args:
        name: an agent spec (:mod:`whist_env.agents.agent_spec`, ``docs/agents.md``): ``"random"``,
            ``"heuristic"``, ``"model:<path to a saved MaskablePPO .zip>"``, ``"pimc:samples=10,max_tricks=7"``,
            ``"pimc(samples=20, fallback=model(path=runs/x/model.zip))"``, ``"pretrained"``,
            ``"pretrained(path=policy.npz)"``, or an already parsed
            :class:`~whist_env.agents.agent_spec.AgentSpec`.
        game_id: the environment id.
        **options: the game's options.

    Raises:
        OptionError: for a spec the grammar rejects (naming what is allowed), or ``pretrained`` for a game that
            ships no weights.
        ModelMismatchError: for a ``pretrained`` network made for other options or another layout.
        ImportError: for ``rllib:<checkpoint dir>`` without Ray installed (naming the extra to install).
    """
    spec = parse_agent_spec(name) if isinstance(name, str) else name
    if spec.name == "random":
        _check_options(game_id, options)
        return RandomAgent()
    if spec.name == "heuristic":
        return heuristic_for(game_id, **options)
    if spec.name == "model":
        from whist_env.agents.model import ModelAgent

        return ModelAgent(**spec.kwargs, game_id=game_id, **options)  # type: ignore[arg-type]
    if spec.name == "pretrained":
        from whist_env.agents.pretrained import PretrainedAgent

        return PretrainedAgent(game_id, **spec.kwargs, **options)  # type: ignore[arg-type]
    if spec.name == "pimc":
        from whist_env.search.pimc import make_pimc

        # the fallback is built here, so that the search package never imports this factory
        return make_pimc(spec, game_id, make_fallback=lambda fb: make_agent(fb, game_id, **options), **options)
    if spec.name == "rllib":
        from whist_env.rllib.agent import RLlibAgent

        return RLlibAgent(spec.get("path"), game_id, **options)
    raise OptionError(
        f"agent {spec.name!r} is not available yet (the grammar knows it; no loader is implemented); "
        f"use a saved model instead: 'model:<path to the .zip>'"
    )


def _check_options(game_id: str, options: dict[str, Any]) -> None:
    # Build the rules once: an unknown game or a bad option fails here, with the rules' own message.
    get_spec(game_id).make_rules(**options)
