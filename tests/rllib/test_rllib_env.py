"""``WhistMultiAgentEnv``: turn-based observations with masks, league tables, rewards that add up to the game's."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from whist_env.cards import bits_of
from whist_env.registry import game_ids, get_spec

pytestmark = pytest.mark.rllib

LEAGUE = {"main": 1.0, "snapshot": 1.0, "heuristic": 1.0, "random": 1.0}
OPTIONS: list[tuple[str, dict[str, Any]]] = [(g, {}) for g in game_ids()] + [
    ("oh_hell_v0", {"num_players": n, "episode": "deal"}) for n in (2, 5, 8)
]


def make_env(game_id: str, options: dict[str, Any], opponents: dict[str, float] = LEAGUE) -> Any:
    from whist_env.learning.rllib.env import WhistMultiAgentEnv

    return WhistMultiAgentEnv(
        {"game": game_id, "game_options": options, "opponents": opponents, "snapshot_pool": 2, "snapshots": 2}
    )


def play_episode(env: Any, seed: int) -> tuple[dict[str, float], dict[str, Any]]:
    """Random legal play of one episode; checks every step and returns each agent's summed rewards and last obs."""
    from whist_env.learning.rllib.league import module_for_agent, seat_of

    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    totals = dict.fromkeys(env.agents, 0.0)
    assert all(module_for_agent(a) in ("main", "snapshot_0", "snapshot_1") for a in env.agents)
    assert any(module_for_agent(a) == "main" for a in env.agents)
    while True:
        (agent,) = obs  # turn-based: only the seat to act observes
        seat = seat_of(agent)
        assert seat == env._state.to_act and agent in env.agents
        o = obs[agent]
        assert env.observation_spaces[agent].contains(o)
        legal = bits_of(env.game.view(env._state, seat).legal)
        assert np.flatnonzero(o["action_mask"]).tolist() == legal
        obs, rewards, terminated, truncated, infos = env.step({agent: int(rng.choice(legal))})
        assert set(rewards) <= set(env.agents) and not truncated["__all__"]
        for a, r in rewards.items():
            totals[a] += r
        if terminated["__all__"]:
            assert set(obs) == set(env.agents)  # every RLlib-played seat sees the end
            assert all(info["table"] == env.roles for info in infos.values())
            return totals, obs


@pytest.mark.parametrize(("game_id", "options"), OPTIONS, ids=[f"{g}-{o}" for g, o in OPTIONS])
def test_random_play_through_the_env(game_id: str, options: dict[str, Any]) -> None:
    from whist_env.learning.rllib.league import seat_of

    env = make_env(game_id, options)
    n = env.game.num_players
    assert len(env.possible_agents) == 3 * n
    for seed in range(4):
        totals, _ = play_episode(env, seed)
        for agent, total in totals.items():  # every reward arrived, in full
            assert total == pytest.approx(env._state.returns[seat_of(agent)])
        scripted = [s for s, role in enumerate(env.roles) if role in ("heuristic", "random")]
        assert not {seat_of(a) for a in env.agents} & set(scripted)


def test_partners_are_played_by_one_module() -> None:
    env = make_env("classic_whist_v0", {"episode": "deal"})
    for seed in range(10):
        env.reset(seed=seed)
        assert env.roles[0] == env.roles[2] and env.roles[1] == env.roles[3]


def test_pure_self_play_exposes_every_seat_as_main() -> None:
    env = make_env("oh_hell_v0", {"num_players": 6, "episode": "deal"}, {"main": 1.0})
    env.reset(seed=0)
    assert sorted(env.agents) == sorted(f"player_{s}@main" for s in range(6))


def test_set_snapshots_limits_the_draw() -> None:
    env = make_env("german_whist_v0", {}, {"snapshot": 1.0})
    env.set_snapshots(0)
    env.reset(seed=0)
    assert env.roles == ["main", "main"]
    env.set_snapshots(5)  # more than the pool: clipped to it
    assert env.snapshots == 2


def test_the_observation_is_the_pettingzoo_one() -> None:
    """The same seat in the same position observes the same numbers through both faces."""
    import whist_env

    env = make_env("german_whist_v0", {}, {"main": 1.0})
    obs, _ = env.reset(seed=3)
    (agent,) = obs
    aec = whist_env.make("german_whist_v0", raw=True)
    aec.reset(seed=0)
    aec.unwrapped._state = env._state  # the rules state of the RLlib env, seen through the PettingZoo env
    expected = aec.observe(f"player_{env._state.to_act}")
    np.testing.assert_array_equal(obs[agent]["observation"], expected["observation"])
    np.testing.assert_array_equal(obs[agent]["action_mask"], expected["action_mask"])
    assert spec_size("german_whist_v0") == obs[agent]["observation"].shape[0]


def spec_size(game_id: str) -> int:
    spec = get_spec(game_id)
    return spec.make_encoder(spec.make_rules()).size
