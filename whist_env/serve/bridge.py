"""``whist-bot connect``: play a table's bot seat with any bot that speaks the bot protocol on stdin and stdout.

    whist-bot connect http://127.0.0.1:8000/table/<id> --token <token> -- python mybot.py
    python -m whist_env.serve.bridge http://127.0.0.1:8000/table/<id>?token=<token> -- node starter.js

:func:`connect` starts the bot command as a child process (its standard error passed through), opens the WebSocket of
the table's bot seat (``/api/tables/<id>/bot?token=...``, :mod:`whist_env.serve.botseat`) and relays the protocol's
lines both ways: each message the server sends becomes a line on the bot's standard input, each line the bot writes
on its standard output a message to the server. The URL is the seat's page (``http://host:port/table/<id>``, as the
lobby shows it) or the WebSocket's own (``ws://host:port/api/tables/<id>/bot``); the token is ``--token`` or the
URL's ``token=``.

A connection that drops is opened again, with a backoff (0.25 s, doubled up to 5 s), for up to ``--reconnect-for``
seconds (30) without a connection. The bot never notices: it sees one ``hello``, because the bridge answers the
server's later ones with the bot's first answer; an ``act`` sent again for the decision the bot is still answering
is not passed on, and if the bot's answer was lost with the connection, the bridge sends it again when the server
asks again (an ``act`` that follows an ``error``, a refused answer, does go to the bot: it answers again).

The bridge ends when the game is over (``goodbye``: the bot is given time to exit), when the bot exits, when the
server closes the connection for good (another protocol version, a token that holds no bot seat, a closed table,
a limit, or another connection that took the seat), or on Ctrl-C; the bot process ends with it. Its status: 0 when
the game was played to its end, 1 otherwise, 2 for a bad command line, 130 after Ctrl-C.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import math
import os
import re
import signal
import sys
import time
from collections.abc import Sequence
from typing import IO, Any
from urllib.parse import parse_qs, quote, urlsplit, urlunsplit

from whist_env.evaluation.protocol import decode_line

FIRST_DELAY = 0.25  # seconds before the first reconnection; doubled after each failed one
MAX_DELAY = 5.0
RECONNECT_FOR = 30.0
EXIT_GRACE = 5.0  # seconds the bot has to exit after the goodbye (or its input closed) before it is ended
LINE_LIMIT = 1 << 22  # the longest line read from the bot (the server refuses any over its --max-message anyway)
RETRY_CODES = frozenset({1001, 1006, 1011, 1012, 1013, 1014})
"""Close codes after which the bridge connects again: the connection dropped, or the server went away or failed.
Any other close (a policy, another version, no seat, a closed table, a seat taken by another connection) is final."""
CLOSE_WORDS = {
    1000: "the server closed the connection",
    1008: "the server closed the connection for a limit (see its last error)",
    1009: "the bot wrote a message over twice the server's --max-message",
    4403: "the token holds a seat that is not a bot seat",
    4404: "no open table holds this token (closed when idle, or a wrong link)",
    4409: "another connection with this token took the seat",
    4410: "the table was closed",
    4426: "the bot speaks another protocol version than the server",
}
TABLE_PAGE = re.compile(r"^(?P<prefix>.*)/table/(?P<table>[^/]+)/?$")
API_PATH = re.compile(r"^(?P<prefix>.*)/api/tables/(?P<table>[^/]+)(/(bot|ws|view|record|action))?/?$")


def bot_url(url: str, token: str | None = None) -> str:
    """The WebSocket URL of the bot seat for ``url`` (a table page's or an API URL) and ``token``.

    Raises:
        ValueError: for a URL that names no table, a scheme other than http(s) or ws(s), a port outside 0 to 65535, no
            token, or two tokens.
    """
    parts = urlsplit(url.strip())
    schemes = {"http": "ws", "https": "wss", "ws": "ws", "wss": "wss"}
    if parts.scheme.lower() not in schemes or not parts.netloc:
        raise ValueError(
            f"{_public(url)!r} is not a table's address: give the seat's link from the lobby "
            "(http://host:port/table/<id>?token=...) or ws://host:port/api/tables/<id>/bot"
        )
    try:
        parts.port  # noqa: B018 - urllib checks the port only when it is read
    except ValueError:
        raise ValueError(f"{_public(url)!r} has no valid port (0 to 65535)") from None
    found = TABLE_PAGE.match(parts.path) or API_PATH.match(parts.path)
    if found is None:
        raise ValueError(
            f"{_public(url)!r} names no table: give the seat's link from the lobby (http://host:port/table/<id>) or "
            "ws://host:port/api/tables/<id>/bot"
        )
    in_url = parse_qs(parts.query).get("token", [None])[-1]
    if token and in_url and token != in_url:
        raise ValueError("the URL's token= and --token differ: give the bot seat's token once")
    token = token or in_url
    if not token:
        raise ValueError("no token: give the bot seat's token with --token (the lobby shows the whole command)")
    path = f"{found['prefix']}/api/tables/{found['table']}/bot"
    return urlunsplit((schemes[parts.scheme.lower()], parts.netloc, path, f"token={quote(token, safe='')}", ""))


def _public(url: str) -> str:
    """``url`` without its query (the token stays out of what the bridge prints)."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))


class Bridge:
    """One bot process and its seat's WebSocket (see the module docstring).

    Args:
        url: the bot seat's WebSocket URL (:func:`bot_url`).
        argv: the bot's command.
        reconnect_for: seconds without a connection after which the bridge gives up.
        log: where the bridge says what happens (the bot's standard error goes to the bridge's own).
    """

    def __init__(
        self, url: str, argv: Sequence[str], reconnect_for: float = RECONNECT_FOR, log: IO[str] | None = None
    ) -> None:
        self.url = url
        self.argv = list(argv)
        self.reconnect_for = reconnect_for
        self.log = log if log is not None else sys.stderr
        self.status = 1
        self.done = asyncio.Event()
        self.child: asyncio.subprocess.Process | None = None
        self.ws: Any = None  # the open connection, or None
        self.ready = False  # this connection's hello is answered: the bot's lines may go to the server
        self.bot_greeted = False  # the bot has its (one) hello
        self.hello_answer: str | None = None  # the bot's answer to it, for every later connection
        self.hello_wanted = False  # this connection waits for the hello answer
        self.asked: tuple[Any, Any] | None = None  # (deal, decision) of the last act passed to the bot
        self.answer: str | None = None  # the bot's answer to it (None while it thinks)
        self.asked_here = False  # this connection has sent that act (its answer may go)
        self.refused = False  # the server refused the answer: its act again goes to the bot
        self.game_over = False

    def say(self, text: str) -> None:
        """One line of the bridge's own on its log."""
        print(f"whist-bot: {text}", file=self.log, flush=True)

    def finish(self, status: int, why: str | None = None) -> None:
        """End the bridge with ``status`` (the first call counts)."""
        if self.done.is_set():
            return
        if why:
            self.say(why)
        self.status = status
        self.done.set()

    async def run(self) -> int:
        """Play until the game is over, the bot exits, the server closes for good, or Ctrl-C; the exit status."""
        try:
            self.child = await asyncio.create_subprocess_exec(
                *self.argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                limit=LINE_LIMIT,
                start_new_session=os.name == "posix",  # Ctrl-C reaches the bridge, which ends the bot
            )
        except OSError as err:
            self.say(f"cannot start the bot {self.argv[0]!r}: {err}")
            return 1
        loop = asyncio.get_running_loop()
        handlers: dict[signal.Signals, Any] = {}
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):  # not here (another thread)
                handlers[sig] = signal.getsignal(sig)
                loop.add_signal_handler(sig, self.finish, 130, "interrupted: the bot is ended")
        reader = loop.create_task(self._read_bot())
        link = loop.create_task(self._keep_connected())
        try:
            await self.done.wait()
        finally:
            link.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await link
            await self._end_bot()
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await reader
            for sig, handler in handlers.items():  # as they were: main() may run inside another program
                with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                    loop.remove_signal_handler(sig)
                    signal.signal(sig, handler if handler is not None else signal.SIG_DFL)
        return self.status

    # ------------------------------------------------------------------ the bot's side
    async def _read_bot(self) -> None:
        assert self.child is not None and self.child.stdout is not None
        try:
            while line := await self.child.stdout.readline():
                await self._from_bot(line.rstrip(b"\r\n").decode("utf-8", "replace"))
        except (ValueError, asyncio.LimitOverrunError):
            self.finish(1, f"the bot wrote a line of more than {LINE_LIMIT} bytes on its standard output")
            return
        code = await self.child.wait()
        if self.game_over:
            self.finish(0)
        else:
            self.finish(1, f"the bot exited (status {code}) before the game was over")

    async def _from_bot(self, text: str) -> None:
        if self.hello_answer is None:
            self.hello_answer = text
            if self.hello_wanted:
                await self._answer_hello()
            return
        answers = self.asked is not None and self.answer is None
        if answers:
            self.answer = text
        if self.ready and (self.asked_here or not answers):
            await self._send(text)

    async def _to_bot(self, text: str) -> None:
        assert self.child is not None and self.child.stdin is not None
        data = text.encode()
        try:
            self.child.stdin.write(data if data.endswith(b"\n") else data + b"\n")
            await self.child.stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the bot exited: _read_bot ends the bridge

    async def _end_bot(self) -> None:
        """Close the bot's input, give it ``EXIT_GRACE`` seconds to exit, then end it (its whole session)."""
        child = self.child
        if child is None:
            return
        if child.stdin is not None:
            with contextlib.suppress(OSError, RuntimeError):
                child.stdin.close()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(child.wait(), EXIT_GRACE if self.status == 0 else 0.5)
        for sig in (signal.SIGTERM, getattr(signal, "SIGKILL", signal.SIGTERM)):
            if child.returncode is not None:
                break
            with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
                if os.name == "posix":
                    os.killpg(child.pid, sig)
                else:  # pragma: no cover - no process groups here
                    child.terminate()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(child.wait(), 2.0)

    # ------------------------------------------------------------------ the server's side
    async def _keep_connected(self) -> None:
        import websockets

        delay, down_since = FIRST_DELAY, time.monotonic()
        connected_once = False
        while not self.done.is_set():
            code: int | None = None
            try:
                async with websockets.connect(self.url, open_timeout=10, max_size=None) as ws:
                    self.ws, self.ready, self.hello_wanted, self.asked_here = ws, False, False, False
                    if connected_once:
                        self.say("connected again")
                    connected_once = True
                    delay, down_since = FIRST_DELAY, time.monotonic()
                    with contextlib.suppress(websockets.ConnectionClosed):
                        async for message in ws:
                            await self._from_server(message if isinstance(message, str) else message.decode())
                            if self.done.is_set():
                                return
                    code = ws.close_code
            except websockets.InvalidURI:
                self.finish(1, f"{_public(self.url)} is not a WebSocket address")
                return
            except websockets.InvalidHandshake as err:
                status = getattr(getattr(err, "response", None), "status_code", None)
                if status is not None:  # the server answered, with a refusal: trying again would not help
                    self.finish(
                        1, f"the server refused the WebSocket (HTTP {status}): is {_public(self.url)} a table's?"
                    )
                    return
            except (TimeoutError, OSError):
                pass  # no connection: try again
            finally:
                self.ws, self.ready = None, False
            if self.done.is_set():
                return
            if code is not None and code not in RETRY_CODES:
                self.finish(1, CLOSE_WORDS.get(code, f"the server closed the connection ({code})"))
                return
            if time.monotonic() - down_since > self.reconnect_for:
                self.finish(1, f"no connection to {_public(self.url)} for {self.reconnect_for:g} s (--reconnect-for)")
                return
            self.say(f"the connection dropped; connecting again in {delay:g} s")
            await asyncio.sleep(delay)
            delay = min(2 * delay, MAX_DELAY)

    async def _send(self, text: str) -> None:
        ws = self.ws
        if ws is None:
            return
        with contextlib.suppress(Exception):  # a connection closing now: _keep_connected opens the next one
            await ws.send(text)

    async def _answer_hello(self) -> None:
        assert self.hello_answer is not None
        self.hello_wanted = False
        await self._send(self.hello_answer)
        self.ready = True

    async def _from_server(self, text: str) -> None:
        try:
            message = decode_line(text)
        except ValueError:
            message = None
        kind = message.get("type") if isinstance(message, dict) else None
        if kind == "hello":
            if not self.bot_greeted:  # the bot's one hello; its answer goes to this and every later connection
                self.bot_greeted = True
                if isinstance(message, dict):
                    self.say(
                        f"the bot plays seat {message.get('seat')} of {message.get('game')} at {_public(self.url)}"
                    )
                self.hello_wanted = True
                await self._to_bot(text)
            elif self.hello_answer is not None:
                await self._answer_hello()
            else:
                self.hello_wanted = True  # the bot has not answered its hello yet
            return
        if kind == "act":
            assert isinstance(message, dict)
            decision = (message.get("deal"), message.get("decision"))
            if decision == self.asked:
                self.asked_here = True
                if self.answer is None:
                    return  # the bot is answering it already
                if not self.refused:
                    await self._send(self.answer)  # its answer was lost with the connection
                    return
            self.asked, self.answer, self.asked_here, self.refused = decision, None, True, False
            await self._to_bot(text)
            return
        if kind == "error" and isinstance(message, dict):
            self.say(f"the server refused a message: {message.get('message')}")
            self.refused = self.answer is not None
        if kind == "match_end":
            self.game_over = True  # the server says match_end only at the end of the game
        await self._to_bot(text)
        if kind == "goodbye":
            reason = message.get("reason") if isinstance(message, dict) else None
            if self.game_over:
                self.finish(0, "the game is over")
            else:
                self.finish(1, f"the server said goodbye: {reason}")


def connect(url: str, token: str | None, argv: Sequence[str], *, reconnect_for: float = RECONNECT_FOR) -> int:
    """Play the bot seat that ``token`` holds at the table of ``url`` with the bot command ``argv``.

    Args:
        url: the table's page (``http://host:port/table/<id>``, as the lobby shows it) or its bot WebSocket's URL;
            it may hold the token (``?token=...``).
        token: the bot seat's token (None: the URL's).
        argv: the bot's command and its arguments (it speaks the bot protocol on stdin and stdout).
        reconnect_for: seconds without a connection after a drop before the bridge gives up.

    Returns:
        The exit status: 0 when the game was played to its end, 130 after Ctrl-C, 1 otherwise.

    Raises:
        ValueError: for a URL that names no table, or no token, or a ``reconnect_for`` that is not a finite number >= 0.
    """
    if not argv:
        raise ValueError("no bot command: give it after --, such as -- python mybot.py")
    if not 0 <= reconnect_for < math.inf:  # NaN too: the bridge would never give up
        raise ValueError(f"--reconnect-for must be a number of seconds >= 0, got {reconnect_for!r}")
    bridge = Bridge(bot_url(url, token), argv, reconnect_for)
    return asyncio.run(bridge.run())


def main(argv: Sequence[str] | None = None) -> int:
    """``whist-bot connect URL [--token T] [--reconnect-for S] -- command...``: the exit status (2: a bad command)."""
    args = list(sys.argv[1:] if argv is None else argv)
    own, command = (args[: args.index("--")], args[args.index("--") + 1 :]) if "--" in args else (args, [])
    parser = argparse.ArgumentParser(
        prog="whist-bot connect",
        usage="whist-bot connect URL [--token TOKEN] [--reconnect-for SECONDS] -- COMMAND ...",
        description="Play a table's bot seat in whist-serve with your bot: the bot runs here, speaking the bot "
        "protocol on its standard input and output, and its lines travel over the seat's WebSocket.",
        epilog="example: whist-bot connect http://127.0.0.1:8000/table/AbC --token XyZ -- python mybot.py",
    )
    parser.add_argument("url", help="the table's link (http://host:port/table/<id>, as the lobby shows it)")
    parser.add_argument("--token", help="the bot seat's token (or token= in the URL)")
    parser.add_argument(
        "--reconnect-for",
        type=float,
        default=RECONNECT_FOR,
        metavar="SECONDS",
        help=f"after a dropped connection, keep trying this long (default {RECONNECT_FOR:g})",
    )
    words = iter(own)
    # a token may begin with "-" (tokens are URL-safe base64): "--token -x" is read as "--token=-x", not as an option
    own = [f"--token={next(words, '')}" if word == "--token" else word for word in words]
    try:
        ns = parser.parse_args(own)
    except SystemExit as stop:  # --help, or a usage error (argparse printed it)
        return int(stop.code or 0)
    if importlib.util.find_spec("websockets") is None:
        print(
            'whist-bot connect: error: it needs the web extra (websockets): pip install "whist_env[web]"',
            file=sys.stderr,
        )
        return 2
    if not command:
        parser.print_usage(sys.stderr)
        print("whist-bot connect: error: give the bot's command after --, such as -- python mybot.py", file=sys.stderr)
        return 2
    try:
        return connect(ns.url, ns.token, command, reconnect_for=ns.reconnect_for)
    except ValueError as err:
        print(f"whist-bot connect: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
