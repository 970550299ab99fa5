"""Speed of the batched engine (``whist_env.vector``): decisions/s through the public ``step()``, and compile times.

Random legal play: each step's actions are drawn in numpy from the action masks of the last ``TimeStep`` and
passed in from Python; the observation and the mask of every decision are written (they are part of ``step()``).
Two rates per batch size: the whole loop (numpy's draw included) and ``step()`` alone, in decisions per
CPU-second of this process (one thread; pin it to one core for the figures of docs/results_vector.md). Compile
times are measured in fresh processes: ``cold`` with an empty numba cache, ``cached`` loading the kernels the cold
run stored.

    taskset -c 0 python benchmarks/bench_vector.py --seconds 3 --sizes 1 64 1024 4096
    taskset -c 0 python benchmarks/bench_vector.py --seconds 0.25 --repeat 8 --sizes 64 1024 --no-peers --no-compile

``--repeat N`` measures each batch size N times (``--seconds`` each) and prints the medians, and the best ``step()``
rate of the N: on a loaded machine the best is the steadier figure, the times other processes did not get in the way.
    python benchmarks/bench_vector.py --games german_whist_v0 --options '{"num_deals": 3}' --obs-dtype float32

Without ``--options``, the run also measures the extra cases of issue #14 (:data:`EXTRA_CASES`: Oh Hell with 8
players and float32 observations) for the games measured; ``--no-extra`` skips them.

Peers, in the same run (``--no-peers`` skips them): each case through our AEC env (``whist_env.make``, one
environment, random legal play in Python: ``benchmarks/bench_aec.py``'s loop), and, when ``pyspiel`` imports (the
``bench`` extra), OpenSpiel's ``oh_hell``. The wheel offers no C++ rollout loop, so that row is what a Python
user of pyspiel gets: a loop of ``apply_action`` on a random one of ``legal_actions()`` (chance nodes included,
only decisions counted), with and without the acting seat's ``information_state_tensor`` at each decision.
OpenSpiel's game is one deal of a fixed number of tricks (3 to 7 players), the closest it has to ours. The AEC
and OpenSpiel rates are decisions per wall-clock second of a single thread (pin it to one core).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

import numpy as np
from bench_aec import aec_loop, timed  # the AEC loop of benchmarks/bench_aec.py (this folder is on sys.path)

import whist_env.vector as vector

COMPILE_PROBE = (
    "import time, sys, json, numpy as np; t0 = time.perf_counter(); import whist_env.vector as V; "
    "v = V.make(sys.argv[1], 2, seed=0, obs_dtype=sys.argv[3], **json.loads(sys.argv[2])); ts = v.reset(); "
    "ts = v.step(ts.action_mask.argmax(axis=1)); v.observe(np.zeros(2, np.int64)); "
    "print(time.perf_counter() - t0)"
)
# (game, options, observation dtype) measured besides each game's defaults (issue #14's targets)
EXTRA_CASES: tuple[tuple[str, dict[str, Any], str], ...] = (("oh_hell_v0", {"num_players": 8}, "float32"),)
# OpenSpiel oh_hell configurations measured: (players, tricks); it takes 3 to 7 players, and turns a trump card up
OPENSPIEL_CASES = ((4, 12), (7, 7))


def rate(game_id: str, options: dict[str, Any], num_envs: int, seconds: float, obs_dtype: str) -> tuple[float, float]:
    """(decisions per CPU-second of the whole loop, of ``step()`` alone) at batch size ``num_envs``."""
    venv = vector.make(game_id, num_envs, seed=0, obs_dtype=obs_dtype, **options)
    rng = np.random.default_rng(0)
    ts = venv.reset()
    venv.step(ts.action_mask.argmax(axis=1))  # compiled (or loaded) before the clock starts
    ts = venv.reset()
    in_step = 0.0
    steps = 0
    start = time.process_time()
    while time.process_time() - start < seconds:
        legal = ts.action_mask
        # a random legal action per env (+ 1: a float32 draw can be 0.0, which would tie a lone legal action with
        # the illegal ones); an ended episode's action is ignored, whatever argmax gives there
        actions = ((rng.random(legal.shape, np.float32) + 1) * legal).argmax(axis=1)
        t0 = time.process_time()
        ts = venv.step(actions)
        in_step += time.process_time() - t0
        steps += 1
    total = time.process_time() - start
    return steps * num_envs / total, steps * num_envs / in_step


def compile_times(game_id: str, options: dict[str, Any], obs_dtype: str) -> tuple[float, float]:
    """Seconds from ``import whist_env.vector`` to a first step and observe: with an empty cache, then cached."""
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        args = [sys.executable, "-c", COMPILE_PROBE, game_id, json.dumps(options), obs_dtype]
        out = [float(subprocess.run(args, env=env, capture_output=True, text=True, check=True).stdout) for _ in "12"]
    return out[0], out[1]


def openspiel_rate(players: int, tricks: int, tensor: bool, seconds: float) -> float | None:
    """Decisions per second of a Python loop of random play over pyspiel's ``oh_hell`` (with the acting seat's
    information-state tensor at each decision when ``tensor``); None when pyspiel is not installed."""
    try:
        pyspiel = importlib.import_module("pyspiel")
    except ImportError:
        return None
    game = pyspiel.load_game("oh_hell", {"players": players, "num_tricks_fixed": tricks})
    pick = random.Random(0)

    def run(sec: float) -> int:
        decisions = 0
        end = time.perf_counter() + sec
        while time.perf_counter() < end:
            state = game.new_initial_state()
            while not state.is_terminal():
                legal = state.legal_actions()
                if not state.is_chance_node():
                    decisions += 1
                    if tensor:
                        state.information_state_tensor(state.current_player())
                state.apply_action(legal[int(pick.random() * len(legal))])
        return decisions

    return timed(run, seconds, 1)


def peers(cases: list[tuple[str, dict[str, Any], str]], seconds: float) -> None:
    """Print the AEC env's rate for each case, then OpenSpiel's when Oh Hell is measured (see the module
    docstring)."""
    print("peers, decisions per wall-clock second (one thread)")
    for game, game_options, _ in cases:
        label = f"{game} {game_options or 'defaults'}"
        print(f"  our AEC env, {label}: {timed(aec_loop(game, game_options), seconds, 1):,.0f}")
    for players, tricks in OPENSPIEL_CASES if any(case[0] == "oh_hell_v0" for case in cases) else ():
        for tensor in (False, True):
            got = openspiel_rate(players, tricks, tensor, seconds)
            if got is None:
                print("  OpenSpiel: pyspiel is not installed (pip install -e '.[bench]')")
                return
            what = "with" if tensor else "without"
            print(f"  OpenSpiel oh_hell n={players} k={tricks}, Python loop, {what} info-state tensor: {got:,.0f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--games", nargs="+", default=vector.vector_game_ids(), help="games to measure (default: every batched one)"
    )
    parser.add_argument("--options", default="{}", help="options as JSON, given to every game measured")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 64, 1024, 4096])
    parser.add_argument("--seconds", type=float, default=3.0, help="CPU seconds per batch size")
    parser.add_argument("--obs-dtype", default="uint8", choices=("uint8", "float32"))
    parser.add_argument("--no-compile", action="store_true", help="skip the compile-time measurement")
    parser.add_argument("--no-extra", action="store_true", help="skip the extra cases (EXTRA_CASES)")
    parser.add_argument("--no-peers", action="store_true", help="skip the AEC env and OpenSpiel rates")
    parser.add_argument("--repeat", type=int, default=1, help="measurements per batch size: medians and the best")
    args = parser.parse_args()
    options = json.loads(args.options)
    unknown = sorted(set(args.games) - set(vector.vector_game_ids()))
    if unknown:
        parser.error(f"no batched engine for {unknown}; games with one: {vector.vector_game_ids()}")
    cases = [(game, options, args.obs_dtype) for game in args.games]
    if not options and not args.no_extra:
        cases += [case for case in EXTRA_CASES if case[0] in args.games]
    for game, game_options, obs_dtype in cases:
        print(f"{game} {game_options or 'defaults'}, {obs_dtype} observations; decisions per CPU-second")
        best = f" {'best step()':>14}" if args.repeat > 1 else ""
        print(f"{'B':>6} {'loop':>12} {'step() alone':>14}{best}")
        for b in args.sizes:
            runs = [rate(game, game_options, b, args.seconds, obs_dtype) for _ in range(args.repeat)]
            loop, step = (statistics.median(r[k] for r in runs) for k in (0, 1))
            best = f" {max(r[1] for r in runs):>14,.0f}" if args.repeat > 1 else ""
            print(f"{b:>6} {loop:>12,.0f} {step:>14,.0f}{best}")
        if not args.no_compile:
            cold, cached = compile_times(game, game_options, obs_dtype)
            print(f"first step in a new process: cold cache {cold:.2f} s, cached {cached:.2f} s")
    if not args.no_peers:
        peers(cases, args.seconds)


if __name__ == "__main__":
    main()
