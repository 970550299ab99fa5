"""A table's ``bot`` seat: a program plays it over the bot protocol, on a WebSocket that the seat's token holds.

    WS /api/tables/{table_id}/bot?token=<the bot seat's token>

Each WebSocket text message holds one line of the bot protocol (:mod:`whist_env.evaluation.protocol`): the server
sends the very line a referee writes on a bot's standard input (its newline included), and reads one answer line
per message (a trailing newline is allowed). ``whist-bot connect`` (:mod:`whist_env.serve.bridge`) relays these lines
to and from any bot that speaks the protocol on standard input and output. The server sends:

* ``hello`` on connecting: the seat, the game and its options, the seed of the bot's generator (the seat's seed,
  drawn from the table's seed as an agent's at that seat would be), the limits below (``max_message``,
  ``max_unanswered``, ``max_refused``), the observation layout, and ``deals``: 1 when the table's episode is one deal,
  else null. The bot answers ``{"type": "hello", "protocol": 1}`` (with ``"observation": true``, each ``act`` carries
  the observation vector and the mask). Another protocol version gets one error line naming both versions, and the
  connection is closed (4426).
* ``act`` whenever it is the seat's turn: ``deal`` (the deal's number), ``decision`` (the actions taken before it in
  the deal, every seat's), the seat's ``view`` and its ``legal`` actions. The bot answers one line: ``47``, ``"TS"``
  or ``{"action": 47}``. The action goes through :meth:`~whist_env.serve.tables.Table.act_bot`, so that the humans'
  pages are updated as for any action.
* ``deal_end`` for each deal that ends while the bot is connected (each seat's return from the deal, and the seat's
  view at its end); at the end of the game ``match_end`` (the deals played, each seat's return over the game, and
  ``faults``: the seat's refused answers) and ``goodbye``, then the connection is closed (1000). A table that is
  closed or stops (an agent failed) says ``goodbye`` with the reason, then closes (4410).
* ``{"type": "error", "message": ...}`` for a message it refuses (a type a bot may ignore); nothing changes at the
  table. A message refused while an act waits for its answer (a malformed or illegal answer, a binary message, one
  over ``--max-message`` bytes) is followed by the same ``act`` again, unchanged; a line when no act waits, or a hello
  answer that is none, gets the error alone.

A dropped bot connects again with its token: it gets ``hello`` again, then the current ``act`` when it is its turn
(the ``deal_end`` of deals that ended meanwhile are not sent again). One connection holds a seat: a new one with the
token takes it, and the older one is told so and closed (4409). The limits of the human seats' WebSocket hold here
too (the ``Host`` and ``Origin`` checks, ``--max-message``; a bot that sends more than ``max_unanswered`` messages
ahead of reading their answers is closed with 1008); and a bot that answers one act ``max_refused`` times in a row
without a legal action is closed with 1008 (a bot that answers the same bad line again and again would otherwise keep
the server busy forever).

Every message is built from the seat's :class:`~whist_env.view.PlayerView` (and the observation encoded from it), the
table's public settings and the returns (public once a deal ends): a bot is told what an agent at the seat is given.
One caution: a table opened with a seed gives its bot the same generator seed each time, and its deals follow from
that seed; a bot that tried every small table seed could find the one whose seat seed it was given, and with it the
deals. Leave the seed empty (fresh randomness) where a bot plays for real.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from starlette.types import Message
from starlette.websockets import WebSocket, WebSocketDisconnect

from whist_env.evaluation.protocol import (
    AnswerError,
    ViewCodec,
    check_hello_answer,
    clip,
    decode_line,
    encode_line,
    hello,
)
from whist_env.evaluation.protocol import layout_of as layout_of_encoder
from whist_env.serve.guard import POLICY_VIOLATION
from whist_env.serve.tables import BotDealEnd, Table, TableError, jsonable

NORMAL = 1000
"""The close after ``goodbye``: the game is over."""
NOT_A_BOT = 4403
"""The token holds a seat that is not a bot seat."""
NO_SEAT = 4404
"""No open table, or a token that holds no seat at it (as the human seats' WebSocket)."""
REPLACED = 4409
"""Another connection with the seat's token took the seat."""
GONE = 4410
"""The table was closed, or stopped (after ``goodbye``)."""
VERSION = 4426
"""The bot speaks another protocol version."""
MAX_REFUSED = 20
"""Refused answers to one act in a row after which a bot is closed (1008)."""
ANSWER = 'one line per act: an action id such as 47, a label such as "TS", or {"action": 47}'


class BotLobby(Protocol):
    """What a bot connection needs of the server's lobby (:class:`whist_env.serve.app.Lobby` is one)."""

    listeners: dict[str, set[asyncio.Queue[Any]]]
    bot_links: dict[tuple[str, int], BotLink]

    def notify(self, table: Table) -> None:
        """Wake every connection of ``table``: it changed."""

    def kick(self, table: Table) -> None:
        """Let the table's agents play if it is an agent's turn."""


@dataclass
class BotLink:
    """One bot connection at a seat: the lobby keeps the newest per seat, and tells an older one to close."""

    queue: asyncio.Queue[Any]


class RefusedError(Exception):
    """A message of the bot that is not taken: what to tell it, and then whether the act it is to answer follows
    again (``resend``: it was refused while that act waited) or the connection closes (``close``: its code)."""

    def __init__(self, message: str, resend: bool = False, close: int | None = None) -> None:
        super().__init__(message)
        self.message, self.resend, self.close = message, resend, close


@dataclass(frozen=True)
class Say:
    """An error the connection's sender sends, then the act again (``resend``) or a close (``close``: its code)."""

    message: str
    resend: bool = False
    close: int | None = None
    counted: bool = True  # the answer to one of the bot's messages (counted against max_unanswered until sent)


def episode_deals(table: Table) -> int | None:
    """The deals of the table's episode when known ahead: 1 when the game's single-deal options hold, else None."""
    config = table.game.config
    one = all(getattr(config, name, None) == value for name, value in table.spec.single_deal.items())
    return 1 if one else None


class BotSeat:
    """The bot protocol at one seat of a table, for one connection: what it is sent (from the seat's view only) and
    what it answers. Pure Python; :func:`serve_bot` carries it over the WebSocket.

    Args:
        table: the table.
        seat: a bot seat of it.
        limits: the limits the ``hello`` tells.
    """

    def __init__(self, table: Table, seat: int, limits: Mapping[str, Any]) -> None:
        self.table = table
        self.seat = seat
        self.limits = dict(limits)
        self.codec = ViewCodec(table.game)
        self.greeted = False  # the bot answered the hello
        self.observation = False  # the bot asked for the observation and mask in each act
        self.asked: tuple[int, int] | None = None  # (deal, decision) of the act sent and not yet answered
        self.deals_told = 0  # table.bot_deal_ends already told (or ended before the hello was answered)
        self.refused_in_row = 0  # refused answers to the act now asked
        self.ended = False  # the last message (goodbye) is out

    def hello(self) -> dict[str, Any]:
        """The ``hello`` of this seat."""
        table = self.table
        return hello(
            table.game,
            jsonable(table.options),
            self.seat,
            table.seats[self.seat].seed,
            self.limits,
            layout_of_encoder(table.env.encoder),
            episode_deals(table),
        )

    def take(self, message: Message, max_message: int) -> None:
        """Take one WebSocket message of the bot: its answer to the hello, or to the act now asked (whose action is
        then taken at the table, through :meth:`~whist_env.serve.tables.Table.act_bot`). Either changes what the
        table's connections are to be told.

        Raises:
            RefusedError: for a message that is not taken (nothing changes at the table); see :class:`RefusedError`.
        """
        table = self.table
        with table.lock:
            asked = self.asked
            waiting = self.greeted and asked is not None and table.bot_decision(self.seat) == asked
            try:
                text = _text(message, max_message)
                if not self.greeted:
                    self._take_hello(text)
                    return
                if not waiting or asked is None:
                    raise TableError(
                        f"no act waits for an answer, so the line {clip(text, 80)} was not taken: answer {ANSWER}, "
                        "once, after the act arrives (print debugging to stderr, never to stdout)"
                    )
                action = self.codec.read_answer(text, table.game.view(table.env.game_state, self.seat).legal)
                table.act_bot(self.seat, action, asked)
                self.asked = None
                return
            except AnswerError as err:
                if err.kind == "version":
                    raise RefusedError(
                        f"{err}: install the whist_env version the server runs, or answer the version it sends",
                        close=VERSION,
                    ) from None
                why = str(err)
            except TableError as err:
                why = str(err)
            if not self.greeted:
                raise RefusedError(why)
            table.seats[self.seat].refused += 1
            if not waiting:
                raise RefusedError(why)
            self.refused_in_row += 1
            if self.refused_in_row >= MAX_REFUSED:
                raise RefusedError(
                    f"{why}. That is {self.refused_in_row} refused answers to one act in a row (at most {MAX_REFUSED}):"
                    " this connection is closed; fix the bot, then connect again",
                    close=POLICY_VIOLATION,
                )
            raise RefusedError(f"{why}; the act again follows", resend=True)

    def _take_hello(self, text: str) -> None:
        try:
            message = decode_line(text)
        except ValueError:
            raise AnswerError(
                "malformed", f'answer the hello with {{"type": "hello", "protocol": 1}}; got {clip(text, 80)}, not JSON'
            ) from None
        answer = check_hello_answer(message)
        self.observation = answer.get("observation") is True
        self.greeted = True
        self.deals_told = len(self.table.bot_deal_ends)
        self.table.set_connected(self.seat, True)

    def news(self) -> tuple[list[dict[str, Any]], int | None]:
        """The messages to send now, and the close code that follows them (None: the connection goes on).

        The ``deal_end`` of each deal that ended since the last call, then: ``match_end`` and ``goodbye`` when the
        game is over, ``goodbye`` when the table stopped, or the ``act`` of the seat's decision when it is its turn
        and that act was not sent yet. Nothing before the hello is answered (but a stopped table's ``goodbye``).
        """
        table = self.table
        if self.ended:
            return [], None
        with table.lock:
            if table.closed or table.failure:
                self.ended = True
                why = table.failure or "it was closed (idle for --idle-timeout, or the server stopped)"
                return [{"type": "goodbye", "reason": f"the table stopped: {why}"}], GONE
            if not self.greeted:
                return [], None
            out = [self._deal_end(end) for end in table.bot_deal_ends[self.deals_told :]]
            self.deals_told = len(table.bot_deal_ends)
            if table.over:
                self.ended = True
                return [*out, self._match_end(), {"type": "goodbye", "reason": "the game is over"}], NORMAL
            decision = table.bot_decision(self.seat)
            if decision is not None and decision != self.asked:
                self.asked = decision
                self.refused_in_row = 0
                out.append(self._act(decision))
            return out, None

    def act_again(self) -> dict[str, Any] | None:
        """The act now asked, unchanged (after a refused answer); None when the table is no longer at it."""
        with self.table.lock:
            decision = self.table.bot_decision(self.seat)
            if decision is None or decision != self.asked:
                return None
            return self._act(decision)

    def _act(self, decision: tuple[int, int]) -> dict[str, Any]:
        table = self.table
        view = table.game.view(table.env.game_state, self.seat)
        message: dict[str, Any] = {
            "type": "act",
            "deal": decision[0],
            "decision": decision[1],
            "view": self.codec.to_json(view),
            "legal": self.codec.legal(view),
        }
        if self.observation:
            obs, mask = table.env.encoder.encode_with_mask(view)
            message["observation"], message["mask"] = obs.tolist(), mask.tolist()
        return message

    def _deal_end(self, end: BotDealEnd) -> dict[str, Any]:
        view = self.codec.to_json(end.views[self.seat])
        return {"type": "deal_end", "deal": end.deal, "returns": list(end.returns), "view": view}

    def _match_end(self) -> dict[str, Any]:
        table = self.table
        returns = [float(r) for r in table.env.game_state.returns]
        faults = table.seats[self.seat].refused
        return {"type": "match_end", "deals": len(table.deals), "returns": returns, "faults": faults, "forfeit": False}


def _text(message: Message, max_message: int) -> str:
    """The text of one WebSocket message from a bot.

    Raises:
        TableError: for a binary message or one over ``max_message`` bytes.
    """
    text = message.get("text")
    if text is None:
        size = len(message.get("bytes") or b"")
        raise TableError(f"a binary message ({size} bytes) is not read here: send text, {ANSWER}")
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > max_message:
        raise TableError(
            f"a message of {size} bytes is over this server's limit of {max_message} bytes (--max-message): send "
            f"{ANSWER}"
        )
    return str(text)


async def _send(websocket: WebSocket, message: dict[str, Any]) -> None:
    await websocket.send_text(encode_line(message).decode())


async def refuse_bot(websocket: WebSocket, message: str, code: int) -> None:
    """Say why a bot connection is refused (one error line), then close it with ``code``."""
    with contextlib.suppress(RuntimeError, OSError, WebSocketDisconnect):
        await _send(websocket, {"type": "error", "message": message})
        await websocket.close(code=code)


async def serve_bot(
    websocket: WebSocket, table: Table, seat: int, lobby: BotLobby, max_message: int, max_unanswered: int
) -> None:
    """Play ``seat`` of ``table`` for the bot on ``websocket`` (accepted, its token checked) until either side ends.

    Args:
        websocket: the bot's connection.
        table: the table.
        seat: the seat the token holds.
        lobby: the server's lobby (connections of the table, the agents' runner).
        max_message: the largest message read, in bytes.
        max_unanswered: refused messages whose answers are not yet sent before the connection is closed (1008).
    """
    if not table.seats[seat].is_bot:
        kind = table.seats[seat].kind
        await refuse_bot(
            websocket,
            f"seat {seat} is a {kind} seat, not a bot seat: open the table with 'bot' in the seat your program plays "
            "(the lobby's seat choice 'bot'), and connect with that seat's token",
            NOT_A_BOT,
        )
        return
    limits = {"max_message": max_message, "max_unanswered": max_unanswered, "max_refused": MAX_REFUSED}
    bot = BotSeat(table, seat, limits)
    queue: asyncio.Queue[Any] = asyncio.Queue()
    link, key = BotLink(queue), (table.id, seat)
    older = lobby.bot_links.get(key)
    lobby.bot_links[key] = link
    if older is not None:
        older.queue.put_nowait(
            Say(
                "another connection with this seat's token took the seat; this one is closed",
                close=REPLACED,
                counted=False,
            )
        )
        if table.seats[seat].connected:
            table.set_connected(seat, False)
            lobby.notify(table)
    lobby.listeners.setdefault(table.id, set()).add(queue)
    unanswered = 0  # refused messages whose answer is not sent yet

    async def push() -> None:
        """The only sender: the hello, then the table's news whenever it changes, and the errors."""
        nonlocal unanswered
        try:
            await _send(websocket, bot.hello())
            while True:
                item = await queue.get()
                if isinstance(item, Say):
                    await _send(websocket, {"type": "error", "message": item.message})
                    unanswered -= item.counted
                    if item.close is not None:
                        await websocket.close(code=item.close)
                        return
                    again = bot.act_again() if item.resend else None
                    if again is not None:
                        await _send(websocket, again)
                messages, close = bot.news()
                for message in messages:
                    await _send(websocket, message)
                if close is not None:
                    await websocket.close(code=close)
                    return
        except (WebSocketDisconnect, RuntimeError, OSError):
            return  # the bot went away; the receiving side ends the connection

    pusher = asyncio.get_running_loop().create_task(push())
    try:
        while True:
            try:
                message = await websocket.receive()
            except RuntimeError:  # the connection was closed from this side
                break
            if message["type"] == "websocket.disconnect":
                break
            table.touch()
            if lobby.bot_links.get(key) is not link:
                continue  # another connection took the seat: this one's lines are not taken (its close follows)
            try:
                bot.take(message, max_message)
            except RefusedError as refused:
                say = Say(refused.message, refused.resend, refused.close)
            else:
                lobby.notify(table)
                lobby.kick(table)
                continue
            if say.close is None and unanswered >= max_unanswered:
                say = Say(
                    f"more than {max_unanswered} messages sent ahead of reading their answers: read each answer "
                    "before you send more; this connection is closed",
                    close=POLICY_VIOLATION,
                )
            if say.close is not None:
                await _stop(pusher)  # then this task alone sends: the last error, and the close
                await refuse_bot(websocket, say.message, say.close)
                break
            unanswered += 1
            queue.put_nowait(say)
            await asyncio.sleep(0)  # let the sender answer before the next message is read
    except WebSocketDisconnect:
        pass
    finally:
        pusher.cancel()
        listeners = lobby.listeners.get(table.id)
        if listeners is not None:
            listeners.discard(queue)
        if lobby.bot_links.get(key) is link:
            del lobby.bot_links[key]
            if table.seats[seat].connected:
                table.set_connected(seat, False)
                lobby.notify(table)


async def _stop(task: asyncio.Task[None]) -> None:
    """Cancel the sender and wait until it stopped (so that one task at a time sends)."""
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError, Exception):
        await task
