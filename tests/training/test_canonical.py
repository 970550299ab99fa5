"""Learner-side suit canonicalisation (``canonical_suits``, :mod:`whist_env.encoding.canonical`): the renaming itself,
the training env wrapper, the warm start's renamed rows, and a training run whose model carries the flag."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from whist_env.cards import NUM_SUITS
from whist_env.encoding.canonical import CanonicalSuits, CanonicalSuitsWrapper
from whist_env.encoding.features import PERMUTATIONS, SuitPermuter
from whist_env.envs.single_agent import make_single_agent
from whist_env.registry import game_ids, get_spec

# The games with a trump, each with options where it is one (Oh Hell's default has none).
TRUMP_GAMES: list[tuple[str, dict[str, Any]]] = [
    ("german_whist_v0", {}),
    ("classic_whist_v0", {}),
    ("humbug_v0", {}),
    ("humbug_whist_v0", {}),
    ("oh_hell_v0", {"trump_mode": "turn_up", "episode": "deal", "hand_size": 5}),
]
SPADES = NUM_SUITS - 1


def _layout(game_id: str, options: dict[str, Any]) -> Any:
    spec = get_spec(game_id)
    return spec.make_encoder(spec.make_rules(**options)).layout


def test_every_game_with_a_trump_is_listed() -> None:
    with_trump = {g for g in game_ids() if "trump" in _layout(g, {}).offsets}
    assert {g for g, _ in TRUMP_GAMES} == with_trump, "a new game with a trump: add it to TRUMP_GAMES"


def _trump_onehot(layout: Any, obs: np.ndarray) -> np.ndarray:
    at = layout.offsets["trump"]
    return np.atleast_2d(obs)[:, at : at + NUM_SUITS]


@pytest.mark.parametrize(("game_id", "options"), TRUMP_GAMES, ids=[g for g, _ in TRUMP_GAMES])
def test_wrapper_round_trip_on_random_positions(game_id: str, options: dict[str, Any]) -> None:
    """Every legal action of the renamed game maps back to a legal action of the real game (and only those), the
    renamed trump is spades, and the env never sees an illegal action."""
    inner = make_single_agent(game_id, opponents="random", **options)
    env = CanonicalSuitsWrapper(inner)
    layout = inner.encoder.layout
    canon = CanonicalSuits(layout)
    rng = np.random.default_rng(7)
    positions, trumps = 0, set()
    for episode in range(12):
        obs, _ = env.reset(seed=episode)
        done = False
        while not done:
            real_mask, real_obs = inner.action_masks(), inner._observe()  # what the env itself shows now
            mask = env.action_masks()
            assert mask.dtype == bool and mask.sum() == real_mask.sum() > 0
            perm = canon.perm(real_obs)
            legal_renamed = np.flatnonzero(mask)
            assert set(canon.action_back(legal_renamed, perm).tolist()) == set(np.flatnonzero(real_mask).tolist())
            assert np.array_equal(canon.action(canon.action_back(legal_renamed, perm), perm), legal_renamed)
            np.testing.assert_array_equal(obs, canon.obs(real_obs))
            onehot = _trump_onehot(layout, obs)[0]
            if _trump_onehot(layout, real_obs)[0].any():  # a trump is shown: it is spades now
                assert onehot.argmax() == SPADES and onehot.sum() == 1
                trumps.add(int(_trump_onehot(layout, real_obs)[0].argmax()))
            else:  # no trump: nothing renamed
                np.testing.assert_array_equal(obs, real_obs)
            obs, _, done, _, info = env.step(rng.choice(legal_renamed))
            assert info["illegal_actions"] == 0
            positions += 1
    assert positions > 50 and len(trumps) >= 2  # several real trump suits were renamed


def test_batched_equals_row_by_row_and_plain_permuter() -> None:
    """The batched renaming is the single-row one applied per row, and SuitPermuter's canonical permutation."""
    game_id, options = "classic_whist_v0", {}
    inner = make_single_agent(game_id, opponents="random", **options)
    layout = inner.encoder.layout
    canon, plain = CanonicalSuits(layout), SuitPermuter(layout)
    rng = np.random.default_rng(3)
    obs_rows, masks = [], []
    for episode in range(6):
        obs, _ = inner.reset(seed=episode)
        done = False
        while not done:
            mask = inner.action_masks()
            obs_rows.append(obs)
            masks.append(mask)
            obs, _, done, _, _ = inner.step(rng.choice(np.flatnonzero(mask)))
    obs_b, mask_b = np.stack(obs_rows), np.stack(masks)
    out_obs, out_mask, perm = canon.forward(obs_b, mask_b)
    np.testing.assert_array_equal(perm, plain.canonical(obs_b))
    np.testing.assert_array_equal(out_obs, plain.obs(obs_b, perm))
    for i in range(len(obs_b)):
        o, m, p = canon.forward(obs_b[i], mask_b[i])
        assert o.dtype == obs_b.dtype and m.dtype == mask_b.dtype and p.shape == (1,)
        np.testing.assert_array_equal(o, out_obs[i])
        np.testing.assert_array_equal(m, out_mask[i])
        for a in np.flatnonzero(m):
            assert canon.action_back(int(a), p) == int(canon.action_back(np.array([a]), p)[0])
    assert len(set(perm.tolist())) >= 2


def test_no_trump_is_the_identity() -> None:
    layout = _layout("oh_hell_v0", {"episode": "deal"})  # trump_mode none
    inner = make_single_agent("oh_hell_v0", opponents="random", episode="deal")
    obs, _ = inner.reset(seed=0)
    canon = CanonicalSuits(layout)
    out, mask, perm = canon.forward(obs, inner.action_masks())
    assert PERMUTATIONS[int(perm[0])] == tuple(range(NUM_SUITS))
    np.testing.assert_array_equal(out, obs)
    np.testing.assert_array_equal(mask, inner.action_masks())
    assert canon.action_back(17, perm) == 17


def test_forward_refuses_mismatched_rows() -> None:
    canon = CanonicalSuits(_layout("german_whist_v0", {}))
    with pytest.raises(ValueError, match="one mask per observation"):
        canon.forward(np.zeros((3, canon.layout.size), np.float32), np.ones((2, 52), bool))


def test_wrapper_keeps_the_space_and_set_state_returns_the_renamed_observation() -> None:
    inner = make_single_agent("german_whist_v0", opponents="heuristic")
    env = CanonicalSuitsWrapper(inner)
    assert env.observation_space == inner.observation_space and env.action_space == inner.action_space
    env.reset(seed=4)
    snapshot = inner.get_state()
    obs, *_ = env.step(int(np.flatnonzero(env.action_masks())[0]))
    restored = env.set_state(snapshot)
    np.testing.assert_array_equal(restored, CanonicalSuits(inner.encoder.layout).obs(inner._observe()))
    assert not np.array_equal(restored, obs)


# ---------------------------------------------------------------------- the config and the training env
def test_config_key_is_typed_and_wraps_the_training_env(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from training.config import ConfigError, load_config
    from training.sb3.envs import env_fns

    path = tmp_path / "c.yaml"
    path.write_text("game: german_whist_v0\nn_envs: 1\nbatch_size: 64\n")
    assert load_config(path).canonical_suits is False
    config = load_config(path, {"canonical_suits": True, "reward_scale": 0.5})
    env = env_fns(config)[0]()
    assert any(isinstance(w, CanonicalSuitsWrapper) for w in _wrappers(env))
    obs, _ = env.reset(seed=1)
    assert _trump_onehot(env.get_wrapper_attr("encoder").layout, obs)[0].argmax() == SPADES
    with pytest.raises(ConfigError, match="canonical_suits"):
        load_config(path, {"canonical_suits": "sometimes"})


def _wrappers(env: Any) -> list[Any]:
    out = [env]
    while hasattr(out[-1], "env"):
        out.append(out[-1].env)
    return out


# ---------------------------------------------------------------------- the warm start
def test_canonical_rows_rename_obs_mask_and_label() -> None:
    pytest.importorskip("torch")
    from whist_env.learning.cloning import canonical_rows, generate_dataset

    raw = generate_dataset("german_whist_v0", {}, teacher="heuristic", deals=6, seed=5)
    data = canonical_rows(raw)
    layout = _layout("german_whist_v0", {})
    canon = CanonicalSuits(layout)
    assert data.metadata.canonical_suits and not raw.metadata.canonical_suits
    assert (_trump_onehot(layout, data.obs).argmax(1) == SPADES).all()
    assert data.mask[np.arange(len(data)), data.action].all()  # every label is legal in the renamed game
    perm = canon.perm(raw.obs)
    np.testing.assert_array_equal(canon.action_back(data.action, perm), raw.action)
    np.testing.assert_array_equal(data.outcome, raw.outcome)
    with pytest.raises(ValueError, match="renamed already"):
        canonical_rows(data)
    from whist_env.errors import ModelMismatchError

    with pytest.raises(ModelMismatchError, match="canonical_suits"):
        data.extend(raw)


def test_policy_agent_plays_through_the_renaming() -> None:
    """A PolicyAgent with canonical_suits picks, in the real game, the renamed game's argmax renamed back."""
    torch = pytest.importorskip("torch")
    from whist_env.learning.sb3 import PolicyAgent, make_ppo

    inner = make_single_agent("german_whist_v0", opponents="heuristic")
    policy = make_ppo(CanonicalSuitsWrapper(inner), seed=0, net_arch=[32], n_steps=64, batch_size=64).policy
    agent = PolicyAgent.from_policy(policy, inner.encoder, True, canonical_suits=True)
    canon = CanonicalSuits(inner.encoder.layout)
    rng = np.random.default_rng(0)
    game = inner.game
    for episode in range(3):
        state = game.new_episode(np.random.default_rng(episode))
        while not state.done:
            view = game.view(state, state.to_act)
            obs, mask, perm = canon.forward(*inner.encoder.encode_with_mask(view))
            with torch.no_grad():
                logits = agent.actor(torch.from_numpy(obs)[None])[0].numpy()
            want = canon.action_back(int(np.where(mask.astype(bool), logits, -np.inf).argmax()), perm)
            action = agent.act(view, rng)
            assert action == want and (view.legal >> action) & 1
            game.step(state, action, rng)


# ---------------------------------------------------------------------- a whole run
@pytest.mark.slow
def test_a_tiny_canonical_run_plays_legally_and_records_the_flag(tmp_path: Path) -> None:
    pytest.importorskip("sb3_contrib")
    from train_helpers import tiny_args

    from training.train import main
    from whist_env.agents import make_agent
    from whist_env.agents.pretrained import export_policy
    from whist_env.fingerprint import read_metadata

    config = tmp_path / "tiny.yaml"
    config.write_text(
        "game: german_whist_v0\nnet_arch: [32]\nopponents: {heuristic: 1.0}\neval_opponents: [heuristic]\n"
        "pretrain: {deals: 6, epochs: 1, relabel_rounds: 1, relabel_deals: 3, relabel_epochs: 1, workers: 1}\n"
    )
    assert main(tiny_args(config, tmp_path, "canon", 256, "--set", "canonical_suits=true")) == 0
    run = tmp_path / "canon"
    rows = (run / "eval.csv").read_text().splitlines()
    finals = [r for r in rows if ",final," in r]
    assert finals and "illegal_actions" in rows[0]
    column = rows[0].split(",").index("illegal_actions")
    assert all(int(r.split(",")[column]) == 0 for r in rows[1:])
    assert json.loads((run / "pretrain.json").read_text())["records"]
    metadata = read_metadata(run / "model.zip")
    assert metadata is not None and metadata.canonical_suits
    # The saved model and its numpy export both play it, legally, through the renaming.
    exported = export_policy(run / "model.zip", tmp_path / "canon.npz", "german_whist_v0")
    for spec in (f"model:{run / 'model.zip'}", f"pretrained(path={exported})"):
        agent = make_agent(spec, "german_whist_v0")
        game = get_spec("german_whist_v0").make_rules()
        rng = np.random.default_rng(1)
        state = game.new_episode(rng)
        while not state.done:
            view = game.view(state, state.to_act)
            action = agent.act(view, rng)
            assert (view.legal >> action) & 1
            game.step(state, action, rng)


def test_wrapper_renames_a_dict_observation_with_its_mask() -> None:
    """With a ``{"observation", "action_mask"}`` space, both entries are renamed together and the space is kept."""
    import gymnasium as gym
    from gymnasium import spaces

    inner = make_single_agent("humbug_v0", opponents="random")
    space = spaces.Dict({"observation": inner.observation_space, "action_mask": spaces.MultiBinary(52)})
    as_dict = gym.wrappers.TransformObservation(
        inner, lambda o: {"observation": o, "action_mask": inner.action_masks().astype(np.int8)}, space
    )
    env = CanonicalSuitsWrapper(as_dict)
    assert env.observation_space == space
    canon = CanonicalSuits(inner.encoder.layout)
    rng = np.random.default_rng(2)
    obs, _ = env.reset(seed=0)
    done = False
    while not done:
        want_obs, want_mask, _ = canon.forward(inner._observe(), inner.action_masks())
        np.testing.assert_array_equal(obs["observation"], want_obs)
        np.testing.assert_array_equal(obs["action_mask"].astype(bool), want_mask)
        np.testing.assert_array_equal(env.action_masks(), want_mask)
        obs, _, done, _, info = env.step(rng.choice(np.flatnonzero(obs["action_mask"])))
        assert info["illegal_actions"] == 0


def test_an_action_outside_the_space_reaches_the_env_unchanged() -> None:
    env = CanonicalSuitsWrapper(make_single_agent("german_whist_v0", opponents="random"))
    env.reset(seed=0)
    with pytest.raises(ValueError, match="action 99 is outside the action space 0..51"):
        env.step(99)


@pytest.mark.parametrize(("game_id", "options"), TRUMP_GAMES, ids=[g for g, _ in TRUMP_GAMES])
def test_renamed_columns_are_the_renamed_rows_nonzero_columns(game_id: str, options: dict[str, Any]) -> None:
    """The sparse renaming (:meth:`SuitPermuter.obs_columns`) against the dense one (:meth:`SuitPermuter.obs`, its
    plain twin): on engine positions of every phase, under all 24 permutations, the columns of the non-zero entries
    renamed are the non-zero columns of the renamed rows; the pad column stays the pad."""
    from gymnasium.vector import AutoresetMode

    from whist_env.vector import make_learner_env

    env = make_learner_env(game_id, 64, seed=5, autoreset_mode=AutoresetMode.SAME_STEP, **options)
    plain = SuitPermuter(_layout(game_id, options))
    size = plain.layout.size
    rng = np.random.default_rng(11)
    obs, _ = env.reset(seed=5)
    checked = 0
    for _ in range(40):
        perm = rng.integers(len(PERMUTATIONS), size=len(obs))
        renamed = plain.obs(obs, perm)
        width = int((obs != 0).sum(axis=1).max())
        cols = np.full((len(obs), width + 3), size, np.int64)  # padded beyond the widest row
        for i, row in enumerate(obs):
            nz = np.flatnonzero(row)
            cols[i, : len(nz)] = rng.permutation(nz)  # any order within a row
        out = plain.obs_columns(cols, perm)
        for i in range(len(obs)):
            got = out[i][cols[i] != size]
            assert sorted(got.tolist()) == np.flatnonzero(renamed[i]).tolist()
            assert (out[i][cols[i] == size] == size).all()
            checked += 1
        mask = env.action_masks()
        obs, *_ = env.step(np.array([rng.choice(np.flatnonzero(m)) for m in mask]))
    assert checked == 40 * 64
