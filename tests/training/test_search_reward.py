"""German Whist's search-in-the-loop reward (``search_reward: phase1_dd``): the episode ends where phase 2 starts,
paid what the deal pays when both seats play phase 2 perfectly."""

from __future__ import annotations

import numpy as np
import pytest

from training.config import ConfigError, load_config
from training.sb3.envs import _make_env
from training.sb3.search_reward import Phase1SolverReward
from whist_env.envs.single_agent import make_single_agent
from whist_env.games.german_whist.rules import PHASE1_TRICKS
from whist_env.search.solver import solve


def _play_out_perfectly(game, state) -> list[float]:
    """Play the rest of the deal with a best card of the solver for whoever is to act; the deal's rewards."""
    rewards = [0.0, 0.0]
    while not state.done:
        card = solve(game, state).best_cards()[0]
        paid = game.apply(state, card)
        if paid:
            rewards = [a + b for a, b in zip(rewards, paid, strict=True)]
    return rewards


@pytest.mark.parametrize("options", [{}, {"count_all_tricks": True}, {"reward": "trick_diff"}])
def test_the_reward_is_what_perfect_play_of_phase_2_pays(options):
    inner = make_single_agent("german_whist_v0", opponents="heuristic", learner_seat="random", **options)
    env = Phase1SolverReward(inner)
    rng = np.random.default_rng(7)
    for episode in range(12):
        _, info = env.reset(seed=episode)
        assert info["dd_tricks"] == -1
        while True:
            action = int(rng.choice(np.flatnonzero(env.action_masks())))
            _, reward, terminated, truncated, info = env.step(action)
            assert not truncated
            if terminated:
                break
            assert info["dd_tricks"] == -1  # the same keys at every step
        state = inner.game_state
        # Ends exactly at the learner's first decision of phase 2, the deal not over.
        assert state.trick_number == PHASE1_TRICKS and not state.done
        assert state.to_act == inner.learner_seat
        expected = _play_out_perfectly(inner.game, state.copy())[inner.learner_seat]
        assert reward == expected
        assert info["dd_tricks"] >= 0


def test_the_config_key_builds_the_wrapper_and_refuses_other_games():
    config = load_config("configs/german_whist.yaml", {"search_reward": "phase1_dd"})
    assert isinstance(_make_env(config), Phase1SolverReward) or any(
        isinstance(w, Phase1SolverReward) for w in _wrappers(_make_env(config))
    )
    with pytest.raises(ConfigError, match=r"becomes open-handed \(german_whist_v0\), not classic_whist_v0"):
        load_config("configs/classic_whist.yaml", {"search_reward": "phase1_dd"})
    with pytest.raises(ConfigError, match="one of phase1_dd"):
        load_config("configs/german_whist.yaml", {"search_reward": "solver"})
    with pytest.raises(ConfigError, match=r"recall \(num_deals=1, include_history=True\), got num_deals=3"):
        load_config("configs/german_whist.yaml", {"search_reward": "phase1_dd", "game_options": {"num_deals": 3}})
    with pytest.raises(ConfigError, match="got num_deals=1, include_history=False"):
        no_recall = {"include_history": False}
        load_config("configs/german_whist.yaml", {"search_reward": "phase1_dd", "game_options": no_recall})


def _wrappers(env):
    while hasattr(env, "env"):
        yield env
        env = env.env
