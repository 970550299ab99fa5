"""ModelAgent: lazy imports, and a saved MaskablePPO model plays legal actions from views."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from whist_env.agents import make_agent
from whist_env.errors import OptionError


def test_importing_agents_and_evaluation_imports_no_torch() -> None:
    code = (
        "import sys, whist_env, whist_env.agents, whist_env.evaluation, whist_env.cli.eval\n"
        "from whist_env.agents import make_agent\n"
        "make_agent('heuristic', 'humbug_v0')\n"
        "bad = [m for m in ('torch', 'stable_baselines3', 'sb3_contrib') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_model_name_needs_a_path() -> None:
    with pytest.raises(OptionError, match="model:<path"):
        make_agent("model:", "humbug_v0")


def test_model_plays_an_exported_policy_as_pretrained_does(tmp_path: Path) -> None:
    """``model:<file.npz>``: the format every trainer exports plays (it was a bare AssertionError from SB3's
    loader), with the same actions as ``pretrained(path=...)`` and the file's metadata checked."""
    from whist_env.agents.pretrained import export_policy, shipped_policy
    from whist_env.errors import ModelMismatchError
    from whist_env.registry import get_spec

    game_id = "german_whist_v0"
    path = export_policy(shipped_policy(get_spec(game_id), {}), tmp_path / "policy.npz", game_id)
    model, pretrained = make_agent(f"model:{path}", game_id), make_agent(f"pretrained(path={path})", game_id)
    game, rng = get_spec(game_id).make_rules(), np.random.default_rng(4)
    state = game.new_episode(rng)
    while not state.done:
        view = game.view(state, state.to_act)
        action = model.act(view, np.random.default_rng(0))
        assert action == pretrained.act(view, np.random.default_rng(0))
        game.step(state, action, rng)
    with pytest.raises(ModelMismatchError, match="include_history"):
        make_agent(f"model:{path}", game_id, include_history=False)


@pytest.mark.slow
@pytest.mark.parametrize("obs_kind", ["box", "dict"])
def test_saved_model_plays_legal_actions(tmp_path: Path, obs_kind: str) -> None:
    import gymnasium as gym
    from gymnasium import spaces
    from sb3_contrib import MaskablePPO

    from whist_env.agents.model import ModelAgent
    from whist_env.evaluation import evaluate

    game_id = "german_whist_v0"
    probe = ModelAgent("unused.zip", game_id)
    size, n_actions = probe.encoder.size, probe.num_actions

    class Shapes(gym.Env):  # only the spaces matter for building and saving an untrained model
        observation_space: Any = (
            spaces.Box(0.0, 1.0, (size,), np.float32)
            if obs_kind == "box"
            else spaces.Dict(
                {
                    "observation": spaces.Box(0.0, 1.0, (size,), np.float32),
                    "action_mask": spaces.Box(0, 1, (n_actions,), np.int8),
                }
            )
        )
        action_space = spaces.Discrete(n_actions)

    policy = "MlpPolicy" if obs_kind == "box" else "MultiInputPolicy"
    path = tmp_path / "model.zip"
    MaskablePPO(policy, Shapes(), n_steps=8, batch_size=8, device="cpu").save(path)
    # saved by hand, without whist_env's metadata: it loads, with a warning that it cannot be checked
    with pytest.warns(UserWarning, match="carries no whist_env metadata"):
        report = evaluate(game_id, [f"model:{path}", "random"], num_deals=2, seed=0)
    assert report.illegal_actions == 0 and report.agents[0].decisions > 0
    sampler = ModelAgent(path, game_id, deterministic=False)
    from whist_env.registry import get_spec

    game = get_spec(game_id).make_rules()
    state = game.new_episode(np.random.default_rng(0))
    view = game.view(state, state.to_act)
    with pytest.warns(UserWarning, match="carries no whist_env metadata"):  # this agent loads it again
        picks = [sampler.act(view, np.random.default_rng(3)) for _ in range(2)]
    assert picks[0] == picks[1] and (view.legal >> picks[0]) & 1
    with pytest.raises(ValueError, match="expects observations"), pytest.warns(UserWarning, match="no whist_env"):
        ModelAgent(path, "humbug_v0").act(view, np.random.default_rng(0))
