"""Turn a finished training run into the pretrained agent shipped in the package, with its model card.

    python training/ship.py --run runs/german_whist               # export, evaluate, write the card
    python training/ship.py --run runs/german_whist --pimc-deals 1000   # and the rows against PIMC

What it does, in order:

1. exports the run's final ``model.zip`` (the network alone, as a numpy ``.npz`` with its metadata: the game, its
   options and the observation layout's fingerprint) to ``whist_env/pretrained/<game>.npz``;
2. evaluates that file as ``pretrained(path=...)`` -- exactly what ``make_agent("pretrained", game)`` plays once it
   is shipped -- on duplicate deals against ``random`` and ``heuristic`` (``--deals``, 2,000 by default) and, with
   ``--pimc-deals``, against plain ``pimc`` together with the hybrid ``pimc:fallback=pretrained`` against
   ``pimc`` (the same samples and depth: only the fallback differs);
3. writes the model card ``whist_env/pretrained/<game>.md``: the training command, its wall time, the data, the
   evaluation tables, the fingerprint and the file's size.

The evaluation deals come from ``--seed`` (default :data:`REPORT_SEED`, fixed before the shipped agents were
trained), not from the training run's own evaluation seeds, and the run's final weights are shipped (no checkpoint
is picked on the reported deals).
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # `python training/ship.py` from the repository root
    sys.path.insert(0, str(REPO))

from training.config import load_config  # noqa: E402
from whist_env.cli import report_error, report_interrupt  # noqa: E402
from whist_env.errors import OptionError  # noqa: E402

REPORT_SEED = 20261201
"""The seed of the reported deals, fixed before the shipped agents were trained."""

SHIPPED_DIR = REPO / "whist_env" / "pretrained"
MAX_BYTES = 3 * 1024 * 1024


def _row(report: Any, learner: str, opponent: str) -> dict[str, Any]:
    mine = report.agent(learner)
    pair = next(p for p in report.pairs if {p.a, p.b} == {learner, opponent})
    sign = 1.0 if pair.a == learner else -1.0
    return {
        "opponent": opponent,
        "deals": report.num_deals,
        "mean": mine.mean.mean,
        "ci95": mine.mean.half_width,
        "diff": sign * pair.diff.mean,
        "diff_ci95": pair.diff.half_width,
        "win": mine.win,
        "illegal": report.illegal_actions,
        "ms": mine.ms_per_decision,
        "wall_s": report.timing.get("wall_s", float("nan")),
    }


def evaluate_shipped(
    game: str, npz: Path, deals: int, pimc_deals: int, seed: int, workers: int
) -> list[dict[str, Any]]:
    """The evaluation rows of the card: the network against random and heuristic, and the PIMC rows."""
    from whist_env.evaluation import evaluate
    from whist_env.registry import get_spec

    net = f"pretrained(path={npz})"
    rows = []
    for opponent in ("random", "heuristic"):
        report = evaluate(game, [net, opponent], deals, seed, workers=workers, names=["pretrained", opponent],
                          progress=True)  # fmt: skip
        rows.append({"agent": "pretrained", **_row(report, "pretrained", opponent)})
    if pimc_deals and get_spec(game).search is not None:
        report = evaluate(game, [net, "pimc"], pimc_deals, seed, workers=workers, names=["pretrained", "pimc"],
                          progress=True)  # fmt: skip
        rows.append({"agent": "pretrained", **_row(report, "pretrained", "pimc")})
        hybrid = f"pimc(fallback=pretrained(path={npz}))"
        report = evaluate(game, [hybrid, "pimc"], pimc_deals, seed, workers=workers, names=["hybrid", "pimc"],
                          progress=True)  # fmt: skip
        rows.append({"agent": "pimc:fallback=pretrained", **_row(report, "hybrid", "pimc")})
    return rows


def _training_wall_s(run: Path) -> float | None:
    """The run's wall time (the last row of ``eval.csv``: the final evaluation's)."""
    path = run / "eval.csv"
    if not path.exists():
        return None
    rows = list(csv.DictReader(path.open()))
    return float(rows[-1]["wall_s"]) if rows and rows[-1].get("wall_s") else None


def model_card(run: Path, npz: Path, rows: list[dict[str, Any]], seed: int, eval_s: float) -> str:
    """The markdown model card of a shipped agent."""
    from whist_env.fingerprint import read_metadata

    config = load_config(run / "config.yaml")
    meta = read_metadata(npz)
    command = (run / "command.txt").read_text().strip() if (run / "command.txt").exists() else "(not recorded)"
    wall = _training_wall_s(run)
    pre = config.pretrain
    lines = [
        f"# Pretrained agent: {config.game}",
        "",
        f'`make_agent("pretrained", "{config.game}")`: the policy network alone (masked argmax of its logits, '
        "numpy inference; no search, no heuristic, no torch).",
        "",
        "## Training",
        "",
        f"- Command: `{command}` then `python training/ship.py --run {run.as_posix()}`",
        "- Wall time of the training run (data, warm start, PPO, final evaluation) on 2 CPU cores: "
        + (f"{wall / 60:.1f} min" if wall is not None else "not recorded"),
        f"- PPO: {config.total_timesteps:,} learner steps against {dict(config.opponents)}; network "
        f"{list(config.net_arch)}; seed {config.seed}",
    ]
    if pre is not None:
        p = pre.to_dict() if hasattr(pre, "to_dict") else dict(vars(pre))
        lines.append(f"- Warm start: {p}")
    if getattr(config, "canonical_suits", False):
        lines.append("- Suits renamed so that trump is spades before the network sees them (learner side)")
    assert meta is not None
    lines += [
        f"- Game options: {dict(meta.options)}",
        f"- Observation layout fingerprint: `{meta.layout_fingerprint}` ({meta.obs_size} values, "
        f"{meta.num_actions} actions); whist_env {meta.library_version}",
        f"- File: {npz.name}, {npz.stat().st_size / 1e6:.2f} MB",
        "",
        "## Evaluation",
        "",
        f"Duplicate deals (seats rotated) on seed {seed}, fixed before training; the run's final weights (no "
        f"checkpoint chosen on these deals). *learner* is its mean reward per deal, *learner − opponent* the paired "
        f"per-deal difference; 95% Student-t intervals. Evaluation took {eval_s:.0f} s.",
        "",
        "| agent | opponent | deals | learner | learner − opponent | tables won | illegal actions |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['agent']} | {r['opponent']} | {r['deals']:,} | {r['mean']:+.3f} ± {r['ci95']:.3f} | "
            f"{r['diff']:+.3f} ± {r['diff_ci95']:.3f} | {r['win']:.1%} | {r['illegal']} |"
        )
    lines += [
        "",
        "Reproduce a row: `whist-eval {g} --agents pretrained heuristic --deals {d} --seed {s} --workers 2` (and "
        "`random`, `pimc`, `'pimc(fallback=pretrained)' pimc` in place of the agents).".format(
            g=config.game, d=rows[0]["deals"] if rows else 2000, s=seed
        ),
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", required=True, type=Path, help="a finished run directory (with model.zip)")
    parser.add_argument("--out-dir", type=Path, default=SHIPPED_DIR, help="where the .npz and .md go")
    parser.add_argument("--deals", type=int, default=2000, help="duplicate deals against random and heuristic")
    parser.add_argument("--pimc-deals", type=int, default=0, help="duplicate deals against PIMC (0: none)")
    parser.add_argument("--seed", type=int, default=REPORT_SEED, help="seed of the reported deals")
    parser.add_argument("--workers", type=int, default=2, help="arena processes")
    parser.add_argument("--debug", action="store_true", help="show the traceback of an error")
    args = parser.parse_args(argv)
    try:
        return _ship(args)
    except (OptionError, OSError, ValueError) as err:
        if args.debug:
            raise
        return report_error("ship.py", err)
    except KeyboardInterrupt:
        return report_interrupt("ship.py")


def _ship(args: argparse.Namespace) -> int:
    from whist_env.agents.pretrained import export_policy

    model = args.run / "model.zip"
    if not model.exists():
        raise OptionError(f"{model} does not exist: --run must name a finished training run (with model.zip)")
    config = load_config(args.run / "config.yaml")
    npz = export_policy(model, args.out_dir / f"{config.game}.npz", config.game, config.game_options)
    if npz.stat().st_size > MAX_BYTES:
        raise ValueError(f"{npz} is {npz.stat().st_size / 1e6:.1f} MB; shipped weights must stay under 3 MB")
    t0 = time.time()
    rows = evaluate_shipped(config.game, npz, args.deals, args.pimc_deals, args.seed, args.workers)
    card = model_card(args.run, npz, rows, args.seed, time.time() - t0)
    (args.out_dir / f"{config.game}.md").write_text(card)
    print(card)
    return 0


if __name__ == "__main__":
    sys.exit(main())
