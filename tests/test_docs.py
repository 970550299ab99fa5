"""The documentation in the repository: every rules and style citation resolves, every link stays inside the clone.

Code and tests cite the rules as ``RULES.md §n`` (or just ``§n``) and the house style as ``STYLE.md``; both
live in ``docs/`` (``docs/rules.md``, ``docs/style.md``), whose introductions say so.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RULES_PAGE = ROOT / "docs" / "rules.md"
STYLE_PAGE = ROOT / "docs" / "style.md"
# where citations may appear: the library, the tests, the training scripts and the docs themselves
CITING_DIRS = ("whist_env", "tests", "training", "docs", "benchmarks", "notebooks", "configs")
TEXT_SUFFIXES = {".py", ".md", ".yaml", ".yml", ".ipynb", ".txt"}
SECTION_CITATION = re.compile(r"§+\s*(\d+(?:\.\d+)*)")
VECTOR_CITATION = re.compile(r"\b(?:SE|WC|HE|PL|GW)-\d+\b")
STYLE_CITATION = re.compile(r"STYLE\.md(?P<tail>[^\n]{0,80})")


def _texts() -> list[tuple[str, str]]:
    """(path relative to the root, text) of every file that may cite the docs."""
    out = []
    for name in CITING_DIRS:
        for path in sorted((ROOT / name).rglob("*")):
            if path.suffix in TEXT_SUFFIXES and path.is_file() and "__pycache__" not in path.parts:
                out.append((path.relative_to(ROOT).as_posix(), path.read_text(encoding="utf-8")))
    return out


def _rules_sections() -> set[str]:
    # headings look like "## §1 ..." or "### §1.6 Scoring a deal ..."
    return set(re.findall(r"^#{2,3} §(\d+(?:\.\d+)?) ", RULES_PAGE.read_text(encoding="utf-8"), flags=re.M))


def _style_items() -> set[int]:
    text = STYLE_PAGE.read_text(encoding="utf-8")
    mistakes = text.split("## Mistakes we design against", 1)[1].split("\n## ", 1)[0]
    return {int(n) for n in re.findall(r"^(\d+)\. ", mistakes, flags=re.M)}


def test_the_rules_page_has_every_section_of_every_game() -> None:
    sections = _rules_sections()
    for game in range(6):
        assert str(game) in sections, f"docs/rules.md has no section §{game}"
    assert {"0.1", "0.8", "1.9", "2.6", "3.5", "4.8", "5.7", "6", "7"} <= sections


def test_every_section_citation_resolves_in_the_rules_page() -> None:
    sections = _rules_sections()
    citations = [(path, m.group(1)) for path, text in _texts() for m in SECTION_CITATION.finditer(text)]
    assert len(citations) > 100, "the citation scan found too few citations: is the pattern still right?"
    missing = sorted({f"{path}: §{number}" for path, number in citations if number not in sections})
    assert not missing, "citations of sections that docs/rules.md lacks:\n" + "\n".join(missing)


def test_every_rules_md_citation_names_a_section() -> None:
    # "RULES.md" alone says nothing; code that cites the rules says which section ("RULES.md §4.4")
    bare = [
        f"{path}: {text[m.start() : m.end() + 20]!r}"
        for path, text in _texts()
        for m in re.finditer(r"RULES\.md(?!\s*§|'s| test vectors| section| citations)", text)
        if not path.startswith("docs/") and path != "tests/test_docs.py"
    ]
    assert not bare, "citations of RULES.md without a section:\n" + "\n".join(bare)


def test_every_test_vector_citation_resolves() -> None:
    page = RULES_PAGE.read_text(encoding="utf-8")
    defined = set(re.findall(r"\*\*((?:SE|WC|HE|PL|GW)-\d+) \(", page))
    assert len(defined) == 7 + 6 + 6 + 6 + 6, sorted(defined)  # §1.9, §2.6, §3.5, §4.8, §5.7
    cited = {(path, m.group(0)) for path, text in _texts() for m in VECTOR_CITATION.finditer(text)}
    missing = sorted(f"{path}: {vector}" for path, vector in cited if vector not in defined)
    assert not missing, "test vectors that docs/rules.md does not define:\n" + "\n".join(missing)


def test_the_pages_say_how_they_are_cited() -> None:
    rules_intro = RULES_PAGE.read_text(encoding="utf-8").split("\n## ", 1)[0]
    assert "`RULES.md §n`" in rules_intro and "tests/test_docs.py" in rules_intro
    style_intro = STYLE_PAGE.read_text(encoding="utf-8").split("\n## ", 1)[0]
    assert "`STYLE.md`" in style_intro


def test_every_style_citation_resolves() -> None:
    items = _style_items()
    assert items == set(range(1, 11))
    style = " ".join(STYLE_PAGE.read_text(encoding="utf-8").lower().split())
    checked = 0
    for path, text in _texts():
        if path.startswith("docs/") or path == "tests/test_docs.py":
            continue
        for m in STYLE_CITATION.finditer(text):
            tail = m.group("tail")
            number = re.match(r"\s+(\d+)\b", tail)
            quoted = re.match(r',\s*"([^"]+)"', tail)
            clause = re.match(r":\s*([^;.(]+)", tail)
            if number:
                assert int(number.group(1)) in items, f"{path}: STYLE.md {number.group(1)} is not an item"
            elif quoted:
                assert quoted.group(1).lower() in style, f"{path}: docs/style.md has no {quoted.group(1)!r}"
            elif clause:
                phrase = " ".join(clause.group(1).lower().split())
                assert phrase in style, f"{path}: docs/style.md does not say {phrase!r}"
            checked += 1
    assert checked >= 5


def _generated_pages() -> set[Path]:
    """The pages that docs/hooks/game_pages.py writes when the site is built: they are not in the clone."""
    import whist_env

    games = ROOT / "docs" / "games"
    return {games / "index.md", *(games / f"{game_id}.md" for game_id in whist_env.game_ids())}


DOCS_PAGES = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").rglob("*.md"))


@pytest.mark.parametrize("page", ["README.md", "CHANGELOG.md", *DOCS_PAGES])
def test_relative_links_stay_inside_the_clone_and_exist(page: str) -> None:
    text = (ROOT / page).read_text(encoding="utf-8")
    base = (ROOT / page).parent
    generated = _generated_pages()
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
        if re.match(r"[a-z]+://", target):
            continue
        resolved = (base / target).resolve()
        assert resolved.is_relative_to(ROOT), f"{page} links {target}, outside the repository"
        assert resolved.exists() or resolved in generated, f"{page} links {target}, which does not exist"


def test_readme_points_at_the_docs_and_the_license_is_there() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "](docs/rules.md)" in readme and "](docs/style.md)" in readme
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert 'license = "MIT"' in pyproject
    license_text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert license_text.startswith("MIT License") and "Copyright (c) 2026 the whist_env authors" in license_text


def test_the_changelog_has_an_unreleased_section_and_the_current_version() -> None:
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    versions = re.findall(r"^## \[([^\]]+)\]", changelog, flags=re.M)
    assert versions[0] == "Unreleased"
    version = re.search(r'^version = "([^"]+)"', (ROOT / "pyproject.toml").read_text(encoding="utf-8"), re.M)
    assert version is not None and version.group(1) in versions
    assert "fingerprint" in changelog


def test_the_protocol_page_names_every_message_limit_and_fault() -> None:
    from dataclasses import fields

    from whist_env.evaluation.protocol import MESSAGE_TYPES
    from whist_env.evaluation.referee import ENDING, FAULT_KINDS, Limits
    from whist_env.view import PlayerView

    page = (ROOT / "docs" / "guide" / "protocol.md").read_text(encoding="utf-8")
    for kind in MESSAGE_TYPES:
        assert f"### `{kind}`" in page, f"docs/guide/protocol.md has no section on the message {kind!r}"
    rows = dict(re.findall(r"^\| `(\w+)` \| (.+) \|$", page, flags=re.M))
    for kind, meaning in FAULT_KINDS.items():
        assert kind in rows and meaning in rows[kind], f"the table of faults misses {kind!r} as FAULT_KINDS says it"
        assert rows[kind].endswith("| yes") == (kind in ENDING), f"the table of faults says wrong whether {kind} ends"
    for limit in fields(Limits):
        assert f"| `{limit.name}` |" in page, f"the table of limits misses {limit.name!r}"
    for view_field in fields(PlayerView):
        assert f"| `{view_field.name}` |" in page, f"the table of the view misses {view_field.name!r}"
