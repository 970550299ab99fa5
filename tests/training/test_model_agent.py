"""A model written by ``train.py`` plays through ``whist_env.agents.ModelAgent``: legal moves only, and the
same choices as the policy that was trained."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from train_helpers import REPO, tiny_args  # noqa: E402

from training.config import load_config  # noqa: E402
from training.train import main  # noqa: E402
from whist_env.agents import make_agent  # noqa: E402
from whist_env.evaluation import evaluate  # noqa: E402
from whist_env.learning.sb3 import PolicyAgent  # noqa: E402
from whist_env.testing import random_action  # noqa: E402

GAMES = {"german_whist": ("german_whist_v0", {}), "oh_hell": ("oh_hell_v0", {"episode": "deal"})}


@pytest.fixture(scope="module", params=list(GAMES))
def trained(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, dict]:
    runs = tmp_path_factory.mktemp("runs")
    assert main(tiny_args(REPO / "configs" / f"{request.param}.yaml", runs, "m")) == 0
    game, options = GAMES[request.param]
    return runs / "m" / "model.zip", game, options


@pytest.mark.slow
def test_model_agent_plays_only_legal_moves(trained: tuple[Path, str, dict]) -> None:
    path, game, options = trained
    report = evaluate(game, [f"model:{path}", "random"], num_deals=6, seed=0, options=options)
    assert report.illegal_actions == 0
    assert report.agents[0].decisions > 0


@pytest.mark.slow
def test_model_agent_agrees_with_the_trained_policy(trained: tuple[Path, str, dict]) -> None:
    from sb3_contrib import MaskablePPO

    path, game, options = trained
    agent = make_agent(f"model:{path}", game, **options)
    model = MaskablePPO.load(path, device="cpu")
    canonical = load_config(path.parent / "config.yaml").canonical_suits  # the learner saw renamed suits
    mine = PolicyAgent.from_policy(model.policy, agent.encoder, canonical_suits=canonical)  # type: ignore[attr-defined]
    rules = agent.encoder  # type: ignore[attr-defined]
    from whist_env.registry import get_spec

    g = get_spec(game).make_rules(**options)
    rng = np.random.default_rng(0)
    checked = 0
    for _ in range(3):
        state = g.new_episode(rng)
        while not state.done:
            view = g.view(state, state.to_act)
            a = agent.act(view, rng)
            assert (view.legal >> a) & 1
            assert a == mine.act(view, rng)
            checked += 1
            g.step(state, random_action(view.legal, rng), rng)
    assert checked > 20 and rules is not None


@pytest.mark.slow
def test_saved_models_carry_their_metadata(trained: tuple[Path, str, dict]) -> None:
    """train.py writes the metadata into the final model and every checkpoint's header; a loader for other
    options is refused, naming the difference."""
    from whist_env.errors import ModelMismatchError
    from whist_env.fingerprint import ModelMetadata, read_metadata

    path, game, options = trained
    canonical = load_config(path.parent / "config.yaml").canonical_suits
    expected = ModelMetadata.for_game(game, options, canonical_suits=canonical)
    assert read_metadata(path) == expected
    checkpoints = sorted((path.parent / "checkpoints").glob("step_*/checkpoint.json"))
    stored = [ModelMetadata.from_dict(json.loads(p.read_text())["metadata"]) for p in checkpoints]
    assert checkpoints and all(m == expected for m in stored)
    with pytest.raises(
        ModelMismatchError, match="trained with include_history=True, loading for include_history=False"
    ):
        make_agent(f"model:{path}", game, **{**options, "include_history": False}).load()  # type: ignore[attr-defined]
