"""The ``whist-serve`` ASGI application (Starlette) and its console script.

Routes (every API answer is JSON; an error is ``{"error": "<what is wrong and what to do>"}``):

- ``GET /``: the lobby; ``GET /table/{table_id}?token=...``: a table as the seat the token holds.
- ``GET /api/games``: the games, their seats and options; ``GET /api/agents``: what a seat can hold.
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

Agents think in a thread pool, so a table whose agent searches never holds up the others. Tables are bounded in
number (``--max-tables``) and closed after ``--idle-timeout`` seconds without an action or a request.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import secrets
import time
from collections.abc import AsyncIterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import HTTPConnection, Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.websockets import WebSocket, WebSocketDisconnect

from whist_env.agents.factory import AGENT_NAMES
from whist_env.errors import OptionError
from whist_env.registry import default_game_id
from whist_env.serve.tables import SEAT_CHOICES, Table, TableError, encode, game_catalogue

STATIC_DIR = resources.files("whist_env.serve") / "static"
DEFAULT_HOST = "127.0.0.1"
log = logging.getLogger("whist_env.serve")


@dataclass
class ServerConfig:
    """Settings of one server.

    Attributes:
        max_tables: tables open at once; creating one more is refused until one closes.
        idle_timeout: seconds without an action or request after which a table is closed.
        agent_delay: seconds an agent waits before it plays (so that humans can follow the cards).
        agent_threads: threads in which agents think.
        model_dirs: folders from which ``model:<path>`` seats may load saved models (none: no model seats; a
            saved model is a pickle, and loading one runs code from the file).
    """

    max_tables: int = 50
    idle_timeout: float = 1800.0
    agent_delay: float = 0.4
    agent_threads: int = 4
    model_dirs: tuple[str, ...] = ()


@dataclass
class Lobby:
    """The open tables, the clients listening to each, and the agents' thread pool."""

    config: ServerConfig
    tables: dict[str, Table] = field(default_factory=dict)
    listeners: dict[str, set[asyncio.Queue[int | str]]] = field(default_factory=dict)
    runners: dict[str, asyncio.Task[None]] = field(default_factory=dict)
    executor: ThreadPoolExecutor | None = None

    def pool(self) -> ThreadPoolExecutor:
        """The agents' thread pool (made on first use)."""
        if self.executor is None:
            self.executor = ThreadPoolExecutor(self.config.agent_threads, thread_name_prefix="whist-agent")
        return self.executor

    def create(self, body: Any) -> Table:
        """Open a table from a ``POST /api/tables`` body.

        Raises:
            OptionError: for a malformed body, a bad game, option or seat.
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
        seed = body.get("seed")
        if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool) or seed < 0):
            raise OptionError(f"'seed' is a non-negative integer or null, got {seed!r}")
        seats = body.get("seats")
        if isinstance(seats, list):
            for kind in seats:
                if isinstance(kind, str) and kind.startswith("model:"):
                    self._check_model_path(kind[len("model:") :])
        self.close_idle()
        if len(self.tables) >= self.config.max_tables:
            raise TableError(
                f"the server holds its maximum of {self.config.max_tables} tables; finish one, wait for idle tables "
                "to close, or restart whist-serve with a larger --max-tables"
            )
        table_id = secrets.token_urlsafe(8)
        table = Table(
            table_id,
            body["game"],
            body.get("options") or {},
            body.get("seats"),
            study=bool(body.get("study", False)),
            seed=seed,
        )
        self.tables[table_id] = table
        self.listeners[table_id] = set()
        return table

    def _check_model_path(self, path: str) -> None:
        if not self.config.model_dirs:
            raise OptionError(
                "model seats are off on this server: start it with --models DIR to allow model:<path> inside DIR"
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
                action, explanation = await loop.run_in_executor(self.pool(), table.think, seat, view)
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


def _seat_url(table: Table, seat: int) -> str:
    return f"/table/{table.id}?token={table.seats[seat].token}"


def create_app(config: ServerConfig | None = None) -> Starlette:
    """The ASGI application (one :class:`Lobby` of tables)."""
    lobby = Lobby(config or ServerConfig())

    async def lobby_page(request: Request) -> Response:
        return FileResponse(str(STATIC_DIR / "index.html"))

    async def table_page(request: Request) -> Response:
        return FileResponse(str(STATIC_DIR / "table.html"))

    async def games(request: Request) -> Response:
        return JSONResponse(game_catalogue())

    async def agents(request: Request) -> Response:
        return JSONResponse({"seats": list(SEAT_CHOICES), "agent_names": list(AGENT_NAMES)})

    async def create_table(request: Request) -> Response:
        try:
            body = json.loads(await request.body())
        except (json.JSONDecodeError, UnicodeDecodeError) as err:
            return _error(f"the body is not JSON ({err}); send an object with 'game', 'options' and 'seats'")
        try:
            table = lobby.create(body)
        except OptionError as err:
            return _error(str(err))
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
        return Response(encode(table.message(seat)), media_type="application/json")

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
            body = json.loads(await request.body())
        except (json.JSONDecodeError, UnicodeDecodeError) as err:
            return _error(f"the body is not JSON ({err}); send {{'token': ..., 'action': <action id>}}")
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
        return Response(encode(table.message(seat)), media_type="application/json")

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

        async def push() -> None:
            sent = -1
            try:
                while True:
                    if table.version != sent:
                        sent = table.version
                        await websocket.send_text(encode(table.message(seat)))
                    if table.closed:
                        await websocket.close(code=4410)
                        return
                    item = await queue.get()
                    if isinstance(item, str):
                        await websocket.send_text(encode({"type": "error", "message": item}))
            except (WebSocketDisconnect, RuntimeError, OSError):
                return  # the client went away; the receiving side ends the connection

        pusher = asyncio.get_running_loop().create_task(push())
        try:
            while True:
                try:
                    text = await websocket.receive_text()
                except RuntimeError:  # the table was closed, and its socket with it
                    break
                table.touch()
                try:
                    msg = json.loads(text)
                    if not isinstance(msg, dict) or msg.get("type") != "act":
                        raise TableError('send {"type": "act", "action": <action id>}')
                    _check_claimed_seat(msg, seat)
                    table.act(seat, msg.get("action"))
                except json.JSONDecodeError as err:
                    queue.put_nowait(f'not JSON ({err}); send {{"type": "act", "action": <action id>}}')
                except TableError as err:
                    queue.put_nowait(str(err))
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
            if lobby.executor is not None:
                lobby.executor.shutdown(wait=False, cancel_futures=True)

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
            Mount("/static", app=StaticFiles(directory=str(STATIC_DIR)), name="static"),
        ],
        lifespan=lifespan,
    )
    app.state.lobby = lobby
    return app


def _check_claimed_seat(msg: dict[str, Any], seat: int) -> None:
    """A message that names a seat must name the token's seat."""
    claimed = msg.get("seat", seat)
    if claimed != seat:
        raise TableError(f"seat {claimed!r} is not yours: your token holds seat {seat}")


def main(argv: Sequence[str] | None = None) -> None:
    """The ``whist-serve`` console script."""
    parser = argparse.ArgumentParser(prog="whist-serve", description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default=DEFAULT_HOST, help="address to bind (default 127.0.0.1: this machine only)")
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    parser.add_argument("--max-tables", type=int, default=50, help="tables open at once (default 50)")
    parser.add_argument("--idle-timeout", type=float, default=1800.0, help="close a table idle this many seconds")
    parser.add_argument("--agent-delay", type=float, default=0.4, help="seconds an agent waits before it plays")
    parser.add_argument(
        "--models", action="append", default=[], metavar="DIR", help="allow model:<path> seats for models in DIR"
    )
    args = parser.parse_args(argv)
    if args.max_tables < 1 or args.idle_timeout <= 0 or args.agent_delay < 0:
        parser.error("--max-tables must be ≥ 1, --idle-timeout > 0 and --agent-delay ≥ 0")
    import uvicorn

    config = ServerConfig(
        max_tables=args.max_tables,
        idle_timeout=args.idle_timeout,
        agent_delay=args.agent_delay,
        model_dirs=tuple(args.models),
    )
    print(f"whist-serve: open http://{args.host}:{args.port}/ in a browser (Ctrl-C stops)")
    uvicorn.run(create_app(config), host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":  # pragma: no cover
    main()
