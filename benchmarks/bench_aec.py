"""Speed of the environments: AEC decisions/s, rules-only card plays/s, µs per observation.

Random legal play through the full PettingZoo AEC loop (``agent_iter``, ``last()``, ``step()``,
default ``env()`` wrappers) for every registered game, the rules engine alone, and ``observe()``.
With the ``bench`` extra installed, the same AEC loop runs in the same process over OpenSpiel's
``oh_hell`` (pyspiel with its information-state tensor, and through Shimmy's PettingZoo wrapper),
and the ratios are printed. Medians of ``--repeats`` runs; pin to one core for the figures of docs/results_aec.md:

    taskset -c 0 python benchmarks/bench_aec.py --seconds 3 --repeats 3
"""

from __future__ import annotations

import argparse
import importlib
import random
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from whist_env import make
from whist_env.registry import game_ids, get_spec

# Extra rows beyond each game's defaults: (label, game_id, options).
EXTRA_ROWS: list[tuple[str, str, dict[str, Any]]] = [
    ("oh_hell_v0 n=3", "oh_hell_v0", {"num_players": 3}),
    ("oh_hell_v0 n=4", "oh_hell_v0", {"num_players": 4}),
    ("oh_hell_v0 n=8", "oh_hell_v0", {"num_players": 8}),
    (
        "oh_hell_v0 n=4 k=12, OpenSpiel rules",
        "oh_hell_v0",
        {
            "num_players": 4,
            "episode": "deal",
            "hand_size": 12,
            "trump_mode": "turn_up",
            "exact_score_mode": "ten_plus_bid",
            "miss_points": "per_trick",
        },
    ),
]


def rows() -> list[tuple[str, str, dict[str, Any]]]:
    """Every benchmark row whose game is registered."""
    out = [(g, g, {}) for g in game_ids() if g != "oh_hell_v0"]
    out += [r for r in EXTRA_ROWS if r[1] in game_ids()]
    return out


def timed(fn: Callable[[float], int], seconds: float, repeats: int) -> float:
    """Median rate (count per second) of ``fn(seconds) -> count`` over ``repeats`` runs."""
    rates = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        n = fn(seconds)
        rates.append(n / (time.perf_counter() - t0))
    return statistics.median(rates)


def aec_loop(game_id: str, options: dict[str, Any]) -> Callable[[float], int]:
    env = make(game_id, **options)
    env.reset(seed=0)
    pick = random.Random(0)

    def run(seconds: float) -> int:
        n = 0
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            env.reset()
            for _agent in env.agent_iter():
                obs, _reward, term, trunc, _info = env.last()
                if term or trunc:
                    env.step(None)
                    continue
                legal = obs["action_mask"].nonzero()[0]
                env.step(legal[int(pick.random() * len(legal))])
                n += 1
        return n

    return run


def rules_loop(game_id: str, options: dict[str, Any]) -> Callable[[float], int]:
    game = get_spec(game_id).make_rules(**options)
    rng = np.random.default_rng(0)
    pick = random.Random(0)  # a cheap chooser, so that the figure measures the rules engine

    def run(seconds: float) -> int:
        n = 0
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            state = game.new_episode(rng)
            while not state.done:
                legal = game.legal_mask(state)
                for _ in range(int(pick.random() * legal.bit_count())):
                    legal &= legal - 1
                game.step(state, (legal & -legal).bit_length() - 1, rng)
                n += 1
        return n

    return run


def observe_us(game_id: str, options: dict[str, Any], calls: int = 20000) -> float:
    """Median µs per ``observe()`` over positions from a few random games."""
    env = make(game_id, raw=True, **options)
    env.reset(seed=1)
    pick = random.Random(1)
    samples = []
    for _ in range(5):
        # advance a few random decisions into the deal
        for _ in range(pick.randrange(1, 12)):
            obs = env.observe(env.agent_selection)
            legal = obs["action_mask"].nonzero()[0]
            env.step(int(legal[int(pick.random() * len(legal))]))
            if env.game_state.done:
                env.reset()
        agent = env.agent_selection
        observe = env.observe
        t0 = time.perf_counter()
        for _ in range(calls // 5):
            observe(agent)
        samples.append((time.perf_counter() - t0) / (calls // 5) * 1e6)
    return statistics.median(samples)


def openspiel_rows(seconds: float, repeats: int, players: int, tricks: int) -> list[tuple[str, float]]:
    """The OpenSpiel oh_hell loops, or nothing when the bench extra is not installed."""
    try:
        pyspiel = importlib.import_module("pyspiel")
    except ImportError:
        return []
    game = pyspiel.load_game("oh_hell", {"players": players, "num_tricks_fixed": tricks})
    pick = random.Random(0)

    def pyspiel_run(sec: float) -> int:
        n = 0
        end = time.perf_counter() + sec
        while time.perf_counter() < end:
            state = game.new_initial_state()
            while not state.is_terminal():
                if state.is_chance_node():
                    outcomes = state.legal_actions()
                    state.apply_action(outcomes[int(pick.random() * len(outcomes))])
                    continue
                player = state.current_player()
                state.information_state_tensor(player)
                legal = state.legal_actions(player)
                state.apply_action(legal[int(pick.random() * len(legal))])
                n += 1
        return n

    out = [
        (
            f"OpenSpiel oh_hell n={players} k={tricks} (pyspiel + info-state tensor)",
            timed(pyspiel_run, seconds, repeats),
        )
    ]
    try:
        from shimmy import OpenSpielCompatibilityV0
    except ImportError:
        return out
    # Shimmy reloads the game by name at reset, so the parameters go in ``config``.
    env = OpenSpielCompatibilityV0(game_name="oh_hell", config={"players": players, "num_tricks_fixed": tricks})
    env.reset(seed=0)

    def shimmy_run(sec: float) -> int:
        n = 0
        end = time.perf_counter() + sec
        while time.perf_counter() < end:
            env.reset()
            for _agent in env.agent_iter():
                obs, _reward, term, trunc, info = env.last()
                if term or trunc:
                    env.step(None)
                    continue
                mask = info["action_mask"] if "action_mask" in info else obs["action_mask"]
                legal = np.flatnonzero(mask)
                env.step(int(legal[int(pick.random() * len(legal))]))
                n += 1
        return n

    out.append((f"OpenSpiel oh_hell n={players} k={tricks} via Shimmy (AEC)", timed(shimmy_run, seconds, repeats)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=3.0, help="seconds per timed run")
    parser.add_argument("--repeats", type=int, default=3, help="runs per figure (the median is reported)")
    parser.add_argument("--no-openspiel", action="store_true", help="skip the OpenSpiel rows")
    args = parser.parse_args()

    print("| environment | AEC decisions/s (env(), random legal) | rules-only actions/s | µs per observe() |")
    print("|---|---:|---:|---:|")
    ours: dict[str, float] = {}
    for label, game_id, options in rows():
        aec = timed(aec_loop(game_id, options), args.seconds, args.repeats)
        rules = timed(rules_loop(game_id, options), args.seconds, args.repeats)
        obs = observe_us(game_id, options)
        ours[label] = aec
        print(f"| `{label}` | {aec:,.0f} | {rules:,.0f} | {obs:.1f} |", flush=True)
    if args.no_openspiel:
        return
    # OpenSpiel's oh_hell always turns up a trump card, so 4 players hold at most 12 cards each.
    peers = openspiel_rows(args.seconds, args.repeats, players=4, tricks=12)
    if not peers:
        print("\n(OpenSpiel rows skipped: install the bench extra, pip install -e '.[bench]')")
        return
    print()
    print("| peer (same process, same loop) | decisions/s |")
    print("|---|---:|")
    for label, rate in peers:
        print(f"| {label} | {rate:,.0f} |")
    ref_label = "oh_hell_v0 n=4 k=12, OpenSpiel rules" if "oh_hell_v0 n=4 k=12, OpenSpiel rules" in ours else None
    print()
    for label, rate in peers:
        for ours_label, our_rate in ours.items():
            if ref_label is None or ours_label == ref_label:
                print(f"- `{ours_label}` / {label}: {our_rate / rate:.1f}×")


if __name__ == "__main__":
    main()
