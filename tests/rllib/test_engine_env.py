"""The batched league env (:mod:`whist_env.learning.rllib.engine_env`) against the learner env it wraps: the same games
whoever plays the other seats, roles drawn per table and per episode, partners on main, the learner's view renamed."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

from whist_env.agents.pretrained import NumpyPolicy
from whist_env.errors import OptionError
from whist_env.learning.rllib.engine_env import EngineLeagueEnv
from whist_env.vector import make_learner_env
from whist_env.vector.learner import random_actions

GAMES: list[tuple[str, dict[str, Any]]] = [
    ("german_whist_v0", {}),
    ("classic_whist_v0", {"episode": "deal"}),
    ("humbug_v0", {}),
    ("humbug_whist_v0", {"episode": "deal"}),
    ("oh_hell_v0", {"episode": "deal", "num_players": 4}),
]


def policy(obs_size: int, num_actions: int, seed: int) -> NumpyPolicy:
    rng = np.random.default_rng(seed)
    hidden = [(rng.normal(size=(16, obs_size)).astype(np.float32), rng.normal(size=16).astype(np.float32))]
    return NumpyPolicy(hidden, ["tanh"], (rng.normal(size=(num_actions, 16)).astype(np.float32), np.zeros(num_actions)))


def league(game: str, options: dict[str, Any], b: int = 16, **cfg: Any) -> EngineLeagueEnv:
    return EngineLeagueEnv({"game": game, "game_options": options, "num_envs": b, "seed": 5, **cfg})


def legal(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A random legal action per row (any action where nothing is legal: an ended episode ignores it)."""
    m = mask.astype(bool)
    m[~m.any(axis=1), 0] = True
    return random_actions(m, rng)


@pytest.mark.parametrize(("game", "options"), GAMES)
def test_the_heuristic_league_plays_the_learner_envs_games(game: str, options: dict[str, Any]) -> None:
    """With the heuristic on the other sides, the league env's observations, masks, rewards and ends equal the
    learner env's (seat drawn per episode, same seed), step by step through many episodes; in classic whist the
    learner's partner plays main (a numpy policy here; the twin plays its argmax in that seat)."""
    env = league(game, options, opponents={"heuristic": 1.0})
    n = env.num_players
    seats: list[Any] = ["heuristic"] * (n - 1)
    if game == "classic_whist_v0":
        pol = policy(env.single_observation_space["observation"].shape[0], env.single_action_space.n, 7)
        env.set_policy("main", pol)
        seats[1] = lambda o, m: np.where(m, pol.logits(o), -np.inf).argmax(axis=1)
    twin = make_learner_env(game, 16, opponents=seats, learner_seat="random", seed=5, obs_dtype="uint8", **options)
    obs, _ = env.reset(seed=3)
    tobs, _ = twin.reset(seed=3)
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(150):
        np.testing.assert_array_equal(obs["observation"], tobs)
        np.testing.assert_array_equal(obs["action_mask"], twin.action_masks().astype(np.int8))
        acts = legal(obs["action_mask"], rng)
        obs, reward, term, trunc, infos = env.step(acts)
        tobs, treward, tterm, _, _ = twin.step(acts)
        np.testing.assert_array_equal(reward, treward)
        np.testing.assert_array_equal(term, tterm)
        assert not trunc.any()
        if term.any():
            assert set(infos["table"][term]) == {"heuristic"} and infos["_table"].tolist() == term.tolist()
        ended += int(term.sum())
    assert ended > 16


def test_policy_roles_play_the_argmax_of_their_legal_logits() -> None:
    """Main and a snapshot (numpy policies) in the other seats: the same games as the learner env with a batched
    callable playing that argmax, and only policy roles are drawn."""
    env = league("humbug_v0", {}, opponents={"main": 1.0, "snapshot": 1.0}, snapshot_pool=2)
    size, a = env.single_observation_space["observation"].shape[0], env.single_action_space.n
    pol = policy(size, a, 1)
    env.set_policy("main", pol)
    env.set_policy("snapshot_0", pol)
    env.set_snapshots(1)

    def argmax(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        return np.where(mask, pol.logits(obs), -np.inf).argmax(axis=1)

    twin = make_learner_env("humbug_v0", 16, opponents=argmax, learner_seat="random", seed=5, obs_dtype="uint8")
    obs, _ = env.reset(seed=4)
    tobs, _ = twin.reset(seed=4)
    rng = np.random.default_rng(1)
    kinds: set[str] = set()
    for _ in range(120):
        np.testing.assert_array_equal(obs["observation"], tobs)
        acts = legal(obs["action_mask"], rng)
        obs, reward, term, _, infos = env.step(acts)
        tobs, treward, tterm, _, _ = twin.step(acts)
        np.testing.assert_array_equal(reward, treward)
        np.testing.assert_array_equal(term, tterm)
        if term.any():
            kinds.update(infos["table"][term])
    assert kinds == {"self", "snapshot"}


def test_roles_are_drawn_per_table_and_per_episode_by_their_weights() -> None:
    env = league("german_whist_v0", {}, b=64, opponents={"heuristic": 1.0, "random": 1.0}, autoreset_mode="SameStep")
    obs, _ = env.reset(seed=0)
    rng = np.random.default_rng(2)
    tables: list[str] = []
    for _ in range(600):
        obs, _, term, _, infos = env.step(legal(obs["action_mask"], rng))
        if term.any():
            tables += list(infos["table"][term])
            assert "final_obs" in infos and infos["_final_obs"].tolist() == term.tolist()
    assert len(tables) > 1000 and set(tables) == {"heuristic", "random"}
    share = tables.count("heuristic") / len(tables)
    assert 0.45 < share < 0.55, share
    assert (env.inner.episode_counts >= 20).all()


def test_partners_always_play_main_and_each_side_shares_a_role() -> None:
    env = league("classic_whist_v0", {"episode": "deal"}, b=200, opponents={"heuristic": 1.0, "random": 1.0})
    env.set_policy("main", policy(env.single_observation_space["observation"].shape[0], 52, 2))
    env.reset(seed=1)
    names = [env.role_names[r] for r in env.roles[:, 2]]
    assert set(names) == {"main"}  # the learner's partner (relative seat 2)
    assert (env.roles[:, 1] == env.roles[:, 3]).all()  # the other side: one role for both seats
    assert {env.role_names[r] for r in env.roles[:, 1]} == {"heuristic", "random"}


def test_the_learner_sees_trump_as_spades_and_its_actions_are_renamed_back() -> None:
    """``canonical_suits``: the observation and mask are the plain env's renamed (whist_env.encoding.canonical), and
    playing the renamed action of the plain env's choice gives the same game."""
    from whist_env.encoding.canonical import CanonicalSuits

    opts = {"opponents": {"heuristic": 1.0}}
    renamed, plain = league("german_whist_v0", {}, **opts, canonical_suits=True), league("german_whist_v0", {}, **opts)
    canon = CanonicalSuits(renamed.canonical.layout)
    robs, _ = renamed.reset(seed=2)
    pobs, _ = plain.reset(seed=2)
    rng = np.random.default_rng(3)
    for _ in range(80):
        expect_obs, expect_mask, perm = canon.forward(pobs["observation"], pobs["action_mask"])
        np.testing.assert_array_equal(robs["observation"], expect_obs)
        np.testing.assert_array_equal(robs["action_mask"], expect_mask)
        acts = legal(pobs["action_mask"], rng)
        robs, rreward, rterm, _, _ = renamed.step(canon.action(acts, perm))
        pobs, preward, pterm, _, _ = plain.step(acts)
        np.testing.assert_array_equal(rreward, preward)
        np.testing.assert_array_equal(rterm, pterm)


def test_next_step_and_same_step_autoreset_give_the_same_decisions() -> None:
    """One table in each mode, the same actions: the same decisions, rewards and ends; next-step returns an ended
    episode's last observation (mask all zero) and restarts on the next step, same-step restarts at once and hands
    the last observation over in ``final_obs``."""
    nxt = league("humbug_v0", {}, b=1, opponents={"heuristic": 1.0})
    same = league("humbug_v0", {}, b=1, opponents={"heuristic": 1.0}, autoreset_mode=AutoresetMode.SAME_STEP)
    assert nxt.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    assert same.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    nobs, _ = nxt.reset(seed=1)
    sobs, _ = same.reset(seed=1)
    rng = np.random.default_rng(4)
    ended = 0
    for _ in range(120):
        np.testing.assert_array_equal(nobs["observation"], sobs["observation"])
        acts = legal(sobs["action_mask"], rng)
        nobs, nreward, nterm, _, ninfos = nxt.step(acts)
        sobs, sreward, sterm, _, sinfos = same.step(acts)
        np.testing.assert_array_equal(nreward, sreward)
        np.testing.assert_array_equal(nterm, sterm)
        if sterm[0]:
            ended += 1
            assert not nobs["action_mask"].any() and ninfos["table"][0] == sinfos["table"][0] == "heuristic"
            np.testing.assert_array_equal(sinfos["final_obs"], nobs["observation"])
            nobs, reward, term, _, _ = nxt.step(acts)  # next-step's restart: the action is ignored
            assert reward[0] == 0 and not term[0]
    assert ended >= 3


def test_bad_configs_say_what_is_allowed() -> None:
    with pytest.raises(OptionError, match="no batched form"):
        league("german_whist_v0", {}, opponents={"pimc": 1.0})
    with pytest.raises(OptionError, match="weights"):
        league("german_whist_v0", {}, opponents={"heuristic": -1.0})
    env = league("german_whist_v0", {}, opponents={"main": 1.0}, snapshot_pool=1)
    with pytest.raises(OptionError, match="snapshot slot 0..0"):
        env.set_policy("snapshot_3", object())
    with pytest.raises(RuntimeError, match="no policy was set"):
        env.reset(seed=0)  # main plays the other seats, and nobody gave it weights
