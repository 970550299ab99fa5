"""Golden playthroughs: a seeded random game per environment, recorded once and replayed exactly.

Any change in deals, legality, turn order, rewards or observations shows up as a diff. After an
intended change of behaviour, regenerate with ``WHIST_REGEN_GOLDEN=1 python -m pytest tests/test_golden.py``
and review the diff of ``tests/golden/``.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from whist_env import make
from whist_env.registry import game_ids

GOLDEN = Path(__file__).parent / "golden"


def playthrough(game_id: str, seed: int = 0) -> dict[str, Any]:
    env = make(game_id, render_mode="ansi")
    env.reset(seed=seed)
    chooser = np.random.default_rng(seed + 1000)
    steps: list[list[Any]] = []
    digest = hashlib.sha256()
    first_text = ""
    for agent in env.agent_iter():
        obs, reward, term, trunc, _info = env.last()
        digest.update(obs["observation"].tobytes())
        digest.update(obs["action_mask"].tobytes())
        if not first_text:
            first_text = env.unwrapped.describe(obs)
        if term or trunc:
            steps.append([agent, None, reward])
            env.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        action = int(legal[int(chooser.integers(len(legal)))])
        steps.append([agent, env.unwrapped.game.describe_action(action), reward])
        env.step(action)
    return {
        "game": game_id,
        "seed": seed,
        "first_observation": first_text.splitlines(),
        "steps": steps,
        "observation_sha256": digest.hexdigest(),
    }


@pytest.mark.parametrize("game_id", game_ids())
def test_golden_playthrough(game_id: str) -> None:
    path = GOLDEN / f"{game_id}.json"
    record = playthrough(game_id)
    if os.environ.get("WHIST_REGEN_GOLDEN") == "1":
        path.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    assert path.exists(), f"no golden file for {game_id}; create it with WHIST_REGEN_GOLDEN=1"
    golden = json.loads(path.read_text(encoding="utf-8"))
    assert record["first_observation"] == golden["first_observation"]
    for i, (got, want) in enumerate(zip(record["steps"], golden["steps"], strict=False)):
        assert got == want, f"step {i} differs: {got} != {want}"
    assert len(record["steps"]) == len(golden["steps"])
    assert record["observation_sha256"] == golden["observation_sha256"]
