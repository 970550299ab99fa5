"""The batch loops rendered from ``whist_env/vector/template.py``: every engine and heuristic port a spec names holds
its generated block, exactly as the template renders it (``python -m whist_env.vector.template --check``)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from whist_env.registry import game_ids, get_spec
from whist_env.vector import template

ROOT = Path(__file__).resolve().parents[2]


def spec_files() -> list[tuple[str, str, str]]:
    """``(game id, block kind, "module:name")`` of every engine and port the registered specs name."""
    out = []
    for game_id in game_ids():
        spec = get_spec(game_id)
        for kind, ref in (("engine", spec.engine), ("port", spec.engine_heuristic)):
            if ref is not None:
                out.append((game_id, kind, ref))
    return out


def test_the_generator_finds_every_file_a_spec_names() -> None:
    found = {(t.game_id, t.kind) for t in template.targets()}
    assert found == {(game_id, kind) for game_id, kind, _ in spec_files()}
    assert {kind for _, kind, _ in spec_files()} == set(template.BLOCKS)  # every kind of block is in use


@pytest.mark.parametrize("target", template.targets(), ids=lambda t: f"{t.game_id}-{t.kind}")
def test_generated_block_is_the_templates_rendering(target: template.Target) -> None:
    text = target.path.read_text(encoding="utf-8")
    block = template.BLOCKS[target.kind]
    assert text.count(block.begin() + "\n") == 1 and text.count(block.end() + "\n") == 1
    assert not template.stale(target), (
        f"{target.path}: the generated block {block.title!r} differs from whist_env/vector/template.py's rendering "
        f"(edit the template, not the block, then run {template.COMMAND})"
    )


# the per-row functions each kind of loop calls, and the decorator each needs (None: either jit kind)
ROW_FUNCTIONS = {
    "engine": {"new_episode": None, "step_row": "jit_borrow_inline", "observe_row": None, "check_actions": None},
    "port": {"act_row": None},
}


@pytest.mark.parametrize("target", template.targets(), ids=lambda t: f"{t.game_id}-{t.kind}")
def test_the_file_defines_the_row_functions_its_loops_call(target: template.Target) -> None:
    """The loops' callees are the file's module-level functions or imported ones (``check_actions`` from the core);
    an engine's are compiled without reference counting (its row loops borrow), ``step_row`` inlined."""
    tree = ast.parse(target.path.read_text(encoding="utf-8"))
    defined = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
    imported = {
        alias.asname or alias.name for node in tree.body if isinstance(node, ast.ImportFrom) for alias in node.names
    }
    for name, decorator in ROW_FUNCTIONS[target.kind].items():
        assert name in defined or name in imported, f"{target.path}: no {name}() for the generated loops to call"
        if decorator is not None:
            decorators = [ast.unparse(d) for d in defined[name].decorator_list]
            assert decorators == [decorator], f"{target.path}: {name}() must be @{decorator}, is {decorators}"
        if target.kind == "engine" and name in defined:
            decorators = [ast.unparse(d) for d in defined[name].decorator_list]
            assert decorators[0].startswith("jit_borrow"), f"{target.path}: {name}() runs in a borrowing row loop"


def test_a_hand_edited_block_is_caught_and_rewritten(tmp_path: Path) -> None:
    """A copy of an engine with one line of its block edited is stale; rendering it restores the original."""
    target = next(t for t in template.targets() if t.kind == "engine")
    original = target.path.read_text(encoding="utf-8")
    line = "        current[i] = st[TO_ACT]\n"
    assert line in original.split(template.BLOCKS["engine"].begin())[1]
    copy = tmp_path / "engine.py"
    copy.write_text(original.replace(line, "        current[i] = -1\n", 1), encoding="utf-8")
    edited = template.Target(target.game_id, target.kind, copy)
    assert template.stale(edited)
    assert template.rendered(copy.read_text(encoding="utf-8"), "engine") == original


def test_check_command_fails_on_a_stale_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``main()`` (``--check``) exits 1 and names the file; ``--write`` renders it; then the check passes."""
    target = next(t for t in template.targets() if t.kind == "port")
    copy = tmp_path / "engine_heuristic.py"
    original = target.path.read_text(encoding="utf-8")
    copy.write_text(original.replace("    work = new_work()\n", "    work = new_work()  # edited\n", 1), "utf-8")
    monkeypatch.setattr(template, "targets", lambda: [template.Target(target.game_id, target.kind, copy)])
    assert template.main(["--check"]) == 1
    assert template.main(["--write"]) == 0
    assert copy.read_text(encoding="utf-8") == original
    assert template.main([]) == 0


def test_missing_markers_and_args_are_actionable() -> None:
    with pytest.raises(template.TemplateError, match="needs one generated block 'batch loops'"):
        template.rendered("LOOP_ARGS = {}\n", "engine", "x.py")
    block = template.BLOCKS["engine"]
    text = f"x = 1\n{block.begin()}\n{block.end()}\n"
    with pytest.raises(template.TemplateError, match="no module constant LOOP_ARGS"):
        template.rendered(text, "engine", "x.py")
    with pytest.raises(template.TemplateError, match="must map exactly episode_args, check_args"):
        template.rendered('LOOP_ARGS = {"episode_args": ""}\n' + text, "engine", "x.py")
    with pytest.raises(template.TemplateError, match="is not an assignment"):
        template.render("port", {"act_scratch": "np.zeros(2)"})


def test_render_threads_scratch_and_args() -> None:
    """A scratch array is allocated in each kernel that needs it and handed down to the game's row function."""
    values = {"episode_args": "cfg", "check_args": "cfg[0]", "step_scratch": "", "observe_scratch": "m = f(mask)"}
    text = template.render("engine", values)
    assert text.count("    m = f(mask)\n") == 3  # reset, step and observe kernels
    assert "new_episode(st, rng, i, cfg, none, -1)" in text
    assert "check_actions(state, actions, bad, cfg[0])" in text
    assert "observe_row(bits, m, obs[i]" in text
    assert "    m: np.ndarray,\n" in text
    ast.parse(text)


def test_the_module_imports_only_the_standard_library() -> None:
    """``whist_env.vector.template`` imports no numba (nor anything outside the standard library) at import; the
    registry is read inside :func:`~whist_env.vector.template.targets` only."""
    tree = ast.parse(Path(template.__file__).read_text(encoding="utf-8"))
    top = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            top.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            top.add(node.module.split(".")[0])
    assert top - {"__future__"} <= sys.stdlib_module_names, top


def test_the_command_line_check_passes() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "whist_env.vector.template", "--check"], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
