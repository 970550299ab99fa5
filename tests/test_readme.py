"""The README is the front door: its test command is what CI runs, and its example code runs."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_ci_runs_the_readme_test_command() -> None:
    quickstart = README.split("## Quickstart", 1)[1].split("##", 1)[0]
    commands = [line.strip() for line in quickstart.splitlines() if line.strip().startswith("pip install")]
    assert len(commands) == 2, "the Quickstart has exactly two commands"
    test_command = commands[1]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert f"README_TEST_COMMAND='{test_command}'" in ci


def test_readme_python_examples_run() -> None:
    blocks = re.findall(r"```python\n(.*?)```", README, flags=re.S)
    assert blocks
    namespace: dict[str, object] = {}
    exec(blocks[0], namespace)  # noqa: S102 - the README's own example
    env = namespace["env"]
    assert env.agents == []  # type: ignore[attr-defined]
