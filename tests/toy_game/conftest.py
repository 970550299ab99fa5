"""The toy registers itself for the tests that need it (``low_whist_spec``), as a sixth game would."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="module")
def low_whist_spec() -> Iterator[Any]:
    """The toy's GameSpec, registered with the package's registry for the tests of one module (then removed, so
    that tests elsewhere that go over every registered game see the built-in ones only)."""
    from whist_env import registry

    from .spec import SPEC

    # no env entry point: the registry builds the PettingZoo face from the spec (tests/toy_game/env.py, the
    # hand-written face, is tested on its own in test_env.py)
    registry.register(SPEC)
    yield SPEC
    registry.unregister(SPEC.game_id)
