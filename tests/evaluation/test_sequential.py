"""Matches that stop when decided (whist_env.evaluation.sequential): the confidence sequence covers the true mean at
every deal up to the cap in at least 95% of synthetic matches, gives a verdict in at most 5% of even ones, and
reaches a verdict quickly when the gap is large; the games' per-deal ranges hold; the front ends stop a lopsided
match early and play an even one to its cap."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from whist_env.cli.eval import main
from whist_env.errors import OptionError
from whist_env.evaluation import evaluate
from whist_env.evaluation.ladder import fit_ratings, ladder
from whist_env.evaluation.sequential import StopRule, confidence_sequence, deal_bound, pair_alpha
from whist_env.evaluation.stats import t_quantile_975
from whist_env.registry import get_spec
from whist_env.testing import case_id, option_cases, play_random_episode

MATCHES = 1000  # synthetic matches per case
CAP = 2000  # deals per synthetic match
LOOK = 100  # deals between two looks, as the arena plays its chunks
ALPHA = 0.05
# a miss rate of exactly ALPHA over MATCHES matches stays below this with probability ~0.999 (3 binomial sd)
LIMIT = ALPHA + 3 * np.sqrt(ALPHA * (1 - ALPHA) / MATCHES)


def two_point(rng: np.random.Generator, high: float, low: float, p_high: float) -> np.ndarray:
    """``(MATCHES, CAP)`` deals worth ``high`` with probability ``p_high``, else ``low``: a skewed outcome."""
    return np.where(rng.random((MATCHES, CAP)) < p_high, high, low)


# (name, bound B, per-deal differences (MATCHES, CAP), true mean); the outcomes stay within ±B
def cases() -> list[tuple[str, float, np.ndarray, float]]:
    rng = np.random.default_rng(2024)
    german = rng.choice([-2.0, -1.0, 0.0, 1.0, 2.0], size=(MATCHES, CAP), p=[0.2, 0.1, 0.4, 0.1, 0.2])
    return [
        ("mean 0, German Whist's ±2 steps", 2.0, german, 0.0),
        ("mean 0, coin flips at the bound", 1.0, rng.choice([-1.0, 1.0], size=(MATCHES, CAP)), 0.0),
        ("mean 0, skewed: rare large gains", 52.0, two_point(rng, 52.0, -52.0 * 0.02 / 0.98, 0.02), 0.0),
        ("small mean, Humbug-like spread", 52.0, np.clip(rng.normal(0.5, 9.0, (MATCHES, CAP)).round(), -52, 52), None),
        ("small mean, skewed", 11.0, two_point(rng, 11.0, -0.3, 0.05), 11.0 * 0.05 - 0.3 * 0.95),
        ("large mean", 2.0, rng.choice([-2.0, 0.0, 2.0], size=(MATCHES, CAP), p=[0.1, 0.3, 0.6]), 1.0),
    ]


CASES = cases()


@pytest.mark.parametrize(("bound", "diffs", "truth"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_the_sequence_covers_the_truth_at_every_deal_up_to_the_cap(bound: float, diffs: np.ndarray, truth: float):
    if truth is None:  # the rounded, clipped normal's mean: estimated from far more deals than a match plays
        truth = float(np.clip(np.random.default_rng(7).normal(0.5, 9.0, 4_000_000).round(), -52, 52).mean())
    low, high = confidence_sequence(diffs, bound, ALPHA)
    assert low.shape == high.shape == diffs.shape and (low <= high).all()
    missed = ((low > truth) | (high < truth)).any(axis=1)  # at ANY deal up to the cap, not only at the looks
    assert missed.mean() <= LIMIT
    looks = np.arange(LOOK - 1, CAP, LOOK)
    verdict = (low[:, looks] > 0) | (high[:, looks] < 0)  # (MATCHES, looks)
    if truth == 0.0:
        assert verdict.any(axis=1).mean() <= LIMIT  # an even match gets a verdict in at most ~5% of matches
    # the intervals narrow: at the cap they are far inside the bound
    assert np.median(high[:, -1] - low[:, -1]) < 0.25 * bound


def test_a_large_gap_is_decided_long_before_the_cap() -> None:
    rng = np.random.default_rng(3)
    diffs = rng.choice([-2.0, 0.0, 2.0], size=(MATCHES, CAP), p=[0.1, 0.3, 0.6])  # mean 1.0 in ±2
    low, _ = confidence_sequence(diffs, 2.0, ALPHA)
    first = np.argmax(low > 0, axis=1)  # the first deal whose interval lies above 0
    assert (low[:, -1] > 0).all() and np.median(first) < 100


def test_repeated_looks_at_a_t_interval_fail_the_same_check() -> None:
    """The coverage check can fail: stopping at the first of 20 looks whose fixed-length Student-t interval
    excludes 0 gives even matches a verdict far more often than 5% (why the arena needs a confidence sequence)."""
    diffs = CASES[0][2]  # mean 0
    looks = np.arange(LOOK, CAP + 1, LOOK)
    sums, squares = np.cumsum(diffs, axis=1)[:, looks - 1], np.cumsum(diffs**2, axis=1)[:, looks - 1]
    mean = sums / looks
    sd = np.sqrt((squares - looks * mean**2) / (looks - 1))
    half = np.array([t_quantile_975(n - 1) for n in looks]) * sd / np.sqrt(looks)
    naive = (np.abs(mean) > half).any(axis=1).mean()
    low, high = confidence_sequence(diffs, 2.0, ALPHA)
    sequence = ((low[:, looks - 1] > 0) | (high[:, looks - 1] < 0)).any(axis=1).mean()
    assert naive > 2 * ALPHA > LIMIT >= sequence


def test_each_interval_is_inside_the_previous_one_and_the_bound_is_enforced() -> None:
    diffs = np.random.default_rng(0).choice([-1.0, 1.0], size=500)
    low, high = confidence_sequence(diffs, 1.0)
    assert (np.diff(low) >= 0).all() and (np.diff(high) <= 0).all() and low[0] >= -1.0 and high[0] <= 1.0
    with pytest.raises(ValueError, match="exceeds the declared bound"):
        confidence_sequence(np.array([0.5, 3.0]), 2.0)
    with pytest.raises(ValueError, match="alpha"):
        confidence_sequence(diffs, 1.0, alpha=1.5)


def test_bonferroni_divides_alpha_and_a_smaller_alpha_gives_a_wider_interval() -> None:
    assert pair_alpha(0.05, 10, bonferroni=True) == pytest.approx(0.005)
    assert pair_alpha(0.05, 10, bonferroni=False) == 0.05
    diffs = np.random.default_rng(1).normal(0.2, 1.0, 400).clip(-3, 3)
    wide, narrow = StopRule(3.0, 0.005).interval(diffs), StopRule(3.0, 0.05).interval(diffs)
    assert wide[0] < narrow[0] < narrow[1] < wide[1]
    with pytest.raises(OptionError, match="look_every"):
        StopRule(1.0, look_every=0)


def single_deal_cases() -> list[tuple[str, dict]]:
    """The grid's option sets that make a single deal once the game's ``single_deal`` options are added."""
    out = []
    for game_id, options in option_cases():
        spec = get_spec(game_id)
        if any(options.get(k, v) != v for k, v in spec.single_deal.items()):
            continue  # a whole-episode case (Humbug's series of deals)
        merged = {**options, **spec.single_deal}
        try:
            spec.make_rules(**merged)
        except OptionError:
            continue  # options that need whole episodes (a rubber)
        out.append((game_id, merged))
    return out


SINGLE_DEALS = single_deal_cases()


@pytest.mark.parametrize(("game_id", "options"), SINGLE_DEALS, ids=[case_id(*c) for c in SINGLE_DEALS])
def test_every_return_of_a_deal_lies_in_the_games_declared_range(game_id: str, options: dict) -> None:
    game = get_spec(game_id).make_rules(**options)
    low, high = game.deal_return_range()
    assert deal_bound(game) == high - low > 0
    rng = np.random.default_rng(5)
    seen = []
    for _ in range(40):
        *_, last = play_random_episode(game, rng, check=False)
        seen.extend(last.returns)
    assert low <= min(seen) and max(seen) <= high, (min(seen), max(seen), (low, high))


def test_whole_episodes_and_games_without_a_range_are_refused() -> None:
    with pytest.raises(OptionError, match="single deals"):
        evaluate("humbug_v0", ["random", "random"], 10, single_deal=False, stop_when_decided=True)

    class NoRange:
        game_id = "toy"

        def deal_return_range(self) -> None:
            return None

    with pytest.raises(OptionError, match="deal_return_range"):
        deal_bound(NoRange())


# ------------------------------------------------------------------------------------------------ the front ends
def test_whist_eval_stops_a_lopsided_match_early_and_plays_an_even_one_to_the_cap(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.json"
    common = ["german_whist_v0", "--max-deals", "400", "--stop-when-decided", "--look-every", "25", "--quiet"]
    assert main([*common, "--agents", "heuristic", "random", "--json", str(out)]) == 0
    lopsided = json.loads(out.read_text())
    assert lopsided["num_deals"] <= 100 and lopsided["stop_when_decided"]["max_deals"] == 400
    assert lopsided["differences"][0]["anytime_valid"]["verdict"] == "a"
    assert main([*common, "--agents", "random", "random", "--json", str(out)]) == 0
    even = json.loads(out.read_text())
    assert even["num_deals"] == 400 and even["differences"][0]["anytime_valid"]["verdict"] == "undecided"
    assert "anytime-valid" in capsys.readouterr().out
    assert main(["german_whist_v0", "--alpha", "0.01", "--quiet"]) == 2  # a stopping option without stopping
    assert "--stop-when-decided" in capsys.readouterr().err


def test_the_stopping_point_does_not_depend_on_the_workers() -> None:
    runs = [
        evaluate(
            "humbug_whist_v0", ["heuristic", "random"], 600, seed=4, workers=w, stop_when_decided=True, look_every=20
        )  # fmt: skip
        for w in (1, 2)
    ]
    assert runs[0].num_deals == runs[1].num_deals < 600
    assert runs[0].to_dict(timing=False) == runs[1].to_dict(timing=False)


def test_a_stopping_run_plays_each_look_in_small_pieces() -> None:
    """The deals between two looks go to the workers in pieces of at most ``STOP_PIECE`` (a stop waits only for the
    pieces already started), none across a look, every deal once; the stopping point is the same with 1 or 2 workers
    where a look spans several pieces."""
    from whist_env.evaluation.arena import STOP_PIECE, stop_chunks

    for n, look in ((250, 100), (7, 3), (60, 60), (1, 100)):
        chunks = stop_chunks(n, look)
        assert [d for c in chunks for d in c] == list(range(n))
        assert all(0 < len(c) <= STOP_PIECE and c[0] // look == c[-1] // look for c in chunks)
    runs = [
        evaluate("humbug_v0", ["heuristic", "random"], 300, seed=1, workers=w, stop_when_decided=True, look_every=60)
        for w in (1, 2)
    ]
    assert runs[0].num_deals == runs[1].num_deals == 60
    assert runs[0].to_dict(timing=False) == runs[1].to_dict(timing=False)


def test_the_batched_arena_stops_as_the_aec_arena_does() -> None:
    pytest.importorskip("numba")
    from whist_env.evaluation.batched import evaluate_batched

    kwargs = {"seed": 2, "stop_when_decided": True, "look_every": 25}
    batched = evaluate_batched("german_whist_v0", ["heuristic", "pretrained"], 1000, **kwargs)
    aec = evaluate("german_whist_v0", ["heuristic", "pretrained"], 1000, **kwargs)
    assert batched.num_deals == aec.num_deals < 1000  # deterministic agents: the same deals, the same stop
    assert batched.pairs[0].sequential == aec.pairs[0].sequential


def test_a_stopping_ladder_plays_fewer_deals_fits_unequal_matches_and_caches_them(tmp_path: Path) -> None:
    agents = ["random", "heuristic"]
    kwargs = {"seed": 1, "cache_dir": tmp_path, "bootstrap": 100, "engine": "aec", "look_every": 25}
    first = ladder("german_whist_v0", agents, 300, stop_when_decided=True, **kwargs)
    match = first.match("heuristic", "random")
    assert len(match.diffs) <= 100 and match.sequential is not None and match.sequential.verdict == "a"
    assert first.stop is not None and "stopped when decided" in first.to_markdown()
    again = ladder("german_whist_v0", agents, 300, stop_when_decided=True, **kwargs)
    assert all(m.cached for m in again.matches) and len(again.match("heuristic", "random").diffs) == len(match.diffs)
    fixed = ladder("german_whist_v0", agents, 300, **kwargs)  # another key: the stopping rule is part of it
    assert not any(m.cached for m in fixed.matches) and len(fixed.matches[0].diffs) == 300


def test_the_weighted_fit_of_unequal_matches() -> None:
    """Three agents, matches of 100, 400 and 1600 deals whose means disagree (a residual): the fit is the
    least-squares solution weighted by the deals, and its bootstrap resamples each match on its own."""
    pairs = [(0, 1), (0, 2), (1, 2)]
    means = np.array([1.0, 1.5, 1.0])
    diffs = [np.full(n, m) + np.resize([-0.5, 0.5], n) for n, m in zip((100, 400, 1600), means, strict=True)]
    ratings, low, high = fit_ratings(3, pairs, diffs, anchor=0, bootstrap=200)
    x = np.array([[-1.0, 0.0], [0.0, -1.0], [1.0, -1.0]])  # r1, r2 of the pair means r_a - r_b (r0 = 0)
    w = np.diag([100.0, 400.0, 1600.0])
    expected = np.linalg.solve(x.T @ w @ x, x.T @ w @ means)
    np.testing.assert_allclose(ratings[1:], expected, atol=1e-12)
    assert (low <= ratings + 1e-12).all() and (ratings <= high + 1e-12).all() and (high[1:] > low[1:]).all()
    equal = [np.resize(d, 100) for d in diffs]  # equal lengths: the plain least-squares fit
    plain = np.linalg.lstsq(x, np.array([d.mean() for d in equal]), rcond=None)[0]
    np.testing.assert_allclose(fit_ratings(3, pairs, np.stack(equal), bootstrap=0)[0][1:], plain, atol=1e-12)


def test_the_cap_simulation_of_bench_stopping() -> None:
    """``benchmarks/bench_stopping.py`` (the caps in docs/results_ladder.md): a lopsided pair is decided at the first
    look, an even one almost never, and a close one needs more deals than its fixed match played."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    from bench_stopping import deals_to_decide

    kwargs = {"matches": 200, "cap": 2000, "look_every": 100, "seed": 0}
    assert (deals_to_decide("german_whist_v0", 500, 1.8, 0.05, **kwargs) == 100).all()
    assert np.isinf(deals_to_decide("german_whist_v0", 500, 0.0, 0.08, **kwargs)).mean() >= 0.95
    close = deals_to_decide("classic_whist_v0", 1000, 0.211, 0.096, **kwargs)
    assert np.median(close) > 1000 and np.isfinite(close).mean() > 0.5


# Found by a mutation audit (small bugs planted one at a time; these are the ones no test caught).
def test_the_sequence_is_the_docstrings_recursion_deal_by_deal() -> None:
    """The vectorised sequence against the module docstring's definition, one deal at a time (a running mean over
    ``t`` instead of ``t + 1`` kept the coverage tests green)."""
    d = np.random.default_rng(0).choice([-1.0, 0.0, 1.0], 300, p=[0.2, 0.3, 0.5])
    bound, alpha = 1.0, 0.05
    x, log_term = (d + bound) / (2 * bound), np.log(2 / alpha)
    mhat, s2, squares, weight, weighted, spent, low, high = 0.5, 0.25, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0
    for t, xt in enumerate(x, 1):
        lam = min(np.sqrt(2 * log_term / (s2 * t * np.log(t + 1))), 0.5)
        spent += (xt - mhat) ** 2 * (-np.log1p(-lam) - lam)
        weight, weighted = weight + lam, weighted + lam * xt
        low = max(low, (weighted - log_term - spent) / weight)
        high = min(high, (weighted + log_term + spent) / weight)
        mhat = (0.5 + x[:t].sum()) / (t + 1)
        squares += (xt - mhat) ** 2
        s2 = (0.25 + squares) / (t + 1)
    lows, highs = confidence_sequence(d, bound, alpha)
    assert 0 < low < high < 1
    assert lows[-1] == pytest.approx(low * 2 * bound - bound, abs=1e-9)
    assert highs[-1] == pytest.approx(high * 2 * bound - bound, abs=1e-9)


def test_an_interval_that_touches_zero_decides_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(StopRule, "interval", lambda self, diffs: (0.0, 0.4))
    assert not StopRule(1.0).decided([0.1])
    monkeypatch.setattr(StopRule, "interval", lambda self, diffs: (-0.4, 0.0))
    assert not StopRule(1.0).decided([-0.1])


def test_a_game_whose_deal_range_is_empty_has_no_bound() -> None:
    class Flat:
        def deal_return_range(self) -> tuple[float, float]:
            return 1.0, 1.0

    with pytest.raises(OptionError, match="low < high"):
        deal_bound(Flat())
