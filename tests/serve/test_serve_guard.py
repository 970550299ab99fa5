"""whist-serve's limits and checks for a server that others reach (:mod:`whist_env.serve.guard`, issue #26): body
and message sizes, tables per client address, the Host and Origin checks, seat tokens kept out of the log, and the
README's classroom command run as a real server."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shlex
import signal
import socket
import subprocess
import sys
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

with warnings.catch_warnings():  # Starlette >= 1.x suggests httpx2 for its TestClient; httpx still works
    warnings.filterwarnings("ignore", message=".*httpx2.*")
    from starlette.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from whist_env.serve import guard
from whist_env.serve.app import ServerConfig, create_app, main

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
ROOT = Path(__file__).resolve().parents[2]
GAME = {"game": "german_whist_v0", "seats": ["human", "human"], "seed": 3}
BOT_GAME = {"game": "german_whist_v0", "seats": ["human", "bot"], "seed": 3}  # seat 1: a bot seat (/bot)


def _client(**config: Any) -> TestClient:
    return TestClient(create_app(ServerConfig(agent_delay=0.0, **config)))


def _open(client: TestClient) -> tuple[str, list[str]]:
    response = client.post("/api/tables", json=GAME)
    assert response.status_code == 200, response.text
    made = response.json()
    return made["table_id"], [s["url"].split("token=")[1] for s in made["seats"]]


def _views(client: TestClient, table_id: str, tokens: list[str]) -> list[str]:
    return [client.get(f"/api/tables/{table_id}/view", params={"token": t}).text for t in tokens]


# ----------------------------------------------------------------------------- sizes
def test_a_body_over_the_limit_is_answered_413_and_changes_nothing() -> None:
    padded = (json.dumps(GAME) + " " * 70_000).encode()  # valid JSON, over the default 64 KiB
    with _client() as client:
        response = client.post("/api/tables", content=padded, headers={"content-type": "application/json"})
        assert response.status_code == 413 and "--max-body" in response.json()["error"]
        assert client.app.state.lobby.tables == {}  # type: ignore[attr-defined]
        table_id, tokens = _open(client)
        before = _views(client, table_id, tokens)
        actor = json.loads(before[0])["to_act"]
        legal = json.loads(before[actor])["legal"][0]["action"]

        def chunks() -> Iterator[bytes]:  # no Content-Length: the body is counted as it arrives
            yield json.dumps({"token": tokens[actor], "action": legal}).encode()
            yield b" " * 70_000

        response = client.post(f"/api/tables/{table_id}/action", content=chunks())
        assert response.status_code == 413 and "--max-body" in response.json()["error"]
        assert _views(client, table_id, tokens) == before
    with _client(max_body=200) as client:
        assert client.post("/api/tables", json=GAME).status_code == 200
        assert client.post("/api/tables", json={**GAME, "options": {"x": "y" * 200}}).status_code == 413


def test_the_live_server_refuses_a_large_body_and_goes_on(live_server: tuple[str, Any]) -> None:
    base, _ = live_server
    response = httpx.post(base + "/api/tables", content=b"[" + b" " * 200_000 + b"]", timeout=30)
    assert response.status_code == 413 and "--max-body" in response.json()["error"]
    assert httpx.get(base + "/api/games", timeout=30).status_code == 200


def test_websocket_messages_over_the_limit_or_binary_are_refused_and_the_connection_goes_on() -> None:
    with _client(max_message=1000) as client:
        table_id, tokens = _open(client)
        actor = client.get(f"/api/tables/{table_id}/view", params={"token": tokens[0]}).json()["to_act"]
        with client.websocket_connect(f"/api/tables/{table_id}/ws?token={tokens[actor]}") as ws:
            state = ws.receive_json()
            legal = state["legal"][0]["action"]
            ws.send_text(json.dumps({"type": "act", "action": legal, "note": "x" * 1000}))  # a legal action, too long
            answer = ws.receive_json()
            assert answer["type"] == "error" and "--max-message" in answer["message"] and "1000" in answer["message"]
            ws.send_bytes(json.dumps({"type": "act", "action": legal}).encode())
            answer = ws.receive_json()
            assert answer["type"] == "error" and "binary" in answer["message"]
            assert json.loads(_views(client, table_id, tokens)[actor])["version"] == 0
            ws.send_json({"type": "act", "action": legal})
            assert ws.receive_json()["version"] == 1


@pytest.mark.parametrize("endpoint", ["ws", "bot"])
def test_a_flood_of_bad_messages_is_answered_and_the_server_goes_on(
    live_server: tuple[str, Any], endpoint: str
) -> None:
    """300 bad messages sent at once over a real socket, to a human seat's WebSocket or a bot seat's: each is
    answered with an error (or the connection is closed with 1008), and the table and the server are as before."""
    import websockets

    base, _ = live_server
    made = httpx.post(base + "/api/tables", json=GAME if endpoint == "ws" else BOT_GAME, timeout=30).json()
    token = made["seats"][0 if endpoint == "ws" else 1]["url"].split("token=")[1]
    url = base.replace("http", "ws") + f"/api/tables/{made['table_id']}/{endpoint}?token={token}"

    async def flood() -> list[Any]:
        async with websockets.connect(url, open_timeout=30) as ws:
            first = json.loads(await ws.recv())
            for i in range(300):
                await ws.send("junk" if i % 3 else json.dumps({"type": "act", "action": 9999}))
            answers = []
            try:
                for _ in range(300):
                    answers.append(json.loads(await asyncio.wait_for(ws.recv(), 30)))
            except websockets.ConnectionClosed as closed:
                assert closed.rcvd is not None and closed.rcvd.code == guard.POLICY_VIOLATION
            return [first, *answers]

    messages = asyncio.run(asyncio.wait_for(flood(), 120))
    assert all(m["type"] == "error" for m in messages[1:]) and len(messages) > 1
    assert messages[0]["type"] == ("state" if endpoint == "ws" else "hello")
    view = httpx.get(f"{base}/api/tables/{made['table_id']}/view", params={"token": token}, timeout=30).json()
    assert view["version"] == 0 and view["table"]["connected"] == ([None, None] if endpoint == "ws" else [None, False])


# ----------------------------------------------------------------------------- tables per client
def test_tables_per_client_address_are_bounded() -> None:
    app = create_app(ServerConfig(agent_delay=0.0, max_tables_per_client=2))
    with TestClient(app) as first:
        made = [_open(first)[0] for _ in range(2)]
        refused = first.post("/api/tables", json=GAME)
        assert refused.status_code == 429
        assert "--max-tables-per-client" in refused.json()["error"] and "testclient" in refused.json()["error"]
        assert len(app.state.lobby.tables) == 2
        other = TestClient(app, client=("10.1.2.3", 4000))  # another address has its own tables
        assert other.post("/api/tables", json=GAME).status_code == 200
        app.state.lobby.close(made[0])  # a closed table frees its slot
        assert first.post("/api/tables", json=GAME).status_code == 200


# ----------------------------------------------------------------------------- searching seats
@pytest.mark.parametrize(
    ("seat", "named"),
    [
        ("pimc:samples=100000", "samples=100000"),  # would hold the one search thread for hours
        ("pimc:tt_bits=28", "tt_bits=28"),  # a 16 GB transposition table
        ("pimc:time_budget=3600", "time_budget=3600"),
        ("pimc:max_tricks=13", "max_tricks=13"),  # classic whist searches 7 tricks; 13 is a search of the whole deal
        ("pimc:horizon=13", "horizon=13"),
        ("pimc:playouts=100000", "playouts=100000"),  # as many playouts of the whole deal per opening card
        ("pimc(fallback=pimc(samples=100000))", "samples=100000"),  # nested in a fallback too
    ],
)
def test_a_search_seat_over_the_servers_limits_is_refused(seat: str, named: str) -> None:
    app = create_app(ServerConfig(agent_delay=0.0))
    with TestClient(app) as client:
        refused = client.post(
            "/api/tables", json={"game": "classic_whist_v0", "seats": ["human", seat, "random", "random"]}
        )
        assert refused.status_code == 400, refused.text
        error = refused.json()["error"]
        assert named in error and "seat 1" in error and "this server allows" in error, error
        assert app.state.lobby.tables == {}
        # Within the limits (and the defaults) a search seat is taken.
        for fine in ("pimc", "pimc:samples=100,tt_bits=20,max_tricks=7,time_budget=10", "pimc:playouts=20"):
            made = client.post(
                "/api/tables", json={"game": "classic_whist_v0", "seats": ["human", fine, "random", "random"]}
            )
            assert made.status_code == 200, made.text


def test_a_seat_nested_too_deeply_is_refused_not_a_server_failure() -> None:
    """A seat of agents nested a few hundred deep reached Python's recursion limit: the answer was 500, "the server
    failed on this request (a bug)"."""
    app = create_app(ServerConfig(agent_delay=0.0))
    with TestClient(app) as client:
        for seat in ("pimc(fallback=" * 400 + "random" + ")" * 400, "pimc:fallback=" * 400 + "random"):
            refused = client.post("/api/tables", json={"game": "humbug_v0", "seats": ["human", seat]})
            assert refused.status_code == 400, refused.text
            assert "seat 1: agents nest at most 10 deep" in refused.json()["error"]
        assert app.state.lobby.tables == {}


def test_the_search_samples_limit_is_an_option() -> None:
    app = create_app(ServerConfig(agent_delay=0.0, max_search_samples=500))
    with TestClient(app) as client:
        made = client.post("/api/tables", json={"game": "humbug_v0", "seats": ["human", "pimc:samples=500"]})
        assert made.status_code == 200, made.text
        refused = client.post("/api/tables", json={"game": "humbug_v0", "seats": ["human", "pimc:samples=501"]})
        assert refused.status_code == 400 and "--max-search-samples 500" in refused.json()["error"]


# ----------------------------------------------------------------------------- Host
@pytest.mark.parametrize(
    ("host", "allowed"),
    [
        ("localhost:8000", True),
        ("127.0.0.1", True),
        ("[::1]:8000", True),
        ("LocalHost.", True),
        ("testserver", True),  # the address the request reached (TestClient's server)
        ("evil.example", False),
        ("evil.example:8000", False),
        ("127.0.0.1.evil.example", False),
        ("localhost:80:80", False),
        ("", False),
        ("[::1", False),
    ],
)
def test_only_this_servers_names_are_answered(host: str, allowed: bool) -> None:
    with _client() as client:
        for path in ("/api/games", "/", "/table/x?token=y", "/api/tables/x/view?token=y", "/static/table.js"):
            response = client.get(path, headers={"host": host})
            if allowed:
                assert response.status_code != 400, (path, response.text)
            else:
                assert response.status_code == 400 and "--allowed-hosts" in response.json()["error"], path
        if not allowed:
            refused = client.post("/api/tables", json=GAME, headers={"host": host})
            assert refused.status_code == 400 and client.app.state.lobby.tables == {}  # type: ignore[attr-defined]
            for endpoint in ("ws", "bot"):  # a human seat's WebSocket and a bot seat's
                with client.websocket_connect(f"/api/tables/x/{endpoint}?token=y", headers={"host": host}) as ws:
                    assert "--allowed-hosts" in ws.receive_json()["message"]
                    with pytest.raises(WebSocketDisconnect) as closed:
                        ws.receive_json()
                    assert closed.value.code == guard.POLICY_VIOLATION


def test_the_allowed_hosts_follow_the_bound_address_and_the_option() -> None:
    hostname = socket.gethostname()
    assert guard.normalize_host(hostname) not in (guard.allowed_hosts("127.0.0.1") or ())
    every = guard.allowed_hosts("0.0.0.0")
    assert every is not None and {guard.normalize_host(hostname), "localhost", "127.0.0.1", "::1"} <= every
    assert "0.0.0.0" not in every and "evil.example" not in every
    assert "192.168.7.7" in (guard.allowed_hosts("192.168.7.7") or ())
    assert "class.example" in (guard.allowed_hosts("127.0.0.1", ["Class.Example."]) or ())
    assert guard.allowed_hosts("127.0.0.1", ["*"]) is None
    with _client(host="0.0.0.0") as client:
        assert client.get("/api/games", headers={"host": f"{hostname}:8080"}).status_code == 200
        assert client.get("/api/games", headers={"host": "evil.example"}).status_code == 400
    with _client(allowed_hosts=("*",)) as client:
        assert client.get("/api/games", headers={"host": "evil.example"}).status_code == 200
    assert guard.host_of("[::1]:80") == "::1" and guard.host_of("Example.ORG:8080") == "example.org"
    assert guard.host_of("[::1]x") is None and guard.host_of("a b") is None and guard.host_of("x:y") is None


# ----------------------------------------------------------------------------- Origin
def test_a_websocket_or_a_post_from_another_origin_is_refused() -> None:
    with _client() as client:
        table_id, tokens = _open(client)
        made = client.post("/api/tables", json=BOT_GAME).json()
        bot_token = made["seats"][1]["url"].split("token=")[1]
        urls = {  # a human seat's WebSocket, and a bot seat's (its first message: the hello)
            "state": f"/api/tables/{table_id}/ws?token={tokens[0]}",
            "hello": f"/api/tables/{made['table_id']}/bot?token={bot_token}",
        }
        for origin in ("http://evil.example", "null", "http://testserver:8080", "https://testserver"):
            for url in urls.values():
                with client.websocket_connect(url, headers={"origin": origin}) as ws:
                    refused = ws.receive_json()
                    assert refused["type"] == "error" and "--allowed-origins" in refused["message"], origin
                    assert "hand" not in refused and "http://testserver" in refused["message"]
                    with pytest.raises(WebSocketDisconnect) as closed:
                        ws.receive_json()
                    assert closed.value.code == guard.POLICY_VIOLATION
            post = client.post("/api/tables", json=GAME, headers={"origin": origin})
            assert post.status_code == 403 and "--allowed-origins" in post.json()["error"]
        assert len(client.app.state.lobby.tables) == 2  # type: ignore[attr-defined]
        assert not client.app.state.lobby.tables[made["table_id"]].seats[1].connected  # type: ignore[attr-defined]
        for headers in ({"origin": "http://testserver"}, {"origin": "HTTP://TestServer:80"}, {}):
            for first, url in urls.items():
                with client.websocket_connect(url, headers=headers) as ws:
                    assert ws.receive_json()["type"] == first
        assert client.post("/api/tables", json=GAME, headers={"origin": "http://testserver"}).status_code == 200
    with _client(allowed_origins=("http://evil.example",)) as client:
        table_id, tokens = _open(client)
        with client.websocket_connect(
            f"/api/tables/{table_id}/ws?token={tokens[0]}", headers={"origin": "http://evil.example:80"}
        ) as ws:
            assert ws.receive_json()["type"] == "state"
    with pytest.raises(ValueError, match="not an origin"):
        create_app(ServerConfig(allowed_origins=("evil.example",)))


# ----------------------------------------------------------------------------- logs
def test_tokens_are_redacted_from_the_log() -> None:
    create_app(ServerConfig())  # installs the filter
    records: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record.getMessage())

    handler = Keep()
    for name in ("uvicorn.access", "uvicorn.error"):
        logger = logging.getLogger(name)
        level = logger.level
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
        try:
            logger.info(
                '%s - "%s %s HTTP/%s" %d', "1.2.3.4:5", "GET", "/api/tables/t/view?token=SECRET1&a=b", "1.1", 200
            )
            logger.info('%s - "WebSocket %s" [accepted]', "1.2.3.4:5", "/api/tables/t/ws?token=SECRET2")
            logger.info("/table/t?token=SECRET3")
        finally:
            logger.removeHandler(handler)
            logger.setLevel(level)
    assert len(records) == 6 and not any("SECRET" in r for r in records)
    assert "/api/tables/t/view?token=[redacted]&a=b" in records[0]
    assert guard.redact("?token=abc-_DEF&x=1 token=q") == "?token=[redacted]&x=1 token=[redacted]"


# ----------------------------------------------------------------------------- the console script
def test_the_console_script_passes_the_limits_and_refuses_bad_ones(console_server: list[dict[str, Any]]) -> None:
    main([])
    config = console_server[0]["config"].app.state.lobby.config
    assert (config.max_body, config.max_message, config.max_tables_per_client) == (65536, 65536, 40)
    assert config.max_search_samples == 100
    first = console_server[0]["config"]
    assert first.ws_max_size == 2 * 65536 and first.log_level == "warning"
    main(
        ["--max-body", "1000", "--max-message", "500", "--max-tables-per-client", "3", "--allowed-hosts",
         "a.example, b.example", "--allowed-origins", "http://a.example:8080", "--log-level", "info"]
    )  # fmt: skip
    second = console_server[1]["config"]
    app = second.app
    config = app.state.lobby.config
    assert (config.max_body, config.max_message, config.max_tables_per_client) == (1000, 500, 3)
    assert config.allowed_hosts == ("a.example", "b.example") and {"a.example", "b.example"} <= app.state.policy.hosts
    assert app.state.policy.origins == {("http", "a.example", 8080)}
    assert second.ws_max_size == 1000 and second.log_level == "info"
    main(["--max-search-samples", "400"])
    assert console_server[2]["config"].app.state.lobby.config.max_search_samples == 400
    for bad in (["--max-body", "0"], ["--max-message", "-1"], ["--max-tables-per-client", "0"],
                ["--allowed-origins", "a.example"], ["--max-search-samples", "0"]):  # fmt: skip
        with pytest.raises(SystemExit):
            main(bad)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def test_the_readme_classroom_command_serves_this_machines_name(tmp_path: Path) -> None:
    """The README's classroom command, run as ``python -m whist_env.serve.app`` (what ``whist-serve`` runs) on a free
    port with ``--log-level info``: reached on 127.0.0.1 under this machine's host name it opens a table and plays
    over the WebSocket; a foreign host name is refused; the log shows requests, never a token."""
    import websockets

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    line = next(line for line in readme.splitlines() if "whist-serve --host 0.0.0.0" in line)
    args = shlex.split(line.split("#")[0])
    assert args[0] == "whist-serve"
    port = _free_port()
    args[args.index("--port") + 1] = str(port)
    log = tmp_path / "server.log"
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    base = f"http://127.0.0.1:{port}"
    host = {"host": f"{socket.gethostname()}:{port}"}
    with log.open("w") as out:
        server = subprocess.Popen(
            [sys.executable, "-m", "whist_env.serve.app", *args[1:], "--log-level", "info"],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 90
        for _ in range(900):  # bounded in count and time
            assert server.poll() is None, log.read_text()
            try:
                if httpx.get(base + "/api/games", headers=host, timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "the server did not start:\n" + log.read_text()
            time.sleep(0.1)
        refused = httpx.get(base + "/api/games", headers={"host": "evil.example"}, timeout=10)
        assert refused.status_code == 400 and "--allowed-hosts" in refused.json()["error"]
        made = httpx.post(base + "/api/tables", json=GAME, headers=host, timeout=30)
        assert made.status_code == 200, made.text
        tokens = [s["url"].split("token=")[1] for s in made.json()["seats"]]
        table_id = made.json()["table_id"]
        view = httpx.get(f"{base}/api/tables/{table_id}/view", params={"token": tokens[0]}, headers=host, timeout=30)
        assert view.status_code == 200 and view.json()["you"] == 0

        async def play() -> dict[str, Any]:
            actor = view.json()["to_act"]
            url = f"ws://127.0.0.1:{port}/api/tables/{table_id}/ws?token={tokens[actor]}"
            async with websockets.connect(url, open_timeout=30, max_size=None) as ws:
                state = json.loads(await ws.recv())
                await ws.send("x" * 100_000)  # over --max-message (64 KiB): answered with an error
                refused = json.loads(await asyncio.wait_for(ws.recv(), 30))
                assert refused["type"] == "error" and "--max-message" in refused["message"]
                await ws.send(json.dumps({"type": "act", "action": state["legal"][0]["action"]}))
                played = json.loads(await asyncio.wait_for(ws.recv(), 30))
                await ws.send("x" * 200_000)  # over twice the limit: uvicorn closes the connection (1009)
                try:
                    await asyncio.wait_for(ws.recv(), 30)
                except websockets.ConnectionClosed as closed:
                    assert closed.rcvd is not None and closed.rcvd.code == 1009
                else:
                    raise AssertionError("a message over twice --max-message was read")
            return played

        assert asyncio.run(asyncio.wait_for(play(), 60))["version"] == 1
        assert httpx.get(base + "/api/games", headers=host, timeout=10).status_code == 200
    finally:
        if server.poll() is None:
            server.send_signal(signal.SIGINT)
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait(timeout=10)
    text = log.read_text()
    assert "/api/tables" in text and "token=[redacted]" in text, text
    assert not any(token in text for token in tokens), "a seat token reached the log"
