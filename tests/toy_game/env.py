"""``low_whist_v0``: the toy's PettingZoo face (four players, no trump, the lowest card of the led suit wins)."""

from __future__ import annotations

from typing import Any

from whist_env.envs.aec import WhistAECEnv

from .spec import SPEC

OPTION_GRID: list[dict[str, Any]] = [dict(o) for o in SPEC.option_grid]


class raw_env(WhistAECEnv):  # noqa: N801 (PettingZoo naming convention)
    __doc__ = __doc__
    game_spec = SPEC


env = raw_env.wrapped
