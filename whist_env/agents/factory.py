"""Agents by name: ``make_agent("heuristic", "humbug_v0")``, ``heuristic_for(game_id, **options)``.

Names: ``"random"``, ``"heuristic"``, ``"model:<path>"`` (a saved MaskablePPO model) and ``"pimc"`` or
``"pimc:samples=K,max_tricks=N"`` (the search agent of ``whist_env.search``; numba is imported on first use).
"""

from __future__ import annotations

import importlib
from typing import Any

from whist_env.agents.base import Agent, RandomAgent
from whist_env.agents.heuristic import HeuristicAgent
from whist_env.errors import OptionError

# game id -> "module:class" of its rule-based agent (imported on first use)
HEURISTICS: dict[str, str] = {
    "classic_whist_v0": "whist_env.agents.classic_whist:ClassicWhistHeuristic",
    "humbug_v0": "whist_env.agents.humbug:HumbugHeuristic",
    "german_whist_v0": "whist_env.agents.german_whist:GermanWhistHeuristic",
    "oh_hell_v0": "whist_env.agents.oh_hell:OhHellHeuristic",
    "humbug_whist_v0": "whist_env.agents.humbug_whist:HumbugWhistHeuristic",
}

AGENT_NAMES = ("random", "heuristic", "model:<path>", "pimc[:samples=K,max_tricks=N]")


def heuristic_class(game_id: str) -> type[HeuristicAgent]:
    """The rule-based agent class of a game."""
    if game_id not in HEURISTICS:
        raise OptionError(f"no heuristic agent for game {game_id!r}; available: {', '.join(HEURISTICS)}")
    module_name, cls_name = HEURISTICS[game_id].split(":")
    cls: type[HeuristicAgent] = getattr(importlib.import_module(module_name), cls_name)
    return cls


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
    from whist_env.registry import GAMES, env_module

    if game_id in GAMES:
        env_module(game_id).raw_env.game_cls(**options)
    elif game_id not in HEURISTICS:
        raise OptionError(f"unknown game {game_id!r}; available: {', '.join(GAMES)}")
