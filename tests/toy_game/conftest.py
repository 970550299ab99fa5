"""The toy registers itself for the tests that need it (``low_whist_spec``), as a sixth game would."""

from __future__ import annotations

from typing import Any

import pytest

# the env face, as PettingZoo's entry points name it (module:callable)
ENV_ENTRY_POINT = "toy_game.env:env"


@pytest.fixture(scope="session")
def low_whist_spec() -> Any:
    """The toy's GameSpec, registered with the package's registry (once per session)."""
    from whist_env import registry

    from .spec import SPEC

    if SPEC.game_id not in registry.game_ids():
        registry.register(SPEC, env_entry_point=ENV_ENTRY_POINT)
    return SPEC
