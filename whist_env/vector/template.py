"""The batch loops every game's engine and heuristic port share, written once as text and rendered into each file.

A batched engine (the spec's ``engine``) runs three kernels over its ``(B, K)`` state block: ``reset_kernel``,
``step_kernel`` and ``observe_kernel``. Each is compiled with :func:`~whist_env.vector.core.jit`: it allocates its
scratch arrays and hands them to a row loop (``reset_rows``, ``step_rows``, ``observe_rows``) compiled with
:func:`~whist_env.vector.core.jit_borrow`, without numba's reference counting, so that the views of a row
(``state[i]``, ``obs[i]``, ...) cost nothing per decision (docs/results_vector.md). Nothing a row loop calls may
allocate, however deep: numba refuses to compile such a call, or accepts it when the callee happened to be compiled
first elsewhere, an order the engine must not depend on. A heuristic port (the spec's ``engine_heuristic``) runs
``act_kernel``: one loop compiled with ``jit``, since the two-player play reaches the endgame solver, which
allocates.

The loops are the same in every game; the rules are not. A loop calls the game's per-row functions, by these names:

* ``new_episode(st, rng, i, <episode_args>deck, dealer)``: start an episode in the state row ``st`` (the given
  ``deck`` when ``deck[0] >= 0``, else one shuffled with environment ``i``'s generator; the given dealer when
  ``dealer >= 0``, else one drawn).
* ``step_row(st, rng, i, cfg, action, rewards_row<, step scratch>) -> bool``: apply the legal ``action`` of the
  seat to act by the game's rules, pay a finished deal into ``rewards_row`` (and the returns in ``st``), deal the
  next one; returns whether the episode is over (the loop then ends it: no seat to act, ``terminated``). Compiled
  with :func:`~whist_env.vector.core.jit_borrow_inline`, so that the loop holds it inline as it held the same code
  before (a call per decision costs Oh Hell a few percent of its ``step()``).
* ``observe_row(bits, <observe scratch, >obs_row, mask_row, st, cfg, offs, lut, mask_lut, me, known)``: the
  observation and action mask of seat ``me``.
* ``check_actions(state, actions, bad<, check_args>) -> int``: how many actions are illegal (marked in ``bad``).
* ``act_row(st, cfg, tb, known, work<, act scratch>) -> int`` (a port): the heuristic's action for the seat to act
  in ``st`` (``tb`` a table, ``work`` from :func:`~whist_env.vector.heuristics.table.new_work`), -1 where the
  episode is over.

What differs between games is declared once, in the file itself, as the module constant ``LOOP_ARGS`` (a dict of
strings, read from the source by this module, never imported): ``episode_args`` and ``check_args`` (the extra
arguments, comma-separated; ``""`` for none), and ``step_scratch``, ``observe_scratch``, ``act_scratch`` (extra
scratch arrays, as Python assignments ``name = expression``, allocated by each kernel that needs them and handed
to ``step_row``, ``observe_row`` or ``act_row`` after the template's own).

Why text, not shared numba functions: numba's disk cache checks each kernel against its own source file only, so
a loop shared as a compiled function (or an ``@overload``) would be compiled again in every process or go stale
silently when it changes (see :mod:`whist_env.vector.core`). Rendered into the game's file, the loop is part of
that file's source. The block sits between two marker lines::

    # --- begin generated: batch loops (whist_env/vector/template.py; python -m whist_env.vector.template --write) ---
    # --- end generated: batch loops ---

and is rewritten by ``python -m whist_env.vector.template --write`` (``--check``, the default, lists the files whose
block differs from the template's rendering, and exits 1 if any). The files are those the registered specs name;
files given on the command line are rendered instead (a game outside the registry: ``--write path/engine.py``).
Edit the template here, never a block; after a ``--write``, numba compiles the rewritten kernels again by itself
(their file changed).

This module imports only the standard library (the registry is read when the files are looked for); its package
``whist_env.vector`` imports numba.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import string
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

COMMAND = "python -m whist_env.vector.template --write"
ARGS_NAME = "LOOP_ARGS"  # the module constant a rendered file declares its placeholders in

ENGINE_LOOPS = '''\
@jit
def reset_kernel(
    state: np.ndarray,
    rng: np.ndarray,
    cfg: np.ndarray,
    offs: np.ndarray,
    lut: np.ndarray,
    mask_lut: np.ndarray,
    have_decks: bool,
    decks: np.ndarray,
    dealers: np.ndarray,
    current: np.ndarray,
    obs: np.ndarray,
    mask: np.ndarray,
    rewards: np.ndarray,
) -> None:
    """Start an episode in every environment (the given decks and dealers where given) and observe."""
    bits = scratch(obs, lut)
    known = np.zeros(MAX_SEATS, np.int64)
    none = np.full(1, -1, np.int64)
${observe_alloc}    reset_rows(
        state, rng, cfg, offs, lut, mask_lut, have_decks, decks, dealers, current, obs, mask, rewards,
        bits, known, none${observe_names},
    )  # fmt: skip


@jit_borrow
def reset_rows(
    state: np.ndarray,
    rng: np.ndarray,
    cfg: np.ndarray,
    offs: np.ndarray,
    lut: np.ndarray,
    mask_lut: np.ndarray,
    have_decks: bool,
    decks: np.ndarray,
    dealers: np.ndarray,
    current: np.ndarray,
    obs: np.ndarray,
    mask: np.ndarray,
    rewards: np.ndarray,
    bits: np.ndarray,
    known: np.ndarray,
    none: np.ndarray,
${observe_params}) -> None:
    """:func:`reset_kernel`'s loop over the environments, in the scratches it allocated."""
    for i in range(state.shape[0]):
        st = state[i]
        new_episode(st, rng, i, ${episode_args}decks[i] if have_decks else none, dealers[i])
        for s in range(rewards.shape[1]):
            rewards[i, s] = 0
        current[i] = st[TO_ACT]
        observe_row(bits, ${observe_args}obs[i], mask[i], st, cfg, offs, lut, mask_lut, st[TO_ACT], known)


@jit
def step_kernel(
    state: np.ndarray,
    rng: np.ndarray,
    cfg: np.ndarray,
    offs: np.ndarray,
    lut: np.ndarray,
    mask_lut: np.ndarray,
    actions: np.ndarray,
    bad: np.ndarray,
    current: np.ndarray,
    obs: np.ndarray,
    mask: np.ndarray,
    rewards: np.ndarray,
    terminated: np.ndarray,
) -> int:
    """The fused step: check every action (none illegal, or nothing changes and the count of refused ones is
    returned), apply them by the game's rules (:func:`step_row`: a finished deal scored, the next one dealt), end
    the episodes that are over (such an environment starts anew at the next step, which ignores its action), and
    observe the seat to act."""
    refused = check_actions(state, actions, bad${check_args})
    if refused:
        return refused
    bits = scratch(obs, lut)
    known = np.zeros(MAX_SEATS, np.int64)
    none = np.full(1, -1, np.int64)
${observe_alloc}${step_alloc}    step_rows(
        state, rng, cfg, offs, lut, mask_lut, actions, current, obs, mask, rewards, terminated,
        bits, known, none${observe_names}${step_names},
    )  # fmt: skip
    return 0


@jit_borrow
def step_rows(
    state: np.ndarray,
    rng: np.ndarray,
    cfg: np.ndarray,
    offs: np.ndarray,
    lut: np.ndarray,
    mask_lut: np.ndarray,
    actions: np.ndarray,
    current: np.ndarray,
    obs: np.ndarray,
    mask: np.ndarray,
    rewards: np.ndarray,
    terminated: np.ndarray,
    bits: np.ndarray,
    known: np.ndarray,
    none: np.ndarray,
${observe_params}${step_params}) -> None:
    """:func:`step_kernel`'s loop over the environments, with legal actions, in the scratches it allocated."""
    for i in range(state.shape[0]):
        st = state[i]
        for s in range(rewards.shape[1]):
            rewards[i, s] = 0
        if st[PHASE] == PHASE_OVER:  # next-step autoreset: the action is ignored
            new_episode(st, rng, i, ${episode_args}none, -1)
        elif step_row(st, rng, i, cfg, actions[i], rewards[i]${step_names}):  # the episode is over
            st[PHASE] = PHASE_OVER
            st[TO_ACT] = -1
            terminated[i] = True
        seat = st[TO_ACT] if st[PHASE] != PHASE_OVER else st[LAST_ACTOR]
        current[i] = st[TO_ACT]
        observe_row(bits, ${observe_args}obs[i], mask[i], st, cfg, offs, lut, mask_lut, seat, known)


@jit
def observe_kernel(
    state: np.ndarray,
    cfg: np.ndarray,
    offs: np.ndarray,
    lut: np.ndarray,
    mask_lut: np.ndarray,
    seats: np.ndarray,
    obs: np.ndarray,
    mask: np.ndarray,
) -> None:
    """The observation and mask of ``seats[i]`` in every environment ``i``."""
    bits = scratch(obs, lut)
    known = np.zeros(MAX_SEATS, np.int64)
${observe_alloc}    observe_rows(state, cfg, offs, lut, mask_lut, seats, obs, mask, bits, known${observe_names})


@jit_borrow
def observe_rows(
    state: np.ndarray,
    cfg: np.ndarray,
    offs: np.ndarray,
    lut: np.ndarray,
    mask_lut: np.ndarray,
    seats: np.ndarray,
    obs: np.ndarray,
    mask: np.ndarray,
    bits: np.ndarray,
    known: np.ndarray,
${observe_params}) -> None:
    """:func:`observe_kernel`'s loop over the environments, in the scratches it allocated."""
    for i in range(state.shape[0]):
        observe_row(bits, ${observe_args}obs[i], mask[i], state[i], cfg, offs, lut, mask_lut, seats[i], known)
'''

ACT_LOOP = '''\
@jit
def act_kernel(state: np.ndarray, cfg: np.ndarray, envs: np.ndarray, out: np.ndarray) -> None:
    """The heuristic's action for the seat to act in each environment ``envs[j]`` into ``out[j]`` (-1 where the
    episode is over)."""
    tb = np.zeros(TABLE_SIZE, np.int64)
    known = np.zeros(MAX_SEATS, np.int64)
    work = new_work()
${act_alloc}    for j in range(envs.shape[0]):
        out[j] = act_row(state[envs[j]], cfg, tb, known, work${act_names})
'''


@dataclass(frozen=True)
class Block:
    """A generated block: its title (in the marker lines), its template, and the placeholders a file declares:
    ``args`` (extra arguments, comma-separated) and ``scratch`` (extra scratch arrays, ``name = expression``)."""

    title: str
    template: str
    args: tuple[str, ...]
    scratch: tuple[str, ...]

    @property
    def keys(self) -> tuple[str, ...]:
        return self.args + self.scratch

    def begin(self) -> str:
        return f"# --- begin generated: {self.title} (whist_env/vector/template.py; {COMMAND}) ---"

    def end(self) -> str:
        return f"# --- end generated: {self.title} ---"


# "engine": a batched engine's file (the spec's ``engine``); "port": a heuristic port's (``engine_heuristic``)
BLOCKS: dict[str, Block] = {
    "engine": Block("batch loops", ENGINE_LOOPS, ("episode_args", "check_args"), ("step_scratch", "observe_scratch")),
    "port": Block("act loop", ACT_LOOP, (), ("act_scratch",)),
}


class TemplateError(ValueError):
    """A file the generator cannot render: no marker lines, or a missing or wrong ``LOOP_ARGS``."""


def _scratch(source: str, key: str) -> list[tuple[str, str]]:
    """``(name, expression)`` of each assignment in a scratch placeholder (``"a = np.zeros(2)\\nb = ..."``)."""
    try:
        tree = ast.parse(source)
    except SyntaxError as err:
        raise TemplateError(f"{ARGS_NAME}[{key!r}] must be Python assignments 'name = expression': {err}") from err
    out = []
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            raise TemplateError(f"{ARGS_NAME}[{key!r}]: {ast.unparse(node)!r} is not an assignment 'name = expression'")
        out.append((node.targets[0].id, ast.unparse(node.value)))
    return out


def render(kind: str, values: Mapping[str, str]) -> str:
    """The block of ``kind`` (``"engine"`` or ``"port"``, see :data:`BLOCKS`) for a file whose ``LOOP_ARGS`` are
    ``values``: the code between its marker lines (which :func:`rendered` follows with two blank lines).

    Raises:
        TemplateError: for an unknown kind, or ``values`` without every placeholder of the kind, or with others.
    """
    if kind not in BLOCKS:
        raise TemplateError(f"unknown block kind {kind!r}; kinds: {', '.join(BLOCKS)}")
    block = BLOCKS[kind]
    if set(values) != set(block.keys) or not all(isinstance(v, str) for v in values.values()):
        raise TemplateError(
            f"{ARGS_NAME} of a {kind} file must map exactly {', '.join(block.keys)} to strings; got {dict(values)!r}"
        )
    fields: dict[str, str] = {}
    for key in block.args:
        args = values[key].strip()
        fields[key] = args and (f"{args}, " if key == "episode_args" else f", {args}")
    for key in block.scratch:
        pairs = _scratch(values[key], key)
        stem = key.removesuffix("_scratch")
        fields[f"{stem}_alloc"] = "".join(f"    {name} = {expr}\n" for name, expr in pairs)
        fields[f"{stem}_names"] = "".join(f", {name}" for name, _ in pairs)
        fields[f"{stem}_args"] = "".join(f"{name}, " for name, _ in pairs)
        fields[f"{stem}_params"] = "".join(f"    {name}: np.ndarray,\n" for name, _ in pairs)
    return string.Template(block.template).substitute(fields)


def loop_args(text: str, where: str) -> dict[str, str]:
    """The ``LOOP_ARGS`` a file's source declares (a module-level dict of string literals).

    Raises:
        TemplateError: when the file declares none, or not as a dict of literals.
    """
    for node in ast.parse(text).body:
        target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None
        if isinstance(node, ast.AnnAssign):
            target = node.target
        if isinstance(target, ast.Name) and target.id == ARGS_NAME:
            assert isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None
            try:
                value = ast.literal_eval(node.value)
            except ValueError as err:
                raise TemplateError(f"{where}: {ARGS_NAME} must be a dict of string literals ({err})") from err
            if not isinstance(value, dict):
                raise TemplateError(f"{where}: {ARGS_NAME} must be a dict of string literals")
            return value
    raise TemplateError(f"{where}: no module constant {ARGS_NAME} (the placeholders of its generated block)")


def rendered(text: str, kind: str, where: str = "<text>") -> str:
    """``text`` (a file's source) with its block of ``kind`` rendered anew from its own ``LOOP_ARGS``.

    Raises:
        TemplateError: when the file lacks the block's marker lines (or has them more than once) or its
            ``LOOP_ARGS``.
    """
    block = BLOCKS[kind]
    lines = text.splitlines(keepends=True)
    begins = [k for k, line in enumerate(lines) if line.rstrip("\n") == block.begin()]
    ends = [k for k, line in enumerate(lines) if line.rstrip("\n") == block.end()]
    if len(begins) != 1 or len(ends) != 1 or ends[0] < begins[0]:
        raise TemplateError(
            f"{where}: needs one generated block {block.title!r}: the line {block.begin()!r}, later the line "
            f"{block.end()!r}; put both where the loops go, then run {COMMAND}"
        )
    body = render(kind, loop_args(text, where)) + "\n\n"  # two blank lines before the end marker (ruff format)
    return "".join(lines[: begins[0] + 1]) + body + "".join(lines[ends[0] :])


@dataclass(frozen=True)
class Target:
    """A file the generator renders: the game, the block kind, the file."""

    game_id: str
    kind: str
    path: Path


def _module_file(ref: str) -> Path:
    """The source file of the module of a spec's ``"module:name"`` string (its parent packages are imported)."""
    module = ref.partition(":")[0]
    found = importlib.util.find_spec(module)
    if found is None or found.origin is None:
        raise TemplateError(f"cannot find the module {module!r} (named by {ref!r})")
    return Path(found.origin)


def targets() -> list[Target]:
    """Every registered game's engine file and heuristic port file, as its spec names them."""
    from whist_env.registry import game_ids, get_spec  # the registry: only when the files are looked for

    out = []
    for game_id in game_ids():
        spec = get_spec(game_id)
        for kind, ref in (("engine", spec.engine), ("port", spec.engine_heuristic)):
            if ref is not None:
                out.append(Target(game_id, kind, _module_file(ref)))
    return out


def file_targets(paths: Sequence[str | Path]) -> list[Target]:
    """Targets of files named directly (a game outside the registry, e.g. one a test registers): each file's kind
    is the block whose begin marker it holds; its game is its folder's name.

    Raises:
        TemplateError: for a file holding no generated block's begin marker, or both kinds'.
    """
    out = []
    for name in paths:
        path = Path(name)
        lines = set(path.read_text(encoding="utf-8").splitlines())
        kinds = [kind for kind, block in BLOCKS.items() if block.begin() in lines]
        if len(kinds) != 1:
            markers = " or ".join(repr(block.begin()) for block in BLOCKS.values())
            raise TemplateError(f"{path}: needs exactly one of the lines {markers}; found {len(kinds)}")
        out.append(Target(path.parent.name, kinds[0], path))
    return out


def stale(target: Target) -> bool:
    """Whether the target's file differs from its rendering (TemplateError when it cannot be rendered)."""
    text = target.path.read_text(encoding="utf-8")
    return rendered(text, target.kind, str(target.path)) != text


def main(argv: Sequence[str] | None = None) -> int:
    """``--check`` (default): list the files whose generated block differs from the template, exit 1 if any;
    ``--write``: render every block anew."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true", help="rewrite every generated block from the template")
    mode.add_argument("--check", action="store_true", help="fail if a block differs from the template (default)")
    parser.add_argument(
        "files", nargs="*", help="render these files instead of those the registered specs name (a game outside it)"
    )
    args = parser.parse_args(argv)
    problems = []
    try:
        chosen = file_targets(args.files) if args.files else targets()
    except TemplateError as err:
        print(err, file=sys.stderr)
        return 1
    for target in chosen:
        text = target.path.read_text(encoding="utf-8")
        try:
            new = rendered(text, target.kind, str(target.path))
        except TemplateError as err:
            problems.append(str(err))
            continue
        if new == text:
            continue
        if args.write:
            target.path.write_text(new, encoding="utf-8")
            print(f"rewrote {target.path}")
        else:
            problems.append(f"{target.path}: its {BLOCKS[target.kind].title!r} block differs from the template")
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems and not args.write:
        print(f"run {COMMAND} (after editing the template in whist_env/vector/template.py)", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
