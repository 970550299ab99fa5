"""Means and Student-t intervals."""

from __future__ import annotations

import math

import numpy as np
import pytest

from whist_env.evaluation.stats import mean_ci, paired_ci, t_quantile_975


@pytest.mark.parametrize(("df", "expected"), [(1, 12.706), (10, 2.228), (30, 2.042), (60, 2.000), (120, 1.980),
                                               (1000, 1.962), (10**6, 1.960)])  # fmt: skip
def test_t_quantile(df: int, expected: float) -> None:
    assert t_quantile_975(df) == pytest.approx(expected, abs=1.5e-3)


def test_mean_ci_by_hand() -> None:
    ci = mean_ci([1.0, 2.0, 3.0, 4.0])
    sd = math.sqrt(((1.5**2) * 2 + (0.5**2) * 2) / 3)
    assert ci.mean == 2.5 and ci.sd == pytest.approx(sd)
    assert ci.half_width == pytest.approx(3.182 * sd / 2, rel=1e-4)
    assert math.isinf(mean_ci([1.0]).half_width)


def test_interval_covers_the_true_mean_about_95_percent() -> None:
    rng = np.random.default_rng(0)
    hits = sum(mean_ci(list(rng.normal(0.3, 2.0, 40))).contains(0.3) for _ in range(2000))
    assert 0.93 < hits / 2000 < 0.97


def test_paired_differences_remove_shared_luck() -> None:
    rng = np.random.default_rng(1)
    luck = rng.normal(0, 10, 500)
    a = luck + 1.0 + rng.normal(0, 0.5, 500)
    b = luck + rng.normal(0, 0.5, 500)
    diff = paired_ci(list(a), list(b))
    assert diff.contains(1.0) and diff.excludes_zero() and diff.half_width < 0.1
    assert mean_ci(list(a)).half_width > 0.8  # unpaired, the luck swamps it
    with pytest.raises(ValueError):
        paired_ci([1.0], [1.0, 2.0])


def test_an_interval_of_no_width_holds_its_mean() -> None:
    """Found by a mutation audit: an agent against itself, deterministic, differs by 0 on every deal; the interval
    [0, 0] holds 0, so it does not say the two differ."""
    ci = mean_ci([0.0] * 10)
    assert ci.contains(0.0) and not ci.excludes_zero()


@pytest.mark.parametrize(("df", "quantile"), [(31, 2.0395), (40, 2.0211), (50, 2.0086)])
def test_the_t_quantile_just_past_the_table(df: int, quantile: float) -> None:
    """Found by a mutation audit: the series' second-order term could go (0.003 low at df = 31) with no test failing:
    they checked the table and df of 60 and more."""
    assert t_quantile_975(df) == pytest.approx(quantile, abs=2e-4)
