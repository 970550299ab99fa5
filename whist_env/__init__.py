"""whist_env: reinforcement-learning environments for the Whist family of trick-taking games.

    >>> from whist_env import classic_whist_v0
    >>> env = classic_whist_v0.env(render_mode="ansi")
    >>> env.reset(seed=0)

Games: ``classic_whist_v0``, ``humbug_v0``, ``humbug_whist_v0``, ``oh_hell_v0`` and
``german_whist_v0`` (see ``whist_env.registry``); ``whist_env.make(id, **options)`` builds one, and
``whist_env.register(spec)`` adds a game (``whist_env.unregister(id)`` removes it again). ``import whist_env``
never imports torch, stable-baselines3, ray or pygame.

Importing the package registers every game with PettingZoo's registry and Gymnasium's, under one id per game
(``whist_env.gymnasium_id("german_whist_v0")`` is ``"whist_env/german_whist-v0"``): with ``gid`` that id,
``pettingzoo.make("aec", gid)`` builds the AEC env, ``gymnasium.make(gid, opponents="heuristic")`` the single-agent
env and ``gymnasium.make_vec(gid, num_envs=256)`` the batched learner env. They work only after
``import whist_env``: neither registry has a plugin (entry-point) mechanism to find a package's environments without
importing it. The import itself stays light: the games join a library's registry when that library is imported
(at once if it already is; :mod:`whist_env.envs.hooks`), and ``make``, ``register`` and the other names below that
need Gymnasium or PettingZoo import them on first use.

The house (``docs/guide/layers.md``, lowest layer first): ``errors``, ``cards``, ``options``, ``view``; ``rules``;
``encoding``; ``spec`` and ``registry`` (a game is one folder of ``whist_env.games`` plus its face here,
``whist_env/<id>.py``); ``fingerprint``, ``record``; ``agents``, ``vector`` (the batched engine), ``search``;
``evaluation``; ``envs``; ``learning`` (what fits a policy); ``serve`` (the browser table), ``teaching``,
``testing``; ``cli`` (the console scripts).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from whist_env.cards import card_pretty, card_str, parse_card, parse_cards
from whist_env.envs import hooks
from whist_env.errors import IllegalActionError, OptionError
from whist_env.registry import game_ids
from whist_env.view import PlayerView

if TYPE_CHECKING:
    from whist_env.envs.registration import gymnasium_id, make, register, unregister
    from whist_env.envs.single_agent import make_single_agent

__version__ = "0.1.0"

__all__ = [
    "IllegalActionError",
    "OptionError",
    "PlayerView",
    "card_pretty",
    "card_str",
    "game_ids",
    "gymnasium_id",
    "make",
    "make_single_agent",
    "parse_card",
    "parse_cards",
    "register",
    "unregister",
    "__version__",
]

# the names that need Gymnasium or PettingZoo: their module is imported when one is first used
_LAZY = {
    "gymnasium_id": "whist_env.envs.registration",
    "make": "whist_env.envs.registration",
    "register": "whist_env.envs.registration",
    "register_with_gymnasium": "whist_env.envs.registration",
    "register_with_pettingzoo": "whist_env.envs.registration",
    "unregister": "whist_env.envs.registration",
    "make_single_agent": "whist_env.envs.single_agent",
}

hooks.install()


def __getattr__(name: str):  # noqa: ANN202
    import importlib

    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value  # looked up once
        return value
    # `from whist_env import classic_whist_v0` imports a built-in game's PettingZoo face on first use.
    from whist_env.envs.registration import GAMES

    if name in GAMES:
        return importlib.import_module(GAMES[name])
    raise AttributeError(f"module 'whist_env' has no attribute {name!r}")
