"""``low_whist_v0``: the toy's PettingZoo face (four players, no trump, the lowest card of the led suit wins)."""

from __future__ import annotations

from typing import Any

from whist_env.encoding.trick import TrickEncoder
from whist_env.envs.aec import WhistAECEnv
from whist_env.rules.core import TrickGame

from .encoder import LowWhistEncoder
from .rules import LowWhist

OPTION_GRID: list[dict[str, Any]] = [{}, {"include_history": False}, {"num_deals": 2}]


class raw_env(WhistAECEnv):  # noqa: N801 (PettingZoo naming convention)
    __doc__ = __doc__
    game_cls = LowWhist

    @classmethod
    def make_encoder(cls, game: TrickGame) -> TrickEncoder:
        assert isinstance(game, LowWhist)
        return LowWhistEncoder(game.config.num_deals)


env = raw_env.wrapped
