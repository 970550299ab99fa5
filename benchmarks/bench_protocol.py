"""A decision over the bot protocol, referee side: from holding the seat's view to holding a checked action.

One match half of German Whist between two bot processes over stdin/stdout; every decision of seat 0 is timed in
parts: ``build`` (the view and legal actions as JSON objects), ``encode`` (the line), ``pipe`` (written, the bot's
answer read: the bot's own work and the two pipe hops included), ``decode`` (the answer read and checked against
the legal actions); ``total`` is their sum. Beside it, the same agent's ``act`` in process (what the arena's AEC loop
spends per decision). Bots: ``random`` through the Python helper (it rebuilds the PlayerView), and ``first`` (a few
lines of Python that answer the first legal action from the message without rebuilding the view).

    python benchmarks/bench_protocol.py --deals 200            # on 2 idle cores
    python benchmarks/bench_protocol.py --deals 200 --websocket  # and a whist-serve table of two bot seats

With ``--websocket``, a whist-serve (its own process, loopback) holds tables of two bot seats; two WebSocket
clients in this process answer each ``act`` at once (the first legal action). What is timed is the cycle of one
decision as the clients see it, from one ``act`` received to the next (the other seat's): the answer's way to the
server, its reading and checking, the table's step, the next view built, encoded and sent: the referee side's time
and both hops, an upper bound of what the stdin/stdout rows time.

Prints one line per row and writes nothing; results are in docs/results_arena.md.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from whist_env.agents.factory import make_agent
from whist_env.evaluation.referee import BotCommand, BotLedger, Limits, Referee, Seating
from whist_env.registry import get_spec

FIRST = """
import json, sys
out = sys.stdout
for line in sys.stdin:
    m = json.loads(line)
    t = m["type"]
    if t == "act":
        out.write(f'{m["legal"][0]["id"]}\\n'); out.flush()
    elif t == "hello":
        out.write('{"type": "hello", "protocol": 1}\\n'); out.flush()
    elif t == "goodbye":
        break
"""


def quantiles(values: list[float]) -> dict[str, float]:
    """Median, p99 and mean in microseconds."""
    ordered = sorted(values)
    p99 = ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]
    return {
        "median_us": 1e6 * statistics.median(ordered),
        "p99_us": 1e6 * p99,
        "mean_us": 1e6 * statistics.fmean(ordered),
    }


def over_pipes(game_id: str, bot: BotCommand, deals: int) -> dict[str, Any]:
    """Time every decision of one half with a process of ``bot`` at each seat."""
    spec = get_spec(game_id)
    referee = Referee(spec, dict(spec.single_deal), Limits(decision_s=10), seed=1, record=False, profile=True)
    n = referee.game.num_players
    seats = tuple(BotCommand(f"{bot.name}{seat}", bot.argv, bot.source) for seat in range(n))
    ledgers = {b.name: BotLedger(b.name) for b in seats}
    referee.play_half(Seating(seats, tuple(range(n))), range(deals), ledgers)
    parts = {part: quantiles(values) for part, values in referee.timing.items()}
    return {"decisions": len(referee.timing["total"]), "parts": parts, "start_s": ledgers[seats[0].name].start_s[0]}


def in_process(game_id: str, agent_spec: str, deals: int) -> dict[str, float]:
    """The agent's ``act`` per decision in this process."""
    spec = get_spec(game_id)
    options = dict(spec.single_deal)
    game = spec.make_rules(**options)
    agent = make_agent(agent_spec, spec, **options)
    rng = np.random.default_rng(0)
    times = []
    for _ in range(deals):
        state = game.new_episode(rng)
        while not state.done:
            view = game.view(state, state.to_act)
            start = time.perf_counter()
            action = agent.act(view, rng)
            times.append(time.perf_counter() - start)
            game.step(state, int(action), rng)
    return quantiles(times)


def over_websocket(game_id: str, tables: int) -> dict[str, Any]:
    """Per-decision cycles of ``tables`` one-deal tables of two bot seats on a whist-serve started for it."""
    import socket
    import threading

    import httpx
    from websockets.sync.client import connect

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-c", "from whist_env.cli.serve import main; main()", "--port",
                               str(port), "--max-tables", "100000", "--max-tables-per-client", "100000"],
                              stdout=subprocess.DEVNULL)  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(base + "/api/games", timeout=5)
                break
            except httpx.TransportError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        options = dict(get_spec(game_id).single_deal)
        received: list[float] = []
        lock = threading.Lock()

        def play(url: str) -> None:
            with connect(url) as ws:
                ws.send('{"type": "hello", "protocol": 1}')
                for text in ws:
                    kind = json.loads(text)["type"]
                    if kind == "act":
                        with lock:
                            received.append(time.perf_counter())
                        message = json.loads(text)
                        ws.send(str(message["legal"][0]["id"]))
                    elif kind == "goodbye":
                        return

        cycles: list[float] = []
        for _ in range(tables):
            made = httpx.post(base + "/api/tables", json={"game": game_id, "options": options, "seats": ["bot", "bot"]},
                              timeout=30).json()  # fmt: skip
            urls = [f"ws://127.0.0.1:{port}/api/tables/{made['table_id']}/bot?token={seat['url'].split('token=')[1]}"
                    for seat in made["seats"]]  # fmt: skip
            received.clear()
            threads = [threading.Thread(target=play, args=(url,)) for url in urls]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            stamps = sorted(received)
            cycles += [b - a for a, b in zip(stamps, stamps[1:], strict=False)]
        return {**quantiles(cycles), "decisions": len(cycles)}
    finally:
        server.terminate()
        server.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", default="german_whist_v0")
    parser.add_argument("--deals", type=int, default=200)
    parser.add_argument("--websocket", action="store_true", help="also a whist-serve table of two bot seats")
    args = parser.parse_args()
    load = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else []
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    print(f"# {args.game}, {args.deals} deals; {platform.processor() or platform.machine()}, load {' '.join(load)}, "
          f"commit {commit}")  # fmt: skip
    with tempfile.TemporaryDirectory() as folder:
        first = Path(folder) / "first.py"
        first.write_text(FIRST)
        bots = [
            (
                "random (Python helper)",
                BotCommand("random", (sys.executable, "-m", "whist_env.evaluation.bot", "random")),
            ),
            ("first legal (raw Python)", BotCommand("first", (sys.executable, first.name), str(first))),
        ]
        for label, bot in bots:
            result = over_pipes(args.game, bot, args.deals)
            parts = result["parts"]
            split = ", ".join(f"{k} {v['median_us']:.1f}" for k, v in parts.items() if k != "total")
            print(f"stdin/stdout, {label}: total median {parts['total']['median_us']:.1f} µs, p99 "
                  f"{parts['total']['p99_us']:.1f} µs over {result['decisions']} decisions (medians: {split}); "
                  f"process start to hello {result['start_s']:.3f} s")  # fmt: skip
            print(json.dumps({"row": label, **result}))
    act = in_process(args.game, "random", args.deals)
    print(f"in process, random's act: median {act['median_us']:.1f} µs, p99 {act['p99_us']:.1f} µs")
    if args.websocket:
        ws = over_websocket(args.game, max(1, args.deals // 4))
        print(f"WebSocket (whist-serve, two bot seats, loopback), a decision's cycle: median {ws['median_us']:.1f} µs, "
              f"p99 {ws['p99_us']:.1f} µs over {ws['decisions']} decisions")  # fmt: skip


if __name__ == "__main__":
    main()
