"""The README is the front door: its test command is what CI runs, and its example code runs."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_ci_runs_the_readme_test_command() -> None:
    quickstart = README.split("## Quickstart", 1)[1].split("##", 1)[0]
    quickstart = re.sub(r"\s*\\\n\s*", " ", quickstart)  # a line ending in "\" continues on the next, as in a shell
    commands = [line.strip() for line in quickstart.splitlines() if line.strip().startswith(("pip install", "apt-get"))]
    assert len(commands) == 2, "the Quickstart has exactly two commands"
    test_command = commands[1]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert f"README_TEST_COMMAND='{test_command}'" in ci


def test_readme_is_a_front_door() -> None:
    # one screen of what it is and how to start; everything else lives in docs/ (the documentation site)
    lines = README.splitlines()
    assert len(lines) < 200, f"README.md has {len(lines)} lines: move detail into docs/"
    long = [f"{number}: {len(line)}" for number, line in enumerate(lines, 1) if len(line) > 120]
    assert not long, "README.md lines over 120 characters (line: length): " + ", ".join(long)


def test_every_relative_link_in_the_readme_exists() -> None:
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", README)
    local = [target for target in targets if not re.match(r"[a-z]+://", target)]
    assert len(local) > 10, "the README links into docs/"
    missing = [target for target in local if not (ROOT / target).exists()]
    assert not missing, f"README.md links files that do not exist: {missing}"


# A figure: a number (or a range) with a unit of time, memory, rate, ratio or share, or with a ± interval.
NUMBER = r"[+−-]?\d[\d,]*(?:\.\d+)?"
RATE = r"(?:env |learner )?(?:steps|decisions|actions|deals)/s"
UNIT = rf"(?:µs|ms|s|min|minutes?|seconds?|hours?|GB|MB|kB|%|×|k|M|{RATE})"
FIGURE = re.compile(rf"{NUMBER}(?:\s*(?:–|to)\s*{NUMBER})?(?:\s*±\s*{NUMBER}|\s?{UNIT}(?![\w/-]))")
DOCS_LINK = re.compile(r"(?<![\w/])(docs/[\w/.-]+\.md)")


def readme_sentences() -> list[str]:
    """The README's prose as sentences: paragraphs and list items joined across lines, and the comments of its shell
    blocks (a command's comment is prose too); the other lines of code blocks left out."""
    prose: list[str] = []
    block = False
    for line in README.splitlines():
        if line.startswith("```"):
            block = not block
            prose.append("")
        elif block:
            comment = re.match(r"\s*# ?(.*)", line)
            prose.append(comment.group(1) if comment and "#" not in line.split("#", 1)[0] else "")
        else:
            prose.append("" if line.startswith("#") else line)  # headings aside
    text = re.sub(r"\n(?!\n)", " ", "\n".join(prose))  # a paragraph on one line
    return [s for paragraph in text.split("\n") for s in re.split(r"(?<=[.!?])\s+(?=[A-Z(\[])", paragraph) if s]


def plain(text: str) -> str:
    return re.sub(r"\s+", " ", text.replace("**", "").replace("\u202f", " "))


def test_every_figure_in_the_readme_links_the_page_that_holds_it() -> None:
    """Every number with a unit or a ± in the README sits in a sentence that links a docs page, and that page holds
    the same figure (so a figure re-measured on its page and not in the README, or the other way round, fails)."""
    checked, problems = 0, []
    for sentence in readme_sentences():
        figures = [m.group(0) for m in FIGURE.finditer(sentence)]
        if not figures:
            continue
        pages = DOCS_LINK.findall(sentence)
        if not pages:
            problems.append(f"{figures} in a sentence that links no docs page: {sentence[:100]!r}...")
            continue
        texts = [plain((ROOT / page).read_text(encoding="utf-8")) for page in pages if (ROOT / page).is_file()]
        for figure in figures:
            checked += 1
            if not any(plain(figure) in text for text in texts):
                problems.append(f"{figure!r} is not on {pages}")
    assert checked >= 10, f"only {checked} figures found: the README's figures went, or the pattern broke"
    assert not problems, "\n".join(problems)


def test_the_figure_pattern_sees_what_it_should() -> None:
    found = [m.group(0) for m in FIGURE.finditer(
        "+0.515 ± 0.050 per deal, 7.9 minutes, 2.5 GB, 4,600–5,600 steps/s, 10.5–11.3×, 508 actions/s, p99 228.7 ms, "
        "87.7%, 1 min 49 s; not: 2 idle cores, 64 tables, (3 seeds), seed 20261201, §5, 2-core"
    )]  # fmt: skip
    assert found == ["+0.515 ± 0.050", "7.9 minutes", "2.5 GB", "4,600–5,600 steps/s", "10.5–11.3×",
                     "508 actions/s", "228.7 ms", "87.7%", "1 min", "49 s"]  # fmt: skip
    sentences = readme_sentences()
    assert any("Seed 0 beat the heuristic" in s and "docs/results_ppo_vec.md" in s for s in sentences)


def test_readme_python_examples_run() -> None:
    blocks = re.findall(r"```python\n(.*?)```", README, flags=re.S)
    assert blocks
    namespace: dict[str, object] = {}
    exec(blocks[0], namespace)  # noqa: S102 - the README's own example
    env = namespace["env"]
    assert env.agents == []  # type: ignore[attr-defined]


def _run_python(code: str) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter that finds this checkout's whist_env but has imported nothing."""
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False
    )


def test_pettingzoo_make_finds_every_game_after_import_whist_env() -> None:
    code = (
        "import pettingzoo, whist_env\n"
        "for game_id in whist_env.game_ids():\n"
        "    env = pettingzoo.make('aec', 'whist_env/' + game_id)\n"
        "    env.reset(seed=0)\n"
        "    assert env.unwrapped.metadata['name'] == game_id, (env.unwrapped.metadata, game_id)\n"
        "    print(game_id, len(env.agents))\n"
        "env = pettingzoo.make('aec', 'whist_env/oh_hell_v0', num_players=3)\n"
        "env.reset(seed=0)\n"
        "assert len(env.agents) == 3\n"
    )
    done = _run_python(code)
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.splitlines()) == 5


def test_pettingzoo_make_needs_import_whist_env_first_as_the_readme_says() -> None:
    # PettingZoo 1.27 has no plugin (entry-point) mechanism: its registry holds its own environments and
    # whatever an imported package registers. If a later PettingZoo finds ours without the import, this
    # fails: then update the README's "Registered with PettingZoo" line and the whist_env docstring.
    assert "only after `import whist_env`" in README
    code = (
        "import sys, pettingzoo\n"
        "try:\n"
        "    pettingzoo.make('aec', 'whist_env/classic_whist_v0')\n"
        "except Exception as error:\n"
        "    print(type(error).__name__)\n"
        "assert 'whist_env' not in sys.modules\n"
    )
    done = _run_python(code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "NamespaceNotFound"
