"""A load driver for ``whist-serve``: many tables at once, humans played by WebSocket clients (issue #26).

    >>> from serve_load import LoadConfig, run_load, serve_subprocess   # with benchmarks/ on sys.path
    >>> with serve_subprocess(max_tables=20_000) as server:
    ...     report = run_load(server, LoadConfig(tables=8, seconds=20))
    >>> report.errors, report.stalls, report.version_faults, report.view_mismatches   # all empty
    >>> report.summary()                                                               # the figures

``benchmarks/bench_serve.py`` runs it for minutes and prints the figures; ``tests/serve/test_serve_load.py`` runs it
briefly and checks that nothing went wrong (never how fast). It lives with the benchmarks, outside the package (a
load driver is no part of what users install).

**What runs.** :func:`serve_subprocess` starts the real server (``python -m whist_env.serve.app`` on a free
loopback port, agents without delay). :func:`run_load` keeps ``tables`` tables open at once, of the kinds of
:func:`table_kinds` (every game, with ``heuristic``, ``pretrained`` and, at ``pimc_tables`` of them, ``pimc`` seats):
each human seat of a table is a WebSocket client that plays a random legal action (one of the message's ``legal``)
as soon as its message says that it is to act. When a game is over, its clients check their last message against
``GET /api/tables/{id}/view`` and a new table of the same kind is opened at once. After ``seconds`` the clients stop
acting, wait until their tables are quiet, and check their last messages the same way.

**What is measured.** Actions per second (every action the tables applied, agents' included: a table's ``version``
counts them); per action of a client, the time from sending it to receiving the first message whose ``version`` is
past the one it acted on (only that seat can act, so that message is the one that reflects the action), separately
for tables with and without search agents; and, sampled every ``sample_every`` seconds, the server's resident memory
(``VmRSS``), threads and CPU time from ``/proc/<pid>``.

**What is checked.** Errors: any ``{"type": "error"}`` message, HTTP error, refused or dropped connection. Stalls:
a table whose clients received nothing for ``stall_after`` seconds while it was not over. Versions: each client's
messages carry strictly increasing ``version`` numbers. Views: each client's last message equals what
``GET .../view`` answers for its seat at the end (byte for byte, as :func:`~whist_env.serve.tables.encode` writes
both).

Every request goes to the server's loopback address (proxies are never used); every loop is bounded in count and
in time.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from whist_env.registry import game_ids, get_spec

LOOPBACK = "127.0.0.1"
SEARCH_AGENTS = ("pimc",)
"""Agent names whose seats make a table a "search" table (its latencies are reported apart)."""


# ----------------------------------------------------------------------------- what is played
@dataclass(frozen=True)
class TableKind:
    """One kind of table the driver keeps open: a game, its options and its seats.

    Attributes:
        game: the game id.
        options: the game's options (a ``pretrained`` seat needs options the shipped network was trained for: the
            game's ``single_deal`` options).
        seats: per seat ``"human"`` (played by a WebSocket client) or an agent name.
    """

    game: str
    options: tuple[tuple[str, Any], ...]
    seats: tuple[str, ...]

    @property
    def search(self) -> bool:
        """Whether a seat searches (PIMC): such tables' latencies are reported apart."""
        return any(seat.split(":")[0].split("(")[0] in SEARCH_AGENTS for seat in self.seats)

    @property
    def label(self) -> str:
        """``game{options} seats``, for the report."""
        opts = ",".join(f"{k}={v}" for k, v in self.options)
        return f"{self.game.removesuffix('_v0')}{{{opts}}} {'/'.join(self.seats)}"

    def body(self, seed: int) -> dict[str, Any]:
        """The ``POST /api/tables`` body."""
        return {"game": self.game, "options": dict(self.options), "seats": list(self.seats), "seed": seed}


def _kind(game: str, seats: Sequence[str], one_deal: bool = False) -> TableKind:
    options = tuple(sorted(get_spec(game).single_deal.items())) if one_deal else ()
    return TableKind(game, options, tuple(seats))


def table_kinds() -> tuple[list[TableKind], list[TableKind]]:
    """The kinds of tables without search agents, and those with PIMC seats.

    Every game appears with its default options and its one-deal options (the ones its shipped network was trained
    for, which a ``pretrained`` seat needs), with ``heuristic`` and ``pretrained`` seats, and with one or more human
    seats (read from the registry: every game's spec); the PIMC kinds are the two-player games the solver covers (whose
    PIMC decides in milliseconds).
    """
    games = set(game_ids())
    plain, one_deal, search = [], [], []
    for game in game_ids():
        spec = get_spec(game)
        n = spec.make_rules().num_players
        plain.append(_kind(game, ["human"] + ["heuristic"] * (n - 1)))
        seats = ["human" if seat % 2 == 0 else "pretrained" for seat in range(n)]
        if spec.pretrained is not None:
            one_deal.append(_kind(game, seats, one_deal=True))
        if spec.search is not None and n == 2:
            search.append(_kind(game, ["human", "pimc"]))
    plain += one_deal
    missing = games - {kind.game for kind in plain}
    assert not missing, f"table_kinds() plays no table of {sorted(missing)}: add one"
    return plain, search


def table_mix(tables: int, pimc_tables: int) -> list[TableKind]:
    """``tables`` kinds: ``pimc_tables`` of the PIMC kinds, the rest cycling through the kinds without search."""
    plain, search = table_kinds()
    pimc_tables = min(pimc_tables, tables)
    return [search[i % len(search)] for i in range(pimc_tables)] + [
        plain[i % len(plain)] for i in range(tables - pimc_tables)
    ]


def warm_up(kinds: Sequence[TableKind]) -> None:
    """Play one game of each search kind's game in this process, all seats PIMC with two samples, so that the
    solver's kernels are compiled and in numba's cache on disk before the server starts (a first compile takes
    seconds, and would look like a stalled table)."""
    from whist_env.serve.tables import Table

    for game, options in sorted({(kind.game, kind.options) for kind in kinds if kind.search}):
        n = Table("probe", game, dict(options)).num_players
        table = Table("warm-up", game, dict(options), ["pimc:samples=2"] * n, seed=0)
        table.play_agents()


# ----------------------------------------------------------------------------- the server
@dataclass(frozen=True)
class Server:
    """A running server: its base URL and its process id (for ``/proc``)."""

    base: str
    pid: int


def free_port() -> int:
    """A free TCP port on the loopback address."""
    with socket.socket() as sock:
        sock.bind((LOOPBACK, 0))
        port: int = sock.getsockname()[1]
    return port


@contextlib.contextmanager
def serve_subprocess(
    *,
    max_tables: int = 20_000,
    idle_timeout: float = 1800.0,
    extra_args: Sequence[str] = (),
    log_path: Path | None = None,
    start_timeout: float = 90.0,
) -> Iterator[Server]:
    """Run ``python -m whist_env.serve.app`` (what ``whist-serve`` runs) on a free loopback port, agents without
    delay and no limit per client that the driver reaches; stop it (SIGINT, then SIGKILL) on exit.

    Raises:
        RuntimeError: when the server does not answer within ``start_timeout`` seconds (its log is in the message).
    """
    port = free_port()
    args = [
        sys.executable, "-m", "whist_env.serve.app", "--host", LOOPBACK, "--port", str(port), "--agent-delay", "0",
        "--max-tables", str(max_tables), "--max-tables-per-client", str(max_tables),
        "--idle-timeout", str(idle_timeout), *extra_args,
    ]  # fmt: skip
    root = str(Path(__file__).resolve().parents[1])  # the repository: benchmarks/..
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    with contextlib.ExitStack() as stack:
        out = stack.enter_context(log_path.open("w")) if log_path is not None else subprocess.DEVNULL
        process = subprocess.Popen(args, env=env, stdout=out, stderr=subprocess.STDOUT)
        try:
            base = f"http://{LOOPBACK}:{port}"
            deadline = time.monotonic() + start_timeout
            for _ in range(int(start_timeout / 0.1) + 1):  # bounded in count and time
                if process.poll() is not None or time.monotonic() > deadline:
                    log = log_path.read_text() if log_path is not None else "(no log kept)"
                    raise RuntimeError(f"whist-serve did not start (exit {process.poll()}):\n{log}")
                with contextlib.suppress(OSError):
                    if _http(base + "/api/games", timeout=5)[0] == 200:
                        break
                time.sleep(0.1)
            yield Server(base, process.pid)
        finally:
            if process.poll() is None:
                process.send_signal(signal.SIGINT)
                try:
                    process.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait(timeout=10)


_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback: never through a proxy


def _http(url: str, body: Any = None, timeout: float = 30.0) -> tuple[int, str]:
    """``(status, text)`` of a GET (or a POST of ``body`` as JSON) to the loopback server."""
    if not url.startswith(f"http://{LOOPBACK}:"):
        raise ValueError(f"the load driver only talks to {LOOPBACK}, not {url}")
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers={"content-type": "application/json"})
    try:
        with _OPENER.open(request, timeout=timeout) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode(errors="replace")


# ----------------------------------------------------------------------------- the server's resources
@dataclass(frozen=True)
class ProcessSample:
    """One look at the server process: seconds since the start, resident memory, threads, CPU seconds used."""

    t: float
    rss_mb: float
    threads: int
    cpu_s: float


def sample_process(pid: int, t: float) -> ProcessSample | None:
    """``VmRSS`` and ``Threads`` from ``/proc/<pid>/status``, user + system time from ``/proc/<pid>/stat``; None
    when the process is gone (or there is no ``/proc``)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    rss_kb = int(fields["VmRSS"].split()[0])
    ticks = os.sysconf("SC_CLK_TCK")
    after_name = stat.rsplit(")", 1)[1].split()  # the name may hold spaces; fields 14 and 15 are utime, stime
    cpu = (int(after_name[11]) + int(after_name[12])) / ticks
    return ProcessSample(t, rss_kb / 1024, int(fields["Threads"]), cpu)


# ----------------------------------------------------------------------------- the run
@dataclass(frozen=True)
class LoadConfig:
    """What :func:`run_load` plays.

    Attributes:
        tables: tables open at once.
        seconds: how long clients act; then they stop and the tables are checked.
        pimc_tables: how many of the tables have PIMC seats.
        seed: seeds the tables' deals and the clients' choices.
        stall_after: seconds without a message, while a table is not over, that count as a stall.
        sample_every: seconds between two looks at the server process (``/proc``).
        warmup: seconds at the start left out of the memory slope.
        settle: seconds a table must stay quiet after the stop before its views are checked.
        wind_down: the most seconds the stop and the final checks may take.
    """

    tables: int = 40
    seconds: float = 300.0
    pimc_tables: int = 4
    seed: int = 0
    stall_after: float = 10.0
    sample_every: float = 5.0
    warmup: float = 60.0
    settle: float = 1.0
    wind_down: float = 60.0


@dataclass
class LoadReport:
    """What :func:`run_load` measured and found (see the module docstring)."""

    config: LoadConfig
    elapsed: float = 0.0  # seconds clients acted
    games: int = 0  # games played to the end
    tables_opened: int = 0
    clients: int = 0  # WebSocket clients opened (one per human seat of each table)
    actions: int = 0  # actions the tables applied (agents' included)
    client_actions: int = 0  # actions the clients sent
    messages: int = 0  # state messages the clients received
    message_bytes: int = 0
    latency_plain: list[float] = field(default_factory=list)  # seconds, action to update, tables without search
    latency_search: list[float] = field(default_factory=list)  # the same at tables with PIMC seats
    driver_lag: list[float] = field(default_factory=list)  # seconds the driver's own loop woke late (it shares
    # the machine: its lag is part of every latency it measures)
    errors: list[str] = field(default_factory=list)
    stalls: list[str] = field(default_factory=list)
    version_faults: list[str] = field(default_factory=list)
    view_mismatches: list[str] = field(default_factory=list)
    views_checked: int = 0
    samples: list[ProcessSample] = field(default_factory=list)
    driver_cpu_s: float = 0.0  # CPU seconds the driver itself used (it shares the machine)
    per_kind: dict[str, int] = field(default_factory=dict)  # games finished per table kind

    @property
    def ok(self) -> bool:
        """No error, no stall, versions strictly increasing and every final view equal."""
        return not (self.errors or self.stalls or self.version_faults or self.view_mismatches)

    def rss_slope_mb_per_min(self) -> float | None:
        """The least-squares slope of the resident memory after the warm-up (MB per minute), or None when fewer
        than three samples lie after it."""
        late = [s for s in self.samples if s.t >= self.config.warmup]
        if len(late) < 3:
            return None
        slope, _ = statistics.linear_regression([s.t for s in late], [s.rss_mb for s in late])
        return slope * 60

    def summary(self) -> dict[str, Any]:
        """The figures as a flat dict (milliseconds, MB, counts)."""

        def pct(values: list[float], q: float) -> float | None:
            if not values:
                return None
            ordered = sorted(values)
            return 1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))]

        warm = next((s for s in self.samples if s.t >= self.config.warmup), None)
        last = self.samples[-1] if self.samples else None
        first = self.samples[0] if self.samples else None
        cpu = (last.cpu_s - first.cpu_s) / (last.t - first.t) if last and first and last.t > first.t else None
        return {
            "seconds": round(self.elapsed, 1),
            "tables": self.config.tables,
            "pimc_tables": min(self.config.pimc_tables, self.config.tables),
            "tables_opened": self.tables_opened,
            "clients": self.clients,
            "games_finished": self.games,
            "actions": self.actions,
            "actions_per_s": round(self.actions / self.elapsed, 1) if self.elapsed else None,
            "client_actions": self.client_actions,
            "client_actions_per_s": round(self.client_actions / self.elapsed, 1) if self.elapsed else None,
            "messages": self.messages,
            "mean_message_kb": round(self.message_bytes / self.messages / 1024, 2) if self.messages else None,
            "latency_plain_n": len(self.latency_plain),
            "latency_plain_median_ms": pct(self.latency_plain, 0.5),
            "latency_plain_p99_ms": pct(self.latency_plain, 0.99),
            "latency_plain_max_ms": pct(self.latency_plain, 1.0),
            "latency_search_n": len(self.latency_search),
            "latency_search_median_ms": pct(self.latency_search, 0.5),
            "latency_search_p99_ms": pct(self.latency_search, 0.99),
            "latency_search_max_ms": pct(self.latency_search, 1.0),
            "driver_lag_median_ms": pct(self.driver_lag, 0.5),
            "driver_lag_p99_ms": pct(self.driver_lag, 0.99),
            "rss_start_mb": round(first.rss_mb, 1) if first else None,
            "rss_warm_mb": round(warm.rss_mb, 1) if warm else None,
            "rss_end_mb": round(last.rss_mb, 1) if last else None,
            "rss_max_mb": round(max(s.rss_mb for s in self.samples), 1) if self.samples else None,
            "rss_slope_mb_per_min": _round(self.rss_slope_mb_per_min(), 2),
            "threads_min": min(s.threads for s in self.samples) if self.samples else None,
            "threads_max": max(s.threads for s in self.samples) if self.samples else None,
            "server_cpu_cores": _round(cpu, 2),
            "driver_cpu_cores": round(self.driver_cpu_s / self.elapsed, 2) if self.elapsed else None,
            "errors": len(self.errors),
            "stalls": len(self.stalls),
            "version_faults": len(self.version_faults),
            "views_checked": self.views_checked,
            "view_mismatches": len(self.view_mismatches),
        }


def _round(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


def run_load(server: Server, config: LoadConfig | None = None) -> LoadReport:
    """Drive ``server`` with ``config.tables`` tables for ``config.seconds`` seconds (see the module docstring).

    Bounded: returns after at most ``seconds + wind_down`` seconds (plus the time to close the sockets).
    """
    config = config or LoadConfig()
    report = LoadReport(config)
    if not server.base.startswith(f"http://{LOOPBACK}:"):
        raise ValueError(f"the load driver only talks to {LOOPBACK}, not {server.base}")
    cpu0 = time.process_time()
    asyncio.run(_Run(server, config, report).main())
    report.driver_cpu_s = time.process_time() - cpu0
    return report


@dataclass
class _Live:
    """One open table of the run, as its clients see it."""

    kind: TableKind
    table_id: str
    last_update: float
    over: bool = False
    version: int = 0  # the highest version any of its clients received
    stalled: bool = False


class _Run:
    def __init__(self, server: Server, config: LoadConfig, report: LoadReport) -> None:
        self.server = server
        self.config = config
        self.report = report
        self.ws_base = server.base.replace("http://", "ws://", 1)
        self.stop = asyncio.Event()
        self.live: dict[int, _Live] = {}  # slot -> its open table
        self.rng = random.Random(config.seed)
        self.t0 = 0.0
        self.stopped_at = 0.0  # when the stop was set

    async def main(self) -> None:
        self.t0 = time.monotonic()
        kinds = table_mix(self.config.tables, self.config.pimc_tables)
        slots = [asyncio.create_task(self.slot(i, kind)) for i, kind in enumerate(kinds)]
        watchers = [asyncio.create_task(task) for task in (self.sampler(), self.watchdog(), self.lag_probe())]
        await asyncio.sleep(self.config.seconds)
        self.report.elapsed = time.monotonic() - self.t0
        self.stop_now()
        done, pending = await asyncio.wait(slots, timeout=self.config.wind_down)
        for task in pending:
            task.cancel()
            self.report.errors.append("a table's clients did not finish within the wind-down (cancelled)")
        for task in done:
            if task.exception() is not None:
                self.report.errors.append(f"a table's driver failed: {task.exception()!r}")
        for task in watchers:
            task.cancel()
        await asyncio.gather(*pending, *watchers, return_exceptions=True)
        sample = sample_process(self.server.pid, time.monotonic() - self.t0)
        if sample is not None:
            self.report.samples.append(sample)

    def stop_now(self) -> None:
        """The stop: clients act no more, and wait only for their tables to settle (:meth:`next_message`)."""
        self.stopped_at = time.monotonic()
        self.stop.set()

    async def sampler(self) -> None:
        for _ in range(int((self.config.seconds + self.config.wind_down) / self.config.sample_every) + 2):
            sample = sample_process(self.server.pid, time.monotonic() - self.t0)
            if sample is not None:
                self.report.samples.append(sample)
            await asyncio.sleep(self.config.sample_every)

    async def lag_probe(self) -> None:
        """How late the driver's loop wakes from a 20 ms sleep (its own delay, in every latency it measures)."""
        for _ in range(int((self.config.seconds + self.config.wind_down) / 0.02) + 2):
            start = time.monotonic()
            await asyncio.sleep(0.02)
            if not self.stop.is_set():
                self.report.driver_lag.append(max(0.0, time.monotonic() - start - 0.02))

    async def watchdog(self) -> None:
        for _ in range(int((self.config.seconds + self.config.wind_down) / 0.5) + 2):
            now = time.monotonic()
            if not self.stop.is_set():
                for live in list(self.live.values()):
                    if not live.over and not live.stalled and now - live.last_update > self.config.stall_after:
                        live.stalled = True
                        self.report.stalls.append(
                            f"{live.kind.label} table {live.table_id}: no message for {now - live.last_update:.1f} s "
                            f"at version {live.version}"
                        )
            await asyncio.sleep(0.5)

    async def slot(self, index: int, kind: TableKind) -> None:
        """Keep one table of ``kind`` open: play it to the end, check it, open the next."""
        for game in range(1_000_000):  # bounded; the stop ends it long before
            if self.stop.is_set():
                return
            seed = self.config.seed * 1_000_003 + index * 10_007 + game
            status, text = await asyncio.to_thread(_http, self.server.base + "/api/tables", kind.body(seed))
            if status != 200:
                self.report.errors.append(f"POST /api/tables ({kind.label}) answered {status}: {text[:300]}")
                await asyncio.sleep(1.0)
                continue
            made = json.loads(text)
            tokens = {s["seat"]: s["url"].split("token=", 1)[1] for s in made["seats"]}
            live = _Live(kind, made["table_id"], time.monotonic())
            self.live[index] = live
            self.report.tables_opened += 1
            humans = [seat for seat, k in enumerate(kind.seats) if k == "human"]
            self.report.clients += len(humans)
            results = await asyncio.gather(
                *(self.client(live, seat, tokens[seat]) for seat in humans), return_exceptions=True
            )
            for seat, result in zip(humans, results, strict=True):
                if isinstance(result, BaseException):
                    self.report.errors.append(f"{kind.label} table {live.table_id} seat {seat}: {result!r}")
            self.report.actions += live.version
            if live.over:
                self.report.games += 1
                self.report.per_kind[kind.label] = self.report.per_kind.get(kind.label, 0) + 1

    async def client(self, live: _Live, seat: int, token: str) -> None:
        """One human seat: act at random on every turn until the game is over or the run stops; then check."""
        import websockets

        report = self.report
        where = f"{live.kind.label} table {live.table_id} seat {seat}"
        latencies = report.latency_search if live.kind.search else report.latency_plain
        rng = random.Random(f"{self.config.seed}/{live.table_id}/{seat}")
        url = f"{self.ws_base}/api/tables/{live.table_id}/ws?token={token}"
        last: dict[str, Any] | None = None
        last_text = ""
        pending: tuple[int, float] | None = None  # (version acted on, when sent)
        async with websockets.connect(url, proxy=None, max_size=None, open_timeout=30, close_timeout=5) as ws:
            for _ in range(1_000_000):  # bounded; each pass reads one message
                try:
                    text = await self.next_message(ws, pending)
                except websockets.ConnectionClosed as closed:
                    report.errors.append(f"{where}: the connection closed ({closed})")
                    return
                if text is None:
                    if self.stop.is_set() and pending is None:
                        break  # quiet after the stop: check the view
                    wait = 3 * self.config.stall_after
                    report.errors.append(f"{where}: no message for {wait:g} s (version {live.version})")
                    return
                now = time.monotonic()
                assert isinstance(text, str)
                msg = json.loads(text)
                if msg.get("type") != "state":
                    report.errors.append(f"{where}: {text[:300]}")
                    pending = None
                    continue
                report.messages += 1
                report.message_bytes += len(text)
                version = msg["version"]
                if last is not None and version <= last["version"]:
                    report.version_faults.append(f"{where}: version {version} after {last['version']}")
                last, last_text = msg, text
                live.last_update = now
                live.version = max(live.version, version)
                if pending is not None and version > pending[0]:
                    latencies.append(now - pending[1])
                    pending = None
                if msg["phase"] == "over":
                    live.over = True
                    break
                if msg["to_act"] == seat and msg["legal"] and pending is None and not self.stop.is_set():
                    action = rng.choice(msg["legal"])["action"]
                    pending = (version, time.monotonic())
                    await ws.send(json.dumps({"type": "act", "action": action}))
                    report.client_actions += 1
            else:
                report.errors.append(f"{where}: a million messages without an end")
                return
            await self.check_view(ws, where, live, token, last_text)

    async def next_message(self, ws: Any, pending: tuple[int, float] | None) -> str | None:
        """The client's next message, or None when none came in time: within ``3 * stall_after`` seconds while the
        run goes on or an action of the client's is unanswered; after the stop, ``settle`` seconds of quiet end the
        wait. The stop cuts a longer wait short: a client told of a turn just before the stop waits for a table whose
        other human, told of it just after, no longer plays (its own wait would have run out the long limit)."""
        start = time.monotonic()
        receive = asyncio.ensure_future(ws.recv())
        stop = asyncio.ensure_future(self.stop.wait())
        try:
            while not receive.done():
                if self.stop.is_set() and pending is None:
                    deadline = max(start, self.stopped_at) + self.config.settle
                else:
                    deadline = start + 3 * self.config.stall_after
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                waiting = {receive} if stop.done() else {receive, stop}
                await asyncio.wait(waiting, timeout=left, return_when=asyncio.FIRST_COMPLETED)
            text: str = receive.result()
            return text
        finally:
            receive.cancel()
            stop.cancel()

    async def check_view(self, ws: Any, where: str, live: _Live, token: str, last_text: str) -> None:
        """The client's last message must equal ``GET .../view`` for its seat (read on while the view is newer)."""
        import websockets

        url = f"{self.server.base}/api/tables/{live.table_id}/view?token={token}"
        for _ in range(20):  # bounded: the table may still move (an agent finishing its thought)
            status, text = await asyncio.to_thread(_http, url)
            if status != 200:
                self.report.errors.append(f"{where}: GET view answered {status}: {text[:300]}")
                return
            if text == last_text:
                self.report.views_checked += 1
                return
            view_version = json.loads(text)["version"]
            last_version = json.loads(last_text)["version"] if last_text else -1
            if view_version <= last_version:
                break
            try:  # the view is newer: its message must be on the way
                text = await asyncio.wait_for(ws.recv(), 5.0)
            except (TimeoutError, websockets.ConnectionClosed):
                break
            version = json.loads(text).get("version", -1)
            if version <= last_version:
                self.report.version_faults.append(f"{where}: version {version} after {last_version}")
            last_text = text
            live.version = max(live.version, version)
        self.report.view_mismatches.append(f"{where}: the last message differs from GET view")
