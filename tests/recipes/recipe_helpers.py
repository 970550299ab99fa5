"""The recipes of ``docs/recipes`` are scripts, not a package: each test loads its recipe file as a module and runs
its ``main`` with a short size, the very code its doc page shows."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

RECIPES = Path(__file__).resolve().parents[2] / "docs" / "recipes"


def load_recipe(name: str) -> ModuleType:
    """``docs/recipes/<name>_recipe.py`` as a module (its ``if __name__ == "__main__"`` block does not run)."""
    path = RECIPES / f"{name}_recipe.py"
    spec = importlib.util.spec_from_file_location(f"{name}_recipe", path)
    assert spec is not None and spec.loader is not None, f"no recipe at {path}"
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module
