"""The RLlib ``MultiAgentEnv`` face of a game, for masked multi-agent self-play on the new API stack.

Each episode the league draws a table (:func:`whist_env.learning.rllib.league.draw_table`): the seats RLlib plays
are agents ``player_<seat>@<module id>`` whose observations are ``{"observation", "action_mask"}``
(the names PettingZoo uses, read by :class:`~whist_env.learning.rllib.module.MaskedActorCritic`); scripted league
members (``random``, ``heuristic``, ...) are played inside the environment, so RLlib never sees their turns.
The game is turn-based: a step's observations hold only the agent to act, and when the game ends, every
agent RLlib plays gets its last observation and ``terminateds["__all__"]``. Rewards are each seat's
game rewards (each game's rewards section of docs/rules.md), given to every RLlib-played agent at the step
where they arise.

Observations are exactly the game's encoder output for the seat's view (``GameSpec.make_encoder``), the
same numbers the PettingZoo env and :class:`~whist_env.learning.rllib.agent.RLlibAgent` produce.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from whist_env.learning.rllib import require

require("ray.rllib", "whist_env.learning.rllib.env")

from gymnasium import spaces  # noqa: E402
from ray.rllib.env.multi_agent_env import MultiAgentEnv  # noqa: E402

from whist_env.agents.base import Agent  # noqa: E402
from whist_env.agents.factory import make_agent  # noqa: E402
from whist_env.learning.rllib.league import (  # noqa: E402
    MAIN,
    agent_id,
    check_opponents,
    draw_table,
    is_module,
    module_ids,
    scripted_names,
)
from whist_env.registry import get_spec  # noqa: E402
from whist_env.rules.core import PHASE_OVER  # noqa: E402

ENV_NAME = "whist_env_multi_agent"
"""The name the training script registers :class:`WhistMultiAgentEnv` under (``ray.tune.register_env``)."""


def observation_space(size: int, num_actions: int) -> spaces.Dict:
    """The observation space of one seat: the encoded view and the legal-action mask (as PettingZoo's)."""
    return spaces.Dict(
        {
            "observation": spaces.Box(0.0, 1.0, (size,), np.float32),
            "action_mask": spaces.Box(0, 1, (num_actions,), np.int8),
        }
    )


class WhistMultiAgentEnv(MultiAgentEnv):
    """A whist_env game as an RLlib multi-agent environment with a league of opponents.

    Args:
        config: ``game`` (environment id), ``game_options`` (the game's options), ``opponents`` (league
            weights: ``main``, ``snapshot``, agent specs; default ``{"main": 1}``, pure self-play),
            ``snapshot_pool`` (snapshot slots that exist as modules), ``snapshots`` (slots filled so far)
            and ``seed`` (seeds the draws until ``reset(seed=...)`` does).

    Raises:
        OptionError: for an unknown game, bad options or bad league weights.
    """

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        super().__init__()
        cfg = dict(config or {})
        self.game_id: str = cfg["game"]
        self.game_options: dict[str, Any] = dict(cfg.get("game_options") or {})
        spec = get_spec(self.game_id)
        self.game = spec.make_rules(**self.game_options)
        self.encoder = spec.make_encoder(self.game)
        n = self.game.num_players
        self.sides = spec.sides(n)
        self.opponents: dict[str, float] = dict(cfg.get("opponents") or {MAIN: 1.0})
        check_opponents(self.opponents)
        self.pool = int(cfg.get("snapshot_pool", 0))
        self.snapshots = min(int(cfg.get("snapshots", 0)), self.pool)
        self.scripted: dict[str, Agent] = {
            name: make_agent(name, self.game_id, **self.game_options) for name in scripted_names(self.opponents)
        }
        # Every (seat, module) pair is a possible agent, so that the spaces are known for whatever the league draws.
        self.possible_agents = [agent_id(s, m) for s in range(n) for m in module_ids(self.pool)]
        self.agents: list[Any] = []
        space = observation_space(self.encoder.size, self.game.num_actions)
        self.observation_spaces = dict.fromkeys(self.possible_agents, space)
        self.action_spaces = dict.fromkeys(self.possible_agents, spaces.Discrete(self.game.num_actions))
        self._rng = np.random.default_rng(cfg.get("seed"))
        self._state: Any = None
        self.roles: list[str] = []
        self._agent_of_seat: list[str | None] = []
        self._pending = [0.0] * n
        self._started: set[str] = set()

    def set_snapshots(self, count: int) -> None:
        """Let the league draw from the first ``count`` snapshot slots (the training script calls it on every
        env runner after it fills one)."""
        self.snapshots = max(0, min(int(count), self.pool))

    # ------------------------------------------------------------------ MultiAgentEnv API
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[Any, Any], dict[Any, Any]]:
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self.roles = draw_table(self.sides, self.opponents, self.snapshots, self._rng)
        self._agent_of_seat = [agent_id(s, r) if is_module(r) else None for s, r in enumerate(self.roles)]
        self.agents = [a for a in self._agent_of_seat if a is not None]
        self._state = self.game.new_episode(self._rng)
        self._pending = [0.0] * self.game.num_players
        self._play_scripted()
        if self._state.phase == PHASE_OVER:  # pragma: no cover - every deal needs a card from every seat
            raise RuntimeError(f"{self.game_id}: the episode ended before an RLlib-played seat acted")
        obs = self._observe_to_act()
        self._started = set(obs)
        return obs, {}

    def step(  # type: ignore[override]  # gymnasium's single-agent signature, which MultiAgentEnv overrides too
        self, action_dict: dict[Any, Any]
    ) -> tuple[dict[Any, Any], dict[Any, Any], dict[Any, Any], dict[Any, Any], dict[Any, Any]]:
        state = self._state
        seat = state.to_act
        agent = self._agent_of_seat[seat]
        if agent is None or agent not in action_dict:
            raise KeyError(f"{self.game_id}: step() needs the action of {agent!r} (seat {seat} is to act)")
        self._apply(int(action_dict[agent]))
        self._play_scripted()
        over = state.phase == PHASE_OVER
        obs = (
            {a: self._observe(s) for s, a in enumerate(self._agent_of_seat) if a is not None}
            if over
            else self._observe_to_act()
        )
        # A reward waits for an agent that has had no observation yet (RLlib wants none before an agent's
        # first step); every seat plays in the first trick, so in practice none waits.
        rewards: dict[Any, Any] = {}
        for s, a in enumerate(self._agent_of_seat):
            if a is not None and (a in self._started or over):
                rewards[a] = self._pending[s]
                self._pending[s] = 0.0
        self._started.update(obs)
        # the table's roles, for the per-policy metrics (whist_env.learning.rllib.callbacks)
        infos = {a: {"table": list(self.roles)} for a in obs} if over else {}
        return obs, rewards, {"__all__": over}, {"__all__": False}, infos

    # ------------------------------------------------------------------ internals
    def _apply(self, action: int) -> None:
        rewards = self.game.step(self._state, action, self._rng)
        if rewards is not None:
            for s, r in enumerate(rewards):
                self._pending[s] += float(r)

    def _play_scripted(self) -> None:
        """Play the scripted seats until an RLlib-played seat is to act or the game is over."""
        state = self._state
        while state.phase != PHASE_OVER and self._agent_of_seat[state.to_act] is None:
            seat = state.to_act
            scripted = self.scripted[self.roles[seat]]
            self._apply(int(scripted.act(self.game.view(state, seat), self._rng)))

    def _observe(self, seat: int) -> dict[str, np.ndarray]:
        obs, mask = self.encoder.encode_state(self.game, self._state, seat)
        return {"observation": obs, "action_mask": mask}

    def _observe_to_act(self) -> dict[Any, Any]:
        seat = self._state.to_act
        agent = self._agent_of_seat[seat]
        assert agent is not None
        return {agent: self._observe(seat)}
