"""Pretrained agents: the numpy forward equals the torch actor, exported files are checked like saved models,
the agent plays legal moves alone (no solver, no heuristic, no torch), and the shipped-weights lookup."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from whist_env.agents import make_agent
from whist_env.agents.pretrained import (
    NumpyPolicy,
    PretrainedAgent,
    export_policy,
    load_policy,
    shipped_games,
    shipped_options,
)
from whist_env.errors import ModelMismatchError, OptionError
from whist_env.fingerprint import ModelMetadata, read_metadata
from whist_env.registry import game_ids, get_spec

GAMES = game_ids()


def untrained_model(game_id: str, options: dict[str, Any] | None = None, seed: int = 0, **policy_kwargs: Any) -> Any:
    """A randomly initialised MaskablePPO MlpPolicy with the game's spaces (only the spaces matter)."""
    pytest.importorskip("sb3_contrib")
    import gymnasium as gym
    from gymnasium import spaces
    from sb3_contrib import MaskablePPO

    spec = get_spec(game_id)
    game = spec.make_rules(**(options or {}))
    size = spec.make_encoder(game).size

    class Shapes(gym.Env):
        observation_space = spaces.Box(0.0, 1.0, (size,), np.float32)
        action_space = spaces.Discrete(game.num_actions)

    return MaskablePPO(
        "MlpPolicy", Shapes(), n_steps=8, batch_size=8, device="cpu", seed=seed, policy_kwargs=policy_kwargs
    )


def spread_weights(model: Any, seed: int) -> None:
    """Give every parameter a spread like a trained network's.

    sb3 initialises action_net with gain 0.01, so the logits of an untrained policy lie within ~1e-3 of each
    other; there float32 rounding in the softmax, not the network, would decide which action predict() picks.
    """
    import torch

    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.policy.parameters():
            p.copy_(torch.randn(p.shape, generator=gen) * 0.15)


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One exported untrained policy per game (default options), small hidden layers."""
    root = tmp_path_factory.mktemp("policies")
    out = {}
    for i, game_id in enumerate(GAMES):
        model = untrained_model(game_id, seed=i, net_arch=[32, 32])
        spread_weights(model, seed=i)
        out[game_id] = export_policy(model, root / game_id, game_id)
    return out


def views(game_id: str, seed: int, count: int, **options: Any) -> list[Any]:
    """Views of the seat to act from random play (every seat, every phase), ``count`` of them."""
    game = get_spec(game_id).make_rules(**options)
    rng = np.random.default_rng(seed)
    out: list[Any] = []
    while len(out) < count:
        state = game.new_episode(rng)
        while not state.done and len(out) < count:
            view = game.view(state, state.to_act)
            out.append(view)
            legal = [a for a in range(game.num_actions) if (view.legal >> a) & 1]
            game.step(state, int(rng.choice(legal)), rng)
    return out


def play_episodes(game_id: str, agents: list[Any], seed: int, episodes: int, **options: Any) -> tuple[int, set[int]]:
    """Play ``episodes`` with ``agents`` (one per seat), asserting every action is legal; (decisions, seats)."""
    game = get_spec(game_id).make_rules(**options)
    rng = np.random.default_rng(seed)
    decisions, seats = 0, set()
    for _ in range(episodes):
        state = game.new_episode(rng)
        while not state.done:
            seat = state.to_act
            view = game.view(state, seat)
            action = agents[seat].act(view, rng)
            assert isinstance(action, int)
            assert (view.legal >> action) & 1, f"illegal {game.describe_action(action)}\n{view.summary()}"
            game.step(state, action, rng)
            decisions += 1
            seats.add(seat)
    return decisions, seats


# ----------------------------------------------------------------------------- the numpy forward
@pytest.mark.parametrize(
    ("game_id", "policy_kwargs"),
    [
        ("german_whist_v0", {}),  # the default: [64, 64] and Tanh, as MaskablePPO builds it
        ("classic_whist_v0", {"net_arch": [256, 256]}),  # what training/configs use
        ("oh_hell_v0", {"net_arch": [48], "activation_fn": "ReLU"}),
        ("humbug_v0", {"net_arch": []}),  # no hidden layer: the logits are linear in the observation
    ],
)
def test_numpy_logits_and_argmax_equal_the_torch_policy(
    tmp_path: Path, game_id: str, policy_kwargs: dict[str, Any]
) -> None:
    import torch

    kwargs = dict(policy_kwargs)
    if "activation_fn" in kwargs:
        kwargs["activation_fn"] = getattr(torch.nn, kwargs["activation_fn"])
    model = untrained_model(game_id, seed=3, **kwargs)
    spread_weights(model, seed=3)
    policy = load_policy(export_policy(model, tmp_path / "p.npz", game_id), game_id)

    rng = np.random.default_rng(0)
    size, n = policy.obs_size, policy.num_actions
    encoder = get_spec(game_id).make_encoder(get_spec(game_id).make_rules())
    real = [encoder.encode_with_mask(v) for v in views(game_id, seed=1, count=150)]
    obs = np.concatenate([rng.random((350, size), dtype=np.float32), np.stack([o for o, _ in real])])
    masks = np.concatenate([rng.random((350, n)) < 0.3, np.stack([m.astype(bool) for _, m in real])])
    masks[np.arange(len(masks)), rng.integers(n, size=len(masks))] = True  # at least one legal action

    with torch.no_grad():
        torch_logits = model.policy.get_distribution(torch.from_numpy(obs)).distribution.logits.numpy()
        # the distribution normalises its logits (log-softmax); the network's own output is what we export
        raw = model.policy.action_net(model.policy.mlp_extractor.forward_actor(torch.from_numpy(obs))).numpy()
    ours = policy.logits(obs)
    assert ours.shape == (len(obs), n) and ours.dtype == np.float32
    np.testing.assert_allclose(ours, raw, rtol=1e-5, atol=1e-5)
    shifted = (
        ours - np.log(np.exp(ours - ours.max(1, keepdims=True)).sum(1, keepdims=True)) - ours.max(1, keepdims=True)
    )
    np.testing.assert_allclose(shifted, torch_logits, rtol=1e-4, atol=1e-4)
    assert np.ptp(ours, axis=1).min() > 0.05  # the weights spread the logits: the argmax below is not a tie

    from whist_env.agents.pretrained import choose

    for row, mask in zip(obs, masks, strict=True):
        ppo, _ = model.predict(row, deterministic=True, action_masks=mask)
        assert choose(policy.logits(row), mask, True, rng) == int(ppo)
    batch, _ = model.predict(obs, deterministic=True, action_masks=masks)
    assert np.array_equal(np.where(masks, ours, -np.inf).argmax(1), batch)


def test_policy_file_round_trip_and_metadata(tmp_path: Path) -> None:
    model = untrained_model("german_whist_v0", net_arch=[16, 8])
    path = export_policy(model, tmp_path / "sub" / "gw", "german_whist_v0")  # .npz appended, folder made
    assert path == tmp_path / "sub" / "gw.npz" and path.is_file()
    assert read_metadata(path) == ModelMetadata.for_game("german_whist_v0")  # the same record as a model .zip
    with np.load(path, allow_pickle=False) as data:
        policy = NumpyPolicy.from_arrays(data)
        assert list(data["activations"]) == ["tanh", "tanh"]
        assert data["hidden_0_weight"].shape == (16, policy.obs_size)  # torch's (out, in)
    assert policy.hidden_sizes == [16, 8] and policy.num_actions == get_spec("german_whist_v0").make_rules().num_actions
    again = NumpyPolicy.from_arrays(policy.arrays())
    x = np.random.default_rng(0).random((5, policy.obs_size), dtype=np.float32)
    assert np.array_equal(again.logits(x), policy.logits(x))
    # a saved model .zip exports too, after its own metadata check
    zipped = tmp_path / "model.zip"
    model.save(zipped)
    from whist_env.fingerprint import save_model_metadata

    save_model_metadata(zipped, "german_whist_v0")
    from_zip = load_policy(export_policy(zipped, tmp_path / "z.npz", "german_whist_v0"), "german_whist_v0")
    assert np.allclose(from_zip.logits(x), policy.logits(x), atol=1e-6)
    # a NumpyPolicy (ppo_vec's network, as whist_env.learning.net.numpy_actor gives it) goes through the same writer
    direct = export_policy(policy, tmp_path / "n.npz", "german_whist_v0", canonical_suits=True)
    assert read_metadata(direct) == ModelMetadata.for_game("german_whist_v0", canonical_suits=True)
    assert np.array_equal(load_policy(direct, "german_whist_v0").logits(x), policy.logits(x))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.zip", "n.npz", "sub", "z.npz"]  # no .tmp left


def test_export_refuses_what_numpy_cannot_reproduce(tmp_path: Path) -> None:
    import torch

    model = untrained_model("humbug_v0", activation_fn=torch.nn.GELU)
    with pytest.raises(OptionError, match="GELU; supported activations: Tanh, ReLU"):
        export_policy(model, tmp_path / "p.npz", "humbug_v0")
    model = untrained_model("humbug_v0", activation_fn=torch.nn.LeakyReLU)
    assert export_policy(model, tmp_path / "leaky.npz", "humbug_v0").is_file()  # torch's default slope
    with pytest.raises(OptionError, match="encodes .* values and has .* actions; pass the game and options"):
        export_policy(untrained_model("humbug_v0"), tmp_path / "p.npz", "german_whist_v0")
    assert not (tmp_path / "p.npz").exists()


def test_export_without_torch_names_the_train_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch now raises ImportError
    with pytest.raises(ImportError, match=r"needs torch: pip install 'whist_env\[train\]'"):
        export_policy(object(), tmp_path / "p.npz", "humbug_v0")


def test_damaged_or_foreign_files_are_refused(tmp_path: Path, exported: dict[str, Path]) -> None:
    with pytest.raises(OptionError, match="there is no exported policy at"):
        PretrainedAgent("humbug_v0", path=tmp_path / "missing.npz")
    text = tmp_path / "notes.npz"
    text.write_text("not a zip")
    with pytest.raises(OptionError, match="is not an exported policy"):
        make_agent(f"pretrained(path={text})", "humbug_v0")
    bare = tmp_path / "bare.npz"
    np.savez(bare, action_weight=np.zeros((2, 3), np.float32))
    with pytest.warns(UserWarning, match="carries no whist_env metadata"), pytest.raises(OptionError) as err:
        load_policy(bare, "humbug_v0")
    # it said "lacks the array 'policy_format is not a file in the archive'" (numpy's KeyError, quoted whole)
    assert "bare.npz lacks the array 'policy_format': it is not a policy written by" in str(err.value)
    arrays = dict(np.load(exported["humbug_v0"]))  # a good file, then damaged one way at a time
    for name, value, says in [
        ("action_bias", np.full_like(arrays["action_bias"], np.nan), "not finite numbers"),  # was played
        ("hidden_0_weight", np.where(arrays["hidden_0_weight"] > 0, np.inf, 0).astype(np.float32), "not finite"),
        ("policy_format", np.array("abc"), "is not a policy written by whist_env's export_policy"),
    ]:
        damaged = tmp_path / f"damaged_{name}.npz"
        np.savez(damaged, **{**arrays, name: value})
        with pytest.raises(OptionError, match=says), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the copy carries no metadata: that is warned about, not the point
            load_policy(damaged, "humbug_v0")


# ----------------------------------------------------------------------------- the agent
@pytest.mark.parametrize("game_id", GAMES)
def test_pretrained_agent_plays_legal_moves_in_every_seat(game_id: str, exported: dict[str, Path]) -> None:
    game = get_spec(game_id).make_rules()
    agents = [make_agent(f"pretrained(path={exported[game_id]})", game_id) for _ in range(game.num_players)]
    assert all(isinstance(a, PretrainedAgent) for a in agents)
    decisions, seats = play_episodes(game_id, agents, seed=5, episodes=2)
    assert seats == set(range(game.num_players)) and decisions > 0
    sampler = make_agent(f"pretrained(path={exported[game_id]}, deterministic=false)", game_id)
    decisions, _ = play_episodes(game_id, [sampler] * game.num_players, seed=6, episodes=1)
    assert decisions > 0


def test_act_needs_no_solver_and_no_heuristic(monkeypatch: pytest.MonkeyPatch, exported: dict[str, Path]) -> None:
    from whist_env.agents import endgame
    from whist_env.agents.heuristic import HeuristicAgent
    from whist_env.search.sampler import DealSampler
    from whist_env.search.solver import Solver

    def forbidden(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a pretrained agent called the solver or a heuristic")

    monkeypatch.setattr(Solver, "solve", forbidden)
    monkeypatch.setattr(DealSampler, "sample", forbidden)
    monkeypatch.setattr(endgame, "solve", forbidden)
    monkeypatch.setattr(HeuristicAgent, "act", forbidden)
    for game_id in GAMES:
        monkeypatch.setattr(get_spec(game_id).heuristic_cls(), "act", forbidden)
    with pytest.raises(AssertionError, match="called the solver"):  # the trap works
        make_agent("heuristic", "german_whist_v0").act(views("german_whist_v0", 0, 1)[0], np.random.default_rng(0))
    for game_id in GAMES:
        n = get_spec(game_id).make_rules().num_players
        decisions, _ = play_episodes(game_id, [PretrainedAgent(game_id, path=exported[game_id])] * n, 7, 1)
        assert decisions > 0


def test_loading_for_other_options_is_refused(tmp_path: Path) -> None:
    model = untrained_model("german_whist_v0", options={"include_history": True}, net_arch=[8])
    path = export_policy(model, tmp_path / "gw.npz", "german_whist_v0", {"include_history": True})
    with pytest.raises(
        ModelMismatchError, match="trained with include_history=True, loading for include_history=False"
    ):
        make_agent(f"pretrained(path={path})", "german_whist_v0", include_history=False)
    with pytest.raises(ModelMismatchError, match="was trained for german_whist_v0, not humbug_v0"):
        PretrainedAgent("humbug_v0", path=path)
    # an episode-length option is forgiven only where it leaves the layout alone; German Whist's match score is
    # in the observation
    with pytest.raises(ModelMismatchError, match="trained with num_deals=1, loading for num_deals=3; the observation"):
        PretrainedAgent("german_whist_v0", path=path, num_deals=3)


def test_playing_a_pretrained_agent_imports_no_torch(exported: dict[str, Path]) -> None:
    code = textwrap.dedent(
        f"""
        import sys
        import numpy as np
        import whist_env
        from whist_env.agents import make_agent
        from whist_env.registry import get_spec

        game = get_spec("oh_hell_v0").make_rules()
        agent = make_agent({f"pretrained(path={exported['oh_hell_v0']})"!r}, "oh_hell_v0")
        rng = np.random.default_rng(0)
        state = game.new_episode(rng)
        steps = 0
        while not state.done:
            view = game.view(state, state.to_act)
            game.step(state, agent.act(view, rng), rng)
            steps += 1
        assert steps > 0
        loaded = [m for m in ("torch", "stable_baselines3", "sb3_contrib", "numba") if m in sys.modules]
        assert not loaded, loaded
        """
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_model_agent_numpy_forward_plays_as_torch(tmp_path: Path) -> None:
    from whist_env.agents.model import ModelAgent
    from whist_env.fingerprint import save_model_metadata

    model = untrained_model("humbug_v0", net_arch=[64, 64])
    spread_weights(model, seed=1)
    path = tmp_path / "model.zip"
    model.save(path)
    save_model_metadata(path, "humbug_v0")
    fast, slow = ModelAgent(path, "humbug_v0"), ModelAgent(path, "humbug_v0", numpy_forward=False)
    fast.load(), slow.load()
    assert fast._numpy is not None and slow._numpy is None
    for view in views("humbug_v0", seed=2, count=300):
        assert fast.act(view, np.random.default_rng(0)) == slow.act(view, np.random.default_rng(0))
    sampled = ModelAgent(path, "humbug_v0", deterministic=False)
    view = views("humbug_v0", seed=4, count=1)[0]
    picks = {sampled.act(view, np.random.default_rng(s)) for s in range(30)}
    assert all((view.legal >> a) & 1 for a in picks)


# ----------------------------------------------------------------------------- hybrids and shipped weights
@pytest.mark.parametrize("game_id", ["german_whist_v0", "humbug_whist_v0"])  # searched card play; an exchange too
def test_pimc_with_a_pretrained_fallback_plays_legal_moves(game_id: str, exported: dict[str, Path]) -> None:
    from whist_env.search.pimc import PIMCAgent

    spec = f"pimc(samples=2, max_tricks=3, fallback=pretrained(path={exported[game_id]}))"
    hybrid = make_agent(spec, game_id)
    plain = make_agent("pimc(samples=2, max_tricks=3)", game_id)
    assert isinstance(hybrid, PIMCAgent) and isinstance(hybrid.fallback, PretrainedAgent)
    # only the fallback differs from plain PIMC at the same samples and depth
    assert (hybrid.samples, hybrid.max_tricks, hybrid.horizon) == (plain.samples, plain.max_tricks, plain.horizon)
    n = get_spec(game_id).make_rules().num_players
    decisions, _ = play_episodes(game_id, [hybrid, *(make_agent("random", game_id) for _ in range(n - 1))], 3, 1)
    assert decisions > 0
    colon = make_agent(f"pimc:fallback=pretrained:{exported[game_id]}", game_id)
    assert isinstance(colon.fallback, PretrainedAgent) and colon.fallback.path == str(exported[game_id])


@pytest.mark.parametrize("game_id", GAMES)
def test_pretrained_without_shipped_weights_says_how_to_use_your_own(game_id: str, nothing_shipped: None) -> None:
    texts = ("pretrained", "pimc:fallback=pretrained") if get_spec(game_id).search else ("pretrained",)
    for text in texts:
        with pytest.raises(
            OptionError, match=f"not available yet for {game_id}: no pretrained weights are shipped"
        ) as err:
            make_agent(text, game_id)
        assert "pretrained(path=" in str(err.value) and "export_policy" in str(err.value)


@pytest.mark.parametrize("game_id", GAMES)
def test_every_game_ships_a_network_that_plays_legal_moves_in_every_seat(game_id: str) -> None:
    assert game_id in shipped_games()
    spec = get_spec(game_id)
    n = spec.make_rules().num_players
    single = dict(spec.single_deal)  # the options it was trained on: one deal per episode (the arena's unit)
    agent = make_agent("pretrained", game_id, **single)
    assert isinstance(agent, PretrainedAgent) and agent.path is None
    decisions, seats = play_episodes(game_id, [agent] * n, seed=12, episodes=3, **single)
    assert seats == set(range(n)) and decisions > 0
    if ModelMetadata.for_game(game_id).layout_fingerprint == ModelMetadata.for_game(game_id, single).layout_fingerprint:
        with warnings.catch_warnings():  # whole games have the same layout (a warning says the length differs)
            warnings.simplefilter("ignore")
            whole = make_agent("pretrained", game_id)
        decisions, seats = play_episodes(game_id, [whole] * n, seed=11, episodes=1)
        assert seats == set(range(n)) and decisions > 0
    else:  # Oh Hell's match schedule has other pieces: refused, naming the option to pass
        with pytest.raises(ModelMismatchError, match="trained with episode='deal'"):
            make_agent("pretrained", game_id)


@pytest.mark.parametrize("game_id", GAMES)
def test_shipped_options_are_those_the_network_was_trained_with(game_id: str) -> None:
    """What the lobby sets for a pretrained seat: every option, the one-deal ones with the rest at their defaults; a
    pretrained agent takes them without a warning."""
    spec = get_spec(game_id)
    trained = shipped_options(game_id)
    assert trained == {**spec.make_rules().config.as_dict(), **spec.single_deal}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert isinstance(make_agent("pretrained", game_id, **trained), PretrainedAgent)


def test_shipped_options_are_none_without_shipped_weights(nothing_shipped: None) -> None:
    assert all(shipped_options(game_id) is None for game_id in GAMES)


def test_shipped_weights_are_read_once_per_game_and_options() -> None:
    """A server makes a pretrained agent for every table it opens: the file is read and checked once per game and
    options, and the agents share the (read-only) network; other options are checked again."""
    from whist_env.agents.pretrained import shipped_policy

    single = dict(get_spec("oh_hell_v0").single_deal)
    first, second = (make_agent("pretrained", "oh_hell_v0", **single) for _ in range(2))
    assert isinstance(first, PretrainedAgent) and isinstance(second, PretrainedAgent)
    assert first.policy is second.policy is shipped_policy("oh_hell_v0", single)
    assert first.encoder is not second.encoder  # what an agent changes as it plays stays its own
    with pytest.raises(ModelMismatchError, match="trained with episode='deal'"):
        shipped_policy("oh_hell_v0", {})


def test_shipped_weights_are_read_from_the_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, exported: dict[str, Path]
) -> None:
    """The lookup reads the file the spec names (``GameSpec.pretrained``) with importlib.resources (a stand-in
    package here)."""
    from whist_env import registry

    package = tmp_path / "fake_shipped"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "weights.npz").write_bytes(exported["humbug_v0"].read_bytes())
    monkeypatch.syspath_prepend(str(tmp_path))
    for game_id in GAMES:
        shipped = "fake_shipped:weights.npz" if game_id == "humbug_v0" else None
        monkeypatch.setitem(registry._LOADED, game_id, dataclasses.replace(get_spec(game_id), pretrained=shipped))
    assert shipped_games() == ["humbug_v0"]
    agent = make_agent("pretrained", "humbug_v0")
    assert isinstance(agent, PretrainedAgent) and agent.name == "pretrained"
    assert play_episodes("humbug_v0", [agent, agent], seed=0, episodes=1)[0] > 0
    with pytest.raises(OptionError, match=r"not available yet for oh_hell_v0.*games with weights: humbug_v0"):
        make_agent("pretrained", "oh_hell_v0")
    with pytest.raises(OptionError, match="mode="):
        make_agent("pretrained", "humbug_v0", mode="blindfolded")


def test_every_shipped_network_has_a_model_card() -> None:
    import importlib.resources

    fields = ("Training command", "Time on 2 cores", "Data", "Evaluation", "Fingerprint")
    template = (Path(__file__).resolve().parents[2] / "docs" / "model_card_template.md").read_text(encoding="utf-8")
    assert all(f"## {field}" in template for field in fields)  # the template asks for what is checked here
    shipped = shipped_games()
    assert shipped == sorted(g for g in shipped if g in GAMES)  # weights only for known games
    for game_id in shipped:
        spec = get_spec(game_id)
        card_file, weights = spec.model_card_file(), spec.pretrained_file()
        assert card_file is not None and weights is not None
        card = card_file.read_text(encoding="utf-8")
        with importlib.resources.as_file(weights) as path:
            metadata = read_metadata(path)
        assert metadata is not None and metadata.layout_fingerprint in card
        for field in fields:
            assert field in card, (game_id, field)
        assert (Path(str(weights)).parent / "__init__.py").is_file()  # the package the wheel carries them in


def test_the_arrays_of_a_policy_are_copies() -> None:
    """Changing what ``arrays()`` gives changes no network: the shipped ones are loaded once and shared (a test that
    changed the output bias it got once changed the shipped network for every later test in its process)."""
    policy = PretrainedAgent("german_whist_v0").policy
    obs = np.zeros(policy.obs_size, np.float32)
    before = policy.logits(obs).copy()
    for array in policy.arrays().values():
        if array.ndim:
            array[...] = 7
    np.testing.assert_array_equal(policy.logits(obs), before)
