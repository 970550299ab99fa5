"""whist_env: reinforcement-learning environments for the Whist family of trick-taking games.

    >>> from whist_env import classic_whist_v0
    >>> env = classic_whist_v0.env(render_mode="ansi")
    >>> env.reset(seed=0)

Games: ``classic_whist_v0``, ``humbug_v0``, ``humbug_whist_v0``, ``oh_hell_v0`` and
``german_whist_v0`` (see ``whist_env.registry``); ``whist_env.make(id, **options)`` builds one, and
``whist_env.register(spec)`` adds a game (``whist_env.unregister(id)`` removes it again). ``import whist_env``
never imports torch, stable-baselines3, ray or pygame.

Importing the package registers every game with PettingZoo's registry, so
``pettingzoo.make("aec", "whist_env/german_whist_v0")`` works only after ``import whist_env``: PettingZoo
1.27 has no plugin (entry-point) mechanism to find a package's environments without importing it.
"""

from __future__ import annotations

from whist_env.cards import card_pretty, card_str, parse_card, parse_cards
from whist_env.envs.registration import make, register, register_with_pettingzoo, unregister
from whist_env.envs.single_agent import make_single_agent
from whist_env.errors import IllegalActionError, OptionError
from whist_env.registry import game_ids
from whist_env.view import PlayerView

__version__ = "0.1.0"

__all__ = [
    "IllegalActionError",
    "OptionError",
    "PlayerView",
    "card_pretty",
    "card_str",
    "game_ids",
    "make",
    "make_single_agent",
    "parse_card",
    "parse_cards",
    "register",
    "unregister",
    "__version__",
]

register_with_pettingzoo()


def __getattr__(name: str):  # noqa: ANN202
    # `from whist_env import classic_whist_v0` imports a built-in game's PettingZoo face on first use.
    from whist_env.envs.registration import GAMES

    if name in GAMES:
        import importlib

        return importlib.import_module(GAMES[name])
    raise AttributeError(f"module 'whist_env' has no attribute {name!r}")
