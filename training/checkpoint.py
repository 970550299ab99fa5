"""Checkpoints that let an interrupted run continue exactly where it stopped.

A checkpoint is taken between two rollouts (after a PPO update) and holds, in
``runs/<run>/checkpoints/step_<timesteps>/``:

* ``model.zip``: the network, the optimizer state and the timestep counter (``model.save``);
* ``state.pkl``: what ``model.save`` leaves out: every environment's generator and game in progress,
  the last observations and episode starts, the random states of ``random``, ``numpy`` and ``torch``,
  the evaluation history, the self-play snapshots and the callback's schedule.

It is written to a temporary directory and renamed into place, and ``checkpoints/latest`` names it
only after that, so a run killed at any moment leaves a complete latest checkpoint behind.
"""

from __future__ import annotations

import os
import pickle
import random
import shutil
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


def save_checkpoint(run_dir: Path, model: Any, extra: dict[str, Any], keep: int) -> Path:
    """Write a checkpoint at ``model.num_timesteps`` and point ``latest`` at it; keep the newest ``keep``."""
    root = run_dir / "checkpoints"
    root.mkdir(parents=True, exist_ok=True)
    name = f"step_{model.num_timesteps:012d}"
    final = root / name
    tmp = root / (name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    model.save(tmp / "model.zip")
    with open(tmp / "state.pkl", "wb") as f:
        pickle.dump(extra, f, protocol=pickle.HIGHEST_PROTOCOL)
    shutil.rmtree(final, ignore_errors=True)
    os.replace(tmp, final)
    pointer = root / (LATEST + ".tmp")
    pointer.write_text(name + "\n")
    os.replace(pointer, root / LATEST)
    old = sorted(p for p in root.glob("step_*") if p.is_dir() and not p.name.endswith(".tmp"))
    for p in old[:-keep]:
        shutil.rmtree(p, ignore_errors=True)
    return final


def latest_checkpoint(run_dir: Path) -> Path | None:
    """The directory ``checkpoints/latest`` names, or None when the run has no complete checkpoint."""
    pointer = run_dir / "checkpoints" / LATEST
    if not pointer.exists():
        return None
    path = run_dir / "checkpoints" / pointer.read_text().strip()
    return path if (path / "model.zip").exists() and (path / "state.pkl").exists() else None


def load_extra(checkpoint: Path) -> dict[str, Any]:
    """The ``state.pkl`` of a checkpoint (written by this project's own runs only: it is a pickle)."""
    with open(checkpoint / "state.pkl", "rb") as f:
        extra: dict[str, Any] = pickle.load(f)
    return extra
