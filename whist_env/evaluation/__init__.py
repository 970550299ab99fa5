"""Evaluation: an arena that plays agents against each other over seeded, duplicated deals.

    >>> from whist_env.evaluation import evaluate
    >>> report = evaluate("classic_whist_v0", ["heuristic", "random"], num_deals=2000, seed=0, workers=2)
    >>> print(report.to_markdown())

See :mod:`whist_env.evaluation.arena` for the method (duplicate deals, seat rotation, the unit
compared per game, how the intervals are computed) and ``whist-eval --help`` for the command line.

The rest of the room: :mod:`~whist_env.evaluation.batched` (the same arena on the batched engine),
:mod:`~whist_env.evaluation.ladder` (ratings of many agents), :mod:`~whist_env.evaluation.report` (the report and
its intervals), the classroom arena (:mod:`~whist_env.evaluation.protocol`, :mod:`~whist_env.evaluation.bot`,
:mod:`~whist_env.evaluation.referee`, :mod:`~whist_env.evaluation.tournament`,
:mod:`~whist_env.evaluation.conformance`) and :mod:`~whist_env.evaluation.workers` (worker processes that leave
Ctrl-C to their parent).
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from whist_env.evaluation.arena import (
        Arena,
        ArenaConfig,
        DealResult,
        TableResult,
        evaluate,
        play_deals,
        seat_assignments,
        summarise,
    )
    from whist_env.evaluation.ladder import LadderReport, ladder
    from whist_env.evaluation.report import AgentResult, ArenaReport, PairResult, summary_table
    from whist_env.evaluation.stats import MeanCI, mean_ci, paired_ci, t_quantile_975

# Imported on first use: a bot process imports whist_env.evaluation.bot, and needs neither the arena nor the ladder
# (their imports, multiprocessing's included, are a fifth of its start).
_HOME = {
    **dict.fromkeys(
        (
            "Arena",
            "ArenaConfig",
            "DealResult",
            "TableResult",
            "evaluate",
            "play_deals",
            "seat_assignments",
            "summarise",
        ),
        "whist_env.evaluation.arena",
    ),
    **dict.fromkeys(("LadderReport", "ladder"), "whist_env.evaluation.ladder"),
    **dict.fromkeys(("AgentResult", "ArenaReport", "PairResult", "summary_table"), "whist_env.evaluation.report"),
    **dict.fromkeys(("MeanCI", "mean_ci", "paired_ci", "t_quantile_975"), "whist_env.evaluation.stats"),
}


def __getattr__(name: str):  # noqa: ANN202
    if name in _HOME:
        import importlib

        value = getattr(importlib.import_module(_HOME[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'whist_env.evaluation' has no attribute {name!r}")


__all__ = [
    "AgentResult",
    "Arena",
    "ArenaConfig",
    "ArenaReport",
    "DealResult",
    "LadderReport",
    "MeanCI",
    "PairResult",
    "TableResult",
    "evaluate",
    "ladder",
    "mean_ci",
    "paired_ci",
    "play_deals",
    "seat_assignments",
    "summarise",
    "summary_table",
    "t_quantile_975",
]
