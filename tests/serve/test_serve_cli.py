"""The ``whist-serve`` console script for someone who just installed the package: ``--help`` speaks to a player or a
teacher, and without the ``web`` extra it says in one line what to install (issue #25)."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def entry_point() -> str:
    """``module:function`` of the ``whist-serve`` script, as ``pip install`` writes it."""
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]["whist-serve"]


def run_script(*args: str, block: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    """``whist-serve args`` in a fresh interpreter, with the modules ``block`` made impossible to import."""
    module, function = entry_point().split(":")
    code = (
        "import sys\n"
        f"for name in {block!r}: sys.modules[name] = None\n"
        f"from {module} import {function}\n"
        f"{function}({list(args)!r})\n"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env, cwd=ROOT)


def test_without_the_web_extra_one_line_names_the_install_command() -> None:
    for block in (("starlette",), ("uvicorn", "websockets")):
        done = run_script(block=block)
        assert done.returncode == 2, done.stderr
        assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1, done.stderr
        assert 'pip install "whist_env[web]"' in done.stderr and block[0] in done.stderr


def test_help_is_written_for_users() -> None:
    done = run_script("--help")
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert "in your browser" in text and "--host" in text and "README.md" in text
    for developer_word in ("ASGI", "Starlette", "docstring", "pydoc", "console script", "``"):
        assert developer_word not in text, developer_word


def test_the_script_still_starts_the_server_code() -> None:
    module, function = entry_point().split(":")
    assert callable(getattr(importlib.import_module(module), function))
