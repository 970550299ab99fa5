"""The registry of games: one line per game, id → its :class:`~whist_env.spec.GameSpec`.

Every layer finds a game's facts here (:func:`get_spec`); a spec's module is imported on first use, so
``import whist_env`` stays cheap. ``whist_env.make(id, **options)`` builds the wrapped environment, and each id
is also registered with PettingZoo's registry as ``whist_env/<name>-v0`` so that ``pettingzoo.make("aec", ...)``
works. A sixth game (or a test's toy game) joins with :func:`register`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from whist_env.errors import OptionError

if TYPE_CHECKING:
    from whist_env.envs.aec import WhistAECEnv
    from whist_env.spec import GameSpec

# environment id -> "module:SPEC" of its spec (imported on first use)
SPECS: dict[str, str] = {
    "classic_whist_v0": "whist_env.games.classic_whist.spec:SPEC",
    "humbug_v0": "whist_env.games.humbug.spec:SPEC",
    "oh_hell_v0": "whist_env.games.oh_hell.spec:SPEC",
    "german_whist_v0": "whist_env.games.german_whist.spec:SPEC",
    "humbug_whist_v0": "whist_env.games.humbug_whist.spec:SPEC",
}

# The built-in games' PettingZoo faces are ``whist_env/<id>.py``; a registered game names its own (or gets a
# generic one built from its spec).
_ENV_ENTRY: dict[str, str | None] = {game_id: f"whist_env.{game_id}:env" for game_id in SPECS}
_LOADED: dict[str, GameSpec[Any, Any]] = {}
_BUILT_IN = frozenset(SPECS)
_RAW_ENVS: dict[str, type[WhistAECEnv]] = {}
# The generic PettingZoo face of a registered game without its own, found by name like the built-in faces: the
# registry sits below the environments (they reach it through the game record's replay), so it never imports them.
_GENERIC_FACE = "whist_env.envs.aec"

# environment id -> module of its PettingZoo face (``from whist_env import classic_whist_v0``); the layers
# below the PettingZoo face read a game through :func:`get_spec`, never through these modules.
GAMES: dict[str, str] = {game_id: f"whist_env.{game_id}" for game_id in SPECS}


def game_ids() -> list[str]:
    """Every registered environment id."""
    return list(SPECS)


def default_game_id() -> str:
    """The game the command-line tools play when none is named: the first registered (classic whist)."""
    return next(iter(SPECS))


def _unknown(game_id: str) -> OptionError:
    return OptionError(f"unknown game {game_id!r}; available: {', '.join(SPECS)}")


def get_spec(game_id: str) -> GameSpec[Any, Any]:
    """The spec of a game (its module is imported on first use).

    Raises:
        OptionError: for an unknown id, naming the known ones.
    """
    spec = _LOADED.get(game_id)
    if spec is not None:
        return spec
    if not isinstance(game_id, str) or game_id not in SPECS:
        raise _unknown(game_id)
    module_name, attr = SPECS[game_id].split(":")
    spec = getattr(importlib.import_module(module_name), attr)
    _LOADED[game_id] = spec
    return spec


def partnership_games() -> list[str]:
    """The registered games played in fixed partnerships (their spec has a ``partner_offset``)."""
    return [game_id for game_id in SPECS if get_spec(game_id).partner_offset is not None]


def register(spec: GameSpec[Any, Any], env_entry_point: str | None = None) -> None:
    """Add a game (a sixth one, or a test's toy game) to the registry and to PettingZoo's.

    Args:
        spec: the game's spec; its ``game_id`` must be new.
        env_entry_point: ``"module:env"`` of its PettingZoo face; None builds one from the spec.

    Raises:
        OptionError: when the id is already registered.
    """
    if spec.game_id in SPECS:
        raise OptionError(f"game {spec.game_id!r} is already registered; pick a new id (known: {', '.join(SPECS)})")
    # The spec object is at hand: it goes straight into the loaded ones (the line only records where from).
    SPECS[spec.game_id] = f"{spec.rules_cls.__module__}:<registered>"
    _LOADED[spec.game_id] = spec
    _ENV_ENTRY[spec.game_id] = env_entry_point
    if env_entry_point is not None:
        GAMES[spec.game_id] = env_entry_point.split(":")[0]
    _register_one_with_pettingzoo(spec.game_id)


def unregister(game_id: str) -> None:
    """Remove a game added with :func:`register` (a test's toy game, a notebook's experiment) from this registry
    and PettingZoo's.

    Raises:
        OptionError: for an id that is not registered, or a built-in game.
    """
    if game_id not in SPECS:
        raise _unknown(game_id)
    if game_id in _BUILT_IN:
        raise OptionError(f"{game_id!r} is a built-in game and cannot be unregistered")
    for table in (SPECS, _ENV_ENTRY, _LOADED, _RAW_ENVS, GAMES):
        table.pop(game_id, None)
    try:
        from pettingzoo import aec_registry
    except ImportError:  # older PettingZoo without a registry
        return
    aec_registry.pop(("whist_env/" + game_id).replace("_v0", "-v0"), None)


def raw_env_class(game_id: str) -> type[WhistAECEnv]:
    """The raw PettingZoo environment class of a game."""
    cls = _RAW_ENVS.get(game_id)
    if cls is not None:
        return cls
    spec = get_spec(game_id)
    entry = _ENV_ENTRY[game_id]
    if entry is not None:
        cls = importlib.import_module(entry.split(":")[0]).raw_env
    else:
        cls = importlib.import_module(_GENERIC_FACE).raw_env_for(spec)
    _RAW_ENVS[game_id] = cls
    return cls


def make(game_id: str, raw: bool = False, **options: Any) -> Any:
    """Build an environment by id: ``make("classic_whist_v0", target_points=7)``.

    Args:
        game_id: one of :func:`game_ids`.
        raw: return the raw env (illegal actions raise) instead of the wrapped ``env()``.
        **options: the game's options.
    """
    cls = raw_env_class(game_id)
    return cls(**options) if raw else cls.wrapped(**options)


def _env_factory(game_id: str) -> Callable[..., Any]:
    def env(**options: Any) -> Any:
        return raw_env_class(game_id).wrapped(**options)

    return env


def _register_one_with_pettingzoo(game_id: str) -> None:
    try:
        from pettingzoo import aec_registry, register
    except ImportError:  # older PettingZoo without a registry
        return
    key = ("whist_env/" + game_id).replace("_v0", "-v0")
    if key not in aec_registry:
        entry = _ENV_ENTRY.get(game_id)
        register("aec", "whist_env/" + game_id, entry_point=entry if entry is not None else _env_factory(game_id))


def register_with_pettingzoo() -> None:
    """Register every id with PettingZoo's registry (PettingZoo ≥ 1.26 has one)."""
    for game_id in SPECS:
        _register_one_with_pettingzoo(game_id)
