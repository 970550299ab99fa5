"""Fixtures of the whist-serve tests: a live server (uvicorn in a thread), the console script with its server
stopped before it starts, and the system chromium (Playwright)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")


@pytest.fixture(scope="session")
def live_server() -> Iterator[tuple[str, Any]]:
    """``(base url, app)`` of a whist-serve on a free local port, agents without delay."""
    import uvicorn

    from whist_env.serve.app import ServerConfig, create_app

    app = create_app(ServerConfig(max_tables=200, max_tables_per_client=200, agent_delay=0.0))
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the test server did not start")
        time.sleep(0.02)
    yield f"http://127.0.0.1:{port}", app
    server.should_exit = True
    thread.join(timeout=10)


@pytest.fixture
def console_server(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """What each ``whist-serve`` run in the test (``whist_env.serve.app.main``) would have served, in place of serving
    it: per run the host and port asked for, the uvicorn config and the address its socket is bound to. The socket is
    bound for real, but to a free port (the default 8000 may be taken on a developer's machine), and closed."""
    import uvicorn

    from whist_env.serve import app as app_module

    runs: list[dict[str, Any]] = []
    listen = app_module.listen_sockets

    def free_port(parser: Any, host: str, port: int) -> list[socket.socket]:
        runs.append({"host": host, "port": port})
        return listen(parser, host, 0)

    def record(server: Any, sockets: list[socket.socket]) -> None:
        runs[-1].update(config=server.config, bound=[s.getsockname() for s in sockets])
        for sock in sockets:
            sock.close()

    monkeypatch.setattr(app_module, "listen_sockets", free_port)
    monkeypatch.setattr(uvicorn.Server, "run", record)
    return runs


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """The system chromium driven by Playwright (``apt-get install chromium``; ``playwright install`` not needed).

    Module scope, not session: Playwright's sync API keeps an asyncio loop marked running in the main thread
    while it is open, and later tests that call ``asyncio.run`` (the guard and load tests) would fail.
    """
    from playwright.sync_api import sync_playwright

    if not CHROMIUM.exists():
        raise RuntimeError(
            f"{CHROMIUM} is missing: install it with apt-get install -y chromium chromium-driver (as .ci/run does)"
        )
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        yield chromium
        chromium.close()
