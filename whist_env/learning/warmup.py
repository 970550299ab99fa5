"""Compiling a game's kernels on two cores at once, for the first run after an install.

numba compiles each kernel on its first call and caches it on disk (``cache=True``), so only the first run after an
install pays: for German Whist about 28 s for the engine's kernels and 33 s for the heuristic's port, one after the
other (``docs/results_ppo_vec.md``). A trainer that needs both calls :func:`compile_aside` first, which compiles the
heuristic's port in a second process while this one goes on, then :func:`compile_learner_path` (the engine's kernels
as the learner env calls them), then :meth:`Aside.wait`: the two compilations overlap on two cores, and with a warm
cache both take a second or two. Should the second process fail, nothing is lost: the port then compiles here, on its
first call, as before.

    python -m whist_env.learning.warmup german_whist_v0 '{}'    # what the second process runs
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import numpy as np


def compile_heuristic(game_id: str, options: dict[str, Any]) -> np.ndarray:
    """Compile (or load from the cache) the heuristic's port of ``game_id``: one call on a fresh engine's rows,
    where no episode has started, so nothing is played. Returns the port's answer (-1: nobody to act)."""
    from whist_env.vector import make
    from whist_env.vector.heuristics import BatchedHeuristic

    venv = make(game_id, 1, seed=0, **options)
    return BatchedHeuristic(game_id, **options).act_state(venv, np.zeros(1, np.int64))


def compile_learner_path(game_id: str, options: dict[str, Any]) -> int:
    """Compile (or load) the engine's kernels as a learner env calls them: two tables against random opponents, the
    learner's seat drawn, a reset and a few steps of legal actions. Returns the learner decisions made."""
    from gymnasium.vector import AutoresetMode

    from whist_env.vector import make_learner_env

    env = make_learner_env(game_id, 2, opponents="random", learner_seat="random", seed=0,
                           autoreset_mode=AutoresetMode.SAME_STEP, **options)  # fmt: skip
    env.reset()
    decisions = 0
    for _ in range(3):
        masks = env.action_masks()
        decisions += int(masks.any(axis=1).sum())
        env.step(np.argmax(masks, axis=1))
    env.close()
    return decisions


class Aside:
    """The second process of :func:`compile_aside`."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc

    def wait(self, timeout: float = 300.0) -> bool:
        """Wait for it to end; True when it compiled (False: failed or timed out, then killed; the port compiles
        on its first call instead)."""
        try:
            return self.proc.wait(timeout=timeout) == 0
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return False


def compile_aside(game_id: str, options: dict[str, Any]) -> Aside | None:
    """Start compiling the heuristic's port of ``game_id`` in a second process (None on a one-core machine, where
    it would only take turns with this one)."""
    if (os.cpu_count() or 1) < 2:
        return None
    command = [sys.executable, "-m", "whist_env.learning.warmup", game_id, json.dumps(options)]
    return Aside(subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))


if __name__ == "__main__":
    compile_heuristic(sys.argv[1], json.loads(sys.argv[2]))
