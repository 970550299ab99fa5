"""The learner vector env (``whist_env.vector.make_learner_env``) under Gymnasium's vector conventions (issue #25):
``info["episode"]`` is ``RecordEpisodeStatistics``'s, both autoreset modes as ``SyncVectorEnv`` has them, the vector
observation wrappers, the action mask in the infos and ``gymnasium.make_vec``."""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode, SyncVectorEnv
from gymnasium.wrappers.vector import DtypeObservation, NormalizeObservation, RecordEpisodeStatistics

from whist_env import gymnasium_id
from whist_env.envs.single_agent import make_single_agent
from whist_env.errors import OptionError
from whist_env.registry import game_ids
from whist_env.vector import LearnerVectorEnv, make_learner_env, vector_game_ids
from whist_env.vector.learner import random_actions

B = 6
NEXT, SAME = AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP
# one deal per episode where a game has longer ones: many episode ends in a few steps
SHORT: dict[str, dict[str, Any]] = {
    "classic_whist_v0": {"episode": "deal"},
    "humbug_whist_v0": {"episode": "deal"},
    "oh_hell_v0": {"num_players": 3, "episode": "deal", "hand_size": 3},
    "german_whist_v0": {},
    "humbug_v0": {},
}


def masks_of(infos: dict[str, Any]) -> np.ndarray:
    """The learner's masks from the infos; an environment waiting for its next-step reset gets a dummy legal 0."""
    mask = infos["action_mask"].astype(bool)
    mask[~mask.any(axis=1), 0] = True
    return mask


# ---------------------------------------------------------------------- 1. info["episode"] is Gymnasium's
@pytest.mark.parametrize("game_id", vector_game_ids())
def test_record_episode_statistics_on_the_learner_env(game_id: str) -> None:
    env = RecordEpisodeStatistics(make_learner_env(game_id, B, seed=0, autoreset_mode=NEXT, **SHORT[game_id]))
    rng = np.random.default_rng(0)
    _, infos = env.reset()
    totals, lengths, ended = np.zeros(B), np.zeros(B, np.int64), 0
    fresh = np.zeros(B, bool)
    while ended < 3 * B:  # past several episode ends in every environment
        obs, rewards, terminated, truncated, infos = env.step(random_actions(masks_of(infos), rng))
        totals[fresh], lengths[fresh] = 0.0, 0
        totals[~fresh] += rewards[~fresh]
        lengths[~fresh] += 1
        done = terminated | truncated
        if done.any():
            assert infos["_episode"].tolist() == done.tolist()
            np.testing.assert_allclose(infos["episode"]["r"][done], totals[done], rtol=1e-6)
            np.testing.assert_array_equal(infos["episode"]["l"][done], lengths[done])
            ended += int(done.sum())
        fresh = done


# ---------------------------------------------------------------------- 2. stackable infos, 5. masks in them
@pytest.mark.parametrize("mode", [NEXT, SAME])
@pytest.mark.parametrize("game_id", vector_game_ids())
def test_learner_infos_are_numeric_arrays_with_the_mask(game_id: str, mode: AutoresetMode) -> None:
    env = make_learner_env(game_id, B, seed=1, learner_seat="random", autoreset_mode=mode, **SHORT[game_id])
    rng = np.random.default_rng(1)
    _, infos = env.reset()
    keys = set(infos)
    for _ in range(80):
        assert set(infos) - {"final_obs", "_final_obs", "final_info", "_final_info"} == keys
        np.testing.assert_array_equal(infos["action_mask"], env.action_masks())
        assert infos["action_mask"].dtype == np.int8 and infos["_action_mask"].all()
        for key, value in infos.items():
            for v in value.values() if isinstance(value, dict) else [value]:
                assert isinstance(v, np.ndarray) and v.dtype.kind in "biuf" and v.shape[0] == B, key
        _, _, terminated, _, infos = env.step(random_actions(masks_of(infos), rng))
        if mode == SAME:
            assert ("final_info" in infos) == terminated.any()
        else:
            assert "final_info" not in infos and "final_obs" not in infos


# ---------------------------------------------------------------------- 4. both autoreset modes
def test_autoreset_mode_is_an_attribute_and_in_the_metadata_and_next_step_by_default() -> None:
    env = make_learner_env("humbug_v0", B, seed=0)
    assert env.autoreset_mode == NEXT and env.metadata["autoreset_mode"] == NEXT
    same = make_learner_env("humbug_v0", B, seed=0, autoreset_mode="SameStep")
    assert same.autoreset_mode == SAME and same.metadata["autoreset_mode"] == SAME
    assert env.metadata["autoreset_mode"] == NEXT  # each env its own metadata
    with pytest.raises(OptionError, match="autoreset_mode"):
        make_learner_env("humbug_v0", B, autoreset_mode=AutoresetMode.DISABLED)


@pytest.mark.parametrize("game_id", vector_game_ids())
def test_gymnasium_vector_observation_wrappers_work_in_next_step_mode(game_id: str) -> None:
    env = make_learner_env(game_id, B, seed=2, autoreset_mode=NEXT, **SHORT[game_id])
    wrapped = NormalizeObservation(DtypeObservation(env, np.float64))
    obs, infos = wrapped.reset()
    rng = np.random.default_rng(2)
    ends = 0
    for _ in range(60):
        assert obs.dtype == np.float64 and obs.shape == (B, env.single_observation_space.shape[0])
        obs, _, terminated, _, infos = wrapped.step(random_actions(masks_of(infos), rng))
        ends += int(terminated.sum())
    assert ends > 0 and np.isfinite(obs).all()


def transitions(env: Any, steps: int, seed: int) -> list[tuple[np.ndarray, ...]]:
    """``steps`` random legal steps of a vector env of the learner: (obs, reward, terminated, infos) after each."""
    rng = np.random.default_rng(seed)
    _, infos = env.reset(seed=seed)
    out = []
    for _ in range(steps):
        obs, reward, terminated, truncated, infos = env.step(random_actions(masks_of(infos), rng))
        assert not truncated.any()
        out.append((obs, reward, terminated, infos))
    return out


def check_autoreset(steps: list[tuple[np.ndarray, ...]], mode: AutoresetMode) -> set[str]:
    """What a vector env of the learner returns where an episode ends, and on the next step, in ``mode``; the info
    keys seen where an episode ended."""
    keys: set[str] = set()
    for t, (obs, reward, terminated, infos) in enumerate(steps):
        after_end = steps[t - 1][2] if t else np.zeros_like(terminated)
        mask = infos["action_mask"].astype(bool)
        if mode == NEXT:
            assert "final_obs" not in infos and "final_info" not in infos
            # the ending step: the final observation, nothing legal; the next: a new episode, reward 0
            assert not mask[terminated].any() and mask[~terminated].any(axis=1).all()
            assert (reward[after_end] == 0).all() and not terminated[after_end].any()
        else:
            assert mask.any(axis=1).all()  # always a decision to take: the new episode's where one ended
            if terminated.any():
                assert infos["_final_obs"].tolist() == infos["_final_info"].tolist() == terminated.tolist()
                final = infos["final_info"]
                assert not final["action_mask"][terminated].any()
                assert final["_learner_seat"].tolist() == terminated.tolist()
                for i in np.flatnonzero(terminated):
                    assert np.asarray(infos["final_obs"][i]).shape == obs[i].shape
            else:
                assert "final_obs" not in infos
        if terminated.any():
            keys |= set(infos) | {f"final_info.{k}" for k in infos.get("final_info", {})}
    return keys


@pytest.mark.parametrize("mode", [NEXT, SAME])
@pytest.mark.parametrize("game_id", ["german_whist_v0", "oh_hell_v0"])
def test_both_modes_as_sync_vector_env_of_the_single_agent_env_has_them(game_id: str, mode: AutoresetMode) -> None:
    options = SHORT[game_id]
    sync = SyncVectorEnv([lambda: make_single_agent(game_id, learner_seat=0, **options)] * B, autoreset_mode=mode)
    learner = make_learner_env(game_id, B, learner_seat=0, autoreset_mode=mode, **options)
    assert sync.metadata["autoreset_mode"] == learner.metadata["autoreset_mode"] == mode
    sync_keys = check_autoreset(transitions(sync, 60, 3), mode)
    learner_keys = check_autoreset(transitions(learner, 60, 3), mode)
    assert learner_keys and learner_keys <= sync_keys, learner_keys - sync_keys


def test_next_step_ends_with_what_same_step_puts_in_final_obs() -> None:
    """Same seed, both modes: up to the first episode end they agree, and there the next-step observation is the
    same-step ``final_obs`` (and its infos the ``final_info``)."""
    envs = [make_learner_env("german_whist_v0", B, seed=4, autoreset_mode=m) for m in (NEXT, SAME)]
    outs = [transitions(env, 40, 4) for env in envs]
    for (obs_n, rew_n, term_n, info_n), (obs_s, rew_s, term_s, info_s) in zip(*outs, strict=True):
        np.testing.assert_array_equal(rew_n, rew_s)
        np.testing.assert_array_equal(term_n, term_s)
        if not term_n.any():
            np.testing.assert_array_equal(obs_n, obs_s)
            continue
        np.testing.assert_array_equal(obs_n[~term_n], obs_s[~term_n])
        np.testing.assert_array_equal(obs_n[term_n], info_s["final_obs"][term_n])
        for key in ("learner_seat", "returns", "action_mask"):
            np.testing.assert_array_equal(info_n[key][term_n], info_s["final_info"][key][term_n])
        break
    else:
        pytest.fail("no episode ended")


# ---------------------------------------------------------------------- 6. gymnasium.make_vec
@pytest.mark.parametrize("game_id", game_ids())
def test_gymnasium_make_vec_builds_the_learner_env(game_id: str) -> None:
    for mode in (None, "vector_entry_point"):
        envs = gymnasium.make_vec(gymnasium_id(game_id), num_envs=B, vectorization_mode=mode, seed=0, **SHORT[game_id])
        assert isinstance(envs, LearnerVectorEnv) and envs.num_envs == B and envs.autoreset_mode == NEXT
        _, infos = envs.reset(seed=0)
        rng = np.random.default_rng(0)
        for _ in range(20):
            _, _, _, _, infos = envs.step(random_actions(masks_of(infos), rng))
        envs.close()
    same = gymnasium.make_vec(gymnasium_id(game_id), num_envs=2, autoreset_mode=SAME, **SHORT[game_id])
    assert same.metadata["autoreset_mode"] == SAME


def test_the_learner_envs_errors_name_cards_as_the_screens_show_them() -> None:
    from whist_env.cards import card_pretty
    from whist_env.errors import IllegalActionError

    env = make_learner_env("german_whist_v0", B, seed=0, autoreset_mode=NEXT)
    _, infos = env.reset()
    actions = random_actions(masks_of(infos), np.random.default_rng(0))
    actions[1] = int(np.argmin(infos["action_mask"][1]))
    with pytest.raises(IllegalActionError) as err:
        env.step(actions)
    assert f"cannot play {card_pretty(int(actions[1]))};" in str(err.value)
    assert str(err.value).endswith(" ".join(card_pretty(c) for c in err.value.legal))


# ---------------------------------------------------------------------- 7. illegal_reward: an illegal action ends
# its episode, for wrappers that step unmasked (TorchRL's GymWrapper takes one random step while it is built)
def illegal_of(mask: np.ndarray) -> int:
    return int(np.argmin(mask))


@pytest.mark.parametrize("mode", [NEXT, SAME])
def test_an_illegal_action_ends_only_its_episode(mode: AutoresetMode) -> None:
    """Env ``cut`` (``illegal_reward=-0.5``) and env ``twin`` (raises) play the same deals with the same legal
    actions, except that ``cut`` plays an illegal card in environment 2 at step 3: only that environment differs.
    There the episode ends with the reward -0.5 and the observation the learner acted on; the next episode starts on
    a new deal (next-step: at the next step, reward 0; same-step: at once, the end in ``final_*``)."""
    kwargs = {"opponents": "heuristic", "learner_seat": 0, "autoreset_mode": mode}
    cut = make_learner_env("german_whist_v0", B, seed=8, illegal_reward=-0.5, **kwargs)
    twin = make_learner_env("german_whist_v0", B, seed=8, **kwargs)
    (obs, infos), (_, twin_infos) = cut.reset(), twin.reset()
    rng = np.random.default_rng(8)
    others = np.arange(B) != 2  # environment 2's deal differs from the twin's after the illegal card
    for t in range(30):
        actions = random_actions(masks_of(infos), rng)
        deck = cut.venv.decks()[2]
        if t == 3:
            actions[2] = illegal_of(infos["action_mask"][2])
        before = obs
        obs, reward, terminated, _, infos = cut.step(actions)
        if t >= 3:  # the twin plays a legal card there, then goes on with its own episode
            actions[2] = int(np.argmax(twin_infos["action_mask"][2]))
        twin_obs, twin_reward, twin_terminated, _, twin_infos = twin.step(actions)
        np.testing.assert_array_equal(obs[others], twin_obs[others])
        np.testing.assert_array_equal(reward[others], twin_reward[others])
        np.testing.assert_array_equal(terminated[others], twin_terminated[others])
        assert infos["illegal_actions"][others].sum() == 0
        if t < 3:
            np.testing.assert_array_equal(obs, twin_obs)
        if t == 3:
            assert terminated[2] and reward[2] == np.float32(-0.5)
            if mode == NEXT:
                np.testing.assert_array_equal(obs[2], before[2])  # the observation it acted on, nothing legal
                assert infos["illegal_actions"][2] == 1 and not infos["action_mask"][2].any()
                assert (cut.venv.decks()[2] == deck).all()  # the deal starts anew at the next step
            else:
                np.testing.assert_array_equal(infos["final_obs"][2], before[2])
                assert infos["_final_info"].tolist() == (terminated & True).tolist()
                assert infos["final_info"]["illegal_actions"][2] == 1 and infos["illegal_actions"][2] == 0
                assert infos["action_mask"][2].any() and (cut.venv.decks()[2] != deck).any()  # a new deal at once
        if t == 4 and mode == NEXT:
            assert not terminated[2] and reward[2] == 0 and infos["action_mask"][2].any()
            assert infos["illegal_actions"][2] == 0 and (cut.venv.decks()[2] != deck).any()
    with pytest.raises(OptionError, match="illegal_reward"):
        make_learner_env("german_whist_v0", B, illegal_reward=float("nan"))


@pytest.mark.parametrize("mode", [NEXT, SAME])
@pytest.mark.parametrize("game_id", game_ids())
def test_unmasked_random_actions_run_on_and_are_counted(game_id: str, mode: AutoresetMode) -> None:
    """A third of the actions drawn from the whole action space: every illegal one ends its episode with the
    penalty, is counted once, and the autoreset conventions hold as with legal play."""
    env = make_learner_env(game_id, B, seed=9, learner_seat="random", opponents="random", autoreset_mode=mode,
                           illegal_reward=-1.0, **SHORT[game_id])  # fmt: skip
    rng = np.random.default_rng(9)
    _, infos = env.reset(seed=9)
    steps, refused = [], 0
    for _ in range(80):
        mask = infos["action_mask"].astype(bool)
        actions = random_actions(masks_of(infos), rng)
        wild = rng.random(B) < 1 / 3
        actions[wild] = rng.integers(env.single_action_space.n, size=int(wild.sum()))
        live = mask.any(axis=1)  # next-step: an ended episode's action is ignored
        illegal = live & ~mask[np.arange(B), actions]
        obs, reward, terminated, truncated, infos = env.step(actions)
        counted = infos["illegal_actions"] if mode == NEXT else infos.get("final_info", infos)["illegal_actions"]
        assert counted.tolist() == illegal.astype(int).tolist()
        assert terminated[illegal].all()
        refused += int(illegal.sum())
        steps.append((obs, reward, terminated, infos))
    assert refused > 10
    check_autoreset(steps, mode)
