"""A/B speed of another commit against this tree, in ONE process: the batched engine's ``step()``, or with ``--aec``
the PettingZoo AEC loop.

On a loaded machine two runs of ``bench_vector.py`` can differ by 40% with the same code; a comparison needs both
versions measured under the same load. This script copies ``whist_env/`` of ``COMMIT`` (``git archive``) under
another package name (``whist_env_ab``: every ``whist_env.`` import renamed), builds the same game with both, and
steps them on the same games (same seed, same random legal actions; the observations are checked equal after every
block, so a commit whose games differ cannot be compared this way), in alternating blocks of 8 steps, timing
``step()`` alone in CPU time. Interference from other processes hits both alike, so the ratio is steady where the
rates are not.

    taskset -c 0 python benchmarks/bench_ab.py a5c21ac --seconds 2
    taskset -c 0 python benchmarks/bench_ab.py 7db7238 --aec --seconds 2

With ``--aec``, every registered game's wrapped ``env()`` (``make(game)``) is played with random legal actions
through ``last()`` and ``step()``, in alternating blocks of 64 decisions per version, the same actions in both (the
observations checked equal after every block), and the decisions per CPU-second of the whole loop are printed.

Without it, prints, per game (defaults, uint8) and Oh Hell with 8 players in float32, and per batch size ``B``:
decisions per CPU-second of ``step()`` for the commit and for this tree, and their ratio (tree / commit).
The copy is kept in ``--workdir`` (its numba cache with it: compiled once).

With ``--sb3``, the sb3 path of ``bench_ppo.py`` (``MaskablePPO`` on 16 single-agent envs in a ``DummyVecEnv``,
heuristic opponents, one torch thread): the commit's ``whist_env/``, ``training/`` and ``benchmarks/`` (as they are,
in a folder of their own) and this tree each run it in a worker process of their own, in short runs of ``--steps``
learner steps (the same seed every time), in blocks of four, ``commit, tree, tree, commit`` then ``tree, commit,
commit, tree``. It prints each block's ratio of steps per second (tree / commit) and their geometric mean with a 95%
interval:

    python benchmarks/bench_ab.py 7db7238 --sb3 --blocks 30
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import re
import statistics
import subprocess
import sys
import tarfile
import time
from collections.abc import Callable
from io import BytesIO
from pathlib import Path
from typing import Any

import numpy as np

import whist_env
import whist_env.vector as vector

ROOT = Path(__file__).resolve().parents[1]
ALIAS = "whist_env_ab"
CASES = [(g, {}, "uint8") for g in vector.vector_game_ids()] + [("oh_hell_v0", {"num_players": 8}, "float32")]


def checkout(commit: str, workdir: Path) -> Path:
    """``whist_env/`` of ``commit`` as the package :data:`ALIAS` under ``workdir/<commit>`` (made once)."""
    target = workdir / commit
    if (target / ALIAS / "__init__.py").exists():
        return target
    extract(commit, ["whist_env"], target)
    (target / "whist_env").rename(target / ALIAS)
    for path in (target / ALIAS).rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        text = re.sub(r"\bwhist_env\.", f"{ALIAS}.", text)
        text = re.sub(r"^(\s*)(from|import) whist_env\b(?!_)", rf"\1\2 {ALIAS}", text, flags=re.MULTILINE)
        path.write_text(text, encoding="utf-8")
    return target


def tree(commit: str, workdir: Path) -> Path:
    """``whist_env/``, ``training/`` and ``benchmarks/`` of ``commit``, as they are, under ``workdir/<commit>-tree``
    (made once): the sb3 path of a commit runs in a process of its own."""
    target = workdir / f"{commit}-tree"
    if (target / "benchmarks" / "bench_ppo.py").exists():
        return target
    extract(commit, ["whist_env", "training", "benchmarks"], target)
    return target


def extract(commit: str, paths: list[str], target: Path) -> None:
    """``paths`` of ``commit`` (``git archive``) under ``target``."""
    archive = subprocess.run(["git", "archive", commit, *paths], cwd=ROOT, capture_output=True, check=True).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(target, filter="data")


# A worker: the sb3 path of bench_ppo.py of the tree it is given, a run of the given steps per line read.
SB3_WORKER = """
import json, sys
sys.path.insert(0, sys.argv[1] + "/benchmarks")
import bench_ppo  # puts its own tree first on sys.path
for line in sys.stdin:
    steps = int(line)
    result = bench_ppo.run_sb3(sys.argv[2], steps, False, 0, "heuristic", 1)
    print("RESULT", json.dumps([steps / result["wall_s"], result["breakdown"]["env"][0] / steps]), flush=True)
"""


def compare_sb3(roots: list[Path], game: str, steps: int, blocks: int) -> list[float]:
    """Per block, the tree's steps per second over the commit's on the sb3 path (``roots``: the commit's, then the
    tree's)."""
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", SB3_WORKER, str(root), game],
            cwd=root,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for root in roots
    ]

    def run(j: int) -> list[float]:
        stdin, stdout = workers[j].stdin, workers[j].stdout
        assert stdin is not None and stdout is not None
        stdin.write(f"{steps}\n")
        stdin.flush()
        while True:
            line = stdout.readline()
            if not line:
                raise SystemExit(f"the worker of {roots[j]} stopped")
            if line.startswith("RESULT "):
                return json.loads(line[7:])

    try:
        for j in (0, 1):
            run(j)  # imports, numba's cache, a first learn(): before the clock
        ratios = []
        for k in range(blocks):
            order = (0, 1, 1, 0) if k % 2 == 0 else (1, 0, 0, 1)
            rates: list[list[float]] = [[], []]
            env_us: list[list[float]] = [[], []]
            for j in order:
                rate, env = run(j)
                rates[j].append(rate)
                env_us[j].append(env * 1e6)
            ratio = statistics.mean(rates[1]) / statistics.mean(rates[0])
            ratios.append(ratio)
            print(
                f"block {k + 1:>3}: commit {statistics.mean(rates[0]):>7,.0f} tree {statistics.mean(rates[1]):>7,.0f}"
                f" steps/s ({ratio - 1:+.1%}); env {statistics.mean(env_us[0]):.1f} and "
                f"{statistics.mean(env_us[1]):.1f} µs a step",
                flush=True,
            )
        return ratios
    finally:
        for w in workers:
            if w.stdin is not None:
                w.stdin.close()
            w.wait()


def compare(modules: list, game: str, options: dict, obs_dtype: str, b: int, seconds: float) -> list[float]:
    """Decisions per CPU-second of ``step()`` of each module's engine, stepped in alternating blocks."""
    envs = [m.make(game, b, seed=0, obs_dtype=obs_dtype, **options) for m in modules]
    rngs = [np.random.default_rng(0) for _ in modules]
    ts = [v.reset() for v in envs]
    for v, t in zip(envs, ts, strict=True):
        v.step(t.action_mask.argmax(axis=1))  # compiled (or loaded) before the clock starts
    ts = [v.reset() for v in envs]
    spent = [0] * len(envs)
    steps = 0
    start = time.process_time()
    while time.process_time() - start < seconds:
        order = range(len(envs)) if steps % 16 == 0 else reversed(range(len(envs)))  # who goes first alternates
        for j in order:
            for _ in range(8):
                legal = ts[j].action_mask
                actions = ((rngs[j].random(legal.shape, np.float32) + 1) * legal).argmax(axis=1)
                t0 = time.process_time_ns()
                ts[j] = envs[j].step(actions)
                spent[j] += time.process_time_ns() - t0
        if not all(np.array_equal(t.observation, ts[0].observation) for t in ts):
            raise SystemExit(f"{game} {options}: the two versions' observations differ: not the same games")
        steps += 8
    return [steps * b / (s / 1e9) for s in spent]


def play_block(env: object, rng: np.random.Generator, decisions: int) -> np.ndarray:
    """``decisions`` random legal decisions through the AEC loop (a new game where one ends); the last
    observation."""
    obs = None
    for _ in range(decisions):
        if not env.agents:  # type: ignore[attr-defined]
            env.reset(seed=int(rng.integers(2**31)))  # type: ignore[attr-defined]
        obs, _, term, trunc, _ = env.last()  # type: ignore[attr-defined]
        if term or trunc:
            env.step(None)  # type: ignore[attr-defined]
        else:
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[rng.integers(len(legal))]))  # type: ignore[attr-defined]
    assert obs is not None
    return np.asarray(obs["observation"])


def compare_aec(packages: list, game: str, seconds: float) -> list[float]:
    """Decisions per CPU-second of the AEC loop of each package's ``env()``, played in alternating blocks."""
    envs = [p.make(game) for p in packages]
    rngs = [np.random.default_rng(0) for _ in packages]
    for env in envs:
        env.reset(seed=0)
    spent = [0] * len(envs)
    blocks = 0
    start = time.process_time()
    while time.process_time() - start < seconds:
        order = range(len(envs)) if blocks % 2 == 0 else reversed(range(len(envs)))  # who goes first alternates
        last = {}
        for j in order:
            t0 = time.process_time_ns()
            last[j] = play_block(envs[j], rngs[j], 64)
            spent[j] += time.process_time_ns() - t0
        if not all(np.array_equal(last[j], last[0]) for j in last):
            raise SystemExit(f"{game}: the two versions' observations differ: not the same games")
        blocks += 1
    return [blocks * 64 / (s / 1e9) for s in spent]


# The parts of an AEC step that --parts times, each by wrapping the method that does it (nested parts subtracted).
PARTS = ("rules", "view", "mask", "encoder", "infos", "env and wrapper", "the loop's own")


def timed(fn: Callable[..., Any], spent: dict[str, int], part: str) -> Callable[..., Any]:
    """``fn``, its wall time (ns) added to ``spent[part]`` at every call."""

    def call(*args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter_ns()
        out = fn(*args, **kwargs)
        spent[part] += time.perf_counter_ns() - t0
        return out

    return call


class AecParts:
    """µs per decision of each of :data:`PARTS`, for one version's ``env()`` of ``game``, over blocks of random legal
    decisions: the rules' ``step`` (rules), ``game.view`` less the legal mask inside it (view), ``legal_mask``
    (mask), ``encode_with_mask`` (encoder: the observation and the mask's array; a version whose env observes through
    ``encode_state`` does the view's work there, so its view is part of its encoder, less the mask),
    ``_refresh_infos`` (infos), the
    rest of ``last()`` and ``step()`` in the env, its wrapper and PettingZoo (env and wrapper), and the benchmark's
    own choice of a random legal action and its loop. Each block is played twice: by an env whose parts are wrapped
    in timers, then by one left alone (the total); the timers' own cost is spread over the parts in proportion."""

    def __init__(self, package: Any, game: str) -> None:
        self.spent = dict.fromkeys(PARTS, 0)
        self.total_ns = 0
        self.decisions = 0
        self.rng = np.random.default_rng(0)
        self.env, self.plain = package.make(game), package.make(game)
        raw = self.env.raw
        for obj, name, part in (
            (raw.game, "step", "rules"),
            (raw.game, "view", "view"),
            (raw.game, "legal_mask", "mask"),
            (raw.encoder, "encode_with_mask", "encoder"),
            (raw.encoder, "encode_state", "encoder"),
            (raw, "_refresh_infos", "infos"),
        ):
            if hasattr(obj, name):  # encode_state: not in a commit before it
                setattr(obj, name, timed(getattr(obj, name), self.spent, part))
        # the part the legal mask is computed in
        self.mask_in = "encoder" if hasattr(raw.encoder, "encode_state") else "view"
        for env in (self.env, self.plain):
            env.reset(seed=0)
            play_block(env, self.rng, 1000)  # warm

    def block(self, decisions: int) -> None:
        env, rng, spent = self.env, self.rng, self.spent
        loop = 0
        t0 = time.perf_counter_ns()
        for _ in range(decisions):
            if not env.agents:
                env.reset(seed=int(rng.integers(2**31)))
            obs, _, term, trunc, _ = env.last()
            t1 = time.perf_counter_ns()
            action = (
                None if term or trunc else int((legal := np.flatnonzero(obs["action_mask"]))[rng.integers(len(legal))])
            )
            loop += time.perf_counter_ns() - t1
            env.step(action)
        wrapped = time.perf_counter_ns() - t0
        inner = sum(spent[p] for p in PARTS[:5])
        spent["the loop's own"] += loop
        spent["env and wrapper"] += wrapped - loop - (inner - getattr(self, "_inner", 0))
        self._inner = inner
        t0 = time.perf_counter_ns()
        play_block(self.plain, rng, decisions)
        self.total_ns += time.perf_counter_ns() - t0
        self.decisions += decisions

    def result(self) -> dict[str, float]:
        us = {part: ns / self.decisions / 1e3 for part, ns in self.spent.items()}
        us[self.mask_in] -= us["mask"]  # the legal mask is computed inside the view (or the encoder)
        total = self.total_ns / self.decisions / 1e3
        scale = total / sum(us.values())
        return {part: v * scale for part, v in us.items()} | {"total": total}


def print_parts(packages: list, commit: str, decisions: int, block: int = 500) -> None:
    """The table of :class:`AecParts` for every game, the commit's row above the tree's, the two versions played in
    alternating blocks of ``block`` decisions (so that the machine's drift hits both alike)."""
    print(f"µs per decision of each part of an AEC step ({decisions:,} decisions per version in alternating blocks of "
          f"{block}, wall time, the timers' cost spread over the parts)")  # fmt: skip
    print(f"{'game':<18} {'version':<8} " + " ".join(f"{p[:9]:>9}" for p in (*PARTS, "total")))
    for game in whist_env.game_ids():
        timers = [AecParts(p, game) for p in packages]
        for k in range(decisions // block):
            for j in (0, 1) if k % 2 == 0 else (1, 0):
                timers[j].block(block)
        for label, timer in zip((commit, "tree"), timers, strict=True):
            us = timer.result()
            row = " ".join(f"{us[p]:>9.2f}" for p in (*PARTS, "total"))
            print(f"{game.removesuffix('_v0'):<18} {label:<8} {row}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("commit", help="the commit to compare this tree against")
    parser.add_argument("--seconds", type=float, default=2.0, help="CPU seconds per case and batch size")
    parser.add_argument("--sizes", type=int, nargs="+", default=[64, 1024])
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/whist_env_ab"), help="where the copy is kept")
    parser.add_argument("--aec", action="store_true", help="time the AEC loop of env() instead of the engine")
    parser.add_argument("--parts", type=int, metavar="N", help="--aec: µs per part of a step over N decisions")
    parser.add_argument("--sb3", action="store_true", help="time bench_ppo.py's sb3 path, heuristic opponents")
    parser.add_argument("--game", default="german_whist_v0", help="--sb3: the game")
    parser.add_argument("--steps", type=int, default=8192, help="--sb3: learner steps per run (a multiple of 4096)")
    parser.add_argument("--blocks", type=int, default=20, help="--sb3: blocks of four runs")
    args = parser.parse_args()
    if args.sb3:
        print(f"sb3 path, {args.game}, heuristic opponents, {args.steps:,} steps a run: the commit {args.commit} "
              f"and this tree ({ROOT})")  # fmt: skip
        ratios = compare_sb3([tree(args.commit, args.workdir), ROOT], args.game, args.steps, args.blocks)
        logs = [math.log(r) for r in ratios]
        half = 1.96 * statistics.stdev(logs) / math.sqrt(len(logs)) if len(logs) > 1 else math.inf
        mean = statistics.mean(logs)
        low, high = math.exp(mean - half), math.exp(mean + half)
        print(
            f"tree / commit: {math.exp(mean):.3f} (95% interval {low:.3f} to {high:.3f} over {len(ratios)} blocks; "
            f"the tree faster in {sum(r > 1 for r in ratios)})"
        )
        return
    sys.path.insert(0, str(checkout(args.commit, args.workdir)))
    if args.aec:
        packages = [importlib.import_module(ALIAS), whist_env]
        if args.parts:
            print_parts(packages, args.commit, args.parts)
            return
        print(f"AEC decisions per CPU-second (env(), random legal): the commit {args.commit} and this tree ({ROOT})")
        print(f"{'game':<24} {'commit':>10} {'tree':>10} {'tree/commit':>12}")
        for game in whist_env.game_ids():
            old, new = compare_aec(packages, game, args.seconds)
            print(f"{game:<24} {old / 1e3:>9.1f}k {new / 1e3:>9.1f}k {new / old:>12.2f}", flush=True)
        return
    modules = [importlib.import_module(f"{ALIAS}.vector"), vector]
    print(f"step() decisions per CPU-second: the commit {args.commit} and this tree ({ROOT})")
    print(f"{'case':<44} {'B':>6} {'commit':>10} {'tree':>10} {'tree/commit':>12}")
    for game, options, obs_dtype in CASES:
        for b in args.sizes:
            old, new = compare(modules, game, options, obs_dtype, b, args.seconds)
            label = f"{game} {options or 'defaults'} {obs_dtype}"
            print(f"{label:<44} {b:>6} {old / 1e6:>9.2f}M {new / 1e6:>9.2f}M {new / old:>12.2f}", flush=True)


if __name__ == "__main__":
    main()
