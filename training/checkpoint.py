"""Checkpoints that let an interrupted run continue exactly where it stopped, as plain data.

A checkpoint of the sb3 or the ppo trainer is a directory ``runs/<run>/checkpoints/step_<timesteps>/`` of two files
that load without unpickling anything (:func:`write_state`, :func:`read_state`):

* ``checkpoint.json``: a small header (the format and its version, the trainer, the step, the model metadata that
  ``--resume`` checks: the game, its options, the observation layout's fingerprint) and the state as a JSON tree;
* ``arrays.npz``: every array and tensor of that tree (network weights, optimizer moments, the engine's state,
  generators), read with ``numpy.load(allow_pickle=False)``.

The tree holds dicts, lists, tuples, numbers, strings, arrays and tensors, nothing else (:func:`to_plain` refuses
anything else by name), so a checkpoint is read by building those values only: a planted file cannot run code.
What each trainer puts in it: the sb3 trainer the policy's and the optimizer's state dicts, the model's counters and
rollout state, every environment's generator and game in progress, the global random states and the callback's
schedule (:mod:`training.sb3.callbacks`); the ppo trainer its :meth:`~training.ppo.loop.PPOVec.state`. A resumed
sb3 run rebuilds its model from the config and loads the state dicts; ``model.zip`` is SB3's own export of a
finished run, for users. Checkpoints written before this format (``state.pkl``, ``state.pt``: pickles) are refused
with the command that converts them (``python training/convert_checkpoints.py <run> --trust``: it unpickles, so
only for runs you trust).

It is written to a temporary directory and renamed into place, so a run killed at any moment leaves only
complete checkpoints behind. ``--resume`` scans the directories for the newest one that loads (a damaged one
is skipped with a warning); ``checkpoints/latest`` names the newest for people, and nothing relies on it.

The atomic write itself (:func:`write_checkpoint_dir`) is every trainer's, RLlib's checkpoints (Ray's own format,
which must be trusted) included. A write that fails (disk full) raises :class:`CheckpointWriteError`, whose one-line
message names the checkpoint, the cause and the previous checkpoint, which is intact. What a run killed in the middle
of a write leaves behind (a hidden temporary directory) is removed by :func:`clean_leftovers` when the run is
resumed. Every trainer's ``--resume`` also makes the same check of what the checkpoint was written for
(:func:`check_layout`: the game, its options and the observation layout's fingerprint).

Tests only: the environment variable ``WHIST_TEST_CHECKPOINT_FAULT`` (:data:`FAULT_ENV`) injects a fault into
one checkpoint write (see :func:`write_checkpoint_dir`); unset, as it always is outside the tests, it does
nothing.
"""

from __future__ import annotations

import errno
import json
import os
import random
import shutil
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from whist_env.errors import FILE_DAMAGE

LATEST = "latest"


def capture_rng() -> dict[str, Any]:
    """The global random states that PPO consumes (minibatch shuffles, action sampling)."""
    import torch  # here, not at the top: the trainers import this module before they parse their arguments

    return {"random": random.getstate(), "numpy": np.random.get_state(), "torch": torch.get_rng_state()}


def restore_rng(states: dict[str, Any]) -> None:
    """Restore :func:`capture_rng`'s states."""
    import torch

    random.setstate(states["random"])
    np.random.set_state(states["numpy"])
    torch.set_rng_state(states["torch"])


SB3_COUNTERS = ("num_timesteps", "_n_updates", "_episode_num", "_current_progress_remaining")
"""The counters of an sb3 model that its state dicts leave out (its hyperparameters come from the run's config)."""
SB3_REQUIRED = ("policy", "optimizer", "schedule", "model_state", "env_states", "rng")
"""The keys of an sb3 checkpoint's state."""


def capture_model_state(model: Any) -> dict[str, Any]:
    """What an sb3 on-policy model needs besides its state dicts to continue exactly: its counters and its rollout
    state (the last observations and episode starts, the episode statistics)."""
    return {
        **{name: getattr(model, name) for name in SB3_COUNTERS},
        "last_obs": None if model._last_obs is None else np.array(model._last_obs, copy=True),
        "last_episode_starts": np.array(model._last_episode_starts, copy=True),
        "ep_info_buffer": list(model.ep_info_buffer or []),
        "ep_success_buffer": list(model.ep_success_buffer or []),
    }


def restore_model_state(model: Any, state: dict[str, Any]) -> None:
    """Put :func:`capture_model_state`'s values back (into a model built from the run's config)."""
    from collections import deque

    for name in SB3_COUNTERS:
        setattr(model, name, state[name])
    model._last_obs = state["last_obs"]
    model._last_episode_starts = state["last_episode_starts"]
    model.ep_info_buffer = deque(state["ep_info_buffer"], maxlen=model._stats_window_size)
    model.ep_success_buffer = deque(state["ep_success_buffer"], maxlen=model._stats_window_size)


class DamagedCheckpointError(Exception):
    """A checkpoint directory that cannot be resumed from; the message says what is wrong with it."""


def step_of(path: Path) -> int | None:
    """The timestep count in a checkpoint directory's name (``step_000000000256`` -> 256), or None for
    another name (a hidden temporary directory, ``latest``, ...)."""
    prefix, _, digits = path.name.partition("_")
    return int(digits) if prefix == "step" and digits.isdigit() else None


def checkpoint_dirs(run_dir: Path) -> list[Path]:
    """The run's checkpoint directories, newest (highest step) first, complete or not."""
    root = run_dir / "checkpoints"
    if not root.is_dir():
        return []
    found = [(step, p) for p in root.iterdir() if p.is_dir() and (step := step_of(p)) is not None]
    return [p for _, p in sorted(found, reverse=True)]


# ---------------------------------------------------------------------------------------------- plain data
STATE_FILE = "checkpoint.json"
ARRAYS_FILE = "arrays.npz"
FORMAT = "whist_env checkpoint"
FORMAT_VERSION = 1
OLD_FILES = ("state.pkl", "state.pt")
"""The pickles of the checkpoints written before this format (sb3's ``state.pkl`` beside ``model.zip``, ppo's
``state.pt``)."""
_TAGS = ("__array__", "__tensor__", "__tuple__", "__dict__")


def to_plain(tree: Any, arrays: dict[str, np.ndarray], where: str = "state") -> Any:
    """``tree`` as JSON values, each array or tensor moved into ``arrays`` under a key of its own and referred to
    (``{"__array__": key}``, ``{"__tensor__": key}``); tuples and dicts whose keys are not plain strings are tagged
    (``{"__tuple__": [...]}``, ``{"__dict__": [[key, value], ...]}``), numpy scalars become Python numbers.

    Raises:
        TypeError: for any other value (an object, a function, an array of objects), naming where it is.
    """
    if tree is None or isinstance(tree, (bool, int, float, str)):
        return tree
    if isinstance(tree, np.generic):
        return tree.item()
    if isinstance(tree, np.ndarray) or type(tree).__module__ == "torch":
        is_tensor = not isinstance(tree, np.ndarray)
        value = tree.detach().cpu().numpy() if is_tensor else tree
        if not isinstance(value, np.ndarray) or value.dtype.hasobject:
            raise TypeError(f"{where}: a checkpoint holds no {type(tree).__name__} of objects")
        key = f"a{len(arrays)}"
        arrays[key] = value
        return {"__tensor__" if is_tensor else "__array__": key}
    if isinstance(tree, tuple):
        return {"__tuple__": [to_plain(v, arrays, f"{where}[{i}]") for i, v in enumerate(tree)]}
    if isinstance(tree, list):
        return [to_plain(v, arrays, f"{where}[{i}]") for i, v in enumerate(tree)]
    if isinstance(tree, dict):
        if all(isinstance(k, str) and k not in _TAGS for k in tree):
            return {k: to_plain(v, arrays, f"{where}.{k}") for k, v in tree.items()}
        return {"__dict__": [[to_plain(k, arrays, where), to_plain(v, arrays, f"{where}[{k!r}]")]
                             for k, v in tree.items()]}  # fmt: skip
    raise TypeError(f"{where}: a checkpoint holds plain data only, not {type(tree).__module__}.{type(tree).__name__}")


def from_plain(node: Any, arrays: Mapping[str, np.ndarray]) -> Any:
    """The tree :func:`to_plain` made ``node`` of (tensors come back on the CPU)."""
    if isinstance(node, list):
        return [from_plain(v, arrays) for v in node]
    if not isinstance(node, dict):
        return node
    if "__array__" in node:
        return arrays[node["__array__"]]
    if "__tensor__" in node:
        import torch

        return torch.from_numpy(np.array(arrays[node["__tensor__"]]))
    if "__tuple__" in node:
        return tuple(from_plain(v, arrays) for v in node["__tuple__"])
    if "__dict__" in node:
        return {_key(from_plain(k, arrays)): from_plain(v, arrays) for k, v in node["__dict__"]}
    return {k: from_plain(v, arrays) for k, v in node.items()}


def _key(value: Any) -> Any:
    """A dict key back from JSON: a list (a tuple's JSON form, nested) is not hashable."""
    return tuple(value) if isinstance(value, list) else value


def write_state(folder: Path, trainer: str, step: int, metadata: Mapping[str, Any] | None, state: Any) -> None:
    """Write ``state`` as plain data into ``folder`` (:data:`STATE_FILE` and :data:`ARRAYS_FILE`, each synced to
    disk), under a header naming the trainer, the step and the model metadata."""
    arrays: dict[str, np.ndarray] = {}
    header = {"format": FORMAT, "version": FORMAT_VERSION, "trainer": trainer, "step": int(step),
              "metadata": None if metadata is None else dict(metadata), "state": to_plain(state, arrays)}  # fmt: skip
    with open(folder / ARRAYS_FILE, "wb") as f:
        np.savez(f, **arrays)  # type: ignore[arg-type]
        f.flush()
        os.fsync(f.fileno())
    with open(folder / STATE_FILE, "w", encoding="utf-8") as f:
        json.dump(header, f)
        f.flush()
        os.fsync(f.fileno())


def read_state(folder: Path, trainer: str) -> dict[str, Any]:
    """The header of the checkpoint in ``folder`` with its ``state`` rebuilt (nothing unpickled, no code run).

    Raises:
        DamagedCheckpointError: a file missing, empty, truncated or not of this format (a checkpoint of another
            trainer, or a pickle of an older version: the message gives the command that converts it), an array
            that is not plain numbers, or a step that is not the directory's.
    """
    old = [name for name in OLD_FILES if (folder / name).is_file()]
    if old and not (folder / STATE_FILE).is_file():
        raise DamagedCheckpointError(
            f"{old[0]} is a checkpoint of an older version (a pickle, which is never loaded); convert the run with "
            f"python training/convert_checkpoints.py {folder.parent.parent} --trust (only for a run you trust)"
        )
    for name in (STATE_FILE, ARRAYS_FILE):
        if not (folder / name).is_file():
            raise DamagedCheckpointError(f"{name} is missing")
    try:
        header = json.loads((folder / STATE_FILE).read_text(encoding="utf-8"))
    except FILE_DAMAGE as err:  # a JSON error is a ValueError, as is a UnicodeDecodeError
        raise DamagedCheckpointError(f"{STATE_FILE} does not load ({type(err).__name__}: {str(err)[:100]})") from err
    try:
        with np.load(folder / ARRAYS_FILE, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    except FILE_DAMAGE as err:  # an object array is a ValueError
        raise DamagedCheckpointError(f"{ARRAYS_FILE} does not load ({type(err).__name__}: {str(err)[:100]})") from err
    if not isinstance(header, dict) or header.get("format") != FORMAT or "state" not in header:
        raise DamagedCheckpointError(f"{STATE_FILE} is not a whist_env checkpoint")
    if header.get("version") != FORMAT_VERSION:
        raise DamagedCheckpointError(f"{STATE_FILE} is of format version {header.get('version')!r}, not "
                                     f"{FORMAT_VERSION} (written by another version of whist_env)")  # fmt: skip
    if header.get("trainer") != trainer:
        raise DamagedCheckpointError(f"it is a checkpoint of the {header.get('trainer')} trainer, not of {trainer}")
    if header.get("step") != step_of(folder):
        raise DamagedCheckpointError(f"it is of step {header.get('step')}, not of the directory's step")
    try:
        header["state"] = from_plain(header["state"], arrays)
    except (KeyError, TypeError, ValueError) as err:
        raise DamagedCheckpointError(f"{STATE_FILE} refers to arrays that are not there ({err})") from err
    return header


def find_state(
    run_dir: Path, trainer: str, required: tuple[str, ...] = (), warn: Callable[[str], None] | None = None
) -> tuple[Path, dict[str, Any]] | None:
    """The newest checkpoint of the run that loads whole, with its header (:func:`read_state`), found by scanning
    the checkpoint directories (``checkpoints/latest`` is only a hint for people: a missing or stale one changes
    nothing).

    Args:
        run_dir: ``runs/<run_name>``.
        trainer: whose checkpoints they are.
        required: the keys its state must hold.
        warn: called with a one-line message for every damaged checkpoint newer than the one returned.

    Returns:
        None when the run has no valid checkpoint.
    """
    for path in checkpoint_dirs(run_dir):
        try:
            header = read_state(path, trainer)
            if not isinstance(header["state"], dict) or any(k not in header["state"] for k in required):
                raise DamagedCheckpointError(f"its state is incomplete (it must hold {', '.join(required)})")
            return path, header
        except DamagedCheckpointError as err:
            if warn is not None:
                warn(f"warning: skipping damaged checkpoint {path}: {err}")
    return None


def save_checkpoint(
    run_dir: Path, trainer: str, step: int, state: Any, metadata: Mapping[str, Any] | None, keep: int
) -> Path:
    """Write the checkpoint of ``step`` atomically (:func:`write_checkpoint_dir`, :func:`write_state`) and point
    ``latest`` at it. Of the older checkpoints the newest ``keep - 1`` are kept; checkpoints of a higher step than
    this one (a damaged one that a resume skipped) are never deleted.

    Raises:
        CheckpointWriteError: the checkpoint could not be written (disk full, ...); the older ones are untouched.
    """
    root = run_dir / "checkpoints"
    name = f"step_{step:012d}"
    final = write_checkpoint_dir(root / name, lambda tmp: write_state(tmp, trainer, step, metadata, state))
    pointer = root / (LATEST + ".tmp")
    try:
        pointer.write_text(name + "\n")
        os.replace(pointer, root / LATEST)
    except OSError:  # the checkpoint is in place; the pointer is only a hint for people (nothing reads it)
        pointer.unlink(missing_ok=True)
    older = [p for p in checkpoint_dirs(run_dir) if (step_of(p) or 0) < step]
    for p in older[max(keep - 1, 0) :]:
        shutil.rmtree(p, ignore_errors=True)
    return final


FAULT_ENV = "WHIST_TEST_CHECKPOINT_FAULT"
"""Tests only: ``pause@<name>`` or ``enospc@<name>`` (``<name>``: a checkpoint directory's name, such as
``step_000000000256`` or ``iter_000002``). The write of that checkpoint, once its temporary directory is complete
and before it is moved into place, either stops (after a line on stderr saying so, for a test to kill the run
there) or fails with "No space left on device" (a full disk). Unset, nothing happens."""


class CheckpointWriteError(Exception):
    """A checkpoint that could not be written; the one-line message names it, the cause and the previous
    checkpoint, which is intact (nothing in place was touched)."""


def hidden(final: Path, suffix: str) -> Path:
    """``.<name><suffix>`` beside ``final``: the temporary (``.tmp``) and moved-aside (``.old``) directories of a
    checkpoint are hidden, so that no listing of checkpoints (``step_*``, ``iter_*``) ever sees them."""
    return final.with_name(f".{final.name}{suffix}")


def write_checkpoint_dir(final: Path, write: Callable[[Path], None]) -> Path:
    """Write the checkpoint directory ``final`` atomically: ``write(tmp)`` fills a temporary directory beside it
    (``.<name>.tmp``), which is then moved into place (:func:`move_into_place`). Killed at any moment, a run
    leaves either the whole new checkpoint or none, and every older one intact.

    Raises:
        CheckpointWriteError: ``write`` or the move raised ``OSError`` (disk full, no permission, ...); the
            temporary directory is removed and the message says which checkpoint is still in place.
    """
    tmp = hidden(final, ".tmp")
    try:
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        write(tmp)
        _test_fault(final, tmp)
        move_into_place(tmp, final)
    except OSError as err:
        shutil.rmtree(tmp, ignore_errors=True)
        raise CheckpointWriteError(_write_failed(final, err)) from err
    return final


def _test_fault(final: Path, tmp: Path) -> None:
    """The fault :data:`FAULT_ENV` asks for at this write, if any (see there)."""
    spec = os.environ.get(FAULT_ENV)
    if not spec:
        return
    what, _, name = spec.partition("@")
    if what not in ("pause", "enospc") or not name:
        raise ValueError(f"{FAULT_ENV}={spec!r}: expected pause@<checkpoint name> or enospc@<checkpoint name>")
    if name != final.name:
        return
    if what == "enospc":
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(tmp))
    print(f"{FAULT_ENV}: paused before moving {tmp} into place", file=sys.stderr, flush=True)
    time.sleep(600)  # the test kills the run here


def _write_failed(final: Path, err: OSError) -> str:
    """The one-line message of a failed write of ``final``."""
    # an OSError with an errno says it in strerror; another (Ray's remote errors) may hold a traceback: its last line
    lines = [line for line in str(err).splitlines() if line.strip()]
    cause = err.strerror or (lines[-1].strip()[:200] if lines else type(err).__name__)
    previous = _newest_in_place(final)
    kept = (
        f"the previous checkpoint {previous} is intact (--resume continues from it)"
        if previous is not None
        else "there is no earlier checkpoint"
    )
    return f"could not write checkpoint {final}: {cause}; {kept}"


def _newest_in_place(final: Path) -> Path | None:
    """The newest checkpoint beside ``final`` (same ``<prefix>_<n>`` naming, ``n`` at most ``final``'s), or None."""
    prefix, _, digits = final.name.partition("_")
    if not final.parent.is_dir() or not digits.isdigit():
        return None
    found = []
    for p in final.parent.iterdir():
        pre, _, n = p.name.partition("_")
        if p.is_dir() and pre == prefix and n.isdigit() and int(n) <= int(digits):
            found.append((int(n), p))
    return max(found)[1] if found else None


def clean_leftovers(root: Path, warn: Callable[[str], None]) -> None:
    """Tidy what a run killed during a checkpoint write left in the checkpoints directory ``root``.

    A temporary directory (``.<name>.tmp``) was never moved into place, so it may be incomplete: it is removed,
    never resumed from. A checkpoint moved aside (``.<name>.old``) for a same-step replacement that never arrived
    goes back to its place; one whose replacement arrived is removed. Each is said in a one-line warning.
    """
    if not root.is_dir():
        return
    for p in sorted(root.iterdir()):
        if not (p.is_dir() and p.name.startswith(".")):
            continue
        if p.name.endswith(".tmp"):
            shutil.rmtree(p, ignore_errors=True)
            warn(f"warning: removed the incomplete checkpoint {p} (the run stopped while writing it)")
        elif p.name.endswith(".old"):
            final = root / p.name[1 : -len(".old")]
            if final.exists():
                shutil.rmtree(p, ignore_errors=True)
            else:
                os.replace(p, final)
                warn(f"warning: put {final} back in place (the run stopped while replacing it)")


def move_into_place(tmp: Path, final: Path) -> None:
    """Rename the complete directory ``tmp`` to ``final``; an existing ``final`` (the same step again: a finished run
    resumed) is moved aside (``.<name>.old``) first and dropped after, so that a whole copy exists at every moment."""
    if final.exists():
        aside = hidden(final, ".old")
        shutil.rmtree(aside, ignore_errors=True)
        os.replace(final, aside)
        os.replace(tmp, final)
        shutil.rmtree(aside, ignore_errors=True)
    else:
        os.replace(tmp, final)


def check_layout(stored: Mapping[str, Any] | None, game: str, options: Mapping[str, Any], where: Path) -> None:
    """``--resume``'s check, every trainer's: the checkpoint at ``where`` was written for this version's game,
    options and observation layout (``stored``: the model metadata kept with its weights,
    :meth:`whist_env.fingerprint.ModelMetadata.to_dict`). A checkpoint that predates the metadata (None) passes.

    Raises:
        ConfigError: naming what differs (the layout's fingerprint, the sizes, the game or options), and what to do.
    """
    if stored is None:
        return
    from training.config import ConfigError
    from whist_env.errors import ModelMismatchError
    from whist_env.fingerprint import ModelMetadata, check

    try:
        check(ModelMetadata.from_dict(stored), game, options, what=f"the checkpoint {where}")
    except ModelMismatchError as err:
        raise ConfigError(
            f"--resume: {err}. A run does not continue across a change of the game's observation layout "
            "(CHANGELOG.md lists them); start it again with --overwrite, or under another --run-name"
        ) from err
