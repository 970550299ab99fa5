"""Playouts: the value of each legal card as the tricks its side takes from now to the deal's end when deals drawn
for the seat's view are played to the end on the batched engine, the card first, then every seat by one batched
agent (the game's heuristic port, or a pretrained network). PIMC's ``playouts`` option uses them where its solver
does not search (the opening of classic whist).

Each seat of a playout decides from its own view of the engine's state, so unlike a double-dummy solve nobody
plays as if the cards were open. A deal drawn for the view and the card tried make one row of the engine
(:meth:`~whist_env.vector.core.RawVectorEnv.import_view`); all rows of a decision are played in one batch.
The plain twin: ``tests/search/test_playout.py`` plays the same deals through the rules with the same agents.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from whist_env.agents.base import Agent
from whist_env.errors import OptionError
from whist_env.registry import GameRef, spec_of
from whist_env.spec import GameSpec, sides_of
from whist_env.view import PlayerView

__all__ = ["Playouts"]


class Playouts:
    """Plays deals out on the batched engine for one game, one agent in every seat.

    Args:
        game_id: a game with a batched engine that takes views (``import_view``: classic whist).
        agent: the agent of every seat: the game's heuristic (its batched port plays) or a
            :class:`~whist_env.agents.pretrained.PretrainedAgent` (its network plays, a batch per step).
        **options: the game's options; the engine adds the single-deal ones (``GameSpec.single_deal``).

    Raises:
        OptionError: for an agent without a batched form, naming those that have one.
    """

    def __init__(self, game_id: GameRef, agent: Agent, **options: Any) -> None:
        self.spec = spec_of(game_id)
        _check_engine(self.spec)
        self.options = {**options, **self.spec.single_deal}
        self.agent = _batched(agent, self.spec.game_id, self.options)
        rules = self.spec.make_rules(**self.options)
        if not rules.recall:
            raise OptionError(
                f"pimc: playouts need include_history=True in {self.spec.game_id}: a view without recall does not "
                "say which cards were played, so no deal can be played out from it"
            )
        self.sides = sides_of(rules.num_players, self.spec.partner_offset)
        self._venv: Any = None

    def values(self, view: PlayerView, hands: np.ndarray, cards: list[int]) -> np.ndarray:
        """``out[s, a]``: the tricks the side of ``view.seat`` takes from now to the deal's end when it plays
        ``cards[a]`` now with every seat holding ``hands[s]`` (masks, ``(S, n)``) and the agent then plays every seat.
        # (S, len(cards))"""
        from whist_env.vector.engines import make
        from whist_env.vector.policy import StateAgent

        k, m = len(hands), len(cards)
        b = k * m
        if self._venv is None or self._venv.num_envs < b:
            self._venv = make(self.spec.game_id, b, seed=0, **self.options)
        venv = self._venv
        envs = np.arange(b)
        venv.import_view(envs, view, np.repeat(np.asarray(hands, np.int64), m, axis=0))
        step = venv.step_envs(envs, np.tile(np.asarray(cards, np.int64), k))
        obs, mask, done = step.observation.copy(), step.action_mask.astype(bool), step.terminated.copy()
        while not done.all():
            active = envs[~done]
            if isinstance(self.agent, StateAgent):
                actions = self.agent.act_state(venv, active)
            else:
                actions = self.agent(obs[active], mask[active])
            step = venv.step_envs(active, np.asarray(actions, np.int64))
            obs[active] = step.observation
            mask[active] = step.action_mask.astype(bool)
            done[active] = step.terminated
        side = self.sides[view.seat]
        seats = [s for s, t in enumerate(self.sides) if t == side]
        won = venv.field("tricks_won")[:b, seats].sum(axis=1)
        before = sum(view.tricks_won[s] for s in seats)
        return (won - before).reshape(k, m).astype(np.float64)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_venv"] = None  # rebuilt on first use (copies and pickles stay small)
        return state


def _check_engine(spec: GameSpec[Any, Any]) -> None:
    """Refuse a game whose batched engine does not take a seat's view (``import_view``)."""
    from whist_env.spec import load
    from whist_env.vector.core import RawVectorEnv

    cls = load(spec.engine) if spec.engine is not None else None
    if cls is None or cls._view_row is RawVectorEnv._view_row:
        raise OptionError(
            f"pimc: playouts need a batched engine that takes a seat's view; {spec.game_id}'s engine does not take "
            "a seat's view yet (an engine takes one once it defines _view_row)"
        )


def _batched(agent: Agent, game_id: str, options: dict[str, Any]) -> Any:
    """The batched form of ``agent``: the heuristic's engine port, or the network of a pretrained agent."""
    from whist_env.agents.pretrained import PretrainedAgent
    from whist_env.vector.heuristics import BatchedHeuristic
    from whist_env.vector.policy import BatchedPolicy

    if isinstance(agent, PretrainedAgent):
        return BatchedPolicy(agent, np.random.default_rng(0))  # deterministic play draws nothing
    if type(agent) is spec_of(game_id).heuristic_cls():
        return BatchedHeuristic(game_id, **options)
    raise OptionError(
        f"pimc: playouts need a fallback with a batched form (the game's heuristic, or pretrained / "
        f"pretrained(path=...)), got {getattr(agent, 'name', type(agent).__name__)!r}"
    )
