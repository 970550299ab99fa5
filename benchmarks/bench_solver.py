"""Benchmarks of the search: solver times, PIMC decision time, and PIMC's strength against the heuristic.

    python benchmarks/bench_solver.py speed              # solver and PIMC timings (a few minutes)
    python benchmarks/bench_solver.py strength --game humbug_whist_v0 --deals 1000
    python benchmarks/bench_solver.py oh_hell            # Oh Hell's playout search: time per bid and per card

``speed`` solves random positions (seeded) and prints the median and 90th percentile of the CPU time
per position:

* a German Whist phase-2 position from its first trick (13 tricks, 26 cards, trump drawn at random);
* a classic whist deal from trick 1 (52 cards), the value only and every lead card's value;
* a Humbug position with 8 tricks left (16 cards);
* a PIMC decision at K = 20 in Swedish Humbug whist (first trick) and classic whist (7 tricks left).

``oh_hell`` times Oh Hell's search (``pimc`` there: playouts, ``whist_env.games.oh_hell.search``) at every
decision with more than one legal action of games the heuristic plays (4 players, one deal of 13 cards).

``strength`` plays PIMC against the game's heuristic over duplicate deals with the arena
(``whist_env.evaluation``) and prints its report. The numba compilation (a few seconds) happens once
per process, before the timings.
"""

from __future__ import annotations

import argparse
import json
import time
from functools import partial
from typing import Any

import numpy as np

from whist_env.registry import get_spec
from whist_env.rules.core import PHASE_PLAY
from whist_env.search.pimc import PIMCAgent
from whist_env.search.solver import HAVE_NUMBA, Position, Solver, game_rules

STRENGTH_OPTIONS: dict[str, dict[str, Any]] = {
    "classic_whist_v0": {},
    "humbug_v0": {"mode": "open_table"},
    "german_whist_v0": {},
    "humbug_whist_v0": {},
}
STRENGTH_SAMPLES = {"classic_whist_v0": 10, "humbug_v0": 1, "german_whist_v0": 1, "humbug_whist_v0": 10}


def random_position(rng: np.random.Generator, game_id: str, cards: int, trick_number: int) -> Position:
    """A random position at a trick start: ``cards`` per hand, random trump and leader."""
    sides, counts, follow = game_rules(game_id)
    n = len(sides)
    deck = rng.permutation(52).tolist()
    hands = []
    for s in range(n):
        mask = 0
        for c in deck[s * cards : (s + 1) * cards]:
            mask |= 1 << c
        hands.append(mask)
    trump = int(rng.integers(4))
    return Position(tuple(hands), sides, trump, int(rng.integers(n)), (), trick_number, counts, follow, ())


def timed(fn: Any, items: list[Any]) -> dict[str, float]:
    """CPU seconds per call (the process's own time: the machines here are shared and noisy)."""
    times = []
    for item in items:
        start = time.process_time()
        fn(item)
        times.append(time.process_time() - start)
    return {
        "n": len(times),
        "median_ms": round(1000 * float(np.median(times)), 2),
        "p90_ms": round(1000 * float(np.percentile(times, 90)), 2),
        "max_ms": round(1000 * max(times), 2),
    }


def pimc_views(game_id: str, count: int, tricks_left: int, seed: int) -> list[Any]:
    """Views of seats about to play with ``tricks_left`` tricks left, from games of random play."""
    options = {"episode": "deal"} if game_id in ("classic_whist_v0", "humbug_whist_v0") else {}
    game = get_spec(game_id).make_rules(**options)
    total = len(game_rules(game_id)[1])
    rng = np.random.default_rng(seed)
    views: list[Any] = []
    while len(views) < count:
        state = game.new_episode(rng)
        while not state.done:
            if (
                state.phase == PHASE_PLAY
                and total - state.trick_number == tricks_left
                and game.legal_mask(state).bit_count() > 1
            ):
                views.append(game.view(state, state.to_act))
                break
            actions = game.legal_actions(state)
            game.step(state, actions[int(rng.integers(len(actions)))], rng)
    return views


def speed(args: argparse.Namespace) -> dict[str, Any]:
    rng = np.random.default_rng(args.seed)
    solver = Solver(tt_bits=20)
    solver.solve(random_position(rng, "humbug_v0", 3, 23))  # compile
    out: dict[str, Any] = {"numba": HAVE_NUMBA}
    german = [random_position(rng, "german_whist_v0", 13, 13) for _ in range(args.n)]
    out["german_whist_phase2_solve"] = timed(solver.solve, german)
    out["german_whist_phase2_value"] = timed(solver.value, german)
    humbug = [random_position(rng, "humbug_v0", 8, 18) for _ in range(args.n)]
    out["humbug_8_tricks_solve"] = timed(solver.solve, humbug)
    classic = [random_position(rng, "classic_whist_v0", 13, 0) for _ in range(args.classic)]
    out["classic_full_deal_value"] = timed(solver.value, classic)
    out["classic_full_deal_solve"] = timed(solver.solve, classic[: max(1, args.classic // 2)])
    for game_id, left in (("humbug_whist_v0", 13), ("classic_whist_v0", 7)):
        agent = PIMCAgent(game_id, samples=20, max_tricks=left)
        views = pimc_views(game_id, args.pimc, left, args.seed)
        agent_rng = np.random.default_rng(args.seed)
        out[f"pimc_k20_{game_id}_{left}_tricks_left"] = timed(lambda v, a=agent, r=agent_rng: a.act(v, r), views)
    return out


def oh_hell(args: argparse.Namespace) -> dict[str, Any]:
    from whist_env.agents.factory import heuristic_for
    from whist_env.games.oh_hell.search import OhHellSearch
    from whist_env.games.oh_hell.spec import SPEC

    game = get_spec("oh_hell_v0").make_rules(episode="deal")
    heuristic = heuristic_for("oh_hell_v0", episode="deal")
    agent = OhHellSearch(SPEC, samples=args.samples, bid_samples=args.bid_samples, episode="deal")
    rng = np.random.default_rng(args.seed)
    views: dict[str, list[Any]] = {"bidding": [], "play": []}
    for _ in range(args.games):
        state = game.new_episode(rng)
        while not state.done:
            view = game.view(state, state.to_act)
            if view.legal.bit_count() > 1:
                views[view.phase].append(view)
            game.step(state, heuristic.act(view, rng), rng)
    agent_rng = np.random.default_rng(args.seed)
    agent.act(views["play"][0], agent_rng)  # compile (or load the cache)
    out: dict[str, Any] = {"samples": args.samples, "bid_samples": args.bid_samples}
    for phase, found in views.items():
        out[f"{phase}_decision"] = timed(lambda v: agent.act(v, agent_rng), found)
    return out


def strength(args: argparse.Namespace) -> str:
    from whist_env.evaluation.arena import evaluate

    game_id = args.game
    options = STRENGTH_OPTIONS[game_id]
    samples = args.samples or STRENGTH_SAMPLES[game_id]
    max_tricks = args.max_tricks or get_spec(game_id).search.max_tricks
    pimc = partial(PIMCAgent, game_id, samples=samples, max_tricks=max_tricks, **options)
    start = time.perf_counter()
    report = evaluate(
        game_id,
        [pimc, "heuristic"],
        args.deals,
        seed=args.seed,
        options=options,
        workers=args.workers,
        names=(f"pimc(K={samples}, max_tricks={max_tricks})", "heuristic"),
        progress=True,
    )
    text = report.to_markdown()
    return f"{text}\n\nwall {time.perf_counter() - start:.0f} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    sp = sub.add_parser("speed", help="solver and PIMC timings")
    sp.add_argument("--n", type=int, default=40, help="German Whist and Humbug positions")
    sp.add_argument("--classic", type=int, default=10, help="classic whist deals")
    sp.add_argument("--pimc", type=int, default=10, help="PIMC decisions per game")
    sp.add_argument("--seed", type=int, default=0)
    oh = sub.add_parser("oh_hell", help="Oh Hell's playout search: CPU time per bid and per card")
    oh.add_argument("--games", type=int, default=20, help="games the heuristic plays, every decision timed")
    oh.add_argument("--samples", type=int, default=40, help="deals per card decision")
    oh.add_argument("--bid-samples", type=int, default=100, help="deals per bid")
    oh.add_argument("--seed", type=int, default=0)
    st = sub.add_parser("strength", help="PIMC against the heuristic over duplicate deals")
    st.add_argument("--game", choices=sorted(STRENGTH_OPTIONS), required=True)
    st.add_argument("--deals", type=int, default=1000)
    st.add_argument("--samples", type=int, default=0, help="K (default per game)")
    st.add_argument("--max-tricks", type=int, default=0, help="search with at most this many tricks left")
    st.add_argument("--seed", type=int, default=1)
    st.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    if args.command == "speed":
        print(json.dumps(speed(args), indent=2))
    elif args.command == "oh_hell":
        print(json.dumps(oh_hell(args), indent=2))
    else:
        print(strength(args))


if __name__ == "__main__":
    main()
