"""A load test of ``whist-serve`` (issue #26): many tables at once, every game, humans played over WebSockets.

Starts the real server (``python -m whist_env.serve.app`` on a free loopback port, ``--agent-delay 0``) and keeps
``--tables`` tables open for ``--seconds`` seconds (``benchmarks/serve_load.py``): every game, with ``heuristic``,
``pretrained`` and (``--pimc-tables`` of them) ``pimc`` seats, each human seat a WebSocket client playing random
legal actions as fast as the server answers; a finished table is replaced at once by a new one of the same kind.
Prints actions/s, the action-to-update latency of the clients (tables without search and PIMC tables apart), the
server's memory and threads over time, and the checks: errors, stalls, versions, final views.

    python benchmarks/bench_serve.py --tables 40 --seconds 300

Everything stays on 127.0.0.1; the run stops by itself after ``--seconds`` plus at most ``--wind-down``. The driver
shares the machine with the server: its own CPU use is printed beside the server's. Needs the ``web`` extra.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

from serve_load import LoadConfig, run_load, serve_subprocess, table_mix, warm_up


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tables", type=int, default=40, help="tables open at once")
    parser.add_argument("--seconds", type=float, default=300.0, help="how long the clients play")
    parser.add_argument("--pimc-tables", type=int, default=4, help="how many of the tables have PIMC seats")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--warmup", type=float, default=60.0, help="seconds left out of the memory slope")
    parser.add_argument("--sample-every", type=float, default=5.0, help="seconds between looks at /proc/<pid>")
    parser.add_argument(
        "--idle-timeout",
        type=float,
        default=60.0,
        help="the server's --idle-timeout (default 60, so that finished tables, 0.1-0.5 MB each, close within the run)",
    )
    parser.add_argument("--wind-down", type=float, default=60.0, help="the most seconds the final checks take")
    parser.add_argument("--json", type=Path, help="also write the figures and the samples here")
    args = parser.parse_args(argv)
    if args.seconds <= 0 or args.seconds > 3600 or args.tables < 1:
        parser.error("--seconds must lie in (0, 3600] and --tables be at least 1")

    config = LoadConfig(
        tables=args.tables,
        seconds=args.seconds,
        pimc_tables=args.pimc_tables,
        seed=args.seed,
        warmup=args.warmup,
        sample_every=args.sample_every,
        wind_down=args.wind_down,
    )
    load = os.getloadavg()
    pimc = min(args.pimc_tables, args.tables)
    print(
        f"whist-serve load test: {args.tables} tables ({pimc} with PIMC) for {args.seconds:g} s; "
        f"load average before {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}, {os.cpu_count()} CPUs"
    )
    kinds = table_mix(args.tables, args.pimc_tables)
    warm_up(kinds)
    counts: dict[str, int] = {}
    for kind in kinds:
        counts[kind.label] = counts.get(kind.label, 0) + 1
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "server.log"
        with serve_subprocess(idle_timeout=args.idle_timeout, log_path=log) as server:
            t0 = time.monotonic()
            report = run_load(server, config)
            wall = time.monotonic() - t0
        server_log = log.read_text()
    load = os.getloadavg()
    s = report.summary()

    print(f"\n{'table kind':<72} {'open':>4} {'games':>6}")
    for label, n in counts.items():
        print(f"{label:<72} {n:>4} {report.per_kind.get(label, 0):>6}")
    print(f"\nplayed {s['seconds']} s (wall {wall:.0f} s with the start and the checks); load average after "
          f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")  # fmt: skip
    rows = [
        ("tables opened / games finished", f"{s['tables_opened']} / {s['games_finished']}"),
        ("actions/s (all, agents included)", f"{s['actions_per_s']} ({s['actions']} actions)"),
        ("client actions/s", f"{s['client_actions_per_s']} ({s['client_actions']})"),
        ("messages received (mean size)", f"{s['messages']} ({s['mean_message_kb']} KiB)"),
        ("latency, tables without search: median / p99 / max", _ms(s, "plain")),
        ("latency, PIMC tables: median / p99 / max", _ms(s, "search")),
        (
            "server RSS: start / after warm-up / end / max",
            f"{s['rss_start_mb']} / {s['rss_warm_mb']} / {s['rss_end_mb']} / {s['rss_max_mb']} MB",
        ),  # fmt: skip
        (f"server RSS slope after {args.warmup:g} s", f"{s['rss_slope_mb_per_min']} MB/min"),
        ("server threads: min / max", f"{s['threads_min']} / {s['threads_max']}"),
        ("CPU cores used: server / driver", f"{s['server_cpu_cores']} / {s['driver_cpu_cores']}"),
        ("driver's own loop lag: median / p99", f"{_f(s['driver_lag_median_ms'])} / {_f(s['driver_lag_p99_ms'])} ms"),
        ("errors / stalls / version faults", f"{s['errors']} / {s['stalls']} / {s['version_faults']}"),
        ("final views checked / differing", f"{s['views_checked']} / {s['view_mismatches']}"),
    ]
    for name, value in rows:
        print(f"  {name:<55} {value}")
    print("\n  t (s)   RSS (MB)  threads  server CPU (s)")
    for sample in report.samples:
        print(f"  {sample.t:6.0f}  {sample.rss_mb:9.1f}  {sample.threads:7d}  {sample.cpu_s:14.1f}")
    found = {
        "errors": report.errors,
        "stalls": report.stalls,
        "version faults": report.version_faults,
        "view mismatches": report.view_mismatches,
    }
    for name, items in found.items():
        for item in items[:10]:
            print(f"  {name}: {item}")
    if "Traceback" in server_log:
        print("\nthe server logged a traceback:\n" + server_log[-4000:])
    if args.json is not None:
        samples = [vars(sample) for sample in report.samples]
        args.json.write_text(json.dumps({"summary": s, "samples": samples, "per_kind": report.per_kind}, indent=1))
    return 0 if report.ok else 1


def _f(value: object) -> str:
    return "-" if not isinstance(value, float) else f"{value:.1f}"


def _ms(s: dict[str, object], which: str) -> str:
    def f(key: str) -> str:
        value = s[f"latency_{which}_{key}_ms"]
        return "-" if value is None else f"{value:.1f}"

    return f"{f('median')} / {f('p99')} / {f('max')} ms (n={s[f'latency_{which}_n']})"


if __name__ == "__main__":
    raise SystemExit(main())
