"""A short load test of whist-serve (issue #26): the real server (``python -m whist_env.serve.app``) with eight
tables of every game at once, humans played by WebSocket clients as fast as it answers, PIMC seats at two tables.

It runs the driver of ``benchmarks/bench_serve.py`` (``benchmarks/serve_load.py``) for 20 s and checks what must
hold under load: no error, no stalled table, every client's versions strictly increasing, every client's last
message equal to ``GET .../view`` for its seat, and that it played. How fast is measured by the benchmark, never
asserted here.
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

import pytest

from whist_env.registry import game_ids

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))  # the driver lives with the benchmarks
from serve_load import (  # noqa: E402
    LoadConfig,
    LoadReport,
    Server,
    _Run,
    run_load,
    serve_subprocess,
    table_mix,
    warm_up,
)


@pytest.mark.slow
def test_eight_tables_for_twenty_seconds_play_without_an_error_and_end_consistent(tmp_path: Path) -> None:
    config = LoadConfig(tables=8, seconds=20, pimc_tables=2, seed=1, sample_every=2.0, warmup=5.0)
    kinds = table_mix(config.tables, config.pimc_tables)
    assert {kind.game for kind in kinds} == set(game_ids()) and sum(kind.search for kind in kinds) == 2
    warm_up(kinds)
    log = tmp_path / "server.log"
    with serve_subprocess(log_path=log, idle_timeout=60) as server:
        report = run_load(server, config)
    assert report.errors == []
    assert report.stalls == []
    assert report.version_faults == []
    assert report.view_mismatches == [] and report.views_checked == report.clients >= config.tables
    assert report.games >= config.tables and report.client_actions >= 200 and report.actions > report.client_actions
    assert report.latency_plain and report.latency_search  # both kinds of table were played
    assert len(report.samples) >= 5 and all(s.threads >= 1 for s in report.samples)
    assert "Traceback" not in log.read_text(), log.read_text()[-3000:]


class _Silent:
    """A WebSocket that never receives a message."""

    async def recv(self) -> str:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


def _wait_through_the_stop(pending: tuple[int, float] | None, stall_after: float) -> tuple[str | None, float]:
    """A client's wait for its next message on a silent socket, the run stopped 0.1 s into it."""

    async def scenario() -> tuple[str | None, float]:
        config = LoadConfig(settle=0.2, stall_after=stall_after)
        run = _Run(Server("http://127.0.0.1:1", 0), config, LoadReport(config))
        asyncio.get_running_loop().call_later(0.1, run.stop_now)
        start = time.monotonic()
        text = await run.next_message(_Silent(), pending)
        return text, time.monotonic() - start

    return asyncio.run(scenario())


def test_the_stop_cuts_short_a_wait_begun_before_it() -> None:
    """A client told of a turn of the other human's just before the stop waits for a table that human, told of it
    just after, no longer plays. Its wait began with the long limit (3 × ``stall_after``) and ran it out: an error,
    the load test's rare failure under CI's load. The stop now ends the wait after ``settle`` seconds of quiet; with an
    action of the client's own unanswered, the long limit stands."""
    text, waited = _wait_through_the_stop(None, stall_after=10.0)
    assert text is None and waited < 5.0  # 0.1 + settle, not 30 s
    text, waited = _wait_through_the_stop((3, 0.0), stall_after=0.5)
    assert text is None and waited >= 1.5  # unanswered: the long limit (3 × 0.5 s), the stop notwithstanding
