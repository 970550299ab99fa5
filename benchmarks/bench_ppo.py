"""End-to-end learner steps/s of ``training/ppo/trainer.py`` against the sb3 path, and where the time goes in each.

    python benchmarks/bench_ppo.py                                  # German Whist, 4 rollouts per path, 2 rounds
    python benchmarks/bench_ppo.py --game classic_whist_v0 --rollouts 3 --rounds 3 --json out.json
    python benchmarks/bench_ppo.py --opponents heuristic            # the heuristic (its numba port on the engine)
    python benchmarks/bench_ppo.py --opponents heuristic --canonical-suits --paths sb3,ppo_vec   # as the recipes
    python benchmarks/bench_ppo.py --view --game oh_hell_v0         # the rollout's renaming and scan alone

Paths (every one: sb3's ``MlpPolicy`` network ``[256, 256]`` tanh, rollouts of 4096 learner decisions, minibatches of
1024, 4 epochs, gamma 1, lambda 0.95, the same opponents (``--opponents``: random, or the heuristic: the Python
agent on the single-agent envs, its numba port, whose decisions are the same, on the batched engine), the same
number of torch threads (``--threads``, 1 by default, as the configs), cpu; with ``--canonical-suits`` the learner
sees trump as spades, as in every recipe: ``sb3`` through the env wrapper, ``ppo_vec`` in its rollouts' view):

* ``sb3``: ``training/train.py``'s path: ``MaskablePPO`` on 16 ``SingleAgentWhistEnv`` in a ``DummyVecEnv`` (the
  configs' ``vec_env``), ``n_steps`` 256;
* ``sb3_engine``: the same ``MaskablePPO`` on the batched engine through ``whist_env.learning.sb3_vec`` (256 envs, 16
  steps);
* ``ppo_vec``: ``training/ppo/trainer.py`` on the batched engine (256 envs, 16 steps).

The paths run one after the other within a round, and rounds repeat, so that a machine shared with other work loads
them alike; both wall and CPU seconds (this process's) are reported. The breakdown: ``env`` (stepping, with the
opponents and the action masks), ``forward`` (the policy in rollouts: the rest of the rollout collection) and
``update`` (PPO's epochs); what is left of the wall time (set-up of a ``learn()`` call, logging) is ``other``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

ROLLOUT = 4096
HYPER: dict[str, Any] = {"batch_size": 1024, "n_epochs": 4, "gamma": 1.0, "gae_lambda": 0.95, "clip_range": 0.2,
                         "ent_coef": 0.01, "vf_coef": 0.5, "max_grad_norm": 0.5}  # fmt: skip
PATHS = ("sb3", "sb3_engine", "ppo_vec")


class Clock:
    """Wall and CPU seconds per phase, gathered by wrapping methods."""

    def __init__(self) -> None:
        self.wall: dict[str, float] = {}
        self.cpu: dict[str, float] = {}

    def wrap(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            w, c = time.perf_counter(), time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                self.wall[name] = self.wall.get(name, 0.0) + time.perf_counter() - w
                self.cpu[name] = self.cpu.get(name, 0.0) + time.process_time() - c

        return timed


def run_sb3(
    game: str, steps: int, engine: bool, seed: int, opponents: str, threads: int, canonical: bool = False
) -> dict[str, Any]:
    """``MaskablePPO`` for ``steps`` decisions on the single-agent envs (``engine`` False) or the batched engine."""
    import torch

    from training.config import from_dict
    from training.sb3.envs import build_vec_env
    from whist_env.learning.sb3 import make_ppo

    torch.set_num_threads(threads)
    if engine:
        from gymnasium.vector import AutoresetMode

        from whist_env.learning.sb3_vec import as_sb3_vec_env
        from whist_env.vector import make_learner_env

        venv: Any = as_sb3_vec_env(
            make_learner_env(
                game, 256, opponents=opponents, learner_seat="random", seed=seed, autoreset_mode=AutoresetMode.SAME_STEP
            )
        )
        n_steps = 16
    else:
        config = from_dict({"game": game, "n_envs": 16, "opponents": {opponents: 1.0}, "seed": seed,
                            "eval_opponents": ["random"], "canonical_suits": canonical})  # fmt: skip
        venv = build_vec_env(config)
        n_steps = 256
    clock = Clock()
    venv.step_wait = clock.wrap("env", venv.step_wait)
    venv.env_method = clock.wrap("env", venv.env_method)  # MaskablePPO reads the masks through it
    model = make_ppo(venv, seed=seed, net_arch=[256, 256], learning_rate=3e-4, n_steps=n_steps, **HYPER)
    model.collect_rollouts = clock.wrap("rollout", model.collect_rollouts)
    model.train = clock.wrap("update", model.train)
    w, c = time.perf_counter(), time.process_time()
    model.learn(total_timesteps=steps)
    wall, cpu = time.perf_counter() - w, time.process_time() - c
    assert model.num_timesteps == steps, model.num_timesteps
    breakdown = {k: (clock.wall.get(k, 0.0), clock.cpu.get(k, 0.0)) for k in ("env", "rollout", "update")}
    (rollout_wall, rollout_cpu), (env_wall, env_cpu) = breakdown.pop("rollout"), breakdown["env"]
    breakdown["forward"] = (rollout_wall - env_wall, rollout_cpu - env_cpu)
    venv.close()
    return {"wall_s": wall, "cpu_s": cpu, "breakdown": breakdown}


def run_ppo_vec(
    game: str, steps: int, seed: int, opponents: str, threads: int, canonical: bool = False
) -> dict[str, Any]:
    """``training/ppo/trainer.py``'s trainer for ``steps`` decisions (no run directory: no checkpoint, no log)."""
    from training.config import PPOVecConfig, config_from_dict
    from training.ppo.loop import PPOVec

    values = {"game": game, "n_envs": 256, "n_steps": 16, "total_timesteps": steps, "seed": seed, "device": "cpu",
              "learning_rate": 3e-4, "net_arch": [256, 256], "opponents": {opponents: 1.0}, "torch_threads": threads,
              "canonical_suits": canonical, **HYPER}  # fmt: skip
    config = config_from_dict(PPOVecConfig, values)
    trainer = PPOVec(config)
    w, c = time.perf_counter(), time.process_time()
    trainer.train()
    wall, cpu = time.perf_counter() - w, time.process_time() - c
    assert trainer.num_timesteps == steps, trainer.num_timesteps
    t = trainer.timers
    return {"wall_s": wall, "cpu_s": cpu, "breakdown": {k: (t.wall[k], t.cpu[k]) for k in t.wall}}


def bench_view(game: str, opponents: str, repeats: int = 3, calls: int = 160) -> dict[str, float]:
    """``--view``: microseconds to turn one rollout step's 256 env rows into what ppo_vec's network reads, with the
    suits renamed: the dense way (``LearnerView.forward``, then ``SparseRows.of`` of the renamed rows) and the one
    the rollout takes (``LearnerView.sparse``: scan the env's rows, rename the found columns), and the scan alone
    (best of ``repeats`` × ``calls``, on 16 rows of engine positions)."""
    import numpy as np
    import torch
    from gymnasium.vector import AutoresetMode

    from training.ppo.rollout import LearnerView
    from whist_env.learning.net import SparseRows
    from whist_env.vector import make_learner_env

    torch.set_num_threads(1)
    cpu = torch.device("cpu")
    env = make_learner_env(game, 256, opponents=opponents, seed=0, autoreset_mode=AutoresetMode.SAME_STEP)
    obs, _ = env.reset(seed=0)
    view = LearnerView(game, {}, canonical_suits=True)
    rng = np.random.default_rng(0)
    steps = []
    for _ in range(16):
        mask = env.action_masks()
        steps.append((obs.copy(), mask.copy()))
        obs, *_ = env.step(np.array([rng.choice(np.flatnonzero(m)) for m in mask]))
    ways = {
        "dense": lambda o, m: SparseRows.of(torch.as_tensor(view.forward(o, m)[0])),
        "sparse": lambda o, m: view.sparse(o, m, cpu),
        "scan": lambda o, m: SparseRows.of(torch.as_tensor(o)),
    }
    out = {}
    for name, fn in ways.items():
        fn(*steps[0])  # compile
        best = float("inf")
        for _ in range(repeats):
            w = time.perf_counter()
            for i in range(calls):
                fn(*steps[i % len(steps)])
            best = min(best, (time.perf_counter() - w) / calls)
        out[name] = best * 1e6
    return out


def run_path(
    path: str, game: str, steps: int, seed: int, opponents: str, threads: int, canonical: bool = False
) -> dict[str, Any]:
    if path == "ppo_vec":
        return run_ppo_vec(game, steps, seed, opponents, threads, canonical)
    return run_sb3(game, steps, path == "sb3_engine", seed, opponents, threads, canonical)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--game", default="german_whist_v0")
    p.add_argument("--rollouts", type=int, default=4, help="rollouts of 4096 decisions per path and round")
    p.add_argument("--rounds", type=int, default=2, help="rounds of the paths, interleaved")
    p.add_argument("--paths", default=",".join(PATHS), help=f"comma-separated, of {', '.join(PATHS)}")
    p.add_argument("--opponents", default="random", choices=("random", "heuristic"), help="who plays the other seats")
    p.add_argument("--threads", type=int, default=1, help="torch threads of every path")
    p.add_argument("--canonical-suits", action="store_true", help="the learner sees trump as spades (sb3, ppo_vec)")
    p.add_argument("--view", action="store_true", help="time the rollout's renaming and scan alone (µs per step)")
    p.add_argument("--json", type=Path, help="also write the raw results here")
    args = p.parse_args(argv)
    if args.view:
        us = bench_view(args.game, args.opponents)
        saved = (us["dense"] - us["sparse"]) / 256
        print("| game | dense rename, then scan | scan, then rename the columns | saved per decision | scan alone |")
        print(
            f"| {args.game} | {us['dense']:,.0f} µs | {us['sparse']:,.0f} µs | {saved:.1f} µs | {us['scan']:,.0f} µs |"
        )
        return 0
    paths = args.paths.split(",")
    bad = [x for x in paths if x not in PATHS]
    if bad:
        p.error(f"--paths: unknown path(s) {bad}; known: {', '.join(PATHS)}")
    if args.canonical_suits and "sb3_engine" in paths:
        p.error("--canonical-suits: the sb3_engine path has no suit renaming; give --paths sb3,ppo_vec")
    steps = args.rollouts * ROLLOUT
    for path in paths:  # warm-up: numba's kernels, torch's first calls, the encoders' tables
        run_path(path, args.game, ROLLOUT, 99, args.opponents, args.threads, args.canonical_suits)
    results: dict[str, list[dict[str, Any]]] = {x: [] for x in paths}
    for r in range(args.rounds):
        for path in paths:
            out = run_path(path, args.game, steps, r, args.opponents, args.threads, args.canonical_suits)
            results[path].append(out)
            print(f"round {r} {path:>10}: {steps / out['wall_s']:8,.0f} steps/s wall, {steps / out['cpu_s']:8,.0f} "
                  f"steps/CPU-s", file=sys.stderr, flush=True)  # fmt: skip
    print(f"\n{args.game}: {steps:,} learner steps per run, {args.rounds} rounds (median per path), opponents "
          f"{args.opponents}, {args.threads} torch thread(s), canonical suits {args.canonical_suits}\n")  # fmt: skip
    print("| path | steps/s (wall) | steps per CPU-s | env wall / CPU s | forward wall / CPU s | update wall / CPU s |"
          " other wall s |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|---:|")
    import statistics

    for path in paths:
        runs = sorted(results[path], key=lambda o: o["wall_s"])
        mid = runs[len(runs) // 2]
        b = mid["breakdown"]
        other = mid["wall_s"] - sum(v[0] for v in b.values())
        cells = " | ".join(f"{b[k][0]:.1f} / {b[k][1]:.1f}" for k in ("env", "forward", "update"))
        cpu = statistics.median(steps / o["cpu_s"] for o in runs)
        print(f"| {path} | {steps / mid['wall_s']:,.0f} | {cpu:,.0f} | {cells} | {other:.1f} |")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
