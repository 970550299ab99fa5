"""The registry of games: one line per environment id.

``whist_env.make(id, **options)`` builds the wrapped environment; each id is also registered with
PettingZoo's registry as ``whist_env/<name>-v0`` so that ``pettingzoo.make("aec", ...)`` works.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

from whist_env.errors import OptionError

# environment id -> module (each module exposes raw_env and env)
GAMES: dict[str, str] = {
    "classic_whist_v0": "whist_env.classic_whist_v0",
    "humbug_v0": "whist_env.humbug_v0",
    "oh_hell_v0": "whist_env.oh_hell_v0",
    "german_whist_v0": "whist_env.german_whist_v0",
    "humbug_whist_v0": "whist_env.humbug_whist_v0",
}


def game_ids() -> list[str]:
    """Every registered environment id."""
    return list(GAMES)


def env_module(game_id: str) -> ModuleType:
    """The module of an environment id (``classic_whist_v0`` → ``whist_env.classic_whist_v0``)."""
    if game_id not in GAMES:
        raise OptionError(f"unknown game {game_id!r}; available: {', '.join(GAMES)}")
    return importlib.import_module(GAMES[game_id])


def make(game_id: str, raw: bool = False, **options: Any) -> Any:
    """Build an environment by id: ``make("classic_whist_v0", target_points=7)``.

    Args:
        game_id: one of :func:`game_ids`.
        raw: return the raw env (illegal actions raise) instead of the wrapped ``env()``.
        **options: the game's options.
    """
    module = env_module(game_id)
    return module.raw_env(**options) if raw else module.env(**options)


def register_with_pettingzoo() -> None:
    """Register every id with PettingZoo's registry (PettingZoo ≥ 1.26 has one)."""
    try:
        from pettingzoo import aec_registry, register
    except ImportError:  # older PettingZoo without a registry
        return
    for game_id, module in GAMES.items():
        name = "whist_env/" + game_id
        key = name.replace("_v0", "-v0")
        if key not in aec_registry:
            register("aec", name, entry_point=f"{module}:env")
