"""Fixtures shared by the agent tests."""

from __future__ import annotations

import dataclasses

import pytest

from whist_env import registry


@pytest.fixture
def nothing_shipped(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every game's spec as if it shipped no weights (every game ships some now)."""
    for game_id in registry.game_ids():
        monkeypatch.setitem(registry._LOADED, game_id, dataclasses.replace(registry.get_spec(game_id), pretrained=None))
