"""The built-in games join Gymnasium's and PettingZoo's registries when those libraries are imported, not before.

``import whist_env`` used to import Gymnasium and PettingZoo to register every game with them at once: 0.25 s of a
0.45 s import on the 2-core dev machine, paid by every process, a bot of the classroom arena that needs neither
included (a class tournament starts thousands). Now :func:`install` registers the games at once with a library that
is already imported, and otherwise when it is: a finder on ``sys.meta_path`` waits for the library's top package,
runs its module as usual, then registers (``import whist_env; gymnasium.make("whist_env/german_whist-v0")`` works as
before, in either order of imports).

What runs then must not import a module of ours that is still being imported (a library is often imported from the
middle of one of ours): the registrations below need only the library itself, already loaded, and the registry; the
environments are named by ``"module:function"`` strings, imported when an environment is made.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any

from whist_env import registry

if TYPE_CHECKING:
    from importlib.machinery import ModuleSpec

SINGLE_AGENT_ENTRY = "whist_env.envs.single_agent:make_single_agent"
VECTOR_ENTRY = "whist_env.vector.learner:vector_entry_point"


def gymnasium_id(game_id: str) -> str:
    """The id of a game in Gymnasium's and PettingZoo's registries: ``whist_env/<name>-v<N>`` for ``<name>_v<N>``
    (``german_whist_v0`` → ``whist_env/german_whist-v0``, the versioned form Gymnasium parses), else
    ``whist_env/<id>``."""
    name, sep, version = game_id.rpartition("_v")
    if sep and name and version.isdigit():
        return f"whist_env/{name}-v{version}"
    return f"whist_env/{game_id}"


def face_entry(game_id: str) -> str:
    """``"module:env"`` of a built-in game's PettingZoo face (``whist_env/<id>.py``)."""
    return f"whist_env.{game_id}:env"


def register_with_gymnasium(game_ids: Sequence[str] | None = None) -> None:
    """Register each game's single-agent env (and batched learner env, where the game has a batched engine) with
    Gymnasium's registry (default: every registered game)."""
    import gymnasium

    for game_id in registry.game_ids() if game_ids is None else game_ids:
        gym_id = gymnasium_id(game_id)
        if gym_id in gymnasium.registry:
            continue
        # a game without a batched engine has no learner env: make_vec then defaults to SyncVectorEnv
        vector = VECTOR_ENTRY if registry.get_spec(game_id).engine is not None else None
        gymnasium.register(id=gym_id, entry_point=SINGLE_AGENT_ENTRY, vector_entry_point=vector,
                           kwargs={"game": game_id})  # fmt: skip


def register_with_pettingzoo(entries: dict[str, Any] | None = None) -> None:
    """Register games with PettingZoo's registry (PettingZoo ≥ 1.26 has one): ``entries`` maps an id to its
    entry point (a ``"module:env"`` string or a factory; default: the built-in games' faces)."""
    try:
        from pettingzoo import aec_registry
        from pettingzoo import register as pz_register
    except ImportError:  # older PettingZoo without a registry
        return
    for game_id, entry in (entries or {g: face_entry(g) for g in registry.BUILT_IN}).items():
        if gymnasium_id(game_id) not in aec_registry:
            pz_register("aec", "whist_env/" + game_id, entry_point=entry)


class _AfterImport:
    """A ``sys.meta_path`` finder that runs ``callback`` once the top package ``name`` has been executed by its own
    loader (a plain class: importing ``importlib.abc`` would cost ``import whist_env`` a quarter of its time)."""

    def __init__(self, name: str, callback: Callable[[], None]) -> None:
        self.name, self.callback = name, callback

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if fullname != self.name:
            return None
        import importlib.util

        sys.meta_path.remove(self)  # once; and the search below must not find this finder again
        spec = importlib.util.find_spec(fullname)
        if spec is not None and spec.loader is not None:
            spec.loader = _Then(spec.loader, self.callback)  # type: ignore[assignment]
        return spec


class _Then:
    """A loader that runs ``callback`` after the wrapped loader executed the module."""

    def __init__(self, loader: Any, callback: Callable[[], None]) -> None:
        self.loader, self.callback = loader, callback

    def create_module(self, spec: ModuleSpec) -> ModuleType | None:
        return self.loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self.loader.exec_module(module)
        self.callback()

    def __getattr__(self, name: str) -> Any:  # what else a loader offers (get_code, get_source, ...)
        return getattr(self.loader, name)


def install() -> None:
    """Register the built-in games with Gymnasium and PettingZoo now if they are imported, else when they are."""
    for name, callback in (("gymnasium", lambda: register_with_gymnasium(registry.BUILT_IN)),
                           ("pettingzoo", register_with_pettingzoo)):  # fmt: skip
        if name in sys.modules:
            callback()
        elif not any(isinstance(f, _AfterImport) and f.name == name for f in sys.meta_path):
            sys.meta_path.insert(0, _AfterImport(name, callback))
