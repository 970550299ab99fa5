"""The package's structure: games are reached through their specs, not by id strings; no import circle.

* Outside a game's own modules (its rules, encoder, agent, spec and PettingZoo face) and the registry, no
  file of ``whist_env/`` or ``training/`` holds a registered game id as a string (docstrings aside): what
  differs between games is a field or a hook of its :class:`~whist_env.spec.GameSpec`.
* The modules of ``whist_env`` import each other without a circle, counting the imports inside functions
  too (a lazy import only hides a circle).
* Every registered spec is consistent with its rules, encoder and option grid.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from whist_env.errors import OptionError
from whist_env.registry import game_ids, get_spec

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "whist_env"
SCANNED = (PACKAGE, ROOT / "training")


def _game_names() -> list[str]:
    """The module name of each built-in game (``classic_whist_v0`` -> ``classic_whist``)."""
    return [game_id.removesuffix("_v0") for game_id in game_ids()]


def _allowed(path: Path) -> bool:
    """Whether ``path`` is one of a game's own modules or the registry."""
    rel = path.relative_to(ROOT).as_posix()
    if rel == "whist_env/registry.py":
        return True
    for name in _game_names():
        if rel == f"whist_env/{name}_v0.py" or rel.startswith(f"whist_env/games/{name}/"):
            return True
    return False


def _docstring_nodes(tree: ast.AST) -> set[int]:
    """The ids of the string constants that are docstrings (module, class, function)."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def id_strings(path: Path, ids: set[str]) -> list[str]:
    """``file:line: 'id'`` for every non-docstring string constant of ``path`` that equals a game id."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = _docstring_nodes(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            if node.value in ids:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value!r}")
    return found


def test_id_scan_finds_an_id_string(tmp_path: Path) -> None:
    """The scan itself: it reports an id used as a value and ignores docstrings."""
    probe = ROOT / "tests" / "_structure_probe.py"
    probe.write_text('"""Uses ``classic_whist_v0`` in a docstring."""\n\nGAME = "classic_whist_v0"\n', encoding="utf-8")
    try:
        assert id_strings(probe, set(game_ids())) == ["tests/_structure_probe.py:3: 'classic_whist_v0'"]
    finally:
        probe.unlink()


def test_no_game_id_strings_outside_the_games() -> None:
    ids = set(game_ids())
    found = []
    for folder in SCANNED:
        for path in sorted(folder.rglob("*.py")):
            if not _allowed(path):
                found += id_strings(path, ids)
    assert not found, "game ids used outside the games' own modules (use the game's spec):\n" + "\n".join(found)


# ------------------------------------------------------------------------------------------ imports
def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST, modules: set[str]) -> set[str]:
    """The package modules a module imports, at module level or inside functions (``if TYPE_CHECKING:``
    blocks are left out: they never run)."""
    out: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names if alias.name in modules)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                if sub in modules:
                    out.add(sub)  # ``from whist_env.search import pimc``
                elif node.module in modules:
                    out.add(node.module)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return out


def import_graph() -> dict[str, set[str]]:
    """Module -> the package modules it imports (edges to a named module, not to its parent packages)."""
    paths = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    modules = set(paths)
    return {name: _imports(ast.parse(p.read_text(encoding="utf-8")), modules) - {name} for name, p in paths.items()}


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One circle per strongly connected component of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            connect(v)
    return components


def test_find_cycles_sees_a_lazy_circle() -> None:
    """The check itself: a circle closed by an import inside a function is found."""
    a = "import whist_env.b\n"
    b = "def f():\n    from whist_env.a import x\n"
    modules = {"whist_env.a", "whist_env.b"}
    graph = {"whist_env.a": _imports(ast.parse(a), modules), "whist_env.b": _imports(ast.parse(b), modules)}
    assert find_cycles(graph) == [["whist_env.a", "whist_env.b"]]
    guarded = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from whist_env.a import x\n"
    assert _imports(ast.parse(guarded), modules) == set()


def test_no_import_circle() -> None:
    cycles = find_cycles(import_graph())
    assert not cycles, "import circles in whist_env (module-level and function-level imports):\n" + "\n".join(
        " <-> ".join(c) for c in cycles
    )


# ------------------------------------------------------------------------------------------ the specs
@pytest.mark.parametrize("game_id", game_ids())
def test_spec_is_consistent(game_id: str) -> None:
    spec = get_spec(game_id)
    assert spec.game_id == game_id
    assert spec.rules_cls.game_id == spec.game_id
    assert spec.heuristic_cls().game_id == game_id
    for options in spec.option_grid:
        game = spec.make_rules(**options)
        encoder = spec.make_encoder(game)
        assert encoder.size > 0
        state = game.new_episode(__import__("numpy").random.default_rng(0))
        assert len(spec.hidden_masks(state)) == len(spec.hidden_pieces)
        sides = spec.sides(game.num_players)
        assert len(sides) == game.num_players
        if spec.search is not None:
            search_sides, counts, follow = spec.search.rules(options)
            assert search_sides == sides
            assert len(counts) == len(follow) >= spec.search.max_tricks
    for key, value in spec.single_deal.items():
        assert getattr(spec.make_rules(**spec.single_deal).config, key) == value


# ------------------------------------------------------------------------------------------ a new game
@pytest.fixture
def restored_registry(monkeypatch: pytest.MonkeyPatch):  # noqa: ANN201
    """The registry's tables as they were before the test (a test's toy game does not outlive it)."""
    from whist_env import registry

    for name in ("SPECS", "_ENV_ENTRY", "_LOADED", "_RAW_ENVS", "GAMES"):
        monkeypatch.setattr(registry, name, dict(getattr(registry, name)))
    yield registry
    from pettingzoo import aec_registry

    aec_registry.pop("whist_env/toy_humbug-v0", None)
    aec_registry.pop("whist_env/toy_humbug_v0", None)


def test_a_registered_game_reaches_every_layer(restored_registry) -> None:  # noqa: ANN001
    """A game added with ``register`` alone (no env module) is made, played by every agent, searched and
    compared in the arena: nothing else needs to list it."""
    import dataclasses

    import numpy as np
    import pettingzoo

    from whist_env.agents import make_agent
    from whist_env.evaluation import evaluate
    from whist_env.games.humbug.rules import Humbug

    class ToyHumbug(Humbug):
        game_id = "toy_humbug_v0"

    humbug = get_spec("humbug_v0")
    restored_registry.register(dataclasses.replace(humbug, game_id="toy_humbug_v0", rules_cls=ToyHumbug))
    assert "toy_humbug_v0" in game_ids()
    env = restored_registry.make("toy_humbug_v0", num_deals=1)
    env.reset(seed=0)
    assert env.unwrapped.metadata["name"] == "toy_humbug_v0"
    pz = pettingzoo.make("aec", "whist_env/toy_humbug_v0")
    pz.reset(seed=0)
    assert pz.possible_agents == ["player_0", "player_1"]
    game = get_spec("toy_humbug_v0").make_rules()
    state = game.new_episode(np.random.default_rng(0))
    view = game.view(state, state.to_act)
    for name in ("random", "heuristic", "pimc:samples=1"):
        action = make_agent(name, "toy_humbug_v0").act(view, np.random.default_rng(0))
        assert (game.legal_mask(state) >> action) & 1
    report = evaluate("toy_humbug_v0", ["heuristic", "random"], num_deals=2, seed=0, progress=False)
    assert report.unit == humbug.unit and report.num_deals == 2
    with pytest.raises(OptionError, match="already registered"):
        restored_registry.register(get_spec("toy_humbug_v0"))
    restored_registry.unregister("toy_humbug_v0")
    assert "toy_humbug_v0" not in game_ids() and "whist_env/toy_humbug-v0" not in pettingzoo.aec_registry
    with pytest.raises(OptionError, match="unknown game 'toy_humbug_v0'"):
        get_spec("toy_humbug_v0")
    with pytest.raises(OptionError, match="built-in game"):
        restored_registry.unregister("humbug_v0")
