"""Fixtures shared by the agent tests."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def nothing_shipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A stand-in for ``whist_env.pretrained`` that holds no weights (every game ships some now)."""
    import whist_env.agents.pretrained as pretrained

    package = tmp_path / "nothing_shipped"
    package.mkdir()
    (package / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(pretrained, "SHIPPED_PACKAGE", "nothing_shipped")
