"""One learner against batched opponents on the batched engine: a ``gymnasium.vector.VectorEnv`` (issue #14, point 3).

    >>> from gymnasium.vector import AutoresetMode
    >>> from whist_env.vector import make_learner_env
    >>> envs = make_learner_env("classic_whist_v0", 256, opponents="random", seed=0,
    ...                         autoreset_mode=AutoresetMode.NEXT_STEP)
    >>> obs, infos = envs.reset()
    >>> obs, rewards, terminated, truncated, infos = envs.step(actions)  # (256,) legal actions of the learner
    >>> # gymnasium.make_vec("whist_env/classic_whist-v0", num_envs=256) builds the same env

The batched twin of :class:`whist_env.envs.single_agent.SingleAgentWhistEnv`: in every environment the learner
holds one seat, and the other seats are played *inside* the env, batched: after the learner's actions the
opponents play, a batch call per seat policy, until it is the learner's turn again (or the episode ends) in every
environment. A transition is (my observation, my action, the reward my seat earned until my next turn, my next
observation); the learner receives its terminal reward even when an opponent made the last move.

Autoreset (``autoreset_mode``, also in ``metadata["autoreset_mode"]``), either of Gymnasium's two:

* **next-step** (``AutoresetMode.NEXT_STEP``, Gymnasium's default and this env's): where an episode ends
  (``terminated``), the observation returned is its last one (the learner's seat's, with an all-zero mask), and the
  next ``step()`` starts the next episode there, ignoring the action given for it, playing the opponents up to the
  learner's first decision and returning reward 0 and ``terminated`` False. Gymnasium's vector wrappers
  (``RecordEpisodeStatistics``, ``NormalizeObservation``, ...) expect this mode.
* **same-step** (``AutoresetMode.SAME_STEP``; what SB3's ``VecEnv`` does, :mod:`whist_env.learning.sb3_vec` needs it):
  the ending ``step()`` starts the next episode at once; the observation returned is the new episode's, the ended
  episode's last observation is in ``infos["final_obs"]`` and its infos in ``infos["final_info"]``, rows valid where
  ``infos["_final_obs"]`` and ``infos["_final_info"]`` (keys present only in a step where an episode ended, as
  ``gymnasium.vector.SyncVectorEnv`` has them; ``final_obs`` is a (B, D) array rather than an array of objects).

``truncated`` is always False.

An illegal learner action raises ``IllegalActionError`` (nothing changes), unless the env has an ``illegal_reward``
(:func:`make_learner_env`): then it ends that environment's episode with that reward, the way the single-agent env
does, for libraries that step unmasked (TorchRL's ``GymWrapper`` takes one random step while it is built).

Infos (Gymnasium's vector convention: arrays with one row per environment, each key with its ``_key`` mask; the
same keys at every step, besides same-step's ``final_*``): ``learner_seat`` (the seat of the episode each
observation belongs to), ``action_mask`` (int8 (B, A): :meth:`LearnerVectorEnv.action_masks`), ``returns``
(float32 (B, n): every seat's return so far in the episode of the observation, absolute seats) and
``illegal_actions`` (int8 (B,): 1 where this step's learner action was illegal and ended the episode; always 0
without an ``illegal_reward``). Episode returns and
lengths are left to Gymnasium's ``RecordEpisodeStatistics`` (next-step) or SB3's ``VecMonitor``, which own
``info["episode"]``.

Opponents by name: ``"random"``, ``"heuristic"`` (the game's batched heuristic port) and ``"pretrained"`` or
``"pretrained(path=<exported .npz>)"`` (the network :class:`~whist_env.agents.pretrained.PretrainedAgent` plays, as
:class:`~whist_env.vector.policy.BatchedPolicy`: the agent's own cards, suits renamed for a ``canonical_suits``
network; a frozen opponent for an exploiter, ``training/exploit.py``). A named opponent is built once per env and
name, so a trainer may hand the names again before every rollout.

Randomness: the deals come from the engine's generators, the learner's seat (``"random"``) and the random
opponents' choices from a numpy generator; both are seeded from ``seed`` (and ``reset(seed=)``). A sampling network
(``pretrained(deterministic=false)``) draws from its own generator, seeded from ``seed`` apart from those.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv

from whist_env.errors import CallOrderError, IllegalActionError, OptionError
from whist_env.options import finite_number, reset_options
from whist_env.vector.core import RawVectorEnv, TimeStep, env_list
from whist_env.vector.engines import make
from whist_env.vector.policy import batched_pretrained, is_pretrained

Policy = Callable[[np.ndarray, np.ndarray], Any]
OpponentSpec = str | Policy | Any  # Any: an object with ``act_state`` (a batched agent reading the engine's state)
RANDOM = "random"
HEURISTIC = "heuristic"
LEARNER = "the learner"
AUTORESET_MODES = (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP)


def autoreset_mode_of(mode: Any, game_id: str) -> AutoresetMode:
    """``mode`` as an ``AutoresetMode``: next-step or same-step, given as the enum or its value (``"NextStep"``).

    Raises:
        OptionError: for anything else (``DISABLED`` included).
    """
    try:
        found = AutoresetMode(mode)
    except ValueError:
        found = None
    if found not in AUTORESET_MODES:
        allowed = ", ".join(f"AutoresetMode.{m.name} ({m.value!r})" for m in AUTORESET_MODES)
        raise OptionError(f"{game_id}: autoreset_mode must be {allowed}; got {mode!r}")
    return found


def random_actions(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random legal action per row of the bool ``mask`` (k, A): one integer draw per row.

    Raises:
        ValueError: when a row has no legal action.
    """
    counts = mask.sum(axis=1)
    if (counts == 0).any():
        raise ValueError(f"no legal action to choose from in row(s) {env_list(np.flatnonzero(counts == 0))}")
    pick = rng.integers(counts)
    return (np.cumsum(mask, axis=1) > pick[:, None]).argmax(axis=1)


class LearnerVectorEnv(VectorEnv):
    """``num_envs`` episodes of one game, one learner seat each, the other seats played inside; see the module
    docstring (built by :func:`make_learner_env`, whose arguments it takes)."""

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP}  # noqa: RUF012 (Gymnasium's convention; per env below)

    def __init__(
        self,
        venv: RawVectorEnv,
        opponents: OpponentSpec | Sequence[OpponentSpec] = RANDOM,
        learner_seat: int | str = 0,
        seed: Any = None,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        illegal_reward: float | None = None,
    ) -> None:
        gid = venv.game_id
        n = venv.num_players
        self.illegal_reward = None if illegal_reward is None else finite_number("illegal_reward", illegal_reward, gid)
        self.autoreset_mode = autoreset_mode_of(autoreset_mode, gid)
        self.metadata = {**type(self).metadata, "autoreset_mode": self.autoreset_mode}
        self._same_step = self.autoreset_mode == AutoresetMode.SAME_STEP
        self.venv = venv
        self.game_id = gid
        self.num_envs = venv.num_envs
        self.num_players = n
        if isinstance(learner_seat, str):
            if learner_seat != RANDOM:
                raise OptionError(f"{gid}: learner_seat must be 'random' or a seat 0..{n - 1}, got {learner_seat!r}")
        elif not isinstance(learner_seat, (int, np.integer)) or isinstance(learner_seat, bool):
            raise OptionError(f"{gid}: learner_seat must be 'random' or a seat 0..{n - 1}, got {learner_seat!r}")
        elif not 0 <= learner_seat < n:
            raise OptionError(f"{gid}: learner_seat must be 'random' or a seat 0..{n - 1}, got {learner_seat!r}")
        self.learner_seat_mode: int | str = learner_seat if isinstance(learner_seat, str) else int(learner_seat)
        self._seed = seed
        self._named: dict[str, OpponentSpec] = {}  # the opponents built from a name, by name (kept: no reload)
        self.set_opponents(opponents)
        self.single_observation_space = spaces.Box(0, 1, (venv.observation_size,), venv.obs_dtype.type)
        self.single_action_space = spaces.Discrete(venv.num_actions)
        self.observation_space = spaces.Box(0, 1, (self.num_envs, venv.observation_size), venv.obs_dtype.type)
        self.action_space = spaces.MultiDiscrete(np.full(self.num_envs, venv.num_actions))
        self._rng = self._generator(seed)
        b = self.num_envs
        self._seat = np.zeros(b, np.int64)
        self._episodes = np.zeros(b, np.int64)  # episodes started in each environment
        self._player = np.full(b, -1, np.int64)  # the seat to act in each environment (-1: episode over)
        self._obs = np.zeros((b, venv.observation_size), venv.obs_dtype)  # the seat to act's observation
        self._mask = np.zeros((b, venv.num_actions), np.bool_)  # its legal actions
        self._pending = np.zeros(b, np.float64)  # the learner's reward earned before its first decision
        self._autoreset = np.zeros(b, np.bool_)  # next-step: the episode ended in the last step; it starts anew next
        self._cut = np.zeros(b, np.bool_)  # next-step: ...ended by an illegal action, its engine episode still open
        self._illegal = np.zeros(b, np.int8)  # the learner's illegal actions of the last step (0 or 1)
        self._ready = False  # False before reset() and after a failed step (an opponent's bad action)

    # ------------------------------------------------------------------ configuration
    def set_opponents(self, opponents: OpponentSpec | Sequence[OpponentSpec]) -> None:
        """Replace who plays the other seats (at once, also in the middle of an episode).

        Args:
            opponents: ``"random"`` (a uniformly random legal action), ``"heuristic"`` (the game's rule-based
                agent, batched: :class:`whist_env.vector.heuristics.BatchedHeuristic` for the env's game and
                options), ``"pretrained"`` or ``"pretrained(path=<exported .npz>)"`` (the network of
                :class:`~whist_env.agents.pretrained.PretrainedAgent`, batched:
                :func:`whist_env.vector.policy.batched_pretrained`), a batched policy callable ``(obs (k, D), mask
                (k, A) bool) -> actions (k,)``, or an object with ``act_state(venv, envs) -> actions (k,)`` reading
                the engine's state, for every other seat; or a sequence of ``n - 1`` of them for the seats to the
                learner's left, in order (relative seats 1, 2, ...). In a partnership game the learner's partner
                (relative seat 2 of 4) is one of these seats, played like an opponent.

        Raises:
            OptionError: for an opponent of none of these kinds, ``"heuristic"`` for a game whose heuristic has
                no batched port yet (naming the ported ones), or a ``pretrained`` network that cannot be loaded
                (no shipped weights, no file).
            ModelMismatchError: a ``pretrained`` network made for other options or another layout.
        """
        n = self.num_players
        specs: list[OpponentSpec]
        if isinstance(opponents, str) or callable(opponents) or hasattr(opponents, "act_state"):
            specs = [opponents] * (n - 1)
        elif isinstance(opponents, Sequence) and not isinstance(opponents, Mapping):
            if len(opponents) != n - 1:
                raise OptionError(
                    f"{self.game_id}: opponents as a sequence must hold {n - 1} policies (relative seats 1..{n - 1}, "
                    f"from the learner's left), got {len(opponents)}"
                )
            specs = list(opponents)
        else:
            specs = [opponents]  # type: ignore[list-item]  # reported below
        for spec in specs:
            if isinstance(spec, str):
                ok = spec in (RANDOM, HEURISTIC) or is_pretrained(spec)
            else:
                ok = callable(getattr(spec, "act_state", None)) or (
                    callable(spec) and not callable(getattr(spec, "act", None))
                )
            if not ok:
                close = (
                    difflib.get_close_matches(spec, (RANDOM, HEURISTIC, "pretrained"), n=1)
                    if isinstance(spec, str)
                    else []
                )
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                raise OptionError(
                    f"{self.game_id}: opponent {spec!r}{hint} cannot play here: an opponent must be 'random', "
                    "'heuristic', 'pretrained', 'pretrained(path=<exported .npz>)', a batched policy callable "
                    "(obs (k, D), mask (k, A) bool) -> actions (k,) or an object with act_state(venv, envs) (Agent "
                    "objects and other names have no batched form yet: use whist_env.envs.single_agent for them)"
                )
        # one object per name for every seat it plays (neither keeps state of its own between calls)
        specs = [self._named_opponent(spec) if isinstance(spec, str) and spec != RANDOM else spec for spec in specs]
        # the distinct policies, and which one plays each relative seat (index 0: the learner, -1)
        self._policies: list[OpponentSpec] = []
        self._policy_of = np.full(n, -1, np.int64)
        for rel, spec in enumerate(specs, start=1):
            found = [k for k, p in enumerate(self._policies) if p is spec]
            if not found:
                self._policies.append(spec)
            self._policy_of[rel] = found[0] if found else len(self._policies) - 1

    def _named_opponent(self, name: str) -> OpponentSpec:
        """The batched agent of ``"heuristic"`` or a ``pretrained`` spec for the env's game and options, built on
        first use and kept."""
        if name not in self._named:
            options = dataclasses.asdict(self.venv.game.config)
            if name == HEURISTIC:
                from whist_env.vector.heuristics import BatchedHeuristic

                self._named[name] = BatchedHeuristic(self.game_id, **options)
            else:
                entropy = None if self._seed is None else int(self._seed)
                rng = np.random.default_rng(np.random.SeedSequence(entropy, spawn_key=(2, len(self._named))))
                self._named[name] = batched_pretrained(name, self.game_id, options, rng)
        return self._named[name]

    def _generator(self, seed: Any) -> np.random.Generator:
        """The learner env's own generator (seats, random opponents): a stream of ``seed`` apart from the engine's."""
        return np.random.default_rng(np.random.SeedSequence(None if seed is None else int(seed), spawn_key=(1,)))

    def _draw_seats(self, rows: np.ndarray) -> None:
        """The learner's seat of the next episode in environments ``rows`` (called once as each episode starts)."""
        self._episodes[rows] += 1
        if self.learner_seat_mode == RANDOM:
            self._seat[rows] = self._rng.integers(self.num_players, size=len(rows))
        else:
            self._seat[rows] = self.learner_seat_mode

    # ------------------------------------------------------------------ Gymnasium API
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Start a new episode in every environment and play the opponents up to the learner's first decision.

        Args:
            seed: reseeds the engine's generators and the learner env's own (an int >= 0); None: they go on.
            options: ``{"decks": (B, 52), "dealers": (B,)}``, as :meth:`RawVectorEnv.reset` takes them.

        Raises:
            OptionError: for a bad seed or option (nothing changes then).
        """
        reset_options(self.game_id, options, ("decks", "dealers"))
        ts = self.venv.reset(seed=seed, options=options)  # checks the seed and the options first
        if seed is not None:
            self._rng = self._generator(seed)
        every = np.arange(self.num_envs)
        self._draw_seats(every)
        self._pending[:] = 0.0
        self._autoreset[:] = False
        self._cut[:] = False
        self._illegal[:] = 0
        reward = np.zeros(self.num_envs, np.float64)
        self._ready = False
        fresh = np.ones(self.num_envs, np.bool_)  # rewards before the first decision are paid with it (none so far)
        infos = self._advance(every, ts, reward, np.zeros(self.num_envs, np.bool_), fresh, {})
        self._ready = True
        return self._obs.copy(), infos

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Play the learner's ``actions`` (B,), then the other seats until the learner's next turn everywhere.

        Next-step autoreset: where the last step ended an episode, the action is ignored and the next episode starts
        (reward 0, not terminated), its opponents playing up to the learner's first decision.

        Returns:
            observations (B, D), the learner's rewards since its previous decision (B,) float32 (including the
            opponents' moves and the terminal reward), terminated (B,), truncated (B,) (always False), infos.

        Raises:
            ValueError: for actions of the wrong shape or dtype.
            IllegalActionError: when some learner actions are illegal and the env has no ``illegal_reward``; it names
                the environments, and none changed. With an ``illegal_reward``, an illegal action ends its
                episode instead (see :func:`make_learner_env`).
            CallOrderError: before :meth:`reset`, or after an opponent policy returned bad actions.
        """
        if not self._ready:
            raise CallOrderError(
                f"{self.game_id}: call reset() before step() (no episode has started, or an opponent policy "
                "returned bad actions in the last step)"
            )
        acts = np.asarray(actions)
        b = self.num_envs
        if acts.shape != (b,) or not np.issubdtype(acts.dtype, np.integer):
            raise ValueError(
                f"{self.game_id}: actions must be an integer array of shape ({b},) (one per environment), "
                f"got shape {acts.shape} dtype {acts.dtype}"
            )
        restart = self._autoreset.copy()  # next-step: these start anew, their actions ignored
        live = np.flatnonzero(~restart)
        bad = self._refused(acts[live], live)
        cut = restart & self._cut  # next-step: ended by an illegal action, so the engine starts them anew here
        if restart.any():
            acts = np.where(restart, 0, acts)  # the engine starts an ended episode whatever the action
            self._draw_seats(np.flatnonzero(restart))
            self._autoreset[:] = False
            self._cut[:] = False
        reward = self._pending.copy()
        self._pending[:] = 0.0
        ended = np.zeros(b, np.bool_)
        self._illegal[:] = 0
        self._ready = False
        infos: dict[str, Any] = {}
        if not len(bad) and not cut.any():
            infos = self._advance(np.arange(b), self.venv.step(acts), reward, ended, restart, infos)
        else:
            if len(bad):
                self._end_illegal(bad, reward, ended, restart, infos)
            if cut.any():
                rows = np.flatnonzero(cut)
                self._take(rows, self.venv.reset_envs(rows), reward, ended, restart, infos)
            skip = cut.copy()
            skip[bad] = True
            rows = np.flatnonzero(~skip)
            infos = self._advance(rows, self.venv.step_envs(rows, acts[rows]), reward, ended, restart, infos)
        self._ready = True
        return self._obs.copy(), reward.astype(np.float32), ended, np.zeros(b, np.bool_), infos

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions now, one row per environment (for MaskablePPO; all False where an episode
        ended and waits for its next-step reset).  # (B, A) bool"""
        return self._mask.copy()

    @property
    def episode_counts(self) -> np.ndarray:
        """Episodes started so far in each environment, the current one included (a read-only view; it grows by one
        as an episode starts, before its first move, so an opponent's ``act_state`` can tell a new episode).
        # (B,) int64"""
        view = self._episodes.view()
        view.flags.writeable = False
        return view

    @property
    def learner_seats(self) -> np.ndarray:
        """The learner's seat in each environment's current episode (a read-only view).  # (B,) int64"""
        view = self._seat.view()
        view.flags.writeable = False
        return view

    def close(self, **kwargs: Any) -> None:
        """Nothing to release (the engine holds arrays only)."""

    # ------------------------------------------------------------------ internals
    def _refused(self, acts: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """The environments among ``rows`` whose learner action ``acts[j]`` is illegal, when the env ends episodes
        on an illegal action; without an ``illegal_reward`` it raises for them (:meth:`_check_legal`)."""
        if self.illegal_reward is None:
            self._check_legal(acts, rows, LEARNER)
            return rows[:0]
        a = self.venv.num_actions
        ok = (acts >= 0) & (acts < a)
        ok[ok] = self._mask[rows[ok], acts[ok]]
        return rows[~ok]

    def _end_illegal(
        self, bad: np.ndarray, reward: np.ndarray, ended: np.ndarray, fresh: np.ndarray, infos: dict
    ) -> None:
        """End the episodes of ``bad`` on the learner's illegal action: ``illegal_reward`` on top of what it earned
        since its last decision, the last observation the one it acted on, nothing legal any more. Same-step: the
        next episode starts at once (its engine episode begins anew); next-step: at the next step."""
        assert self.illegal_reward is not None
        reward[bad] += self.illegal_reward
        ended[bad] = True
        self._illegal[bad] = 1
        self._mask[bad] = False
        if not self._same_step:
            self._autoreset[bad] = True
            self._cut[bad] = True
            return
        self._final(bad, self._obs[bad], infos)
        self._illegal[bad] = 0  # the step's infos are the next episode's there; the count is in final_info
        fresh[bad] = True
        self._draw_seats(bad)
        self._take(bad, self.venv.reset_envs(bad), reward, ended, fresh, infos)

    def _check_legal(self, acts: np.ndarray, rows: np.ndarray, who: str) -> None:
        """Raise, naming the environments, where ``acts[j]`` is not legal for the seat to act in ``rows[j]``."""
        a = self.venv.num_actions
        inside = (acts >= 0) & (acts < a)
        ok = inside.copy()
        ok[inside] = self._mask[rows[inside], acts[inside]]
        if ok.all():
            return
        bad = np.flatnonzero(~ok)
        first, i = int(bad[0]), int(rows[bad[0]])
        describe = self.venv.game.action_text  # cards as the screens show them (10♠)
        legal = tuple(int(x) for x in np.flatnonzero(self._mask[i]))
        changed = "; no environment changed" if who == LEARNER else ""
        raise IllegalActionError(
            f"{self.game_id}: illegal action of {who} in environment(s) {env_list(rows[bad])}{changed}. "
            f"Environment {i}: seat {int(self._player[i])} cannot play {describe(int(acts[first]))}; legal: "
            + " ".join(describe(x) for x in legal),
            int(self._player[i]),
            int(acts[first]),
            legal,
        )

    def _take(
        self, rows: np.ndarray, ts: TimeStep, reward: np.ndarray, ended: np.ndarray, fresh: np.ndarray, infos: dict
    ) -> None:
        """Record the engine's answer ``ts`` for ``rows``: the learner's reward, the seat to act, its observation
        and mask, and where an episode ended, its final observation and infos (and, same-step, the next episode's
        seat). ``fresh`` marks the environments whose rewards now belong to the learner's next decision."""
        self._player[rows] = ts.current_player
        self._obs[rows] = ts.observation
        self._mask[rows] = ts.action_mask
        mine = ts.rewards[np.arange(len(rows)), self._seat[rows]]
        new = fresh[rows]
        reward[rows[~new]] += mine[~new]
        self._pending[rows[new]] += mine[new]
        done = rows[ts.terminated]
        if not len(done):
            return
        ended[done] = True
        final_obs, _ = self.venv.observe_envs(done, self._seat[done])
        if not self._same_step:  # the ended episode's last observation is the step's; it starts anew next step
            self._obs[done] = final_obs
            self._autoreset[done] = True
            return
        self._final(done, final_obs, infos)
        fresh[done] = True  # what these earn from now on belongs to the next episode
        self._draw_seats(done)

    def _final(self, done: np.ndarray, final_obs: np.ndarray, infos: dict) -> None:
        """Same-step: the ended episodes ``done``'s last observations and infos into ``infos["final_*"]``."""
        if "final_obs" not in infos:
            b = self.num_envs
            infos["final_obs"] = np.zeros_like(self._obs)
            infos["_final_obs"] = np.zeros(b, np.bool_)
            infos["final_info"] = self._infos(np.zeros(b, np.bool_))
            infos["_final_info"] = np.zeros(b, np.bool_)
        infos["final_obs"][done] = final_obs
        infos["_final_obs"][done] = True
        final = infos["final_info"]
        final["learner_seat"][done] = self._seat[done]
        final["action_mask"][done] = 0  # the episode is over: nothing is legal
        final["returns"][done] = self.venv.field("returns")[done, : self.num_players]
        final["illegal_actions"][done] = self._illegal[done]
        for key in ("_learner_seat", "_action_mask", "_returns", "_illegal_actions"):
            final[key][done] = True
        infos["_final_info"][done] = True

    def _infos(self, rows: np.ndarray) -> dict[str, np.ndarray]:
        """The infos as they stand: values in every environment, ``_key`` masks set in ``rows`` (a (B,) bool)."""
        n = self.num_players
        return {
            "learner_seat": self._seat.copy(),
            "_learner_seat": rows.copy(),
            "action_mask": self._mask.astype(np.int8),
            "_action_mask": rows.copy(),
            "returns": self.venv.field("returns")[:, :n].astype(np.float32),
            "_returns": rows.copy(),
            "illegal_actions": self._illegal.copy(),
            "_illegal_actions": rows.copy(),
        }

    def _advance(
        self, rows: np.ndarray, ts: TimeStep, reward: np.ndarray, ended: np.ndarray, fresh: np.ndarray, infos: dict
    ) -> dict:
        """After the engine's answer ``ts`` for ``rows``: play the other seats (and, same-step, start the next episode
        where one ended) until the learner is to act in every environment (next-step: or its episode ended);
        ``reward`` and ``ended`` gather the learner's."""
        self._take(rows, ts, reward, ended, fresh, infos)
        while True:
            # an opponent to act, or (same-step) an episode to start
            waiting = np.flatnonzero((self._player != self._seat) & ((self._player >= 0) | self._same_step))
            if not len(waiting):
                break
            acts = np.zeros(len(waiting), np.int64)  # an ended episode ignores its action: it starts anew
            players = self._player[waiting]
            policy = self._policy_of[(players - self._seat[waiting]) % self.num_players]
            policy[players < 0] = -1
            for k, spec in enumerate(self._policies):
                js = np.flatnonzero(policy == k)
                if len(js):
                    acts[js] = self._act(spec, waiting[js])
            self._take(waiting, self.venv.step_envs(waiting, acts), reward, ended, fresh, infos)
        infos.update(self._infos(np.ones(self.num_envs, np.bool_)))
        return infos

    def _act(self, spec: OpponentSpec, rows: np.ndarray) -> np.ndarray:
        """The actions of the policy ``spec`` for the seats to act in ``rows``, checked."""
        if isinstance(spec, str):
            return random_actions(self._mask[rows], self._rng)
        if hasattr(spec, "act_state"):
            out = np.asarray(spec.act_state(self.venv, rows))
        else:
            out = np.asarray(spec(self._obs[rows], self._mask[rows]))
        if out.shape != rows.shape or not np.issubdtype(out.dtype, np.integer):
            raise ValueError(
                f"{self.game_id}: the opponent policy {spec!r} must return an integer array of shape {rows.shape} "
                f"(one action per row), got shape {out.shape} dtype {out.dtype}; call reset() to go on"
            )
        self._check_legal(out, rows, f"the opponent policy {spec!r} (call reset() to go on)")
        return out.astype(np.int64)


def make_learner_env(
    game_id: str,
    num_envs: int,
    opponents: OpponentSpec | Sequence[OpponentSpec] = RANDOM,
    learner_seat: int | str = 0,
    seed: Any = None,
    obs_dtype: str | None = None,
    autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
    illegal_reward: float | None = None,
    **options: Any,
) -> LearnerVectorEnv:
    """``num_envs`` episodes of ``game_id`` with one learner seat each, the other seats played inside (see the
    module docstring).

    Args:
        game_id: a registered game with a batched engine.
        num_envs: the batch size ``B``.
        opponents: ``"random"``, ``"heuristic"`` (the game's rule-based agent, batched), ``"pretrained"`` or
            ``"pretrained(path=<exported .npz>)"`` (a network, frozen: the agent's own cards), a batched policy callable
            ``(obs (k, D), mask (k, A) bool) -> actions (k,)`` (a frozen network: self-play) or an object with
            ``act_state(venv, envs)``, for every other seat, or a sequence of ``n - 1`` of them (relative seats
            1..n-1 from the learner's left; a partnership game's partner is relative seat 2, played by its policy).
            A callable gets the seat to act's observation in the engine's dtype.
        learner_seat: a seat 0..n-1, or ``"random"``: a seat drawn for every episode.
        seed: seeds the deals, the seats and the random opponents (an int >= 0; None: fresh entropy).
        obs_dtype: the observations' dtype, as :func:`whist_env.vector.make` takes it.
        autoreset_mode: ``AutoresetMode.NEXT_STEP`` (Gymnasium's default) or ``AutoresetMode.SAME_STEP`` (SB3's way,
            which :mod:`whist_env.learning.sb3_vec` needs), or their values ``"NextStep"``, ``"SameStep"``.
        illegal_reward: None (the default): an illegal learner action raises ``IllegalActionError`` and nothing
            changes, as a trainer wants. A number: an illegal action ends that environment's episode with this
            reward (on top of what the learner earned since its previous decision), the observation it acted on as
            the last one and ``infos["illegal_actions"]`` 1 there (same-step: in ``final_info``); the action is
            never replaced. For libraries that step unmasked, such as TorchRL's ``GymWrapper`` while it is built.
        **options: the game's options, exactly as its AEC env takes them.

    Raises:
        OptionError: for an unknown game, a bad option, opponent, seat, autoreset mode or illegal reward.
        ModelMismatchError: a ``pretrained`` opponent's network made for other options or another layout.
    """
    mode = autoreset_mode_of(autoreset_mode, game_id)  # checked before the engine is built
    if illegal_reward is not None:
        finite_number("illegal_reward", illegal_reward, game_id)
    return LearnerVectorEnv(make(game_id, num_envs, seed=seed, obs_dtype=obs_dtype, **options), opponents,
                            learner_seat, seed, mode, illegal_reward)  # fmt: skip


def vector_entry_point(num_envs: int, game: str, **kwargs: Any) -> LearnerVectorEnv:
    """``gymnasium.make_vec``'s entry point of every game (``vector_entry_point`` of its Gymnasium id): the learner
    env of ``game`` with ``num_envs`` environments; ``kwargs`` as :func:`make_learner_env` takes them."""
    return make_learner_env(game, num_envs, **kwargs)
