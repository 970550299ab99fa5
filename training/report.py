"""What a run writes for people: the evaluation CSV, the learning curve, the markdown report and each phase's time
(:class:`PhaseClock`), the same for every trainer (`train.py`, `ppo_vec.py`, `rllib_selfplay.py`)."""

from __future__ import annotations

import csv
import json
import shlex
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from whist_env.errors import FILE_DAMAGE

EVAL_COLUMNS = (
    "timesteps", "wall_s", "kind", "opponent", "mean", "ci95", "diff", "diff_ci95", "win_rate", "illegal_actions",
    "deals", "unit",
)  # fmt: skip
_INTS = ("timesteps", "illegal_actions", "deals")
_FLOATS = ("wall_s", "mean", "ci95", "diff", "diff_ci95", "win_rate")
TRAINER_NAMES = {
    "sb3": "MaskablePPO",
    "ppo": "masked PPO on the batched engine (`trainer: ppo`)",
    "rllib": "RLlib's PPO, league self-play (`trainer: rllib`)",
}
"""How :func:`write_report` names a config's ``trainer``."""


def write_eval_csv(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    """Write every evaluation row (the whole history: a resumed run rewrites it from its checkpoint)."""
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=EVAL_COLUMNS)
        writer.writeheader()
        for row in rows:
            writer.writerow({k: round(row[k], 5) if isinstance(row[k], float) else row[k] for k in EVAL_COLUMNS})
    tmp.replace(path)


def read_eval_csv(path: Path) -> list[dict[str, Any]]:
    """The rows of an evaluation CSV, with numbers parsed."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    out: list[dict[str, Any]] = []
    for r in rows:
        row: dict[str, Any] = dict(r)
        for k in _INTS:
            row[k] = int(r[k])
        for k in _FLOATS:
            row[k] = float(r[k])
        out.append(row)
    return out


def plot_learning_curve(path: Path, rows: Sequence[dict[str, Any]], title: str) -> None:
    """Mean score ± 95% interval against timesteps, one line per opponent (matplotlib, Agg backend)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for opponent in dict.fromkeys(r["opponent"] for r in rows):
        pts = [r for r in rows if r["opponent"] == opponent and r["kind"] == "periodic"]
        if pts:
            x = [r["timesteps"] for r in pts]
            y = [r["diff"] for r in pts]
            err = [r["diff_ci95"] for r in pts]
            ax.errorbar(x, y, yerr=err, marker="o", ms=3, capsize=2, label=f"vs {opponent} ({pts[0]['deals']:,} deals)")
        finals = [r for r in rows if r["opponent"] == opponent and r["kind"] == "final"]
        for r in finals:
            x, y, err = [r["timesteps"]], [r["diff"]], [r["diff_ci95"]]
            name = f"final evaluation ({r['deals']:,} deals)"
            label = None if name in ax.get_legend_handles_labels()[1] else name
            ax.errorbar(x, y, yerr=err, marker="*", ms=10, color="black", capsize=3, label=label)
    ax.axhline(0.0, color="grey", lw=0.8, ls="--")
    ax.set_xlabel("timesteps (learner decisions)")
    ax.set_ylabel("learner − opponent per deal, 95% CI")
    ax.set_title(title)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="best")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def write_command(run_dir: Path, script: str, argv: Sequence[str] | None) -> str:
    """The command that started the run, ``python training/<script> <argv>`` (``argv`` None: this process's
    ``sys.argv[1:]``), written to ``run_dir/command.txt`` once, so that a resumed run keeps reporting the original
    one; returns the command on record."""
    path = run_dir / "command.txt"
    if not path.exists():
        given = sys.argv[1:] if argv is None else argv
        path.write_text(f"python training/{script} " + " ".join(shlex.quote(a) for a in given) + "\n")
    return path.read_text().strip()


def has_periodic_evaluations(run: Path) -> bool:
    """Whether the run's ``eval.csv`` holds periodic evaluations (those made during training; the report and the
    model card say that the PPO phase's time includes them)."""
    path = run / "eval.csv"
    return path.exists() and any(row["kind"] == "periodic" for row in read_eval_csv(path))


def write_report(
    path: Path,
    config: dict[str, Any],
    finals: Sequence[dict[str, Any]],
    command: str,
    times: str,
    timesteps: int,
    envs: str | None = None,
) -> None:
    """A short markdown report: what was trained, the time of every phase, the final evaluation, how to
    reproduce it (``times``: :meth:`PhaseClock.summary`; ``envs``: how the environments ran, by default
    ``config``'s ``n_envs`` and ``vec_env``)."""
    periodic = " (PPO's includes its periodic evaluations)" if has_periodic_evaluations(path.parent) else ""
    lines = [
        *_what_was_trained(config, timesteps, envs),
        f"- wall time: {times}{periodic}",
        f"- seed {config['seed']}, {envs or _envs(config)}, net {config['net_arch']}"
        + (", warm start (`pretrain`)" if config.get("pretrain") else "")
        + (", canonical suits" if config.get("canonical_suits") else ""),
        "",
        "## Final evaluation (duplicate deals, mean ± 95% CI of the per-deal score)",
        "",
        "| opponent | duplicate deals | learner reward per deal | learner − opponent | tables won | illegal actions |",
        "|---|---|---|---|---|---|",
    ]
    for r in finals:
        lines.append(
            f"| {r['opponent']} | {r['deals']} | {r['mean']:+.3f} ± {r['ci95']:.3f} | {r['diff']:+.3f} ± "
            f"{r['diff_ci95']:.3f} | {r['win_rate']:.1%} | {r['illegal_actions']} |"
        )
    unit = finals[0]["unit"] if finals else "one deal"
    lines += [
        "",
        f"Unit: {unit}. Every deal is replayed with the seats rotated (the arena, `whist_env.evaluation`);",
        'the learner plays its greedy (argmax) action. "learner − opponent" is the paired difference of the two',
        "sides' mean rewards on the same deals: above 0 with its interval means the learner is better.",
        "",
        "![learning curve](learning_curve.png)",
        "",
        "Reproduce:",
        "",
        "```",
        command,
        "```",
        "",
    ]
    path.write_text("\n".join(lines))


def _what_was_trained(config: dict[str, Any], timesteps: int, envs: str | None) -> list[str]:
    """The report's title and its first lines: the trainer, the game and its options, the opponents, the length."""
    trainer = config.get("trainer", "sb3")
    self_play = ""
    if config.get("self_play"):
        self_play = f", self-play (pool {config['self_play_pool']}, weight {config['self_play_weight']})"
    return [
        f"# {config['run_name']}: {TRAINER_NAMES.get(trainer, trainer)} on `{config['game']}`",
        "",
        f"- game options: `{config['game_options'] or {}}`",
        f"- opponents in training: `{config['opponents']}`"
        + (f", partner `{config['partner']}`" if config.get("partner") else "")
        + self_play,
        f"- timesteps: {timesteps:,}",
    ]


def _envs(config: dict[str, Any]) -> str:
    """How the environments ran, from the config (the sb3 and ppo trainers'): ``n_envs`` and ``vec_env``."""
    return f"{config['n_envs']} envs ({config.get('vec_env', 'stepped as one batch')})"


def read_phases(path: Path) -> dict[str, float]:
    """The seconds per phase in a run's ``phases.json``: none without the file, and none, with a warning, for a
    damaged one (cut short by a kill while an older version wrote it, or edited by hand): a resume then loses the
    earlier sessions' times, not the run."""
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except FILE_DAMAGE:
        data = None
    if isinstance(data, dict) and all(type(v) in (int, float) for v in data.values()):
        return {str(k): float(v) for k, v in data.items()}
    print(f"warning: {path} is damaged: the phases' times in it are lost", file=sys.stderr)
    return {}


class PhaseClock:
    """Wall time of each phase of a run, over all its sessions, kept in ``run_dir/phases.json``.

    A resumed run adds its own set-up to the earlier sessions' and keeps their warm start; PPO's time (periodic
    evaluations included) is the callback's, which a checkpoint carries across sessions.
    """

    def __init__(self, path: Path, start: float) -> None:
        self.path = path
        self.seconds = read_phases(path)
        self._t = start  # a ``time.perf_counter()`` reading: the next lap counts from it

    def lap(self, phase: str) -> None:
        """Add the time since the last lap to ``phase``."""
        now = time.perf_counter()
        self.set(phase, self.seconds.get(phase, 0.0) + now - self._t)

    def set(self, phase: str, seconds: float) -> None:
        """Set ``phase``'s time (and restart the lap clock)."""
        self.seconds[phase] = seconds
        self._t = time.perf_counter()
        spare = self.path.with_name(self.path.name + ".tmp")
        spare.write_text(json.dumps(self.seconds, indent=1), encoding="utf-8")
        spare.replace(self.path)  # whole or not at all: a run killed while writing keeps the last times

    def summary(self) -> str:
        """``set-up 0.2 min, warm start 2.6 min, ...; total 8.4 min``."""
        parts = ", ".join(f"{phase} {s / 60:.1f} min" for phase, s in self.seconds.items())
        return f"{parts}; total {sum(self.seconds.values()) / 60:.1f} min"
