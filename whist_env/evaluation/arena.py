"""The arena: agents play seeded deals against each other, duplicated and with seats rotated.

How a comparison is run (:func:`evaluate`):

* **Deals.** Deal ``i`` of a run with seed ``s`` is drawn from ``numpy.random.default_rng([s, i])``:
  first the dealer, then the deck (``permutation(52)``). It is started with
  ``game.new_episode(rng, deck=deck, dealer=dealer)``, where ``rng = default_rng([s, i, 1])`` is the
  game's own generator for anything drawn later (a drawn trump card, later deals of a longer
  episode); the rules use it only at deal time, so every replay of deal ``i`` sees the same cards.
* **Duplicate replays and seat rotation.** Each deal is replayed once per *lineup*: the base
  lineup puts agent ``j % m`` at seat ``j`` (``m`` agents; "alternate"), or the first agent at seat 0
  and the second at every other seat ("one_vs_rest"); the replays are the distinct rotations of it,
  so every agent holds every hand of every deal and sits in every position relative to the dealer.
  Two agents at two seats: A–B then B–A. Classic whist: A holds seats {0, 2} (a partnership), B
  {1, 3}, then the other way round.
* **The unit compared** is one deal (each game's spec sets the options for that,
  ``GameSpec.single_deal``, and says what it is, ``GameSpec.unit``); ``single_deal=False`` plays the
  game's whole episode instead (the deal sequence is still shared by the replays).
* **Scores.** An agent's score on deal ``i`` is its mean return over the seats it held and the
  replays of that deal. Its reported mean and 95% interval are over these per-deal scores; the
  difference of two agents is over the per-deal differences of their scores (a paired, duplicate
  comparison; see :mod:`whist_env.evaluation.stats`). Win / draw / loss are counted per table (one
  replay of one deal): an agent wins a table when its mean return there is higher than every other
  agent's, draws when it ties for the highest.
* **Illegal actions** are counted per agent and must be zero; to finish the deal the lowest legal
  action is played in place of an illegal one (a report with any illegal action is not valid, and
  ``whist-eval`` exits with status 2).
* **Stopping when decided** (``stop`` in :func:`play_deals`, ``stop_when_decided`` in :func:`evaluate`,
  ``whist-eval --stop-when-decided``): ``num_deals`` becomes a cap; the deals are played in chunks of
  ``look_every`` in deal order, and the run stops after the first chunk at which every pair's anytime-valid
  interval (:mod:`whist_env.evaluation.sequential`, built on the game's ``deal_return_range``) excludes 0. The
  report then gives that interval per pair, beside the Student-t one (which is no longer exact after stopping).
* **Determinism.** The agents' generators are ``default_rng([s, i, 2, replay, seat])``, fresh per
  table; results do not depend on the number of worker processes. Only the timing differs between
  runs (it is kept apart in the report).
"""

from __future__ import annotations

import copy
import math
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from multiprocessing import get_context
from typing import Any, TextIO

import numpy as np

from whist_env.agents.base import Agent
from whist_env.errors import OptionError
from whist_env.evaluation.report import AgentResult, ArenaReport, PairResult
from whist_env.evaluation.sequential import StopRule, deal_bound, pair_alpha, sequential_result
from whist_env.evaluation.stats import mean_ci, paired_ci
from whist_env.evaluation.workers import one_blas_thread, sigint_ignored
from whist_env.record import GameRecord, record_of
from whist_env.registry import GameRef, ensure_spec, get_spec, spec_of
from whist_env.rules.core import TrickGame
from whist_env.spec import GameSpec
from whist_env.view import PlayerView

LINEUPS = ("alternate", "one_vs_rest")

AgentSpec = str | Agent | Callable[[], Agent]


def seat_assignments(num_players: int, num_agents: int, lineup: str = "alternate") -> list[tuple[int, ...]]:
    """Agent index per seat for every replay of a deal: the distinct rotations of the base lineup.

    Raises:
        OptionError: for an unknown lineup or one that leaves an agent without a seat.
    """
    n, m = num_players, num_agents
    if lineup == "alternate":
        if m > n:
            raise OptionError(f"{m} agents cannot all sit at a table of {n}; use at most {n}")
        base = [j % m for j in range(n)]
    elif lineup == "one_vs_rest":
        if m != 2:
            raise OptionError(f"lineup 'one_vs_rest' compares exactly two agents, got {m}")
        base = [0] + [1] * (n - 1)
    else:
        raise OptionError(f"unknown lineup {lineup!r}; known: {', '.join(LINEUPS)}")
    out: list[tuple[int, ...]] = []
    for r in range(n):
        rot = tuple(base[(s - r) % n] for s in range(n))
        if rot not in out:
            out.append(rot)
    return out


@dataclass(frozen=True)
class ArenaConfig:
    """What to play. Picklable when the agents are given by name (needed for ``workers > 1``).

    The game is looked up once, when the config is made (or given: ``spec``); everything below reads ``spec``, and
    worker processes receive it with the config, so a game added with ``whist_env.register`` plays there too.

    Attributes:
        game_id: the environment id.
        agents: agents by name (``"random"``, ``"heuristic"``, ``"model:<path>"``), as objects (copied
            for every seat), or as factories called once per seat.
        num_deals: deals to play (each replayed once per lineup rotation).
        seed: the run's seed.
        options: the game's options.
        single_deal: add the game's single-deal options (``GameSpec.single_deal``: one deal per episode).
        lineup: ``"alternate"`` or ``"one_vs_rest"`` (see :func:`seat_assignments`).
        names: labels of the agents in the report (default: their names, made unique).
        spec: the game's spec (None when made: the registered spec of ``game_id``).

    Raises:
        OptionError: for an unknown game, or a spec of another game than ``game_id``.
    """

    game_id: str
    agents: tuple[AgentSpec, ...]
    num_deals: int
    seed: int = 0
    options: dict[str, Any] = field(default_factory=dict)
    single_deal: bool = True
    lineup: str = "alternate"
    names: tuple[str, ...] = ()
    spec: GameSpec[Any, Any] = field(default=None, compare=False, repr=False)  # type: ignore[arg-type]

    def __post_init__(self) -> None:
        if self.spec is None:
            object.__setattr__(self, "spec", get_spec(self.game_id))
        elif self.spec.game_id != self.game_id:
            raise OptionError(f"ArenaConfig: game_id {self.game_id!r} but the spec of {self.spec.game_id!r}")

    def game_options(self) -> dict[str, Any]:
        """The options the game is built with."""
        opts = dict(self.options)
        if self.single_deal:
            for key, value in self.spec.single_deal.items():
                if key in opts and opts[key] != value:
                    raise OptionError(
                        f"{self.game_id}: option {key}={opts[key]!r} conflicts with single-deal evaluation "
                        f"({key}={value!r}); pass single_deal=False (whist-eval --full-episodes) to play whole episodes"
                    )
                opts[key] = value
        return opts

    def labels(self) -> list[str]:
        """Unique display names of the agents."""
        if self.names:
            if len(self.names) != len(self.agents):
                raise OptionError(f"give one name per agent: {len(self.agents)} agents, {len(self.names)} names")
            return list(self.names)
        raw = [_spec_name(a) for a in self.agents]
        out = []
        for i, name in enumerate(raw):
            out.append(f"{name}#{i + 1}" if raw.count(name) > 1 else name)
        return out


def _spec_name(spec: AgentSpec) -> str:
    if isinstance(spec, str):
        return spec
    return str(getattr(spec, "name", type(spec).__name__))


def build_agent(spec: AgentSpec, game_id: GameRef, options: dict[str, Any]) -> Agent:
    """A fresh agent for one seat from a name, an object (deep-copied) or a factory (``game_id``: the game's id or
    its spec)."""
    if isinstance(spec, str):
        from whist_env.agents.factory import make_agent

        return make_agent(spec, game_id, **options)
    if callable(getattr(spec, "act", None)):
        return copy.deepcopy(spec)  # type: ignore[return-value]
    if callable(spec):
        agent = spec()
        if not callable(getattr(agent, "act", None)):
            raise OptionError(f"an agent factory must return an object with act(view, rng), got {agent!r}")
        return agent
    raise OptionError(f"an agent is a name, an object with act(view, rng) or a factory; got {spec!r}")


@dataclass
class TableResult:
    """One replay of one deal.

    Attributes:
        assignment: agent index per seat.
        returns: each seat's return. # (n,)
        record: what was dealt and played (only when asked for: :meth:`Arena.records`).
    """

    assignment: tuple[int, ...]
    returns: tuple[float, ...]
    record: GameRecord | None = None


@dataclass
class DealResult:
    """Every replay of one deal, and the per-agent counters.

    Attributes:
        index: the deal's index in the run.
        tables: one per replay.
        decisions: decisions taken per agent. # (m,)
        illegal: illegal actions per agent. # (m,)
        think_s: seconds spent in ``act`` per agent. # (m,)
    """

    index: int
    tables: list[TableResult]
    decisions: list[int]
    illegal: list[int]
    think_s: list[float]

    def scores(self, num_agents: int) -> list[float]:
        """Each agent's mean return over its seats and the replays of this deal."""
        total = [0.0] * num_agents
        seats = [0] * num_agents
        for t in self.tables:
            for seat, j in enumerate(t.assignment):
                total[j] += t.returns[seat]
                seats[j] += 1
        return [total[j] / seats[j] if seats[j] else math.nan for j in range(num_agents)]


class Arena:
    """Plays the deals of one :class:`ArenaConfig` (in this process).

    Agents are built once per (agent, seat) and reused across deals; an agent that keeps memory must
    key it by seat and deal (see ``HumbugHeuristic``).
    """

    def __init__(self, config: ArenaConfig) -> None:
        self.config = config
        self.options = config.game_options()
        spec = config.spec
        self.game: TrickGame = spec.make_rules(**self.options)
        n = self.game.num_players
        m = len(config.agents)
        if m < 2:
            raise OptionError(f"an arena compares at least two agents, got {m}")
        self.assignments = seat_assignments(n, m, config.lineup)
        # Partners win or lose together: each side must be held by one agent in every replay.
        sides = spec.sides(n)
        if any(a[s] != a[t] for a in self.assignments for s in range(n) for t in range(n) if sides[s] == sides[t]):
            raise OptionError(f"{config.game_id} is played in partnerships: use lineup 'alternate' with two agents")
        self._agents: dict[tuple[int, int], Agent] = {}

    def agent(self, index: int, seat: int) -> Agent:
        """The agent object of agent ``index`` at ``seat``."""
        key = (index, seat)
        if key not in self._agents:
            self._agents[key] = build_agent(self.config.agents[index], self.config.spec, self.options)
        return self._agents[key]

    def deal(self, index: int) -> tuple[int, list[int]]:
        """Dealer and deck of deal ``index``."""
        rng = np.random.default_rng([self.config.seed, index])
        dealer = int(rng.integers(self.game.num_players))
        return dealer, rng.permutation(52).tolist()

    def records(self, index: int) -> list[GameRecord]:
        """The game record of every replay of deal ``index`` (to study a deal, or attach it to a bug report)."""
        return [t.record for t in self.play_deal(index, record=True).tables if t.record is not None]

    def play_deal(self, index: int, record: bool = False) -> DealResult:
        """Play every replay of deal ``index`` (keeping each table's :class:`GameRecord` when ``record``)."""
        game = self.game
        m = len(self.config.agents)
        dealer, deck = self.deal(index)
        decisions, illegal, think = [0] * m, [0] * m, [0.0] * m
        tables = []
        for replay, assignment in enumerate(self.assignments):
            game_rng = np.random.default_rng([self.config.seed, index, 1])
            recorder = record_of(game, game_rng, self.options, deck, dealer) if record else None
            state = recorder.state if recorder else game.new_episode(game_rng, deck=deck, dealer=dealer)
            seat_rngs = [np.random.default_rng([self.config.seed, index, 2, replay, s]) for s in range(len(assignment))]
            seat_agents = [self.agent(j, s) for s, j in enumerate(assignment)]
            while not state.done:
                seat = state.to_act
                view = game.view(state, seat)
                j = assignment[seat]
                start = time.perf_counter()
                action = seat_agents[seat].act(view, seat_rngs[seat])
                think[j] += time.perf_counter() - start
                decisions[j] += 1
                if not _is_legal(action, view):
                    illegal[j] += 1
                    action = (view.legal & -view.legal).bit_length() - 1
                if recorder:
                    recorder.step(int(action))
                else:
                    game.step(state, int(action), game_rng)
            returns = tuple(float(r) for r in state.returns)
            tables.append(TableResult(tuple(assignment), returns, recorder.record() if recorder else None))
        return DealResult(index, tables, decisions, illegal, think)


def _is_legal(action: Any, view: PlayerView) -> bool:
    if isinstance(action, bool) or not isinstance(action, (int, np.integer)):
        return False
    a = int(action)
    return a >= 0 and bool((view.legal >> a) & 1)


def _init_worker(spec: GameSpec[Any, Any] | None = None) -> None:
    """Initialiser of the evaluation workers: one torch thread each (model agents run small networks, and
    workers with torch's default threads slow one another down on few cores), and Ctrl-C left to the parent,
    which stops the pool (no traceback from every worker). A spawned worker starts with the built-in games only:
    the game played (``spec``) is added to its registry when it is not one of them (a game added with
    ``whist_env.register``), for anything that looks it up by id there."""
    import os
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.environ["OMP_NUM_THREADS"] = "1"  # read by torch when the first model agent imports it
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(1)
    if spec is not None:
        ensure_spec(spec)


# With a stop rule, the most deals a worker plays at a time (a run stopped at a look waits for the pieces started)
STOP_PIECE = 25


def stop_chunks(num_deals: int, look_every: int) -> list[list[int]]:
    """The deals ``0..num_deals - 1`` in pieces of at most :data:`STOP_PIECE`, none across a look (every
    ``look_every`` deals)."""
    looks = [(i, min(num_deals, i + look_every)) for i in range(0, num_deals, look_every)]
    return [list(range(j, min(end, j + STOP_PIECE))) for i, end in looks for j in range(i, end, STOP_PIECE)]


def _run_chunk(config: ArenaConfig, indices: Sequence[int]) -> list[DealResult]:
    arena = Arena(config)
    return [arena.play_deal(i) for i in indices]


def progress_bar(total: int, label: str, enabled: bool = True, stream: TextIO | None = None) -> Any:
    """A progress bar of ``total`` deals on stderr (tqdm's: its rate and time left); nothing when not ``enabled``.
    Use it as a context manager (or close it), so that its last line ends."""
    from tqdm import tqdm  # imported here: whist_env's import stays light

    return tqdm(total=total, desc=label, unit=" deals", disable=not enabled, file=stream or sys.stderr)


def stop_rule(config: ArenaConfig, alpha: float = 0.05, look_every: int = 100, bonferroni: bool = False) -> StopRule:
    """The :class:`~whist_env.evaluation.sequential.StopRule` of a run of ``config`` that stops when decided: the
    bound from the game's ``deal_return_range`` for the run's options, ``alpha`` per pair (divided by the number of
    pairs with ``bonferroni``).

    Raises:
        OptionError: for whole episodes (no per-deal bound), a game that declares no range, or a bad ``alpha``.
    """
    if not config.single_deal:
        raise OptionError(
            "stopping when decided needs single deals (each game's per-deal bound): drop --full-episodes "
            "(single_deal=False) or play a fixed number of deals"
        )
    m = len(config.agents)
    bound = deal_bound(config.spec.make_rules(**config.game_options()))
    return StopRule(bound, pair_alpha(alpha, m * (m - 1) // 2, bonferroni), look_every)


def decided(rule: StopRule, scores: Sequence[Sequence[float]]) -> bool:
    """Whether every pair's anytime-valid interval excludes 0, from the per-deal scores so far (``(deals, m)``)."""
    per_deal = np.asarray(scores, np.float64)
    m = per_deal.shape[1]
    return all(rule.decided(per_deal[:, a] - per_deal[:, b]) for a in range(m) for b in range(a + 1, m))


def play_deals(
    config: ArenaConfig,
    workers: int = 1,
    progress: bool = False,
    chunk: int | None = None,
    stop: StopRule | None = None,
) -> tuple[list[DealResult], float]:
    """Play every deal of ``config`` (in ``workers`` processes) and return the results in deal order.

    With ``stop``, ``config.num_deals`` is a cap: the run looks every ``stop.look_every`` deals and ends at the first
    look at which :func:`decided` holds (the looks, hence the deals played, do not depend on ``workers``). The deals
    between two looks are played in pieces of at most :data:`STOP_PIECE`, so that the pieces workers had started past
    the look that stops the run (dropped) cost little.

    Returns:
        The results, and the wall time in seconds.
    """
    if config.num_deals < 1:
        raise OptionError(f"num_deals must be at least 1, got {config.num_deals}")
    if workers < 1:
        raise OptionError(f"workers must be at least 1, got {workers}")
    n = config.num_deals
    if stop:
        chunks = stop_chunks(n, stop.look_every)
    else:
        size = chunk or max(1, min(50, math.ceil(n / (4 * workers))))
        chunks = [list(range(i, min(n, i + size))) for i in range(0, n, size)]
    bar = progress_bar(n, config.game_id, enabled=progress)
    start = time.perf_counter()
    results: list[DealResult] = []
    with bar:
        _play_chunks(config, workers, chunks, results, bar, stop)
    results.sort(key=lambda r: r.index)
    return results, time.perf_counter() - start


def _play_chunks(
    config: ArenaConfig,
    workers: int,
    chunks: list[list[int]],
    results: list[DealResult],
    bar: Any,
    stop: StopRule | None = None,
) -> None:
    """:func:`play_deals`' loop: the chunks in this process or in ``workers`` processes, their results appended in
    chunk order, until ``stop`` finds every pair decided."""
    m = len(config.agents)
    scores: list[list[float]] = []

    def done(part: list[DealResult]) -> bool:
        results.extend(part)
        bar.update(len(part))
        if stop is None:
            return False
        scores.extend(r.scores(m) for r in part)
        return len(scores) % stop.look_every == 0 and decided(stop, scores)

    if workers == 1:
        arena = Arena(config)
        for c in chunks:
            if done([arena.play_deal(i) for i in c]):
                return
    else:
        Arena(config)  # fail early on bad options, in this process
        with ProcessPoolExecutor(
            max_workers=workers, mp_context=get_context("spawn"), initializer=_init_worker, initargs=(config.spec,)
        ) as pool:
            # the workers start now and inherit both: Ctrl-C stays the parent's, and numpy has one thread each
            with sigint_ignored(), one_blas_thread():
                futures = [pool.submit(_run_chunk, config, c) for c in chunks]
            try:
                for f in futures:  # in chunk order: a stop looks at deals 0..t, whatever finished first
                    if done(f.result()):
                        pool.shutdown(wait=True, cancel_futures=True)
                        return
            except BaseException:
                pool.shutdown(wait=True, cancel_futures=True)  # Ctrl-C: the chunks not started are dropped
                raise


def unit_text(config: ArenaConfig) -> str:
    """What one sample of the comparison is, in words, for the options the run used (the rules' ``deal_unit``)."""
    if not config.single_deal:
        return "one whole episode"
    spec = config.spec
    return spec.make_rules(**config.game_options()).deal_unit() or spec.unit


def summarise(
    config: ArenaConfig,
    results: Sequence[DealResult],
    wall_s: float,
    workers: int = 1,
    stop: StopRule | None = None,
) -> ArenaReport:
    """The report of a run from its per-deal results (see the module docstring for the method); with ``stop``, each
    pair also gets its anytime-valid interval (:class:`~whist_env.evaluation.sequential.SequentialResult`)."""
    labels = config.labels()
    m = len(labels)
    per_deal = [r.scores(m) for r in results]
    agents = []
    tables = [t for r in results for t in r.tables]
    for j, label in enumerate(labels):
        win = draw = loss = 0
        for t in tables:
            mine, others = _table_scores(t, j, m)
            best_other = max(others)
            if mine > best_other:
                win += 1
            elif mine == best_other:
                draw += 1
            else:
                loss += 1
        decisions = sum(r.decisions[j] for r in results)
        think = sum(r.think_s[j] for r in results)
        agents.append(
            AgentResult(
                name=label,
                spec=_spec_name(config.agents[j]),
                mean=mean_ci([s[j] for s in per_deal]),
                win=win / len(tables),
                draw=draw / len(tables),
                loss=loss / len(tables),
                illegal=sum(r.illegal[j] for r in results),
                decisions=decisions,
                ms_per_decision=1000 * think / decisions if decisions else 0.0,
            )
        )
    pairs = []
    for a in range(m):
        for b in range(a + 1, m):
            ci = paired_ci([s[a] for s in per_deal], [s[b] for s in per_deal])
            seq = None
            if stop is not None:
                seq = sequential_result(stop, [s[a] - s[b] for s in per_deal], config.num_deals)
            pairs.append(PairResult(labels[a], labels[b], ci, seq))
    total_decisions = sum(sum(r.decisions) for r in results)
    return ArenaReport(
        game_id=config.game_id,
        options=config.game_options(),
        unit=unit_text(config),
        seed=config.seed,
        num_deals=len(results),
        tables_per_deal=len(results[0].tables) if results else 0,
        lineup=config.lineup,
        agents=agents,
        pairs=pairs,
        timing={
            "wall_s": round(wall_s, 3),
            "workers": workers,
            "deals_per_s": round(len(results) / wall_s, 2) if wall_s > 0 else None,
            "decisions_per_s": round(total_decisions / wall_s, 1) if wall_s > 0 else None,
        },
        stop=None
        if stop is None
        else {
            "alpha": stop.alpha,
            "look_every": stop.look_every,
            "bound": stop.bound,
            "max_deals": config.num_deals,
        },  # fmt: skip
    )


def worst_deals(results: Sequence[DealResult], count: int, num_agents: int, agent: int = 0) -> list[tuple[int, float]]:
    """The ``count`` deals where agent ``agent`` did worst, as ``(deal index, margin)``, worst first.

    The margin of a deal is the agent's mean return over its replays minus the best other agent's (what the
    duplicate comparison measures), so a deal that was bad for every agent alike does not count as bad.
    :meth:`Arena.records` replays a deal with the game record of each table, to study it or
    attach it to a bug report.
    """
    margins = []
    for r in results:
        scores = r.scores(num_agents)
        margins.append((scores[agent] - max(s for j, s in enumerate(scores) if j != agent), r.index))
    margins.sort()
    return [(index, margin) for margin, index in margins[:count]]


def _table_scores(t: TableResult, j: int, m: int) -> tuple[float, list[float]]:
    """Agent ``j``'s mean return at one table, and those of the other agents seated there."""
    total = [0.0] * m
    seats = [0] * m
    for seat, a in enumerate(t.assignment):
        total[a] += t.returns[seat]
        seats[a] += 1
    others = [total[a] / seats[a] for a in range(m) if a != j and seats[a]]
    return total[j] / seats[j], others


def evaluate(
    game_id: GameRef,
    agents: Iterable[AgentSpec],
    num_deals: int,
    seed: int = 0,
    options: dict[str, Any] | None = None,
    *,
    workers: int = 1,
    single_deal: bool = True,
    lineup: str = "alternate",
    names: Sequence[str] = (),
    progress: bool = False,
    stop_when_decided: bool = False,
    alpha: float = 0.05,
    look_every: int = 100,
    bonferroni: bool = False,
) -> ArenaReport:
    """Compare agents over ``num_deals`` duplicate deals of ``game_id`` (see the module docstring).

        >>> report = evaluate("humbug_v0", ["heuristic", "random"], num_deals=200, seed=1)
        >>> print(report.to_markdown())

    Args:
        game_id: the environment id, or the game's spec (looked up once, here).
        agents: two or more agents (names, objects or factories).
        num_deals: deals to play; each is replayed once per rotation of the lineup.
        seed: the run's seed: the same seed gives the same report (timing aside).
        options: the game's options.
        workers: processes to play in (results do not depend on it).
        single_deal: make each episode one deal (the game's ``GameSpec.single_deal``).
        lineup: ``"alternate"`` or ``"one_vs_rest"``.
        names: labels for the report.
        progress: draw a progress bar on stderr.
        stop_when_decided: ``num_deals`` is a cap: stop after the first ``look_every`` deals at which every pair's
            anytime-valid interval excludes 0 (:mod:`whist_env.evaluation.sequential`).
        alpha: with ``stop_when_decided``, the error rate per pair (the chance that an even pair gets a verdict).
        look_every: with ``stop_when_decided``, deals between two looks.
        bonferroni: with ``stop_when_decided``, divide ``alpha`` by the number of pairs (then ``alpha`` bounds the
            chance of any false verdict in the run).
    """
    spec = spec_of(game_id)
    config = ArenaConfig(
        spec.game_id, tuple(agents), num_deals, seed, dict(options or {}), single_deal, lineup, tuple(names), spec
    )
    stop = stop_rule(config, alpha, look_every, bonferroni) if stop_when_decided else None
    results, wall = play_deals(config, workers=workers, progress=progress, stop=stop)
    return summarise(config, results, wall, workers, stop)
