"""One table of the library's speed, each row saying what it counts: the page ``docs/results_speed.md`` is its output.

Rows (German Whist unless said; every rate the median of ``--repeats`` runs of ``--seconds``, one process, one
thread; pin it to one core, ``taskset -c 0``, with the other core idle):

* the AEC loop: ``make(game)`` (``env()``, the default wrapper), random legal play through ``agent_iter``, ``last()``
  and ``step()``, decisions per second, every game (``bench_aec.py``'s loop);
* the rules alone: ``game.step`` with random legal cards and no observation, decisions per second and whole random
  playouts (episodes) per second, every game (``bench_aec.py``'s rules loop);
* the batched engine: ``whist_env.vector`` at B = 1,024, random legal actions drawn in numpy, decisions per
  CPU-second of ``step()`` alone (it always writes the acting seat's observation and mask: there is no mode without)
  and of the whole loop, and whole random playouts per second (``bench_vector.py``'s loop);
* the learner: ``training/ppo/trainer.py``'s trainer against random opponents (256 envs, 16 steps, ``[256, 256]``,
  4 epochs), learner steps per wall second, set-up excluded (``bench_ppo.py``'s ``run_ppo_vec``);
* the arena: the shipped network against the heuristic on duplicate deals, deals per wall second, on the batched
  arena and on the AEC arena with one worker;
* peers, where they import: OpenSpiel's ``oh_hell`` (its C++ game driven from Python: ``apply_action`` on a random
  legal action, no observation) and PettingZoo's classic ``leduc_holdem_v4`` and ``texas_holdem_v4`` (RLCard's
  games; random legal play through the same AEC loop), with their versions.

    pip install -e ".[train,bench]"
    taskset -c 0 python benchmarks/bench_speed.py --seconds 2 --repeats 3 > /tmp/speed.md
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import os
import platform
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

import bench_aec  # noqa: E402
import bench_vector  # noqa: E402

from whist_env.registry import game_ids, get_spec  # noqa: E402

GAME = "german_whist_v0"


def cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines() if Path("/proc/cpuinfo").exists() else []:
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown CPU"


def commit() -> str:
    out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE, capture_output=True, text=True)
    git_status = ["git", "status", "--porcelain", "--", "whist_env"]
    dirty = subprocess.run(git_status, cwd=HERE, capture_output=True, text=True)
    return out.stdout.strip() + (" (with uncommitted changes to whist_env/)" if dirty.stdout.strip() else "")


def version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "?"


def median_rate(fn: Callable[[float], float], seconds: float, repeats: int) -> float:
    return statistics.median(fn(seconds) for _ in range(repeats))


def per_second(loop: Callable[[float], int]) -> Callable[[float], float]:
    """``loop(seconds) -> count`` as a rate over the wall time it took."""

    def run(seconds: float) -> float:
        t0 = time.perf_counter()
        return loop(seconds) / (time.perf_counter() - t0)

    return run


def decisions_per_episode(game_id: str, episodes: int = 200) -> float:
    """The mean number of decisions in a random episode of ``game_id`` at its defaults."""
    game = get_spec(game_id).make_rules()
    rng = np.random.default_rng(0)
    total = 0
    for _ in range(episodes):
        state = game.new_episode(rng)
        while not state.done:
            legal = game.legal_actions(state)
            game.step(state, legal[int(rng.integers(len(legal)))], rng)
            total += 1
    return total / episodes


def learner_rate(seconds: float) -> float:
    """ppo_vec's learner steps per wall second against random opponents, the trainer's set-up excluded."""
    import bench_ppo

    steps = max(4096, int(seconds * 4000) // 4096 * 4096)
    result = bench_ppo.run_ppo_vec(GAME, steps, 0, "random", 1)
    return steps / result["wall_s"]


def arena_rate(batched: bool, deals: int) -> float:
    """Deals per wall second of the shipped network against the heuristic on duplicate deals."""
    from whist_env.evaluation import evaluate

    t0 = time.perf_counter()
    if batched:
        from whist_env.evaluation.batched import evaluate_batched

        evaluate_batched(GAME, ["pretrained", "heuristic"], num_deals=deals, seed=0)
    else:
        evaluate(GAME, ["pretrained", "heuristic"], num_deals=deals, seed=0)
    return deals / (time.perf_counter() - t0)


def openspiel_rate(seconds: float) -> float | None:
    """OpenSpiel's ``oh_hell`` (4 players, 12 tricks) from Python: decisions per second, no observation."""
    try:
        pyspiel = importlib.import_module("pyspiel")
    except ImportError:
        return None
    game = pyspiel.load_game("oh_hell", {"players": 4, "num_tricks_fixed": 12})
    pick = random.Random(0)
    n, end = 0, time.perf_counter() + seconds
    t0 = time.perf_counter()
    while time.perf_counter() < end:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[int(pick.random() * len(outcomes))][0])
            else:
                legal = state.legal_actions()
                state.apply_action(legal[int(pick.random() * len(legal))])
                n += 1
    return n / (time.perf_counter() - t0)


def pettingzoo_rate(name: str, seconds: float) -> float | None:
    """A PettingZoo classic env, random legal play through the AEC loop: decisions per second."""
    try:
        module = importlib.import_module(f"pettingzoo.classic.{name}")
    except ImportError:  # its game library (RLCard) is not installed
        return None
    env = module.env()
    pick = random.Random(0)
    n, end = 0, time.perf_counter() + seconds
    t0 = time.perf_counter()
    seed = 0
    while time.perf_counter() < end:
        env.reset(seed=seed)
        seed += 1
        for _agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[int(pick.random() * len(legal))]))
            n += 1
    return n / (time.perf_counter() - t0)


def fmt(rate: float) -> str:
    return f"{rate / 1e6:.2f}M" if rate >= 1e6 else (f"{rate / 1e3:.1f}k" if rate >= 1e4 else f"{rate:,.0f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="seconds per run")
    parser.add_argument("--repeats", type=int, default=3, help="runs per row (the median is shown)")
    parser.add_argument("--deals", type=int, default=2000, help="deals of the batched arena (the AEC arena: a tenth)")
    args = parser.parse_args()
    s, r = args.seconds, args.repeats
    load = os.getloadavg()[0]
    rows: list[tuple[str, str, str]] = []
    for game_id in game_ids():
        aec = median_rate(per_second(bench_aec.aec_loop(game_id, {})), s, r)
        rules = median_rate(per_second(bench_aec.rules_loop(game_id, {})), s, r)
        per_episode = decisions_per_episode(game_id)
        rows.append((f"AEC loop, `{game_id}`", "decisions/s", fmt(aec)))
        playouts = f"{fmt(rules)}; {rules / per_episode:,.0f}"
        rows.append((f"rules alone, `{game_id}`", "decisions/s; random playouts/s", playouts))
    loop, step = bench_vector.rate(GAME, {}, 1024, s * r, "uint8")
    per_episode = decisions_per_episode(GAME)
    rows.append((f"batched engine `step()`, `{GAME}`, B = 1,024", "decisions per CPU-s", fmt(step)))
    rows.append(
        (f"batched engine, whole loop (numpy's random draw too), `{GAME}`, B = 1,024",
         "decisions per CPU-s; random playouts/s", f"{fmt(loop)}; {loop / per_episode:,.0f}")
    )  # fmt: skip
    rows.append((f"learner: ppo_vec vs random, `{GAME}`", "learner steps/s", fmt(learner_rate(s * r * 4))))
    rows.append((f"arena: pretrained vs heuristic, batched, `{GAME}`", "deals/s", fmt(arena_rate(True, args.deals))))
    aec_arena = fmt(arena_rate(False, args.deals // 10))
    rows.append((f"arena: pretrained vs heuristic, AEC, 1 worker, `{GAME}`", "deals/s", aec_arena))
    spiel = openspiel_rate(s)
    rows.append(
        (f"peer: OpenSpiel {version('open_spiel')} `oh_hell` (4 players, 12 tricks), C++ from Python, no observation",
         "decisions/s", fmt(spiel) if spiel else "not installed")
    )  # fmt: skip
    for name in ("leduc_holdem_v4", "texas_holdem_v4"):
        rate = pettingzoo_rate(name, s)
        rows.append(
            (f"peer: PettingZoo {version('pettingzoo')} `{name}` (RLCard {version('rlcard')}), AEC loop",
             "decisions/s", fmt(rate) if rate else "not installed")
        )  # fmt: skip
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    print(f"Measured {when} at commit {commit()} on {cpu_model()} ({os.cpu_count()} cores; load average "
          f"{load:.2f} at the start), Python {platform.python_version()}, numpy {np.__version__}, "
          f"pettingzoo {version('pettingzoo')}, torch {version('torch')}:")  # fmt: skip
    print(f"`python benchmarks/bench_speed.py --seconds {s:g} --repeats {r} --deals {args.deals}`\n")
    print("| what | counted as | rate |\n|---|---|---:|")
    for what, unit, rate_text in rows:
        print(f"| {what} | {unit} | {rate_text} |")


if __name__ == "__main__":
    main()
