"""Agents by name: ``make_agent("heuristic", "humbug_v0")``, ``heuristic_for(game_id, **options)``.

Names: ``"random"``, ``"heuristic"``, ``"model:<path>"`` (a saved MaskablePPO model) and ``"pimc"`` or
``"pimc:samples=K,max_tricks=N"`` (the search agent of ``whist_env.search``; numba is imported on first use).
"""

from __future__ import annotations

from typing import Any

from whist_env.agents.base import Agent, RandomAgent
from whist_env.agents.heuristic import HeuristicAgent
from whist_env.errors import OptionError
from whist_env.registry import get_spec

AGENT_NAMES = ("random", "heuristic", "model:<path>", "pimc[:samples=K,max_tricks=N]")


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


def make_agent(name: str, game_id: str, **options: Any) -> Agent:
    """An agent by name for ``game_id`` played with ``options``.

    Args:
        name: ``"random"``, ``"heuristic"`` or ``"model:<path to a saved MaskablePPO .zip>"``.
        game_id: the environment id.
        **options: the game's options.

    Raises:
        OptionError: for an unknown name, naming the known ones.
    """
    if name == "random":
        _check_options(game_id, options)
        return RandomAgent()
    if name == "heuristic":
        return heuristic_for(game_id, **options)
    if name.startswith("model:"):
        from whist_env.agents.model import ModelAgent

        path = name[len("model:") :]
        if not path:
            raise OptionError("write a model agent as 'model:<path to the saved .zip>'")
        return ModelAgent(path, game_id, **options)
    if name == "pimc" or name.startswith("pimc:"):
        from whist_env.search.pimc import make_pimc

        return make_pimc(name, game_id, **options)
    raise OptionError(f"unknown agent {name!r}; known: {', '.join(AGENT_NAMES)}")


def _check_options(game_id: str, options: dict[str, Any]) -> None:
    # Build the rules once: an unknown game or a bad option fails here, with the rules' own message.
    get_spec(game_id).make_rules(**options)
