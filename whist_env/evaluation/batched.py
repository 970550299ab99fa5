"""The arena on the batched engine: :func:`evaluate_batched`, the twin of :func:`whist_env.evaluation.evaluate` for
agents that have a batched form (issue #14, point 3).

    >>> from whist_env.evaluation.batched import evaluate_batched
    >>> report = evaluate_batched("german_whist_v0", ["pretrained", "random"], num_deals=2000, seed=0)
    >>> print(report.to_markdown())

**The same comparison.** The deals, the seat rotation and the statistics are those of the AEC arena
(:mod:`whist_env.evaluation.arena`, whose docstring gives the method): deal ``i`` of seed ``s`` is the same dealer
and deck (:meth:`~whist_env.evaluation.arena.Arena.deal`), replayed once per rotation of the lineup
(:func:`~whist_env.evaluation.arena.seat_assignments`), and the report is built by the AEC arena's own
:func:`~whist_env.evaluation.arena.summarise` from the same per-deal results, so it is an
:class:`~whist_env.evaluation.report.ArenaReport` that ``whist-eval`` and the reports print as any other. Every table
(one replay of one deal) is one environment of a :class:`~whist_env.vector.core.RawVectorEnv`; the deals are given to
it through ``reset(options={"decks": ..., "dealers": ...})``. Oh Hell with ``trump_mode="drawn_card"`` also draws
the trump card at deal time, from the AEC arena's game generator ``default_rng([s, i, 1])``: there each table starts
from the rules' own start state (``import_state``), so that the card is the AEC arena's too.

**Agents** are batched agents (the protocol of :mod:`whist_env.vector`): a callable ``(obs (k, D), mask (k, A) bool)
-> actions (k,)`` (a network), or an object with ``act_state(venv, envs) -> actions`` that reads the engine's state
block (the heuristic ports, ``whist_env.vector.heuristics.BatchedHeuristic``). By name (:func:`batched_agent`):
``"random"`` (a uniformly random legal action), ``"heuristic"`` (the game's heuristic port, in the games
``whist_env.vector.heuristics.ported_games()`` lists) and ``"pretrained"`` or ``"pretrained(path=<exported .npz>)"``
(the network :class:`~whist_env.agents.pretrained.PretrainedAgent` plays, one forward pass for a whole batch of
decisions). Any other name, or a heuristic not ported yet, has no batched form: :func:`batched_agent` says so,
naming it.

**What matches the AEC arena.** Deterministic agents (the pretrained network, the heuristic port) play the same
cards on the same deals, so every per-deal score, the means, the intervals and the win/draw/loss counts are the AEC
arena's (tests/vector/test_vector_arena.py checks it for every game). Random agents draw from their own generators
(``default_rng([seed, 3, j])`` for agent ``j``), not from the AEC arena's per-table ones: their results are
reproducible from ``seed`` (for the same ``batch_size``), and agree with the AEC arena's in distribution only.
Illegal actions are counted per agent and replaced by the lowest legal action, as there. ``ms_per_decision`` is the
time in the agent's batch calls divided by its decisions.

**Whole episodes** (``single_deal=False``: an Oh Hell match, a rubber) are refused: the AEC arena draws their later
deals from its game generator, the engine from its own, so the later deals would not be the same.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from whist_env.errors import OptionError
from whist_env.evaluation.arena import (
    Arena,
    ArenaConfig,
    DealResult,
    TableResult,
    decided,
    progress_bar,
    stop_rule,
    summarise,
)
from whist_env.evaluation.report import ArenaReport
from whist_env.evaluation.sequential import StopRule
from whist_env.registry import GameRef, spec_of
from whist_env.vector.core import RawVectorEnv
from whist_env.vector.engines import make
from whist_env.vector.learner import random_actions
from whist_env.vector.policy import BatchedPolicy, StateAgent, batched_pretrained, sparse_affine

__all__ = [
    "BATCHED_NAMES",
    "BatchedPolicy",
    "BatchedRandom",
    "StateAgent",
    "batched_agent",
    "evaluate_batched",
    "play_batched",
    "sparse_affine",
]

BATCHED_NAMES = ("random", "heuristic", "pretrained")
"""The agent names that have a batched form (``pretrained`` also with its ``path``)."""

DEFAULT_BATCH = 4096
"""Tables played at once by default (a batch of environments; the deals beyond it are played in further batches)."""


BatchedAgent = Callable[[np.ndarray, np.ndarray], Any] | StateAgent


class BatchedRandom:
    """A uniformly random legal action per row, drawn from its own generator.

    Args:
        rng: the generator every draw comes from.
    """

    name = "random"

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng

    def __call__(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        return random_actions(mask, self.rng)


def batched_agent(spec: Any, game_id: GameRef, options: dict[str, Any], rng: np.random.Generator) -> BatchedAgent:
    """The batched form of an agent given by name, or the batched agent itself.

    Args:
        spec: ``"random"``, ``"heuristic"``, ``"pretrained"``, ``"pretrained(path=...)"`` (any spelling of
            :mod:`whist_env.agents.agent_spec`), a callable ``(obs, mask) -> actions`` or an object with
            ``act_state(venv, envs)``.
        game_id: the game (its id, or its spec).
        options: the game's options (as played: the single-deal ones included).
        rng: the generator of a random agent (and of a sampling network).

    Raises:
        OptionError: for an agent without a batched form (naming it and the names that have one), or what
            building the named agent raises (a bad option, no shipped weights).
    """
    if not isinstance(spec, str):
        if isinstance(spec, StateAgent) or callable(spec):
            return spec
        raise OptionError(
            f"a batched agent is a name ({', '.join(BATCHED_NAMES)}), a callable (obs, mask) -> actions or an object "
            f"with act_state(venv, envs); got {spec!r}"
        )
    from whist_env.agents.agent_spec import parse_agent_spec

    parsed = parse_agent_spec(spec)
    if parsed.name == "random":
        spec_of(game_id).make_rules(**options)  # an unknown game or a bad option fails here, as make_agent's
        return BatchedRandom(rng)
    if parsed.name == "pretrained":
        return batched_pretrained(parsed, game_id, options, rng)
    if parsed.name == "heuristic":
        from whist_env.vector.heuristics import BatchedHeuristic

        # a game whose heuristic is not ported yet: its OptionError names the ported games
        return BatchedHeuristic(game_id, **dict(parsed.kwargs), **options)
    raise OptionError(
        f"agent {spec!r} has no batched form; agents with one: {', '.join(BATCHED_NAMES)} (pretrained also as "
        "pretrained(path=<exported .npz>): export a trained model with whist_env.agents.pretrained.export_policy), "
        "or pass a batched callable; play the others in the AEC arena (whist-eval without --batched)"
    )


def _label(spec: Any, agent: Any) -> str:
    """How an agent is named in the report: its name as given, else the batched agent's ``name``."""
    if isinstance(spec, str):
        return spec
    return str(getattr(agent, "name", None) or getattr(agent, "__name__", None) or type(agent).__name__)


def play_batched(
    config: ArenaConfig,
    agents: Sequence[BatchedAgent],
    batch_size: int = DEFAULT_BATCH,
    progress: bool = False,
    stop: StopRule | None = None,
) -> tuple[list[DealResult], float]:
    """Play every deal of ``config`` on the batched engine with the batched ``agents`` (one per agent of
    ``config``, in order); the results in deal order, as :func:`whist_env.evaluation.arena.play_deals` returns them.

    With ``stop``, ``config.num_deals`` is a cap: the deals are played in chunks of ``stop.look_every`` (each in
    batches of at most ``batch_size`` tables) and the run ends after the first chunk at which every pair's
    anytime-valid interval excludes 0 (:func:`whist_env.evaluation.arena.decided`).

    Returns:
        The results, and the wall time in seconds.

    Raises:
        OptionError: for a bad configuration (as the AEC arena raises it), whole episodes, or a bad ``batch_size``.
        ValueError: when an agent returns actions of the wrong shape.
    """
    arena = _checked_arena(config)
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise OptionError(f"batch_size must be an int >= 1, got {batch_size!r}")
    if len(agents) != len(config.agents):
        raise OptionError(f"give one batched agent per agent of the config: {len(config.agents)}, got {len(agents)}")
    m = len(agents)
    tables = len(arena.assignments)
    total = config.num_deals * tables
    size = min(batch_size, total)
    engines: dict[int, RawVectorEnv] = {}  # by size: the last batch of a chunk may be smaller (the same options)
    deals = [arena.deal(i) for i in range(config.num_deals)]
    returns = np.zeros((total, arena.game.num_players), np.float64)
    decisions = np.zeros((config.num_deals, m), np.int64)
    illegal = np.zeros((config.num_deals, m), np.int64)
    think = np.zeros(m, np.float64)
    look = stop.look_every * tables if stop else total  # tables between two looks
    played = config.num_deals
    start = time.perf_counter()
    with progress_bar(config.num_deals, config.game_id, enabled=progress) as bar:
        done = 0  # the deals whose every table is played
        for chunk in range(0, total, look):
            end = min(total, chunk + look)
            for first in range(chunk, end, size):
                rows = np.arange(first, min(end, first + size))
                if len(rows) not in engines:
                    engines[len(rows)] = make(config.spec, len(rows), seed=config.seed, **arena.options)
                _play_batch(engines[len(rows)], arena, deals, rows, agents, returns, decisions, illegal, think)
                bar.update((rows[-1] + 1) // tables - done)
                done = (rows[-1] + 1) // tables
            if stop is not None and done < config.num_deals:
                scores = [_scores(returns, arena, i) for i in range(done)]
                if decided(stop, scores):
                    played = done
                    break
    wall = time.perf_counter() - start
    decisions, illegal = decisions[:played], illegal[:played]
    total_decisions = decisions.sum(axis=0)
    share = np.divide(decisions, total_decisions, out=np.zeros(decisions.shape), where=total_decisions > 0)
    results = []
    for i in range(played):
        tabs = [
            TableResult(tuple(a), tuple(float(x) for x in returns[i * tables + r]))
            for r, a in enumerate(arena.assignments)
        ]
        # the agents' think time is measured per batch call: each deal gets its share by its decisions
        results.append(DealResult(i, tabs, decisions[i].tolist(), illegal[i].tolist(), (think * share[i]).tolist()))
    return results, wall


def _scores(returns: np.ndarray, arena: Arena, deal: int) -> list[float]:
    """Each agent's score on ``deal`` from the per-table returns (:meth:`DealResult.scores` of that deal)."""
    tables = len(arena.assignments)
    rows = [TableResult(tuple(a), tuple(returns[deal * tables + r])) for r, a in enumerate(arena.assignments)]
    return DealResult(deal, rows, [], [], []).scores(len(arena.config.agents))


def _checked_arena(config: ArenaConfig) -> Arena:
    """The AEC arena of ``config`` (its checks of the options, the lineup and the partnerships; its deals), after
    the batched arena's own checks."""
    arena = Arena(config)
    if not config.single_deal:
        raise OptionError(
            f"{config.game_id}: the batched arena plays single deals only: the later deals of a whole episode are "
            "drawn by the engine's own generator, not the AEC arena's; drop --full-episodes (single_deal=False) or "
            "run without --batched"
        )
    if config.num_deals < 1:
        raise OptionError(f"num_deals must be at least 1, got {config.num_deals}")
    return arena


def _play_batch(
    venv: RawVectorEnv,
    arena: Arena,
    deals: Sequence[tuple[int, list[int]]],
    rows: np.ndarray,
    agents: Sequence[BatchedAgent],
    returns: np.ndarray,
    decisions: np.ndarray,
    illegal: np.ndarray,
    think: np.ndarray,
) -> None:
    """Play the tables ``rows`` (global table indices: deal ``row // T``, replay ``row % T``) to their end in
    ``venv`` (one environment per table), adding to the per-table ``returns`` and the per-deal counters."""
    tables = len(arena.assignments)
    labels = arena.config.labels()
    deal_of, replay = rows // tables, rows % tables
    seats = np.array(arena.assignments, np.int64)[replay]  # agent index per seat  # (b, n)
    ts = venv.reset(
        options={
            "decks": np.array([deals[i][1] for i in deal_of], np.int64),
            "dealers": np.array([deals[i][0] for i in deal_of], np.int64),
        }
    )
    player, obs, mask = ts.current_player.copy(), ts.observation.copy(), ts.action_mask.astype(bool)
    if getattr(arena.game, "drawn", False):
        # Oh Hell's drawn trump card comes from the game generator at deal time: start from the rules' own state
        config = arena.config
        for e, i in enumerate(deal_of):
            game_rng = np.random.default_rng([config.seed, int(i), 1])
            dealer, deck = deals[i]
            venv.import_state(e, arena.game.new_episode(game_rng, deck=deck, dealer=dealer))
        player = venv.field("to_act")[:, 0].copy()
        obs, mask_i8 = venv.observe(player)
        obs, mask = obs.copy(), mask_i8.astype(bool)
    b = len(rows)
    every = np.arange(b)
    active = every
    got = np.zeros((b, venv.num_players), np.float64)
    while len(active):
        who = seats[active, player[active]]
        acts = np.zeros(len(active), np.int64)
        for j, agent in enumerate(agents):
            sel = np.flatnonzero(who == j)
            if not len(sel):
                continue
            envs = active[sel]
            t0 = time.perf_counter()
            if isinstance(agent, StateAgent):
                out = agent.act_state(venv, envs)
            else:
                out = agent(obs[envs], mask[envs])
            think[j] += time.perf_counter() - t0
            acts[sel] = _legal_or_lowest(out, mask[envs], venv.game_id, labels[j], illegal, deal_of[envs], j)
            np.add.at(decisions[:, j], deal_of[envs], 1)  # a view: counts per deal
        step = venv.step(acts) if len(active) == b else venv.step_envs(active, acts)
        got[active] += step.rewards
        player[active] = step.current_player
        obs[active] = step.observation
        mask[active] = step.action_mask.astype(bool)
        active = active[~step.terminated]
    returns[rows] += got


def _legal_or_lowest(
    out: Any, mask: np.ndarray, game_id: str, label: str, illegal: np.ndarray, deal_of: np.ndarray, j: int
) -> np.ndarray:
    """An agent's actions, each illegal one counted against its deal and replaced by the lowest legal action."""
    acts = np.asarray(out)
    if acts.shape != (len(mask),):
        raise ValueError(
            f"{game_id}: agent {label!r} must return one action per row, shape ({len(mask)},); got shape {acts.shape}"
        )
    if np.issubdtype(acts.dtype, np.integer) and acts.dtype != np.bool_:
        acts = acts.astype(np.int64)
        ok = (acts >= 0) & (acts < mask.shape[1])
        ok[ok] = mask[np.flatnonzero(ok), acts[ok]]
    else:  # not integers: illegal, as the AEC arena counts them
        acts = np.zeros(len(mask), np.int64)
        ok = np.zeros(len(mask), bool)
    if not ok.all():
        np.add.at(illegal[:, j], deal_of[~ok], 1)
        acts[~ok] = mask[~ok].argmax(axis=1)
    return acts


def evaluate_batched(
    game_id: GameRef,
    agents: Iterable[Any],
    num_deals: int,
    seed: int = 0,
    options: dict[str, Any] | None = None,
    *,
    single_deal: bool = True,
    lineup: str = "alternate",
    names: Sequence[str] = (),
    batch_size: int = DEFAULT_BATCH,
    progress: bool = False,
    stop_when_decided: bool = False,
    alpha: float = 0.05,
    look_every: int = 100,
    bonferroni: bool = False,
) -> ArenaReport:
    """Compare batched agents over ``num_deals`` duplicate deals of ``game_id`` on the batched engine: the
    comparison of :func:`whist_env.evaluation.evaluate`, with the same deals and the same report (see the module
    docstring for what matches it).

        >>> report = evaluate_batched("humbug_v0", ["pretrained", "random"], num_deals=2000, seed=1)

    Args:
        game_id: the environment id (a game with a batched engine), or the game's spec (looked up once, here).
        agents: two or more batched agents, or names that have a batched form (:func:`batched_agent`).
        num_deals: deals to play; each is replayed once per rotation of the lineup.
        seed: the run's seed: the deals, and the random agents' generators.
        options: the game's options.
        single_deal: must be True (whole episodes are refused: see the module docstring).
        lineup: ``"alternate"`` or ``"one_vs_rest"``.
        names: labels for the report (default: the names given, else the agents' ``name``).
        batch_size: tables played at once (memory; the results do not depend on it for deterministic agents).
        progress: draw a progress bar on stderr.
        stop_when_decided: ``num_deals`` is a cap: stop when every pair is decided (as
            :func:`whist_env.evaluation.evaluate` does; :mod:`whist_env.evaluation.sequential`).
        alpha: with ``stop_when_decided``, the error rate per pair.
        look_every: with ``stop_when_decided``, deals between two looks.
        bonferroni: with ``stop_when_decided``, divide ``alpha`` by the number of pairs.

    Raises:
        OptionError: for an agent without a batched form (naming it), a bad option, lineup or count.
    """
    specs = list(agents)
    game = spec_of(game_id)
    config = ArenaConfig(game.game_id, ("?",) * len(specs), num_deals, seed, dict(options or {}), single_deal, lineup,
                         tuple(names), game)  # fmt: skip
    game_options = _checked_arena(config).options  # a bad configuration fails before any agent is built
    built = [batched_agent(s, game, game_options, np.random.default_rng([seed, 3, j])) for j, s in enumerate(specs)]
    # the report's agents by name: the AEC arena's config is only read here (its agents are never built)
    config = dataclasses.replace(config, agents=tuple(_label(s, a) for s, a in zip(specs, built, strict=True)))
    stop = stop_rule(config, alpha, look_every, bonferroni) if stop_when_decided else None
    results, wall = play_batched(config, built, batch_size=batch_size, progress=progress, stop=stop)
    report = summarise(config, results, wall, stop=stop)
    report.timing["engine"] = "batched"
    report.timing["batch_size"] = min(batch_size, len(results) * report.tables_per_deal)
    return report
