"""The league on the batched engine: a ``gymnasium.vector.VectorEnv`` an RLlib env runner steps in one call.

Each of the ``num_envs`` tables is one learner seat of :func:`whist_env.vector.make_learner_env` (the learner's seat
drawn per episode); every other seat is played *inside* the env, batched, by the role the league drew for it at the
start of the episode (:func:`whist_env.learning.rllib.league.draw_table`'s rule, drawn for many tables at once):

* ``main``: a frozen numpy copy of the learning policy, refreshed by the training script after every iteration
  (:meth:`EngineLeagueEnv.set_policy`); the learner's partner always plays it (partners share a role);
* ``snapshot_<k>``: frozen copies of main, filled one by one (``snapshot`` in the weights: one of the filled slots,
  drawn uniformly; ``main`` while there is none);
* ``random`` and ``heuristic``: the engine's uniformly random legal action and the heuristic's numba port.

The policies play the argmax of their legal logits (as ``ppo_vec``'s snapshots do). Only the learner seat's
decisions reach RLlib, so every env step RLlib counts is a decision of the policy being trained.

Observations are ``{"observation": (B, D) uint8, "action_mask": (B, A) int8}`` (the engine's own dtype: a quarter of
float32's bytes in every buffer and batch RLlib builds) (the names
:class:`~whist_env.learning.rllib.module.MaskedActorCritic` reads), with the suits renamed so that trump is spades when
``canonical_suits`` is set (the actions RLlib returns are renamed back). Autoreset is Gymnasium's next-step mode,
the one RLlib's ``SingleAgentEnvRunner`` expects: the observation of an ended episode comes with an all-zero mask,
and the next ``step()`` starts a new episode there whatever the action. Infos are empty except where an episode
ends: ``table`` (what the learner faced: ``self``, ``snapshot`` or the scripted names, joined by ``+``), read by
:class:`whist_env.learning.rllib.callbacks.LeagueMetrics`.

No Ray is imported here: the env is plain Gymnasium, tested on its own (``tests/rllib/test_engine_env.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv

from whist_env.errors import OptionError
from whist_env.learning.rllib.league import MAIN, SNAPSHOT, check_opponents, scripted_names, snapshot_id, table_kind
from whist_env.vector.learner import HEURISTIC, RANDOM, random_actions

ENGINE_ENV_NAME = "whist_env_engine_league"
"""The name the training script registers :class:`EngineLeagueEnv` under (``ray.tune.register_env``)."""
SCRIPTED = (RANDOM, HEURISTIC)
"""The scripted league members with a batched form on the engine."""


class EngineLeagueEnv(VectorEnv):
    """A league of batched tables on the engine (see the module docstring).

    Args:
        config: ``game``, ``game_options``, ``num_envs`` (RLlib adds it for ``gym_env_vectorize_mode``
            ``vector_entry_point``), ``opponents`` (league weights, as
            :class:`whist_env.learning.rllib.env.WhistMultiAgentEnv`
            takes them; scripted members ``random`` and ``heuristic`` only), ``snapshot_pool``, ``canonical_suits``
            and ``seed`` (RLlib's env runners reset with their own seed, the config's ``seed`` plus their index).

    Raises:
        OptionError: for an unknown game, bad options, bad league weights or a scripted member without a batched form.
    """

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP}  # noqa: RUF012 (Gymnasium's convention)

    def __init__(self, config: Mapping[str, Any]) -> None:
        from whist_env.registry import get_spec
        from whist_env.vector import make_learner_env

        cfg = dict(config)
        self.game_id: str = cfg["game"]
        self.game_options: dict[str, Any] = dict(cfg.get("game_options") or {})
        self.num_envs = int(cfg.get("num_envs", 1))
        self.opponents: dict[str, float] = dict(cfg.get("opponents") or {MAIN: 1.0})
        check_opponents(self.opponents)
        unknown = [k for k in scripted_names(self.opponents) if k not in SCRIPTED]
        if unknown:
            raise OptionError(
                f"{self.game_id}: the league on the batched engine plays {', '.join(SCRIPTED)}, main and snapshots; "
                f"{unknown} has no batched form (use engine: aec for it)"
            )
        self.pool = int(cfg.get("snapshot_pool", 0))
        seed = cfg.get("seed")
        spec = get_spec(self.game_id)
        self.autoreset_mode = AutoresetMode(cfg.get("autoreset_mode", AutoresetMode.NEXT_STEP))
        self.metadata = {**type(self).metadata, "autoreset_mode": self.autoreset_mode}
        self.inner = make_learner_env(
            self.game_id, self.num_envs, opponents=_Seats(self), learner_seat=RANDOM, seed=seed,
            obs_dtype="uint8", autoreset_mode=self.autoreset_mode, **self.game_options,
        )  # fmt: skip
        n = self.num_players = self.inner.num_players
        sides = spec.sides(n)
        # the relative seats of the learner's partners (they play main) and of each other side
        self._partners = np.array([r for r in range(1, n) if sides[r] == sides[0]], np.int64)
        self._other_sides = [np.array([r for r in range(n) if sides[r] == s], np.int64) for s in sorted(set(sides))
                             if s != sides[0]]  # fmt: skip
        # roles: 0 main, 1..pool the snapshot slots, then the scripted members
        self.role_names = [MAIN, *(snapshot_id(k) for k in range(self.pool)), *scripted_names(self.opponents)]
        keys = list(self.opponents)
        self._keys = keys
        weights = np.array([self.opponents[k] for k in keys], np.float64)
        self._weights = weights / weights.sum()
        self._policies: dict[int, Any] = {}
        self.snapshots = 0
        self._heuristic: Any = None
        if HEURISTIC in self.opponents:
            from whist_env.vector.heuristics import BatchedHeuristic

            self._heuristic = BatchedHeuristic(self.game_id, **self.game_options)
        self.canonical: Any = None
        if cfg.get("canonical_suits"):
            from whist_env.encoding.canonical import CanonicalSuits

            self.canonical = CanonicalSuits(spec.make_encoder(spec.make_rules(**self.game_options)).layout)
        self._rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(2,)))
        self.roles = np.zeros((self.num_envs, n), np.int64)  # per env, per relative seat (0: the learner)
        self._drawn_for = np.zeros(self.num_envs, np.int64)  # the inner env's episode count the roles belong to
        self._kind = np.full(self.num_envs, "", dtype=object)  # the table of the roles drawn (table_kind)
        self._last_kind = self._kind.copy()  # ... and of the episode before
        self._perm: np.ndarray | None = None
        self._done = np.zeros(self.num_envs, np.bool_)
        size, a = self.inner.venv.observation_size, self.inner.venv.num_actions
        self.single_observation_space = spaces.Dict(
            {"observation": spaces.Box(0, 1, (size,), np.uint8), "action_mask": spaces.Box(0, 1, (a,), np.int8)}
        )
        self.observation_space = spaces.Dict(
            {
                "observation": spaces.Box(0, 1, (self.num_envs, size), np.uint8),
                "action_mask": spaces.Box(0, 1, (self.num_envs, a), np.int8),
            }
        )
        self.num_actions = a
        self.single_action_space = spaces.Discrete(a)
        self.action_space = spaces.MultiDiscrete(np.full(self.num_envs, a))

    # ------------------------------------------------------------------ the league
    def set_policy(self, role: str, policy: Any) -> None:
        """Let ``policy`` (a :class:`~whist_env.agents.pretrained.NumpyPolicy` in the learner's view) play ``role``
        (``main`` or ``snapshot_<k>``) from the next move on.

        Raises:
            OptionError: for a role that is no module of this league.
        """
        if role not in self.role_names[: 1 + self.pool]:
            raise OptionError(f"set_policy: {role!r} is not main or a snapshot slot 0..{self.pool - 1}")
        self._policies[self.role_names.index(role)] = policy

    def set_snapshots(self, count: int) -> None:
        """Let the league draw from the first ``count`` snapshot slots (each must have a policy by then)."""
        self.snapshots = max(0, min(int(count), self.pool))

    def _sync(self, rows: np.ndarray) -> None:
        """Draw the roles of every environment among ``rows`` whose episode started since its last draw (the inner
        env counts the episodes it starts; a same-step restart plays the new episode's first moves inside a step)."""
        stale = rows[self._drawn_for[rows] != self.inner.episode_counts[rows]]
        if len(stale):
            self._draw(stale)
            self._drawn_for[stale] = self.inner.episode_counts[stale]

    def _draw(self, rows: np.ndarray) -> None:
        """The roles of the next episode's other seats in environments ``rows``."""
        roles = self.roles[rows]
        roles[:] = 0  # the learner's own seat and its partners: main
        for seats in self._other_sides:
            keys = self._rng.choice(len(self._keys), size=len(rows), p=self._weights)
            side = np.zeros(len(rows), np.int64)
            for k, key in enumerate(self._keys):
                at = keys == k
                if key == SNAPSHOT:
                    slot = self._rng.integers(self.snapshots, size=int(at.sum())) if self.snapshots else None
                    side[at] = 0 if slot is None else 1 + slot
                elif key != MAIN:
                    side[at] = self.role_names.index(key)
            roles[:, seats] = side[:, None]
        self.roles[rows] = roles
        self._last_kind[rows] = self._kind[rows]
        self._kind[rows] = [table_kind([self.role_names[r] for r in row[1:]]) for row in roles]

    def _play(self, venv: Any, envs: np.ndarray) -> np.ndarray:
        """The actions of the seats to act in ``envs`` (all other seats than the learner's), each by its role."""
        self._sync(envs)
        players = venv.field("to_act")[envs, 0].astype(np.int64)
        rel = (players - self.inner.learner_seats[envs]) % self.num_players
        role = self.roles[envs, rel]
        out = np.empty(len(envs), np.int64)
        for r in np.unique(role):
            js = np.flatnonzero(role == r)
            rows, seats = envs[js], players[js]
            name = self.role_names[r]
            if name == HEURISTIC:
                out[js] = self._heuristic.act_state(venv, rows)
                continue
            obs, mask = venv.observe_envs(rows, seats)
            if name == RANDOM:
                out[js] = random_actions(mask.astype(np.bool_), self._rng)
                continue
            policy = self._policies.get(int(r))
            if policy is None:
                raise RuntimeError(f"{self.game_id}: the league drew {name!r}, but no policy was set for it")
            perm = None
            if self.canonical is not None:
                obs, mask, perm = self.canonical.forward(obs, mask)
            acts = np.where(mask > 0, policy.logits(obs), -np.inf).argmax(axis=1)
            out[js] = acts if perm is None else self.canonical.action_back(acts, perm)
        return out

    # ------------------------------------------------------------------ Gymnasium API
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Start a new episode in every environment, each table with the league's draw of roles."""
        if seed is not None:
            self._rng = np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(2,)))
        self._drawn_for[:] = -1  # every table draws anew
        obs, _ = self.inner.reset(seed=seed, options=options)
        self._sync(np.arange(self.num_envs))
        return self._out(obs), {}

    def step(self, actions: Any) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Play the learner's ``actions`` (in its view), then the other seats, up to its next decision everywhere."""
        acts = np.asarray(actions, np.int64)
        if self.canonical is not None and self._perm is not None:
            acts = np.asarray(self.canonical.action_back(acts, self._perm), np.int64)
        before = self._drawn_for.copy()
        obs, reward, terminated, truncated, inner = self.inner.step(acts)
        every = np.arange(self.num_envs)
        self._sync(every)
        infos: dict[str, Any] = {}
        if terminated.any():
            # the ended episode's table: its roles were redrawn during the step if the next episode began in it
            redrawn = self._drawn_for != before
            table = np.where(redrawn, self._last_kind, self._kind)
            table[~terminated] = ""
            infos = {"table": table, "_table": terminated.copy()}
            if "final_obs" in inner:  # same-step: the ended episodes' last observations, in the learner's view
                done = np.flatnonzero(terminated)
                final = np.zeros_like(inner["final_obs"])
                nothing = np.zeros((len(done), self.num_actions), np.int8)  # an ended episode: nothing is legal
                final[done] = self._view(inner["final_obs"][done], nothing)[0]
                infos["final_obs"], infos["_final_obs"] = final, terminated.copy()
        return self._out(obs), reward, terminated, truncated, infos

    def _view(self, obs: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, Any]:
        """Observations and masks in the learner's view (suits renamed or not), with the renaming."""
        if self.canonical is None:
            return obs, mask, None
        return self.canonical.forward(obs, mask)  # type: ignore[no-any-return]

    def _out(self, obs: np.ndarray) -> dict[str, np.ndarray]:
        obs, mask, self._perm = self._view(obs, self.inner.action_masks())
        return {"observation": obs, "action_mask": mask.astype(np.int8)}

    def close(self, **kwargs: Any) -> None:
        """Nothing to release (the engine holds arrays only)."""


class _Seats:
    """The learner env's opponent for every other seat: hands each decision to the league (``act_state``)."""

    def __init__(self, env: EngineLeagueEnv) -> None:
        self.env = env

    def act_state(self, venv: Any, envs: Any) -> np.ndarray:
        return self.env._play(venv, np.asarray(envs, np.int64))

    def __repr__(self) -> str:
        return f"the league of {self.env.game_id}"
