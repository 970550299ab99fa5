"""The PettingZoo AEC environment shared by every game, and the lean default wrapper.

Each game module (``whist_env/classic_whist_v0.py``, ...) subclasses :class:`WhistAECEnv` with its
:class:`~whist_env.spec.GameSpec` (rules, encoder, hidden pieces), and exposes ``raw_env`` and ``env``.
``env()`` wraps the raw environment in
:class:`WhistWrapper`, which gives PettingZoo's terminate-on-illegal-action behaviour, bounds checks
and call-order errors in one thin layer instead of three stock wrappers.
"""

from __future__ import annotations

import warnings
from typing import Any, ClassVar, cast

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils.env import AECIterable
from pettingzoo.utils.wrappers import BaseWrapper

from whist_env.encoding.layout import Layout, cards
from whist_env.encoding.trick import TrickEncoder
from whist_env.errors import CallOrderError, IllegalActionError, OptionError
from whist_env.options import finite_number, reset_options
from whist_env.record import GameRecord, Recorder, given_options
from whist_env.rules.core import PHASE_OVER, State, TrickGame, as_action
from whist_env.spec import GameSpec
from whist_env.view import PlayerView

RENDER_MODES = ("human", "ansi")
RENDER_FPS = 2  # for players who watch "human" frames (text) scroll by; PettingZoo's classic games show 1 or 2
RESET_OPTIONS = ("deck", "dealer")
# What every info of the AEC env holds beyond the game's (raw and wrapped env alike): how many illegal actions ended
# the game (0 or 1), the seat that made it (-1: none) and the action itself, in the offender's own info only (-1:
# none; it may name a card of the offender's hand, which the others may not see).
NO_ILLEGAL_ACTION: dict[str, int] = {"illegal_actions": 0, "illegal_seat": -1, "illegal_action": -1}


def info_arrays(info: dict[str, Any]) -> dict[str, Any]:
    """A rules ``info`` (:meth:`~whist_env.rules.core.TrickGame.info`: ints and fixed-length tuples of numbers) as
    the environments hand it out: every tuple a numpy array, so that Gymnasium's vector envs and TorchRL stack each
    key into one array over steps, environments or agents. The plain twin of :class:`InfoArrays`."""
    return {k: np.array(v) if type(v) is tuple else v for k, v in info.items()}


class InfoArrays:
    """One env's infos as it hands them out, from the rules' :meth:`~whist_env.rules.core.TrickGame.info_now` and
    :meth:`~whist_env.rules.core.TrickGame.summary_info`: :func:`info_arrays` of both (its plain twin) plus
    :data:`NO_ILLEGAL_ACTION`, with an array built once per tuple value and handed out again wherever the value
    recurs.

    Building arrays was a fifth of the AEC loop's time, though the values recur (trick counts, scores, the summary
    that stands for a whole deal, whose dict the rules hand out again while it stands). No array handed out is ever
    written to afterwards; one array may appear under several keys, in the infos of several steps and of every seat,
    so a user who wants to modify one copies it first.
    """

    __slots__ = ("_arrays", "_summary", "_tuple_keys")

    # the most tuple values kept: a long Oh Hell match's scores keep coming; past this the cache starts again
    MAX_VALUES = 4096

    def __init__(self) -> None:
        self._arrays: dict[tuple[int, ...], np.ndarray] = {}
        # the last summary dict, and an info's template: info_now's keys, the summary's arrays, NO_ILLEGAL_ACTION
        self._summary: tuple[dict[str, Any] | None, dict[str, Any]] = (None, {})
        self._tuple_keys: tuple[str, ...] = ()  # info_now's keys that hold tuples (the same at every step)

    def __call__(self, now: dict[str, Any], summary: dict[str, Any]) -> dict[str, Any]:
        """The info of one seat, in a dict of its own."""
        source, template = self._summary
        if source is not summary:  # a new summary (the rules keep the dict while it stands): a new template
            template = {**now, **{k: self.value(v) for k, v in summary.items()}, **NO_ILLEGAL_ACTION}
            self._summary = (summary, template)
            self._tuple_keys = tuple(k for k, v in now.items() if type(v) is tuple)
        out = {**template, **now}  # every key in its place, then this trick's values
        arrays = self._arrays
        for key in self._tuple_keys:
            value = out[key]
            array = arrays.get(value)
            out[key] = array if array is not None else self._new_array(value)
        return out

    def value(self, value: Any) -> Any:
        """One value as an info holds it: a tuple as its (shared) array, an int as it is."""
        if type(value) is not tuple:
            return value
        array = self._arrays.get(value)
        return array if array is not None else self._new_array(value)

    def _new_array(self, value: tuple[int, ...]) -> np.ndarray:
        if len(self._arrays) >= self.MAX_VALUES:
            self._arrays.clear()
        array = self._arrays[value] = np.array(value)
        return array


def make_rng(seed: Any, game_id: str) -> np.random.Generator:
    """A new generator seeded with ``seed`` (an int >= 0, as Gymnasium requires).

    Raises:
        OptionError: for any other seed.
    """
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool) and seed >= 0:
        return np.random.default_rng(int(seed))
    raise OptionError(f"{game_id}: seed must be None or an int >= 0, got {seed!r}")


class WhistAECEnv(AECEnv):
    """A Whist-family game as a PettingZoo AEC environment.

    Agents ``player_0 … player_{n-1}`` are seats 0..n-1. Observations are
    ``{"observation": float32 vector, "action_mask": int8 vector}``; actions are ``Discrete``: card
    ``c`` is action ``c`` (see each game for its other actions). ``state()`` returns the full hidden
    state for centralised critics. Every episode is recorded as it is played: :meth:`game_record`.

    Infos hold the same keys at every step for every agent, each an int or a fixed-shape numeric numpy array, so that
    TorchRL and Gymnasium stack them: the game's :meth:`~whist_env.rules.core.TrickGame.info` of the agent's seat
    (``deal``; ``phase``, an index into ``game.phase_names``; ``tricks`` and ``scores`` per seat; ``last_deal``, the
    index of the last finished deal or -1, and its summary as ``last_deal_<field>``; the game's own keys) and
    :data:`NO_ILLEGAL_ACTION`'s keys. After the episode, also once every agent is done, :meth:`observe` gives the
    final observation (an all-zero mask), as PettingZoo's own environments do.

    Args:
        render_mode: ``None``, ``"ansi"`` (``render()`` returns text) or ``"human"`` (prints it).
        render_seat: when set, ``render()`` shows only what that seat may see.
        **options: the game's options (see the game module's docstring).

    Raises:
        OptionError: for an unknown option or a bad value, naming what is allowed.
    """

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": list(RENDER_MODES),
        "render_fps": RENDER_FPS,
        "name": "whist",
        "is_parallelizable": False,
    }
    game_spec: ClassVar[GameSpec]
    game_cls: ClassVar[type[TrickGame]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "game_spec" in cls.__dict__:  # a game's env: its rules come from the spec, its name is the game's id
            cls.game_cls = cls.game_spec.rules_cls
        if "game_spec" in cls.__dict__ or "game_cls" in cls.__dict__:
            # a dict (and a list of render modes) of its own: a wrapper that adds to one game's changes no other's
            cls.metadata = {**WhistAECEnv.metadata, "render_modes": list(RENDER_MODES), "name": cls.game_cls.game_id}

    @classmethod
    def wrapped(cls, /, illegal_reward: float = -1.0, **kwargs: Any) -> WhistWrapper:
        """The wrapped environment (a game module's ``env()``): an illegal action ends the game with
        ``illegal_reward``; ``kwargs`` go to the raw environment."""
        return WhistWrapper(cls(**kwargs), illegal_reward=illegal_reward)

    def __init__(self, /, render_mode: str | None = None, render_seat: int | None = None, **options: Any) -> None:
        super().__init__()
        name = self.metadata["name"]
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise OptionError(f"{name}: render_mode={render_mode!r} is not supported; use None, 'ansi' or 'human'")
        self.render_mode = render_mode
        self.game = self.game_cls.from_options(options)
        n = self.game.num_players
        if render_seat is not None and not (
            isinstance(render_seat, int) and not isinstance(render_seat, bool) and 0 <= render_seat < n
        ):
            raise OptionError(f"{name}: render_seat must be None or a seat 0..{n - 1}, got {render_seat!r}")
        self.render_seat = render_seat
        self.encoder = self.make_encoder(self.game)
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self.agent_seat = {a: i for i, a in enumerate(self.possible_agents)}
        size, num_actions = self.encoder.size, self.game.num_actions
        self.observation_spaces = {
            a: spaces.Dict(
                {
                    "observation": spaces.Box(0.0, 1.0, (size,), np.float32),
                    "action_mask": spaces.Box(0, 1, (num_actions,), np.int8),
                }
            )
            for a in self.possible_agents
        }
        # typed here: gymnasium 1.2 (which the rllib extra pins) leaves Discrete's parameter open to mypy
        self.action_spaces: dict[str, spaces.Space] = {a: spaces.Discrete(num_actions) for a in self.possible_agents}
        self.hidden_layout = Layout(
            [cards(f"hand[player_{s}]", f"player_{s}'s hand") for s in range(n)]
            + [cards(name, doc) for name, doc in self.hidden_pieces()]
        )
        state_size = self.hidden_layout.size + size
        self.state_space = spaces.Box(0.0, 1.0, (state_size,), np.float32)
        self._num_actions = num_actions
        self._rng: np.random.Generator | None = None
        self._state: State | None = None
        self._recorder: Recorder | None = None
        self._play_rng: np.random.Generator | None = None
        self._played: list[int] = []  # the recorder's list of actions (the list, not its bound append: copyable)
        self._record_options = given_options(self.game)
        self.agents: list[str] = []
        self.rewards: dict[str, float] = {}
        self._cumulative_rewards: dict[str, float] = {}
        self.terminations: dict[str, bool] = {}
        self.truncations: dict[str, bool] = {}
        self.infos: dict[str, dict[str, Any]] = {}
        self._rewarded = False
        self._info_key = (-1, -1, -1)
        self._info_arrays = InfoArrays()

    # ------------------------------------------------------------------ the game's spec
    @classmethod
    def make_encoder(cls, game: TrickGame) -> TrickEncoder:
        """The observation encoder of this game (the spec's ``make_encoder``)."""
        return cls.game_spec.make_encoder(game)

    def hidden_pieces(self) -> list[tuple[str, str]]:
        """Names and meanings of hidden card sets in ``state()`` beyond the hands (blinds, stock)."""
        return list(self.game_spec.hidden_pieces)

    def hidden_masks(self, state: State) -> list[int]:
        """The masks of :meth:`hidden_pieces`, in order."""
        return self.game_spec.hidden_masks(state)

    # ------------------------------------------------------------------ PettingZoo API
    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Start a new episode.

        Args:
            seed: seeds the environment's generator (an int >= 0); without it a seeded generator continues.
            options: ``{"deck": [52 cards], "dealer": seat}`` to start from a given deal (the deck is
                dealt as the game's RULES.md section maps ``deck[i]`` to hands), and the game's own
                ``extra_reset_options``.

        Raises:
            OptionError: for a bad seed, options that are not a dict, an unknown option or a bad value. A
                rejected reset changes nothing: neither the generator nor the episode in progress.
        """
        name = self.metadata["name"]
        start = reset_options(name, options, RESET_OPTIONS + tuple(self.game.extra_reset_options))
        self.game.check_start(**start)
        rng = make_rng(seed, name) if seed is not None else self._rng
        if rng is None:
            rng = np.random.default_rng()
        # the recorder starts the episode (game.new_episode) and keeps what it draws from the generator
        self._recorder = Recorder(self.game, rng, self._record_options, **start)
        self._state = self._recorder.state
        self._play_rng = self._recorder.rng
        self._played = self._recorder.actions
        self._rng = rng
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self._rewarded = False
        self._refresh_infos()
        self.agent_selection = self.possible_agents[self._state.to_act]

    def _refresh_infos(self) -> None:
        state = self._state
        assert state is not None
        game, convert, seat = self.game, self._info_arrays, self.agent_seat
        summary, info_now, keys = game.summary_info(state), game.info_now, game.info_seat_keys
        infos: dict[str, dict[str, Any]] = {}
        one = None
        for a in self.agents:
            if keys is None:  # any key may differ between seats: an info per seat
                infos[a] = convert(info_now(state, seat[a]), summary)
            elif one is None:  # one build for every seat (arrays shared: never written)
                infos[a] = one = convert(info_now(state, seat[a]), summary)
            else:  # a dict of its own, the seat's own keys set
                info = infos[a] = dict(one)
                if keys:
                    for key, value in game.info_seat(state, seat[a]).items():
                        info[key] = convert.value(value)
        self.infos = infos
        self._info_key = (state.deal_index, state.trick_number, state.phase)

    def _require_state(self, call: str = "state()") -> State:
        if self._state is None:
            raise self._call_order_error(call)
        return self._state

    def _call_order_error(self, call: str) -> CallOrderError:
        """The error for ``call`` before ``reset()`` or after every agent is done."""
        name = self.metadata["name"]
        if self._state is None:
            return CallOrderError(f"{name}: call reset() before {call}: no episode has started")
        return CallOrderError(
            f"{name}: {call} after every agent is done: the episode is over; call reset() to start a new one"
        )

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """Observation, cumulative reward, terminated, truncated and info of ``agent_selection``."""
        if not self.agents:
            raise self._call_order_error("last()")
        agent = self.agent_selection
        return (
            self.observe(agent) if observe else None,
            self._cumulative_rewards[agent],
            self.terminations[agent],
            self.truncations[agent],
            self.infos[agent],
        )

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """``{"observation", "action_mask"}`` of ``agent``: what its seat knows, and its legal actions.

        After the episode (also once every agent is done, as PettingZoo's own environments do), the final
        observation of ``agent``'s seat, with an all-zero mask.
        """
        state = self._state
        if state is None:
            raise self._call_order_error("observe()")
        seat = self.agent_seat.get(agent)
        if seat is None:
            raise KeyError(f"unknown agent {agent!r}; agents are {self.possible_agents}")
        obs, mask = self.encoder.encode_state(self.game, state, seat)
        return {"observation": obs, "action_mask": mask}

    def step(self, action: Any) -> None:
        """Apply ``action`` for ``agent_selection``.

        Raises:
            IllegalActionError: when the action is not legal (the env is unchanged).
            ValueError: when the action is not an int in the action space.
            CallOrderError: before ``reset()`` or after every agent is done.
        """
        # None only before reset(), when the lookup below raises (no agent has an entry yet)
        state: State = self._state  # type: ignore[assignment]
        try:  # before reset() or after the last agent was done, the agent has no entry (free when it has one)
            agent = self.agent_selection
            done = self.terminations[agent] or self.truncations[agent]
        except (AttributeError, KeyError):
            raise self._call_order_error("step()") from None
        if done:
            self._was_dead_step(action)
            return
        # the common cases (a Python int, or a numpy integer as learners pass) inline; the rest, and any action
        # outside the action space, go to the full parser, which names the problem
        if type(action) is int:
            a = action
        elif isinstance(action, np.integer):
            a = int(action)
        else:
            a = as_action(action, self._num_actions, self.metadata["name"])
        if not 0 <= a < self._num_actions:
            a = as_action(a, self._num_actions, self.metadata["name"])  # raises: outside the action space
        rewards = self.game.step(state, a, self._play_rng)  # type: ignore[arg-type]
        self._played.append(a)  # the game record (Recorder.step's work, without a call on the hot path)
        self._cumulative_rewards[agent] = 0
        if rewards is not None:
            rw = self.rewards
            cum = self._cumulative_rewards
            for name, r in zip(self.possible_agents, rewards, strict=True):
                rw[name] = r
                cum[name] += r
            self._rewarded = True
        elif self._rewarded:
            self._clear_rewards()
            self._rewarded = False
        if state.phase == PHASE_OVER:
            self.terminations = dict.fromkeys(self.agents, True)
            self._refresh_infos()
            self.agent_selection = self.possible_agents[(self.agent_seat[agent] + 1) % len(self.possible_agents)]
            return
        if (state.deal_index, state.trick_number, state.phase) != self._info_key:
            self._refresh_infos()
        self.agent_selection = self.possible_agents[state.to_act]

    def state(self) -> np.ndarray:
        """The full hidden state: every hand and the game's hidden card sets (``hidden_layout``),
        then the public table as seat 0 sees it (the observation layout, absolute seats)."""
        st = self._require_state()
        lay = self.hidden_layout
        bits = 0
        for s, hand in enumerate(st.hands):
            bits |= hand << lay.offset(f"hand[player_{s}]")
        for (name, _), mask in zip(self.hidden_pieces(), self.hidden_masks(st), strict=True):
            bits |= mask << lay.offset(name)
        return np.concatenate([lay.pack(bits), self.encoder.encode(self.game.view(st, 0))])

    def describe_state(self, vector: np.ndarray) -> str:
        """A ``state()`` vector printed back in words."""
        h = self.hidden_layout.size
        return (
            self.hidden_layout.describe(vector[:h])
            + "\n-- seat 0's table --\n"
            + self.encoder.layout.describe(vector[h:])
        )

    def describe(self, obs: Any) -> str:
        """An observation (vector or dict) printed back in words."""
        return self.encoder.describe(obs)

    def render(self) -> str | None:
        """Text picture of the table (all hands, or ``render_seat``'s view)."""
        if self.render_mode is None:
            warnings.warn(
                "You are calling render() without a render_mode; pass render_mode='ansi' or 'human'", stacklevel=2
            )
            return None
        text = self.game.render(self._require_state("render()"), self.render_seat)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        """Nothing to release (text rendering only)."""

    # ------------------------------------------------------------------ conveniences
    @property
    def game_state(self) -> State:
        """The omniscient rules state (for tests, search agents and teaching)."""
        return self._require_state("game_state")

    def view(self, agent: str) -> PlayerView:
        """The :class:`~whist_env.view.PlayerView` of ``agent``."""
        return self.game.view(self._require_state("view()"), self.agent_seat[agent])

    def game_record(self) -> GameRecord:
        """The :class:`~whist_env.record.GameRecord` of the episode so far (since the last ``reset()``).

        ``game_record().replay()`` rebuilds the current state exactly, and ``game_record().states()`` every
        position of the episode. It holds every hidden card (the deck): show it to a player only once the
        game is over. After the wrapped environment (``env()``) ended the game on an illegal action, the
        record holds the legal actions played and names the refused one in ``illegal_action`` (never
        applied; a replay ignores it). The raw environment only raises on an illegal action, and records
        nothing, since the game goes on.

        Raises:
            CallOrderError: before ``reset()``.
        """
        self._require_state("game_record()")
        assert self._recorder is not None
        return self._recorder.record()


def raw_env_for(spec: GameSpec[Any, Any]) -> type[WhistAECEnv]:
    """The raw environment class of a game registered without a PettingZoo face of its own
    (:func:`whist_env.register`): :class:`WhistAECEnv` with the game's spec."""
    attrs = {"game_spec": spec, "__doc__": spec.rules_cls.__doc__}
    return cast("type[WhistAECEnv]", type(f"{spec.game_id}_raw_env", (WhistAECEnv,), attrs))


class WhistWrapper(BaseWrapper):
    """The default wrapper of ``env()``: an illegal action ends the game with a penalty.

    PettingZoo's terminate-illegal convention: the agent that made the illegal move receives
    ``illegal_reward`` (default -1), every other agent 0, and every agent is terminated. Each ``info``
    counts ``illegal_actions`` (1) and names the offender's seat (``illegal_seat``); only the offender's holds the
    refused action (``illegal_action``), which may name a card of its hand. Why it was refused (the offender's legal
    actions, in words) is :attr:`illegal_reason`. Out-of-space actions and calls out of order raise clear errors
    (the raw env checks both).

    Attributes:
        illegal_reason: why the action that ended this episode was refused ("" when none did).
    """

    def __init__(self, env: WhistAECEnv, illegal_reward: float = -1.0) -> None:
        super().__init__(env)
        self.raw: WhistAECEnv = env
        self.illegal_reward = finite_number("illegal_reward", illegal_reward, env.metadata["name"])
        self.metadata = env.metadata
        self.possible_agents = env.possible_agents
        self.observation_spaces = env.observation_spaces
        self.action_spaces = env.action_spaces
        self.state_space = env.state_space
        self.render_mode = env.render_mode
        self.illegal_reason = ""

    # Plain properties are several times faster than BaseWrapper.__getattr__ on the hot path.
    @property
    def agents(self) -> list[str]:  # type: ignore[override]
        return self.raw.agents

    @property
    def agent_selection(self) -> str:  # type: ignore[override]
        return self.raw.agent_selection

    @property
    def rewards(self) -> dict[str, float]:  # type: ignore[override]
        return self.raw.rewards

    @property
    def terminations(self) -> dict[str, bool]:  # type: ignore[override]
        return self.raw.terminations

    @property
    def truncations(self) -> dict[str, bool]:  # type: ignore[override]
        return self.raw.truncations

    @property
    def infos(self) -> dict[str, dict[str, Any]]:  # type: ignore[override]
        return self.raw.infos

    @property
    def _cumulative_rewards(self) -> dict[str, float]:  # type: ignore[override]
        return self.raw._cumulative_rewards

    @property
    def game(self) -> TrickGame:
        return self.raw.game

    def agent_iter(self, max_iter: int = 2**63) -> AECIterable:
        """The raw environment's: its iterator reads the same agents and selection, without this wrapper's
        properties (a fifth of a microsecond a decision)."""
        return self.raw.agent_iter(max_iter)

    def observation_space(self, agent: str) -> spaces.Space:
        return self.raw.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.raw.action_spaces[agent]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        obs = self.raw.observe(agent)
        if self.illegal_reason:  # the game ended on an illegal action: nothing is legal any more
            obs["action_mask"] = np.zeros_like(obs["action_mask"])
        return obs

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        out = self.raw.last(observe)
        if observe and self.illegal_reason:
            out[0]["action_mask"] = np.zeros_like(out[0]["action_mask"])
        return out

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """The raw environment's :meth:`WhistAECEnv.reset`."""
        self.raw.reset(seed=seed, options=options)
        self.illegal_reason = ""

    def step(self, action: Any) -> None:
        try:
            self.raw.step(action)
        except IllegalActionError as err:
            self._terminate_illegal(str(err), action)

    def game_record(self) -> GameRecord:
        """The raw environment's :meth:`WhistAECEnv.game_record`."""
        return self.raw.game_record()

    def _terminate_illegal(self, reason: str, action: Any) -> None:
        raw = self.raw
        agent = raw.agent_selection
        refused = as_action(action, raw._num_actions, raw.metadata["name"])
        if raw._recorder is not None:  # the game record names the action that ended the game
            raw._recorder.illegal_action = refused
        raw._cumulative_rewards[agent] = 0
        raw.terminations = dict.fromkeys(raw.agents, True)
        raw.truncations = dict.fromkeys(raw.agents, False)
        raw.rewards = dict.fromkeys(raw.agents, 0)
        raw.rewards[agent] = self.illegal_reward
        raw._accumulate_rewards()
        raw._rewarded = True
        seat = raw.agent_seat[agent]
        for a in raw.agents:
            raw.infos[a] = {**raw.infos[a], "illegal_actions": 1, "illegal_seat": seat}
        raw.infos[agent]["illegal_action"] = refused  # the offender's alone: it may name a card of its hand
        self.illegal_reason = reason
        raw._deads_step_first()

    def __str__(self) -> str:
        return str(self.raw)
