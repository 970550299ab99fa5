"""The result of an arena run: per-agent means with 95% intervals, pairwise differences, JSON and markdown."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

from whist_env.evaluation.sequential import SequentialResult
from whist_env.evaluation.stats import MeanCI


def _sequential_dict(seq: SequentialResult) -> dict[str, Any]:
    return {
        "low": round(seq.low, 6),
        "high": round(seq.high, 6),
        "deals": seq.deals,
        "max_deals": seq.cap,
        "alpha": seq.alpha,
        "verdict": seq.verdict,
    }


def _ci_dict(ci: MeanCI) -> dict[str, Any]:
    def num(x: float) -> float | None:
        return None if math.isnan(x) or math.isinf(x) else round(x, 6)

    return {"mean": num(ci.mean), "ci95": num(ci.half_width), "low": num(ci.low), "high": num(ci.high), "n": ci.n}


@dataclass(frozen=True)
class AgentResult:
    """One agent's results.

    Attributes:
        name: its label in the report.
        spec: how it was given (``"heuristic"``, ``"random"``, ``"model:…"``, a class name).
        mean: its mean reward per deal (over its seats and the replays) with the 95% interval.
        win: share of tables it won (its mean return there higher than every other agent's).
        draw: share of tables where it tied for the highest.
        loss: share of the other tables.
        illegal: illegal actions it played (must be 0).
        decisions: decisions it took.
        ms_per_decision: milliseconds per decision spent in its ``act`` (timing).
    """

    name: str
    spec: str
    mean: MeanCI
    win: float
    draw: float
    loss: float
    illegal: int
    decisions: int
    ms_per_decision: float


@dataclass(frozen=True)
class PairResult:
    """The paired difference ``a − b`` of two agents' per-deal scores, with its 95% interval, and, in a run that
    stopped when decided, its anytime-valid interval (:mod:`whist_env.evaluation.sequential`), the one whose
    verdict keeps its error rate after stopping."""

    a: str
    b: str
    diff: MeanCI
    sequential: SequentialResult | None = None


@dataclass
class ArenaReport:
    """Everything an arena run found. ``timing`` is the only part that changes between identical runs; ``stop`` holds
    the stopping rule of a run that stopped when decided (``alpha`` per pair, ``look_every``, the per-deal ``bound``,
    ``max_deals``), None for a fixed number of deals."""

    game_id: str
    options: dict[str, Any]
    unit: str
    seed: int
    num_deals: int
    tables_per_deal: int
    lineup: str
    agents: list[AgentResult]
    pairs: list[PairResult]
    timing: dict[str, Any] = field(default_factory=dict)
    stop: dict[str, Any] | None = None

    @property
    def illegal_actions(self) -> int:
        """Illegal actions over all agents."""
        return sum(a.illegal for a in self.agents)

    def agent(self, name: str) -> AgentResult:
        """The result of the agent labelled ``name``."""
        for a in self.agents:
            if a.name == name:
                return a
        raise KeyError(f"no agent {name!r} in this report; agents: {[a.name for a in self.agents]}")

    def to_dict(self, timing: bool = True) -> dict[str, Any]:
        """A JSON-ready dict (``timing=False`` leaves out the wall-clock part, for comparing runs)."""
        out: dict[str, Any] = {
            "game": self.game_id,
            "options": self.options,
            "unit": self.unit,
            "seed": self.seed,
            "num_deals": self.num_deals,
            "tables_per_deal": self.tables_per_deal,
            "lineup": self.lineup,
            "method": (
                "duplicate deals with seats rotated; per-agent mean over per-deal scores and paired per-deal "
                "differences, 95% Student-t intervals"
            ),
            "agents": [
                {
                    "name": a.name,
                    "spec": a.spec,
                    "mean_reward": _ci_dict(a.mean),
                    "win": round(a.win, 6),
                    "draw": round(a.draw, 6),
                    "loss": round(a.loss, 6),
                    "illegal_actions": a.illegal,
                    "decisions": a.decisions,
                }
                for a in self.agents
            ],
            "differences": [
                {"a": p.a, "b": p.b, **_ci_dict(p.diff)}
                | ({"anytime_valid": _sequential_dict(p.sequential)} if p.sequential else {})
                for p in self.pairs
            ],
            "illegal_actions": self.illegal_actions,
        }
        if self.stop is not None:
            out["stop_when_decided"] = dict(self.stop)
        if timing:
            out["timing"] = {
                **self.timing,
                "ms_per_decision": {a.name: round(a.ms_per_decision, 4) for a in self.agents},
            }
        return out

    def to_json(self, timing: bool = True) -> str:
        """The report as indented JSON."""
        return json.dumps(self.to_dict(timing), indent=2, ensure_ascii=False)

    def to_markdown(self) -> str:
        """The report as a markdown table, one row per agent, then the differences."""
        opts = ", ".join(f"{k}={v!r}" for k, v in self.options.items()) or "defaults"
        lines = [
            f"**{self.game_id}** ({opts}); {self.num_deals} deals × {self.tables_per_deal} duplicate tables, "
            f"seed {self.seed}; unit: {self.unit}",
            "",
            "| agent | mean reward (95% CI) | win | draw | loss | illegal | ms/decision |",
            "|---|---|---|---|---|---|---|",
        ]
        for a in self.agents:
            lines.append(
                f"| {a.name} | {a.mean.text()} | {a.win:.1%} | {a.draw:.1%} | {a.loss:.1%} | {a.illegal} | "
                f"{a.ms_per_decision:.3f} |"
            )
        lines.append("")
        if self.stop is not None:
            lines.insert(
                1,
                f"Stopped when decided: {self.num_deals} of at most {self.stop['max_deals']} deals, looks every "
                f"{self.stop['look_every']} deals, alpha {self.stop['alpha']:.3g} per pair, per-deal bound "
                f"±{self.stop['bound']:g}.",
            )
        for p in self.pairs:
            verdict = "excludes 0" if p.diff.excludes_zero() else "contains 0"
            line = f"- {p.a} − {p.b}: {p.diff.text()} (paired over deals; interval {verdict})"
            if p.sequential is not None:
                s = p.sequential
                line += f"; anytime-valid [{s.low:+.3f}, {s.high:+.3f}], verdict: {s.verdict}"
            lines.append(line)
        if self.timing:
            t = self.timing
            lines.append(
                f"- throughput: {t.get('deals_per_s')} deals/s, {t.get('decisions_per_s')} decisions/s "
                f"({t.get('workers')} worker(s), {t.get('wall_s')} s)"
            )
        return "\n".join(lines)


def summary_table(reports: list[ArenaReport]) -> str:
    """One markdown row per report, for two-agent comparisons: ``A − B`` with its interval, and A's record."""
    lines = [
        "| game | unit | A | B | A − B (95% CI) | A mean | B mean | A win / draw / loss | illegal | deals/s |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in reports:
        a, b = r.agents[0], r.agents[1]
        diff = r.pairs[0].diff
        lines.append(
            f"| `{r.game_id}` | {r.unit} | {a.name} | {b.name} | **{diff.text()}** | {a.mean.text()} | "
            f"{b.mean.text()} | {a.win:.1%} / {a.draw:.1%} / {a.loss:.1%} | {r.illegal_actions} | "
            f"{r.timing.get('deals_per_s')} |"
        )
    return "\n".join(lines)
