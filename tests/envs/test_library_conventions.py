"""The conventions other libraries rely on (issue #25), checked with their own wrappers as users use them.

* Gymnasium's ``RecordEpisodeStatistics`` owns ``info["episode"]``: the envs never write it.
* Infos that libraries stack into arrays (TorchRL's ``PettingZooWrapper``, Gymnasium's vector envs): the same keys
  at every step for every agent, numbers and fixed-shape numeric arrays only.
* ``observe()`` after the last agent is done gives the final observation, as PettingZoo's own envs do (SuperSuit's
  wrappers call it).
* The action mask in ``info["action_mask"]`` too.
* A ``metadata`` dict of its own per game class, with ``render_fps``; Gymnasium ids (``gymnasium.make``).
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
import pytest

import whist_env
from whist_env import gymnasium_id, make, make_single_agent
from whist_env.envs.aec import NO_ILLEGAL_ACTION, InfoArrays, info_arrays
from whist_env.registry import game_ids
from whist_env.testing import case_id, option_cases

# Short episodes where a game has them; Oh Hell keeps several deals (deal summaries change), with 3 seats.
SHORT: dict[str, dict[str, Any]] = {
    "classic_whist_v0": {"episode": "deal"},
    "humbug_whist_v0": {"episode": "deal"},
    "oh_hell_v0": {"num_players": 3, "max_cards": 2},
    "german_whist_v0": {"num_deals": 2},
    "humbug_v0": {"num_deals": 2},
}
CASES = [pytest.param(g, o, id=case_id(g, o)) for g, o in option_cases()]


def random_legal(mask: np.ndarray, rng: np.random.Generator) -> int:
    return int(rng.choice(np.flatnonzero(mask)))


def assert_stackable(infos: list[dict[str, Any]], where: str) -> None:
    """What TorchRL and Gymnasium's vector envs need of a stream of infos: one set of keys, every value a number or
    a numeric array of one shape, so that ``np.stack`` of a key over the stream works."""
    assert infos, where
    keys = set(infos[0])
    for info in infos:
        assert set(info) == keys, f"{where}: keys {sorted(set(info) ^ keys)} come and go"
        for key, value in info.items():
            assert isinstance(value, (int, float, np.number, np.ndarray)), f"{where}: {key}={value!r}"
            assert np.asarray(value).dtype.kind in "biuf", f"{where}: {key}={value!r} is not numeric"
    for key in keys:
        stacked = np.stack([np.asarray(info[key]) for info in infos])
        assert stacked.shape == (len(infos), *np.shape(infos[0][key])), f"{where}: {key}"


# ---------------------------------------------------------------------- 1. info["episode"] is Gymnasium's
@pytest.mark.parametrize("game_id", game_ids())
def test_record_episode_statistics_on_the_single_agent_env(game_id: str) -> None:
    env = gymnasium.wrappers.RecordEpisodeStatistics(make_single_agent(game_id, **SHORT[game_id]))
    rng = np.random.default_rng(0)
    env.reset(seed=0)
    for _ in range(4):  # past several episode ends
        total, length, done = 0.0, 0, False
        while not done:
            _, reward, terminated, truncated, info = env.step(random_legal(env.unwrapped.action_masks(), rng))
            total, length, done = total + float(reward), length + 1, terminated or truncated
        assert info["episode"]["r"] == pytest.approx(total) and info["episode"]["l"] == length
        assert info["returns"][info["learner_seat"]] == pytest.approx(total)
        env.reset()
    assert len(env.return_queue) == 4


# ---------------------------------------------------------------------- 2. stackable infos
@pytest.mark.parametrize(("game_id", "options"), CASES)
def test_aec_infos_have_the_same_numeric_keys_at_every_step_for_every_agent(
    game_id: str, options: dict[str, Any]
) -> None:
    env = make(game_id, **options)
    rng = np.random.default_rng(0)
    infos: list[dict[str, Any]] = []
    for episode in range(3):
        env.reset(seed=episode)
        infos += [env.infos[a] for a in env.agents]
        for step, agent in enumerate(env.agent_iter()):
            _, _, term, trunc, info = env.last()
            infos.append(info)
            if term or trunc:
                env.step(None)
            elif episode == 2 and step == 5:  # the third episode ends on an illegal action
                env.step(int(np.flatnonzero(env.observe(agent)["action_mask"] == 0)[0]))
            else:
                env.step(random_legal(env.observe(agent)["action_mask"], rng))
            infos += [env.infos[a] for a in env.agents]
    assert_stackable(infos, case_id(game_id, options))
    assert any(info["illegal_actions"] for info in infos)


def frozen(value: Any) -> Any:
    """A deep copy of an info or an observation dict, its type kept and checked: plain dicts, ints and arrays."""
    if isinstance(value, dict):
        assert type(value) is dict, f"{type(value).__name__} is not a plain dict"
        return {k: frozen(v) for k, v in value.items()}
    assert type(value) in (int, np.ndarray), f"{value!r} is neither an int nor an array"
    return value.copy() if isinstance(value, np.ndarray) else value


def same(kept: Any, copy: Any) -> bool:
    if isinstance(kept, dict):
        return kept.keys() == copy.keys() and all(same(kept[k], copy[k]) for k in kept)
    return type(kept) is type(copy) and np.array_equal(kept, copy) and np.shape(kept) == np.shape(copy)


@pytest.mark.parametrize(("game_id", "options"), CASES)
def test_aec_infos_and_observations_handed_out_are_never_changed_afterwards(
    game_id: str, options: dict[str, Any]
) -> None:
    """Every info and observation the AEC env hands out, kept through whole episodes (one ending on an illegal
    action), still holds at the end what it held when it was handed out: the env shares unchanged info arrays
    between steps (InfoArrays) but never writes to anything it handed out."""
    env = make(game_id, **options)
    rng = np.random.default_rng(5)
    kept: list[tuple[Any, Any]] = []

    def keep(value: Any) -> None:
        kept.append((value, frozen(value)))

    for episode in range(2):
        env.reset(seed=episode)
        for step, _agent in enumerate(env.agent_iter()):
            obs, _, term, trunc, info = env.last()
            keep(obs)
            keep(info)
            for a in env.agents:
                keep(env.infos[a])
                keep(env.observe(a))
            if term or trunc:
                env.step(None)
            elif episode == 1 and step == 7:
                env.step(int(np.flatnonzero(obs["action_mask"] == 0)[0]))
            else:
                env.step(random_legal(obs["action_mask"], rng))
    changed = [i for i, (value, copy) in enumerate(kept) if not same(value, copy)]
    assert not changed, f"{len(changed)} of {len(kept)} kept infos or observations changed, the first: {changed[0]}"


@pytest.mark.parametrize(("game_id", "options"), CASES)
def test_aec_infos_equal_their_plain_twin_at_every_step(game_id: str, options: dict[str, Any]) -> None:
    """The env's infos (arrays built only for changed values, InfoArrays) equal ``info_arrays`` of the rules' info,
    fresh at every step, for every agent, over several episodes."""
    env = make(game_id, **options)
    raw = env.unwrapped
    rng = np.random.default_rng(6)
    checked = 0
    for episode in range(4):
        env.reset(seed=10 + episode)
        for agent in env.agent_iter():
            state = raw.game_state
            for a in env.agents:
                twin = {**info_arrays(raw.game.info(state, raw.agent_seat[a])), **NO_ILLEGAL_ACTION}
                assert same(env.infos[a], twin), (episode, a)
                checked += 1
            _, _, term, trunc, _ = env.last(observe=False)
            env.step(None if term or trunc else random_legal(env.observe(agent)["action_mask"], rng))
    assert checked >= 50


def test_info_arrays_start_again_past_their_limit_and_stay_equal_to_the_twin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(InfoArrays, "MAX_VALUES", 3)
    convert = InfoArrays()
    summary = {"last_deal": -1, "last_deal_tricks": (0, 0)}
    for k in range(10):
        now = {"deal": 0, "tricks": (k, 0), "scores": (0, k % 2)}
        assert same(convert(now, summary), {**info_arrays({**now, **summary}), **NO_ILLEGAL_ACTION})
        assert len(convert._arrays) <= 3


@pytest.mark.parametrize("game_id", game_ids())
def test_single_agent_infos_have_the_same_numeric_keys_at_every_step(game_id: str) -> None:
    env = make_single_agent(game_id, **SHORT[game_id])
    rng = np.random.default_rng(1)
    infos = []
    for episode in range(3):
        _, info = env.reset(seed=episode)
        infos.append(info)
        done = False
        while not done:
            mask = env.action_masks()
            action = int(np.flatnonzero(~mask)[0]) if episode == 2 else random_legal(mask, rng)
            _, _, done, _, info = env.step(action)
            infos.append(info)
    assert_stackable(infos, game_id)
    assert infos[-1]["illegal_actions"] == 1 and infos[-1]["illegal_action"] >= 0
    assert "cannot play" in env.illegal_reason


@pytest.mark.parametrize("trump_mode", ["none", "turn_up"])
def test_the_numeric_infos_say_what_the_text_said(trump_mode: str) -> None:
    env = make("oh_hell_v0", num_players=3, max_cards=2, trump_mode=trump_mode)
    env.reset(seed=3)
    rng = np.random.default_rng(3)
    names = env.game.phase_names
    for agent in env.agent_iter():
        _, _, term, trunc, info = env.last()
        assert names[info["phase"]] == ("over" if term else env.raw.view(agent).phase)
        if term or trunc:
            env.step(None)
            continue
        env.step(random_legal(env.observe(agent)["action_mask"], rng))
    final = env.raw.game_state
    summary = dict(final.deal_summary)
    assert info["last_deal"] == final.deal_index
    assert info["last_deal_trump"] == (4 if summary["trump"] is None else summary["trump"])
    np.testing.assert_array_equal(info["last_deal_bids"], summary["bids"])
    best = max(final.scores)
    np.testing.assert_array_equal(info["winners"], [int(s == best) for s in final.scores])


# ---------------------------------------------------------------------- 3. observe() after the end
@pytest.mark.parametrize("game_id", game_ids())
@pytest.mark.parametrize(("wrapper", "arg"), [("sticky_actions_v0", 0.25), ("delay_observations_v0", 2)])
def test_supersuit_wrappers_play_every_game_to_the_end(game_id: str, wrapper: str, arg: float) -> None:
    supersuit = pytest.importorskip("supersuit")
    env = getattr(supersuit, wrapper)(make(game_id, **SHORT[game_id]), arg)
    rng = np.random.default_rng(2)
    for seed in range(3):
        env.reset(seed=seed)
        for agent in env.agent_iter():
            _, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
            else:  # the current mask (a delayed observation's is stale); a repeated card ends the game as illegal
                env.step(random_legal(env.unwrapped.observe(agent)["action_mask"], rng))
        assert env.agents == []


@pytest.mark.parametrize("raw", [False, True])
@pytest.mark.parametrize("game_id", game_ids())
def test_observe_after_the_end_is_the_final_observation(game_id: str, raw: bool) -> None:
    env = make(game_id, raw=raw, **SHORT[game_id])
    env.reset(seed=4)
    rng = np.random.default_rng(4)
    final: dict[str, dict[str, np.ndarray]] = {}
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            final[agent] = obs
            env.step(None)
        else:
            env.step(random_legal(obs["action_mask"], rng))
    assert env.agents == [] and set(final) == set(env.possible_agents)
    for agent, obs in final.items():
        after = env.observe(agent)
        np.testing.assert_array_equal(after["observation"], obs["observation"])
        assert not after["action_mask"].any()


# ---------------------------------------------------------------------- 5. the mask in info
@pytest.mark.parametrize("game_id", game_ids())
def test_single_agent_info_carries_the_action_mask(game_id: str) -> None:
    env = make_single_agent(game_id, **SHORT[game_id])
    rng = np.random.default_rng(5)
    _, info = env.reset(seed=5)
    done = False
    while True:
        assert info["action_mask"].dtype == np.int8
        np.testing.assert_array_equal(info["action_mask"], env.action_masks())
        assert info["action_mask"].shape == (env.action_space.n,)
        if done:
            break
        _, _, done, _, info = env.step(random_legal(info["action_mask"], rng))
    assert not info["action_mask"].any()


# ---------------------------------------------------------------------- 6. metadata and Gymnasium ids
def test_every_game_class_has_a_metadata_dict_of_its_own_with_render_fps() -> None:
    classes = [type(make(g, raw=True)) for g in game_ids()]
    dicts = [c.metadata for c in classes] + [whist_env.envs.aec.WhistAECEnv.metadata]
    assert len({id(d) for d in dicts}) == len(dicts)
    assert len({id(d["render_modes"]) for d in dicts}) == len(dicts)
    for cls in classes:
        assert cls.metadata["render_fps"] > 0 and cls.metadata["name"] == cls.game_cls.game_id
    classes[0].metadata["render_modes"].append("rgb_array")  # a wrapper that adds a mode to one game
    try:
        assert all("rgb_array" not in c.metadata["render_modes"] for c in classes[1:])
    finally:
        classes[0].metadata["render_modes"].remove("rgb_array")
    single = make_single_agent("humbug_v0")
    assert single.metadata["render_fps"] > 0 and single.metadata is not make_single_agent("humbug_v0").metadata


@pytest.mark.parametrize("game_id", game_ids())
def test_gymnasium_make_builds_the_single_agent_env(game_id: str) -> None:
    gym_id = gymnasium_id(game_id)
    assert gym_id == "whist_env/" + game_id.replace("_v0", "-v0") and gym_id in gymnasium.registry
    env = gymnasium.make(gym_id, opponents="heuristic", learner_seat=1, **SHORT[game_id])
    assert env.unwrapped.game_id == game_id and env.spec is not None and env.spec.id == gym_id
    obs, info = env.reset(seed=0)
    assert env.observation_space.contains(obs) and info["learner_seat"] == 1
    rng = np.random.default_rng(6)
    done = False
    while not done:
        obs, _, done, _, info = env.step(random_legal(info["action_mask"], rng))
    env.close()


@pytest.mark.parametrize("game_id", game_ids())
def test_gymnasium_make_vec_sync_runs_single_agent_envs(game_id: str) -> None:
    envs = gymnasium.make_vec(gymnasium_id(game_id), num_envs=3, vectorization_mode="sync", **SHORT[game_id])
    obs, infos = envs.reset(seed=0)
    assert obs.shape == (3, *envs.single_observation_space.shape)
    rng = np.random.default_rng(7)
    for _ in range(30):
        actions = np.array([random_legal(m, rng) if m.any() else 0 for m in infos["action_mask"]])
        obs, _, _, _, infos = envs.step(actions)
    envs.close()


IMPORT_ORDERS = [
    # whist_env first: the games join each registry when that library is imported
    "import whist_env, sys; assert not {'gymnasium', 'pettingzoo'} & set(sys.modules), sys.modules.keys()\n"
    "import gymnasium, pettingzoo",
    # the libraries first: the games join at once
    "import gymnasium, pettingzoo, whist_env",
    # a library imported from the middle of one of whist_env's modules (registration imports gymnasium and, through
    # the AEC env, pettingzoo): the registrations need nothing of ours that is half imported
    "import whist_env\nfrom whist_env.envs.registration import make\nimport gymnasium, pettingzoo",
    "import whist_env\nimport pettingzoo\nimport gymnasium",
]


@pytest.mark.parametrize("order", IMPORT_ORDERS)
def test_import_whist_env_is_light_and_registers_whatever_the_order_of_imports(order: str) -> None:
    """``import whist_env`` imports neither Gymnasium nor PettingZoo (a bot process starts in a quarter of a
    second); every game is in both registries once they are imported, in any order of imports."""
    import subprocess
    import sys

    check = (
        f"{order}\n"
        "ids = [whist_env.gymnasium_id(g) for g in whist_env.game_ids()]\n"
        "assert all(i in gymnasium.registry for i in ids), [i for i in ids if i not in gymnasium.registry]\n"
        "from pettingzoo import aec_registry\n"
        "assert all(i in aec_registry for i in ids)\n"
        "env = pettingzoo.make('aec', ids[0]); env.reset(seed=0)\n"
        "print(gymnasium.make(ids[-1]).unwrapped.__class__.__name__)\n"
    )
    done = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "SingleAgentWhistEnv"
