"""The package's structure: no import circle, and games are reached through their specs, not by name.

* The modules of ``whist_env/`` and ``training/`` (one graph: training modules import the package's) import each
  other without a circle. Every way a module can bring in another counts: imports at module level, inside
  functions (a lazy import only hides a circle), under ``if TYPE_CHECKING:`` (a circle of types is still a
  circle in the design), relative imports, and modules loaded by name: a string ``"package.module"`` or
  ``"package.module:name"`` naming a module of the two (the registry's ``SPECS``, a spec's ``heuristic``,
  ``engine``, ``pretrained`` ..., ``importlib.import_module("...")``), and an f-string that names one once its
  placeholders are filled with a game's id or folder name (``f"whist_env.{game_id}:env"``: the PettingZoo faces),
  or else the module its fixed start names (``f"whist_env.agents.{name}"``: ``whist_env.agents``).
* Outside a game's own folder (``whist_env/games/<name>/``), its PettingZoo face (``whist_env/<id>.py``) and the
  registry, no file of ``whist_env/`` or ``training/`` names a game: no registered id and no game's name in a
  string (docstrings aside), no import or load of a game's module. What differs between games is a field or a
  hook of its :class:`~whist_env.spec.GameSpec`.
* Every registered spec is consistent with its rules, encoder and option grid.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pytest

from whist_env.errors import OptionError
from whist_env.registry import game_ids, get_spec

ROOT = Path(__file__).resolve().parents[1]
SCANNED = (ROOT / "whist_env", ROOT / "training")


def _files() -> list[Path]:
    return sorted(path for folder in SCANNED for path in folder.rglob("*.py"))


def module_name(path: Path) -> str:
    """``whist_env/search/pimc.py`` -> ``whist_env.search.pimc``; a package is its ``__init__.py``."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_package(path: Path) -> bool:
    return path.name == "__init__.py"


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the strings that stand alone as a statement: the docstrings of modules, classes and functions,
    and those of attributes (a string under a field)."""
    return {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
    }


def games() -> dict[str, str]:
    """Each registered game's id -> its folder's package (the package of its rules class's module)."""
    return {game_id: get_spec(game_id).rules_cls.__module__.rpartition(".")[0] for game_id in game_ids()}


# ------------------------------------------------------------------------------------------ imports
DOTTED = re.compile(r"[A-Za-z_]\w*(\.\w+)*")


def _named_module(text: str) -> str | None:
    """The module a ``"package.module"`` or ``"package.module:name"`` string names, if it has that shape."""
    module = text.split(":")[0]
    return module if "." in module and text.count(":") <= 1 and DOTTED.fullmatch(module) else None


def _computed_modules(node: ast.JoinedStr, holder: str, modules: set[str], fillers: Iterable[str]) -> set[str]:
    """The modules an f-string such as ``f"whist_env.{game_id}:env"`` loads.

    Its placeholders are filled with each of ``fillers`` (the games' ids and folder names: what the package
    computes module names from); the strings that name a module are the edges (``whist_env.classic_whist_v0``...).
    When none does, the edge is to the module the fixed start names at least (``f"pkg.sub.{x}"``: ``pkg.sub``),
    except from inside that package: the module loaded is then one of its own, and the package is imported before
    any of its modules runs.
    """
    pattern = "".join(v.value if isinstance(v, ast.Constant) else "\0" for v in node.values)
    named = {m for filler in fillers if (m := _named_module(pattern.replace("\0", filler))) in modules}
    if named or "\0" not in pattern or "." not in pattern.split("\0")[0]:
        return named
    start = pattern.split("\0")[0]
    # the last dotted part may be cut by the placeholder (``whist_env.oh_{x}``): only whole parts name a module
    module = start.split(":")[0] if ":" in start else start.rpartition(".")[0]
    if holder == module or holder.startswith(module + "."):
        return set()
    return {module} & modules


def _absolute(node: ast.ImportFrom, holder: str, is_package: bool) -> str:
    """The module ``from <node.module> import ...`` names, relative imports (``from ..rules import core``)
    resolved against the module ``holder`` that holds the statement."""
    if node.level == 0:
        return node.module or ""
    package = holder.split(".") if is_package else holder.split(".")[:-1]
    base = package[: len(package) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imports(
    source: str, holder: str, modules: set[str], is_package: bool = False, fillers: Iterable[str] = ()
) -> set[str]:
    """Every module of ``modules`` that the module ``holder`` (its text: ``source``) imports or loads by name.

    Counted alike: imports at module level, inside functions and under ``if TYPE_CHECKING:``; relative imports;
    strings naming a module (``"whist_env.games.humbug.spec:SPEC"``; docstrings aside) and f-strings that name
    one once their placeholders are filled with one of ``fillers`` (see :func:`_computed_modules`).
    ``from P import m`` is an edge to ``P.m`` when that is a module, else to ``P``.
    """
    tree = ast.parse(source)
    docs = _docstrings(tree)
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node, holder, is_package)
            for alias in node.names:
                out.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            out.add(_named_module(node.value) or "")
        elif isinstance(node, ast.JoinedStr):
            out |= _computed_modules(node, holder, modules, fillers)
    return (out & modules) - {holder}


def import_graph() -> dict[str, set[str]]:
    """Module -> the modules it imports, over ``whist_env/`` and ``training/`` together."""
    paths = {module_name(path): path for path in _files()}
    modules = set(paths)
    fillers = [*games(), *(package.rpartition(".")[2] for package in games().values())]
    return {
        name: imports(path.read_text(encoding="utf-8"), name, modules, _is_package(path), fillers)
        for name, path in paths.items()
    }


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


def _circle(graph: dict[str, set[str]], component: list[str]) -> str:
    """One closed path through a component, for the message: ``a -> b -> c -> a``."""
    members = set(component)
    path = [component[0]]
    while True:
        nxt = min(w for w in graph[path[-1]] if w in members)  # every member has a successor inside
        if nxt in path:
            return " -> ".join(path[path.index(nxt) :] + [nxt])
        path.append(nxt)


PROBE_MODULES = {"pkg", "pkg.b", "pkg.sub", "pkg.sub.c", "training.t"}


@pytest.mark.parametrize(
    ("kind", "holder", "source", "edges"),
    [
        ("module level", "x.probe", "import pkg.b\nfrom pkg.sub.c import x\n", {"pkg.b", "pkg.sub.c"}),
        ("a module of a package", "x.probe", "from pkg import b, name_in_init\n", {"pkg.b", "pkg"}),
        ("in a function", "x.probe", "def f():\n    from pkg.b import x\n", {"pkg.b"}),
        ("type checking", "x.probe", "if TYPE_CHECKING:\n    from pkg.b import X\n", {"pkg.b"}),
        ("relative", "pkg.probe", "from . import b\nfrom .sub.c import x\n", {"pkg.b", "pkg.sub.c"}),
        ("relative, two up", "pkg.sub.probe", "from ..b import x\n", {"pkg.b"}),
        ("spec fields", "x.probe", 'S = Spec(engine="pkg.b:E", pretrained="pkg.sub:w.npz")\n', {"pkg.b", "pkg.sub"}),
        ("a table of names", "x.probe", 'SPECS = {"one": "pkg.b:SPEC", "two": "pkg.sub.c"}\n', {"pkg.b", "pkg.sub.c"}),
        ("import_module", "x.probe", 'importlib.import_module("pkg.b")\n', {"pkg.b"}),
        ("a computed table", "x.probe", 'FACES = {g: f"pkg.sub.{g}:env" for g in SPECS}\n', {"pkg.sub.c"}),
        ("computed, from inside", "pkg.sub.probe", 'F = f"pkg.sub.{g}:env"\n', {"pkg.sub.c"}),
        ("import_module, computed", "x.probe", 'importlib.import_module(f"pkg.sub.{name}.x")\n', {"pkg.sub"}),
        ("its package, from inside", "pkg.sub.probe", 'import_module(f"pkg.sub.{name}.x")\n', set()),
        ("into training", "pkg.probe", "from training.t import run\n", {"training.t"}),
        ("not edges", "x.probe", '"""Uses pkg.b."""\nX = "pkg.nothing"\nY = "see pkg.b"\nZ = f"pk{x}"\n', set()),
    ],
)
def test_imports_sees_every_kind_of_edge(kind: str, holder: str, source: str, edges: set[str]) -> None:
    """The scan itself, on probe modules (``c`` plays a game's name): every kind of edge is found, and what is
    not an edge is not."""
    assert imports(source, holder, PROBE_MODULES, is_package=False, fillers=["c"]) == edges, kind


def test_find_cycles_sees_a_circle_closed_by_a_lazy_import_and_a_name() -> None:
    modules = {"pkg.a", "pkg.b", "pkg.c"}
    graph = {
        "pkg.a": imports("def f():\n    import pkg.b\n", "pkg.a", modules),
        "pkg.b": imports('ENGINE = "pkg.c:Engine"\n', "pkg.b", modules),
        "pkg.c": imports("if TYPE_CHECKING:\n    from pkg.a import X\n", "pkg.c", modules),
    }
    assert find_cycles(graph) == [["pkg.a", "pkg.b", "pkg.c"]]
    assert _circle(graph, ["pkg.a", "pkg.b", "pkg.c"]) == "pkg.a -> pkg.b -> pkg.c -> pkg.a"


def test_the_graph_holds_both_folders() -> None:
    graph = import_graph()
    assert len(graph) == len(_files())
    assert "whist_env.registry" in graph["training.config"]  # training's edges into the package are in it


def test_no_import_circle() -> None:
    graph = import_graph()
    cycles = find_cycles(graph)
    assert not cycles, "import circles in whist_env/ and training/ (every kind of import counts):\n" + "\n".join(
        f"{' <-> '.join(c)}\n    e.g. {_circle(graph, c)}" for c in cycles
    )


# ------------------------------------------------------------------------------------------ layers
LAYERS = (
    "errors",
    "cards",
    "options",
    "view",
    "rules",
    "encoding",
    "spec",
    "registry",
    "fingerprint",
    "record",
    "agents",
    "vector",
    "search",
    "agents.factory",
    "evaluation",
    "envs",
    "faces",
    "learning",
    "serve",
    "teaching",
    "testing",
    "cli",
    "whist_env",
    "training",
)
"""The layers of the house, lowest first (``docs/guide/layers.md`` lists the same): a module may import from its
own layer and the layers before it, never from a later one. A layer is a top-level module or subpackage of
``whist_env/`` (``training/`` is one layer); ``agents.factory`` (the agent-spec parser, which builds agents of every
kind, search and RLlib's included) and the ``agents`` package's front that re-exports it sit above search; ``faces``
are the PettingZoo modules ``whist_env/<id>.py``; ``whist_env`` is the package's own front (``__init__.py``)."""

GAME_FILE_LAYERS = {
    "rules": "rules",
    "encoding": "encoding",
    "reference": "encoding",
    "spec": "spec",
    "heuristic": "agents",
    "engine": "vector",
    "engine_heuristic": "vector",
    "search": "search",
}
"""A game's folder holds a file of several layers; each sits in the layer of its kind (the folder's ``__init__`` and
``whist_env.games`` itself: the registry's, which loads the specs)."""


def layer_of(module: str) -> str:
    """The layer of ``module`` (one of :data:`LAYERS`)."""
    parts = module.split(".")
    if parts[0] == "training":
        return "training"
    if len(parts) == 1:
        return "whist_env"
    if parts[1] == "games":
        return "registry" if len(parts) <= 3 else GAME_FILE_LAYERS[parts[3]]
    if module in ("whist_env.agents", "whist_env.agents.factory"):
        return "agents.factory"
    return "faces" if parts[1].endswith("_v0") else parts[1]


def runtime_imports(source: str, holder: str, modules: set[str], is_package: bool = False) -> set[str]:
    """The modules of ``modules`` that ``holder`` imports at run time: import statements at module level and in
    functions; not those under ``if TYPE_CHECKING:`` (types only), not modules named in strings (what a spec or a
    registry loads by name is the registry's business), and not ``from whist_env import __version__`` (the package's
    front is imported before any of its modules anyway)."""
    tree = ast.parse(source)
    typing_only = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for inner in ast.walk(node)
    }
    out: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node, holder, is_package)
            for alias in node.names:
                if (base, alias.name) != ("whist_env", "__version__"):
                    out.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base)
    return (out & modules) - {holder}


def back_imports(source: str, holder: str, modules: set[str], is_package: bool = False) -> list[str]:
    """``holder -> module (its layer)`` for each run-time import of ``holder`` from a later layer."""
    rank = {name: i for i, name in enumerate(LAYERS)}
    mine = rank[layer_of(holder)]
    return [
        f"{holder} ({layer_of(holder)}) -> {target} ({layer_of(target)})"
        for target in sorted(runtime_imports(source, holder, modules, is_package))
        if rank[layer_of(target)] > mine
    ]


def test_the_layer_scan_sees_back_imports_and_lets_types_through() -> None:
    """The scan itself: an import from a later layer is found at module level and in a function; one under
    ``TYPE_CHECKING``, a string naming a module and ``__version__`` from the front are not; a game's file sits in
    the layer of its kind."""
    modules = {"whist_env", "whist_env.cards", "whist_env.evaluation.arena", "whist_env.games.x.engine"}
    source = "\n".join(
        [
            "from whist_env import __version__",
            "from whist_env.cards import card_str",
            "if TYPE_CHECKING:",
            "    from whist_env.evaluation.arena import Report",
            'ENGINE = "whist_env.games.x.engine:Engine"',
            "def f():",
            "    from whist_env.evaluation import arena",
            "from whist_env.games.x import engine",
        ]
    )
    assert back_imports(source, "whist_env.rules.core", modules) == [
        "whist_env.rules.core (rules) -> whist_env.evaluation.arena (evaluation)",
        "whist_env.rules.core (rules) -> whist_env.games.x.engine (vector)",
    ]
    assert layer_of("whist_env.games.x.rules") == "rules" and layer_of("whist_env.games.x") == "registry"
    assert layer_of("whist_env.humbug_v0") == "faces" and layer_of("training.ppo.loop") == "training"


def test_layers_are_kept() -> None:
    """Every module of ``whist_env/`` and ``training/`` sits in a layer of :data:`LAYERS`, and imports at run time
    only from its own layer and earlier ones."""
    paths = {module_name(path): path for path in _files()}
    assert {layer_of(m) for m in paths} <= set(LAYERS), {layer_of(m) for m in paths} - set(LAYERS)
    found = [
        line
        for name, path in sorted(paths.items())
        for line in back_imports(path.read_text(encoding="utf-8"), name, set(paths), _is_package(path))
    ]
    assert not found, "imports from a later layer (docs/guide/layers.md; move the code, or import types only):\n" + (
        "\n".join(found)
    )


def test_the_layers_page_lists_the_layers() -> None:
    """``docs/guide/layers.md`` writes the same list, in the same order."""
    page = (ROOT / "docs" / "guide" / "layers.md").read_text(encoding="utf-8")
    listed = re.findall(r"^\d+\. `([\w.]+)`", page, flags=re.M)
    assert listed == list(LAYERS)


# ------------------------------------------------------------------------------------------ game names
def _own_files(game_id: str, package: str) -> tuple[str, str]:
    """A game's own files, relative to the root: its folder (a prefix) and its PettingZoo face."""
    return package.replace(".", "/") + "/", f"whist_env/{game_id}.py"


def _allowed(rel: str) -> bool:
    """Whether the file ``rel`` may name games: a game's own folder or face, or the registry."""
    if rel == "whist_env/registry.py":
        return True
    for game_id, package in games().items():
        folder, face = _own_files(game_id, package)
        if rel.startswith(folder) or rel == face:
            return True
    return False


def _names_a_game(text: str, names: set[str]) -> bool:
    """Whether ``text`` holds one of ``names`` as a whole word (``oh_hell`` in ``whist_env.games.oh_hell.rules``,
    not in ``configs/ppo_oh_hell_s0``)."""
    return any(re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", text) for name in names)


def game_names_in(source: str, holder: str, modules: set[str], is_package: bool = False) -> list[str]:
    """``line: what`` for every place the module ``holder`` names a registered game: a string (docstrings aside)
    holding a game's id or its folder's name, and an import or load of a game's module (its folder or face)."""
    ids = games()
    names = set(ids) | {package.rpartition(".")[2] for package in ids.values()}
    own = {package for package in ids.values()} | {f"whist_env.{game_id}" for game_id in ids}
    tree = ast.parse(source)
    docs = _docstrings(tree)
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            if _names_a_game(node.value, names):
                found.append((node.lineno, repr(node.value)))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for target in sorted(imports(ast.unparse(node), holder, modules, is_package)):
                if any(target == m or target.startswith(m + ".") for m in own):
                    found.append((node.lineno, f"imports {target}"))
    return [f"{line}: {what}" for line, what in sorted(found)]


def test_the_game_scan_finds_every_way_to_name_a_game() -> None:
    """The scan itself, on a probe: ids and game names in strings and f-strings, imports of a game's module; not
    docstrings, not a name inside a longer word."""
    package = games()["oh_hell_v0"]
    modules = {package, f"{package}.rules", "whist_env.oh_hell_v0", "whist_env.cards"}
    source = "\n".join(
        [
            '"""Plays ``oh_hell_v0``."""',  # 1
            f"from {package}.rules import OhHell",  # 2
            "from whist_env import oh_hell_v0, cards",  # 3
            'GAME = "oh_hell_v0"',  # 4
            'PATH = f"runs/{seed}/oh_hell/model.zip"',  # 5
            f'REF = "{package}.rules:OhHell"',  # 6
            'RUN = "configs/ppo_oh_hell_s0.yaml"',  # 7
            "class A:",  # 8
            "    x: int = 0",  # 9
            '    """Not in ``oh_hell``."""',  # 10
        ]
    )
    assert game_names_in(source, "whist_env.probe", modules) == [
        f"2: imports {package}.rules",
        "3: imports whist_env.oh_hell_v0",
        "4: 'oh_hell_v0'",
        "5: '/oh_hell/model.zip'",
        f"6: '{package}.rules:OhHell'",
    ]


def test_no_game_named_outside_the_games() -> None:
    modules = {module_name(path) for path in _files()}
    found = []
    for path in _files():
        rel = path.relative_to(ROOT).as_posix()
        if not _allowed(rel):
            hits = game_names_in(path.read_text(encoding="utf-8"), module_name(path), modules, _is_package(path))
            found += [f"{rel}:{hit}" for hit in hits]
    assert not found, "games named outside their own folders (read what differs from the game's spec):\n" + "\n".join(
        found
    )


# ------------------------------------------------------------------------------------------ the toy game
def toy_footprint() -> set[str]:
    """The files outside ``tests/toy_game/`` that the toy game touches: those that name it (``toy_game``, its class
    or id) and the test modules its files import (``import test_conformance``); the changelog and the docs, which
    describe it, aside."""
    toy = ROOT / "tests" / "toy_game"
    found: set[str] = set()
    for path in sorted((ROOT / "tests").rglob("*.py")) + _files():
        if toy in path.parents or path == Path(__file__).resolve():  # this scan names it too
            continue
        text = path.read_text(encoding="utf-8")
        if re.search(r"toy_game|LowWhist|low_whist", text):
            found.add(path.relative_to(ROOT).as_posix())
    for path in toy.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            found |= {f"tests/{name}.py" for name in names if (ROOT / "tests" / f"{name}.py").is_file()}
    return found


def test_the_toy_touches_what_the_guide_says() -> None:
    """``docs/adding_a_game.md`` names every file outside ``tests/toy_game/`` that the toy touches, and no other: a
    new game's footprint is what the guide says it is."""
    page = (ROOT / "docs" / "adding_a_game.md").read_text(encoding="utf-8")
    sentence = page.split("Outside its folder the toy touches only these files", 1)[1].split("\n\n", 1)[0]
    listed = {p for p in re.findall(r"`(tests/[\w/]+\.py)`", sentence) if not p.startswith("tests/toy_game/")}
    listed.discard("tests/test_structure.py")  # the file that holds the guide to it
    assert toy_footprint() == listed


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
        state = game.new_episode(np.random.default_rng(0))
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
    """The registry's and the registration's tables as they were before the test (a test's toy game does not
    outlive it); yields the registration module (``register``, ``make``)."""
    from whist_env import registry
    from whist_env.envs import registration

    for name in ("SPECS", "_LOADED"):
        monkeypatch.setattr(registry, name, dict(getattr(registry, name)))
    for name in ("_ENV_ENTRY", "_RAW_ENVS", "GAMES"):
        monkeypatch.setattr(registration, name, dict(getattr(registration, name)))
    yield registration
    import gymnasium
    from pettingzoo import aec_registry

    gymnasium.registry.pop("whist_env/toy_humbug-v0", None)
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


def test_test_modules_outside_packages_have_unique_basenames() -> None:
    """pytest imports a test folder without ``__init__.py`` as top-level modules (rootdir import mode): two files of
    one basename there make one of them fail to collect (conftest files aside: pytest
    names those itself), on a clean clone, and a third test that imports the
    module by name (``import test_conformance``) gets whichever was imported first."""
    tests = Path(__file__).parent
    seen: dict[str, list[str]] = {}
    for path in tests.rglob("*.py"):
        if path.name == "conftest.py" or any(
            (parent / "__init__.py").exists() for parent in path.parents if tests in parent.parents
        ):
            continue
        seen.setdefault(path.name, []).append(str(path.relative_to(tests)))
    clashes = {name: paths for name, paths in seen.items() if len(paths) > 1}
    assert not clashes, f"test modules sharing a basename outside a package: {clashes}"
