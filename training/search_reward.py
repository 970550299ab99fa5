"""Search in the loop: a reward the double-dummy solver computes (issue #13, deliverable 4).

German Whist's phase 2 is played with both hands known (with perfect recall every card is placed once the stock
is empty), so its value under best play is exact: :class:`Phase1SolverReward` ends the learner's episode where
phase 2 starts and pays the deal's reward as if both seats then played perfectly. The learner's phase-1 choices
(which prizes to buy, which cards to keep) are then judged by what they are worth against perfect play, not by
the noise of how the rest of the deal happened to be played; phase 2 is left to the search
(``pimc(fallback=model:<run>/model.zip)`` plays it exactly).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from training.config import ConfigError
from whist_env.games.german_whist.rules import PHASE1_TRICKS, TRICKS, GermanWhist, counted_tricks, deal_reward
from whist_env.rules.core import TrickGame
from whist_env.search.solver import Solver, solve

SEARCH_REWARDS = ("phase1_dd",)


def check_search_reward(name: str, game_id: str, game: TrickGame) -> None:
    """Refuse a ``search_reward`` the game cannot have.

    Raises:
        ConfigError: naming the value and what is allowed.
    """
    if name not in SEARCH_REWARDS:
        raise ConfigError(f"search_reward must be empty or one of {', '.join(SEARCH_REWARDS)}, got {name!r}")
    if not isinstance(game, GermanWhist):
        raise ConfigError(f"search_reward {name!r} is German Whist's (german_whist_v0), not {game_id}'s")
    if game.config.num_deals != 1 or not game.config.include_history:
        raise ConfigError(
            f"search_reward {name!r} needs one deal per episode and perfect recall (num_deals=1, "
            f"include_history=True), got num_deals={game.config.num_deals}, "
            f"include_history={game.config.include_history}"
        )


class Phase1SolverReward(gym.Wrapper):
    """End the learner's German Whist episode where phase 2 starts, paid the deal's double-dummy result.

    Wraps a :class:`~whist_env.envs.single_agent.SingleAgentWhistEnv` (or a wrapper of one). At the learner's
    first decision of phase 2 (trick 14; the opponent may have led to it already) the episode ends
    (``terminated``) with the reward the deal pays when both seats play the rest perfectly. ``info`` then holds
    ``dd_tricks``, the counted tricks the learner takes under best play from there.
    """

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        game = env.unwrapped.game  # type: ignore[attr-defined]
        check_search_reward("phase1_dd", game.game_id, game)
        self._game: GermanWhist = game
        self._solver = Solver()

    def action_masks(self) -> Any:
        """The learner's legal actions (what MaskablePPO asks for)."""
        return self.env.action_masks()  # type: ignore[attr-defined]

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        inner = self.env.unwrapped
        state = inner.game_state  # type: ignore[attr-defined]
        if terminated or truncated or state.trick_number < PHASE1_TRICKS:
            return obs, float(reward), terminated, truncated, info
        me = inner.learner_seat  # type: ignore[attr-defined]
        value = solve(self._game, state, self._solver).value  # counted tricks of the side to move: the learner
        phase1, phase2 = self._game.phase_tricks(state)
        left = TRICKS - state.trick_number  # trick 14 is not complete: no phase-2 trick is won yet
        best = list(phase2)
        best[me] += value
        best[1 - me] += left - value
        counted = counted_tricks(phase1, (best[0], best[1]), self._game.config.count_all_tricks)
        seat0 = deal_reward(counted, self._game.config.reward)
        info = dict(info, dd_tricks=counted[me])
        return obs, float(reward) + (seat0 if me == 0 else -seat0), True, False, info
