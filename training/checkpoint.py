"""Checkpoints that let an interrupted run continue exactly where it stopped.

A checkpoint is taken between two rollouts (after a PPO update) and holds, in
``runs/<run>/checkpoints/step_<timesteps>/``:

* ``model.zip``: the network, the optimizer state and the timestep counter (``model.save``);
* ``state.pkl``: what ``model.save`` leaves out: every environment's generator and game in progress,
  the last observations and episode starts, the random states of ``random``, ``numpy`` and ``torch``,
  the evaluation history, the self-play snapshots and the callback's schedule.

It is written to a temporary directory and renamed into place, so a run killed at any moment leaves only
complete checkpoints behind. ``--resume`` scans the directories for the newest one that loads (a damaged one
is skipped with a warning); ``checkpoints/latest`` names the newest for people, and nothing relies on it.

The atomic write itself (:func:`write_checkpoint_dir`) is every trainer's: ``train.py``'s checkpoints above,
``ppo_vec.py``'s ``state.pt`` and ``rllib_selfplay.py``'s RLlib checkpoints all go through it. A write that
fails (disk full) raises :class:`CheckpointWriteError`, whose one-line message names the checkpoint, the cause
and the previous checkpoint, which is intact. What a run killed in the middle of a write leaves behind (a
hidden temporary directory) is removed by :func:`clean_leftovers` when the run is resumed. Every trainer's
``--resume`` also makes the same check of what the checkpoint was written for (:func:`check_layout`: the game, its
options and the observation layout's fingerprint, kept in ``model.zip``, ``state.pt`` or RLlib's
``whist_env.json``).

Tests only: the environment variable ``WHIST_TEST_CHECKPOINT_FAULT`` (:data:`FAULT_ENV`) injects a fault into
one checkpoint write (see :func:`write_checkpoint_dir`); unset, as it always is outside the tests, it does
nothing.
"""

from __future__ import annotations

import errno
import os
import pickle
import random
import shutil
import sys
import time
import zipfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

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


def capture_model_state(model: Any) -> dict[str, Any]:
    """The rollout state of an sb3 on-policy model that ``model.save`` may not restore into a new env."""
    return {
        "last_obs": None if model._last_obs is None else np.array(model._last_obs, copy=True),
        "last_episode_starts": np.array(model._last_episode_starts, copy=True),
        "ep_info_buffer": list(model.ep_info_buffer or []),
        "ep_success_buffer": list(model.ep_success_buffer or []),
    }


def restore_model_state(model: Any, state: dict[str, Any]) -> None:
    """Put :func:`capture_model_state`'s values back (after ``MaskablePPO.load``)."""
    from collections import deque

    model._last_obs = state["last_obs"]
    model._last_episode_starts = state["last_episode_starts"]
    model.ep_info_buffer = deque(state["ep_info_buffer"], maxlen=model._stats_window_size)
    model.ep_success_buffer = deque(state["ep_success_buffer"], maxlen=model._stats_window_size)


REQUIRED = ("schedule", "model_state", "env_states", "rng", "num_timesteps")
"""The keys of a complete ``state.pkl``."""


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


def check_checkpoint(path: Path) -> dict[str, Any]:
    """The ``state.pkl`` of checkpoint ``path`` once both its files have been checked.

    Raises:
        DamagedCheckpointError: a file missing, empty or truncated, a ``state.pkl`` that does not unpickle into a
            complete state, or a ``model.zip`` that is not a whole zip archive of an sb3 model.
    """
    for name in ("model.zip", "state.pkl"):
        if not (path / name).is_file():
            raise DamagedCheckpointError(f"{name} is missing")
        if (path / name).stat().st_size == 0:
            raise DamagedCheckpointError(f"{name} is empty")
    try:
        with zipfile.ZipFile(path / "model.zip") as z:
            bad = z.testzip()  # reads every member and checks its CRC
            names = set(z.namelist())
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as err:
        raise DamagedCheckpointError(f"model.zip is not a readable zip archive ({type(err).__name__}: {err})") from err
    if bad is not None:
        raise DamagedCheckpointError(f"model.zip: member {bad} is corrupt")
    if not {"data", "policy.pth"} <= names:
        raise DamagedCheckpointError("model.zip is not an sb3 model (no data or policy.pth in it)")
    try:
        extra = load_extra(path)
    except Exception as err:  # noqa: BLE001 (a damaged pickle raises almost anything: EOFError, MemoryError, ...)
        raise DamagedCheckpointError(f"state.pkl does not load ({type(err).__name__}: {str(err)[:80]})") from err
    if not isinstance(extra, dict) or any(k not in extra for k in REQUIRED):
        raise DamagedCheckpointError(f"state.pkl is incomplete (it must hold {', '.join(REQUIRED)})")
    if extra["num_timesteps"] != step_of(path):
        raise DamagedCheckpointError(f"state.pkl is of step {extra['num_timesteps']}, not of the directory's step")
    return extra


def find_checkpoint(run_dir: Path, warn: Callable[[str], None] | None = None) -> tuple[Path, dict[str, Any]] | None:
    """The newest valid checkpoint of the run and its ``state.pkl``, found by scanning the checkpoint
    directories (``checkpoints/latest`` is only a hint for people: a missing or stale one changes nothing).

    Args:
        run_dir: ``runs/<run_name>``.
        warn: called with a one-line message for every damaged checkpoint newer than the one returned.

    Returns:
        None when the run has no valid checkpoint.
    """
    for path in checkpoint_dirs(run_dir):
        try:
            return path, check_checkpoint(path)
        except DamagedCheckpointError as err:
            if warn is not None:
                warn(f"warning: skipping damaged checkpoint {path}: {err}")
    return None


def save_checkpoint(
    run_dir: Path,
    model: Any,
    extra: dict[str, Any],
    keep: int,
    also: Callable[[Path], None] | None = None,
) -> Path:
    """Write a checkpoint at ``model.num_timesteps`` atomically and point ``latest`` at it.

    Both files are written into a temporary directory, which is then renamed to ``step_<n>/``
    (:func:`write_checkpoint_dir`): a run killed at any moment leaves either the whole checkpoint or none. Of the
    older checkpoints the newest ``keep - 1`` are kept; checkpoints of a higher step than this one (a damaged one
    that a resume skipped) are never deleted.

    Args:
        run_dir: ``runs/<run_name>``.
        model: the sb3 model (``num_timesteps``, ``save``).
        extra: the ``state.pkl`` (see the module docstring).
        keep: how many checkpoints to keep, this one included.
        also: called with the temporary directory once both files are in it, to add to them before the move
            (``train.py`` stores the model's metadata in ``model.zip``).

    Raises:
        CheckpointWriteError: the checkpoint could not be written (disk full, ...); the older ones are untouched.
    """
    root = run_dir / "checkpoints"
    step = int(model.num_timesteps)
    name = f"step_{step:012d}"

    def write(tmp: Path) -> None:
        model.save(tmp / "model.zip")
        with open(tmp / "state.pkl", "wb") as f:
            pickle.dump(extra, f, protocol=pickle.HIGHEST_PROTOCOL)
            f.flush()
            os.fsync(f.fileno())
        if also is not None:
            also(tmp)

    final = write_checkpoint_dir(root / name, write)
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


def latest_checkpoint(run_dir: Path) -> Path | None:
    """The newest valid checkpoint directory of the run (see :func:`find_checkpoint`), or None."""
    found = find_checkpoint(run_dir)
    return None if found is None else found[0]


def load_extra(checkpoint: Path) -> dict[str, Any]:
    """The ``state.pkl`` of a checkpoint (written by this project's own runs only: it is a pickle)."""
    with open(checkpoint / "state.pkl", "rb") as f:
        extra: dict[str, Any] = pickle.load(f)
    return extra
