"""The documentation site builds in strict mode, and the pages written from each game's spec say what the code does.

CI builds the site too (``.ci/run``); this test also checks what a generated game page holds. It needs the ``docs``
extra (MkDocs, Material, mkdocstrings).
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pytest

import whist_env
from whist_env.evaluation.protocol import extra_schema
from whist_env.registry import get_spec
from whist_env.view import CardSet, ViewExtras

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "docs" / "hooks"))  # the hook's own functions rebuild what a page shows
import game_pages  # noqa: E402

pytestmark = pytest.mark.slow  # about 15-20 s on two shared cores


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("mkdocs", reason="needs the docs extra: pip install -e '.[docs]'")
    pytest.importorskip("mkdocstrings", reason="needs the docs extra: pip install -e '.[docs]'")
    out = tmp_path_factory.mktemp("site")
    path = str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")
    env = dict(os.environ, PYTHONPATH=path, NO_MKDOCS_2_WARNING="1")  # the variable quiets Material's banner
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return out


def test_every_game_has_a_page_with_its_options_layout_and_render(site: Path) -> None:
    for game_id in whist_env.game_ids():
        page = (site / "games" / game_id / "index.html").read_text(encoding="utf-8")
        assert 'id="options"' in page and 'id="observation-layout"' in page, game_id
        for field in dataclasses.fields(get_spec(game_id).rules_cls.config_cls):
            assert f"<code>{field.name}</code>" in page, (game_id, field.name)
        layout = whist_env.make(game_id, raw=True).encoder.layout
        assert f"<code>{layout.pieces[-1].name}</code>" in page, game_id  # the layout table reaches the last piece
        assert "player_0" in page and "trick" in page  # the text render
        assert f'src="../{game_id}.svg"' in page, game_id  # and its picture, drawn from the same state
        picture = (site / "games" / f"{game_id}.svg").read_text(encoding="utf-8")
        state = game_pages._table(game_id).unwrapped.game_state
        cards = sum(hand.bit_count() for hand in state.hands) + len(state.trick)
        assert picture.startswith("<svg") and picture.count('rx="4"') == cards, game_id  # every card drawn once


def test_every_game_page_says_what_a_bot_receives(site: Path) -> None:
    from whist_env.evaluation.protocol import extras_class, extras_fields

    for game_id in whist_env.game_ids():
        page = (site / "games" / game_id / "index.html").read_text(encoding="utf-8")
        section = page.split('id="what-a-bot-receives"', 1)[1].split("<h2", 1)[0]
        for name, _ in extras_fields(extras_class(get_spec(game_id).rules_cls)):
            assert f"<code>{name}</code>" in section, (game_id, name)
        assert "guide/protocol/" in section, game_id


@dataclasses.dataclass(frozen=True, kw_only=True, init=False)
class _Extras(ViewExtras):
    """A game's extras, as the hook reads them."""

    count: int  # (2,) masks: how many
    # (mine, theirs) while known,
    # else None
    pair: tuple[CardSet, CardSet] | None = None
    bare: int = 0


def test_the_hook_reads_what_each_extras_field_means() -> None:
    comments = game_pages.field_comments(_Extras)
    assert comments["stock_size"].startswith("cards in a stock")  # the common field: ViewExtras's Attributes
    assert comments["count"] == "(2,) masks: how many"  # a comment at the end of the field's line
    assert comments["pair"] == "(mine, theirs) while known, else None"  # the comment lines above it
    assert "bare" not in comments
    assert game_pages.SHAPE_NOTE.sub("", comments["count"]) == "how many"
    assert game_pages.SHAPE_NOTE.sub("", comments["pair"]) == comments["pair"]  # words in brackets are no shape
    props = extra_schema(_Extras)["properties"]
    assert game_pages.json_type(props["pair"]) == "[card list, card list] or null"
    assert game_pages.json_type(props["count"]) == "int"


def test_the_bot_section_is_written_for_any_registered_game() -> None:
    from toy_game.spec import SPEC  # the toy game of tests/toy_game, registered as a sixth game would be

    whist_env.register(SPEC)
    try:
        page = game_pages.game_page(SPEC.game_id, "")
    finally:
        whist_env.unregister(SPEC.game_id)
    section = page.split("## What a bot receives", 1)[1]
    assert "| `deals_left` | int | deals left in the series, this one included |" in section
    assert "protocol.schema.json" not in section  # the shipped schema knows the built-in games only


def test_the_api_reference_documents_make(site: Path) -> None:
    page = (site / "api" / "whist_env" / "index.html").read_text(encoding="utf-8")
    assert 'id="whist_env.make"' in page and ":class:" not in page
