"""Turn a finished training run into the pretrained agent shipped in the package, with its model card.

    python training/ship.py --run runs/german_whist_s0                      # export, evaluate, write the card
    python training/ship.py --run runs/german_whist_s0 --pimc-deals 1000    # and the rows against PIMC
    python training/ship.py --run runs/german_whist_s0 --card-only          # rewrite the card from the saved rows

What it does, in order:

1. exports the run's final network (the actor alone, as a numpy ``.npz`` with its metadata: the game, its options
   and the observation layout's fingerprint) to the file its spec names (``GameSpec.pretrained``:
   ``whist_env/games/<name>/pretrained.npz``): an sb3 run's ``model.zip``, or the ``policy.npz`` a run of the fast
   path (``trainer: ppo``) exported at its end;
2. evaluates that file as ``pretrained(path=...)`` -- exactly what ``make_agent("pretrained", game)`` plays once it
   is shipped -- on duplicate deals against ``random`` and ``heuristic`` (``--deals``, 2,000 by default) and, with
   ``--pimc-deals``, against plain ``pimc`` together with the hybrid ``pimc:fallback=pretrained`` against
   ``pimc`` (the same samples and depth: only the fallback differs);
3. writes the model card beside it (``model_card.md``): the training command, its wall time, the data, the
   evaluation tables, the fingerprint and the file's size. The evaluation is also kept in the run
   (``ship_eval.json``, keyed by the network's weights, the deals and the seed), so ``--card-only`` can rewrite the
   card without playing again.

The evaluation deals come from ``--seed`` (default :data:`REPORT_SEED`, fixed before the shipped agents were
trained), not from the training run's own evaluation seeds, and the run's final weights are shipped (no checkpoint
is picked on the reported deals).
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # `python training/ship.py` from the repository root
    sys.path.insert(0, str(REPO))

from whist_env.cli.demo import report_error, report_interrupt  # noqa: E402
from whist_env.errors import OptionError  # noqa: E402

REPORT_SEED = 20261201
"""The seed of the reported deals, fixed before the shipped agents were trained."""

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
    from training.evaluation import lineup_for
    from whist_env.evaluation import evaluate
    from whist_env.registry import get_spec

    net = f"pretrained(path={npz})"
    lineup = lineup_for(game, dict(get_spec(game).single_deal))  # as in training: alone against the rest in Oh Hell

    def row(label: str, agent: str, opponent: str, n: int) -> dict[str, Any]:
        name = "hybrid" if label != "pretrained" else "pretrained"
        report = evaluate(game, [agent, opponent], n, seed, workers=workers, names=[name, opponent], lineup=lineup,
                          progress=True)  # fmt: skip
        return {"agent": label, **_row(report, name, opponent)}

    rows = [row("pretrained", net, opponent, deals) for opponent in ("random", "heuristic")]
    if pimc_deals and get_spec(game).searchable:
        rows.append(row("pretrained", net, "pimc", pimc_deals))
        rows.append(row("pimc:fallback=pretrained", f"pimc(fallback=pretrained(path={npz}))", "pimc", pimc_deals))
    return rows


def _eval_rows(run: Path) -> list[dict[str, str]]:
    """The rows of the run's ``eval.csv`` as written (none without the file)."""
    path = run / "eval.csv"
    if not path.exists():
        return []
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def _training_wall_s(run: Path) -> float | None:
    """The run's wall time (the last row of ``eval.csv``: the final evaluation's)."""
    rows = _eval_rows(run)
    return float(rows[-1]["wall_s"]) if rows and rows[-1].get("wall_s") else None


def _git_commit() -> str:
    import subprocess

    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return "(not a git checkout)"
    return out.stdout.strip()


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def _time_line(run: Path, ppo_wall: float | None) -> str:
    """The run's wall time in words: every phase of ``phases.json`` (what each trainer's ``PhaseClock`` writes), or,
    for a run older than it, the warm start (``pretrain.json``) plus PPO and the final evaluation."""
    from training.report import has_periodic_evaluations, read_phases

    phases = read_phases(run / "phases.json")
    if phases:
        parts = ", ".join(f"{name} {seconds / 60:.1f} min" for name, seconds in phases.items())
        if has_periodic_evaluations(run):
            parts += " (PPO's includes its periodic evaluations)"
        return (
            f"{sum(phases.values()) / 60:.1f} min of wall time on 2 CPU cores ({_cpu_model()}): {parts}. Whether the "
            "machine was idle: docs/results_training.md."
        )
    warm = None
    if (run / "pretrain.json").exists():
        warm = float(json.loads((run / "pretrain.json").read_text()).get("seconds", 0.0))
    if ppo_wall is None:
        return "(not recorded)"
    total = ppo_wall + (warm or 0.0)
    parts = f"warm start (data generation, cloning, DAgger) {warm / 60:.1f} min, " if warm is not None else ""
    return (
        f"{total / 60:.1f} min of wall time on 2 CPU cores ({_cpu_model()}): {parts}PPO fine-tuning and the run's own "
        f"final evaluation {ppo_wall / 60:.1f} min. The machine was shared with other work while it ran (see "
        "docs/results_training.md for the CPU time)."
    )


_NETWORKS = {
    "sb3": "MaskablePPO `MlpPolicy`",
    "ppo": "the fast path's (`training/ppo/trainer.py`: sb3's `MlpPolicy` in plain torch, `whist_env.learning.net`)",
}


def _lineup_flag(game: str) -> str:
    from training.evaluation import lineup_for
    from whist_env.registry import get_spec

    lineup = lineup_for(game, dict(get_spec(game).single_deal))
    return (
        ""
        if lineup == "alternate"
        else f" --lineup {lineup} (the network alone against the opponent in every other seat)"
    )


def _default_options_line(game: str, fingerprint: str) -> str:
    """What happens at the game's default options (whole games)."""
    from whist_env.fingerprint import ModelMetadata
    from whist_env.registry import get_spec

    single = ", ".join(f"{k}={v!r}" for k, v in get_spec(game).single_deal.items())
    defaults = ModelMetadata.for_game(game)
    if dict(defaults.options) == dict(ModelMetadata.for_game(game, get_spec(game).single_deal).options):
        return "These single-deal options are the game's defaults."
    if defaults.layout_fingerprint == fingerprint:
        return "The game's default options (whole games) have the same layout and load with a warning."
    return (
        f"The game's default options have another observation layout and are refused: play single deals ({single}), "
        "as the arena and `whist-eval` do (`whist-play --option` for each)."
    )


def portable_command(run: Path) -> str:
    """The run's ``command.txt`` as a card quotes it: the runs folder of the machine it ran on (``--runs-dir
    /somewhere``) becomes the default ``runs/``, so that the command works from any clone."""
    path = run / "command.txt"
    if not path.exists():
        return "(not recorded)"
    command = path.read_text().strip()
    for folder in {str(run.parent), str(run.resolve().parent)}:
        command = command.replace(f" --runs-dir {folder}", "").replace(f"{folder}/", "runs/")
    return command


def model_card(run: Path, npz: Path, rows: list[dict[str, Any]], seed: int, eval_s: float) -> str:
    """The markdown model card of a shipped agent (the fields of docs/model_card_template.md), section by section."""
    from whist_env.fingerprint import read_metadata

    config = run_config(run)
    meta = read_metadata(npz)
    if meta is None:
        raise OptionError(f"{npz} has no metadata: export it with whist_env.agents.pretrained.export_policy")
    lines = [
        *_card_summary(config, meta, npz),
        *_card_fingerprint(meta),
        *_card_command(run, config, rows, seed),
        *_card_data(config),
        *_card_evaluation(config.game, rows, seed, eval_s),
        *_card_limitations(config.game, meta, rows),
    ]
    return "\n".join(lines)


def _card_summary(config: Any, meta: Any, npz: Path) -> list[str]:
    """The card's title and its table: the game, how to play the agent, the network, the file, the version."""
    from whist_env.registry import get_spec

    game = config.game
    hybrid = "; the hybrid: `pimc:fallback=pretrained`" if get_spec(game).searchable else ""
    return [
        f"# Model card: `{game}` pretrained policy",
        "",
        "| | |",
        "|---|---|",
        f"| Game | `{game}` |",
        f'| Agent | `make_agent("pretrained", "{game}")`: the network alone (masked argmax, numpy; no search, no '
        f"heuristic, no torch){hybrid} |",
        f"| Network | {_NETWORKS[config.trainer]} actor, hidden layers `{list(config.net_arch)}`, `Tanh`; "
        f"{meta.obs_size} observations → {meta.num_actions} actions"
        + ("; suits renamed so that trump is spades before the network sees them |" if meta.canonical_suits else " |"),
        f"| File | `{_shown(npz)}`, {npz.stat().st_size / 1024:.0f} kB (at most 3 MB) |",
        f"| whist_env version | `{meta.library_version}` |",
        "",
    ]


def _card_fingerprint(meta: Any) -> list[str]:
    """The metadata stored in the file, which every loader checks."""
    return [
        "## Fingerprint",
        "",
        "The metadata stored in the file (`whist_env.fingerprint.read_metadata(path)`); a game played with other",
        "options or another observation layout refuses it.",
        "",
        "| | |",
        "|---|---|",
        f"| Layout fingerprint | `{meta.layout_fingerprint}` |",
        f"| Options | `{dict(meta.options)}` |",
        f"| Observation size / actions | {meta.obs_size} / {meta.num_actions} |",
        f"| Canonical suits | {meta.canonical_suits} |",
        "",
    ]


def _card_command(run: Path, config: Any, rows: list[dict[str, Any]], seed: int) -> list[str]:
    """The commands that trained and shipped the agent, the commit, the seeds and the time they took."""
    pimc = [r["deals"] for r in rows if r["opponent"] == "pimc"]
    ship = f"python training/ship.py --run runs/{run.name} --deals {rows[0]['deals'] if rows else 0}"
    ship += (f" --pimc-deals {pimc[0]}" if pimc else "") + f" --seed {seed}"
    return [
        "## Training command",
        "",
        "```bash",
        portable_command(run),
        ship,
        "```",
        "",
        f"Card written at git commit `{_git_commit()}`. Seeds: training seed {config.seed} (the shipped run; every "
        "seed run is in docs/results_training.md).",
        "",
        "## Time on 2 cores",
        "",
        _time_line(run, _training_wall_s(run)),
        "",
    ]


def _card_data(config: Any) -> list[str]:
    """The warm start's teacher and data, and PPO's fine-tuning."""
    pre = config.pretrain
    opponents = ", ".join(f"{name} {weight:g}" for name, weight in dict(config.opponents).items())
    if pre is not None:
        teacher = (
            f"- Teacher and dataset: {pre.teacher} self-play, {pre.deals:,} deals, cloned for {pre.epochs} epochs; "
            f"relabelling (DAgger) rounds {pre.relabel_rounds} of {pre.relabel_deals:,} deals, "
            f"{pre.relabel_epochs} epochs each."
        )
    else:
        teacher = "- No warm start: PPO from random weights."
    return [
        "## Data",
        "",
        teacher,
        f"- Fine-tuning: {config.total_timesteps:,} environment steps against {opponents}; learning rate "
        f"{config.learning_rate:g} ({config.lr_schedule}), clip {config.clip_range:g}, minibatches of "
        f"{config.batch_size}, {config.n_epochs} epochs per rollout of {config.n_envs} × {config.n_steps} steps, "
        f"entropy bonus {config.ent_coef:g}.",
        "- Checkpoint choice: none; the run's final weights are shipped, so no deal chose them.",
        "",
    ]


def _card_evaluation(game: str, rows: list[dict[str, Any]], seed: int, eval_s: float) -> list[str]:
    """How the agent was evaluated, and the table of its results."""
    alone = "; the network plays alone against the opponent in every other seat, as in training"
    lines = [
        "## Evaluation",
        "",
        f"Duplicate deals (seats rotated), reported deals on seed {seed} fixed before the final runs; mean score per "
        "deal of the pretrained network and its difference from its opponent's on the same deals (paired), with 95% "
        f"Student-t intervals (`whist-eval {game} --agents pretrained <opponent> --deals <n> --seed {seed}"
        f"{_lineup_flag(game)}`)" + (alone if _lineup_flag(game) else "") + f". The evaluation took {eval_s / 60:.1f} "
        "min.",
        "",
        "| Agent | Opponent | Deals | Agent's score | Agent − opponent | Tables won | Illegal actions |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| `{r['agent']}` | {r['opponent']} | {r['deals']:,} | {r['mean']:+.3f} ± {r['ci95']:.3f} | "
            f"{r['diff']:+.3f} ± {r['diff_ci95']:.3f} | {r['win']:.1%} | {r['illegal']} |"
        )
    return lines


def _card_limitations(game: str, meta: Any, rows: list[dict[str, Any]]) -> list[str]:
    """What the evaluation says, pair by pair, and the options the agent is for."""
    verdicts = []
    for r in rows:
        low, high = r["diff"] - r["diff_ci95"], r["diff"] + r["diff_ci95"]
        word = "beats" if low > 0 else "loses to" if high < 0 else "is even with (the interval holds 0)"
        verdicts.append(f"`{r['agent']}` {word} {r['opponent']}")
    return [
        "",
        "## Limitations",
        "",
        "- " + "; ".join(verdicts) + ".",
        "- Trained for the options above only; other options that change the observation are refused. "
        + _default_options_line(game, meta.layout_fingerprint),
        "",
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", required=True, type=Path, help="a finished run directory (model.zip or policy.npz)")
    parser.add_argument(
        "--out-dir",
        type=Path,
        default=None,
        help="where pretrained.npz and model_card.md go (default: the game's folder)",
    )
    parser.add_argument("--deals", type=int, default=2000, help="duplicate deals against random and heuristic")
    parser.add_argument("--pimc-deals", type=int, default=0, help="duplicate deals against PIMC (0: none)")
    parser.add_argument("--seed", type=int, default=REPORT_SEED, help="seed of the reported deals")
    parser.add_argument("--workers", type=int, default=2, help="arena processes")
    parser.add_argument("--card-only", action="store_true", help="rewrite the card from the run's saved evaluation")
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


def _shown(path: Path) -> str:
    """A path as the card shows it: relative to the repository where it lies inside it."""
    return path.resolve().relative_to(REPO).as_posix() if path.resolve().is_relative_to(REPO) else path.name


def _targets(game_id: str, out_dir: Path | None) -> tuple[Path, Path]:
    """Where the weights and the card go: ``out_dir``, or the files the game's spec names."""
    from whist_env.registry import get_spec
    from whist_env.spec import MODEL_CARD

    spec = get_spec(game_id)
    if out_dir is not None:
        return out_dir / Path(
            spec.pretrained.split(":")[1] if spec.pretrained else "pretrained.npz"
        ), out_dir / MODEL_CARD
    weights, card = spec.pretrained_file(), spec.model_card_file()
    if weights is None or card is None:
        raise OptionError(f"{game_id}'s spec names no shipped weights (GameSpec.pretrained): pass --out-dir")
    return Path(str(weights)), Path(str(card))


def _weights_digest(npz: Path) -> str:
    """A digest of the network's arrays (not of the file: the zip's timestamps differ between two exports)."""
    import numpy as np

    digest = hashlib.sha256()
    with np.load(npz, allow_pickle=False) as data:
        for name in sorted(f for f in data.files if not f.endswith(".json")):  # the arrays, not the metadata
            digest.update(name.encode())
            digest.update(np.ascontiguousarray(data[name]).tobytes())
    return digest.hexdigest()


def run_config(run: Path) -> Any:
    """The run's saved ``config.yaml`` as its trainer's config class: ``TrainConfig`` (sb3) or ``PPOVecConfig``
    (``trainer: ppo``, the fast path)."""
    import yaml

    from training.config import PPOVecConfig, TrainConfig, load_config_as

    path = run / "config.yaml"
    if not path.is_file():
        raise OptionError(f"{path} does not exist: --run must name a training run's directory")
    try:
        values = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, ValueError, RecursionError):  # load_config_as below says what is wrong
        values = None
    trainer = values.get("trainer", "sb3") if isinstance(values, dict) else "sb3"
    if trainer not in ("sb3", "ppo"):
        raise OptionError(f"{run} was trained by trainer {trainer!r}; ship.py ships the runs of trainers sb3 and ppo")
    return load_config_as(PPOVecConfig if trainer == "ppo" else TrainConfig, path)


def _final_network(run: Path, config: Any) -> Any:
    """The run's final network: sb3's ``model.zip``, or the ``policy.npz`` a ``trainer: ppo`` run exported at its
    end, checked against the run's game and options."""
    from whist_env.agents.pretrained import load_policy

    if config.trainer == "sb3" and (run / "model.zip").exists():
        return run / "model.zip"
    if config.trainer == "ppo" and (run / "policy.npz").exists() and (run / "report.md").exists():  # finished
        return load_policy(run / "policy.npz", config.game, config.game_options)
    wanted = "model.zip" if config.trainer == "sb3" else "policy.npz and report.md"
    raise OptionError(f"{run} holds no final network: --run must name a finished training run (with {wanted})")


def _ship(args: argparse.Namespace) -> int:
    from whist_env.agents.pretrained import export_policy

    for flag, value, least in (("--deals", args.deals, 1), ("--pimc-deals", args.pimc_deals, 0),
                               ("--seed", args.seed, 0), ("--workers", args.workers, 1)):  # fmt: skip
        if value < least:  # before anything is exported or played
            raise OptionError(f"{flag} must be at least {least}, got {value}")
    config = run_config(args.run)
    npz, card_path = _targets(config.game, args.out_dir)
    if not args.card_only:
        # sb3's model.zip carries its canonical_suits; a policy.npz's actor is renamed as its run's config says
        canonical = config.canonical_suits if config.trainer == "ppo" else None
        npz = export_policy(_final_network(args.run, config), npz, config.game, config.game_options, canonical)
    if npz.stat().st_size > MAX_BYTES:
        raise ValueError(f"{npz} is {npz.stat().st_size / 1e6:.1f} MB; shipped weights must stay under 3 MB")
    # The evaluation is kept in the run: --card-only rewrites the card from it (same file, deals and seed).
    saved = args.run / "ship_eval.json"
    key = {"weights_sha256": _weights_digest(npz), "deals": args.deals,
           "pimc_deals": args.pimc_deals, "seed": args.seed}  # fmt: skip
    if args.card_only:
        record = json.loads(saved.read_text()) if saved.exists() else {}
        if record.get("key") != key:
            raise OptionError(f"--card-only: {saved} holds no evaluation of this file with these --deals/--seed")
        rows, eval_s = record["rows"], record["seconds"]
    else:
        t0 = time.time()
        rows = evaluate_shipped(config.game, npz, args.deals, args.pimc_deals, args.seed, args.workers)
        eval_s = time.time() - t0
        saved.write_text(json.dumps({"key": key, "rows": rows, "seconds": eval_s}, indent=1))
    card = model_card(args.run, npz, rows, args.seed, eval_s)
    card_path.write_text(card)
    print(card)
    return 0


if __name__ == "__main__":
    sys.exit(main())
