"""Matches that stop when decided: an anytime-valid confidence sequence for a match's mean per-deal difference.

**The question.** A match of two agents yields one paired difference per duplicate deal, ``d_i`` (agent a's score on
deal ``i`` minus b's; :mod:`whist_env.evaluation.arena`). The deals are independent and alike, so the ``d_i`` share
one mean ``mu``, the true advantage of a over b. A fixed-length match plays ``N`` deals and reports a Student-t
interval. Looking at that interval every few hundred deals and stopping once it excludes 0 breaks its 95%: each
look is another chance of a false verdict. A *confidence sequence* is a sequence of intervals ``C_1, C_2, ...``
with ``P(mu in C_t for every t) >= 1 - alpha``: the coverage holds at every deal at once, so the match may look
after every chunk of deals, stop at the first look where ``C_t`` excludes 0, and report that verdict and ``C_t``
with the stated error rate (Howard, Ramdas, McAuliffe and Sekhon, *Time-uniform, nonparametric, nonasymptotic
confidence sequences*, Annals of Statistics 2021).

**The bound.** The sequence needs what every deal obeys, whatever the agents do: each game declares the range
``[low, high]`` of one seat's return from one deal (``TrickGame.deal_return_range``, derived from its scoring
rules), an agent's per-deal score is a mean of such returns, so ``|d_i| <= B = high - low``. The differences are
mapped to ``x_i = (d_i + B) / (2B)`` in ``[0, 1]``, whose mean is ``m = (mu + B) / (2B)``.

**The sequence** is the predictable plug-in empirical-Bernstein sequence of Waudby-Smith and Ramdas (*Estimating
means of bounded random variables by betting*, JRSS B 2023, Theorem 2), from the empirical-Bernstein supermartingale
of Howard et al. (2021, Theorem 4). Before deal ``t`` is seen, fix (from deals ``1..t-1`` only):

* a running mean ``mhat_{t-1} = (1/2 + x_1 + ... + x_{t-1}) / t`` and variance
  ``s2_{t-1} = (1/4 + sum_{i<t} (x_i - mhat_i)^2) / t``;
* a bet ``lam_t = min(sqrt(2 log(2/alpha) / (s2_{t-1} t log(t + 1))), 1/2)``.

Then with ``v_t = (x_t - mhat_{t-1})^2`` and ``psi(lam) = -log(1 - lam) - lam``,

    ``C_t = [ (sum lam_i x_i - w_t) / sum lam_i ,  (sum lam_i x_i + w_t) / sum lam_i ]``,
    ``w_t = log(2/alpha) + sum v_i psi(lam_i)``   (sums over ``i <= t``),

mapped back to the scale of ``d``, and intersected with every earlier ``C_s`` (the running intersection keeps the
guarantee and only narrows). *Why it holds:* for ``y >= -1`` and ``0 <= lam < 1``, ``exp(lam y - y^2 psi(lam)) <=
1 + lam y`` (Fan, Grama and Liu 2015); with ``y = x_t - mhat_{t-1}`` and ``E[x_t | past] = m`` this makes
``prod_i exp(lam_i (x_i - m) - v_i psi(lam_i))`` a nonnegative supermartingale, and Ville's inequality keeps it
below ``2/alpha`` at every ``t`` with probability ``1 - alpha/2``; that is the lower end of ``C_t``, and the same
argument for ``1 - x`` gives the upper end. The bet ``lam_t`` only sets the width: any choice made before deal ``t``
keeps the guarantee. The width follows the observed spread of the differences, not the bound ``B``, so a game with
a wide bound (Oh Hell's exact bids) still stops early when its differences are steady.

**What a verdict means.** With ``alpha = 0.05`` a match plays until its interval excludes 0 or it reaches its cap.
*Per pair*: if the two agents are equal (``mu = 0``), the probability that the match ever declares a winner is at
most ``alpha``, however many looks; if they differ, the probability that the declared sign is wrong is at most
``alpha / 2``. *Over many pairs*: the errors add up in expectation. A class tournament of 946 pairings at
``alpha = 0.05`` expects up to ``0.05 x 946 = 47`` false verdicts among the pairs that are truly even (and at most
half that many reversed signs among the others); in practice far fewer, since the bound is conservative, but the
guarantee is per pair. To bound the chance of *any* false verdict among ``P`` pairs by ``alpha``, divide: each
pair runs at ``alpha / P`` (Bonferroni; :func:`pair_alpha`). The width grows only with ``log(1/alpha)``, so this
costs a lopsided pair few deals.

**Looks.** The arena plays deals in chunks (``look_every`` deals, in deal order); the sequence is checked after each
chunk, and the match stops at the first chunk whose end leaves the interval clear of 0. Looking less often never
hurts the guarantee (it holds at every deal); it only lets a match run a little past the deal that decided it.
The verdict is reproducible: the chunks are fixed by ``look_every``, not by the number of worker processes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from whist_env.errors import OptionError

ALPHA = 0.05  # the default error rate per pair
LOOK_EVERY = 100  # the default deals between two looks
MAX_BET = 0.5  # the largest bet lam_t (Waudby-Smith and Ramdas suggest 1/2 or 3/4)


def confidence_sequence(diffs: np.ndarray, bound: float, alpha: float = ALPHA) -> tuple[np.ndarray, np.ndarray]:
    """The anytime-valid interval on the mean of ``diffs`` after every deal (module docstring), vectorised.

    Args:
        diffs: ``(..., T)``: per-deal differences, each within ``[-bound, bound]``; leading axes are independent
            matches (the tests run thousands at once).
        bound: ``B``: every difference lies within ``±B``.
        alpha: the probability that the true mean leaves the interval at any deal.

    Returns:
        ``(low, high)``, each ``(..., T)``: the running intersection of the intervals up to each deal.

    Raises:
        ValueError: for a bound that is not positive, an ``alpha`` outside ``(0, 1)``, or a difference beyond the
            bound (the guarantee would not hold: the game's declared range is wrong).
    """
    if not bound > 0 or not math.isfinite(bound):
        raise ValueError(f"the per-deal bound must be a positive number, got {bound!r}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")
    d = np.asarray(diffs, np.float64)
    if d.shape[-1] == 0:
        return np.empty(d.shape), np.empty(d.shape)
    if np.abs(d).max() > bound * (1 + 1e-12):
        raise ValueError(
            f"a per-deal difference {np.abs(d).max():g} exceeds the declared bound {bound:g}: the game's "
            "deal_return_range() is wrong, and no interval built on it is valid"
        )
    x = (np.clip(d, -bound, bound) + bound) / (2 * bound)  # (..., T) in [0, 1]
    t = np.arange(1, d.shape[-1] + 1, dtype=np.float64)  # (T,)
    # mhat_t, s2_t after deal t (t = 0: the prior guesses 1/2 and 1/4)
    mhat = (0.5 + np.cumsum(x, axis=-1)) / (t + 1)
    s2 = (0.25 + np.cumsum((x - mhat) ** 2, axis=-1)) / (t + 1)
    mhat_prev = np.concatenate([np.full((*d.shape[:-1], 1), 0.5), mhat[..., :-1]], axis=-1)
    s2_prev = np.concatenate([np.full((*d.shape[:-1], 1), 0.25), s2[..., :-1]], axis=-1)
    log_term = math.log(2 / alpha)
    lam = np.minimum(np.sqrt(2 * log_term / (s2_prev * t * np.log(t + 1))), MAX_BET)
    psi = -np.log1p(-lam) - lam
    weight = np.cumsum(lam, axis=-1)
    centre = np.cumsum(lam * x, axis=-1) / weight
    radius = (log_term + np.cumsum((x - mhat_prev) ** 2 * psi, axis=-1)) / weight
    low = np.maximum.accumulate(np.maximum(centre - radius, 0.0), axis=-1)
    high = np.minimum.accumulate(np.minimum(centre + radius, 1.0), axis=-1)
    high = np.maximum(high, low)  # an empty intersection (a bad run of luck) shrinks to a point, never inverts
    return low * 2 * bound - bound, high * 2 * bound - bound


def pair_alpha(alpha: float, pairs: int, bonferroni: bool) -> float:
    """The error rate each pair runs at: ``alpha``, or ``alpha / pairs`` with ``bonferroni`` (then the chance of
    any false verdict among the ``pairs`` is at most ``alpha``)."""
    if not 0 < alpha < 1:
        raise OptionError(f"alpha must lie in (0, 1), got {alpha!r}")
    return alpha / max(1, pairs) if bonferroni else alpha


def deal_bound(rules: object) -> float:
    """``B`` for a game's rules object: the largest paired per-deal difference, ``high - low`` of the range that
    ``deal_return_range()`` declares.

    Raises:
        OptionError: when the game declares no range (naming the method to add).
    """
    declared = getattr(rules, "deal_return_range", lambda: None)()
    if declared is None:
        name = getattr(rules, "game_id", type(rules).__name__)
        raise OptionError(
            f"{name} declares no per-deal return range, which stopping when decided needs: define "
            "deal_return_range() on its rules class (the least and greatest return of one seat from one deal), "
            "or play a fixed number of deals"
        )
    low, high = declared
    if not high > low:
        raise OptionError(f"deal_return_range() must give low < high, got {declared}")
    return float(high - low)


@dataclass(frozen=True)
class StopRule:
    """When a match stops: after each ``look_every`` deals, once every pair's anytime-valid interval excludes 0.

    Attributes:
        bound: ``B``, the largest per-deal paired difference (:func:`deal_bound`).
        alpha: the error rate of each pair (already divided when Bonferroni applies: :func:`pair_alpha`).
        look_every: deals between two looks.
    """

    bound: float
    alpha: float = ALPHA
    look_every: int = LOOK_EVERY

    def __post_init__(self) -> None:
        if not self.bound > 0:
            raise OptionError(f"the per-deal bound must be positive, got {self.bound!r}")
        if not 0 < self.alpha < 1:
            raise OptionError(f"alpha must lie in (0, 1), got {self.alpha!r}")
        if isinstance(self.look_every, bool) or not isinstance(self.look_every, int) or self.look_every < 1:
            raise OptionError(f"look_every must be an int >= 1, got {self.look_every!r}")

    def interval(self, diffs: Sequence[float] | np.ndarray) -> tuple[float, float]:
        """The anytime-valid interval after the last of ``diffs`` (``(-B, B)`` before any deal)."""
        d = np.asarray(diffs, np.float64)
        if d.size == 0:
            return -self.bound, self.bound
        low, high = confidence_sequence(d, self.bound, self.alpha)
        return float(low[-1]), float(high[-1])

    def decided(self, diffs: Sequence[float] | np.ndarray) -> bool:
        """Whether the interval after ``diffs`` excludes 0."""
        low, high = self.interval(diffs)
        return low > 0 or high < 0


@dataclass(frozen=True)
class SequentialResult:
    """How a stopping match ended: its anytime-valid interval on the mean per-deal difference.

    Attributes:
        low: the interval's lower end.
        high: its upper end.
        deals: deals played.
        cap: the most deals the match could play.
        alpha: the pair's error rate.
        look_every: deals between two looks.
    """

    low: float
    high: float
    deals: int
    cap: int
    alpha: float
    look_every: int

    @property
    def verdict(self) -> str:
        """``"a"`` (the first agent is better), ``"b"``, or ``"undecided"`` (the interval holds 0)."""
        return "a" if self.low > 0 else "b" if self.high < 0 else "undecided"

    @property
    def stopped_early(self) -> bool:
        """Whether the match stopped before its cap."""
        return self.deals < self.cap

    def text(self, digits: int = 3) -> str:
        """``"[+0.120, +0.560] after 300 of 2000 deals"``."""
        return f"[{self.low:+.{digits}f}, {self.high:+.{digits}f}] after {self.deals} of {self.cap} deals"


def sequential_result(rule: StopRule, diffs: Sequence[float] | np.ndarray, cap: int) -> SequentialResult:
    """The :class:`SequentialResult` of a match that played ``diffs`` (of at most ``cap`` deals) under ``rule``."""
    low, high = rule.interval(diffs)
    return SequentialResult(low, high, len(diffs), cap, rule.alpha, rule.look_every)
