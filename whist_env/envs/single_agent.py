"""A single-agent Gymnasium environment over any registered game: one learner, the other seats inside.

    >>> from whist_env.envs.single_agent import make_single_agent
    >>> env = make_single_agent("german_whist_v0", opponents="random")
    >>> obs, info = env.reset(seed=0)
    >>> mask = env.action_masks()          # for sb3-contrib's MaskablePPO

The learner holds one seat (a new random seat every episode by default, or a fixed one). Every other
seat is played by an :class:`~whist_env.agents.base.Agent` *inside* the env: after the learner acts,
the opponents play until it is the learner's turn again or the episode ends. A transition is
therefore (my observation, my action, the reward I earned until my next turn, my next observation),
and the learner receives its terminal reward even when an opponent made the last move (STYLE.md,
"what cost those projects real bugs" 1).

Illegal actions (Gymnasium's and SB3's ``check_env`` send unmasked ones) end the episode with
``illegal_reward`` and are counted in ``info["illegal_actions"]``; nothing is silently replaced.

Infos hold the same keys at every step, numbers and fixed-shape numeric arrays only (Gymnasium's vector envs stack
them): ``learner_seat``, ``acting_seat`` (-1 once the episode is over), ``action_mask`` (int8, the learner's legal
actions now, as :meth:`SingleAgentWhistEnv.action_masks`), ``illegal_actions`` (0 or 1), ``illegal_action`` (the
refused action, -1: none; why: :attr:`SingleAgentWhistEnv.illegal_reason`), ``returns`` (every seat's return so far,
absolute seats) and the game's info of the learner's seat (:meth:`~whist_env.rules.core.TrickGame.info`: ``deal``,
``phase``, ``tricks``, ``scores``, the last deal's summary, the game's own keys). ``info["episode"]`` is left to
Gymnasium's ``RecordEpisodeStatistics`` (and SB3's ``Monitor``), which write it. With ``step_info="lean"`` a step that
does not end the episode has only the first three of those keys (:data:`LEAN_INFO_KEYS`): SB3's ``DummyVecEnv``
deep-copies every step's infos.

Randomness: the deal, the learner's seat and every opponent's choices come from the env's
``np_random`` generator, seeded by ``reset(seed=)``; no global RNG is used.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from whist_env.agents.base import Agent, RandomAgent
from whist_env.envs.aec import RENDER_FPS, RESET_OPTIONS, info_arrays, make_rng
from whist_env.errors import CallOrderError, OptionError
from whist_env.options import finite_number, reset_options
from whist_env.registry import get_spec, partnership_games
from whist_env.rules.core import State, as_action
from whist_env.rules.core import _all_slots as all_slots

SELF = "self"


class OpponentPool:
    """A set of agents one of which is drawn (with ``weights``) for a seat at every reset.

    Used for self-play: frozen snapshots of the learner mixed with scripted opponents.

    Args:
        agents: the candidates (agents or names that :func:`resolve_agent` understands).
        weights: relative draw probabilities (uniform when None).
    """

    def __init__(self, agents: Sequence[Agent | str], weights: Sequence[float] | None = None) -> None:
        if not agents:
            raise OptionError("OpponentPool needs at least one agent")
        self.agents = list(agents)
        if weights is None:
            self.probs = np.full(len(self.agents), 1.0 / len(self.agents))
        else:
            w = np.asarray(weights, dtype=np.float64)
            if w.shape != (len(self.agents),) or (w < 0).any() or w.sum() <= 0:
                raise OptionError(
                    f"OpponentPool weights must be {len(self.agents)} non-negative numbers with a positive sum, "
                    f"got {list(weights)}"
                )
            self.probs = w / w.sum()

    def draw(self, rng: np.random.Generator) -> int:
        """Index of the agent for the next episode."""
        if len(self.agents) == 1:
            return 0
        return int(rng.choice(len(self.agents), p=self.probs))

    def __repr__(self) -> str:
        names = [getattr(a, "name", a) for a in self.agents]
        return f"OpponentPool({names}, probs={np.round(self.probs, 3).tolist()})"


SeatSpec = Agent | str | OpponentPool
OpponentsSpec = SeatSpec | Sequence[SeatSpec] | Mapping[int, SeatSpec] | None


def resolve_agent(spec: Agent | str, game_id: str, **game_options: Any) -> Agent:
    """An agent from an agent or a name that :func:`whist_env.agents.make_agent` knows
    (``"random"``, ``"heuristic"``, ``"model:<path>"``), built for ``game_id`` with ``game_options``."""
    if isinstance(spec, str):
        if spec == "random":
            return RandomAgent()
        from whist_env.agents import make_agent

        return make_agent(spec, game_id, **game_options)
    if not callable(getattr(spec, "act", None)):
        raise OptionError(f"an opponent must be an Agent (with act(view, rng)) or a name, got {spec!r}")
    return spec


LEAN_INFO_KEYS = ("learner_seat", "acting_seat", "illegal_actions")
"""What a mid-episode info holds with ``step_info="lean"``."""


class SingleAgentWhistEnv(gym.Env):
    """One learner against agents that play inside the env; see the module docstring.

    Args:
        game: environment id (``"german_whist_v0"``, ...; see ``whist_env.registry.game_ids()``).
        opponents: who plays the other seats: one agent, name or :class:`OpponentPool` for every
            seat; a sequence of ``n - 1`` of them for the seats to the learner's left, in order
            (relative seats 1, 2, ...); or a mapping ``{relative seat: agent}`` covering 1..n-1.
            ``None`` means random opponents.
        learner_seat: ``"random"`` (a new seat drawn every episode, the default), ``"rotate"``
            (seat 0, 1, ..., in turn per episode) or a fixed seat.
        partner: partnership games only (``classic_whist_v0``): ``"self"`` makes the learner play
            its partner's seat too (the same policy decides for both; the reward is the team's);
            an agent, a name or a pool plays it; ``None`` leaves it to ``opponents``.
        illegal_reward: the reward of an illegal action, which ends the episode.
        render_mode: ``None``, ``"ansi"`` or ``"human"``; renders what the learner's seat sees.
        step_info: ``"full"`` (the default): every info holds the same keys, as Gymnasium's vector envs, Tianshou
            and TorchRL stack them; ``"lean"``: the info of a step that does not end the episode holds only
            :data:`LEAN_INFO_KEYS`, the last step's and the reset's are whole, for SB3's ``DummyVecEnv``, which
            deep-copies every step's infos (``training/train.py``'s envs: about 15 µs per step saved).
        **game_options: the game's options (validated by the game).

    Attributes:
        illegal_reason: why the action that ended this episode was refused ("" when none did).
    """

    metadata = {"render_modes": ["ansi", "human"], "render_fps": RENDER_FPS}  # noqa: RUF012 (Gymnasium's convention)

    def __init__(
        self,
        game: str,
        opponents: OpponentsSpec = None,
        learner_seat: int | str = "random",
        partner: SeatSpec | None = None,
        illegal_reward: float = -1.0,
        render_mode: str | None = None,
        step_info: str = "full",
        **game_options: Any,
    ) -> None:
        super().__init__()
        if step_info not in ("full", "lean"):
            raise OptionError(f"{game}: step_info must be 'full' or 'lean', got {step_info!r}")
        self.step_info = step_info
        self.metadata = {**self.metadata, "render_modes": list(self.metadata["render_modes"])}  # this env's own
        self.game_spec = get_spec(game)
        self.game_id = game
        self.game_options = dict(game_options)
        self.game = self.game_spec.make_rules(**game_options)
        self.encoder = self.game_spec.make_encoder(self.game)
        self.num_players: int = self.game.num_players
        n = self.num_players
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise OptionError(f"{game}: render_mode={render_mode!r} is not supported; use None, 'ansi' or 'human'")
        self.render_mode = render_mode
        if isinstance(learner_seat, str):
            if learner_seat not in ("random", "rotate"):
                raise OptionError(f"learner_seat must be 'random', 'rotate' or a seat 0..{n - 1}, got {learner_seat!r}")
        elif not (isinstance(learner_seat, (int, np.integer)) and not isinstance(learner_seat, bool)):
            raise OptionError(f"learner_seat must be 'random', 'rotate' or a seat 0..{n - 1}, got {learner_seat!r}")
        elif not 0 <= int(learner_seat) < n:
            raise OptionError(f"learner_seat must be 'random', 'rotate' or a seat 0..{n - 1}, got {learner_seat!r}")
        self.learner_seat_mode: int | str = learner_seat if isinstance(learner_seat, str) else int(learner_seat)
        self.illegal_reward = finite_number("illegal_reward", illegal_reward, game)
        self.observation_space = spaces.Box(0.0, 1.0, (self.encoder.size,), np.float32)
        self.action_space = spaces.Discrete(self.game.num_actions)
        self._seat_specs: dict[int, SeatSpec] = {}
        self.set_opponents(opponents, partner)
        self._state: State | None = None
        self._seat = 0  # the learner's (primary) seat this episode
        self._learner_seats: frozenset[int] = frozenset()
        self._agents: list[Agent | None] = [None] * n  # absolute seat -> agent (None: the learner)
        self._choices: dict[int, int] = {}  # relative seat -> pool index drawn this episode
        self._episode = 0
        self._pending = 0.0  # reward earned by the learner since its last action
        self._illegal = 0
        self._illegal_action = -1
        self.illegal_reason = ""
        self._mask = np.zeros(self.game.num_actions, dtype=bool)

    # ------------------------------------------------------------------ configuration
    def set_opponents(self, opponents: OpponentsSpec = None, partner: SeatSpec | None = None) -> None:
        """Replace who plays the other seats (see the class docstring).

        Self-play callbacks call this through ``VecEnv.env_method("set_opponents", ...)``. In the middle of
        an episode the seats change at once; a pool seat keeps the index it drew at reset (clipped to the
        new pool's size).
        """
        n = self.num_players
        others = list(range(1, n))
        specs: dict[int, SeatSpec]
        if opponents is None:
            specs = dict.fromkeys(others, "random")
        elif isinstance(opponents, (str, OpponentPool)) or callable(getattr(opponents, "act", None)):
            specs = dict.fromkeys(others, opponents)  # type: ignore[arg-type]
        elif isinstance(opponents, Mapping):
            keys = sorted(opponents)
            if keys != others:
                raise OptionError(
                    f"{self.game_id}: opponents as a mapping must cover relative seats {others} "
                    f"(1 = the learner's left), got {keys}"
                )
            specs = dict(opponents)
        elif isinstance(opponents, Sequence):
            if len(opponents) != n - 1:
                raise OptionError(
                    f"{self.game_id}: opponents as a sequence must hold {n - 1} agents (relative seats 1..{n - 1}, "
                    f"from the learner's left), got {len(opponents)}"
                )
            specs = dict(zip(others, opponents, strict=True))
        else:
            raise OptionError(
                f"{self.game_id}: opponents must be an Agent, a name, an OpponentPool, a sequence of {n - 1} of them "
                f"or a mapping {{relative seat: agent}}, got {opponents!r}"
            )
        partner_offset = self.game_spec.partner_offset
        if partner is not None:
            if partner_offset is None:
                raise OptionError(
                    f"{self.game_id} is not a partnership game; 'partner' applies to {', '.join(partnership_games())}"
                )
            specs[partner_offset] = partner
        for rel, spec in specs.items():
            if isinstance(spec, str) and spec == SELF:
                if partner_offset != rel:
                    raise OptionError(f"{self.game_id}: 'self' may only play the learner's partner seat")
                continue
            candidates = spec.agents if isinstance(spec, OpponentPool) else [spec]
            resolved = [resolve_agent(a, self.game_id, **self.game_options) for a in candidates]  # type: ignore[arg-type]
            specs[rel] = OpponentPool(resolved, spec.probs.tolist()) if isinstance(spec, OpponentPool) else resolved[0]
        self._seat_specs = specs
        if getattr(self, "_state", None) is not None:
            # Mid-episode: the seats are re-bound at once, keeping this episode's pool draws, so that a run
            # restored from a checkpoint (set_opponents, then set_state) continues exactly as the original.
            self._bind_agents()

    @property
    def learner_seat(self) -> int:
        """The learner's seat in the current episode."""
        return self._seat

    @property
    def game_state(self) -> State:
        """The omniscient rules state (tests and teaching only; never give it to an agent)."""
        if self._state is None:
            raise RuntimeError(f"{self.game_id}: call reset() first")
        return self._state

    # ------------------------------------------------------------------ Gymnasium API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        """Deal a new episode and play the opponents up to the learner's first decision.

        Args:
            seed: seeds ``np_random`` (the only generator used; an int >= 0).
            options: ``{"deck": [...], "dealer": d, "learner_seat": s}`` to start from a given deal, and
                the game's own ``extra_reset_options``.

        Raises:
            OptionError: for a bad seed, options that are not a dict, an unknown option or a bad value. A
                rejected reset changes nothing: neither the generator nor the episode in progress.
        """
        opts = reset_options(self.game_id, options, (*RESET_OPTIONS, "learner_seat", *self.game.extra_reset_options))
        n = self.num_players
        mode = opts.pop("learner_seat", self.learner_seat_mode)
        if not (
            mode in ("random", "rotate")
            if isinstance(mode, str)
            else isinstance(mode, (int, np.integer)) and not isinstance(mode, bool) and 0 <= int(mode) < n
        ):
            raise OptionError(f"learner_seat must be 'random', 'rotate' or a seat 0..{n - 1}, got {mode!r}")
        self.game.check_start(**opts)
        if seed is not None:
            make_rng(seed, self.game_id)  # the same check as the AEC env's, before Gymnasium seeds
        super().reset(seed=seed)
        rng = self.np_random
        if mode == "random":
            seat = int(rng.integers(n))
        elif mode == "rotate":
            seat = self._episode % n
        else:
            seat = int(mode)
        self._episode += 1
        self._seat = seat
        self._choices = {}
        for rel, spec in self._seat_specs.items():
            if isinstance(spec, OpponentPool):
                self._choices[rel] = spec.draw(rng)
        self._bind_agents()
        self._state = self.game.new_episode(rng, **opts)
        self._pending = 0.0
        self._illegal = 0
        self._illegal_action = -1
        self.illegal_reason = ""
        self._play_others()
        obs = self._observe()
        return obs, self._info()

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Play the learner's ``action``, then the other seats until the learner's next turn.

        Returns:
            observation, the reward the learner earned since its previous action (including from
            the opponents' moves, and the terminal reward when an opponent moved last),
            terminated, truncated (always False), info.
        """
        state = self._state
        if state is None:
            raise CallOrderError(f"{self.game_id}: call reset() before step(): no episode has started")
        if state.done or self._illegal:
            raise CallOrderError(f"{self.game_id}: step() after the end: the episode is over; call reset()")
        a = as_action(action, self.game.num_actions, self.game_id)
        if not (self.game.legal_mask(state) >> a) & 1:
            # Unmasked samplers (check_env) end up here: end the episode, never replace the action.
            self._illegal += 1
            self._illegal_action = a
            reward = self._pending + self.illegal_reward
            self._pending = 0.0
            self.illegal_reason = str(self.game.illegal(state, a, "not a legal action now"))
            obs = self._observe()
            return obs, reward, True, False, self._info()
        self._apply(a)
        self._play_others()
        reward = self._pending
        self._pending = 0.0
        obs = self._observe()
        if self.step_info == "lean" and not state.done:
            return obs, reward, False, False, {"learner_seat": self._seat, "acting_seat": state.to_act,
                                               "illegal_actions": 0}  # fmt: skip
        return obs, reward, state.done, False, self._info()

    def action_masks(self) -> np.ndarray:
        """Legal actions of the learner now (bool, ``(num_actions,)``); all False once the episode is over."""
        return self._mask.copy()

    def render(self) -> str | None:  # type: ignore[override]  # text frames; gymnasium 1.2's stubs want RenderFrame
        """What the learner's seat sees, as text."""
        if self.render_mode is None:
            gym.logger.warn("render() without a render_mode; pass render_mode='ansi' or 'human'")
            return None
        text = self.game.render(self.game_state, self._seat)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    # ------------------------------------------------------------------ checkpointing (exact resume)
    def get_state(self) -> dict[str, Any]:
        """Everything needed to continue this env exactly, as plain data (what a checkpoint keeps): the generator,
        the game state (its fields by name), the episode.

        The opponents themselves are not included (restore them with :meth:`set_opponents` first);
        the pool draws of the current episode are, and so is the memory of every opponent that keeps
        one and exposes it as ``get_state()`` / ``set_state(memory)``.
        """
        memory = {}
        for seat, agent in enumerate(self._agents):
            if agent is not None and callable(getattr(agent, "get_state", None)):
                memory[seat] = copy.deepcopy(agent.get_state())  # type: ignore[attr-defined]
        return {
            "rng": self.np_random.bit_generator.state,
            "state": None if self._state is None else game_state_fields(self._state),
            "seat": self._seat,
            "choices": dict(self._choices),
            "episode": self._episode,
            "pending": self._pending,
            "illegal": self._illegal,
            "illegal_action": self._illegal_action,
            "illegal_reason": self.illegal_reason,
            "agent_memory": memory,
        }

    def set_state(self, snapshot: Mapping[str, Any]) -> np.ndarray:
        """Continue from :meth:`get_state`'s snapshot; returns the learner's current observation."""
        self.np_random.bit_generator.state = snapshot["rng"]
        self._state = None if snapshot["state"] is None else self._state_of(snapshot["state"])
        self._seat = int(snapshot["seat"])
        self._choices = dict(snapshot["choices"])
        self._episode = int(snapshot["episode"])
        self._pending = float(snapshot["pending"])
        self._illegal = int(snapshot["illegal"])
        self._illegal_action = int(snapshot.get("illegal_action", -1))  # absent from snapshots of 0.1.0
        self.illegal_reason = str(snapshot.get("illegal_reason", ""))
        self._bind_agents()
        for seat, memory in snapshot.get("agent_memory", {}).items():
            agent = self._agents[seat]
            if agent is not None and callable(getattr(agent, "set_state", None)):
                agent.set_state(copy.deepcopy(memory))  # type: ignore[attr-defined]
        return self._observe()

    # ------------------------------------------------------------------ internals
    def _state_of(self, fields: Mapping[str, Any]) -> State:
        """The game state whose fields are ``fields`` (:meth:`get_state`'s), of this game's state class."""
        cls = type(self._state) if self._state is not None else type(self.game.new_episode(np.random.default_rng(0)))
        if set(fields) != set(all_slots(cls)):
            raise OptionError(f"a saved state of another game: its fields are not those of {cls.__name__}")
        state = object.__new__(cls)
        for name, value in fields.items():
            object.__setattr__(state, name, list(value) if isinstance(value, list) else value)
        return state

    def _bind_agents(self) -> None:
        n = self.num_players
        seat = self._seat
        agents: list[Agent | None] = [None] * n
        learner = {seat}
        for rel, spec in self._seat_specs.items():
            s = (seat + rel) % n
            if isinstance(spec, str) and spec == SELF:
                learner.add(s)
            elif isinstance(spec, OpponentPool):
                agents[s] = spec.agents[min(self._choices.get(rel, 0), len(spec.agents) - 1)]  # type: ignore[assignment]
            else:
                agents[s] = spec  # type: ignore[assignment]
        self._agents = agents
        self._learner_seats = frozenset(learner)

    def _apply(self, action: int) -> None:
        state = self._state
        assert state is not None
        rewards = self.game.step(state, action, self.np_random)
        if rewards is not None:
            # With partner="self" both seats share the team reward: count it once.
            self._pending += float(rewards[self._seat])

    def _play_others(self) -> None:
        state = self._state
        assert state is not None
        rng = self.np_random
        learner = self._learner_seats
        while not state.done and state.to_act not in learner:
            agent = self._agents[state.to_act]
            assert agent is not None
            self._apply(int(agent.act(self.game.view(state, state.to_act), rng)))

    def _observe(self) -> np.ndarray:
        state = self._state
        assert state is not None
        seat = state.to_act if (not state.done and not self._illegal and state.to_act in self._learner_seats) else None
        if seat is None:
            obs = self.encoder.encode(self.game.view(state, self._seat))
            self._mask = np.zeros(self.game.num_actions, dtype=bool)
            return obs
        obs, mask = self.encoder.encode_state(self.game, state, seat)
        self._mask = mask.astype(bool)
        return obs

    def _info(self) -> dict[str, Any]:
        """The info of the step (after :meth:`_observe`, whose mask it holds): the same keys at every step."""
        state = self._state
        assert state is not None
        return {
            "learner_seat": self._seat,
            "acting_seat": state.to_act,
            "action_mask": self._mask.astype(np.int8),
            "illegal_actions": self._illegal,
            "illegal_action": self._illegal_action,
            "returns": np.array(state.returns, dtype=np.float64),
            **info_arrays(self.game.info(state, self._seat)),
        }


def make_single_agent(
    game: str,
    opponents: OpponentsSpec = None,
    learner_seat: int | str = "random",
    **kwargs: Any,
) -> SingleAgentWhistEnv:
    """A single-agent Gymnasium env over ``game``; see :class:`SingleAgentWhistEnv`.

    Args:
        game: environment id, e.g. ``"german_whist_v0"``.
        opponents: the other seats' agents (``None``: random).
        learner_seat: ``"random"`` (default), ``"rotate"`` or a fixed seat.
        **kwargs: ``partner``, ``illegal_reward``, ``render_mode``, ``step_info`` and the game's options.
    """
    return SingleAgentWhistEnv(game, opponents=opponents, learner_seat=learner_seat, **kwargs)


def game_state_fields(state: State) -> dict[str, Any]:
    """A game state's fields by name, lists copied (the rest is immutable: ints, bools, None and tuples)."""
    fields = {name: getattr(state, name) for name in all_slots(type(state))}
    return {name: value.copy() if type(value) is list else value for name, value in fields.items()}
