"""Cycles in a match table: α-Rank's mass per agent, and the cycles every edge of which is decided.

Least-squares ratings (:mod:`whist_env.evaluation.ladder`) put the agents on a line: if A beats B, B beats C and
C beats A, the line cannot show it, and the fit's residuals are the only trace. This module reads the same match
table two other ways.

**The table.** Every match of a ladder or a tournament is two agents on the same duplicate deals, even in games of
more than two sides (Oh Hell seats one agent against copies of the other), so the table is always pairwise:
``A[a, b]`` is a's mean per-deal gain over b, and ``A[b, a] = -A[a, b]``. That makes it a symmetric two-player
zero-sum game, and no multi-sided method (maximal lotteries over many sides) is needed.

**α-Rank** (Omidshafiei, Papadimitriou, Piliouras et al., *α-Rank: Multi-agent evaluation by evolution*,
Scientific Reports 2019), single population. A population of ``m`` copies of one agent ``s`` is invaded by one
mutant ``r`` (chosen uniformly among the ``k - 1`` others); the mutant takes over with the fixation probability of
the Fermi process, ``rho = (1 - exp(-alpha x)) / (1 - exp(-m alpha x))`` with ``x = A[r, s] / scale`` the mutant's
advantage (``rho = 1/m`` when ``x = 0``). The chain moves from ``s`` to ``r`` with probability ``rho / (k - 1)``;
its stationary distribution is each agent's *mass*: the share of time the evolving population spends on it. A
transitive table sends almost all mass to the best agent; a rock-paper-scissors table spreads it evenly over the
cycle. ``scale`` is the largest ``|A[a, b]|`` of the observed table (so ``alpha`` is free of the game's unit: a
Humbug table in tricks and a German Whist table in ±1 read alike); ``alpha`` (default 10) sets how sharply a
better mutant wins, ``m`` (default 50) the population. The mass comes with 95% intervals from the ladder's bootstrap
draws of the match means (the same draws as the ratings' intervals), with ``scale`` held at the observed value.

**Cycles** are reported only on evidence: an edge ``a -> b`` (a beats b) exists only when the match's interval
(the paired 95% interval, or the anytime-valid one of a match that stopped when decided) lies above 0. A cycle is a
strongly connected group of three or more agents in that graph of decided edges, shown by one shortest cycle
through it (``A > B > C > A``). Undecided pairs are no edges: noise never makes a cycle.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

ALPHA_RANK_ALPHA = 10.0  # selection intensity, on the table divided by its largest |entry|
ALPHA_RANK_POPULATION = 50  # m: copies of the resident agent


def fixation(advantage: np.ndarray, alpha: float, population: int) -> np.ndarray:
    """The Fermi process's probability that one mutant with ``advantage`` (its payoff minus the resident's, scaled)
    takes over a population of ``population``: ``(1 - e^(-alpha x)) / (1 - e^(-m alpha x))``, ``1/m`` at ``x = 0``,
    computed without overflow for large ``|alpha x|``."""
    x = alpha * np.asarray(advantage, np.float64)
    m = population
    y = np.abs(x)
    safe = np.where(y > 0, y, 1.0)
    favoured = np.expm1(-safe) / np.expm1(-m * safe)  # (1 - e^-y) / (1 - e^-my): the mutant is better by y
    # worse by y: (e^y - 1) / (e^my - 1) = e^(-(m-1)y) (1 - e^-y) / (1 - e^-my)
    out = np.where(x > 0, favoured, np.exp(-(m - 1) * safe) * favoured)
    return np.where(y > 0, out, 1.0 / m)


def alpha_rank(
    table: np.ndarray, alpha: float = ALPHA_RANK_ALPHA, population: int = ALPHA_RANK_POPULATION, scale: float = 1.0
) -> np.ndarray:
    """α-Rank's mass per agent for the antisymmetric ``table`` (``(..., k, k)``: ``table[a, b]`` is a's mean gain
    over b) divided by ``scale`` (module docstring); leading axes are independent tables (bootstrap draws).

    Returns:
        ``(..., k)``: the stationary distribution of the single-population chain.

    Raises:
        ValueError: for a table that is not square, fewer than two agents, or a bad ``alpha``, ``population`` or
            ``scale``.
    """
    a = np.asarray(table, np.float64)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2] or a.shape[-1] < 2:
        raise ValueError(f"the table must be (..., k, k) with k >= 2, got shape {a.shape}")
    if not alpha > 0 or isinstance(population, bool) or not isinstance(population, int) or population < 2:
        raise ValueError(f"alpha must be > 0 and population an int >= 2, got {alpha!r} and {population!r}")
    if not scale > 0:
        raise ValueError(f"scale must be > 0, got {scale!r}")
    k = a.shape[-1]
    # chain[s, r]: resident s invaded by r (a[r, s] is the mutant's gain over the resident)
    chain = fixation(np.swapaxes(a, -1, -2) / scale, alpha, population) / (k - 1)
    eye = np.eye(k, dtype=bool)
    chain = np.where(eye, 0.0, chain)
    chain = chain + np.eye(k) * (1.0 - chain.sum(axis=-1, keepdims=True))
    # the stationary pi solves pi (C - I) = 0, sum(pi) = 1: replace one equation by the sum
    system = np.swapaxes(chain, -1, -2) - np.eye(k)
    system[..., -1, :] = 1.0
    rhs = np.zeros((*a.shape[:-2], k))
    rhs[..., -1] = 1.0
    pi = np.linalg.solve(system, rhs[..., None])[..., 0]
    pi = np.clip(pi, 0.0, None)
    return pi / pi.sum(axis=-1, keepdims=True)


def decided_cycles(names: Sequence[str], beats: np.ndarray) -> list[list[str]]:
    """The cycles of the graph of decided edges: one shortest cycle through each strongly connected group of three
    or more agents, as names from the cycle's first agent back to it (``["A", "B", "C", "A"]``: A beats B ...).

    Args:
        names: the agents' names, ``k``.
        beats: ``(k, k)`` bool: ``beats[a, b]`` when a's interval against b lies above 0.
    """
    k = len(names)
    edges = np.asarray(beats, bool)
    reach = edges.copy()
    for via in range(k):  # transitive closure (Warshall): k is a ladder's or a class's size
        reach |= reach[:, via : via + 1] & reach[via : via + 1, :]
    seen: set[int] = set()
    cycles = []
    for start in range(k):
        if start in seen or not reach[start, start]:
            continue
        group = [j for j in range(k) if reach[start, j] and reach[j, start]]
        seen.update(group)
        if len(group) < 3:  # two agents cannot both beat each other with intervals clear of 0
            continue
        cycles.append([names[j] for j in _shortest_cycle(edges, group)])
    return cycles


def _shortest_cycle(edges: np.ndarray, group: Sequence[int]) -> list[int]:
    """A shortest cycle within ``group`` (breadth-first from each member), as a closed list of indices."""
    best: list[int] | None = None
    members = set(group)
    for start in group:
        parent = {start: -1}
        frontier = [start]
        found = None
        while frontier and found is None:
            nxt = []
            for u in frontier:
                for v in map(int, np.flatnonzero(edges[u])):
                    if v == start:
                        found = u
                        break
                    if v in members and v not in parent:
                        parent[v] = u
                        nxt.append(v)
                if found is not None:
                    break
            frontier = nxt
        if found is None:
            continue
        path = [found]
        while path[-1] != start:
            path.append(parent[path[-1]])
        path.reverse()
        if best is None or len(path) < len(best) - 1:
            best = [*path, start]
    assert best is not None, "a strongly connected group has a cycle"
    return best


@dataclass(frozen=True)
class CycleReport:
    """α-Rank's mass per agent with 95% bootstrap intervals, and the decided cycles.

    Attributes:
        names: the agents, in the order of the arrays.
        mass: α-Rank's mass of each agent. # (k,)
        low: the 2.5% percentile of the bootstrap masses. # (k,)
        high: the 97.5% percentile. # (k,)
        cycles: the decided cycles (:func:`decided_cycles`), empty when there is none.
        alpha: α-Rank's selection intensity.
        population: α-Rank's ``m``.
        scale: what the table was divided by (its largest ``|entry|``).
        bootstrap: the bootstrap draws behind ``low`` and ``high`` (0: none, they are NaN).
    """

    names: tuple[str, ...]
    mass: np.ndarray
    low: np.ndarray
    high: np.ndarray
    cycles: tuple[tuple[str, ...], ...]
    alpha: float
    population: int
    scale: float
    bootstrap: int

    def to_markdown(self) -> str:
        """The mass table, its parameters, and the cycles (or the statement that there is none)."""
        lines = [
            f"α-Rank (single population, alpha {self.alpha:g} on the table divided by {self.scale:.3g}, "
            f"population {self.population}; 95% intervals from {self.bootstrap} bootstrap draws):",
            "",
            "| agent | α-Rank mass (95% CI) |",
            "|---|---|",
        ]
        for j in np.argsort(-self.mass, kind="stable"):
            lines.append(f"| {self.names[j]} | {self.mass[j]:.3f} [{self.low[j]:.3f}, {self.high[j]:.3f}] |")
        lines.append("")
        if self.cycles:
            for c in self.cycles:
                lines.append(f"- cycle (every edge's interval excludes 0): {' > '.join(c)}")
        else:
            lines.append("- no cycle: no loop of matches whose every interval excludes 0")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready dict."""

        def num(x: float) -> float | None:
            return None if not math.isfinite(x) else round(float(x), 6)

        return {
            "method": "alpha-rank, single population (Omidshafiei et al. 2019)",
            "alpha": self.alpha,
            "population": self.population,
            "scale": num(self.scale),
            "bootstrap": self.bootstrap,
            "mass": {
                n: {"mass": num(self.mass[j]), "low": num(self.low[j]), "high": num(self.high[j])}
                for j, n in enumerate(self.names)
            },
            "cycles": [list(c) for c in self.cycles],
        }


def analyse(
    names: Sequence[str],
    pairs: Sequence[tuple[int, int]],
    means: np.ndarray,
    lows: np.ndarray,
    highs: np.ndarray,
    draws: np.ndarray | None = None,
    alpha: float = ALPHA_RANK_ALPHA,
    population: int = ALPHA_RANK_POPULATION,
) -> CycleReport:
    """α-Rank and the decided cycles of a round robin.

    Args:
        names: the ``k`` agents.
        pairs: the ``P`` matches ``(a, b)`` (indices into ``names``); every pair of agents once.
        means: ``(P,)``: each match's mean per-deal ``a - b``.
        lows: ``(P,)``: the lower end of each match's interval.
        highs: ``(P,)``: its upper end.
        draws: ``(B, P)``: bootstrap draws of the means (:func:`whist_env.evaluation.ladder.resampled_means`), or
            None (no intervals).
        alpha: α-Rank's selection intensity.
        population: α-Rank's ``m``.
    """
    k = len(names)
    if len(pairs) != k * (k - 1) // 2 or len({tuple(sorted(p)) for p in pairs}) != len(pairs):
        raise ValueError(f"α-Rank needs a full round robin: every pair of the {k} agents once, got {len(pairs)} pairs")
    rows = np.array([p[0] for p in pairs])
    cols = np.array([p[1] for p in pairs])

    def table_of(m: np.ndarray) -> np.ndarray:  # (..., P) -> (..., k, k)
        out = np.zeros((*m.shape[:-1], k, k))
        out[..., rows, cols] = m
        out[..., cols, rows] = -m
        return out

    observed = np.asarray(means, np.float64)
    scale = float(np.abs(observed).max()) or 1.0
    mass = alpha_rank(table_of(observed), alpha, population, scale)
    if draws is not None and len(draws):
        boot = alpha_rank(table_of(np.asarray(draws, np.float64)), alpha, population, scale)
        low, high = np.percentile(boot, [2.5, 97.5], axis=0)
    else:
        low = high = np.full(k, np.nan)
    beats = np.zeros((k, k), bool)
    beats[rows, cols] = np.asarray(lows) > 0
    beats[cols, rows] = np.asarray(highs) < 0
    cycles = tuple(tuple(c) for c in decided_cycles(names, beats))
    return CycleReport(
        tuple(names), mass, low, high, cycles, alpha, population, scale, 0 if draws is None else len(draws)
    )
