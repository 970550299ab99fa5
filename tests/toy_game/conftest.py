"""The toy registers itself for the tests that need it (``low_whist_spec``), as a sixth game would."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="module")
def low_whist_spec() -> Iterator[Any]:
    """The toy's GameSpec, registered with the package's registry (and PettingZoo's) for the tests of one module
    (then removed, so that tests elsewhere that go over every registered game see the built-in ones only)."""
    import whist_env

    from .spec import SPEC

    # no env entry point: the PettingZoo face is built from the spec (tests/toy_game/env.py, the hand-written
    # face, is tested on its own in test_env.py)
    whist_env.register(SPEC)
    yield SPEC
    whist_env.unregister(SPEC.game_id)
