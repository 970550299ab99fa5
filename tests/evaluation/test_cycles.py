"""Cycles in a match table (whist_env.evaluation.cycles): α-Rank spreads its mass evenly over rock-paper-scissors and
puts it on the top agent of a transitive table; a cycle is reported only when every edge is decided; the ladder
report carries both."""

from __future__ import annotations

import numpy as np
import pytest

from whist_env.evaluation.cycles import alpha_rank, analyse, decided_cycles, fixation
from whist_env.evaluation.ladder import ladder

PAIRS3 = [(0, 1), (0, 2), (1, 2)]


def noisy_draws(means: np.ndarray, sd: float, seed: int = 0) -> np.ndarray:
    """Bootstrap-like draws of the match means: ``(400, P)``."""
    return means + np.random.default_rng(seed).normal(0.0, sd, (400, len(means)))


def test_rock_paper_scissors_gets_uniform_mass_and_its_cycle() -> None:
    # rock − paper = −1 (paper wins), rock − scissors = +1, paper − scissors = −1 (scissors wins)
    means = np.array([-1.0, 1.0, -1.0])
    report = analyse(["rock", "paper", "scissors"], PAIRS3, means, means - 0.3, means + 0.3, noisy_draws(means, 0.1))
    np.testing.assert_allclose(report.mass, 1 / 3, atol=1e-9)
    assert (report.low < 1 / 3 + 1e-9).all() and (report.high > 1 / 3 - 1e-9).all()
    assert len(report.cycles) == 1
    cycle = report.cycles[0]
    assert cycle[0] == cycle[-1] and sorted(cycle[:-1]) == ["paper", "rock", "scissors"]
    for winner, loser in zip(cycle, cycle[1:], strict=False):  # each step of the cycle is a decided win
        assert (winner, loser) in {("paper", "rock"), ("rock", "scissors"), ("scissors", "paper")}
    assert "cycle (every edge's interval excludes 0)" in report.to_markdown()


def test_a_transitive_table_puts_the_mass_on_the_top_agent_and_has_no_cycle() -> None:
    names = ["d", "b", "a", "c"]  # strengths a > b > c > d, given out of order
    strength = {"a": 3.0, "b": 2.0, "c": 1.0, "d": 0.0}
    pairs = [(i, j) for i in range(4) for j in range(i + 1, 4)]
    means = np.array([0.4 * (strength[names[i]] - strength[names[j]]) for i, j in pairs])
    report = analyse(names, pairs, means, means - 0.1, means + 0.1, noisy_draws(means, 0.05))
    assert report.mass[names.index("a")] > 0.99 and report.low[names.index("a")] > 0.95
    assert report.cycles == () and "no cycle" in report.to_markdown()


def test_a_cycle_with_an_undecided_edge_is_not_reported_but_shows_in_the_mass() -> None:
    means = np.array([-1.0, 1.0, -1.0])
    lows, highs = means - 0.3, means + 0.3
    lows[1], highs[1] = -0.5, 2.5  # rock − scissors: its interval holds 0
    report = analyse(["rock", "paper", "scissors"], PAIRS3, means, lows, highs)
    assert report.cycles == ()
    np.testing.assert_allclose(report.mass, 1 / 3, atol=1e-9)  # the mass reads the means, not the verdicts
    assert np.isnan(report.low).all() and report.bootstrap == 0


def test_a_longer_cycle_without_a_triangle_is_found() -> None:
    names = list("ABCD")
    beats = np.zeros((4, 4), bool)
    for a, b in [(0, 1), (1, 2), (2, 3), (3, 0)]:  # A > B > C > D > A, the diagonals undecided
        beats[a, b] = True
    assert decided_cycles(names, beats) == [["A", "B", "C", "D", "A"]]
    beats[3, 0] = False
    assert decided_cycles(names, beats) == []


def test_alpha_rank_is_the_stationary_distribution_of_its_chain() -> None:
    """The mass from the linear solve equals the long-run visits of the chain built by hand from ``fixation``."""
    rng = np.random.default_rng(4)
    upper = np.triu(rng.normal(0, 1, (4, 4)), 1)
    table = upper - upper.T
    alpha, m, scale = 2.0, 10, 1.5
    k = 4
    chain = np.zeros((k, k))
    for s in range(k):
        for r in range(k):
            if r != s:
                chain[s, r] = fixation(np.array(table[r, s] / scale), alpha, m) / (k - 1)
        chain[s, s] = 1 - chain[s].sum()
    visits = np.linalg.matrix_power(chain, 4000)[0]
    np.testing.assert_allclose(alpha_rank(table, alpha, m, scale), visits, atol=1e-9)
    # the fixation probability: 1/m when even, the closed form otherwise, no overflow far out
    assert fixation(np.array(0.0), 1.0, 10) == pytest.approx(0.1)
    assert fixation(np.array(0.3), 2.0, 10) == pytest.approx((1 - np.exp(-0.6)) / (1 - np.exp(-6.0)))
    assert fixation(np.array(-0.3), 2.0, 10) == pytest.approx((np.exp(0.6) - 1) / (np.exp(6.0) - 1))
    assert np.isfinite(fixation(np.array([-500.0, 500.0]), 10.0, 50)).all()


def test_the_ladder_reports_the_mass_and_no_cycle_for_a_transitive_set() -> None:
    report = ladder("german_whist_v0", ["random", "heuristic"], 40, seed=0, bootstrap=50, engine="aec")
    assert report.cycles is not None and report.cycles.cycles == ()
    assert report.cycles.mass[report.cycles.names.index("heuristic")] > 0.9
    assert "α-Rank" in report.to_markdown() and report.to_dict()["cycles"]["alpha"] == report.cycles.alpha


# Found by a mutation audit (small bugs planted one at a time; these are the ones no test caught).
PAIRS3 = [(0, 1), (0, 2), (1, 2)]


def test_an_interval_that_touches_zero_is_no_edge_of_a_cycle() -> None:
    means = np.array([-1.0, 1.0, -1.0])  # rock-paper-scissors
    lows, highs = means - 0.3, means + 0.3
    assert analyse(["r", "p", "s"], PAIRS3, means, lows, highs).cycles != ()
    lows[1] = 0.0
    assert analyse(["r", "p", "s"], PAIRS3, means, lows, highs).cycles == ()


def test_the_masses_do_not_depend_on_the_games_unit() -> None:
    """The table is scaled by its largest mean before α-Rank: the same agents in a unit ten times larger get the same
    masses."""
    means = np.array([0.4, 0.8, 0.4])
    one = analyse(list("abc"), PAIRS3, means, means - 0.1, means + 0.1)
    ten = analyse(list("abc"), PAIRS3, 10 * means, 10 * means - 1, 10 * means + 1)
    assert one.scale == 0.8 and ten.scale == 8.0
    np.testing.assert_allclose(one.mass, ten.mass)


def test_the_mass_intervals_are_the_bootstraps_95_percent_ones() -> None:
    means = np.array([0.4, 0.8, 0.4])
    draws = means + np.random.default_rng(0).normal(0, 0.3, (400, 3))
    report = analyse(list("abc"), PAIRS3, means, means - 1, means + 1, draws)
    tables = np.zeros((400, 3, 3))
    rows, cols = np.array([0, 0, 1]), np.array([1, 2, 2])
    tables[:, rows, cols], tables[:, cols, rows] = draws, -draws
    masses = alpha_rank(tables, scale=0.8)
    np.testing.assert_allclose(report.low, np.percentile(masses, 2.5, axis=0))
    np.testing.assert_allclose(report.high, np.percentile(masses, 97.5, axis=0))
