"""The ``whist-serve`` ASGI application (Starlette) and its console script.

Routes (every API answer is JSON; an error is ``{"error": "<what is wrong and what to do>"}``):

- ``GET /``: the lobby; ``GET /table/{table_id}?token=...``: a table as the seat the token holds.
- ``GET /api/games``: the games, their seats and options: for each option its kind, allowed values or range, default
  and description, the option that sets the number of seats, the agents offered for a seat, and the options a
  ``pretrained`` seat needs (:func:`~whist_env.serve.tables.game_catalogue`). ``GET /api/agents``: what a seat can
  hold (``seats``, ``agent_names``, and ``agents``: each offered agent's ``name``, ``doc`` and ``games``).
- ``POST /api/tables`` ``{"game", "options", "seats": ["human", "heuristic", ...], "study": false, "seed": null}``
  → ``{"table_id", "url", "seats": [{"seat", "kind", "url"}]}``: ``url`` opens the table as seat 0; each
  seat's url holds that seat's token (hand them to the players).
- ``GET /api/tables/{table_id}/view?token=...``: the seat's message (what it may know now).
- ``POST /api/tables/{table_id}/action`` ``{"token", "action", "seat"?}``: take an action.
- ``GET /api/tables/{table_id}/record?token=...``: the game's :class:`~whist_env.record.GameRecord` as JSON
  (``GameRecord.from_json`` reads it; ``replay()`` rebuilds any position), for any seat's token, once the game is
  over; refused with 409 while it runs, since the record holds every hidden card.
- ``WS /api/tables/{table_id}/ws?token=...``: the seat's message after every change; send
  ``{"type": "act", "action": id}`` to act. A refused message is answered ``{"type": "error", "message"}``.
- ``WS /api/tables/{table_id}/bot?token=...``: a ``bot`` seat, played by a program over the bot protocol
  (:mod:`whist_env.serve.botseat`: ``hello``, ``act``, ``deal_end``, ``match_end``, ``goodbye``, one JSON line per
  message); ``whist-bot connect`` (:mod:`whist_env.serve.bridge`) plays any stdin/stdout bot through it.

Any other path answers 404 with a JSON error too.

The pages carry hooks that a course's own browser tests can drive (Playwright, Selenium):

- the table (``static/table.js``): every element that acts carries ``data-action="<action id>"`` and is disabled
  unless legal now; ``#phase`` carries ``data-phase`` (``over`` at the end).
- the lobby (``static/lobby.js``), a form built from ``GET /api/games``: ``[data-lobby=game]`` the game;
  ``[data-option=<name>]`` each option's control (a select for a choice or an optional bool, a checkbox for a bool, a
  number input with min and max for an int), its default preselected, disabled while a ``pretrained`` seat holds it;
  ``[data-lobby=seat-<i>]`` seat i's select (human, random, heuristic, pimc where the solver covers the game,
  pretrained, other) and ``[data-lobby=seat-<i>-spec]`` its agent spec when other; ``[data-lobby=pretrained-note]``
  says which options a ``pretrained`` seat set (those its network was trained with: one deal);
  ``[data-lobby=study]``, ``[data-lobby=seed]``, ``[data-lobby=create]``; ``[data-lobby=error]`` the server's
  refusal. Once the table is open: ``[data-share=<seat>]`` each human seat's link (a read-only input),
  ``[data-copy=<seat>]`` its copy button, ``[data-bot-command=<seat>]`` each bot seat's command to connect its
  program (a read-only input), ``a[data-seat-link=<seat>]`` each agent or bot seat's link, and
  ``a[data-lobby=open]`` your own seat (the first human one).
- the table: each seat's box ``[data-seat=<i>]``; a bot seat's box carries ``data-bot-connected`` (``true`` while
  its program is connected).

Agents think in thread pools, so that no table holds up the others: agents that search (PIMC) in their own pool
(a search releases the GIL, so it runs beside the event loop on another core), the others in a second pool, where a
search never keeps them waiting. Tables are bounded in
number (``--max-tables``) and closed after ``--idle-timeout`` seconds without an action or a request.

Limits and checks for a server that others reach (a classroom: ``--host 0.0.0.0``); each refusal is a JSON error
naming the option that sets the limit (:mod:`whist_env.serve.guard`):

- ``--max-body`` (64 KiB): a larger request body is answered 413.
- ``--max-message`` (64 KiB): a larger WebSocket message is answered ``{"type": "error"}`` (one over twice the
  limit closes the connection with 1009); so is a binary one. A client that sends faster than it reads its answers
  is closed with 1008 (policy violation). The same holds for a bot seat's WebSocket.
- ``--max-tables-per-client`` (40): the tables one client address may hold open at once (a classroom behind one
  router shares one address); one more is answered 429.
- ``Host``: a request must name this server (localhost, 127.0.0.1, [::1], the bound address, and when bound to
  0.0.0.0 or :: this machine's names and addresses) or one of ``--allowed-hosts``; others get 400. This stops
  DNS rebinding (a web page whose name points at this machine driving the server through a browser).
  ``--allowed-hosts '*'`` turns the check off: unsafe on any machine that runs a browser.
- ``Origin``: a WebSocket or a POST from a browser page must come from the server's own origin (the scheme, host
  and port it is reached on) or one of ``--allowed-origins`` (``scheme://host[:port]``, comma-separated); a
  refused WebSocket is closed with 1008, a refused POST answered 403.
- seat tokens are redacted from the log (``token=[redacted]``), whatever ``--log-level``.
- model seats (``model``, ``pretrained(path=...)``, ``rllib``, also as a PIMC fallback) load only from
  ``--models`` folders.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import math
import os
import secrets
import socket
import time
from collections.abc import AsyncIterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import HTTPConnection, Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.types import Message
from starlette.websockets import WebSocket, WebSocketDisconnect

from whist_env.agents.agent_spec import AgentSpec, parse_agent_spec
from whist_env.agents.factory import AGENT_NAMES
from whist_env.errors import OptionError
from whist_env.registry import default_game_id, game_ids, get_spec
from whist_env.serve import guard
from whist_env.serve.botseat import NO_SEAT, BotLink, refuse_bot, serve_bot
from whist_env.serve.tables import (
    BOT,
    HUMAN,
    SEAT_CHOICES,
    Table,
    TableError,
    agent_catalogue,
    encode,
    game_catalogue,
)

STATIC_DIR = resources.files("whist_env.serve") / "static"
DEFAULT_HOST = "127.0.0.1"
ACT = '{"type": "act", "action": <action id>}'
MAX_UNANSWERED = 32
"""Refused WebSocket messages whose answers are not yet sent before the connection is closed (1008): a client
that sends faster than it reads would otherwise fill the server's memory with answers."""
log = logging.getLogger("whist_env.serve")


class ClientLimitError(TableError):
    """One client address holds its maximum of open tables (answered 429)."""


@dataclass
class ServerConfig:
    """Settings of one server.

    Attributes:
        max_tables: tables open at once; creating one more is refused until one closes.
        idle_timeout: seconds without an action or request after which a table is closed.
        agent_delay: seconds an agent waits before it plays (so that humans can follow the cards).
        agent_threads: threads in which agents that do not search think.
        search_threads: threads in which agents that search (PIMC) think (default: half this machine's cores, at
            least one; a search takes a core of its own, and the event loop needs one).
        model_dirs: folders from which ``model:<path>`` seats may load saved models (none: no model seats; a
            saved model is a pickle, and loading one runs code from the file).
        host: the address the server is bound to (its names are allowed hosts; ``0.0.0.0``/``::``: this
            machine's names and addresses).
        max_body: the largest request body, in bytes.
        max_message: the largest WebSocket message, in bytes.
        max_tables_per_client: tables one client address may hold open at once.
        allowed_hosts: more host names requests may give (``*``: any; unsafe, see :mod:`whist_env.serve.guard`).
        allowed_origins: more origins (``scheme://host[:port]``) whose pages may open WebSockets and POST.
        max_search_samples: the most deals a searching (PIMC) seat may draw per decision (see
            :func:`whist_env.serve.guard.check_search_limits` for its other bounds).
    """

    max_tables: int = 50
    idle_timeout: float = 1800.0
    agent_delay: float = 0.4
    agent_threads: int = 4
    search_threads: int = max(1, (os.cpu_count() or 2) // 2)
    model_dirs: tuple[str, ...] = ()
    host: str = DEFAULT_HOST
    max_body: int = guard.DEFAULT_MAX_BODY
    max_message: int = guard.DEFAULT_MAX_MESSAGE
    max_tables_per_client: int = 40
    allowed_hosts: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()
    max_search_samples: int = guard.DEFAULT_MAX_SEARCH_SAMPLES


@dataclass
class Lobby:
    """The open tables, the clients listening to each, and the agents' thread pools."""

    config: ServerConfig
    tables: dict[str, Table] = field(default_factory=dict)
    listeners: dict[str, set[asyncio.Queue[Any]]] = field(default_factory=dict)  # a version, or what to send
    bot_links: dict[tuple[str, int], BotLink] = field(default_factory=dict)  # (table id, seat) -> its bot connection
    runners: dict[str, asyncio.Task[None]] = field(default_factory=dict)
    owners: dict[str, str] = field(default_factory=dict)  # table id -> the client address that opened it
    executors: dict[bool, ThreadPoolExecutor] = field(default_factory=dict)  # searches -> its pool

    def pool(self, searches: bool = False) -> ThreadPoolExecutor:
        """The thread pool of agents that search (PIMC), or of the others (each made on first use)."""
        if searches not in self.executors:
            threads, name = (self.config.search_threads, "search") if searches else (self.config.agent_threads, "agent")
            self.executors[searches] = ThreadPoolExecutor(threads, thread_name_prefix=f"whist-{name}")
        return self.executors[searches]

    def create(self, body: Any, client: str = "") -> Table:
        """Open a table from a ``POST /api/tables`` body for the client at address ``client``.

        Raises:
            OptionError: for a malformed body, a bad game, option or seat.
            ClientLimitError: when ``client`` already holds ``max_tables_per_client`` tables.
            TableError: when the server already holds ``max_tables`` tables.
        """
        if not isinstance(body, dict):
            example = {"game": default_game_id(), "seats": ["human", "heuristic"]}
            raise OptionError(f"send a JSON object such as {json.dumps(example)}")
        known = {"game", "options", "seats", "study", "seed"}
        unknown = sorted(set(body) - known)
        if unknown:
            raise OptionError(f"unknown field(s) {unknown}; known: {sorted(known)}")
        if "game" not in body:
            raise OptionError("name the game: 'game' is one of the ids listed by GET /api/games")
        if not isinstance(body["game"], str):
            raise OptionError(f"'game' is a game id (a string; see GET /api/games), got {_short(body['game'])}")
        seed = body.get("seed")
        if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool) or seed < 0):
            raise OptionError(f"'seed' is a non-negative integer or null, got {_short(seed)}")
        options = body.get("options")
        if options is not None and not isinstance(options, dict):
            raise OptionError(f"'options' is an object of option names and values (or null), got {_short(options)}")
        study = body.get("study", False)
        if not isinstance(study, bool):
            raise OptionError(f"'study' is true or false, got {_short(study)}")
        seats = body.get("seats")
        if seats is not None and not (isinstance(seats, list) and all(isinstance(k, str) for k in seats)):
            raise OptionError(
                f"'seats' is a list of seat names ({' | '.join(SEAT_CHOICES)}) or null, got {_short(seats)}"
            )
        for i, kind in enumerate(seats or ()):
            self._check_seat(i, kind, body["game"])
        self.close_idle()
        if len(self.tables) >= self.config.max_tables:
            raise TableError(
                f"the server holds its maximum of {self.config.max_tables} tables; finish one, wait for idle tables "
                "to close, or restart whist-serve with a larger --max-tables"
            )
        held = sum(1 for owner in self.owners.values() if owner == client)
        if held >= self.config.max_tables_per_client:
            raise ClientLimitError(
                f"your address ({client}) already holds {held} open tables, the most this server allows one address "
                f"(--max-tables-per-client {self.config.max_tables_per_client}); finish a game or wait for idle "
                f"tables to close (after {self.config.idle_timeout:g} s), or ask whoever runs the server for a "
                "larger --max-tables-per-client"
            )
        table_id = secrets.token_urlsafe(8)
        table = Table(table_id, body["game"], options, seats, study=study, seed=seed)
        self.tables[table_id] = table
        self.owners[table_id] = client
        self.listeners[table_id] = set()
        return table

    def _check_seat(self, seat: int, kind: str, game_id: str) -> None:
        """Every file an agent spec names (a model, an exported policy, a checkpoint, nested in a fallback too)
        must lie in the server's model folders, and a searching seat must keep within the server's bounds."""
        if kind in (HUMAN, BOT):
            return
        try:
            spec = parse_agent_spec(kind)
            search = get_spec(game_id).search if game_id in game_ids() else None  # an unknown game: Table says so
            guard.check_search_limits(spec, search.max_tricks if search else None, self.config.max_search_samples)
        except OptionError as err:
            raise OptionError(f"seat {seat}: {err}") from None
        for path in _spec_paths(spec):
            self._check_model_path(path)

    def _check_model_path(self, path: str) -> None:
        if not self.config.model_dirs:
            raise OptionError(
                f"model seats are off on this server (a seat names the file {_short(path)}): start it with "
                "--models DIR to allow model:<path> inside DIR"
            )
        resolved = Path(path).resolve()
        if not any(resolved.is_relative_to(Path(d).resolve()) for d in self.config.model_dirs):
            folders = ", ".join(self.config.model_dirs)
            raise OptionError(f"model:{path} is outside the model folders of this server ({folders})")

    def get(self, table_id: str) -> Table:
        """The open table ``table_id``.

        Raises:
            TableError: when there is no such table (never opened, or closed).
        """
        table = self.tables.get(table_id)
        if table is None:
            raise TableError(f"no open table {table_id!r}: it was closed (idle) or never opened; open one in the lobby")
        table.touch()
        return table

    def notify(self, table: Table) -> None:
        """Tell every client of ``table`` that it changed."""
        for queue in self.listeners.get(table.id, ()):
            queue.put_nowait(table.version)

    def kick(self, table: Table) -> None:
        """Start the table's agents if it is an agent's turn (one runner per table)."""
        runner = self.runners.get(table.id)
        if (runner is None or runner.done()) and table.agent_to_act() is not None:
            self.runners[table.id] = asyncio.get_running_loop().create_task(self._run_agents(table))

    async def _run_agents(self, table: Table) -> None:
        loop = asyncio.get_running_loop()
        while (pending := table.agent_view()) is not None:
            version, seat, view = pending
            if self.config.agent_delay > 0:
                await asyncio.sleep(self.config.agent_delay)
            try:
                pool = self.pool(table.seats[seat].searches)
                action, explanation = await loop.run_in_executor(pool, table.think, seat, view)
            except Exception as err:  # the message names the failure, not its text (it may hold the agent's cards)
                log.exception("table %s: the agent at seat %d failed", table.id, seat)
                table.failure = (
                    f"the agent at seat {seat} ({table.seats[seat].kind}) failed with {type(err).__name__}; "
                    "see the server's log, and open a new table"
                )
                table.version += 1
                self.notify(table)
                return
            if table.closed:
                return
            if table.apply_agent(version, seat, action, explanation):
                self.notify(table)

    def close(self, table_id: str) -> None:
        """Close a table: its clients are told, its agents stop."""
        table = self.tables.pop(table_id, None)
        if table is None:
            return
        table.closed = True
        self.owners.pop(table_id, None)
        runner = self.runners.pop(table_id, None)
        if runner is not None:
            runner.cancel()
        table.version += 1
        self.notify(table)
        self.listeners.pop(table_id, None)

    def close_idle(self) -> None:
        """Close every table idle for longer than ``idle_timeout``."""
        now = time.monotonic()
        for table_id, table in list(self.tables.items()):
            if now - table.last_activity > self.config.idle_timeout:
                self.close(table_id)


def _error(message: str, status: int = 400) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def _short(value: Any, limit: int = 80) -> str:
    """``repr(value)``, cut to ``limit`` characters (a refusal does not echo a whole large message back)."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _spec_paths(spec: AgentSpec) -> list[str]:
    """The file paths an agent spec names, nested specs included."""
    paths = []
    for key, value in spec.args:
        if isinstance(value, AgentSpec):
            paths += _spec_paths(value)
        elif key == "path":
            paths.append(str(value))
    return paths


def _json(data: bytes | str, hint: str) -> Any:
    """The JSON value of ``data``.

    Raises:
        TableError: for text that is not JSON, not UTF-8, nested too deep or holding a number too long to read.
    """
    try:
        return json.loads(data)
    except RecursionError:
        raise TableError(f"the JSON is nested too deeply; send {hint}") from None
    except ValueError as err:  # JSONDecodeError, UnicodeDecodeError, an integer of more than 4300 digits
        raise TableError(f"not JSON ({_short(str(err), 200)}); send {hint}") from None


def _client_address(connection: HTTPConnection) -> str:
    return connection.client.host if connection.client is not None else "unknown"


def _seat_url(table: Table, seat: int) -> str:
    return f"/table/{table.id}?token={table.seats[seat].token}"


def create_app(config: ServerConfig | None = None) -> Starlette:
    """The ASGI application (one :class:`Lobby` of tables).

    Raises:
        ValueError: for an ``allowed_origins`` entry that is not an origin.
    """
    lobby = Lobby(config or ServerConfig())
    policy = guard.Policy(
        guard.allowed_hosts(lobby.config.host, lobby.config.allowed_hosts),
        guard.allowed_origins(lobby.config.allowed_origins),
        lobby.config.max_body,
    )
    guard.install_redaction()

    async def lobby_page(request: Request) -> Response:
        return FileResponse(str(STATIC_DIR / "index.html"))

    async def table_page(request: Request) -> Response:
        return FileResponse(str(STATIC_DIR / "table.html"))

    async def games(request: Request) -> Response:
        return JSONResponse(game_catalogue())

    async def agents(request: Request) -> Response:
        return JSONResponse(
            {"seats": list(SEAT_CHOICES), "agent_names": list(AGENT_NAMES), "agents": agent_catalogue()}
        )

    async def create_table(request: Request) -> Response:
        try:
            body = _json(await request.body(), "an object with 'game', 'options' and 'seats'")
        except TableError as err:
            return _error(f"the body is {err}")
        try:
            table = lobby.create(body, _client_address(request))
        except OptionError as err:
            return _error(str(err))
        except ClientLimitError as err:
            return _error(str(err), 429)
        except TableError as err:
            return _error(str(err), 503)
        lobby.kick(table)
        seats = [{"seat": s.index, "kind": s.kind, "url": _seat_url(table, s.index)} for s in table.seats]
        return JSONResponse({"table_id": table.id, "url": _seat_url(table, 0), "seats": seats})

    def _seat(request: HTTPConnection, token: Any) -> tuple[Table, int]:
        table = lobby.get(request.path_params["table_id"])
        return table, table.seat_of(token)

    async def view(request: Request) -> Response:
        try:
            table, seat = _seat(request, request.query_params.get("token"))
        except TableError as err:
            return _error(str(err), 404)
        return Response(table.message_text(seat), media_type="application/json")

    async def record(request: Request) -> Response:
        try:
            table, _ = _seat(request, request.query_params.get("token"))
        except TableError as err:
            return _error(str(err), 404)
        try:
            game_record = table.game_record()
        except TableError as err:
            return _error(str(err), 409)
        table.touch()
        name = f"{table.game_id}-{table.id}.json"
        return Response(
            game_record.to_json(indent=1),
            media_type="application/json",
            headers={"Content-Disposition": f'attachment; filename="{name}"'},
        )

    async def action(request: Request) -> Response:
        try:
            body = _json(await request.body(), "{'token': ..., 'action': <action id>}")
        except TableError as err:
            return _error(f"the body is {err}")
        if not isinstance(body, dict):
            return _error("send a JSON object {'token': ..., 'action': <action id>}")
        try:
            table, seat = _seat(request, body.get("token"))
        except TableError as err:
            return _error(str(err), 404)
        try:
            _check_claimed_seat(body, seat)
            table.act(seat, body.get("action"))
        except TableError as err:
            return _error(str(err))
        lobby.notify(table)
        lobby.kick(table)
        return Response(table.message_text(seat), media_type="application/json")

    async def socket(websocket: WebSocket) -> None:
        await websocket.accept()
        try:
            table, seat = _seat(websocket, websocket.query_params.get("token"))
        except TableError as err:
            await websocket.send_text(encode({"type": "error", "message": str(err)}))
            await websocket.close(code=4404)
            return
        # The pusher is the only sender: states (a version number) and errors (a text) go through its queue.
        queue: asyncio.Queue[int | str] = asyncio.Queue()
        lobby.listeners.setdefault(table.id, set()).add(queue)
        unanswered = 0  # refused messages whose answer is not sent yet

        async def push() -> None:
            nonlocal unanswered
            sent = (-1, -1)
            try:
                while True:
                    if (table.version, table.presence) != sent:  # an action, or a bot seat's (dis)connection
                        sent = (table.version, table.presence)
                        await websocket.send_text(table.message_text(seat))
                    if table.closed:
                        await websocket.close(code=4410)
                        return
                    item = await queue.get()
                    if isinstance(item, str):
                        await websocket.send_text(encode({"type": "error", "message": item}))
                        unanswered -= 1
            except (WebSocketDisconnect, RuntimeError, OSError):
                return  # the client went away; the receiving side ends the connection

        pusher = asyncio.get_running_loop().create_task(push())
        try:
            while True:
                try:
                    message = await websocket.receive()
                except RuntimeError:  # the table was closed, and its socket with it
                    break
                if message["type"] == "websocket.disconnect":
                    break
                table.touch()
                try:
                    msg = _ws_request(message, lobby.config.max_message)
                    _check_claimed_seat(msg, seat)
                    table.act(seat, msg.get("action"))
                except TableError as err:
                    if unanswered >= MAX_UNANSWERED:
                        await _close_quietly(websocket, guard.POLICY_VIOLATION, "too many messages unanswered")
                        break
                    unanswered += 1
                    queue.put_nowait(str(err))
                    await asyncio.sleep(0)  # let the pusher answer before the next message is read
                else:
                    lobby.notify(table)
                    lobby.kick(table)
        except WebSocketDisconnect:
            pass
        finally:
            pusher.cancel()
            listeners = lobby.listeners.get(table.id)
            if listeners is not None:
                listeners.discard(queue)

    async def bot_socket(websocket: WebSocket) -> None:
        await websocket.accept()
        try:
            table, seat = _seat(websocket, websocket.query_params.get("token"))
        except TableError as err:
            await refuse_bot(websocket, str(err), NO_SEAT)
            return
        await serve_bot(websocket, table, seat, lobby, lobby.config.max_message, MAX_UNANSWERED)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async def sweep() -> None:
            while True:
                await asyncio.sleep(min(60.0, max(0.05, lobby.config.idle_timeout / 4)))
                lobby.close_idle()

        sweeper = asyncio.get_running_loop().create_task(sweep())
        try:
            yield
        finally:
            sweeper.cancel()
            for runner in lobby.runners.values():
                runner.cancel()
            for executor in lobby.executors.values():
                executor.shutdown(wait=False, cancel_futures=True)

    async def http_error(request: Request, exc: Exception) -> Response:
        status = exc.status_code if isinstance(exc, HTTPException) else 500
        if status == 404:
            where = _short(request.url.path, 100)
            return _error(f"no page {where} here: the API is under /api/ (see GET /api/games)", 404)
        if status == 405:
            return _error(f"{request.method} is not allowed on {_short(request.url.path, 100)}", 405)
        if status == 500:
            return _error("the server failed on this request (a bug: see the server's log)", 500)
        return _error(str(getattr(exc, "detail", "refused")), status)

    app = Starlette(
        routes=[
            Route("/", lobby_page),
            Route("/table/{table_id}", table_page),
            Route("/api/games", games),
            Route("/api/agents", agents),
            Route("/api/tables", create_table, methods=["POST"]),
            Route("/api/tables/{table_id}/view", view),
            Route("/api/tables/{table_id}/action", action, methods=["POST"]),
            Route("/api/tables/{table_id}/record", record),
            WebSocketRoute("/api/tables/{table_id}/ws", socket),
            WebSocketRoute("/api/tables/{table_id}/bot", bot_socket),
            Mount("/static", app=StaticFiles(directory=str(STATIC_DIR)), name="static"),
        ],
        lifespan=lifespan,
        middleware=[Middleware(guard.Guard, policy=policy)],
        exception_handlers={HTTPException: http_error, Exception: http_error},
    )
    app.state.lobby = lobby
    app.state.policy = policy
    return app


def _check_claimed_seat(msg: dict[str, Any], seat: int) -> None:
    """A message that names a seat must name the token's seat."""
    claimed = msg.get("seat", seat)
    if type(claimed) is not int or claimed != seat:  # 1.0 and true are no seat numbers
        raise TableError(f"seat {_short(claimed)} is not yours: your token holds seat {seat}")


def _ws_request(message: Message, max_message: int) -> dict[str, Any]:
    """The ``act`` request of one WebSocket message.

    Raises:
        TableError: for a binary message, one over ``max_message`` bytes, or one that is not an ``act`` object.
    """
    text = message.get("text")
    if text is None:
        size = len(message.get("bytes") or b"")
        raise TableError(f"a binary message ({size} bytes) is not read here; send text: {ACT}")
    size = len(text.encode())
    if size > max_message:
        raise TableError(
            f"a message of {size} bytes is over this server's limit of {max_message} bytes (--max-message); send {ACT}"
        )
    msg = _json(text, ACT)
    if not isinstance(msg, dict) or msg.get("type") != "act":
        raise TableError(f"send {ACT}, got {_short(msg)}")
    return msg


async def _close_quietly(websocket: WebSocket, code: int, reason: str) -> None:
    with contextlib.suppress(RuntimeError, OSError, WebSocketDisconnect):
        await websocket.close(code=code, reason=reason)


def _comma_list(text: str) -> list[str]:
    return [item.strip() for item in text.split(",") if item.strip()]


def main(argv: Sequence[str] | None = None) -> None:
    """The ``whist-serve`` console script."""
    parser = argparse.ArgumentParser(
        prog="whist-serve",
        description="Play and study the whist_env games in your browser, against any agent. Open the address it "
        "prints: the lobby sets up a table (the game, its options, and who sits in each seat: you, a friend or an "
        "agent), and each seat gets a link of its own to hand to its player.",
        epilog="For a classroom, --host 0.0.0.0 lets other machines in; the limits above keep such a server safe "
        "(README.md, 'Play in the browser').",
    )
    parser.add_argument("--host", default=DEFAULT_HOST, help="address to bind (default 127.0.0.1: this machine only)")
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000; 0: a free one, printed)")
    parser.add_argument("--max-tables", type=int, default=50, help="tables open at once (default 50)")
    parser.add_argument(
        "--max-tables-per-client",
        type=int,
        default=40,
        metavar="N",
        help="tables one client address may hold open at once (default 40; a classroom behind one router shares one "
        "address); one more is answered 429",
    )
    parser.add_argument("--idle-timeout", type=float, default=1800.0, help="close a table idle this many seconds")
    parser.add_argument("--agent-delay", type=float, default=0.4, help="seconds an agent waits before it plays")
    parser.add_argument(
        "--models", action="append", default=[], metavar="DIR", help="allow model:<path> seats for models in DIR"
    )
    parser.add_argument(
        "--max-body",
        type=int,
        default=guard.DEFAULT_MAX_BODY,
        metavar="BYTES",
        help="largest request body (default 65536); a larger one is answered 413",
    )
    parser.add_argument(
        "--max-message",
        type=int,
        default=guard.DEFAULT_MAX_MESSAGE,
        metavar="BYTES",
        help="largest WebSocket message (default 65536); a larger one is answered with an error, one over twice "
        "this closes the connection (1009)",
    )
    parser.add_argument(
        "--allowed-hosts",
        type=_comma_list,
        default=[],
        metavar="HOST,...",
        help="host names requests may give besides localhost, 127.0.0.1, [::1], the bound address and (bound to "
        "0.0.0.0 or ::) this machine's names and addresses; others get 400 (this stops DNS rebinding). '*' allows "
        "every name: unsafe, any web page a visitor opens can then drive the server through the visitor's browser",
    )
    parser.add_argument(
        "--allowed-origins",
        type=_comma_list,
        default=[],
        metavar="ORIGIN,...",
        help="origins (scheme://host[:port]) whose pages may open the WebSocket and POST, besides the server's own "
        "(the scheme, host and port it is reached on); others are closed with 1008 or answered 403",
    )
    parser.add_argument(
        "--max-search-samples",
        type=int,
        default=guard.DEFAULT_MAX_SEARCH_SAMPLES,
        metavar="N",
        help=f"the most deals a pimc seat may draw per decision (default {guard.DEFAULT_MAX_SEARCH_SAMPLES}); its "
        f"table is at most 2**{guard.MAX_TT_BITS} entries, its time_budget {guard.MAX_TIME_BUDGET:g} s, its "
        "max_tricks and horizon the game's own search depth",
    )
    parser.add_argument(
        "--log-level",
        default="warning",
        choices=("critical", "error", "warning", "info", "debug"),
        help="uvicorn's log level (default warning; info logs every request, with the seat tokens redacted)",
    )
    args = parser.parse_args(argv)
    checks = [  # each flag's own message (not (x > 0) holds for NaN too, which no timer would ever reach)
        (not 0 <= args.port <= 65535, f"--port must be 0 to 65535, got {args.port}"),
        (args.max_tables < 1, f"--max-tables must be ≥ 1, got {args.max_tables}"),
        (
            not 0 < args.idle_timeout < math.inf,
            f"--idle-timeout must be seconds > 0, got {args.idle_timeout}",
        ),
        (
            not 0 <= args.agent_delay < math.inf,
            f"--agent-delay must be seconds ≥ 0, got {args.agent_delay}",
        ),
    ]
    for flag in ("max_tables_per_client", "max_body", "max_message", "max_search_samples"):
        value = getattr(args, flag)
        checks.append((value < 1, f"--{flag.replace('_', '-')} must be ≥ 1, got {value}"))
    checks += [(not Path(d).is_dir(), f"--models {d}: no such folder") for d in args.models]
    for failed, message in checks:
        if failed:
            parser.error(message)
    import uvicorn

    config = ServerConfig(
        max_tables=args.max_tables,
        idle_timeout=args.idle_timeout,
        agent_delay=args.agent_delay,
        model_dirs=tuple(args.models),
        host=args.host,
        max_body=args.max_body,
        max_message=args.max_message,
        max_tables_per_client=args.max_tables_per_client,
        allowed_hosts=tuple(args.allowed_hosts),
        allowed_origins=tuple(args.allowed_origins),
        max_search_samples=args.max_search_samples,
    )
    try:
        app = create_app(config)
    except ValueError as err:
        parser.error(f"--allowed-origins: {err}")
    sockets = listen_sockets(parser, args.host, args.port)  # before the "open http://..." line, which names its port
    port = sockets[0].getsockname()[1]
    hosts = app.state.policy.hosts
    if guard.normalize_host(args.host) in guard.EVERY_ADDRESS:
        reach = guard.public_addresses(hosts)
        where = f"; from other machines: http://<{' | '.join(reach[:6])}>:{port}/" if reach else ""
        print(f"whist-serve: open http://127.0.0.1:{port}/ in a browser{where} (Ctrl-C stops)")
    else:
        print(f"whist-serve: open http://{url_host(args.host)}:{port}/ in a browser (Ctrl-C stops)")
    print(f"whist-serve: answers to the hosts {guard.describe_hosts(hosts)} (--allowed-hosts adds more)", flush=True)
    served = uvicorn.Config(app, host=args.host, port=port, log_level=args.log_level, ws_max_size=2 * args.max_message)
    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C: the server has shut down; no traceback (as uvicorn.run)
        uvicorn.Server(served).run(sockets=sockets)


def url_host(host: str) -> str:
    """``host`` as a URL writes it: an IPv6 address in brackets (``http://[::1]:8000/``)."""
    return f"[{host}]" if ":" in host else host


def listen_sockets(parser: argparse.ArgumentParser, host: str, port: int) -> list[socket.socket]:
    """The server's sockets, one per address of ``host`` (as uvicorn binds them: ``localhost`` may name 127.0.0.1
    and ::1), bound to ``port`` (0: a free port, the same for every address) before anything is printed, so that a
    host that names no address of this machine, or a port in use, is one line and exit status 2 (uvicorn would bind
    after the "open http://..." line and exit with 3), and the line names the port really bound."""
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as err:
        parser.error(f"--host {host!r} names no address of this machine's resolver ({err})")
    sockets: list[socket.socket] = []
    for family, kind, proto, _, address in dict.fromkeys(found):  # each address once, in the resolver's order
        sock = socket.socket(family, kind, proto)
        sockets.append(sock)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn does: a restart need not wait
        if family == socket.AF_INET6:  # as asyncio does: this socket answers IPv6 alone, an IPv4 one beside it
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        try:
            sock.bind((address[0], sockets[0].getsockname()[1] if len(sockets) > 1 else port, *address[2:]))
        except OSError as err:
            for opened in sockets:
                opened.close()
            parser.error(f"cannot listen on {host} port {port}: {err.strerror or err}")
    return sockets


if __name__ == "__main__":  # pragma: no cover
    main()
