"""Fuzzing every surface of whist-serve (issue #26): HTTP bodies and query strings, WebSocket message streams (a human
seat's and a bot seat's), and what one seat's token receives through all of them (hidden twins).

What must hold whatever a client sends:

- an HTTP request is answered 200, or 4xx with a JSON ``{"error": "<what is wrong>"}``; never a 5xx;
- a refused action, view, record or WebSocket message changes nothing (every seat's view is byte for byte as
  before), and an action is taken exactly when the token's seat is to act and the action is legal;
- a WebSocket message is answered: a state after an action taken, ``{"type": "error"}`` otherwise (or the
  connection closed with 1008 for a flood); the server goes on after garbage, floods and messages after a close;
- on a bot seat's WebSocket every line is a protocol message (its JSON Schema) or an error; a hello answer is taken
  exactly when the protocol's own check takes it (another version: one error, then a close with 4426), an answer
  exactly when it names a legal action of the act that waits (a refused one: an error, then the same act again);
  a token that holds no bot seat is refused (4404, or 4403 for another kind of seat);
- no card leaks: two deals that differ only in two cards hidden from a seat give that seat byte-identical answers
  (views, action replies, errors, WebSocket messages) to the same requests, until one of the two cards is shown.

The apps run in Starlette's TestClient (no socket); ``tests/serve/test_serve_guard.py`` covers the real server.
"""

from __future__ import annotations

import faulthandler
import json
import time
import warnings
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import jsonschema
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

with warnings.catch_warnings():  # Starlette >= 1.x suggests httpx2 for its TestClient; httpx still works
    warnings.filterwarnings("ignore", message=".*httpx2.*")
    from starlette.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from whist_env.evaluation import protocol
from whist_env.evaluation.protocol import AnswerError, ViewCodec, check_hello_answer, decode_line
from whist_env.registry import game_ids
from whist_env.serve import botseat
from whist_env.serve.app import ServerConfig, create_app
from whist_env.serve.guard import POLICY_VIOLATION
from whist_env.serve.tables import Table, game_catalogue

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

SETTINGS = settings(
    max_examples=40,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture, HealthCheck.data_too_large],
)
MAX_BODY = 4096
MAX_MESSAGE = 2048
# One deal of each game (a finished deal's record is public: twins are compared until it ends).
GAMES: dict[str, dict[str, Any]] = {
    "classic_whist_v0": {"episode": "deal"},
    "humbug_v0": {},
    "oh_hell_v0": {"episode": "deal", "num_players": 3, "hand_size": 7},
    "german_whist_v0": {},
    "humbug_whist_v0": {"episode": "deal"},
}
assert sorted(GAMES) == sorted(game_ids())
OPTION_NAMES = sorted({name for game in game_catalogue() for name in game["options"]})


@pytest.fixture(autouse=True)
def _watchdog() -> Iterator[None]:
    """A TestClient WebSocket read has no timeout: a test that waits for an answer that never comes is stopped
    (with every thread's traceback) instead of hanging the run."""
    faulthandler.dump_traceback_later(300, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


def _app() -> TestClient:
    config = ServerConfig(
        agent_delay=3600.0,  # agents never get to think: a table opened by the fuzzer is closed long before
        max_tables=10**6,
        max_tables_per_client=10**6,
        max_body=MAX_BODY,
        max_message=MAX_MESSAGE,
    )
    return TestClient(create_app(config))


@pytest.fixture(scope="module")
def twin_clients() -> Iterator[tuple[TestClient, TestClient]]:
    with _app() as a, _app() as b:
        yield a, b


# ----------------------------------------------------------------------------- drawing requests
SCALAR = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
)
JSON = st.recursive(
    SCALAR,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)
SEAT_KINDS = st.one_of(
    st.sampled_from(
        [
            "human",
            "random",
            "heuristic",
            "pretrained",
            "pimc(samples=0)",
            "pimc:samples=x",
            "model:x.zip",
            "model(path=/etc/passwd)",
            "pimc(fallback=model(m.zip))",
            "rllib:/tmp",
            "pretrained(path=x.npz)",
            "wizard",
            "",
            " human",
            "HUMAN",
            "random()",
            "heuristic:x=1",
            "human:1",
        ]  # fmt: skip
    ),
    st.text(max_size=8),
    SCALAR,
)


def raw_bodies(valid: Any) -> st.SearchStrategy[bytes]:
    """Bodies that are not JSON, too large, or ``valid`` cut short."""
    text = json.dumps(valid).encode()
    return st.one_of(
        st.binary(max_size=40),
        st.integers(0, len(text)).map(lambda i: text[:i]),
        st.just(b" " * MAX_BODY + text),
        st.just(b"[" * 3000 + b"]" * 3000),
        st.just(b'{"seed": ' + b"7" * 4400 + b"}"),
        st.just(text.replace(b"{", b"\xff{", 1)),
    )


@st.composite
def table_body(draw: Any) -> Any:
    """A ``POST /api/tables`` body: any JSON, or an object of the known fields with junk among them."""
    if draw(st.integers(0, 5)) == 0:
        return draw(JSON)
    body: dict[str, Any] = {}
    if draw(st.integers(0, 4)):
        body["game"] = draw(st.sampled_from(game_ids()) | SCALAR)
    if draw(st.booleans()):
        body["options"] = draw(st.dictionaries(st.sampled_from([*OPTION_NAMES, "x"]), SCALAR, max_size=3) | JSON)
    if draw(st.booleans()):
        body["seats"] = draw(st.lists(SEAT_KINDS, max_size=6) | SCALAR)
    if draw(st.booleans()):
        body["study"] = draw(SCALAR)
    if draw(st.booleans()):
        body["seed"] = draw(st.integers(-3, 2**70) | SCALAR)
    if draw(st.integers(0, 9)) == 0:
        body[draw(st.text(max_size=5))] = 1
    return body


# ----------------------------------------------------------------------------- helpers
def _open(client: TestClient, game: str, seed: int, kind: str = "human") -> tuple[str, list[str]]:
    """A table of ``game`` whose every seat is ``kind`` (human or bot): its id and the seats' tokens."""
    body = {"game": game, "options": GAMES[game], "seats": None, "seed": seed}
    body["seats"] = [kind] * Table("probe", game, GAMES[game]).num_players
    response = client.post("/api/tables", json=body)
    assert response.status_code == 200, response.text
    made = response.json()
    return made["table_id"], [s["url"].split("token=")[1] for s in made["seats"]]


def _views(client: TestClient, table_id: str, tokens: list[str]) -> list[str]:
    views = [client.get(f"/api/tables/{table_id}/view", params={"token": t}) for t in tokens]
    assert all(v.status_code == 200 for v in views)
    return [v.text for v in views]


def _advance(client: TestClient, table_id: str, tokens: list[str], steps: int) -> None:
    """Play ``steps`` actions (each actor's first legal one), to fuzz positions past the start."""
    for _ in range(steps):
        view = json.loads(_views(client, table_id, tokens[:1])[0])
        if view["phase"] == "over":
            return
        actor = view["to_act"]
        legal = json.loads(_views(client, table_id, [tokens[actor]])[0])["legal"]
        assert (
            client.post(
                f"/api/tables/{table_id}/action", json={"token": tokens[actor], "action": legal[0]["action"]}
            ).status_code
            == 200
        )


def _is_error(response: Any) -> str:
    assert 400 <= response.status_code < 500, (response.status_code, response.text)
    error = response.json()["error"]
    assert isinstance(error, str) and error
    return error


# ----------------------------------------------------------------------------- HTTP
@SETTINGS
@given(body=table_body(), raw=st.booleans(), data=st.data())
def test_fuzz_opening_a_table(twin_clients: tuple[TestClient, TestClient], body: Any, raw: bool, data: Any) -> None:
    client = twin_clients[0]
    lobby = client.app.state.lobby  # type: ignore[attr-defined]
    before = set(lobby.tables)
    content = data.draw(raw_bodies(body)) if raw else json.dumps(body).encode()
    response = client.post("/api/tables", content=content, headers={"content-type": "application/json"})
    if response.status_code == 200:
        made = response.json()
        lobby.close(made["table_id"])
        assert isinstance(body, dict) and body.get("game") in game_ids()
        return
    error = _is_error(response)
    assert set(lobby.tables) == before
    if len(content) > MAX_BODY:
        assert response.status_code == 413 and "--max-body" in error


@st.composite
def action_request(draw: Any) -> dict[str, Any]:
    return {
        "token": draw(st.sampled_from(["seat", "seat", "seat", "junk", "missing"])),
        "seat": draw(st.integers(0, 5)),
        "junk_token": draw(SCALAR | st.sampled_from(["\x80", "é" * 32, "\ud800"])),
        "action": draw(st.sampled_from(["legal", "legal", "any", "junk", "missing"])),
        "index": draw(st.integers(0, 60)),
        "any": draw(st.integers(-5, 10_000)),
        "junk_action": draw(st.sampled_from(["AS", 1.0, True, None, [1], {"a": 1}, "3", 2**70])),
        "claim": draw(st.sampled_from(["none", "none", "own", "other", "junk"])),
        "junk_claim": draw(st.sampled_from([None, True, 1.0, "0", [0], -1, 99])),
        "table": draw(st.sampled_from(["own", "own", "own", "junk"])),
        "junk_table": draw(st.text(min_size=1, max_size=12)),
        "extra": draw(st.dictionaries(st.text(max_size=5), SCALAR, max_size=2)),
    }


@pytest.mark.slow
@SETTINGS
@given(
    game=st.sampled_from(sorted(GAMES)),
    seed=st.integers(0, 30),
    steps=st.integers(0, 6),
    request=action_request(),
    raw=st.integers(0, 7),
    data=st.data(),
)
def test_fuzz_taking_an_action(
    twin_clients: tuple[TestClient, TestClient],
    game: str,
    seed: int,
    steps: int,
    request: dict[str, Any],
    raw: int,
    data: Any,
) -> None:
    client = twin_clients[0]
    table_id, tokens = _open(client, game, seed)
    try:
        _advance(client, table_id, tokens, steps)
        before = _views(client, table_id, tokens)
        state = json.loads(before[0])
        n, actor = len(tokens), state["to_act"]
        seat = request["seat"] % n
        legal = [a["action"] for a in json.loads(before[seat])["legal"]]
        body: dict[str, Any] = dict(request["extra"])
        if request["token"] == "seat":
            body["token"] = tokens[seat]
        elif request["token"] == "junk":
            body["token"] = request["junk_token"]
        if request["action"] == "legal" and legal:
            body["action"] = legal[request["index"] % len(legal)]
        elif request["action"] in ("legal", "any"):
            body["action"] = request["any"]
        elif request["action"] == "junk":
            body["action"] = request["junk_action"]
        if request["claim"] == "own":
            body["seat"] = seat
        elif request["claim"] == "other":
            body["seat"] = (seat + 1) % n
        elif request["claim"] == "junk":
            body["seat"] = request["junk_claim"]
        path_id = table_id if request["table"] == "own" else quote(request["junk_table"], safe="")
        content = json.dumps(body).encode() if raw else data.draw(raw_bodies(body))
        response = client.post(f"/api/tables/{path_id}/action", content=content)
        takes = (
            raw != 0
            and path_id == table_id
            and body.get("token") == tokens[seat]
            and seat == actor
            and state["phase"] != "over"
            and type(body.get("action")) is int
            and body["action"] in legal
            and ("seat" not in body or (type(body["seat"]) is int and body["seat"] == seat))
        )
        if takes:
            assert response.status_code == 200, (body, response.text)
            assert response.json()["version"] == state["version"] + 1
            return
        error = _is_error(response)
        assert _views(client, table_id, tokens) == before, f"a refused action changed the table: {error}"
        if raw != 0 and path_id == table_id and isinstance(body, dict) and body.get("token") not in tokens:
            assert response.status_code == 404 and "token" in error
    finally:
        client.app.state.lobby.close(table_id)  # type: ignore[attr-defined]


@SETTINGS
@given(
    game=st.sampled_from(sorted(GAMES)),
    endpoint=st.sampled_from(["view", "record"]),
    params=st.lists(
        st.tuples(
            st.sampled_from(["token", "token", "Token", "t", ""]),
            st.sampled_from(["seat", "junk"]),
            st.text(max_size=8),
        ),
        max_size=3,
    ),
    table=st.sampled_from(["own", "own", "junk"]),
    junk_table=st.text(min_size=1, max_size=12),
    seat=st.integers(0, 5),
)
def test_fuzz_views_and_records(
    twin_clients: tuple[TestClient, TestClient],
    game: str,
    endpoint: str,
    params: list[tuple[str, str, str]],
    table: str,
    junk_table: str,
    seat: int,
) -> None:
    client = twin_clients[0]
    table_id, tokens = _open(client, game, 1)
    try:
        before = _views(client, table_id, tokens)
        query = [(key, tokens[seat % len(tokens)] if kind == "seat" else junk) for key, kind, junk in params]
        path_id = table_id if table == "own" else quote(junk_table, safe="")
        response = client.get(f"/api/tables/{path_id}/{endpoint}", params=query)
        given_tokens = [value for key, value in query if key == "token"]
        valid = path_id == table_id and bool(given_tokens) and given_tokens[-1] in tokens  # the last one counts
        if valid and endpoint == "view":
            assert response.status_code == 200 and response.json()["you"] == tokens.index(given_tokens[-1])
        elif valid:
            assert response.status_code == 409 and "running" in _is_error(response)  # the game runs: no record
        else:
            assert response.status_code == 404 and _is_error(response)
        assert _views(client, table_id, tokens) == before
    finally:
        client.app.state.lobby.close(table_id)  # type: ignore[attr-defined]


HEADER_TEXT = st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=40)


@SETTINGS
@given(
    host=st.one_of(HEADER_TEXT, st.sampled_from(["testserver", "localhost:1", "[::1]", "127.0.0.1:8000", "[::1]:x"])),
    origin=st.one_of(st.none(), HEADER_TEXT, st.sampled_from(["http://testserver", "null", "http://[::1]:80"])),
    method=st.sampled_from(["GET", "POST"]),
)
def test_fuzz_host_and_origin_headers(
    twin_clients: tuple[TestClient, TestClient], host: str, origin: str | None, method: str
) -> None:
    """Any ``Host`` and ``Origin`` header: answered, refused with 400 (host) or 403 (origin), never a 5xx."""
    client = twin_clients[0]
    lobby = client.app.state.lobby  # type: ignore[attr-defined]
    before = set(lobby.tables)
    headers = {"host": host} if origin is None else {"host": host, "origin": origin}
    response = client.request(method, "/api/games" if method == "GET" else "/api/tables", headers=headers, json=[])
    if response.status_code == 400 and "--allowed-hosts" in response.text:
        assert set(lobby.tables) == before
    elif response.status_code == 403:
        assert method == "POST" and "--allowed-origins" in _is_error(response)
    else:
        assert response.status_code == 200 if method == "GET" else "JSON object" in _is_error(response)


# ----------------------------------------------------------------------------- WebSocket
@st.composite
def ws_message(draw: Any) -> tuple[str, Any]:
    """One WebSocket message: ``("text", str)``, ``("bytes", b)``, or ``("act", fields)`` to fill in."""
    kind = draw(st.integers(0, 9))
    if kind == 0:
        return "text", draw(st.text(max_size=30))
    if kind == 1:
        return "bytes", draw(st.binary(max_size=30))
    if kind == 2:
        return "text", json.dumps(draw(JSON))
    if kind == 3:
        return "text", "x" * (MAX_MESSAGE + draw(st.integers(1, 3000)))
    if kind == 4:
        return "huge act", draw(st.integers(0, 60))  # a legal action padded over the limit
    if kind == 5:
        return "text", draw(st.sampled_from(["[" * 3000 + "]" * 3000, '{"type": "act", "action": ' + "9" * 4400 + "}"]))
    return "act", {
        "action": draw(st.sampled_from(["legal", "legal", "any", "junk"])),
        "index": draw(st.integers(0, 60)),
        "any": draw(st.integers(-5, 10_000)),
        "junk": draw(st.sampled_from(["AS", 1.0, True, None, [1]])),
        "claim": draw(st.sampled_from(["none", "none", "own", "other", "junk"])),
        "type": draw(st.sampled_from(["act", "act", "act", "Act", None])),
    }


def _takes(text: str | None, legal: list[int], seat: int) -> bool:
    """Whether the server takes the WebSocket message ``text`` (None: a binary one) from ``seat``, whose legal
    actions are ``legal`` (none when it is not its turn)."""
    if text is None or len(text.encode()) > MAX_MESSAGE:
        return False
    try:
        msg = json.loads(text)
    except (ValueError, RecursionError):
        return False
    return (
        isinstance(msg, dict)
        and msg.get("type") == "act"
        and type(msg.get("action")) is int
        and msg["action"] in legal
        and ("seat" not in msg or (type(msg["seat"]) is int and msg["seat"] == seat))
    )


@SETTINGS
@given(
    game=st.sampled_from(sorted(GAMES)),
    seed=st.integers(0, 30),
    seat=st.integers(0, 5),
    messages=st.lists(ws_message(), max_size=12),
    close_early=st.booleans(),
)
def test_fuzz_websocket_messages(
    twin_clients: tuple[TestClient, TestClient],
    game: str,
    seed: int,
    seat: int,
    messages: list[tuple[str, Any]],
    close_early: bool,
) -> None:
    client = twin_clients[0]
    table_id, tokens = _open(client, game, seed)
    seat %= len(tokens)
    try:
        with client.websocket_connect(f"/api/tables/{table_id}/ws?token={tokens[seat]}") as ws:
            state = ws.receive_json()
            for kind, value in messages:
                legal = [a["action"] for a in state["legal"]]
                text: str | None = None
                if kind == "bytes":
                    ws.send_bytes(value)
                elif kind == "text":
                    text = value
                elif kind == "huge act":
                    action = legal[value % len(legal)] if legal else value
                    text = json.dumps({"type": "act", "action": action, "pad": "x" * MAX_MESSAGE})
                else:
                    msg: dict[str, Any] = {"type": value["type"]}
                    if value["action"] == "legal" and legal:
                        msg["action"] = legal[value["index"] % len(legal)]
                    elif value["action"] in ("legal", "any"):
                        msg["action"] = value["any"]
                    else:
                        msg["action"] = value["junk"]
                    if value["claim"] == "own":
                        msg["seat"] = seat
                    elif value["claim"] == "other":
                        msg["seat"] = (seat + 1) % len(tokens)
                    elif value["claim"] == "junk":
                        msg["seat"] = value["junk"]
                    text = json.dumps(msg)
                if text is not None:
                    ws.send_text(text)
                answer = ws.receive_json()
                if _takes(text, legal, seat):
                    assert answer["type"] == "state" and answer["version"] == state["version"] + 1
                    state = answer
                else:
                    assert answer["type"] == "error" and isinstance(answer["message"], str) and answer["message"]
                    assert "x" * 200 not in answer["message"], "a refusal echoed a huge message back"
                    if kind == "bytes":
                        assert "binary" in answer["message"]
                    elif text is not None and len(text.encode()) > MAX_MESSAGE:
                        assert "--max-message" in answer["message"]
            if close_early:
                ws.close()
                ws.send_text(json.dumps({"type": "act", "action": 0}))  # after the close: nobody reads it
        view = client.get(f"/api/tables/{table_id}/view", params={"token": tokens[seat]})
        assert view.status_code == 200 and view.json()["version"] == state["version"]
    finally:
        client.app.state.lobby.close(table_id)  # type: ignore[attr-defined]


@settings(SETTINGS, max_examples=10)
@given(
    count=st.integers(20, 150),
    junk=st.lists(st.one_of(st.text(max_size=20), st.binary(max_size=20)), min_size=1, max_size=5),
    endpoint=st.sampled_from(["ws", "bot"]),
)
def test_fuzz_websocket_floods(
    twin_clients: tuple[TestClient, TestClient], count: int, junk: list[Any], endpoint: str
) -> None:
    """``count`` bad messages sent before any answer is read, to a human seat's WebSocket or a bot seat's: each is
    answered with an error, or the connection is closed with 1008; the table is unchanged and the server answers the
    next client."""
    client = twin_clients[0]
    table_id, tokens = _open(client, "german_whist_v0", 2, "human" if endpoint == "ws" else "bot")
    version = 0
    try:
        with client.websocket_connect(f"/api/tables/{table_id}/{endpoint}?token={tokens[0]}") as ws:
            assert ws.receive_json()["type"] == ("state" if endpoint == "ws" else "hello")
            for i in range(count):
                item = junk[i % len(junk)]
                ws.send_bytes(item) if isinstance(item, bytes) else ws.send_text(item)
            try:
                for _ in range(count):
                    assert ws.receive_json()["type"] == "error"
            except WebSocketDisconnect as closed:
                assert closed.code == POLICY_VIOLATION
        assert json.loads(_views(client, table_id, tokens)[0])["version"] == version
    finally:
        client.app.state.lobby.close(table_id)  # type: ignore[attr-defined]


# ----------------------------------------------------------------------------- no card leaks (hidden twins)
def _twin_tables(game: str, seat: int, deck: list[int], pick: int) -> tuple[Table, Table, tuple[int, int]] | None:
    """Two tables whose decks differ in two cards hidden from ``seat`` that lie in different places (two hands, a
    hand and the stock or a blind, ...), or None when the game hides no such pair (Humbug shows every card)."""
    options = GAMES[game]
    n = Table("probe", game, options).num_players
    a = Table("twin", game, options, ["human"] * n, seed=11, deck=deck, dealer=0)
    start = a.env.game_state
    places = list(start.hands) + list(a.env.hidden_masks(start))
    hidden = a.game.view(start, seat).unseen
    cards = [c for c in range(52) if (hidden >> c) & 1]
    pairs = [
        (c1, c2)
        for i, c1 in enumerate(cards)
        for c2 in cards[i + 1 :]
        if [(m >> c1) & 1 for m in places] != [(m >> c2) & 1 for m in places]
    ]
    if not pairs:
        return None
    c1, c2 = pairs[pick % len(pairs)]
    twin = list(deck)
    i, j = twin.index(c1), twin.index(c2)
    twin[i], twin[j] = twin[j], twin[i]
    b = Table("twin", game, options, ["human"] * n, seed=11, deck=twin, dealer=0)
    return a, b, (c1, c2)


@st.composite
def twin_ops(draw: Any) -> list[tuple[str, Any]]:
    """Requests: actions of whoever is to act (an index into their legal actions), and the observing seat's junk."""
    op = st.one_of(
        st.tuples(st.just("act"), st.integers(0, 60)),
        st.tuples(st.just("act"), st.integers(0, 60)),
        st.tuples(st.just("act"), st.integers(0, 60)),
        st.tuples(st.just("http junk"), action_request()),
        st.tuples(st.just("ws junk"), ws_message()),
        st.tuples(st.just("view"), st.none()),
        st.tuples(st.just("record"), st.none()),
    )
    return draw(st.lists(op, min_size=12, max_size=40))


@settings(SETTINGS, max_examples=30)
@given(
    game=st.sampled_from(sorted(GAMES)),
    seat=st.integers(0, 5),
    deck_seed=st.integers(0, 10_000),
    pick=st.integers(0, 10_000),
    ops=twin_ops(),
)
def test_fuzz_no_card_reaches_a_seat_that_may_not_see_it(
    twin_clients: tuple[TestClient, TestClient], game: str, seat: int, deck_seed: int, pick: int, ops: list[Any]
) -> None:
    deck = np.random.default_rng(deck_seed).permutation(52).tolist()
    seat %= Table("probe", game, GAMES[game]).num_players
    made = _twin_tables(game, seat, deck, pick)
    if made is None:
        assert game == "humbug_v0"  # RULES.md §3.3: the study step shows both hands
        return
    tables = made[:2]
    c1, c2 = made[2]
    for client, table in zip(twin_clients, tables, strict=True):
        lobby = client.app.state.lobby  # type: ignore[attr-defined]
        lobby.close("twin")
        lobby.tables["twin"], lobby.listeners["twin"] = table, set()
    tokens = [[s.token for s in table.seats] for table in tables]
    received: list[list[str]] = [[], []]

    def hidden() -> bool:
        """Both cards still hidden from ``seat`` at both tables, and the deal still on (its end is public)."""
        return all(
            (t.game.view(t.env.game_state, seat).unseen >> c1) & 1
            and (t.game.view(t.env.game_state, seat).unseen >> c2) & 1
            and not t.deals
            and not t.over
            for t in tables
        )

    with (
        twin_clients[0].websocket_connect(f"/api/tables/twin/ws?token={tokens[0][seat]}") as ws_a,
        twin_clients[1].websocket_connect(f"/api/tables/twin/ws?token={tokens[1][seat]}") as ws_b,
    ):
        sockets = (ws_a, ws_b)
        for k in range(2):
            received[k].append(json.dumps(sockets[k].receive_json()))
        assert received[0] == received[1]
        for op, value in ops:
            if not hidden():
                break
            state_a = tables[0].env.game_state
            actor = state_a.to_act
            answers: list[list[str]] = [[], []]
            if op == "act":
                # an action legal at both tables that is neither swapped card keeps the twins together longest
                legal_a = tables[0].game.view(state_a, actor).legal_actions()
                legal_b = set(tables[1].game.view(tables[1].env.game_state, actor).legal_actions())
                legal = [a for a in legal_a if a in legal_b and a not in (c1, c2)] or legal_a
                action = legal[value % len(legal)]
                for k in range(2):
                    response = twin_clients[k].post(
                        "/api/tables/twin/action", json={"token": tokens[k][actor], "action": action}
                    )
                    if actor == seat:
                        answers[k].append(response.text)
                if tables[0].version != tables[1].version:  # legal in one twin only: the other seats' cards differ
                    break
                for k in range(2):  # the push of the change to the observing seat
                    answers[k].append(json.dumps(sockets[k].receive_json()))
            elif op == "http junk":
                for k in range(2):
                    body = {"token": tokens[k][seat], "action": value["any"] if value["action"] == "any" else 99}
                    body["seat"] = value["junk_claim"] if value["claim"] == "junk" else seat
                    response = twin_clients[k].post("/api/tables/twin/action", json=body)
                    answers[k].append(f"{response.status_code} {response.text}")
                    if response.status_code == 200:  # a legal card of this seat: its push follows
                        answers[k].append(json.dumps(sockets[k].receive_json()))
            elif op == "ws junk":
                kind, payload = value
                if kind == "act":
                    payload = {"type": "act", "action": payload["any"]}
                text = "" if kind == "bytes" else payload if isinstance(payload, str) else json.dumps(payload)
                for k in range(2):
                    sockets[k].send_bytes(payload) if kind == "bytes" else sockets[k].send_text(text)
                    answers[k].append(json.dumps(sockets[k].receive_json()))
            else:
                for k in range(2):
                    response = twin_clients[k].get(f"/api/tables/twin/{op}", params={"token": tokens[k][seat]})
                    answers[k].append(f"{response.status_code} {response.text}")
            if tables[0].version != tables[1].version or not hidden():
                break  # the twins part here (one card shown, or an action legal in one twin only)
            assert answers[0] == answers[1], f"seat {seat} can tell {c1} and {c2} apart after {op}"
            received[0] += answers[0]
            received[1] += answers[1]
    assert received[0] == received[1]


# ----------------------------------------------------------------------------- a bot seat's WebSocket
TO_BOT = jsonschema.Draft202012Validator(protocol.schema())
ERROR = jsonschema.Draft202012Validator(
    {
        "type": "object",
        "required": ["type", "message"],
        "properties": {"type": {"const": "error"}, "message": {"type": "string", "minLength": 1}},
        "additionalProperties": False,
    }
)


def _bot_read(ws: Any) -> dict[str, Any]:
    """One line from a bot seat's WebSocket: a protocol message (checked against its schema) or an error."""
    text = ws.receive_text()
    assert text.endswith("\n") and text.count("\n") == 1
    message: dict[str, Any] = json.loads(text)
    (ERROR if message.get("type") == "error" else TO_BOT).validate(message)
    if message["type"] == "error":
        assert "x" * 200 not in message["message"], "a refusal echoed a huge message back"
    return message


@st.composite
def bot_message(draw: Any) -> tuple[str, Any]:
    """One message to a bot seat: ``("text", str)``, ``("bytes", b)``, or a hello answer or an answer to fill in."""
    kind = draw(st.integers(0, 11))
    if kind == 0:
        return "text", draw(st.text(max_size=30))
    if kind == 1:
        return "bytes", draw(st.binary(max_size=30))
    if kind == 2:
        return "text", json.dumps(draw(JSON))
    if kind == 3:
        return "text", "x" * (MAX_MESSAGE + draw(st.integers(1, 3000)))
    if kind == 4:
        return "huge answer", draw(st.integers(0, 60))  # a legal action padded over the limit
    if kind == 5:
        return "text", draw(st.sampled_from(["[" * 3000 + "]" * 3000, '{"action": ' + "9" * 4400 + "}", "1\n2"]))
    if kind in (6, 7):
        return "hello", {
            "type": draw(st.sampled_from(["hello", "hello", "hello", "Hello", None])),
            "protocol": draw(st.sampled_from([1, 1, 1, 2, 0, "1", None, 1.0, True, "missing"])),
            "extra": draw(st.dictionaries(st.sampled_from(["name", "observation", "x"]), SCALAR, max_size=2)),
        }
    return "answer", {
        "action": draw(st.sampled_from(["legal", "legal", "legal", "any", "junk"])),
        "form": draw(st.sampled_from(["id", "label", "object", "line"])),
        "index": draw(st.integers(0, 60)),
        "any": draw(st.integers(-5, 10_000)),
        "junk": draw(st.sampled_from(["AS", "ZZ", 1.0, True, None, [1], {"a": 1}, "bid 99", ""])),
    }


def _bot_text(kind: str, value: Any, act: dict[str, Any] | None) -> str | bytes:
    """The message a :func:`bot_message` draw sends, given the act that waits (None: none)."""
    legal = act["legal"] if act is not None else []
    if kind in ("text", "bytes"):
        return value  # type: ignore[no-any-return]
    if kind == "huge answer":
        action = legal[value % len(legal)]["id"] if legal else value
        return json.dumps({"action": action, "pad": "x" * MAX_MESSAGE})
    if kind == "hello":
        answer = {"type": value["type"], **value["extra"]}
        if value["protocol"] != "missing":
            answer["protocol"] = value["protocol"]
        return json.dumps(answer)
    if value["action"] == "legal" and legal:
        chosen = legal[value["index"] % len(legal)]
        named: Any = chosen["label"] if value["form"] == "label" else chosen["id"]
    else:
        named = value["any"] if value["action"] != "junk" else value["junk"]
    if value["form"] == "object":
        return json.dumps({"action": named})
    return json.dumps(named) + ("\n" if value["form"] == "line" else "")


def _settled(table: Table, version: int) -> None:
    """Wait until the server thread took the action after ``version``."""
    deadline = time.monotonic() + 60
    while table.version <= version:
        assert time.monotonic() < deadline, "a taken answer did not reach the table"
        time.sleep(0.002)


@SETTINGS
@given(
    game=st.sampled_from(sorted(GAMES)),
    seed=st.integers(0, 30),
    messages=st.lists(bot_message(), max_size=12),
    greet=st.booleans(),
    close_early=st.booleans(),
)
def test_fuzz_bot_socket_messages(
    twin_clients: tuple[TestClient, TestClient],
    game: str,
    seed: int,
    messages: list[tuple[str, Any]],
    greet: bool,
    close_early: bool,
) -> None:
    """Any stream of messages from a bot, at a table of bot seats (nobody else connected): a hello answer is taken
    exactly when the protocol's check takes it (another version closes with 4426), an answer exactly when it names a
    legal action of the act that waits; a refused message gets an error (then the same act, when one waits); every
    line the bot reads is a protocol message or an error, and the table moves by the answers taken only."""
    client = twin_clients[0]
    table_id, tokens = _open(client, game, seed, "bot")
    table: Table = client.app.state.lobby.tables[table_id]  # type: ignore[attr-defined]
    codec = ViewCodec(table.game)
    seat = table.env.game_state.to_act
    taken = 0
    if greet:  # half the streams start with a good hello answer, so that the answers to acts are fuzzed too
        messages = [("hello", {"type": "hello", "protocol": 1, "extra": {}}), *messages]
    try:
        with client.websocket_connect(f"/api/tables/{table_id}/bot?token={tokens[seat]}") as ws:
            assert _bot_read(ws)["type"] == "hello"
            greeted, act, closed = False, None, False
            for kind, value in messages:
                before = table.version
                legal = table.game.view(table.env.game_state, seat).legal  # before the server may take an answer
                data = _bot_text(kind, value, act)
                ws.send_bytes(data) if isinstance(data, bytes) else ws.send_text(data)
                text = data if isinstance(data, str) and len(data.encode()) <= MAX_MESSAGE else None
                if not greeted:
                    try:
                        check_hello_answer(decode_line(text)) if text is not None else None
                    except AnswerError as err:
                        if err.kind == "version":
                            refused = _bot_read(ws)
                            assert refused["type"] == "error" and "protocol 1" in refused["message"]
                            with pytest.raises(WebSocketDisconnect) as gone:
                                ws.receive_text()
                            assert gone.value.code == botseat.VERSION
                            closed = True
                            break
                        text = None
                    except ValueError:
                        text = None
                    if text is None:
                        assert _bot_read(ws)["type"] == "error"
                        continue
                    greeted = True
                    act = _bot_read(ws)  # it is this seat's turn: the act follows the hello answer
                    assert act["type"] == "act" and (act["deal"], act["decision"]) == table.bot_decision(seat)
                    continue
                action = None
                if act is not None and text is not None:
                    try:
                        action = codec.read_answer(text, legal)
                    except AnswerError:
                        pass
                if action is None:
                    refused = _bot_read(ws)
                    assert refused["type"] == "error"
                    if act is not None:
                        assert _bot_read(ws) == act  # the same act again
                    continue
                _settled(table, before)
                taken += 1
                act = _bot_read(ws) if table.bot_decision(seat) is not None or table.over else None
                if act is not None and act["type"] != "act":  # the game is over: deal_end, match_end, goodbye
                    while act["type"] != "goodbye":
                        act = _bot_read(ws)
                    closed = True
                    break
            if close_early and not closed:
                ws.close()
                ws.send_text("0")  # after the close: nobody reads it
        assert table.version == taken
    finally:
        client.app.state.lobby.close(table_id)  # type: ignore[attr-defined]


@SETTINGS
@given(
    token=st.one_of(st.text(max_size=30), st.sampled_from(["bot", "bot", "human", "other", "missing"])),
    key=st.sampled_from(["token", "token", "Token", "t"]),
)
def test_fuzz_bot_socket_tokens(twin_clients: tuple[TestClient, TestClient], token: str, key: str) -> None:
    """Any token on a bot seat's WebSocket: its bot seat's (the hello), a human seat's (4403), any other (4404)."""
    client = twin_clients[0]
    made = client.post("/api/tables", json={"game": "german_whist_v0", "seats": ["human", "bot"], "seed": 1}).json()
    table_id, tokens = made["table_id"], [s["url"].split("token=")[1] for s in made["seats"]]
    other_id, others = _open(client, "german_whist_v0", 1, "bot")
    lobby = client.app.state.lobby  # type: ignore[attr-defined]
    try:
        given_token = {"bot": tokens[1], "human": tokens[0], "other": others[1]}.get(token, token)
        query = "" if token == "missing" else f"?{key}={quote(given_token, safe='')}"
        valid = key == "token" and token != "missing"
        with client.websocket_connect(f"/api/tables/{table_id}/bot{query}") as ws:
            first = _bot_read(ws)
            if valid and given_token == tokens[1]:
                assert first["type"] == "hello" and first["seat"] == 1
                return
            assert first["type"] == "error"
            with pytest.raises(WebSocketDisconnect) as gone:
                ws.receive_text()
            human = valid and given_token == tokens[0]
            assert gone.value.code == (botseat.NOT_A_BOT if human else botseat.NO_SEAT)
        assert lobby.tables[table_id].version == 0
    finally:
        lobby.close(table_id)
        lobby.close(other_id)
