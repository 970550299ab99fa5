"""How many deals a match that stops when decided needs, from a pair's mean and spread: simulated, not played.

A fixed-length match reports a mean per-deal difference with its paired 95% Student-t interval on ``N`` deals; the
anytime-valid interval of ``--stop-when-decided`` (:func:`whist_env.evaluation.sequential.confidence_sequence`) is
wider at the same ``N``, so a pair the fixed match separates by little stays undecided at a cap of ``N``. For each
pair this draws ``--matches`` matches of per-deal differences from a normal distribution with the pair's mean and the
spread its interval implies (``sd = half-width * sqrt(N) / t``), clipped to the game's per-deal bound, looks every
``--look-every`` deals as the arena does, and prints the deals after which the interval excludes 0 (median and 90th
percentile): the ``--max-deals`` that decides the pair in half and in nine of ten matches. The default pairs are those
of ``docs/results_ladder.md`` whose verdict the stopping re-play left undecided at the fixed ladder's cap.

    python benchmarks/bench_stopping.py
    python benchmarks/bench_stopping.py --pair humbug_v0:500:0.232:0.187 --matches 1000
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from whist_env.evaluation.sequential import ALPHA, LOOK_EVERY, confidence_sequence, deal_bound
from whist_env.evaluation.stats import t_quantile_975
from whist_env.registry import get_spec

# game, the pair (row - column), deals of the fixed match, its mean and the half-width of its 95% interval: the pairs
# of docs/results_ladder.md that the stopping re-play left undecided
LADDER_PAIRS = [
    ("classic_whist_v0", "pimc(fallback=pretrained) - pimc", 1000, 0.211, 0.096),
    ("classic_whist_v0", "pimc(playouts=20) - pimc", 1000, 0.143, 0.095),
    ("humbug_whist_v0", "pimc - heuristic", 200, 1.870, 0.370),
    ("humbug_whist_v0", "pimc(fallback=pretrained) - pretrained", 200, 0.460, 0.294),
    ("humbug_v0", "pimc:samples=60 - pimc", 500, 0.232, 0.187),
    ("humbug_v0", "pimc(fallback=pretrained) - pimc:samples=60", 500, 0.564, 0.287),
    ("humbug_v0", "pretrained - pimc:samples=60", 500, 0.484, 0.288),
    ("humbug_v0", "pimc:samples=60 - heuristic", 500, 0.672, 0.266),
    ("humbug_v0", "pimc(fallback=pretrained) - pimc", 500, 0.756, 0.292),
    ("humbug_v0", "pretrained - pimc", 500, 0.832, 0.283),
    ("humbug_v0", "pimc - heuristic", 500, 0.384, 0.285),
    ("humbug_v0", "pretrained - pimc(fallback=pretrained)", 500, 0.288, 0.211),
    ("humbug_v0", "pimc(fallback=pretrained) - heuristic", 500, 0.932, 0.310),
    ("humbug_v0", "pretrained - heuristic", 500, 0.940, 0.281),
]


def deals_to_decide(
    game: str, deals: int, mean: float, half_width: float, *, matches: int, cap: int, look_every: int, seed: int
) -> np.ndarray:
    """The deals each simulated match played before its interval excluded 0 (``inf``: undecided at ``cap``)."""
    bound = deal_bound(get_spec(game).make_rules())
    sd = half_width * math.sqrt(deals) / t_quantile_975(deals - 1)
    rng = np.random.default_rng(seed)
    diffs = np.clip(rng.normal(mean, sd, size=(matches, cap)), -bound, bound)
    low, high = confidence_sequence(diffs, bound, ALPHA)
    looks = np.arange(look_every - 1, cap, look_every)
    decided = (low[:, looks] > 0) | (high[:, looks] < 0)
    return np.where(decided.any(axis=1), (decided.argmax(axis=1) + 1) * look_every, np.inf)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pair", action="append", default=[], metavar="GAME:DEALS:MEAN:HALF_WIDTH")
    parser.add_argument("--matches", type=int, default=200, help="simulated matches per pair")
    parser.add_argument("--cap", type=int, default=40_000, help="the most deals a simulated match plays")
    parser.add_argument("--look-every", type=int, default=LOOK_EVERY)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    pairs = LADDER_PAIRS
    if args.pair:
        pairs = []
        for text in args.pair:
            game, deals, mean, hw = text.split(":")
            pairs.append((game, text, int(deals), float(mean), float(hw)))
    print(f"deals until the anytime-valid interval (alpha {ALPHA}) excludes 0, {args.matches} simulated matches a pair")
    print(f"{'game':17} {'pair':44} {'fixed':>16} {'median':>7} {'90%':>7} {'undecided':>9}")
    for game, name, deals, mean, hw in pairs:
        first = deals_to_decide(
            game, deals, mean, hw, matches=args.matches, cap=args.cap, look_every=args.look_every, seed=args.seed
        )
        median, p90 = np.percentile(first, [50, 90])
        fixed = f"{mean:+.3f} ± {hw:.3f}"
        print(f"{game:17} {name:44} {fixed:>16} {median:>7,.0f} {p90:>7,.0f} {np.isinf(first).mean():>9.0%}")


if __name__ == "__main__":
    main()
