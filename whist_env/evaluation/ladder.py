"""A rating ladder: every pair of agents plays the same duplicate deals, and one least-squares fit puts them all on
one scale in the game's own unit (issue #27).

    >>> from whist_env.evaluation.ladder import ladder
    >>> report = ladder("german_whist_v0", ["random", "heuristic", "pretrained"], num_deals=2000, seed=0)
    >>> print(report.to_markdown())
    >>> report.plot("ladder_german_whist_v0.png")

or ``whist-eval german_whist_v0 --ladder --agents random heuristic pretrained pimc --deals 1000``.

**Matches.** Each pair of agents plays a two-agent match of the arena (:mod:`whist_env.evaluation.arena`: deal ``i``
of the seed is the same in every match, each deal replayed with the seats rotated), on the batched engine where both
agents have a batched form (``random``, ``heuristic``, ``pretrained``: :mod:`whist_env.evaluation.batched`), in the AEC
arena otherwise (with ``workers`` processes). A match keeps its per-deal score differences ``d_ab[i]`` (agent a's
score on deal ``i`` minus b's, each the mean return over the seats the agent held and the replays).

**Ratings.** ``r_a − r_b`` models the mean of ``d_ab``; the ratings are the least-squares fit of every pair's mean
(a full round robin of equal matches: ``r_a`` is the mean of a's pair means against the others, less the anchor's).
They are in the game's unit per deal (``GameSpec.unit``: a German Whist deal is worth ±1, a Humbug deal its points):
``r_a − r_b`` is what a gains on b per deal on average, directly or through the others. The anchor (``random``
where it plays, else the first agent) is 0. Intervals (95%) come from a bootstrap over deals: the same resampled
deals in every match (their results on one deal are correlated), the fit redone on each resample, and each
rating ± Student's t times the resamples' standard error (:func:`interval_scale`: for two agents, the match's paired
interval; the percentiles of the resamples were too narrow for matches of few deals). The pairwise table shows
every match's observed mean with its paired 95% interval, and the fit's residual (observed − ``r_a + r_b``): large
residuals mean the agents are not on one scale (rock-paper-scissors).

**Matches that stop when decided** (``stop_when_decided``; ``whist-eval --ladder --stop-when-decided``): each
match plays chunks of ``look_every`` deals and stops at the first chunk where its anytime-valid interval excludes 0
(:mod:`whist_env.evaluation.sequential`; ``num_deals`` is the cap), so the matches have unequal lengths (all of them
start at deal 0 of the seed). The fit is then weighted least squares, each match weighted by its number of deals
(with equal lengths this is the plain fit above), and the bootstrap resamples each match's deals within that match
(independently across matches: their shared deals are no longer the same set). The pairwise table gives each
match's anytime-valid interval and its deals.

**Cycles** (:mod:`whist_env.evaluation.cycles`): beside the ratings, α-Rank's mass per agent over the match table,
with 95% intervals from the same bootstrap draws, and every cycle whose edges are all decided (each match's
interval clear of 0: the paired one, or the anytime-valid one of a match that stopped). A line of ratings hides a
rock-paper-scissors set; α-Rank spreads its mass over it, and the cycle is named.

**Cache.** Each match's per-deal differences are written to ``cache_dir`` (a JSON file per match, named by a hash
of the game, its options, the two agent specs in a fixed order, the deals, the seed, the engine, the stopping rule
(``alpha``, ``look_every`` and the bound, or none), the whist_env version and the contents of any file a spec names),
so adding an agent to a ladder plays only its matches. A match's agents are always seated in sorted order of their
specs, so the results do not depend on the order agents are given.
"""

from __future__ import annotations

import hashlib
import json
import math
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from whist_env.errors import OptionError
from whist_env.evaluation.arena import Arena, ArenaConfig, build_agent, play_deals, stop_rule, unit_text
from whist_env.evaluation.cycles import CycleReport, analyse
from whist_env.evaluation.sequential import SequentialResult, StopRule, sequential_result
from whist_env.evaluation.stats import MeanCI, mean_ci, t_quantile_975
from whist_env.registry import GameRef, spec_of

BOOTSTRAP = 2000  # resamples of the deals for the ratings' intervals
CACHE_FORMAT = 1


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/whist_env/ladder`` (``~/.cache/whist_env/ladder`` without it)."""
    import os

    root = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(root) / "whist_env" / "ladder"


# ---------------------------------------------------------------------------------------------------- the fit
def fit_ratings(
    num_agents: int,
    pairs: Sequence[tuple[int, int]],
    diffs: np.ndarray | Sequence[np.ndarray],
    anchor: int = 0,
    bootstrap: int = BOOTSTRAP,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Least-squares ratings from paired per-deal differences, with 95% intervals from a bootstrap over the deals.

    Args:
        num_agents: ``k``.
        pairs: the ``P`` matches ``(a, b)``, agent indices; every agent must be joined to the anchor through them.
        diffs: ``(P, N)``: ``diffs[p, i]`` is a's score minus b's on deal ``i`` in match ``p`` (the same deals in
            every match); or ``P`` arrays of unequal lengths (matches that stopped when decided): then the fit is
            weighted by each match's deals and the bootstrap resamples within each match (module docstring).
        anchor: the agent rated 0.
        bootstrap: resamples of the deals (0: no intervals, they are NaN).
        seed: the resampling's seed.

    Returns:
        ``(ratings (k,), low (k,), high (k,))``: the fit and its 95% interval, Student's t on the bootstrap's standard
        error (:func:`interval_scale`; the anchor's is [0, 0]; NaN with no bootstrap or matches of one deal).

    Raises:
        ValueError: for mismatched shapes, or agents the matches do not connect to the anchor.
    """
    ratings, draws = fit_with_draws(num_agents, pairs, diffs, anchor, bootstrap, seed)
    if draws is None:
        nan = np.full(num_agents, np.nan)
        return ratings, nan, nan.copy()
    spread = interval_scale(min(len(d) for d in diffs)) * draws.std(axis=0, ddof=1)
    return ratings, ratings - spread, ratings + spread


def interval_scale(deals: int) -> float:
    """How many bootstrap standard errors a 95% interval spans either side of a rating (or of a difference of two)
    when the matches have ``deals`` deals (the shortest match's, where they differ): Student's ``t(0.975, n - 1)``
    times ``sqrt(n / (n - 1))``, the factor by which the bootstrap's spread of a mean of ``n`` deals falls short of
    its standard error. For one match this is the paired Student-t interval of the arena; NaN below two deals (no
    interval: every verdict undecided).

    A course's matches are short (the tutorial plays 10 deals), and there the bootstrap's 2.5 and 97.5 percentiles
    are too narrow: two equal agents got a verdict 16% of the time at 5 deals a match and 10% at 10, where a 95%
    interval allows 5% (simulated in ``tests/evaluation/test_tournament.py``); a ladder's 95% intervals held the true
    ratings 82% of the time at 5 deals a match and 90% at 10 (``tests/evaluation/test_ladder.py``)."""
    if deals < 2:
        return math.nan
    return t_quantile_975(deals - 1) * math.sqrt(deals / (deals - 1))


def fit_with_draws(
    num_agents: int,
    pairs: Sequence[tuple[int, int]],
    diffs: np.ndarray | Sequence[np.ndarray],
    anchor: int = 0,
    bootstrap: int = BOOTSTRAP,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray | None]:
    """:func:`fit_ratings`'s fit and its bootstrap draws: ``(ratings (k,), draws (bootstrap, k))``, the ratings
    refitted on each resample of the deals (the same resampled deals in every match), None when ``bootstrap`` is 0.
    Percentiles of a column are a rating's interval; of a difference of two columns, the interval of the two
    agents' difference (the classroom tournament's gates). ``diffs`` of unequal lengths: see :func:`fit_ratings`."""
    rows = [np.asarray(d, np.float64) for d in diffs]
    lengths = np.array([len(d) for d in rows])
    if len(rows) != len(pairs) or any(d.ndim != 1 for d in rows) or not len(rows) or lengths.min() < 1:
        raise ValueError(f"diffs must be (pairs, deals) = ({len(pairs)}, N >= 1), or one array of >= 1 deal per pair")
    design = np.zeros((len(pairs), num_agents))
    for p, (a, b) in enumerate(pairs):
        design[p, a], design[p, b] = 1.0, -1.0
    free = [j for j in range(num_agents) if j != anchor]
    x = design[:, free]
    if np.linalg.matrix_rank(x) < len(free):
        raise ValueError("the matches do not join every agent to the anchor: their ratings are not on one scale")
    # (k - 1, P): ratings of the free agents from the pair means, least squares weighted by each match's deals
    # (equal weights when the matches are equal: the plain fit)
    root = np.sqrt(lengths / lengths.max())
    solve = np.linalg.pinv(x * root[:, None]) * root[None, :]

    def ratings_of(means: np.ndarray) -> np.ndarray:  # (..., P) -> (..., k)
        out = np.zeros((*means.shape[:-1], num_agents))
        out[..., free] = means @ solve.T
        return out

    ratings = ratings_of(np.array([d.mean() for d in rows]))
    if bootstrap < 1:
        return ratings, None
    return ratings, ratings_of(resampled_means(rows, bootstrap, seed))


def resampled_means(diffs: Sequence[np.ndarray], bootstrap: int, seed: int = 0) -> np.ndarray:
    """Every match's mean per-deal difference on ``bootstrap`` resamples of the deals: ``(bootstrap, P)``.

    Matches of equal length share their deals, so they are resampled together (the same resampled deals in every
    match: their results on one deal are correlated); matches of unequal length (stopped when decided) are each
    resampled within themselves. The ratings' intervals (:func:`fit_with_draws`) and the cycle analysis
    (:mod:`whist_env.evaluation.cycles`) read the same draws for the same ``seed``."""
    rows = [np.asarray(d, np.float64) for d in diffs]
    rng = np.random.default_rng([seed, 27])
    means = np.empty((bootstrap, len(rows)))
    if all(len(d) == len(rows[0]) for d in rows):
        n, table = len(rows[0]), np.stack(rows)
        for first in range(0, bootstrap, 250):  # (250, N) counts at a time: memory stays small for 10,000 deals
            size = min(250, bootstrap - first)
            counts = rng.multinomial(n, np.full(n, 1.0 / n), size=size).astype(np.float64)
            means[first : first + size] = counts @ table.T / n
        return means
    for p, d in enumerate(rows):
        n = len(d)
        for first in range(0, bootstrap, 250):
            size = min(250, bootstrap - first)
            counts = rng.multinomial(n, np.full(n, 1.0 / n), size=size).astype(np.float64)
            means[first : first + size, p] = counts @ d / n
    return means


# ---------------------------------------------------------------------------------------------------- the report
@dataclass(frozen=True)
class Rating:
    """One agent's place on the ladder: ``rating`` per deal in the game's unit, the anchor 0, with its 95%
    bootstrap interval ``[low, high]``."""

    name: str
    rating: float
    low: float
    high: float


@dataclass(frozen=True)
class Match:
    """One pair's match: ``diffs[i]`` is a's score minus b's on deal ``i``; ``observed`` their paired mean and
    95% interval; ``residual`` the observed mean minus the fit's ``r_a - r_b``; ``sequential`` its anytime-valid
    interval when the match stopped when decided."""

    a: str
    b: str
    engine: str
    diffs: np.ndarray = field(repr=False)
    illegal: tuple[int, int]
    cached: bool
    wall_s: float
    observed: MeanCI = field(init=False)
    residual: float = 0.0
    sequential: SequentialResult | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "observed", mean_ci(self.diffs.tolist()))


@dataclass
class LadderReport:
    """A ladder's ratings (best first), its matches, and how it was played."""

    game_id: str
    options: dict[str, Any]
    unit: str
    seed: int
    num_deals: int
    anchor: str
    ratings: list[Rating]
    matches: list[Match]
    bootstrap: int
    wall_s: float
    stop: dict[str, Any] | None = None
    cycles: CycleReport | None = None

    @property
    def illegal_actions(self) -> int:
        """Illegal actions over every match (must be 0)."""
        return sum(sum(m.illegal) for m in self.matches)

    def rating(self, name: str) -> Rating:
        """The rating of the agent ``name``."""
        for r in self.ratings:
            if r.name == name:
                return r
        raise KeyError(f"no agent {name!r} on this ladder; agents: {[r.name for r in self.ratings]}")

    def to_markdown(self) -> str:
        """The ratings table, then the pairwise table (row − column, observed, with the fit's residual)."""
        opts = ", ".join(f"{k}={v!r}" for k, v in self.options.items()) or "defaults"
        played = sum(not m.cached for m in self.matches)
        lines = [
            f"**{self.game_id}** ladder ({opts}); {self.num_deals} duplicate deals per match, seed {self.seed}; "
            f"unit: {self.unit}. Rating: mean gain per deal over {self.anchor} (= 0), least squares over every "
            f"match; 95% intervals from {self.bootstrap} bootstrap resamples of the deals.",
            "",
            *self._stop_lines(),
            "| rank | agent | rating (95% CI) |",
            "|---|---|---|",
        ]
        for rank, r in enumerate(self.ratings, 1):
            if r.name == self.anchor:
                interval = "anchor"
            elif np.isfinite(r.low) and np.isfinite(r.high):
                interval = f"[{r.low:+.3f}, {r.high:+.3f}]"
            else:
                interval = "[none: one deal a match]" if self.bootstrap else "[none: no bootstrap]"
            lines.append(f"| {rank} | {r.name} | {r.rating:+.3f} {interval} |")
        names = [r.name for r in self.ratings]
        lines += ["", "| row − column | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
        for a in names:
            cells = []
            for b in names:
                m = self.match(a, b) if a != b else None
                cells.append("" if m is None else m.observed.text())
            lines.append(f"| **{a}** | " + " | ".join(cells) + " |")
        if self.cycles is not None:
            lines += ["", self.cycles.to_markdown()]
        worst = max(self.matches, key=lambda m: abs(m.residual))
        engines = sorted({m.engine for m in self.matches})
        lines += [
            "",
            f"- largest residual of the fit: {worst.residual:+.3f} ({worst.a} − {worst.b}); "
            f"{len(self.matches)} matches ({played} played, {len(self.matches) - played} from the cache; "
            f"engine: {', '.join(engines)}), {self.wall_s:.1f} s",
        ]
        return "\n".join(lines)

    def _stop_lines(self) -> list[str]:
        """The markdown of the stopping rule and each match's anytime-valid interval (none without stopping)."""
        if self.stop is None:
            return []
        total = sum(len(m.diffs) for m in self.matches)
        lines = [
            f"Matches stopped when decided: {total} deals in all, at most {self.num_deals} per match, looks every "
            f"{self.stop['look_every']} deals, alpha {self.stop['alpha']:.3g} per match, per-deal bound "
            f"±{self.stop['bound']:g}; the fit is weighted by each match's deals.",
            "",
        ]
        for m in self.matches:
            if m.sequential is not None:
                lines.append(f"- {m.a} − {m.b}: anytime-valid {m.sequential.text()}, verdict: {m.sequential.verdict}")
        return [*lines, ""]

    def match(self, a: str, b: str) -> Match:
        """The match of ``a`` and ``b``, oriented as ``a − b``."""
        for m in self.matches:
            if (m.a, m.b) == (a, b):
                return m
            if (m.a, m.b) == (b, a):
                seq = m.sequential
                if seq is not None:
                    seq = SequentialResult(-seq.high, -seq.low, seq.deals, seq.cap, seq.alpha, seq.look_every)
                return Match(a, b, m.engine, -m.diffs, (m.illegal[1], m.illegal[0]), m.cached, m.wall_s, -m.residual,
                             seq)  # fmt: skip
        raise KeyError(f"no match {a!r} − {b!r} on this ladder")

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (the per-deal differences left out)."""

        def num(x: float) -> float | None:
            return None if not np.isfinite(x) else round(float(x), 6)

        return {
            "game": self.game_id,
            "options": self.options,
            "unit": self.unit,
            "seed": self.seed,
            "num_deals": self.num_deals,
            "anchor": self.anchor,
            "method": (
                "round robin on the same duplicate deals; ratings: least squares of every pair's mean per-deal "
                f"difference, anchor 0; 95% intervals: Student's t on the standard error of {self.bootstrap} bootstrap "
                "resamples of the deals"
            ),
            "ratings": [
                {"name": r.name, "rating": num(r.rating), "low": num(r.low), "high": num(r.high)} for r in self.ratings
            ],
            "matches": [
                {
                    "a": m.a,
                    "b": m.b,
                    "engine": m.engine,
                    "mean": num(m.observed.mean),
                    "ci95": num(m.observed.half_width),
                    "residual": num(m.residual),
                    "illegal_actions": list(m.illegal),
                    "cached": m.cached,
                    "deals": len(m.diffs),
                }
                | (
                    {}
                    if m.sequential is None
                    else {
                        "anytime_valid": {
                            "low": num(m.sequential.low),
                            "high": num(m.sequential.high),
                            "verdict": m.sequential.verdict,
                        }
                    }
                )  # fmt: skip
                for m in self.matches
            ],
            "illegal_actions": self.illegal_actions,
            "stop_when_decided": self.stop,
            "cycles": None if self.cycles is None else self.cycles.to_dict(),
        }

    def plot(self, path: str | Path) -> Path:
        """Draw the ratings with their intervals to a PNG at ``path`` (needs matplotlib: the ``train`` extra)."""
        return plot_ratings(
            self.ratings,
            path,
            f"{self.game_id}: {self.num_deals} duplicate deals per match, seed {self.seed}",
            f"rating: mean gain per deal over {self.anchor} ({self.unit})",
        )


def plot_ratings(ratings: Sequence[Rating], path: str | Path, title: str, xlabel: str) -> Path:
    """Ratings with their 95% intervals, the best at the top, as a PNG at ``path`` (needs matplotlib).

    Raises:
        OptionError: when matplotlib is missing (naming the extra that brings it).
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as err:
        raise OptionError("the plot needs matplotlib: pip install 'whist_env[train]' (or pass --no-plot)") from err
    out = Path(path)
    rows = list(reversed(ratings))  # the best at the top
    y = np.arange(len(rows))
    fig, ax = plt.subplots(figsize=(7, 0.5 * len(rows) + 1.6))
    values = np.array([r.rating for r in rows])
    lows, highs = np.array([r.low for r in rows]), np.array([r.high for r in rows])
    # Each interval drawn around its middle (the rating: the intervals are symmetric); one that is none (matches
    # of one deal) is not drawn, and matplotlib refuses a negative error bar.
    known = np.isfinite(lows) & np.isfinite(highs)
    middles = np.where(known, (lows + highs) / 2, values)
    ax.errorbar(middles, y, xerr=np.where(known, np.maximum(highs - lows, 0.0) / 2, 0.0), fmt="none", capsize=4,
                color="tab:blue")  # fmt: skip
    ax.plot(values, y, "o", color="tab:blue")
    ax.axvline(0.0, color="grey", linewidth=0.8)
    ax.set_yticks(y, [r.name for r in rows])
    ax.set_xlabel(xlabel, wrap=True)
    ax.set_title(title, fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


# ---------------------------------------------------------------------------------------------------- playing
def _has_batched_form(spec: str, game_id: str) -> bool:
    """Whether the agent spec ``spec`` has a batched form in ``game_id`` (and the batched engine is installed)."""
    try:
        from whist_env.evaluation.batched import BATCHED_NAMES
        from whist_env.vector import vector_game_ids
        from whist_env.vector.heuristics import ported_games
    except ImportError:  # no numba: the AEC arena plays everything
        return False
    from whist_env.agents.agent_spec import parse_agent_spec

    name = parse_agent_spec(spec).name
    if game_id not in vector_game_ids() or name not in BATCHED_NAMES:
        return False
    return name != "heuristic" or game_id in ported_games()


def _files_named(spec: str, game_id: str) -> list[str]:
    """The sha256 of every existing file a spec names (a model's path, and the game's shipped network where it names
    ``pretrained``), so that a changed file (a network re-shipped, a model retrained) is a new match."""
    import importlib.resources
    import re

    out = []
    for token in re.split(r"[\s(),=:]+", spec):
        path = Path(token)
        if token and path.is_file():
            out.append(f"{token}:{hashlib.sha256(path.read_bytes()).hexdigest()}")
        elif token == "pretrained" and (shipped := spec_of(game_id).pretrained_file()) is not None:
            with importlib.resources.as_file(shipped) as file:
                if file.is_file():
                    out.append(f"pretrained:{hashlib.sha256(file.read_bytes()).hexdigest()}")
    return out


def _match_key(config: ArenaConfig, engine: str, stop: StopRule | None = None) -> dict[str, Any]:
    from whist_env import __version__

    return {
        "stop": None if stop is None else {"alpha": stop.alpha, "look_every": stop.look_every, "bound": stop.bound},
        "format": CACHE_FORMAT,
        "game": config.game_id,
        "options": {k: repr(v) for k, v in sorted(config.game_options().items())},
        "single_deal": config.single_deal,
        "lineup": config.lineup,
        "agents": [str(a) for a in config.agents],
        "num_deals": config.num_deals,
        "seed": config.seed,
        "engine": engine,
        "whist_env": __version__,
        "files": [f for a in config.agents for f in _files_named(str(a), config.game_id)],
    }


def play_match(
    config: ArenaConfig,
    batched: bool,
    workers: int,
    cache_dir: Path | None,
    progress: bool,
    stop: StopRule | None = None,
) -> tuple[np.ndarray, tuple[int, int], bool, float]:
    """The two agents of ``config`` over its deals: ``(per-deal a − b, illegal actions of each, from the cache,
    wall seconds)``; read from ``cache_dir`` when it holds this match, written there otherwise. With ``stop``, the
    match stops when decided (fewer deals than ``config.num_deals``, the cap)."""
    engine = "batched" if batched else "aec"
    key = _match_key(config, engine, stop)
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:24]
    path = None if cache_dir is None else cache_dir / config.game_id / f"{digest}.json"
    if path is not None and path.is_file():
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            data = None  # a damaged entry is played again
        length = len(data.get("diffs", ())) if data is not None else -1
        if (
            data is not None
            and data.get("key") == key
            and (length == config.num_deals or (stop is not None and length > 0))
        ):
            return np.asarray(data["diffs"], np.float64), tuple(data["illegal"]), True, 0.0  # type: ignore[return-value]
    start = time.perf_counter()
    if batched:
        from whist_env.evaluation.batched import batched_agent, play_batched

        options = config.game_options()
        built = [batched_agent(str(s), config.spec, options, np.random.default_rng([config.seed, 3, j]))
                 for j, s in enumerate(config.agents)]  # fmt: skip
        results, _ = play_batched(config, built, progress=progress, stop=stop)
    else:
        results, _ = play_deals(config, workers=workers, progress=progress, stop=stop)
    wall = time.perf_counter() - start
    scores = np.array([r.scores(2) for r in results], np.float64)
    diffs = scores[:, 0] - scores[:, 1]
    illegal = (sum(r.illegal[0] for r in results), sum(r.illegal[1] for r in results))
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps({"key": key, "diffs": diffs.tolist(), "illegal": list(illegal), "wall_s": round(wall, 3)})
        spare = path.with_suffix(f".{time.time_ns()}.tmp")
        spare.write_text(text, encoding="utf-8")
        spare.replace(path)  # atomic: a ladder stopped half-way leaves no half-written entry
    return diffs, illegal, False, wall


def ladder(
    game_id: GameRef,
    agents: Sequence[str],
    num_deals: int,
    seed: int = 0,
    options: dict[str, Any] | None = None,
    *,
    workers: int = 1,
    single_deal: bool = True,
    lineup: str = "alternate",
    anchor: str | None = None,
    cache_dir: str | Path | None = None,
    engine: str = "auto",
    bootstrap: int = BOOTSTRAP,
    progress: bool = False,
    stop_when_decided: bool = False,
    alpha: float = 0.05,
    look_every: int = 100,
    bonferroni: bool = False,
) -> LadderReport:
    """Play a round robin of ``agents`` on the same duplicate deals and rate them on one scale (module docstring).

    Args:
        game_id: the environment id, or the game's spec.
        agents: two or more distinct agent specs (``random``, ``heuristic``, ``pimc:samples=40``, ``pretrained``,
            ``model:<path>``, ...).
        num_deals: deals per match (the same deals in every match).
        seed: the deals' seed (and the bootstrap's).
        options: the game's options.
        workers: processes for the matches played in the AEC arena.
        single_deal: each episode one deal (the game's ``GameSpec.single_deal``); False: whole episodes (AEC arena).
        lineup: ``"alternate"`` or ``"one_vs_rest"``, as the arena takes it.
        anchor: the agent rated 0 (default: ``random`` if it plays, else the first agent).
        cache_dir: where matches are cached (None: no cache; :func:`default_cache_dir` is ``whist-eval``'s).
        engine: ``"auto"`` (the batched engine where both agents have a batched form), ``"aec"`` (always the AEC
            arena) or ``"batched"`` (always the batched engine: an agent without a batched form is an error).
        bootstrap: resamples of the deals for the intervals.
        progress: one line per match on stderr, and the arena's progress bars.
        stop_when_decided: each match stops at the first look where its anytime-valid interval excludes 0
            (``num_deals`` is the cap; module docstring).
        alpha: with ``stop_when_decided``, the error rate of each match.
        look_every: with ``stop_when_decided``, deals between two looks.
        bonferroni: with ``stop_when_decided``, divide ``alpha`` by the number of matches.

    Raises:
        OptionError: for fewer than two agents, a repeated one, an unknown anchor or engine, or what the arena
            raises (a bad agent spec, option or count).
    """
    specs = [str(a) for a in agents]
    if len(specs) < 2:
        raise OptionError(f"a ladder needs two or more agents, got {specs}")
    if len(set(specs)) != len(specs):
        raise OptionError(f"each agent once on a ladder, got {specs}")
    if isinstance(num_deals, bool) or not isinstance(num_deals, int) or num_deals < 1:
        raise OptionError(f"num_deals must be an int >= 1, got {num_deals!r}")
    if engine not in ("auto", "aec", "batched"):
        raise OptionError(f"engine must be 'auto', 'aec' or 'batched', got {engine!r}")
    anchor = anchor if anchor is not None else ("random" if "random" in specs else specs[0])
    if anchor not in specs:
        raise OptionError(f"the anchor {anchor!r} is not one of the agents {specs}")
    spec = spec_of(game_id)
    cache = None if cache_dir is None else Path(cache_dir)
    start = time.perf_counter()
    pairs = [(a, b) for i, a in enumerate(sorted(specs)) for b in sorted(specs)[i + 1 :]]
    first = ArenaConfig(spec.game_id, pairs[0], num_deals, seed, dict(options or {}), single_deal, lineup, (), spec)
    Arena(first)  # a bad option, lineup or count fails here, before any match
    stop = None
    if stop_when_decided:
        stop = stop_rule(first, alpha, look_every)  # the bound, and checks; then alpha per match
        stop = StopRule(stop.bound, alpha / len(pairs) if bonferroni else alpha, look_every)
    for agent in specs:  # and a bad agent spec: before an hour of other matches, not after
        build_agent(agent, spec, first.game_options())
    played: list[tuple[str, str, str, np.ndarray, tuple[int, int], bool, float]] = []
    for number, (a, b) in enumerate(pairs, 1):
        config = ArenaConfig(spec.game_id, (a, b), num_deals, seed, dict(options or {}), single_deal, lineup, (), spec)
        batched = single_deal and _has_batched_form(a, spec.game_id) and _has_batched_form(b, spec.game_id)
        if engine == "batched" and not batched:
            raise OptionError(
                f"engine='batched': {a} − {b} has no batched form in {spec.game_id} (random, heuristic and "
                "pretrained have one, single deals only); use engine='auto'"
            )
        batched = batched and engine != "aec"
        diffs, illegal, cached, wall = play_match(config, batched, workers, cache, progress, stop)
        if progress:
            how = "from the cache" if cached else f"{wall:.1f} s"
            print(f"ladder {spec.game_id}: match {number}/{len(pairs)} {a} − {b}: {diffs.mean():+.3f} "
                  f"({'batched' if batched else 'aec'}, {how})", file=sys.stderr, flush=True)  # fmt: skip
        played.append((a, b, "batched" if batched else "aec", diffs, illegal, cached, wall))
    index = {name: j for j, name in enumerate(sorted(specs))}  # the fit in a fixed order: the same to the last bit
    ratings, low, high = fit_ratings(
        len(specs), [(index[p[0]], index[p[1]]) for p in played], [p[3] for p in played],
        anchor=index[anchor], bootstrap=bootstrap, seed=seed,
    )  # fmt: skip
    matches = [
        Match(*p, float(p[3].mean() - (ratings[index[p[0]]] - ratings[index[p[1]]])),
              None if stop is None else sequential_result(stop, p[3], num_deals))
        for p in played
    ]  # fmt: skip
    rated = sorted((Rating(s, float(ratings[j]), float(low[j]), float(high[j])) for s, j in index.items()),
                   key=lambda r: (-r.rating, r.name))  # fmt: skip
    stopped = None if stop is None else {"alpha": stop.alpha, "look_every": stop.look_every, "bound": stop.bound}
    cycles = match_cycles(sorted(specs), matches, bootstrap, seed)
    return LadderReport(spec.game_id, first.game_options(), unit_text(first), seed, num_deals, anchor, rated, matches,
                        bootstrap, time.perf_counter() - start, stopped, cycles)  # fmt: skip


def match_cycles(names: Sequence[str], matches: Sequence[Match], bootstrap: int, seed: int) -> CycleReport:
    """α-Rank and the decided cycles (:func:`whist_env.evaluation.cycles.analyse`) of a round robin's ``matches``
    (of the agents ``names``), with the bootstrap draws of the ratings' intervals (the same ``seed``). A match's
    interval is its anytime-valid one when it stopped when decided, else its paired 95% interval."""
    index = {n: j for j, n in enumerate(names)}
    intervals = [
        (m.sequential.low, m.sequential.high) if m.sequential is not None else (m.observed.low, m.observed.high)
        for m in matches
    ]
    draws = resampled_means([m.diffs for m in matches], bootstrap, seed) if bootstrap > 0 else None
    return analyse(
        list(names), [(index[m.a], index[m.b]) for m in matches], np.array([m.diffs.mean() for m in matches]),
        np.array([i[0] for i in intervals]), np.array([i[1] for i in intervals]), draws,
    )  # fmt: skip
