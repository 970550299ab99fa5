"""Models trained with ``canonical_suits`` (trump renamed spades, :mod:`whist_env.encoding.canonical`) play correctly
when loaded: the flag travels in the metadata of the saved ``.zip`` and of the exported ``.npz``, and ModelAgent and
PretrainedAgent apply it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from whist_env.agents import make_agent
from whist_env.agents.model import ModelAgent
from whist_env.encoding.canonical import CanonicalSuits
from whist_env.errors import ModelMismatchError
from whist_env.fingerprint import read_metadata, save_model_metadata
from whist_env.registry import get_spec

pytest.importorskip("sb3_contrib")

GAME = "classic_whist_v0"


def _model(game_id: str = GAME, seed: int = 0) -> Any:
    """An untrained MaskablePPO MlpPolicy on the canonical training env, weights spread so argmaxes are not ties."""
    import torch

    from whist_env.encoding.canonical import CanonicalSuitsWrapper
    from whist_env.envs.single_agent import make_single_agent
    from whist_env.learning.sb3 import make_ppo

    env = CanonicalSuitsWrapper(make_single_agent(game_id, opponents="random"))
    model = make_ppo(env, seed=seed, net_arch=[32, 32], n_steps=64, batch_size=64)
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.policy.parameters():
            p.copy_(torch.randn(p.shape, generator=gen) * 0.15)
    return model


def _positions(game_id: str, seed: int, count: int) -> list[Any]:
    game = get_spec(game_id).make_rules()
    rng = np.random.default_rng(seed)
    out: list[Any] = []
    while len(out) < count:
        state = game.new_episode(rng)
        while not state.done and len(out) < count:
            view = game.view(state, state.to_act)
            out.append(view)
            game.step(state, int(rng.choice(np.flatnonzero([(view.legal >> a) & 1 for a in range(52)]))), rng)
    return out


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Path, Path]:
    """The torch model, its .zip with canonical_suits in the metadata, and the .npz exported from the .zip."""
    from whist_env.agents.pretrained import export_policy

    root = tmp_path_factory.mktemp("canon")
    model = _model()
    model.save(root / "model.zip")
    save_model_metadata(root / "model.zip", GAME, canonical_suits=True)
    npz = export_policy(root / "model.zip", root / "policy.npz", GAME)
    return model, root / "model.zip", npz


def test_the_flag_travels_into_the_export(saved: tuple[Any, Path, Path]) -> None:
    from whist_env.agents.pretrained import load_policy

    _, zipped, npz = saved
    assert read_metadata(zipped).canonical_suits  # type: ignore[union-attr]
    assert read_metadata(npz).canonical_suits  # type: ignore[union-attr]
    assert load_policy(npz, GAME).canonical_suits


def test_pretrained_and_model_agents_choose_the_torch_policys_action_through_the_renaming(
    saved: tuple[Any, Path, Path],
) -> None:
    model, zipped, npz = saved
    canon = CanonicalSuits(get_spec(GAME).make_encoder(get_spec(GAME).make_rules()).layout)
    encoder = get_spec(GAME).make_encoder(get_spec(GAME).make_rules())
    pretrained = make_agent(f"pretrained(path={npz})", GAME)
    numpy_model = make_agent(f"model:{zipped}", GAME)
    torch_model = ModelAgent(zipped, GAME, numpy_forward=False)
    rng = np.random.default_rng(0)
    renamed = 0
    for view in _positions(GAME, seed=2, count=300):
        obs, mask = encoder.encode_with_mask(view)
        obs_c, mask_c, perm = canon.forward(obs, mask)
        chosen, _ = model.predict(obs_c, deterministic=True, action_masks=mask_c.astype(bool))
        want = canon.action_back(int(chosen), perm)
        assert (view.legal >> want) & 1
        assert pretrained.act(view, rng) == want
        assert numpy_model.act(view, rng) == want
        assert torch_model.act(view, rng) == want
        probs = torch_model.probabilities(view)
        assert int(np.argmax(probs)) == want and probs[~mask.astype(bool)].sum() == 0
        renamed += int(not np.array_equal(obs_c, obs))
    assert renamed > 100  # most positions had a trump other than spades: the renaming was exercised


def test_a_model_without_the_flag_is_played_as_is(tmp_path: Path) -> None:
    """Old files (and models trained without canonical_suits) keep playing the raw observation."""
    from whist_env.agents.pretrained import export_policy

    model = _model(seed=1)
    model.save(tmp_path / "plain.zip")
    save_model_metadata(tmp_path / "plain.zip", GAME)
    npz = export_policy(tmp_path / "plain.zip", tmp_path / "plain.npz", GAME)
    assert not read_metadata(npz).canonical_suits  # type: ignore[union-attr]
    agent = make_agent(f"pretrained(path={npz})", GAME)
    encoder = agent.encoder
    rng = np.random.default_rng(0)
    for view in _positions(GAME, seed=3, count=50):
        obs, mask = encoder.encode_with_mask(view)
        chosen, _ = model.predict(obs, deterministic=True, action_masks=mask.astype(bool))
        assert agent.act(view, rng) == int(chosen)


def test_export_refuses_a_flag_that_contradicts_the_saved_model(saved: tuple[Any, Path, Path], tmp_path: Path) -> None:
    from whist_env.agents.pretrained import export_policy

    _, zipped, _ = saved
    with pytest.raises(ModelMismatchError, match="canonical_suits=True"):
        export_policy(zipped, tmp_path / "x.npz", GAME, canonical_suits=False)
    fresh = export_policy(_model(seed=2), tmp_path / "y.npz", GAME, canonical_suits=True)
    assert read_metadata(fresh).canonical_suits  # type: ignore[union-attr]
