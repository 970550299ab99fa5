"""Speed of the rule-based opponents: their ending solved by the plain ``endgame.solve`` and by ``solve_fast``.

    python benchmarks/bench_heuristic.py decisions --decisions 4000 --repeats 3
    python benchmarks/bench_heuristic.py profile --steps 20480

``decisions`` plays the heuristic against itself in every seat (the same seeded deals for both solvers)
and prints heuristic decisions per CPU second per game, the endings solved by the plain twin and by the
compiled kernel alternately, medians of ``--repeats`` runs. Only ``act()`` is timed, not the rules.

``profile`` trains MaskablePPO on German Whist as ``configs/german_whist.yaml`` does (16 environments,
the heuristic in 70% of the opponent seats; no evaluation, no checkpoints) for ``--steps`` steps under
cProfile, once with each solver after a warm-up run, and prints the share of the time spent in the
heuristic opponents and in their ending, with the steps per CPU second of the same run without the
profiler (CPU time: the machines here are shared; the profile keeps cProfile's own clock). It needs the
``train`` extra (torch, sb3-contrib) and the ``search`` extra (numba).

The first ``solve_fast`` compiles the kernel (or loads it from numba's cache): that happens before the
timings. The plain solve's memo is cleared before each of its runs, as in a fresh process.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from whist_env.agents import endgame, heuristic_for
from whist_env.registry import game_ids, get_spec

ROOT = Path(__file__).resolve().parents[1]
# Humbug's ending is solved only where the opponent's hand is known: always with the table open.
EXTRA_ROWS: list[tuple[str, str, dict[str, Any]]] = [("humbug_v0 open_table", "humbug_v0", {"mode": "open_table"})]


@contextmanager
def ending(solver: str) -> Iterator[None]:
    """The heuristics solve their endings with ``solver`` ("plain" or "fast") inside the block."""
    fast = endgame.solve_fast
    if solver == "plain":
        endgame.lead_value.cache_clear()
        endgame.solve_fast = endgame.solve
    try:
        yield
    finally:
        endgame.solve_fast = fast


def heuristic_rate(game_id: str, options: dict[str, Any], decisions: int, seed: int) -> float:
    """Heuristic decisions per CPU second (the process's time: the machine may be shared)."""
    game = get_spec(game_id).make_rules(**options)
    agents = [heuristic_for(game_id, **options) for _ in range(game.num_players)]
    rng = np.random.default_rng(seed)
    spent = 0.0
    done = 0
    while done < decisions:
        state = game.new_episode(rng)
        while not state.done and done < decisions:
            seat = state.to_act
            view = game.view(state, seat)
            start = time.process_time()
            action = agents[seat].act(view, rng)
            spent += time.process_time() - start
            game.step(state, action, rng)
            done += 1
    return done / spent


def bench_decisions(decisions: int, repeats: int) -> None:
    endgame.solve_fast(1, 2, None)  # compile (or load) the kernel first
    rows = [(g, g, dict(get_spec(g).single_deal)) for g in game_ids()] + EXTRA_ROWS
    print(f"heuristic self-play, {decisions} decisions per run, median of {repeats} runs (decisions per CPU second)")
    print(f"{'game':<24} {'plain':>9} {'fast':>9} {'speed-up':>9}")
    for label, game_id, options in rows:
        rates: dict[str, list[float]] = {"plain": [], "fast": []}
        for _ in range(repeats):
            for solver in ("plain", "fast"):
                with ending(solver):
                    rates[solver].append(heuristic_rate(game_id, options, decisions, seed=0))
        plain, fast = statistics.median(rates["plain"]), statistics.median(rates["fast"])
        print(f"{label:<24} {plain:>9.0f} {fast:>9.0f} {fast / plain:>8.2f}x", flush=True)


def _cumulative(stats: pstats.Stats, file_end: str, names: tuple[str, ...]) -> float:
    """Cumulative seconds of the profiled functions called ``names`` in a file ending with ``file_end``."""
    total = 0.0
    for (file, _, name), (_, _, _, cumulative, _) in stats.stats.items():  # type: ignore[attr-defined]
        if file.endswith(file_end) and name in names:
            total += cumulative
    return total


def _train() -> Callable[[int], None]:
    """A function that trains a fresh MaskablePPO for a number of steps on the German Whist config."""
    import torch

    from training.config import load_config
    from training.sb3.envs import build_vec_env
    from whist_env.learning.sb3 import make_ppo

    config = load_config(ROOT / "configs" / "german_whist.yaml")
    torch.set_num_threads(config.torch_threads)

    def run(steps: int) -> None:
        model = make_ppo(
            build_vec_env(config),
            seed=config.seed,
            net_arch=config.net_arch,
            learning_rate=config.learning_rate,
            lr_schedule=config.lr_schedule,
            n_steps=config.n_steps,
            batch_size=config.batch_size,
            n_epochs=config.n_epochs,
            gamma=config.gamma,
            gae_lambda=config.gae_lambda,
            ent_coef=config.ent_coef,
        )
        model.learn(total_timesteps=steps)

    return run


def bench_profile(steps: int) -> None:
    run = _train()
    run(4096)  # warm up: imports, torch's first calls, the kernel's compilation
    print(f"MaskablePPO on configs/german_whist.yaml, {steps} steps per run")
    print(f"{'ending':<8} {'steps/cpu-s':>11} {'profiled s':>10} {'heuristic':>10} {'ending':>8}")
    for solver in ("plain", "fast"):
        with ending(solver):
            start = time.process_time()
            run(steps)
            rate = steps / (time.process_time() - start)
        with ending(solver):
            # cProfile's default (wall) clock: a CPU-time clock costs so much per call that it would inflate the
            # plain solve's many small calls
            profiler = cProfile.Profile()
            profiler.runcall(run, steps)
        stats = pstats.Stats(profiler)
        total = stats.total_tt  # type: ignore[attr-defined]
        heuristic = _cumulative(stats, "agents/heuristic.py", ("act",))
        solve = _cumulative(stats, "agents/endgame.py", ("solve_fast",) if solver == "fast" else ("solve",))
        print(
            f"{solver:<8} {rate:>11.0f} {total:>10.1f} {heuristic / total:>10.1%} {solve / total:>8.1%}",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    d = sub.add_parser("decisions", help="heuristic decisions per second, plain and fast ending")
    d.add_argument("--decisions", type=int, default=4000)
    d.add_argument("--repeats", type=int, default=3)
    p = sub.add_parser("profile", help="share of the heuristic and its ending in a short MaskablePPO run")
    p.add_argument("--steps", type=int, default=20480)
    args = parser.parse_args()
    if args.what == "decisions":
        bench_decisions(args.decisions, args.repeats)
    else:
        bench_profile(args.steps)


if __name__ == "__main__":
    main()
