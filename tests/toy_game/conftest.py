"""The toy registers itself for the tests that need it (``low_whist_spec``), as a sixth game would."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture(scope="session")
def low_whist_spec() -> Any:
    """The toy's GameSpec, registered with the package's registry (once per session)."""
    from whist_env import registry

    from .spec import SPEC

    if SPEC.game_id not in registry.game_ids():
        # no env entry point: the registry builds the PettingZoo face from the spec (tests/toy_game/env.py,
        # the hand-written face, is tested on its own in test_env.py)
        registry.register(SPEC)
    return SPEC
