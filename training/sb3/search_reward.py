"""Search in the loop: a reward the double-dummy solver computes (issue #13, deliverable 4).

A game whose card play becomes open-handed at some trick (its spec's ``search.open_from``: German Whist's phase 2,
where with perfect recall every card is placed once the stock is empty) has an exact value under best play from
there. :class:`Phase1SolverReward` ends the learner's episode at that trick and pays what the deal pays when both
seats then play perfectly. The learner's earlier choices (German Whist's prizes to buy, cards to keep) are then
judged by what they are worth against perfect play, not by the noise of how the rest of the deal happened to be
played; the rest is left to the search (``pimc(fallback=model:<run>/model.zip)`` plays it exactly).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from training.config import check_search_reward
from whist_env.registry import get_spec
from whist_env.rules.core import State, TrickGame
from whist_env.search.solver import Solver, solve


class Phase1SolverReward(gym.Wrapper):
    """End the learner's episode where the card play becomes open-handed, paid the deal's double-dummy result.

    Wraps a :class:`~whist_env.envs.single_agent.SingleAgentWhistEnv` (or a wrapper of one) of a game whose spec
    has ``search.open_from``. At the learner's first decision from that trick on (German Whist: trick 14, the
    first of phase 2; the opponent may have led to it already) the episode ends (``terminated``) with the reward
    the deal pays when both seats play the rest perfectly. ``info["dd_tricks"]`` then holds the counted tricks
    the learner takes from there under best play (the solver's value); -1 at every other step (the same keys at
    every step).

    Raises:
        ConfigError: for a game without an open-handed end, a series or a game without perfect recall.
    """

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        game: TrickGame[Any] = env.unwrapped.game  # type: ignore[attr-defined]
        check_search_reward("phase1_dd", game.game_id, game)
        search = get_spec(game.game_id).search
        assert search is not None and search.open_from is not None  # check_search_reward refuses the others
        self._open_from = search.open_from
        self._game = game
        self._solver = Solver()

    def action_masks(self) -> Any:
        """The learner's legal actions (what MaskablePPO asks for)."""
        return self.env.action_masks()  # type: ignore[attr-defined]

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        return obs, dict(info, dd_tricks=-1)

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        inner = self.env.unwrapped
        state = inner.game_state  # type: ignore[attr-defined]
        if terminated or truncated or state.trick_number < self._open_from:
            return obs, float(reward), terminated, truncated, dict(info, dd_tricks=-1)
        me = inner.learner_seat  # type: ignore[attr-defined]
        rest, dd_tricks = self._play_out(state.copy())
        info = dict(info, dd_tricks=dd_tricks)
        return obs, float(reward) + rest[me], True, False, info

    def _play_out(self, state: State) -> tuple[list[float], int]:
        """Play the deal to its end from ``state`` (changed), every seat playing a best card of the solver.

        Returns:
            What the rest pays each seat, and the counted tricks the side to move at the start takes.
        """
        paid_out = [0.0] * self._game.num_players
        value: int | None = None
        while not state.done:
            solution = solve(self._game, state, self._solver)
            value = solution.value if value is None else value
            paid = self._game.apply(state, solution.best_cards()[0])
            if paid:
                paid_out = [a + b for a, b in zip(paid_out, paid, strict=True)]
        assert value is not None  # the deal was not over when the episode reached the open-handed trick
        return paid_out, value
