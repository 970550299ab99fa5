"""The registry of games: one line per game, id → its :class:`~whist_env.spec.GameSpec`.

Every layer finds a game's facts here (:func:`get_spec`); a spec's module is imported on first use, so
``import whist_env`` stays cheap. The registry only looks games up: it builds no environment and knows nothing of
PettingZoo. Building an environment by id (``whist_env.make``) and registering a game with PettingZoo are the
environment layer's (:mod:`whist_env.envs.registration`); a sixth game (or a test's toy game) joins with
``whist_env.register(spec)``, which adds its spec here (:func:`add_spec`) and its PettingZoo face there.

The id is looked up at the edges (a command line, the server, a training config); the layers below take the spec
itself, or an id that they resolve once at their entry (:func:`spec_of`), and pass the spec down.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Iterable
from typing import Any

from whist_env.errors import OptionError
from whist_env.spec import GameSpec

# environment id -> "module:SPEC" of its spec (imported on first use)
SPECS: dict[str, str] = {
    "classic_whist_v0": "whist_env.games.classic_whist.spec:SPEC",
    "humbug_v0": "whist_env.games.humbug.spec:SPEC",
    "oh_hell_v0": "whist_env.games.oh_hell.spec:SPEC",
    "german_whist_v0": "whist_env.games.german_whist.spec:SPEC",
    "humbug_whist_v0": "whist_env.games.humbug_whist.spec:SPEC",
}

BUILT_IN: tuple[str, ...] = tuple(SPECS)
"""The games of the package, in registry order (a registered game can be removed again; these cannot)."""

_LOADED: dict[str, GameSpec[Any, Any]] = {}

GameRef = str | GameSpec[Any, Any]
"""A game as the layers below the edges take it: its spec, or its id (looked up once, at their entry)."""


def game_ids() -> list[str]:
    """Every registered environment id."""
    return list(SPECS)


def default_game_id() -> str:
    """The game the command-line tools play when none is named: the first registered (classic whist)."""
    return next(iter(SPECS))


def unknown_game(game_id: object, known: Iterable[str] | None = None, listed: str = "available") -> OptionError:
    """The error for an id that is no game of ``known`` (default: every registered one): it suggests the closest id
    (``unknown game 'german_wist_v0' (did you mean 'german_whist_v0'?); available: ...``) and lists them all."""
    ids = list(SPECS if known is None else known)
    close = difflib.get_close_matches(game_id, ids, n=1) if isinstance(game_id, str) else []
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return OptionError(f"unknown game {game_id!r}{hint}; {listed}: {', '.join(ids)}")


def get_spec(game_id: str) -> GameSpec[Any, Any]:
    """The spec of a game (its module is imported on first use).

    Raises:
        OptionError: for an unknown id, naming the known ones.
    """
    spec = _LOADED.get(game_id)
    if spec is not None:
        return spec
    if not isinstance(game_id, str) or game_id not in SPECS:
        raise unknown_game(game_id)
    module_name, attr = SPECS[game_id].split(":")
    spec = getattr(importlib.import_module(module_name), attr)
    _LOADED[game_id] = spec
    return spec


def spec_of(game: GameRef) -> GameSpec[Any, Any]:
    """The spec of ``game``: the spec itself, or the registered spec of an id.

    Raises:
        OptionError: for an unknown id, naming the known ones.
    """
    if isinstance(game, GameSpec):
        return game
    return get_spec(game)


def game_id_of(game: GameRef) -> str:
    """The id of ``game`` (an id or a spec), without looking it up."""
    return game if isinstance(game, str) else game.game_id


def partnership_games() -> list[str]:
    """The registered games played in fixed partnerships (their spec has a ``partner_offset``)."""
    return [game_id for game_id in SPECS if get_spec(game_id).partner_offset is not None]


def add_spec(spec: GameSpec[Any, Any]) -> None:
    """Add a game's spec to the lookup table (``whist_env.register`` does this and registers its PettingZoo face;
    a worker process calls this alone to know a game its parent registered).

    Raises:
        OptionError: when the id is already registered.
    """
    if spec.game_id in SPECS:
        raise OptionError(f"game {spec.game_id!r} is already registered; pick a new id (known: {', '.join(SPECS)})")
    # The spec object is at hand: it goes straight into the loaded ones (the line only records where from).
    SPECS[spec.game_id] = f"{spec.rules_cls.__module__}:<registered>"
    _LOADED[spec.game_id] = spec


def remove_spec(game_id: str) -> None:
    """Remove a game added with :func:`add_spec` from the lookup table.

    Raises:
        OptionError: for an id that is not registered, or a built-in game.
    """
    if game_id not in SPECS:
        raise unknown_game(game_id)
    if game_id in BUILT_IN:
        raise OptionError(f"{game_id!r} is a built-in game and cannot be unregistered")
    SPECS.pop(game_id)
    _LOADED.pop(game_id, None)


def ensure_spec(spec: GameSpec[Any, Any]) -> None:
    """Add ``spec`` when its id is not registered in this process (a spawned worker receiving a game that its parent
    registered); a known id is left as it is."""
    if spec.game_id not in SPECS:
        add_spec(spec)
