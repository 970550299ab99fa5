"""The bot protocol: the messages a referee and a bot exchange, one JSON value per line (docs/guide/protocol.md).

A bot is a program that reads lines on its standard input and writes one line on its standard output for each
request: any language can speak it. The same messages travel over a WebSocket to ``whist-serve``'s bot seats. The
referee (:mod:`whist_env.evaluation.referee`) sends:

* ``hello``: the protocol version (:data:`PROTOCOL`), the game and its options, the bot's seat, the number of seats,
  the time and resource limits, the seed of the bot's generator and the observation layout (its fingerprint, size
  and number of actions). The bot answers ``{"type": "hello", "protocol": 1}`` (optionally ``"name"``, and
  ``"observation": true`` to have the observation vector and mask in every ``act``).
* ``act``: a decision. ``view`` holds every field of the seat's :class:`~whist_env.view.PlayerView` as JSON
  (:class:`ViewCodec`: card sets as sorted lists of card ids, the game's extras by name), ``legal`` the legal
  actions with their labels (``{"id": 47, "label": "TS"}``), ``deal`` the deal's number in the match. The bot
  answers with one action: ``47``, ``"TS"`` (a legal action's label, or a card's name) or ``{"action": 47}``.
* ``deal_end`` once per deal (each seat's return and the seat's view at the end), ``match_end`` once, and
  ``goodbye``, after which the bot exits.

Every message is a JSON object with a ``type``; a bot ignores types and fields it does not know (a later version may
add them; a new version number is only for changes that break a bot). :func:`schema` is the JSON Schema of every
message (shipped as ``protocol.schema.json`` beside this module); the view's fields are the same for every game but
``extra``, whose fields each game declares (:class:`~whist_env.view.ViewExtras`: a :data:`~whist_env.view.CardSet`
field is sent as a list of card ids).

Nothing here reads a game's state: a message to a seat is built from that seat's view alone (and, on request, the
observation encoded from the same view), so a bot is told exactly what an in-process agent is given.
"""

from __future__ import annotations

import dataclasses
import json
import math
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from importlib import resources
from operator import attrgetter
from typing import Any

from whist_env.cards import FULL_DECK, NUM_CARDS, bits_of, parse_card
from whist_env.rules.core import TrickGame
from whist_env.view import CardSet, PlayerView, ViewExtras

PROTOCOL = 1
"""The protocol's version: the ``protocol`` of every ``hello``."""

SCHEMA_FILE = "protocol.schema.json"
MESSAGE_TYPES = ("hello", "act", "deal_end", "match_end", "goodbye", "error")
"""What a referee sends, in the order a match sends them (``act`` and ``deal_end`` many times); ``error`` only the
browser table's bot seat sends, for an answer it refuses (a bot may ignore it: the same ``act`` follows)."""

try:  # orjson writes the same bytes as the json module below, ten times faster (tests/evaluation/test_protocol.py)
    import orjson
except ImportError:  # pragma: no cover - orjson is a dependency; the json module is its plain twin
    orjson = None  # type: ignore[assignment]

_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False, check_circular=False)
_VOIDS = tuple(tuple(s for s in range(4) if (m >> s) & 1) for m in range(16))  # 4-bit void mask -> its suits


class AnswerError(Exception):
    """A bot's line that is no answer to the request: ``kind`` is ``"malformed"`` (not an action) or ``"illegal"``
    (an action, but not a legal one now); the message says what was wrong in words a student understands."""

    def __init__(self, kind: str, message: str, action: int | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.action = action  # the action named, for an illegal one


def encode_line(message: Any, fast: bool = True) -> bytes:
    """One message as the line a bot reads: compact JSON (no blanks), UTF-8, ending in a newline.

    ``fast``: with orjson where it is installed (the same bytes as the json module's, which ``fast=False`` uses).
    """
    if fast and orjson is not None:
        return orjson.dumps(message, option=orjson.OPT_APPEND_NEWLINE)
    return (_ENCODER.encode(message) + "\n").encode()


def decode_line(line: bytes | str, fast: bool = True) -> Any:
    """The JSON value of one line (``fast``: with orjson where it is installed). A UTF-8 byte order mark before the
    value is ignored, as RFC 8259 allows: a .NET program that sets ``Console.OutputEncoding`` to UTF-8 writes one.

    The json module's reading (``fast=False``) refuses what orjson refuses: bytes that are not UTF-8 (the json module
    would take UTF-16 and UTF-32), ``NaN`` and ``Infinity``, and numbers too large for a float. They still differ on
    integers beyond 64 bits (orjson reads them as floats), escaped lone surrogates (``"\\ud800"``: the json module
    reads them) and depth (orjson reads 1,024 levels, the json module as many as Python's recursion limit leaves).

    Raises:
        ValueError: for a line that is not JSON (invalid UTF-8, nested too deep, a number too large included).
    """
    if line[:3] == _BOM or line[:1] == "\ufeff":
        line = line[3:] if isinstance(line, bytes) else line[1:]
    if fast and orjson is not None:
        try:
            return orjson.loads(line)
        except orjson.JSONDecodeError as err:
            raise ValueError(str(err)) from None
    try:
        return json.loads(
            line.decode() if isinstance(line, bytes) else line, parse_constant=_no_constant, parse_float=_finite
        )
    except RecursionError:
        raise ValueError("nested too deeply") from None


_BOM = b"\xef\xbb\xbf"


def _no_constant(name: str) -> float:
    raise ValueError(f"{name} is not JSON")


def _finite(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise ValueError(f"the number {text[:40]} is too large")
    return value


# ----------------------------------------------------------------------------------------------- the view as JSON
def extras_class(game: type[TrickGame[Any]]) -> type[ViewExtras]:
    """The :class:`~whist_env.view.ViewExtras` subclass a game's views carry (the return type of its
    ``view_extra``), or the base class for a game that declares none."""
    hint = typing.get_type_hints(game.view_extra).get("return")
    return hint if isinstance(hint, type) and issubclass(hint, ViewExtras) else ViewExtras


def _is_card_set(hint: Any) -> bool:
    return typing.get_origin(hint) is typing.Annotated and typing.get_args(hint) == typing.get_args(CardSet)


def _converters(hint: Any) -> tuple[Callable[[Any], Any], Callable[[Any], Any]]:
    """``(to JSON, from JSON)`` for a value of a declared extras field type: ints, strings, floats, bools, card sets,
    tuples of those (fixed or variable length) and ``X | None``. To JSON, a value without a card set in it goes as it
    is (a tuple is written as a list); from JSON, lists become tuples again."""
    if _is_card_set(hint):
        return bits_of, _mask
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType) and type(None) in args:
        inner = [a for a in args if a is not type(None)]
        to, back = _converters(inner[0] if len(inner) == 1 else Any)
        return (_same if to is _same else lambda v: None if v is None else to(v)), (
            lambda v: None if v is None else back(v)
        )
    if origin is tuple:
        items = [_converters(a) for a in args if a is not Ellipsis]
        tos, backs = {to for to, _ in items}, {back for _, back in items}
        if len(tos) == 1 and len(backs) == 1:  # every item alike (a pair of card sets, a tuple of ints)
            to, back = items[0]
            return (_same if to is _same else lambda v: list(map(to, v))), (
                tuple if back is _same else lambda v: tuple(map(back, v))
            )
        return (
            lambda v: [f(x) for (f, _), x in zip(items, v, strict=True)],
            lambda v: tuple(g(x) for (_, g), x in zip(items, v, strict=True)),
        )
    return _same, _same


def _same(value: Any) -> Any:
    return value


_BIT = tuple(1 << i for i in range(128)).__getitem__  # i -> 1 << i (card and action ids are below 128)


def _mask(ids: Sequence[int]) -> int:
    """The mask of distinct ids (a card list, a list of legal actions, a seat's void suits)."""
    return sum(map(_BIT, ids))


def extras_fields(extras: type[ViewExtras]) -> list[tuple[str, Any]]:
    """``(name, declared type)`` of each field of an extras class, in declaration order."""
    hints = typing.get_type_hints(extras, include_extras=True)
    return [(f.name, hints[f.name]) for f in dataclasses.fields(extras)]


class ViewCodec:
    """One game's :class:`~whist_env.view.PlayerView` as a JSON object and back, exactly.

    ``from_json(to_json(view)) == view`` for every view of the game: a bot that rebuilds the view from the message
    (the Python helper does, :mod:`whist_env.evaluation.bot`) hands its agent the very view an in-process agent gets.

    Args:
        game: the rules object (its class declares the extras; its actions' labels name the legal actions).
    """

    def __init__(self, game: TrickGame[Any]) -> None:
        self.game_id = game.game_id
        self.extras_cls = extras_class(type(game))
        self._extras = [(name, *_converters(hint)) for name, hint in extras_fields(self.extras_cls)]
        names = [name for name, _, _ in self._extras]
        # the extras read in one call; the card sets among them converted after (the rest goes as it is)
        self._extra_names = names
        self._extra_values = attrgetter(*names) if len(names) > 1 else (lambda e: (getattr(e, names[0]),))
        self._extra_cards = [(i, to) for i, (_, to, _) in enumerate(self._extras) if to is not _same]
        self.labels = tuple(game.describe_action(a) for a in range(game.num_actions))
        self._label_ids = {label.upper(): a for a, label in enumerate(self.labels)}
        self._legal_items = tuple({"id": a, "label": label} for a, label in enumerate(self.labels))

    def to_json(self, view: PlayerView) -> dict[str, Any]:
        """Every field of ``view`` as JSON values: card sets (``hand``, ``unseen``, each seat's ``played`` and
        ``known``) as sorted card ids, ``legal`` as sorted action ids, ``voids`` as each seat's suits, tricks as
        ``[seat, card]`` pairs and ``extra`` as an object of the game's fields."""
        extra = view.extra
        return {
            "game": view.game,
            "seat": view.seat,
            "num_players": view.num_players,
            "phase": view.phase,
            "to_act": view.to_act,
            "dealer": view.dealer,
            "leader": view.leader,
            "hand": bits_of(view.hand),
            "legal": bits_of(view.legal),
            "trump": view.trump,
            "turn_up": view.turn_up,
            "trick": view.trick,
            "last_trick": view.last_trick,
            "last_winner": view.last_winner,
            "played": [bits_of(m) for m in view.played],
            "known": [bits_of(m) for m in view.known],
            "voids": [_VOIDS[m] for m in view.voids],
            "unseen": bits_of(view.unseen),
            "tricks_won": view.tricks_won,
            "scores": view.scores,
            "deal_index": view.deal_index,
            "extra": self._extra_json(extra),
        }

    def _extra_json(self, extra: ViewExtras) -> dict[str, Any]:
        values = list(self._extra_values(extra))
        for i, to in self._extra_cards:
            values[i] = to(values[i])
        return dict(zip(self._extra_names, values))  # noqa: B905 - as many values as names

    def from_json(self, data: Mapping[str, Any]) -> PlayerView:
        """The :class:`~whist_env.view.PlayerView` a :meth:`to_json` object describes.

        Raises:
            KeyError, TypeError, ValueError: for an object that is not a view of this game.
        """
        extra = data["extra"]
        return PlayerView(
            game=data["game"],
            seat=data["seat"],
            num_players=data["num_players"],
            phase=data["phase"],
            to_act=data["to_act"],
            dealer=data["dealer"],
            leader=data["leader"],
            hand=_mask(data["hand"]),
            legal=_mask(data["legal"]),
            trump=data["trump"],
            turn_up=data["turn_up"],
            trick=tuple(map(tuple, data["trick"])),
            last_trick=tuple(map(tuple, data["last_trick"])),
            last_winner=data["last_winner"],
            played=tuple(map(_mask, data["played"])),
            known=tuple(map(_mask, data["known"])),
            voids=tuple(map(_mask, data["voids"])),
            unseen=_mask(data["unseen"]) & FULL_DECK,
            tricks_won=tuple(data["tricks_won"]),
            scores=tuple(data["scores"]),
            deal_index=data["deal_index"],
            extra=self.extras_cls(**{name: back(extra[name]) for name, _, back in self._extras}),
        )

    def legal(self, view: PlayerView) -> list[dict[str, Any]]:
        """The legal actions of ``view`` with their labels: ``[{"id": 47, "label": "TS"}, ...]``."""
        items = self._legal_items  # the same dict for an action every time: messages are written, never changed
        return [items[a] for a in bits_of(view.legal)]

    def read_answer(self, line: bytes | str, legal: int) -> int:
        """The action a bot's answer line names, checked against the legal actions (mask ``legal``).

        An answer is one JSON value: an action id (``47``, or ``47.0``), a legal action's label or a card's name
        (``"TS"``, ``"10♠"``, ``"bid 3"``, case ignored), or an object ``{"action": <either>}``.

        Raises:
            AnswerError: ``malformed`` for a line that names no action, ``illegal`` for an action not legal now.
        """
        try:
            value = decode_line(line)
        except ValueError:
            text = line.decode("utf-8", "replace") if isinstance(line, bytes) else line
            raise AnswerError(
                "malformed",
                f'the line {clip(text)} is not JSON: answer one JSON value per line, such as 47 or "TS" '
                "(print debugging to stderr, never to stdout)",
            ) from None
        if isinstance(value, dict) and "action" in value:
            value = value["action"]
        action = self._action_of(value)
        if not (0 <= action < len(self.labels)) or not (legal >> action) & 1:
            named = self.labels[action] if 0 <= action < len(self.labels) else f"action {action}"
            allowed = " ".join(f"{a}={self.labels[a]}" for a in bits_of(legal))
            raise AnswerError("illegal", f"{named} ({action}) is not legal now; legal: {allowed}", action)
        return action

    def _action_of(self, value: Any) -> int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:  # 47.0: an integer to JSON
            return int(value)  # Schema (Lua 5.3 writes it so); past 2**53 a float no longer says which int was meant
        if isinstance(value, str):
            found = self._label_ids.get(value.strip().upper())
            if found is not None:
                return found
            try:
                card = parse_card(value)
            except ValueError:
                pass
            else:
                return card
        if isinstance(value, dict) and "id" in value:  # an entry of the act's 'legal', sent back whole
            ident = value["id"] if type(value["id"]) is int and abs(value["id"]) < 2**64 else 47
            raise AnswerError(
                "malformed",
                f"{_shown(value)} is an entry of the act message's 'legal' sent back whole: answer its id alone "
                f'(the line {ident}) or {{"action": {ident}}}',
            )
        raise AnswerError(
            "malformed",
            f"{_shown(value)} names no action: answer an action id (an int from the act message's "
            f'\'legal\'), its label, a card such as "TS", or {{"action": ...}}',
        )


def _is_number(value: Any) -> bool:
    """A JSON number or ``true``/``false``, short enough to name whole (64 bits at most)."""
    return isinstance(value, bool | float) or (isinstance(value, int) and abs(value) < 2**64)


def _shown(value: Any) -> str:
    """A JSON value a bot sent, written back for a message (clipped). A value nested deeper than Python's recursion
    limit, which orjson (up to 1,024 levels) and json (up to about 1,000) both read, cannot be written back: it is
    named so, instead of raising ``RecursionError`` in the referee."""
    try:
        return clip(json.dumps(value))
    except RecursionError:
        return "a JSON value nested too deeply to write back"


def clip(text: str, limit: int = 120) -> str:
    """A line a bot sent, quoted for a message: its ``repr``, cut to ``limit`` characters and its length said."""
    text = text.rstrip("\n")
    return repr(text) if len(text) <= limit else repr(text[:limit]) + f"... ({len(text)} characters)"


# ----------------------------------------------------------------------------------------------- messages
def hello(
    game: TrickGame[Any],
    options: Mapping[str, Any],
    seat: int,
    seed: int,
    limits: Mapping[str, Any],
    layout: Mapping[str, Any],
    deals: int | None = None,
) -> dict[str, Any]:
    """The referee's first message to a bot (see the module docstring)."""
    return {
        "type": "hello",
        "protocol": PROTOCOL,
        "game": game.game_id,
        "options": dict(options),
        "seat": seat,
        "num_players": game.num_players,
        "num_actions": game.num_actions,
        "seed": seed,
        "deals": deals,
        "limits": dict(limits),
        "layout": dict(layout),
    }


def layout_of(encoder: Any) -> dict[str, Any]:
    """The ``layout`` of a ``hello``: the observation layout's fingerprint and size (an encoder's ``layout``)."""
    from whist_env.fingerprint import layout_fingerprint

    return {"fingerprint": layout_fingerprint(encoder.layout), "size": int(encoder.size)}


def check_hello_answer(message: Any) -> dict[str, Any]:
    """A bot's answer to ``hello``, checked.

    Raises:
        AnswerError: ``version`` when the bot speaks another protocol (one line naming both versions),
            ``malformed`` when the answer is not a hello.
    """
    if not isinstance(message, dict) or message.get("type") != "hello":
        raise AnswerError(
            "malformed",
            f'answer the hello with {{"type": "hello", "protocol": {PROTOCOL}}}, got {_shown(message)}',
        )
    version = message.get("protocol")
    if version != PROTOCOL or isinstance(version, bool):  # true == 1 in Python, not in JSON (nor in the schema)
        theirs = "none" if version is None else json.dumps(version) if _is_number(version) else _shown(version)
        raise AnswerError("version", f"the bot speaks protocol {theirs}, whist_env here protocol {PROTOCOL}")
    return message


def version_error(theirs: Any) -> str:
    """The one line a bot's helper prints when the referee speaks another protocol version."""
    return (
        f"whist_env's bot helper speaks protocol {PROTOCOL}, the referee protocol {theirs!r}: install the whist_env "
        "version the referee runs (pip install -U whist_env)"
    )


# ----------------------------------------------------------------------------------------------- the schema
@cache
def schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of every message, as shipped in ``protocol.schema.json`` (the built-in games'
    extras included; :func:`build_schema` makes it)."""
    text = resources.files("whist_env.evaluation").joinpath(SCHEMA_FILE).read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def build_schema(games: Sequence[type[TrickGame[Any]]]) -> dict[str, Any]:
    """The JSON Schema of every message, ``view.extra`` checked for each of ``games`` (any object for another).

    ``python -m whist_env.evaluation.protocol`` writes it for the built-in games into ``protocol.schema.json``
    (``tests/evaluation/test_protocol.py`` checks that the shipped file is what this builds).
    """
    integer, cards = {"type": "integer"}, {"$ref": "#/$defs/cards"}
    per_seat_cards = {"type": "array", "items": cards}
    pair = {"type": "array", "prefixItems": [integer, {"$ref": "#/$defs/card"}], "minItems": 2, "maxItems": 2}
    view_fields: dict[str, Any] = {
        "game": {"type": "string"},
        "seat": integer,
        "num_players": integer,
        "phase": {"type": "string"},
        "to_act": integer,
        "dealer": integer,
        "leader": integer,
        "hand": cards,
        "legal": {"type": "array", "items": {"type": "integer", "minimum": 0}},
        "trump": {"anyOf": [{"type": "integer", "minimum": 0, "maximum": 3}, {"type": "null"}]},
        "turn_up": {"type": "integer", "minimum": -1, "maximum": NUM_CARDS - 1},
        "trick": {"type": "array", "items": pair},
        "last_trick": {"type": "array", "items": pair},
        "last_winner": integer,
        "played": per_seat_cards,
        "known": per_seat_cards,
        "voids": {
            "type": "array",
            "items": {"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 3}},
        },
        "unseen": cards,
        "tricks_won": {"type": "array", "items": integer},
        "scores": {"type": "array", "items": {"type": "number"}},
        "deal_index": integer,
        "extra": {"type": "object"},
    }
    per_game = [
        {
            "if": {"properties": {"game": {"const": game.game_id}}, "required": ["game"]},
            "then": {"properties": {"extra": {"$ref": f"#/$defs/extra_{game.game_id}"}}},
        }
        for game in games
    ]
    messages = {
        "hello": _object(
            "hello",
            protocol={"const": PROTOCOL},
            game={"type": "string"},
            options={"type": "object"},
            seat=integer,
            num_players=integer,
            num_actions=integer,
            seed={"type": "integer", "minimum": 0},
            deals={"anyOf": [integer, {"type": "null"}]},
            limits={"type": "object"},
            layout=_object(fingerprint={"type": "string"}, size=integer),
        ),
        "act": _object(
            "act",
            deal=integer,
            decision=integer,
            view={"$ref": "#/$defs/view"},
            legal={
                "type": "array",
                "minItems": 1,
                "items": _object(id={"type": "integer", "minimum": 0}, label={"type": "string"}),
            },
            observation={"type": "array", "items": {"type": "number"}},
            mask={"type": "array", "items": {"enum": [0, 1]}},
            optional=("observation", "mask"),
        ),
        "deal_end": _object(
            "deal_end",
            deal=integer,
            returns={"type": "array", "items": {"type": "number"}},
            view={"$ref": "#/$defs/view"},
        ),
        "match_end": _object(
            "match_end",
            deals=integer,
            returns={"type": "array", "items": {"type": "number"}},
            faults=integer,
            forfeit={"type": "boolean"},
        ),
        "goodbye": _object("goodbye", reason={"type": "string"}),
        "error": _object("error", message={"type": "string", "minLength": 1}),
    }
    answer = {"anyOf": [{"type": "integer", "minimum": 0}, {"type": "string"}]}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://whist-env.invalid/protocol/v1.json",
        "title": f"whist_env bot protocol {PROTOCOL}",
        "description": "Every message of the bot protocol (docs/guide/protocol.md): what the referee sends "
        "($defs/to_bot), and what a bot answers ($defs/hello_answer, $defs/answer).",
        "$ref": "#/$defs/to_bot",
        "$defs": {
            "card": {"type": "integer", "minimum": 0, "maximum": NUM_CARDS - 1},
            "cards": {"type": "array", "items": {"$ref": "#/$defs/card"}, "uniqueItems": True},
            "view": {
                "type": "object",
                "required": list(view_fields),
                "properties": view_fields,
                "allOf": per_game,
            },
            **{f"extra_{game.game_id}": extra_schema(extras_class(game)) for game in games},
            **messages,
            "to_bot": {"oneOf": [{"$ref": f"#/$defs/{name}"} for name in MESSAGE_TYPES]},
            "hello_answer": _object(
                "hello",
                protocol={"const": PROTOCOL},
                name={"type": "string"},
                observation={"type": "boolean"},
                optional=("name", "observation"),
            ),
            "answer": {"anyOf": [answer, _object(action=answer)]},
        },
    }


def _object(type_name: str | None = None, *, optional: Sequence[str] = (), **props: Any) -> dict[str, Any]:
    """An object schema whose ``props`` are required but ``optional``; a message's (``type_name``) also has its
    ``type``."""
    if type_name is not None:
        props = {"type": {"const": type_name}, **props}
    return {"type": "object", "required": [name for name in props if name not in optional], "properties": props}


def extra_schema(extras: type[ViewExtras]) -> dict[str, Any]:
    """The JSON Schema of one game's ``view.extra`` object, from its declared fields."""
    props = {name: _type_schema(hint) for name, hint in extras_fields(extras)}
    return {"type": "object", "required": list(props), "properties": props}


def _type_schema(hint: Any) -> dict[str, Any]:
    if _is_card_set(hint):
        return {"$ref": "#/$defs/cards"}
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return {"anyOf": [{"type": "null"} if a is type(None) else _type_schema(a) for a in args]}
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return {"type": "array", "items": _type_schema(args[0])}
        items = [_type_schema(a) for a in args]
        return {"type": "array", "prefixItems": items, "minItems": len(items), "maxItems": len(items)}
    names = {int: "integer", float: "number", str: "string", bool: "boolean"}
    return {"type": names[hint]} if hint in names else {}


def write_schema() -> None:
    """Write :func:`build_schema` for the built-in games into the shipped ``protocol.schema.json``."""
    from pathlib import Path

    from whist_env.registry import BUILT_IN, get_spec

    text = json.dumps(build_schema([get_spec(game_id).rules_cls for game_id in BUILT_IN]), indent=1) + "\n"
    (Path(__file__).resolve().parent / SCHEMA_FILE).write_text(text, encoding="utf-8")


if __name__ == "__main__":  # pragma: no cover
    write_schema()
