"""``whist-demo``: play and summarise seeded games between random agents through the AEC API.

whist-demo --game german_whist_v0 --episodes 200 --seed 0 --option num_deals=3
"""

from __future__ import annotations

import argparse
import ast
import sys
import time
from typing import Any

import numpy as np

from whist_env.registry import default_game_id, game_ids, make


def parse_option(text: str) -> tuple[str, Any]:
    """``key=value`` with a Python literal value (``True``, ``7``, ``'deal'``) or a bare string."""
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"options are key=value, got {text!r}")
    key, raw = text.split("=", 1)
    try:
        value = ast.literal_eval(raw)
    except (ValueError, SyntaxError):
        value = raw
    return key.strip(), value


def demo(game_id: str, episodes: int, seed: int, options: dict[str, Any], show: bool) -> dict[str, Any]:
    """Play ``episodes`` seeded episodes with uniformly random legal actions; return a summary."""
    env = make(game_id, render_mode="ansi", **options)
    chooser = np.random.default_rng(seed + 1)
    returns: dict[str, list[float]] = {a: [] for a in env.possible_agents}
    decisions = 0
    start = time.perf_counter()
    for episode in range(episodes):
        env.reset(seed=seed + episode)
        totals = dict.fromkeys(env.possible_agents, 0.0)
        for agent in env.agent_iter():
            obs, reward, term, trunc, _info = env.last()
            totals[agent] += reward
            if term or trunc:
                env.step(None)
                continue
            if show and episode == 0 and decisions == 0:
                print(env.render())
                print("observation of", agent, "in words:\n" + env.raw.describe(obs))
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[int(chooser.integers(len(legal)))]))
            decisions += 1
        for agent, total in totals.items():
            returns[agent].append(total)
    elapsed = time.perf_counter() - start
    return {
        "game": game_id,
        "options": options,
        "episodes": episodes,
        "decisions": decisions,
        "decisions_per_second": decisions / elapsed if elapsed > 0 else float("nan"),
        "mean_return": {a: float(np.mean(r)) for a, r in returns.items()},
    }


def demo_main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="whist-demo", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--game", default=default_game_id(), choices=game_ids())
    parser.add_argument("--episodes", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--option", action="append", type=parse_option, default=[], help="game option key=value")
    parser.add_argument("--quiet", action="store_true", help="do not print the first position")
    args = parser.parse_args(argv)
    if args.episodes < 1:
        parser.error("--episodes must be at least 1")
    summary = demo(args.game, args.episodes, args.seed, dict(args.option), show=not args.quiet)
    print(
        f"\n{summary['game']} {summary['options'] or ''}: {summary['episodes']} episodes, "
        f"{summary['decisions']} decisions ({summary['decisions_per_second']:,.0f}/s)"
    )
    for agent, mean in summary["mean_return"].items():
        print(f"  {agent}: mean return {mean:+.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(demo_main())
