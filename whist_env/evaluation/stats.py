"""Means with Student-t confidence intervals, in pure Python (no SciPy).

The arena's samples are per-deal values: an agent's mean reward over the tables of one deal (its
seats and the duplicate replays of that deal), or the difference of two agents' such means. Deals
are drawn independently, so these values are independent and identically distributed, and the
interval ``mean ± t(0.975, N-1) · s / sqrt(N)`` (``s`` the sample standard deviation) covers the true
mean with probability about 95%. Pairing the two agents on the same deals removes the luck of the
cards from their difference, which is why the interval on the difference is much narrower than the
intervals on the two means.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

# Two-sided 95% quantiles t(0.975, df) for df = 1..30.
_T975 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip
_Z975 = 1.959963984540054


def t_quantile_975(df: int) -> float:
    """The 0.975 quantile of Student's t with ``df`` degrees of freedom (exact table to 30, then a series)."""
    if df < 1:
        return math.inf
    if df <= len(_T975):
        return _T975[df - 1]
    z = _Z975
    # Cornish-Fisher expansion of the t quantile in 1/df (error < 1e-4 for df > 30).
    return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)


@dataclass(frozen=True)
class MeanCI:
    """A sample mean with the half-width of its 95% confidence interval.

    Attributes:
        mean: the sample mean.
        half_width: ``t(0.975, n-1) · s / sqrt(n)`` (``inf`` for fewer than two samples).
        n: number of samples.
        sd: sample standard deviation.
    """

    mean: float
    half_width: float
    n: int
    sd: float

    @property
    def low(self) -> float:
        """Lower end of the interval."""
        return self.mean - self.half_width

    @property
    def high(self) -> float:
        """Upper end of the interval."""
        return self.mean + self.half_width

    def contains(self, value: float) -> bool:
        """Whether ``value`` lies in the interval."""
        return self.low <= value <= self.high

    def excludes_zero(self) -> bool:
        """Whether the interval lies entirely above or below zero."""
        return not self.contains(0.0)

    def text(self, digits: int = 3) -> str:
        """``"1.234 ± 0.056"``."""
        return f"{self.mean:.{digits}f} ± {self.half_width:.{digits}f}"


def mean_ci(values: Sequence[float]) -> MeanCI:
    """Mean and 95% Student-t interval of independent samples."""
    n = len(values)
    if n == 0:
        return MeanCI(math.nan, math.inf, 0, math.nan)
    mean = math.fsum(values) / n
    if n < 2:
        return MeanCI(mean, math.inf, n, math.nan)
    var = math.fsum((v - mean) ** 2 for v in values) / (n - 1)
    sd = math.sqrt(var)
    return MeanCI(mean, t_quantile_975(n - 1) * sd / math.sqrt(n), n, sd)


def paired_ci(a: Sequence[float], b: Sequence[float]) -> MeanCI:
    """Mean and 95% interval of the paired differences ``a[i] - b[i]`` (the same deal for both)."""
    if len(a) != len(b):
        raise ValueError(f"paired samples must have the same length, got {len(a)} and {len(b)}")
    return mean_ci([x - y for x, y in zip(a, b, strict=True)])
