"""RLlib's env steps/s on this machine: the AEC env runners against the batched engine's, and ppo_vec beside them.

    python benchmarks/bench_rllib.py                              # German Whist, every row, one run
    python benchmarks/bench_rllib.py --rows engine:1,engine:2 --iterations 12 --json out.json

Every RLlib row runs ``configs/rllib_<game>.yaml`` as it is (the PPO settings: 4,000 env steps per iteration,
minibatches of 512, 4 epochs, ``[256, 256]``; the league: main 0.4, snapshots 0.4, heuristic 0.1, random 0.1,
snapshots every 5 iterations; one learner in the driver with the config's torch threads), changing only where the
env runners play:

* ``aec:K``: ``engine: aec``, K env runners each stepping one Python AEC game (``WhistMultiAgentEnv``), every seat
  main or a snapshot plays reaching RLlib;
* ``rllib:K``: ``engine: batched`` with RLlib's own ``SingleAgentEnvRunner`` stepping the league env
  (``EngineLeagueEnv``, the config's tables per runner) through Gymnasium's vector entry point;
* ``engine:K``: ``engine: batched`` with :class:`whist_env.learning.rllib.engine_runner.EngineEnvRunner` (what the
  training script uses);
* a ``:plain`` suffix (``engine:1:plain``): the same row with RLlib's own ``PPOTorchLearner`` in place of the
  training script's :class:`whist_env.learning.rllib.learner.WhistPPOLearner`, to measure what that learner saves;
* ``ppo_vec``: ``training/ppo/trainer.py``'s trainer, the same network shape, PPO settings and tables, against the
  heuristic, for comparison.

For each RLlib row: the env steps of ``algo.train()`` per second of its wall time (the median over the iterations
after the first), and of them the decisions that enter the train batch, main's (every env step in ``engine`` and
``rllib`` rows; in ``aec`` rows as RLlib counts main's module steps), the sampling rate per runner (env steps over the
iteration's sampling time) and the learner's share of the iteration (its ``learner_group.update``), both timed in
each iteration by wrapping the two calls of PPO's ``training_step`` (RLlib's own timers are moving averages, which
lag behind the first, slow iteration). Between iterations the league's
numpy copy of main is refreshed in every runner, as the training script does; that is timed apart (``refresh_s``).
"""

from __future__ import annotations

import argparse
import gc
import json
import logging
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

ROWS = ("aec:1", "aec:2", "rllib:1", "engine:1", "engine:2", "ppo_vec")


def run_rllib(game: str, kind: str, runners: int, iterations: int, plain: bool = False) -> dict[str, Any]:
    """One RLlib row: a fresh local Ray, the config's algorithm, ``iterations`` calls of ``algo.train()``."""
    import ray
    import torch

    from training.rllib.config import load_rllib_config
    from training.rllib.trainer import build_algorithm, refresh_main, set_env_snapshots, take_snapshot

    engine = "aec" if kind == "aec" else "batched"
    overrides: dict[str, Any] = {"engine": engine, "num_env_runners": runners}
    if engine == "aec":
        overrides["num_envs_per_env_runner"] = 1
    config = load_rllib_config(REPO / "configs" / f"rllib_{game.removesuffix('_v0')}.yaml", overrides)
    torch.set_num_threads(config.torch_threads)
    env_vars = {"OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO)}
    ray.init(address="local", num_cpus=max(2, runners + 1), include_dashboard=False, logging_level=logging.WARNING,
             runtime_env={"env_vars": env_vars})  # fmt: skip
    try:
        algo = build_algorithm(config, runner=kind, learner="rllib" if plain else "whist")  # runner: batched rows only
        spent = _time_phases(algo)
        league: dict[str, Any] = {"iteration": 0, "snapshots": 0, "next_slot": 0}
        if engine == "batched":
            refresh_main(algo, config)
        rows = []
        for it in range(1, iterations + 1):
            spent.update(sampling=0.0, learner=0.0)
            start = time.perf_counter()
            result = algo.train()
            wall = time.perf_counter() - start
            steps = int(result["env_runners"]["num_env_steps_sampled"])
            modules = result["env_runners"].get("num_module_steps_sampled", {})
            trained = int(modules.get("main", modules.get("default_policy", steps)))  # the learning module's steps
            start = time.perf_counter()
            if engine == "batched":
                refresh_main(algo, config)
            if config.snapshot_pool and it % config.snapshot_every == 0:
                take_snapshot(algo, config, league, config.snapshot_pool)
                set_env_snapshots(algo, league["snapshots"])
            rows.append({
                "steps": steps, "trained": trained, "wall_s": wall, "refresh_s": time.perf_counter() - start,
                "sampling_s": spent["sampling"], "learner_s": spent["learner"],
            })  # fmt: skip
            print(f"  {kind}:{runners} iteration {it}: {steps} steps ({trained} main's) in {wall:.2f} s", flush=True)
        algo.stop()
    finally:
        ray.shutdown()
        gc.unfreeze()  # build_algorithm froze the heap: let the next row's collector reach this row's algorithm
    kept = rows[1:] or rows
    per_runner = [r["steps"] / max(runners, 1) / r["sampling_s"] for r in kept if r["sampling_s"] > 0]
    return {
        "row": f"{kind}:{runners}" + (":plain" if plain else ""),
        "steps_per_s": statistics.median(r["steps"] / r["wall_s"] for r in kept),
        "trained_per_s": statistics.median(r["trained"] / r["wall_s"] for r in kept),
        "range": [min(r["steps"] / r["wall_s"] for r in kept), max(r["steps"] / r["wall_s"] for r in kept)],
        "sampling_per_runner_per_s": statistics.median(per_runner) if per_runner else None,
        "learner_share": statistics.median(r["learner_s"] / r["wall_s"] for r in kept),
        "refresh_s": statistics.median(r["refresh_s"] for r in kept),
        "iterations": rows,
    }


_SPENT = {"sampling": 0.0, "learner": 0.0}
"""The seconds the current iteration spent sampling and in the learner's update (reset before each iteration)."""


def _timed(fn: Any, key: str) -> Any:
    """``fn``, adding the seconds each call takes to ``_SPENT[key]``."""

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            _SPENT[key] += time.perf_counter() - start

    wrapper.timed = True  # type: ignore[attr-defined]
    return wrapper


def _time_phases(algo: Any) -> dict[str, float]:
    """Time the sampling and the learner's update of ``algo``'s PPO ``training_step`` into :data:`_SPENT`."""
    from ray.rllib.algorithms.ppo import ppo

    if not hasattr(ppo.synchronous_parallel_sample, "timed"):  # the function PPO's training_step calls, once
        ppo.synchronous_parallel_sample = _timed(ppo.synchronous_parallel_sample, "sampling")
    algo.learner_group.update = _timed(algo.learner_group.update, "learner")
    return _SPENT


def run_ppo_vec(game: str, steps: int) -> dict[str, Any]:
    """``training/ppo/trainer.py`` with the RLlib config's network shape, PPO settings and tables, against the
    heuristic."""
    from training.config import PPOVecConfig, config_from_dict
    from training.ppo.loop import PPOVec

    values = {"game": game, "n_envs": 64, "n_steps": 64, "total_timesteps": steps, "seed": 0, "device": "cpu",
              "learning_rate": 3e-4, "net_arch": [256, 256], "opponents": {"heuristic": 1.0}, "torch_threads": 2,
              "batch_size": 512, "n_epochs": 4, "gamma": 1.0, "gae_lambda": 0.95, "clip_range": 0.2, "ent_coef": 0.01,
              "vf_coef": 0.5, "max_grad_norm": 0.5}  # fmt: skip
    trainer = PPOVec(config_from_dict(PPOVecConfig, values))
    start = time.perf_counter()
    trainer.train()
    wall = time.perf_counter() - start
    t = trainer.timers
    rate = trainer.num_timesteps / wall
    share = t.wall.get("update", 0) / wall
    return {"row": "ppo_vec", "steps_per_s": rate, "trained_per_s": rate, "learner_share": share}


def line(r: dict[str, Any]) -> str:
    """One row of the markdown table."""
    rng = f" ({r['range'][0]:,.0f}–{r['range'][1]:,.0f})" if "range" in r else ""
    rate = r.get("sampling_per_runner_per_s")
    sampling = f"{rate:,.0f}" if rate else "–"
    return (f"| {r['row']} | {r['steps_per_s']:,.0f}{rng} | {r['trained_per_s']:,.0f} | {sampling} | "
            f"{r['learner_share']:.0%} |")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--game", default="german_whist_v0")
    p.add_argument("--rows", default=",".join(ROWS), help=f"comma-separated, of {', '.join(ROWS)}")
    p.add_argument("--iterations", type=int, default=8, help="algo.train() calls per batched row (aec rows: half)")
    p.add_argument("--json", type=Path, help="also write the raw results here")
    args = p.parse_args(argv)
    os.environ.setdefault("RAY_DEDUP_LOGS", "1")
    results = []
    for row in args.rows.split(","):
        print(f"{row} ...", flush=True)
        if row == "ppo_vec":
            results.append(run_ppo_vec(args.game, 4096 * args.iterations))
            continue
        kind, runners, *plain = row.split(":")
        iters = max(2, args.iterations // 2) if kind == "aec" else args.iterations
        results.append(run_rllib(args.game, kind, int(runners), iters, plain=plain == ["plain"]))
        print(line(results[-1]), flush=True)
    print(f"\n{args.game}, {os.cpu_count()} cores\n")
    print("| row | env steps/s of algo.train() (median, range) | of them main's (train batch) | sampling per runner "
          "(steps/s) | learner share |")  # fmt: skip
    print("|---|---:|---:|---:|---:|")
    for r in results:
        print(line(r))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
