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
