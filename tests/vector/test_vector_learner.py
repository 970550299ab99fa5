"""The learner env on the batched engine (``whist_env.vector.make_learner_env``) and its SB3 adapter.

The proof of its rewards: every environment of a batch has a twin :class:`SingleAgentWhistEnv` dealt the same
decks, with the same learner seat, whose opponents replay the actions the batch's opponents chose (recorded as the
engine steps them); at every learner decision the observation, mask, reward, termination, infos, final observation
and final infos must be the twin's (in either autoreset mode).
"""

from __future__ import annotations

import subprocess
import sys
from collections import deque
from typing import Any

import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

from whist_env.agents import make_agent
from whist_env.envs.single_agent import SingleAgentWhistEnv
from whist_env.errors import CallOrderError, IllegalActionError, OptionError
from whist_env.rules.core import PHASE_OVER
from whist_env.vector import LearnerVectorEnv, make, make_learner_env, vector_game_ids
from whist_env.vector.learner import random_actions

B = 8
SAME_STEP = AutoresetMode.SAME_STEP  # the mode most tests here were written for (SB3's)
NEXT_STEP = AutoresetMode.NEXT_STEP


class Replay:
    """An opponent agent of a twin that plays the actions the batch's opponents chose in its environment, in order."""

    name = "replay"

    def __init__(self) -> None:
        self.queue: deque[tuple[int, int]] = deque()

    def act(self, view: Any, rng: np.random.Generator) -> int:
        seat, action = self.queue.popleft()
        assert seat == view.seat, (seat, view.seat)
        return action


def record_opponents(env: LearnerVectorEnv, replays: list[Replay]) -> None:
    """Record each opponent action the batch's engine plays into its environment's :class:`Replay`."""
    venv = env.venv
    step_envs = venv.step_envs

    def spy(envs: np.ndarray, actions: np.ndarray) -> Any:
        phase, to_act = venv.field("phase")[:, 0], venv.field("to_act")[:, 0]
        for i, a in zip(envs, actions, strict=True):
            if phase[i] != PHASE_OVER:  # an ended episode's action is ignored (it starts anew)
                replays[i].queue.append((int(to_act[i]), int(a)))
        return step_envs(envs, actions)

    venv.step_envs = spy  # type: ignore[method-assign]


def twin_start(env: LearnerVectorEnv, i: int) -> dict[str, Any]:
    """The reset options that start environment ``i``'s current episode in its twin."""
    venv = env.venv
    opts: dict[str, Any] = {
        "deck": [int(c) for c in venv.field("deck")[i]],
        "dealer": int(venv.field("dealer")[i, 0]),
        "learner_seat": int(env._seat[i]),
    }
    if "drawn_card" in venv.game_fields and venv.field("drawn_card")[i, 0] >= 0:
        opts["trump_card"] = int(venv.field("drawn_card")[i, 0])
    return opts


def same_obs(got: np.ndarray, want: np.ndarray) -> bool:
    return np.array_equal(got.astype(np.float32), want)


def replay_check(
    game_id: str,
    options: dict[str, Any],
    episodes: int,
    seed: int,
    opponents: Any = "random",
    mode: AutoresetMode = SAME_STEP,
) -> int:
    """Run a batch of learner envs with random learner actions next to their single-agent twins until
    ``episodes`` episodes ended, comparing at every decision (in either autoreset mode). Returns the episodes
    played."""
    env = make_learner_env(
        game_id, B, opponents=opponents, learner_seat="random", seed=seed, autoreset_mode=mode, **options
    )
    replays = [Replay() for _ in range(B)]
    record_opponents(env, replays)
    twins = [SingleAgentWhistEnv(game_id, opponents=replays[i], **options) for i in range(B)]
    drawn = env.venv.field("drawn_card") if "drawn_card" in env.venv.game_fields else None

    def batch_deck(i: int, state: Any) -> list[int]:
        if drawn is not None and drawn[i, 0] >= 0:
            state.drawn_card = int(drawn[i, 0])
        return [int(c) for c in env.venv.field("deck")[i]]

    for i, twin in enumerate(twins):
        twin.game.draw_deck = lambda _rng, state, i=i: batch_deck(i, state)  # type: ignore[method-assign]
    rng = np.random.default_rng(seed)
    obs, infos = env.reset()
    for i, twin in enumerate(twins):
        want, _ = twin.reset(options=twin_start(env, i))
        assert same_obs(obs[i], want) and np.array_equal(env.action_masks()[i], twin.action_masks()), i
        assert infos["learner_seat"][i] == twin.learner_seat
    done = 0
    waiting = np.zeros(B, np.bool_)  # next-step: the episode ended in the last step, the next one starts now
    while done < episodes:
        masks = env.action_masks()
        assert (masks.any(axis=1) != waiting).all()
        masks[waiting, 0] = True  # any action: it is ignored
        actions = random_actions(masks, rng)
        obs, rewards, terminated, truncated, infos = env.step(actions)
        assert rewards.dtype == np.float32 and terminated.dtype == np.bool_ and not truncated.any()
        for i, twin in enumerate(twins):
            if waiting[i]:
                want, info = twin.reset(options=twin_start(env, i))
                reward, over = 0.0, False
            else:
                want, reward, over, _, info = twin.step(int(actions[i]))
            assert rewards[i] == np.float32(reward), (i, rewards[i], reward)
            assert terminated[i] == over, i
            if over and mode == SAME_STEP:
                assert infos["_final_obs"][i] and same_obs(infos["final_obs"][i], want), i
                assert infos["_final_info"][i], i
                assert infos["final_info"]["returns"][i].tolist() == info["returns"].tolist(), i
                assert infos["final_info"]["learner_seat"][i] == info["learner_seat"], i
                assert np.array_equal(infos["final_info"]["action_mask"][i], info["action_mask"]), i
                want, info = twin.reset(options=twin_start(env, i))
            elif "final_obs" in infos:
                assert not infos["_final_obs"][i]
            done += over
            assert not replays[i].queue, (i, "opponent actions left unplayed")
            assert same_obs(obs[i], want), i
            assert np.array_equal(env.action_masks()[i], twin.action_masks()), i
            assert infos["learner_seat"][i] == twin.learner_seat, i
            assert infos["returns"][i].tolist() == info["returns"].tolist(), i
            assert np.array_equal(infos["action_mask"][i], info["action_mask"]), i
        waiting = terminated if mode == NEXT_STEP else np.zeros(B, np.bool_)
    return done


@pytest.mark.parametrize(
    ("game_id", "options", "episodes"),
    [
        ("german_whist_v0", {}, 300),
        ("classic_whist_v0", {"episode": "deal"}, 300),
        ("classic_whist_v0", {}, 40),
        ("oh_hell_v0", {"num_players": 5, "trump_mode": "drawn_card", "max_cards": 4}, 40),
        ("humbug_v0", {}, 100),
        ("humbug_whist_v0", {}, 60),
    ],
    ids=str,
)
def test_rewards_equal_the_single_agent_env_replaying_the_same_deals(
    game_id: str, options: dict[str, Any], episodes: int
) -> None:
    assert replay_check(game_id, options, episodes, seed=len(options) + episodes) >= episodes


@pytest.mark.parametrize("game_id", ["german_whist_v0", "oh_hell_v0", "humbug_whist_v0"])
def test_next_step_autoreset_replays_as_the_single_agent_env_reset_on_the_next_step(game_id: str) -> None:
    """Next-step autoreset: the ending step returns the final observation (and infos); the next one starts the next
    episode (its action ignored, reward 0), as the twin's reset() does."""
    options = {"oh_hell_v0": {"num_players": 3, "max_cards": 3}}.get(game_id, {})
    assert replay_check(game_id, options, 40, seed=21, mode=NEXT_STEP) >= 40


def test_policy_opponents_replay_too() -> None:
    """A batched policy callable per seat (the partner's too) plays inside, and the twin replays its choices."""

    def lowest(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        assert obs.dtype == np.uint8 and mask.dtype == np.bool_ and obs.shape[0] == mask.shape[0]
        return mask.argmax(axis=1)

    assert replay_check("classic_whist_v0", {"episode": "deal"}, 40, seed=9, opponents=[lowest, "random", lowest]) >= 40


# One deal per episode where the game has longer ones. Humbug open table: one Python agent object plays every env
# here, and the hidden-hand agent's memory of each deal is per game
# (tests/games/humbug/test_humbug_heuristic_port.py has it).
HEURISTIC_CASES = {
    "classic_whist_v0": {"episode": "deal"},
    "german_whist_v0": {},
    "humbug_v0": {"mode": "open_table"},
    "humbug_whist_v0": {"episode": "deal"},
    "oh_hell_v0": {"episode": "deal"},
}


@pytest.mark.parametrize("game_id", sorted(HEURISTIC_CASES))
def test_heuristic_opponents_play_as_the_python_heuristic(game_id: str) -> None:
    """``opponents="heuristic"`` plays the batched heuristic inside: each opponent action is the Python agent's for
    the seat's view, and the single-agent twins replaying them see the same episodes."""
    options = HEURISTIC_CASES[game_id]
    env = make_learner_env(
        game_id, B, opponents="heuristic", learner_seat="random", seed=4, autoreset_mode=SAME_STEP, **options
    )
    venv = env.venv
    agent = make_agent("heuristic", game_id, **options)
    step_envs = venv.step_envs
    compared = []

    def check(envs: np.ndarray, actions: np.ndarray) -> Any:
        for i, a in zip(envs, actions, strict=True):
            seat = int(venv.field("to_act")[i, 0])
            if seat >= 0:
                assert a == agent.act(venv.game.view(venv.export_state(int(i)), seat), np.random.default_rng(0))
                compared.append(i)
        return step_envs(envs, actions)

    venv.step_envs = check  # type: ignore[method-assign]
    env.reset()
    rng = np.random.default_rng(1)
    for _ in range(60):
        env.step(random_actions(env.action_masks(), rng))
    assert len(compared) > 100
    assert replay_check(game_id, options, 30, seed=3, opponents="heuristic") >= 30


def test_act_state_opponents_play_like_the_same_policy_as_a_callable() -> None:
    """An object with ``act_state`` is a batched agent: given the engine and the envs to act in, it plays inside
    exactly as the callable of the same policy (the lowest legal action) does."""

    class LowestFromState:
        def __init__(self) -> None:
            self.calls = 0

        def act_state(self, venv: Any, envs: np.ndarray) -> np.ndarray:
            self.calls += 1
            _, mask = venv.observe_envs(envs, venv.field("to_act")[envs, 0])
            return mask.argmax(axis=1)

    from_state = LowestFromState()
    envs = [
        make_learner_env(
            "german_whist_v0", B, opponents=policy, learner_seat="random", seed=6, autoreset_mode=SAME_STEP
        )
        for policy in (lambda obs, mask: mask.argmax(axis=1), from_state)
    ]
    outs = [env.reset() for env in envs]
    assert np.array_equal(outs[0][0], outs[1][0])
    rng = np.random.default_rng(2)
    for _ in range(40):
        actions = random_actions(envs[0].action_masks(), rng)
        got = [env.step(actions) for env in envs]
        assert np.array_equal(got[0][0], got[1][0]) and np.array_equal(got[0][1], got[1][1])
    assert from_state.calls > 0


@pytest.mark.parametrize("game_id", vector_game_ids())
def test_shapes_dtypes_and_spaces(game_id: str) -> None:
    env = make_learner_env(game_id, B, seed=0, autoreset_mode=SAME_STEP)
    venv = env.venv
    assert env.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    assert env.single_observation_space.shape == (venv.observation_size,)
    assert env.single_action_space.n == venv.num_actions
    assert env.observation_space.shape == (B, venv.observation_size)
    assert env.action_space.shape == (B,)
    obs, infos = env.reset()
    rng = np.random.default_rng(0)
    for _ in range(30):
        masks = env.action_masks()
        assert masks.shape == (B, venv.num_actions) and masks.dtype == np.bool_ and masks.any(axis=1).all()
        assert obs.shape == (B, venv.observation_size) and obs.dtype == venv.obs_dtype
        assert obs in env.observation_space
        assert (infos["learner_seat"] == 0).all()
        obs, rewards, terminated, truncated, infos = env.step(random_actions(masks, rng))
        assert rewards.shape == terminated.shape == truncated.shape == (B,)


def play(env: LearnerVectorEnv, steps: int, seed: int, reset_seed: int | None = None) -> list[np.ndarray]:
    """Everything the env hands out from ``reset(seed=reset_seed)`` over ``steps`` random learner decisions."""
    rng = np.random.default_rng(seed)
    obs, infos = env.reset(seed=reset_seed)
    out = [obs, infos["learner_seat"]]
    for _ in range(steps):
        obs, rewards, terminated, _, infos = env.step(random_actions(env.action_masks(), rng))
        out += [obs, rewards, terminated, infos["learner_seat"]]
    return out


def test_reproducible_from_the_seed() -> None:
    def run(seed: int, reseed: int | None = None) -> list[np.ndarray]:
        env = make_learner_env(
            "classic_whist_v0", B, learner_seat="random", seed=seed, autoreset_mode=SAME_STEP, episode="deal"
        )
        if reseed is not None:
            play(env, 5, 1)
        return play(env, 40, 1, reseed)

    first, again, other = run(3), run(3), run(4)
    assert all(np.array_equal(a, b) for a, b in zip(first, again, strict=True))
    assert not all(np.array_equal(a, b) for a, b in zip(first, other, strict=True))
    assert all(np.array_equal(a, b) for a, b in zip(first, run(5, reseed=3), strict=True))


def test_random_seats_and_random_opponents_are_uniform() -> None:
    env = make_learner_env("german_whist_v0", 400, learner_seat="random", seed=1, autoreset_mode=SAME_STEP)
    _, infos = env.reset()
    assert 150 < (infos["learner_seat"] == 0).sum() < 250
    mask = np.zeros((6000, 5), np.bool_)
    mask[:, [1, 3, 4]] = True
    counts = np.bincount(random_actions(mask, np.random.default_rng(0)), minlength=5)
    assert counts[[0, 2]].sum() == 0 and (np.abs(counts[[1, 3, 4]] - 2000) < 200).all()


def test_bad_input_names_the_environments_and_changes_nothing() -> None:
    env = make_learner_env("german_whist_v0", B, seed=2, autoreset_mode=SAME_STEP)
    with pytest.raises(CallOrderError, match="reset"):
        env.step(np.zeros(B, np.int64))
    obs, _ = env.reset()
    masks = env.action_masks()
    before = env.venv._state.copy(), env.venv._rng.copy(), env._rng.bit_generator.state
    with pytest.raises(ValueError, match=r"shape \(8,\)"):
        env.step(np.zeros(B + 1, np.int64))
    with pytest.raises(ValueError, match="integer array"):
        env.step(np.zeros(B, np.float32))
    actions = random_actions(masks, np.random.default_rng(0))
    actions[[2, 5]] = np.argmin(masks[[2, 5]], axis=1)  # an illegal card in environments 2 and 5
    with pytest.raises(
        IllegalActionError, match=r"environment\(s\) 2, 5; no environment changed\. Environment 2: seat 0 cannot play"
    ):
        env.step(actions)
    actions[5] = 99
    with pytest.raises(IllegalActionError, match=r"environment\(s\) 2, 5"):
        env.step(actions)
    assert np.array_equal(env.venv._state, before[0]) and np.array_equal(env.venv._rng, before[1])
    assert env._rng.bit_generator.state == before[2]
    assert np.array_equal(env.action_masks(), masks)
    env.step(random_actions(masks, np.random.default_rng(0)))  # still usable


def test_a_bad_opponent_policy_is_reported_and_needs_a_reset() -> None:
    env = make_learner_env(
        "german_whist_v0", B, opponents=lambda obs, mask: np.argmin(mask, axis=1), seed=2, autoreset_mode=SAME_STEP
    )
    with pytest.raises(IllegalActionError, match=r"opponent policy .* in environment\(s\) \d"):
        env.reset()  # where the learner's opponent leads, its first (illegal) choice is refused
        for _ in range(30):
            env.step(random_actions(env.action_masks(), np.random.default_rng(0)))
    with pytest.raises(CallOrderError, match="reset"):
        env.step(random_actions(env.action_masks(), np.random.default_rng(0)))
    wrong_shape = make_learner_env(
        "german_whist_v0", B, opponents=lambda obs, mask: [0], seed=2, autoreset_mode=SAME_STEP
    )
    with pytest.raises(ValueError, match=r"must return an integer array of shape"):
        for _ in range(30):
            wrong_shape.reset()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"opponents": "pimc"}, "batched policy callable"),
        ({"opponents": ["random"]}, "must hold 3 policies"),
        ({"opponents": {1: "random"}}, "batched policy callable"),
        ({"learner_seat": 4}, r"seat 0\.\.3"),
        ({"learner_seat": "rotate"}, "'random' or a seat"),
        ({"seed": -1}, "seed"),
    ],
)
def test_bad_options(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(OptionError, match=message):
        make_learner_env("classic_whist_v0", B, autoreset_mode=SAME_STEP, **kwargs)


def test_step_envs_moves_only_the_envs_given() -> None:
    """``RawVectorEnv.step_envs`` equals the full step on the environments given, leaves the others alone, and
    refuses an illegal action naming the batch's index."""
    full, part = make("humbug_v0", B, seed=5), make("humbug_v0", B, seed=5)
    ts_full, _ = full.reset(), part.reset()
    rng = np.random.default_rng(5)
    for _ in range(60):
        actions = random_actions(ts_full.action_mask.astype(bool) | ts_full.terminated[:, None], rng)
        rows = np.array([6, 1, 3])
        others = part._state[[0, 2, 4, 5, 7]].copy()
        ts_part = part.step_envs(rows, actions[rows])
        assert np.array_equal(part._state[[0, 2, 4, 5, 7]], others)
        rest = np.setdiff1d(np.arange(B), rows)
        part.step_envs(rest, actions[rest])
        ts_full = full.step(actions)
        assert np.array_equal(part._state, full._state) and np.array_equal(part._rng, full._rng)
        for name in ("current_player", "observation", "action_mask", "rewards", "terminated"):
            assert np.array_equal(getattr(ts_part, name), getattr(ts_full, name)[rows]), name
        obs, mask = part.observe_envs(rows, np.array([0, 1, 0]))
        want_obs, want_mask = full.observe(np.zeros(B, np.int64) + np.isin(np.arange(B), [1]))
        assert np.array_equal(obs, want_obs[rows]) and np.array_equal(mask, want_mask[rows])
    i = int(np.flatnonzero(~ts_full.terminated)[0])
    illegal = int(np.argmin(ts_full.action_mask[i]))
    assert not ts_full.action_mask[i, illegal]
    state, gens = part._state.copy(), part._rng.copy()
    with pytest.raises(IllegalActionError, match=rf"environment\(s\) {i}; no environment changed"):
        part.step_envs(
            np.array([i, (i + 1) % B]), np.array([illegal, int(np.argmax(ts_full.action_mask[(i + 1) % B]))])
        )
    assert np.array_equal(part._state, state) and np.array_equal(part._rng, gens)
    with pytest.raises(ValueError, match="distinct"):
        part.step_envs(np.array([1, 1]), np.array([0, 0]))


@pytest.mark.parametrize("game_id", ["oh_hell_v0", "humbug_whist_v0"])
def test_reset_envs_starts_an_episode_as_step_does_where_one_ended(game_id: str) -> None:
    """``RawVectorEnv.reset_envs`` on environments whose episode ended equals the step that would start their next
    one (same state, same generators), and moves no other environment; on an unfinished episode it starts anew too."""
    stepped, reset = make(game_id, B, seed=6, episode="deal"), make(game_id, B, seed=6, episode="deal")
    ts, _ = stepped.reset(), reset.reset()
    rng = np.random.default_rng(6)
    checked = 0
    for _ in range(200):
        actions = random_actions(ts.action_mask.astype(bool) | ts.terminated[:, None], rng)
        ended = np.flatnonzero(ts.terminated)
        if len(ended):
            others = reset._state[~ts.terminated].copy()
            ts_reset = reset.reset_envs(ended)
            assert np.array_equal(reset._state[~ts.terminated], others)
            live = np.flatnonzero(~ts.terminated)
            reset.step_envs(live, actions[live])
            ts = stepped.step(actions)
            assert np.array_equal(reset._state, stepped._state) and np.array_equal(reset._rng, stepped._rng)
            for name in ("current_player", "observation", "action_mask"):
                assert np.array_equal(getattr(ts_reset, name), getattr(ts, name)[ended]), name
            checked += len(ended)
        else:
            ts, _ = stepped.step(actions), reset.step(actions)
    assert checked >= 10
    deck = reset.decks()[3]
    ts_cut = reset.reset_envs(np.array([3]))
    assert (reset.decks()[3] != deck).any() and ts_cut.action_mask.any() and not ts_cut.terminated.any()


def test_maskable_ppo_trains_on_the_sb3_adapter() -> None:
    """A tiny MaskablePPO run on the SB3 adapter: every action it takes is legal (the env raises on any other)."""
    import sb3_contrib
    from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported

    from whist_env.learning.sb3_vec import as_sb3_vec_env

    venv = as_sb3_vec_env(make_learner_env("german_whist_v0", 16, seed=0, autoreset_mode=SAME_STEP))
    assert is_masking_supported(venv)
    model = sb3_contrib.MaskablePPO(
        "MlpPolicy", venv, n_steps=16, batch_size=64, n_epochs=1, seed=0, policy_kwargs={"net_arch": [32]}
    )
    model.learn(512)
    assert model.num_timesteps >= 512
    obs = venv.reset()
    episodes = 0
    for _ in range(60):
        masks = get_action_masks(venv)
        assert masks.shape == (16, venv.action_space.n) and np.array_equal(masks, venv.action_masks())
        actions, _ = model.predict(obs, action_masks=masks)
        assert masks[np.arange(16), actions].all()
        obs, rewards, dones, infos = venv.step(actions)
        for i in np.flatnonzero(dones):
            episodes += 1
            assert infos[i]["terminal_observation"].shape == obs[i].shape and "r" in infos[i]["episode"]  # VecMonitor's
    assert episodes > 0


def test_the_sb3_adapter_needs_same_step_autoreset() -> None:
    from whist_env.learning.sb3_vec import as_sb3_vec_env

    with pytest.raises(OptionError, match=r"autoreset_mode=AutoresetMode.SAME_STEP"):
        as_sb3_vec_env(make_learner_env("german_whist_v0", 4, seed=0, autoreset_mode=NEXT_STEP))


def test_importing_the_learner_env_imports_no_training_library() -> None:
    code = (
        "import sys, whist_env.vector; "
        "print([m for m in ('torch', 'stable_baselines3', 'sb3_contrib', 'ray') if m in sys.modules])"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"
