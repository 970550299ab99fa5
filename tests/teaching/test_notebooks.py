"""The teaching notebooks: committed clean, no logic of their own, and they run (nbclient, like nbmake).

``python -m pytest --nbmake notebooks`` runs them the same way; these tests run under the project's usual
``testpaths`` and also check how the notebooks are committed.
"""

from __future__ import annotations

import ast
import time
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
EXPECTED = ("01_tour.ipynb", "02_train_and_evaluate.ipynb", "03_hidden_information.ipynb")
# What a notebook may import: the library, and what displays results.
ALLOWED_IMPORTS = {"whist_env", "numpy", "IPython"}

nbformat = pytest.importorskip("nbformat")


def notebooks() -> list[Path]:
    return sorted(NOTEBOOKS.glob("*.ipynb"))


def test_the_notebooks_are_there() -> None:
    names = [p.name for p in notebooks()]
    assert set(EXPECTED) <= set(names), names
    assert not (NOTEBOOKS / ".ipynb_checkpoints").exists()


@pytest.mark.parametrize("path", notebooks(), ids=lambda p: p.name)
def test_committed_with_outputs_cleared(path: Path) -> None:
    book = nbformat.read(path, as_version=4)
    for cell in book.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [], f"{path.name}: clear the outputs before committing"
            assert cell.execution_count is None, f"{path.name}: clear the execution counts before committing"


@pytest.mark.parametrize("path", notebooks(), ids=lambda p: p.name)
def test_no_logic_of_their_own(path: Path) -> None:
    """STYLE.md: a notebook holds no logic of its own; helpers belong in the library (whist_env.teaching)."""
    book = nbformat.read(path, as_version=4)
    for cell in book.cells:
        if cell.cell_type != "code":
            continue
        tree = ast.parse(cell.source)
        for node in ast.walk(tree):
            assert not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)), (
                f"{path.name}: define functions and classes in whist_env/teaching/, not in the notebook:\n{cell.source}"
            )
            if isinstance(node, ast.Import):
                roots = {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                roots = {(node.module or "").split(".")[0]}
            else:
                continue
            assert roots <= ALLOWED_IMPORTS, f"{path.name} imports {roots - ALLOWED_IMPORTS}"


@pytest.mark.slow
@pytest.mark.parametrize("path", notebooks(), ids=lambda p: p.name)
def test_the_notebook_runs(path: Path) -> None:
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    book = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        book, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOKS)}}
    )
    start = time.perf_counter()
    client.execute()  # raises CellExecutionError, with the cell and the traceback, when a cell fails
    elapsed = time.perf_counter() - start
    print(f"{path.name}: {elapsed:.1f} s")
    outputs = [o for cell in book.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    if path.name != "01_tour.ipynb":
        assert any("image/png" in o.get("data", {}) for o in outputs), f"{path.name} should show a plot"
