"""Wall and CPU time of an arena run: the batched arena (``whist_env.evaluation.batched.evaluate_batched``) against the
AEC arena (``whist_env.evaluation.evaluate``, one worker), for the shipped pretrained network against random (and
against the heuristic port where ``whist_env.vector.heuristics`` is installed).

The batched arena plays ``--deals`` duplicate deals; the AEC arena plays ``--aec-deals`` of them and its time is
extrapolated to ``--deals`` (it grows linearly with the deals: each is played alone), which the table says. The
batched figures are of a second run: the first one in a process also loads the cached numba kernels (its
wall time is shown apart, as "first run"). CPU time is the process's (``time.process_time``: every thread, so a
multi-threaded BLAS under the network's forward pass counts in full). On a shared machine compare the columns of one
run only, not runs made at different times, and give BLAS one thread: its threads then wait on the machine's other
work (measured on 2 loaded cores: a 200-row forward pass took 63 ms with OpenBLAS's default threads, 4 ms with one):

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_arena.py --games german_whist_v0 humbug_v0 --deals 2000
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

from whist_env.errors import OptionError
from whist_env.evaluation import evaluate
from whist_env.evaluation.batched import batched_agent, evaluate_batched
from whist_env.registry import game_ids, get_spec


def timed(run: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[Any, float, float]:
    """``run(*args, **kwargs)``'s result, wall seconds and CPU seconds."""
    wall, cpu = time.perf_counter(), time.process_time()
    out = run(*args, **kwargs)
    return out, time.perf_counter() - wall, time.process_time() - cpu


def opponents(game_id: str) -> list[str]:
    """``random``, and ``heuristic`` where its batched port is installed."""
    import numpy as np

    out = ["random"]
    try:
        batched_agent("heuristic", game_id, dict(get_spec(game_id).single_deal), np.random.default_rng(0))
        out.append("heuristic")
    except OptionError:
        pass
    return out


def main() -> None:
    """Run the benchmark and print a markdown table."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--games", nargs="+", default=game_ids(), help="games (default: all)")
    p.add_argument("--deals", type=int, default=2000, help="deals of the batched run (default 2000)")
    p.add_argument("--aec-deals", type=int, default=200, help="deals of the AEC run, extrapolated (default 200)")
    p.add_argument("--batch-size", type=int, default=4096, help="tables played at once (default 4096)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    scale = args.deals / args.aec_deals
    print(
        f"| game | agents | batched: {args.deals} deals wall s | CPU s | first run wall s | AEC: {args.aec_deals} "
        f"deals wall s | CPU s | AEC extrapolated to {args.deals}: wall s | speed-up | A − B batched | A − B AEC |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for game_id in args.games:
        for other in opponents(game_id):
            agents = ["pretrained", other]
            batched = (evaluate_batched, game_id, agents, args.deals, args.seed)
            _, first, _ = timed(*batched, batch_size=args.batch_size)
            report, wall, cpu = timed(*batched, batch_size=args.batch_size)
            aec, aec_wall, aec_cpu = timed(evaluate, game_id, agents, args.aec_deals, args.seed)
            print(
                f"| {game_id} | pretrained vs {other} | {wall:.2f} | {cpu:.2f} | {first:.2f} | {aec_wall:.2f} | "
                f"{aec_cpu:.2f} | {aec_wall * scale:.1f} | {aec_wall * scale / wall:.0f}× | "
                f"{report.pairs[0].diff.text()} | {aec.pairs[0].diff.text()} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
