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
from whist_env.registry import get_spec

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


def test_the_api_reference_documents_make(site: Path) -> None:
    page = (site / "api" / "whist_env" / "index.html").read_text(encoding="utf-8")
    assert 'id="whist_env.make"' in page and ":class:" not in page
