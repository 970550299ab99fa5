"""Every registered game's PettingZoo face: ``make(id, **options)``, and the games in PettingZoo's and Gymnasium's
registries.

:mod:`whist_env.registry` looks games up (id → :class:`~whist_env.spec.GameSpec`); this module, one floor up with
the environments, builds them. ``whist_env.make(id, **options)`` builds the wrapped environment. When ``whist_env``
is imported, each game joins two more registries under one id, ``whist_env/<name>-v<N>`` (:func:`gymnasium_id`:
``german_whist_v0`` → ``whist_env/german_whist-v0``):

* PettingZoo's (``pettingzoo.make("aec", "whist_env/german_whist-v0")``, which also reads ``..._v0``): the AEC env;
* Gymnasium's: ``gymnasium.make(id, **kwargs)`` builds the single-agent env
  (:func:`~whist_env.envs.single_agent.make_single_agent`, ``kwargs`` as it takes them), and
  ``gymnasium.make_vec(id, num_envs=...)`` the batched learner env
  (:func:`~whist_env.vector.learner.make_learner_env`, next-step autoreset by default) for a game with a batched
  engine, or with ``vectorization_mode="sync"`` / ``"async"`` Gymnasium's vector env of single-agent envs.

A sixth game, or a test's toy game, joins every registry with :func:`register` (``whist_env.register``) and leaves
them with :func:`unregister`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import gymnasium

from whist_env import registry
from whist_env.envs import hooks
from whist_env.envs.aec import WhistAECEnv, raw_env_for
from whist_env.envs.hooks import gymnasium_id
from whist_env.spec import GameSpec

# The built-in games' PettingZoo faces are ``whist_env/<id>.py``; a registered game names its own entry point (or
# None: the generic face built from its spec, :func:`~whist_env.envs.aec.raw_env_for`). A game known to the
# registry but missing here (added with ``registry.add_spec`` alone, as a worker process does) gets the generic face.
_ENV_ENTRY: dict[str, str | None] = {game_id: hooks.face_entry(game_id) for game_id in registry.BUILT_IN}
_RAW_ENVS: dict[str, type[WhistAECEnv]] = {}

# environment id -> module of its PettingZoo face (``from whist_env import classic_whist_v0``); the layers
# below the PettingZoo face read a game through its spec, never through these modules.
GAMES: dict[str, str] = {game_id: f"whist_env.{game_id}" for game_id in registry.BUILT_IN}


def _pettingzoo_key(game_id: str) -> str:
    return gymnasium_id(game_id)


def register(spec: GameSpec[Any, Any], env_entry_point: str | None = None) -> None:
    """Add a game (a sixth one, or a test's toy game) to the registry, PettingZoo's and Gymnasium's.

    Args:
        spec: the game's spec; its ``game_id`` must be new.
        env_entry_point: ``"module:env"`` of its PettingZoo face; None builds one from the spec.

    Raises:
        OptionError: when the id is already registered.
    """
    registry.add_spec(spec)
    _ENV_ENTRY[spec.game_id] = env_entry_point
    if env_entry_point is not None:
        GAMES[spec.game_id] = env_entry_point.split(":")[0]
    _register_one_with_pettingzoo(spec.game_id)
    _register_one_with_gymnasium(spec.game_id)


def unregister(game_id: str) -> None:
    """Remove a game added with :func:`register` (a test's toy game, a notebook's experiment) from the registry,
    PettingZoo's and Gymnasium's.

    Raises:
        OptionError: for an id that is not registered, or a built-in game.
    """
    registry.remove_spec(game_id)
    for table in (_ENV_ENTRY, _RAW_ENVS, GAMES):
        table.pop(game_id, None)
    gymnasium.registry.pop(gymnasium_id(game_id), None)
    try:
        from pettingzoo import aec_registry
    except ImportError:  # older PettingZoo without a registry
        return
    aec_registry.pop(_pettingzoo_key(game_id), None)


def raw_env_class(game: str | GameSpec[Any, Any]) -> type[WhistAECEnv]:
    """The raw PettingZoo environment class of a game, by id or by spec (a spec that is not the registered one
    of its id, such as a test's variant, gets the generic face built from it).

    Raises:
        OptionError: for an unknown id, naming the known ones.
    """
    if not isinstance(game, GameSpec):
        spec = registry.get_spec(game)  # an unknown id (or not an id at all) raises here
    else:
        spec = game
        # a spec equal to the registered one (a copy of it too, as a worker process receives) plays the registered face
        if spec.game_id not in registry.SPECS or registry.get_spec(spec.game_id) != spec:
            return raw_env_for(spec)
    game_id = spec.game_id
    cls = _RAW_ENVS.get(game_id)
    if cls is None:
        entry = _ENV_ENTRY.get(game_id)
        cls = importlib.import_module(entry.split(":")[0]).raw_env if entry is not None else raw_env_for(spec)
        _RAW_ENVS[game_id] = cls
    return cls


def make(game_id: str | GameSpec[Any, Any], raw: bool = False, **options: Any) -> Any:
    """Build an environment by id: ``make("classic_whist_v0", target_points=7)`` (or by spec).

    Args:
        game_id: one of :func:`~whist_env.registry.game_ids`, or a game's spec.
        raw: return the raw env (illegal actions raise) instead of the wrapped ``env()``.
        **options: the game's options.

    Raises:
        OptionError: for an unknown game, an unknown option or a bad value, naming what is allowed.
    """
    cls = raw_env_class(game_id)
    return cls(**options) if raw else cls.wrapped(**options)


def _env_factory(game_id: str) -> Callable[..., Any]:
    def env(**options: Any) -> Any:
        return raw_env_class(game_id).wrapped(**options)

    return env


def _register_one_with_pettingzoo(game_id: str) -> None:
    entry = _ENV_ENTRY.get(game_id)
    hooks.register_with_pettingzoo({game_id: entry if entry is not None else _env_factory(game_id)})


def register_with_pettingzoo() -> None:
    """Register every id with PettingZoo's registry (PettingZoo ≥ 1.26 has one). ``import whist_env`` does it for the
    built-in games once PettingZoo is imported (:mod:`whist_env.envs.hooks`)."""
    for game_id in registry.game_ids():
        _register_one_with_pettingzoo(game_id)


def _register_one_with_gymnasium(game_id: str) -> None:
    hooks.register_with_gymnasium([game_id])


def register_with_gymnasium() -> None:
    """Register every game's single-agent env (and batched learner env) with Gymnasium's registry (see the module
    docstring). ``import whist_env`` does it for the built-in games once Gymnasium is imported."""
    hooks.register_with_gymnasium()


__all__ = [
    "GAMES",
    "gymnasium_id",
    "make",
    "raw_env_class",
    "register",
    "register_with_gymnasium",
    "register_with_pettingzoo",
    "unregister",
]
