"""Time to strength: how long a trainer takes, from the start of its run, to a checkpoint that beats the heuristic.

    python benchmarks/bench_time_to_strength.py --game german_whist --trainer ppo
    python benchmarks/bench_time_to_strength.py --game classic_whist --trainer sb3 --budget-min 30 --json out.json

The run is the game's shipped recipe for the trainer, started as a user starts it (``python training/train.py
--config ...``, a process of its own): ``configs/ppo_vec_<game>_warm.yaml`` for ``ppo`` (warm start on the batched
engine, then PPO against the heuristic), ``configs/<game>.yaml`` for ``sb3`` (the same recipe on sb3-contrib's
MaskablePPO). Both are given the same evaluation: every ``--eval-freq`` learner steps (and at the start of PPO, right
after the warm start), 2,000 duplicate deals against the heuristic, the same deals each time, with a checkpoint at the
same steps. This script watches the run's ``eval.csv``. An evaluation whose 95% interval of learner − heuristic lies
wholly above 0 is a candidate: its checkpoint is copied aside and played again, while the run goes on, on
``--confirm-deals`` fresh duplicate deals (``--confirm-seed``) on the batched arena, in a process of this script's.
The first candidate whose fresh interval is also wholly above 0 stops the clock at its evaluation: the wall time
since the run's process started (set-up, warm start, PPO and the evaluations so far, everything the user waits for)
and the CPU time of the run's processes (the trainer and its children, read from ``/proc``: Linux only; the
confirmations are not counted). Many evaluations of one run on the same deals make a lucky pass likely, which is why
a pass needs the fresh deals too; the unconfirmed ones are listed. No confirmed pass within ``--budget-min`` minutes:
"not reached" (the budget counts the same wall time).

Measure one run at a time on an otherwise idle machine: two jobs on 2 cores halve each other. The results are in
``docs/results_training.md`` ("Time to strength").
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

TRAINERS = ("ppo", "sb3")
GAMES = ("german_whist", "classic_whist", "humbug", "humbug_whist", "oh_hell")


def config_path(game: str, trainer: str) -> Path:
    """The shipped recipe of ``game`` for ``trainer``."""
    return REPO / "configs" / (f"ppo_vec_{game}_warm.yaml" if trainer == "ppo" else f"{game}.yaml")


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid``, its live descendants, and its children that have ended (Linux
    ``/proc``; 0 for a process that is gone)."""
    tick = os.sysconf("SC_CLK_TCK")
    stats: dict[int, list[str]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                text = (entry / "stat").read_text()
            except OSError:
                continue
            stats[int(entry.name)] = text[text.rindex(")") + 2 :].split()  # the fields after "(name)"
    tree, frontier = {pid}, [pid]
    while frontier:
        parent = frontier.pop()
        kids = [p for p, f in stats.items() if int(f[1]) == parent and p not in tree]
        tree.update(kids)
        frontier += kids
    total = 0.0
    for p in tree & stats.keys():
        f = stats[p]  # fields 14-17 of stat(5), here 11-14: utime, stime, cutime, cstime
        total += sum(int(x) for x in f[11:15]) / tick
    return total


def passing(row: dict[str, Any]) -> bool:
    """The whole 95% interval of learner − heuristic above 0."""
    return bool(row["diff"] - row["diff_ci95"] > 0)


def confirm(run_dir: Path, trainer: str, step: int, deals: int, seed: int) -> dict[str, Any]:
    """The checkpoint at ``step`` against the heuristic on ``deals`` fresh duplicate deals (the batched arena;
    ``run_dir``: where ``config.yaml`` and ``checkpoints/step_<n>`` or ``step_<n>`` lie)."""
    from training.config import load_config_as
    from training.evaluation import evaluate_learner

    ckpt = run_dir / f"step_{step:012d}"
    with tempfile.TemporaryDirectory() as tmp:
        npz = Path(tmp) / "policy.npz"
        if trainer == "ppo":
            import torch

            from training.config import PPOVecConfig
            from training.ppo.loop import CHECKPOINT_FILE
            from whist_env.learning.net import build_actor_critic, export_actor
            from whist_env.registry import get_spec

            config: Any = load_config_as(PPOVecConfig, run_dir / "config.yaml")
            state = torch.load(ckpt / CHECKPOINT_FILE, map_location="cpu", weights_only=False)
            spec = get_spec(config.game)
            rules = spec.make_rules(**config.game_options)
            obs_size = spec.make_encoder(rules).layout.size
            model = build_actor_critic(obs_size, rules.num_actions, list(config.net_arch))
            model.load_state_dict(state["model"])
            export_actor(model, npz, config.game, config.game_options, config.canonical_suits)
        else:
            from training.config import TrainConfig
            from whist_env.agents.pretrained import export_policy

            config = load_config_as(TrainConfig, run_dir / "config.yaml")
            export_policy(ckpt / "model.zip", npz, config.game, config.game_options)
        return evaluate_learner(
            config.game, dict(config.game_options), f"pretrained(path={npz})", "heuristic", deals, seed, batched=True
        )


def measure(args: argparse.Namespace) -> dict[str, Any]:
    """One run of one trainer on one game (see the module docstring)."""
    from training.report import read_eval_csv

    runs = Path(args.runs_dir)
    name = f"tts_{args.game}_{args.trainer}_s{args.seed}"
    run_dir = runs / name
    sets = {
        "eval_freq": args.eval_freq,
        "eval_deals": 2000,
        "eval_opponents": "[heuristic]",
        "checkpoint_freq": args.eval_freq,
        "keep_checkpoints": 20,  # a candidate's is copied aside at once
        "total_timesteps": 50_000_000,  # the budget ends the run, or its first pass
    }
    if args.trainer == "ppo":
        sets["final_eval_deals"] = 0
    command = [
        sys.executable, str(REPO / "training" / "train.py"), "--config", str(config_path(args.game, args.trainer)),
        "--runs-dir", str(runs), "--run-name", name, "--seed", str(args.seed), "--overwrite",
    ]  # fmt: skip
    for key, value in sets.items():
        command += ["--set", f"{key}={value}"]
    shutil.rmtree(run_dir, ignore_errors=True)  # an earlier run's eval.csv must not be read as this one's
    load_before = os.getloadavg()
    log = open(runs / f"{name}.log", "w")  # noqa: SIM115  (open while the run lasts)
    t0 = time.monotonic()
    proc = subprocess.Popen(command, cwd=REPO, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    seen: list[dict[str, Any]] = []
    waiting: list[dict[str, Any]] = []  # candidates whose checkpoint is not written yet
    checks: dict[int, tuple[dict[str, Any], Any]] = {}  # step -> (its row, the future of its confirmation)
    unconfirmed: list[dict[str, Any]] = []
    found: dict[str, Any] | None = None
    cpu = 0.0
    aside = run_dir.parent / f"{name}_candidates"
    shutil.rmtree(aside, ignore_errors=True)
    pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))
    try:
        while found is None and time.monotonic() - t0 < args.budget_min * 60:
            cpu = max(cpu, cpu_seconds(proc.pid))
            csv = run_dir / "eval.csv"
            rows = [r for r in read_eval_csv(csv) if r["kind"] == "periodic"] if csv.exists() else []
            for row in rows[len(seen) :]:
                row = {**row, "since_start_s": round(time.monotonic() - t0, 1), "cpu_s": round(cpu, 1)}
                seen.append(row)
                print(f"  {row['timesteps']:>9,} steps  {row['since_start_s']:7.1f} s  learner − heuristic "
                      f"{row['diff']:+.3f} ± {row['diff_ci95']:.3f}", flush=True)  # fmt: skip
                if passing(row):
                    waiting.append(row)
            for row in list(waiting):
                ckpt = run_dir / "checkpoints" / f"step_{row['timesteps']:012d}"
                if ckpt.exists():
                    time.sleep(0.2)  # the directory is moved into place whole; its files are written
                    shutil.copytree(ckpt, aside / ckpt.name)
                    shutil.copy(run_dir / "config.yaml", aside / "config.yaml")
                    waiting.remove(row)
                    checks[row["timesteps"]] = (row, pool.submit(
                        confirm, aside, args.trainer, row["timesteps"], args.confirm_deals, args.confirm_seed
                    ))  # fmt: skip
            for step, (row, future) in sorted(checks.items()):
                if future.done():
                    del checks[step]
                    fresh = future.result()
                    print(f"  candidate at {step:,} steps on {fresh['deals']:,} fresh deals: "
                          f"{fresh['diff']:+.3f} ± {fresh['diff_ci95']:.3f}", flush=True)  # fmt: skip
                    if passing(fresh) and found is None:
                        found = {**row, "confirm": fresh}
                    elif not passing(fresh):
                        unconfirmed.append({**row, "confirm": fresh})
            if proc.poll() is not None and not checks and not waiting:
                break
            time.sleep(0.5)
    finally:
        pool.shutdown(cancel_futures=True)
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        log.close()
    result: dict[str, Any] = {
        "game": args.game,
        "trainer": args.trainer,
        "seed": args.seed,
        "config": str(config_path(args.game, args.trainer).relative_to(REPO)),
        "eval_freq": args.eval_freq,
        "budget_min": args.budget_min,
        "load_before": [round(x, 2) for x in load_before],
        "load_after": [round(x, 2) for x in os.getloadavg()],
        "evaluations": seen,
        "phases_s": json.loads((run_dir / "phases.json").read_text()) if (run_dir / "phases.json").exists() else {},
        "reached": found is not None,
        "unconfirmed": unconfirmed,
    }
    if found is not None:
        result["wall_s"] = found["since_start_s"]
        result["cpu_s"] = found["cpu_s"]
        result["timesteps"] = found["timesteps"]
        result["at_pass"] = {k: found[k] for k in ("diff", "diff_ci95", "deals")}
        result["confirm"] = found["confirm"]
        result["confirm_seed"] = args.confirm_seed
    return result


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--game", choices=GAMES, required=True)
    p.add_argument("--trainer", choices=TRAINERS, required=True)
    p.add_argument("--seed", type=int, default=0, help="the training seed (default 0)")
    p.add_argument("--eval-freq", type=int, default=50_000, help="learner steps between evaluations (default 50,000)")
    p.add_argument("--budget-min", type=float, default=30.0, help="wall minutes before 'not reached' (default 30)")
    p.add_argument("--confirm-deals", type=int, default=2000)
    p.add_argument("--confirm-seed", type=int, default=20261202)
    p.add_argument("--runs-dir", default="runs", help="where the run directory goes (default runs)")
    p.add_argument("--json", type=Path, help="append the result as one JSON line to this file")
    args = p.parse_args(argv)
    Path(args.runs_dir).mkdir(parents=True, exist_ok=True)
    result = measure(args)
    if result["reached"]:
        c = result["confirm"]
        print(f"{args.game} {args.trainer}: above the heuristic after {result['wall_s'] / 60:.1f} min wall, "
              f"{result['cpu_s'] / 60:.1f} CPU-min ({result['timesteps']:,} PPO steps); confirmed on "
              f"{c['deals']:,} fresh deals: {c['diff']:+.3f} ± {c['diff_ci95']:.3f}")  # fmt: skip
    else:
        print(f"{args.game} {args.trainer}: not reached within {args.budget_min:g} min")
    if args.json is not None:
        with open(args.json, "a") as f:
            f.write(json.dumps(result) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
