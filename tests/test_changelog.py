"""CHANGELOG.md lists the fingerprint of every observation layout the library builds (over each option grid).

A layout change changes its fingerprint (``whist_env.fingerprint``); this test then fails until the change is
listed in CHANGELOG.md with the new fingerprint, so that users can tell which saved models still load.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from whist_env.fingerprint import layout_fingerprint
from whist_env.registry import get_spec
from whist_env.testing import case_id, option_cases

CHANGELOG = (Path(__file__).resolve().parents[1] / "CHANGELOG.md").read_text(encoding="utf-8")
# read at collection, when only the library's own games are registered (a test's toy game registers in its test)
CASES = option_cases()


@pytest.mark.parametrize(("game_id", "options"), CASES, ids=[case_id(g, o) for g, o in CASES])
def test_changelog_lists_the_layout_fingerprint(game_id: str, options: dict) -> None:
    spec = get_spec(game_id)
    fingerprint = layout_fingerprint(spec.make_encoder(spec.make_rules(**options)).layout)
    assert f"`{fingerprint}`" in CHANGELOG, (
        f"{game_id} with {options or 'default options'} has observation layout fingerprint {fingerprint}, which "
        "CHANGELOG.md does not list: a layout change must be listed there with its new fingerprint"
    )


def test_fingerprint_changes_with_the_layout() -> None:
    """The check above only works if a layout change moves the fingerprint (and doc text does not)."""
    spec = get_spec("oh_hell_v0")
    three = layout_fingerprint(spec.make_encoder(spec.make_rules(num_players=3)).layout)
    four = layout_fingerprint(spec.make_encoder(spec.make_rules(num_players=4)).layout)
    assert three != four
