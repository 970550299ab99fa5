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
"""

from __future__ import annotations

import os
import pickle
import random
import shutil
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

LATEST = "latest"


def capture_rng() -> dict[str, Any]:
    """The global random states that PPO consumes (minibatch shuffles, action sampling)."""
    return {"random": random.getstate(), "numpy": np.random.get_state(), "torch": torch.get_rng_state()}


def restore_rng(states: dict[str, Any]) -> None:
    """Restore :func:`capture_rng`'s states."""
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
    another name (a temporary ``.tmp`` directory, ``latest``, ...)."""
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


def save_checkpoint(run_dir: Path, model: Any, extra: dict[str, Any], keep: int) -> Path:
    """Write a checkpoint at ``model.num_timesteps`` atomically and point ``latest`` at it.

    Both files are written into ``step_<n>.tmp/``, which is then renamed to ``step_<n>/``: a run killed at any
    moment leaves either the whole checkpoint or none. Of the older checkpoints the newest ``keep - 1`` are kept;
    checkpoints of a higher step than this one (a damaged one that a resume skipped) are never deleted.
    """
    root = run_dir / "checkpoints"
    root.mkdir(parents=True, exist_ok=True)
    step = int(model.num_timesteps)
    name = f"step_{step:012d}"
    final = root / name
    tmp = root / (name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    model.save(tmp / "model.zip")
    with open(tmp / "state.pkl", "wb") as f:
        pickle.dump(extra, f, protocol=pickle.HIGHEST_PROTOCOL)
        f.flush()
        os.fsync(f.fileno())
    move_into_place(tmp, final)
    pointer = root / (LATEST + ".tmp")
    pointer.write_text(name + "\n")
    os.replace(pointer, root / LATEST)
    older = [p for p in checkpoint_dirs(run_dir) if (step_of(p) or 0) < step]
    for p in older[max(keep - 1, 0) :]:
        shutil.rmtree(p, ignore_errors=True)
    return final


def move_into_place(tmp: Path, final: Path) -> None:
    """Rename the complete directory ``tmp`` to ``final``; an existing ``final`` (the same step again: a finished run
    resumed) is moved aside first and dropped after, so that a whole copy exists at every moment."""
    if final.exists():
        aside = final.with_name(final.name + ".old")
        shutil.rmtree(aside, ignore_errors=True)
        os.replace(final, aside)
        os.replace(tmp, final)
        shutil.rmtree(aside, ignore_errors=True)
    else:
        os.replace(tmp, final)


def latest_checkpoint(run_dir: Path) -> Path | None:
    """The newest valid checkpoint directory of the run (see :func:`find_checkpoint`), or None."""
    found = find_checkpoint(run_dir)
    return None if found is None else found[0]


def load_extra(checkpoint: Path) -> dict[str, Any]:
    """The ``state.pkl`` of a checkpoint (written by this project's own runs only: it is a pickle)."""
    with open(checkpoint / "state.pkl", "rb") as f:
        extra: dict[str, Any] = pickle.load(f)
    return extra
