"""The arena on the batched engine (``whist_env.evaluation.batched``) against the AEC arena (``whist_env.evaluation``).

The proof: deterministic agents that have both forms (the shipped pretrained network; "lowest" and "highest" legal
action, written once per form) play the same deals of the same seed in both arenas; every table's returns, every
deal's decision and illegal-action counts, and the whole report (timing aside) must be the AEC arena's, for every
game. Random agents are checked for what they promise: reproducible from the seed, uniform over the legal actions,
and in line with the AEC arena's random agent.
"""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from whist_env.agents.pretrained import NumpyPolicy, PretrainedAgent, play_policy
from whist_env.cli.eval import main as eval_main
from whist_env.errors import OptionError
from whist_env.evaluation import ArenaConfig, evaluate, play_deals
from whist_env.evaluation.batched import (
    BatchedPolicy,
    BatchedRandom,
    batched_agent,
    evaluate_batched,
    play_batched,
    sparse_affine,
)
from whist_env.registry import game_ids, get_spec
from whist_env.vector import make
from whist_env.vector.core import RawVectorEnv
from whist_env.vector.heuristics import ported_games
from whist_env.vector.learner import random_actions

NUM_DEALS = 24
BATCH = 20  # smaller than the tables of a run: several batches, the last one smaller


class Lowest:
    """AEC twin of :func:`lowest`: the lowest legal action."""

    name = "lowest"

    def act(self, view: Any, rng: np.random.Generator) -> int:
        return int((view.legal & -view.legal).bit_length() - 1)


class Highest:
    """AEC twin of :func:`highest`: the highest legal action."""

    name = "highest"

    def act(self, view: Any, rng: np.random.Generator) -> int:
        return int(view.legal.bit_length() - 1)


class AlwaysZero:
    """AEC twin of :func:`always_zero`: action 0, legal or not (the arena counts and replaces it)."""

    name = "always_zero"

    def act(self, view: Any, rng: np.random.Generator) -> int:
        return 0


def lowest(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    return mask.argmax(axis=1)


def highest(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    return mask.shape[1] - 1 - mask[:, ::-1].argmax(axis=1)


def always_zero(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    return np.zeros(len(mask), np.int64)


class LowestFromState:
    """An ``act_state`` agent (the protocol of the heuristic ports): reads the engine, plays the lowest legal action."""

    name = "lowest"

    def act_state(self, venv: RawVectorEnv, envs: np.ndarray) -> np.ndarray:
        _, mask = venv.observe_envs(envs, venv.field("to_act")[envs, 0])
        return np.asarray(mask.argmax(axis=1), np.int64)


def assert_same_play(config: ArenaConfig, batched: list[Any], batch_size: int = BATCH) -> None:
    """Every table's returns and every deal's counters of the batched arena equal the AEC arena's."""
    aec, _ = play_deals(config)
    bat, _ = play_batched(config, batched, batch_size=batch_size)
    assert [r.index for r in bat] == list(range(config.num_deals))
    for a, b in zip(aec, bat, strict=True):
        assert [t.assignment for t in b.tables] == [t.assignment for t in a.tables]
        assert [t.returns for t in b.tables] == [t.returns for t in a.tables], f"deal {a.index}"
        assert b.decisions == a.decisions and b.illegal == a.illegal, f"deal {a.index}"


@pytest.mark.parametrize("game_id", game_ids())
def test_the_pretrained_network_plays_the_aec_arenas_deals(game_id: str) -> None:
    config = ArenaConfig(game_id, ("pretrained", Lowest()), NUM_DEALS, seed=11)
    network = batched_agent("pretrained", game_id, config.game_options(), np.random.default_rng(0))
    assert_same_play(config, [network, lowest])


@pytest.mark.parametrize("game_id", game_ids())
def test_the_report_is_the_aec_arenas(game_id: str) -> None:
    aec = evaluate(game_id, ["pretrained", Lowest()], NUM_DEALS, seed=3)
    bat = evaluate_batched(game_id, ["pretrained", lowest], NUM_DEALS, seed=3, batch_size=BATCH)
    assert bat.to_dict(timing=False) == aec.to_dict(timing=False)
    assert bat.timing["engine"] == "batched"
    assert bat.illegal_actions == 0


def positions(game_id: str, options: dict, steps: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """The seat to act's observation and mask in 96 environments over ``steps`` steps of random play."""
    venv = make(game_id, 96, seed=seed, **options)
    ts = venv.reset()
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(steps):
        playing = ts.current_player >= 0
        out.append((ts.observation[playing].copy(), ts.action_mask[playing].astype(bool)))
        acts = np.zeros(venv.num_envs, np.int64)
        acts[playing] = random_actions(out[-1][1], rng)
        ts = venv.step(acts)
    return out


def near_ties(agent: PretrainedAgent) -> SimpleNamespace:
    """The agent's network with every odd action's output a hair above the even one before it: near ties."""
    arrays = agent.policy.arrays()
    w, b = arrays["action_weight"], arrays["action_bias"]
    w[1::2] = w[0:-1:2][: len(w[1::2])] * np.float32(1 + 1e-6)
    b[1::2] = b[0:-1:2][: len(b[1::2])] + np.float32(1e-6)
    policy = NumpyPolicy.from_arrays(arrays)
    return SimpleNamespace(policy=policy, canonical=agent.canonical, deterministic=True, name="near ties")


@pytest.mark.parametrize("game_id", game_ids())
def test_the_batched_network_chooses_as_the_agent_on_every_row(game_id: str) -> None:
    options = dict(get_spec(game_id).single_deal)
    agent = PretrainedAgent(game_id, **options)
    rng = np.random.default_rng(0)
    for net in (agent, near_ties(agent)):
        batched = BatchedPolicy(net, rng)
        for obs, mask in positions(game_id, options, 20, seed=1):
            want = [play_policy(net.policy, net.canonical, o, m, True, rng) for o, m in zip(obs, mask, strict=True)]
            assert batched(obs, mask).tolist() == want


@pytest.mark.parametrize("game_id", ported_games())
def test_the_heuristic_port_plays_the_aec_arenas_deals(game_id: str) -> None:
    config = ArenaConfig(game_id, ("heuristic", Lowest()), NUM_DEALS, seed=13)
    heuristic = batched_agent("heuristic", game_id, config.game_options(), np.random.default_rng(0))
    assert_same_play(config, [heuristic, lowest])
    aec = evaluate(game_id, ["heuristic", "pretrained"], NUM_DEALS, seed=13)
    bat = evaluate_batched(game_id, ["heuristic", "pretrained"], NUM_DEALS, seed=13, batch_size=BATCH)
    assert bat.to_dict(timing=False) == aec.to_dict(timing=False)


@pytest.mark.parametrize("options", [{"trump_mode": "drawn_card"}, {"num_players": 5, "trump_mode": "drawn_card"}])
def test_the_oh_hell_heuristic_port_plays_drawn_trump_deals_as_the_aec_arena(options: dict) -> None:
    config = ArenaConfig("oh_hell_v0", ("heuristic", Lowest()), NUM_DEALS, seed=2, options=options)
    heuristic = batched_agent("heuristic", "oh_hell_v0", config.game_options(), np.random.default_rng(0))
    assert_same_play(config, [heuristic, lowest])


@pytest.mark.parametrize(
    ("game_id", "options", "lineup"),
    [
        ("oh_hell_v0", {"trump_mode": "drawn_card"}, "alternate"),  # the trump card is drawn from the game generator
        ("oh_hell_v0", {"num_players": 5, "trump_mode": "drawn_card"}, "one_vs_rest"),
        ("oh_hell_v0", {"num_players": 3, "hand_size": 17}, "alternate"),
        ("classic_whist_v0", {"honours": True}, "alternate"),
        ("german_whist_v0", {"phase1_follow_suit": False}, "alternate"),
    ],
)
def test_other_options_and_lineups_play_the_aec_arenas_deals(game_id: str, options: dict, lineup: str) -> None:
    config = ArenaConfig(game_id, (Highest(), Lowest()), NUM_DEALS, seed=5, options=options, lineup=lineup)
    assert_same_play(config, [highest, lowest])


def test_three_agents_and_an_act_state_agent_play_the_aec_arenas_deals() -> None:
    config = ArenaConfig("oh_hell_v0", (Highest(), Lowest(), "pretrained"), NUM_DEALS, seed=9)
    network = batched_agent("pretrained", "oh_hell_v0", config.game_options(), np.random.default_rng(0))
    assert_same_play(config, [highest, LowestFromState(), network], batch_size=33)


def test_illegal_actions_are_counted_and_replaced_as_in_the_aec_arena() -> None:
    config = ArenaConfig("humbug_v0", (AlwaysZero(), Highest()), NUM_DEALS, seed=2)
    assert_same_play(config, [always_zero, highest])
    report = evaluate_batched("humbug_v0", [always_zero, highest], 5, seed=2)
    assert report.agent("always_zero").illegal > 0 and report.agent("highest").illegal == 0


def test_the_results_do_not_depend_on_the_batch_size() -> None:
    runs = [
        evaluate_batched("classic_whist_v0", ["pretrained", lowest], 20, seed=1, batch_size=size).to_dict(False)
        for size in (13, 40, 4096)
    ]
    assert runs[0] == runs[1] == runs[2]


def test_random_agents_are_reproducible_from_the_seed() -> None:
    first = evaluate_batched("german_whist_v0", ["random", "random"], 40, seed=4).to_dict(timing=False)
    again = evaluate_batched("german_whist_v0", ["random", "random"], 40, seed=4).to_dict(timing=False)
    other = evaluate_batched("german_whist_v0", ["random", "random"], 40, seed=5).to_dict(timing=False)
    assert first == again
    assert first != other
    assert [a["name"] for a in first["agents"]] == ["random#1", "random#2"]


def test_random_draws_every_legal_action_alike() -> None:
    mask = np.zeros((30000, 6), bool)
    mask[:, [1, 2, 5]] = True
    mask[::2, 0] = True  # half the rows have a fourth legal action
    acts = BatchedRandom(np.random.default_rng(0))(np.zeros((30000, 1)), mask)
    assert mask[np.arange(len(mask)), acts].all()
    even = np.bincount(acts[::2], minlength=6) / 15000
    odd = np.bincount(acts[1::2], minlength=6) / 15000
    np.testing.assert_allclose(even[[0, 1, 2, 5]], 0.25, atol=0.015)
    np.testing.assert_allclose(odd[[1, 2, 5]], 1 / 3, atol=0.015)


def test_random_against_the_network_agrees_with_the_aec_arena() -> None:
    # the two arenas' random agents draw differently: their means must agree within the intervals' error
    aec = evaluate("humbug_v0", ["pretrained", "random"], 150, seed=8)
    bat = evaluate_batched("humbug_v0", ["pretrained", "random"], 150, seed=8)
    a, b = aec.pairs[0].diff, bat.pairs[0].diff
    assert abs(a.mean - b.mean) < 1.5 * (a.half_width + b.half_width)
    assert b.excludes_zero() and b.mean > 0
    assert bat.agent("random").illegal == 0


def test_a_sampling_network_plays_legal_actions_reproducibly() -> None:
    def run(seed: int) -> dict:
        agent = batched_agent("pretrained(deterministic=false)", "humbug_v0", {"num_deals": 1},
                              np.random.default_rng(seed))  # fmt: skip
        return evaluate_batched("humbug_v0", [agent, "random"], 10, seed=0).to_dict(timing=False)

    first = run(1)
    assert first == run(1)
    assert first != run(2)
    assert first["illegal_actions"] == 0


@pytest.mark.parametrize("spec", ["pimc", "model:/x.zip", "rllib:/x"])
def test_an_agent_without_a_batched_form_is_named(spec: str) -> None:
    with pytest.raises(OptionError, match="has no batched form") as err:
        evaluate_batched("humbug_v0", [spec, "random"], 2)
    assert repr(spec) in str(err.value)


def test_bad_calls_are_refused() -> None:
    with pytest.raises(OptionError, match="single deals only"):
        evaluate_batched("oh_hell_v0", ["random", "random"], 2, single_deal=False)
    with pytest.raises(OptionError, match="at least two agents"):
        evaluate_batched("humbug_v0", ["random"], 2)
    with pytest.raises(OptionError, match="partnerships"):
        evaluate_batched("classic_whist_v0", ["random", "random"], 2, lineup="one_vs_rest")
    with pytest.raises(OptionError, match="num_deals"):
        evaluate_batched("humbug_v0", ["random", "random"], 0)
    with pytest.raises(OptionError, match="batch_size"):
        evaluate_batched("humbug_v0", ["random", "random"], 2, batch_size=0)
    with pytest.raises(OptionError, match="a batched agent is"):
        evaluate_batched("humbug_v0", [3, "random"], 2)
    with pytest.raises(ValueError, match="agent 'bad' must return one action per row"):
        evaluate_batched("humbug_v0", [lambda o, m: np.zeros(1, np.int64), "random"], 2, names=["bad", "r"])


def test_whist_eval_batched(tmp_path: Any, capsys: Any) -> None:
    out = tmp_path / "r.json"
    argv = ["humbug_v0", "--agents", "pretrained", "random", "--deals", "30", "--quiet", "--json", str(out)]
    assert eval_main([*argv, "--batched"]) == 0
    text = capsys.readouterr().out
    assert "| pretrained |" in text and "30 deals × 2 duplicate tables" in text
    report = json.loads(out.read_text())
    assert report["timing"]["engine"] == "batched"
    assert report["illegal_actions"] == 0


def test_whist_eval_batched_names_the_agent_without_a_batched_form(capsys: Any) -> None:
    assert eval_main(["humbug_v0", "--agents", "pimc", "random", "--deals", "2", "--quiet", "--batched"]) == 2
    err = capsys.readouterr().err
    assert "agent 'pimc' has no batched form" in err and len(err.strip().splitlines()) == 1
    assert eval_main(["humbug_v0", "--deals", "2", "--quiet", "--batched", "--records", "x"]) == 2
    assert "--records" in capsys.readouterr().err


def test_the_sparse_first_layer_is_the_dense_product() -> None:
    """The plain twin of the batched network's first layer (:func:`sparse_affine`): on random observations about 7%
    non-zero (binary, and with some scalar entries), and on an all-zero row, it gives ``x @ w + b`` to float32
    rounding; a single observation takes the dense product itself."""
    rng = np.random.default_rng(5)
    for rows, d, h in ((1, 10, 3), (37, 1229, 256), (300, 600, 64)):
        x = (rng.random((rows, d)) < 0.07).astype(np.float32)
        x[:, :3] *= rng.random((rows, 3)).astype(np.float32)
        x[0] = 0
        w = rng.standard_normal((d, h)).astype(np.float32)
        b = rng.standard_normal(h).astype(np.float32)
        got = sparse_affine(x, w, b)
        assert got.dtype == np.float32 and got.shape == (rows, h)
        np.testing.assert_allclose(got, x.astype(np.float64) @ w + b, rtol=1e-5, atol=1e-4)
    single = rng.random(10).astype(np.float32)
    np.testing.assert_array_equal(sparse_affine(single, w[:10], b), single @ w[:10] + b)
