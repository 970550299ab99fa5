"""The single-agent Gymnasium env (``whist_env/envs/single_agent.py``): checkers, reward attribution,
illegal actions, seeding, opponents, partners, exact snapshots and vectorised use."""

from __future__ import annotations

import random
import subprocess
import sys
import warnings
from typing import Any

import numpy as np
import pytest
from gymnasium import spaces

from whist_env.agents.base import RandomAgent
from whist_env.envs.single_agent import OpponentPool, SingleAgentWhistEnv, make_single_agent
from whist_env.errors import OptionError
from whist_env.registry import game_ids
from whist_env.view import PlayerView

CASES: list[tuple[str, dict[str, Any]]] = [(g, {}) for g in game_ids()] + [
    ("classic_whist_v0", {"partner": "self"}),
    ("oh_hell_v0", {"num_players": 3}),
]
IDS = [f"{g}{'-' + '-'.join(f'{k}={v}' for k, v in kw.items()) if kw else ''}" for g, kw in CASES]


def play_random(env: SingleAgentWhistEnv, rng: np.random.Generator) -> tuple[float, list[float], dict]:
    """One episode with uniformly random legal learner actions: (sum of rewards, rewards, last info)."""
    rewards = []
    while True:
        action = int(rng.choice(np.flatnonzero(env.action_masks())))
        _, r, terminated, truncated, info = env.step(action)
        rewards.append(r)
        assert not truncated
        if terminated:
            return float(sum(rewards)), rewards, info


# ---------------------------------------------------------------------- conformance with the checkers
@pytest.mark.parametrize(("game", "kwargs"), CASES, ids=IDS)
def test_gymnasium_and_sb3_check_env(game: str, kwargs: dict) -> None:
    sb3_checker = pytest.importorskip("stable_baselines3.common.env_checker")
    from gymnasium.utils.env_checker import check_env

    env = make_single_agent(game, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a checker warning is a failure here
        check_env(env, skip_render_check=True)
        sb3_checker.check_env(env, warn=True)


@pytest.mark.parametrize(("game", "kwargs"), CASES, ids=IDS)
def test_spaces_and_masks(game: str, kwargs: dict) -> None:
    env = make_single_agent(game, **kwargs)
    obs, info = env.reset(seed=3)
    assert obs.dtype == np.float32 and env.observation_space.contains(obs)
    assert env.action_space == spaces.Discrete(env.game.num_actions)
    rng = np.random.default_rng(0)
    for _ in range(3):
        done = False
        while not done:
            mask = env.action_masks()
            assert mask.dtype == bool and mask.shape == (env.game.num_actions,)
            state = env.game_state
            # The learner is to act, and the mask is exactly its legal actions.
            assert state.to_act == info["acting_seat"]
            assert state.to_act == env.learner_seat or kwargs.get("partner") == "self"
            legal = env.game.legal_mask(state)
            assert [int(a) for a in np.flatnonzero(mask)] == [a for a in range(env.game.num_actions) if legal >> a & 1]
            obs, _, done, _, info = env.step(int(rng.choice(np.flatnonzero(mask))))
            assert env.observation_space.contains(obs)
        assert not env.action_masks().any()
        obs, info = env.reset()


# ---------------------------------------------------------------------- reward attribution (STYLE.md 1)
@pytest.mark.parametrize(("game", "kwargs"), CASES, ids=IDS)
def test_rewards_sum_to_the_learners_return(game: str, kwargs: dict) -> None:
    env = make_single_agent(game, **kwargs)
    rng = np.random.default_rng(1)
    episodes = 3 if game == "oh_hell_v0" else 10
    env.reset(seed=11)
    for _ in range(episodes):
        total, _, info = play_random(env, rng)
        seat = info["learner_seat"]
        assert total == pytest.approx(env.game_state.returns[seat])
        assert info["returns"][seat] == pytest.approx(total)
        env.reset()


def test_terminal_reward_reaches_the_learner_when_the_opponent_moves_last() -> None:
    # German Whist: whoever leads the 26th trick, the other player plays the episode's last card. The
    # learner must still get the ±1 of the deal from its own last step (PettingZoo issue 1147).
    env = make_single_agent("german_whist_v0", opponents=RandomAgent())
    rng = np.random.default_rng(0)
    seen = 0
    for seed in range(40):
        env.reset(seed=seed)
        total, rewards, info = play_random(env, rng)
        state = env.game_state
        last_seat = state.history[-1][0] if state.history else state.last_trick[-1][0]
        seat = info["learner_seat"]
        final = state.returns[seat]
        assert final != 0  # German Whist's default reward is ±1, never a draw
        assert rewards[-1] == final and all(r == 0 for r in rewards[:-1])
        if last_seat != seat:
            seen += 1
    assert seen >= 5  # the case under test did occur


def test_rewards_earned_during_the_opponents_moves_are_paid_on_the_next_step() -> None:
    # Oh Hell pays every deal's score at the end of that deal, often on an opponent's card; a match
    # has many deals, so rewards arrive mid-episode and must be paid on the learner's next step.
    env = make_single_agent("oh_hell_v0", opponents="random", num_players=3, max_cards=3)
    rng = np.random.default_rng(5)
    env.reset(seed=2)
    paid_after_opponent = 0
    for _ in range(6):
        before = list(env.game_state.returns)
        while True:
            seat = env.learner_seat
            action = int(rng.choice(np.flatnonzero(env.action_masks())))
            _, r, done, _, _ = env.step(action)
            after = env.game_state.returns
            assert r == pytest.approx(after[seat] - before[seat])
            if r != 0 and env.game_state.history and env.game_state.history[-1][0] != seat:
                paid_after_opponent += 1
            before = list(after)
            if done:
                break
        env.reset()
    assert paid_after_opponent > 0


# ---------------------------------------------------------------------- illegal actions (STYLE.md 2)
def test_illegal_action_ends_the_episode_with_a_penalty_and_is_counted() -> None:
    env = make_single_agent("humbug_v0", illegal_reward=-3.0)
    env.reset(seed=0)
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    before = env.game_state.copy()
    obs, r, terminated, truncated, info = env.step(illegal)
    assert (r, terminated, truncated) == (-3.0, True, False)
    assert info["illegal_actions"] == 1 and info["illegal_action"] == illegal and "cannot play" in env.illegal_reason
    assert env.game_state.hands == before.hands  # nothing was played in its place
    assert not env.action_masks().any()
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)
    env.reset()
    _, _, _, _, info = env.step(int(np.flatnonzero(env.action_masks())[0]))
    assert info["illegal_actions"] == 0


@pytest.mark.parametrize("action", [-1, 52, 1.5, "3", True])
def test_actions_outside_the_space_raise(action: object) -> None:
    env = make_single_agent("german_whist_v0")
    env.reset(seed=0)
    with pytest.raises(ValueError, match="action"):
        env.step(action)


def test_step_before_reset_raises() -> None:
    with pytest.raises(RuntimeError, match="reset"):
        make_single_agent("german_whist_v0").step(0)


# ---------------------------------------------------------------------- seeding (STYLE.md 7)
def rollout(env: SingleAgentWhistEnv, seed: int, noise: bool = False) -> list:
    out = []
    obs, info = env.reset(seed=seed)
    out.append((obs.tobytes(), info["learner_seat"]))
    for _ in range(3):
        done = False
        while not done:
            if noise:
                random.random()
                np.random.rand()
            action = int(np.flatnonzero(env.action_masks())[-1])
            obs, r, done, _, _ = env.step(action)
            out.append((obs.tobytes(), r))
        obs, info = env.reset()
        out.append((obs.tobytes(), info["learner_seat"]))
    return out


@pytest.mark.parametrize("game", game_ids())
def test_same_seed_same_episodes_whatever_the_global_rng(game: str) -> None:
    opponents = "heuristic" if game != "oh_hell_v0" else "random"
    a = rollout(make_single_agent(game, opponents=opponents), 7)
    random.seed(123)
    np.random.seed(123)
    b = rollout(make_single_agent(game, opponents=opponents), 7, noise=True)
    assert a == b
    c = rollout(make_single_agent(game, opponents=opponents), 8)
    assert a != c


# ---------------------------------------------------------------------- seats, opponents, partners
def test_learner_seat_modes() -> None:
    env = make_single_agent("oh_hell_v0", num_players=3, episode="deal", hand_size=2)
    env.reset(seed=0)
    seats = set()
    for _ in range(30):
        _, info = env.reset()
        seats.add(info["learner_seat"])
    assert seats == {0, 1, 2}
    env = make_single_agent("oh_hell_v0", learner_seat="rotate", num_players=3, episode="deal", hand_size=2)
    assert [env.reset(seed=0 if i == 0 else None)[1]["learner_seat"] for i in range(6)] == [0, 1, 2, 0, 1, 2]
    env = make_single_agent("humbug_v0", learner_seat=1)
    assert all(env.reset(seed=s)[1]["learner_seat"] == 1 for s in range(5))
    assert env.reset(options={"learner_seat": 0})[1]["learner_seat"] == 0


@pytest.mark.parametrize("bad", [2, -1, "left", True, 1.0])
def test_bad_learner_seat(bad: object) -> None:
    with pytest.raises(OptionError, match="learner_seat"):
        make_single_agent("humbug_v0", learner_seat=bad)  # type: ignore[arg-type]


class Recorder:
    """Records the seats it plays for (and plays randomly)."""

    name = "recorder"

    def __init__(self) -> None:
        self.seats: set[int] = set()
        self.inner = RandomAgent()

    def act(self, view: PlayerView, rng: np.random.Generator) -> int:
        self.seats.add(view.seat)
        return self.inner.act(view, rng)


def test_opponents_by_relative_seat() -> None:
    left, across, right = Recorder(), Recorder(), Recorder()
    env = make_single_agent("oh_hell_v0", opponents=[left, across, right], learner_seat=1, episode="deal")
    env.reset(seed=0)
    play_random(env, np.random.default_rng(0))
    assert (left.seats, across.seats, right.seats) == ({2}, {3}, {0})
    env.set_opponents({1: right, 2: left, 3: across})
    env.reset()
    play_random(env, np.random.default_rng(0))
    assert right.seats == {0, 2}


def test_bad_opponent_specs() -> None:
    with pytest.raises(OptionError, match="3 agents"):
        make_single_agent("oh_hell_v0", opponents=["random", "random"])
    with pytest.raises(OptionError, match="relative seats"):
        make_single_agent("oh_hell_v0", opponents={1: "random", 2: "random"})
    with pytest.raises(OptionError, match="unknown agent"):
        make_single_agent("humbug_v0", opponents="grandmaster")
    with pytest.raises(OptionError, match="not a partnership game"):
        make_single_agent("humbug_v0", partner="self")
    with pytest.raises(OptionError, match="partner seat"):
        make_single_agent("oh_hell_v0", opponents={1: "self", 2: "random", 3: "random"})
    with pytest.raises(OptionError, match="unknown game"):
        make_single_agent("bridge_v0")
    with pytest.raises(OptionError):
        make_single_agent("humbug_v0", mode="blindfolded")


def test_partner_self_plays_both_partnership_seats() -> None:
    env = make_single_agent("classic_whist_v0", partner="self", opponents="heuristic", episode="deal")
    env.reset(seed=4)
    acting = set()
    done = False
    while not done:
        acting.add(env.game_state.to_act)
        _, r, done, _, info = env.step(int(np.flatnonzero(env.action_masks())[0]))
    seat = info["learner_seat"]
    assert acting == {seat, (seat + 2) % 4}
    assert r == env.game_state.returns[seat] == env.game_state.returns[(seat + 2) % 4]


def test_partner_agent_plays_the_partner_seat() -> None:
    partner = Recorder()
    env = make_single_agent("classic_whist_v0", partner=partner, learner_seat=3, episode="deal")
    env.reset(seed=0)
    play_random(env, np.random.default_rng(0))
    assert partner.seats == {1}


def test_opponent_pool_draws_per_episode_with_the_env_generator() -> None:
    a, b = Recorder(), Recorder()
    env = make_single_agent("humbug_v0", opponents=OpponentPool([a, b], weights=[1, 3]), learner_seat=0)
    env.reset(seed=0)
    counts = {"a": 0, "b": 0}
    for _ in range(40):
        _, info = env.reset()
        which = env._agents[1]
        counts["a" if which is a else "b"] += 1
    assert counts["a"] > 0 and counts["b"] > counts["a"]
    with pytest.raises(OptionError, match="weights"):
        OpponentPool([a, b], weights=[1.0])
    with pytest.raises(OptionError, match="at least one"):
        OpponentPool([])


# ---------------------------------------------------------------------- exact snapshots (resume)
@pytest.mark.parametrize("game", game_ids())
def test_get_state_set_state_continues_exactly(game: str) -> None:
    env = make_single_agent(game, opponents=OpponentPool(["random", "heuristic"]))
    env.reset(seed=9)
    rng = np.random.default_rng(0)
    for _ in range(5):
        env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
    snap = env.get_state()

    def continue_from(e: SingleAgentWhistEnv) -> list:
        r = np.random.default_rng(1)
        out: list[Any] = []
        for _ in range(60):
            obs, rew, done, _, _ = e.step(int(r.choice(np.flatnonzero(e.action_masks()))))
            out.append((obs.tobytes(), rew, done))
            if done:
                obs, _ = e.reset()
                out.append(obs.tobytes())
        return out

    expected = continue_from(env)
    fresh = make_single_agent(game, opponents=OpponentPool(["random", "heuristic"]))
    obs = fresh.set_state(snap)
    assert fresh.action_masks().any() and obs.dtype == np.float32
    assert continue_from(fresh) == expected


# ---------------------------------------------------------------------- vectorised, lazy imports
def _make() -> SingleAgentWhistEnv:
    return make_single_agent("german_whist_v0", opponents="heuristic")


def test_subproc_vec_env_with_masks() -> None:
    vec_env = pytest.importorskip("stable_baselines3.common.vec_env")
    venv = vec_env.SubprocVecEnv([_make, _make])
    try:
        venv.seed(0)
        venv.reset()
        for _ in range(60):
            masks = np.stack(venv.env_method("action_masks"))
            actions = np.array([int(np.flatnonzero(m)[0]) for m in masks])
            _, _, _, infos = venv.step(actions)
            assert all(i["illegal_actions"] == 0 for i in infos)
        states = venv.env_method("get_state")
        assert len(states) == 2
    finally:
        venv.close()


def test_import_does_not_pull_torch_or_sb3() -> None:
    code = (
        "import sys, whist_env.envs.single_agent as m; m.make_single_agent('humbug_v0').reset(seed=0); "
        "bad = [k for k in ('torch', 'stable_baselines3', 'sb3_contrib') if k in sys.modules]; "
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_render_shows_the_learners_view() -> None:
    env = make_single_agent("german_whist_v0", render_mode="ansi", learner_seat=0)
    env.reset(seed=0)
    text = env.render()
    assert isinstance(text, str) and "player_0" in text
    with pytest.raises(OptionError, match="render_mode"):
        make_single_agent("german_whist_v0", render_mode="rgb_array")


class Remembering:
    """An opponent with memory (the cards it was dealt), exposed through get_state/set_state."""

    name = "remembering"

    def __init__(self) -> None:
        self.memory: dict[int, int] = {}

    def act(self, view: PlayerView, rng: np.random.Generator) -> int:
        self.memory.setdefault(view.seat, view.hand)
        legal = view.legal & self.memory[view.seat] or view.legal
        return (legal & -legal).bit_length() - 1

    def get_state(self) -> dict[int, int]:
        return self.memory

    def set_state(self, memory: dict[int, int]) -> None:
        self.memory = memory


def test_snapshot_includes_the_memory_of_opponents_that_expose_it() -> None:
    env = make_single_agent("humbug_v0", opponents=Remembering(), learner_seat=0)
    env.reset(seed=1)
    for _ in range(4):
        env.step(int(np.flatnonzero(env.action_masks())[0]))
    snap = env.get_state()
    assert snap["agent_memory"] == {1: env._agents[1].memory}  # type: ignore[union-attr]
    fresh = make_single_agent("humbug_v0", opponents=Remembering(), learner_seat=0)
    fresh.set_state(snap)
    assert fresh._agents[1].memory == snap["agent_memory"][1]  # type: ignore[union-attr]
    assert fresh._agents[1].memory is not snap["agent_memory"][1]  # type: ignore[union-attr]


@pytest.mark.parametrize(("game", "kwargs"), CASES, ids=IDS)
def test_lean_step_info_is_the_full_info_cut_mid_episode(game: str, kwargs: dict) -> None:
    """``step_info="lean"`` plays the same episodes (observations, rewards, ends) as the default; a mid-episode info
    is the full one cut to ``LEAN_INFO_KEYS``, and the reset's and the last step's infos are whole."""
    from whist_env.envs.single_agent import LEAN_INFO_KEYS

    full = make_single_agent(game, opponents="heuristic", **kwargs)
    lean = make_single_agent(game, opponents="heuristic", step_info="lean", **kwargs)
    rng = np.random.default_rng(5)
    for episode in range(3):
        (obs_f, info_f), (obs_l, info_l) = full.reset(seed=episode), lean.reset(seed=episode)
        assert np.array_equal(obs_f, obs_l) and info_l.keys() == info_f.keys()
        done = False
        while not done:
            action = int(rng.choice(np.flatnonzero(full.action_masks())))
            obs_f, r_f, done, _, info_f = full.step(action)
            obs_l, r_l, done_l, _, info_l = lean.step(action)
            assert np.array_equal(obs_f, obs_l) and r_f == r_l and done == done_l
            if done:
                assert info_l.keys() == info_f.keys()
                assert all(np.array_equal(info_l[k], info_f[k]) for k in info_f)
            else:
                assert info_l == {k: info_f[k] for k in LEAN_INFO_KEYS}
    with pytest.raises(OptionError, match="step_info must be 'full' or 'lean', got 'some'"):
        make_single_agent(game, step_info="some", **kwargs)
