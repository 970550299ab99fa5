"""The agent-spec grammar: one way to write an agent as text, for ``make_agent``, the CLIs and the configs.

A spec is an agent name, optionally followed by its parameters in brackets::

    random
    heuristic
    pimc(samples=20, max_tricks=7)
    model(path=runs/x/model.zip)
    pimc(samples=20, fallback=model(path=runs/x/model.zip))
    pimc(fallback=pretrained)

A parameter whose value is an agent (PIMC's ``fallback``) takes a whole spec, so specs nest (up to
:data:`MAX_NESTING` agents deep) and the brackets say unambiguously where each one ends. That bracket form
is the *canonical* form: :func:`format_agent_spec` writes it (parameters in the order of
:data:`AGENT_KINDS`, ``", "`` between them) and ``parse_agent_spec(format_agent_spec(s)) == s`` for every
spec.

The colon form, the older spelling, is read too:

* ``pimc:samples=10,max_tricks=7``: ``key=value`` pairs after the colon, up to the end of the text;
* ``model:<path>``, ``pretrained:<path>`` and ``rllib:<checkpoint dir>``: everything after the colon is
  the path, verbatim (it may hold colons, commas or brackets);
* ``pimc:samples=20,fallback=model:runs/x/model.zip``: a nested colon spec runs to the end of the text,
  so write it as the *last* parameter (or use brackets: ``pimc(fallback=model(path=...), samples=20)``).

Values: integers and numbers as written (``samples=20``, ``time_budget=0.5``), booleans as
``true``/``false``, strings as written unless they hold a bracket, comma, quote, ``=`` or surrounding
blanks; such a string is quoted with ``'...'`` or ``"..."`` (no escapes inside: a Windows path stays as
typed). An agent with a path (``model``, ``rllib``, ``pretrained``) also takes it without the key:
``model(runs/m.zip)``.

A list of specs (``whist-play --opponents``) is split at the commas outside brackets and quotes by
:func:`split_agent_specs`; a piece that starts with ``key=`` continues the colon spec before it, so
``pimc:samples=10,max_tricks=7,random`` is two agents.

The names (:data:`AGENT_KINDS`): ``random``, ``heuristic`` (the game's rule-based agent), ``model``
(a saved MaskablePPO ``.zip``), ``pimc`` (determinized search), ``pretrained`` (a policy network played with
numpy: the weights shipped for the game, or ``pretrained(path=<exported .npz>)``) and ``rllib`` (an RLlib
checkpoint). The grammar knows all six; ``make_agent`` says which
ones are not available yet. Every mistake raises :class:`~whist_env.errors.OptionError` naming what
is wrong and what is allowed. See ``docs/agents.md``.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Union

from whist_env.errors import OptionError

if TYPE_CHECKING:
    from whist_env.agents.base import Agent

Value = Union[int, float, bool, str, "AgentSpec"]
"""A parameter's value: a scalar, or a nested agent."""


@dataclass(frozen=True)
class Param:
    """One parameter of an agent kind.

    Attributes:
        name: the key (``samples``).
        kind: ``"int"``, ``"float"``, ``"bool"``, ``"str"`` or ``"agent"`` (a nested spec).
        doc: what it sets, in words (for error messages and ``docs/agents.md``).
        minimum: the smallest allowed number (numbers only; None: any).
        positional: the value may be written without its key (the path of ``model`` and ``rllib``);
            in the colon form everything after the colon is this value.
        required: a spec without it is an error.
    """

    name: str
    kind: str
    doc: str
    minimum: float | None = None
    positional: bool = False
    required: bool = False


@dataclass(frozen=True)
class AgentKind:
    """An agent name the grammar knows, and its parameters (in canonical order)."""

    name: str
    doc: str
    params: tuple[Param, ...] = ()

    def param(self, key: str) -> Param | None:
        """The parameter called ``key``, or None."""
        return next((p for p in self.params if p.name == key), None)

    @property
    def positional(self) -> Param | None:
        """The parameter that may be written without its key, if any."""
        return next((p for p in self.params if p.positional), None)

    def spelling(self) -> str:
        """How the name is written, for lists of the known agents (``model:<path>``, ``pimc[(...)]``)."""
        pos = self.positional
        if pos is not None and not pos.required:
            return f"{self.name}[:<{pos.name}>]"
        if pos is not None:
            return f"{self.name}:<{pos.name}>"
        if self.params:
            return f"{self.name}[({self.params[0].name}=..., ...)]"
        return self.name


_PATH = "a path (quote it when it holds brackets, commas or quotes)"

AGENT_KINDS: dict[str, AgentKind] = {
    kind.name: kind
    for kind in (
        AgentKind("random", "uniform over the legal actions"),
        AgentKind("heuristic", "the game's rule-based agent"),
        AgentKind(
            "model",
            "a saved sb3-contrib MaskablePPO model (torch is imported when it first plays)",
            (
                Param("path", "str", f"the saved .zip: {_PATH}", positional=True, required=True),
                Param("deterministic", "bool", "play the most likely action (true) or sample the policy (false)"),
                Param("device", "str", "torch device for inference (cpu, cuda)"),
            ),
        ),
        AgentKind(
            "pimc",
            "determinized search: the double-dummy solver, in Oh Hell playouts (numba is imported when it first plays)",
            (
                Param("samples", "int", "deals drawn per decision", minimum=1),
                Param("bid_samples", "int", "deals drawn per bid (Oh Hell's search)", minimum=1),
                Param("time_budget", "float", "seconds per decision after which no more deals are drawn", minimum=0),
                Param("max_tricks", "int", "search only with at most this many tricks left in the deal", minimum=1),
                Param("horizon", "int", "search this many tricks ahead and estimate the rest", minimum=1),
                Param("tt_bits", "int", "the solver's transposition table holds 2**tt_bits entries", minimum=1),
                Param(
                    "playouts",
                    "int",
                    "before the search starts, deals per card played out by the fallback in every seat",
                    minimum=1,
                ),
                Param("fallback", "agent", "the agent for everything the search does not cover (an agent spec)"),
            ),
        ),
        AgentKind(
            "pretrained",
            "a policy network played with numpy: the weights shipped for the game, or an exported .npz",
            (
                Param(
                    "path",
                    "str",
                    f"an exported .npz (export_policy) instead of the shipped weights: {_PATH}",
                    positional=True,
                ),
                Param("deterministic", "bool", "play the most likely action (true) or sample the policy (false)"),
            ),
        ),
        AgentKind(
            "rllib",
            "an RLlib checkpoint",
            (Param("path", "str", f"the checkpoint directory: {_PATH}", positional=True, required=True),),
        ),
    )
}
"""Every agent name the grammar knows, with its parameters in canonical order."""


@dataclass(frozen=True, init=False)
class AgentSpec:
    """A parsed agent spec: a name and its parameters, whose values may be agent specs themselves.

    Built by :func:`parse_agent_spec`, or directly (then checked the same way):
    ``AgentSpec("pimc", {"samples": 10, "fallback": AgentSpec("heuristic")})``. The parameters are
    kept in canonical order, so two specs that say the same thing are equal however they were written.

    Attributes:
        name: a key of :data:`AGENT_KINDS`.
        args: ``(key, value)`` pairs of the parameters given, in canonical order.
    """

    name: str
    args: tuple[tuple[str, Value], ...]

    def __init__(self, name: str, args: Mapping[str, Value] | tuple[tuple[str, Value], ...] = ()) -> None:
        kind = _kind(name, name)
        given = dict(args)
        if len(given) != len(args):
            raise OptionError(f"{name}: a parameter is given twice in {args!r}")
        for key, value in given.items():
            param = _param(kind, key, name)
            _check_value(kind, param, value)
        for p in kind.params:
            if p.required and p.name not in given:
                raise OptionError(_missing(kind, p))
        ordered = tuple((p.name, given[p.name]) for p in kind.params if p.name in given)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "args", ordered)

    @property
    def kwargs(self) -> dict[str, Value]:
        """The parameters as a dict (a new one each time)."""
        return dict(self.args)

    def get(self, key: str, default: Any = None) -> Any:
        """The value of parameter ``key``, or ``default`` when it is not given."""
        return next((v for k, v in self.args if k == key), default)

    def __str__(self) -> str:
        return format_agent_spec(self)


# ----------------------------------------------------------------------------- formatting
_PLAIN = re.compile(r"[^\s(),'\"=]+(?:\s+[^\s(),'\"=]+)*")


def format_agent_spec(spec: AgentSpec) -> str:
    """The canonical text of ``spec``: ``name`` or ``name(key=value, ...)``, parameters in canonical order.

    Raises:
        OptionError: for a string value holding both kinds of quote (it cannot be written).
    """
    if not spec.args:
        return spec.name
    return f"{spec.name}({', '.join(f'{k}={_format_value(v)}' for k, v in spec.args)})"


def _format_value(value: Value) -> str:
    if isinstance(value, AgentSpec):
        return format_agent_spec(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if _PLAIN.fullmatch(value) and value.lower() not in ("true", "false"):
        return value
    for quote in ("'", '"'):
        if quote not in value:
            return f"{quote}{value}{quote}"
    raise OptionError(f"the value {value!r} holds both ' and \" and cannot be written in an agent spec")


# ----------------------------------------------------------------------------- parsing
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
MAX_NESTING = 10
"""The most agents one spec holds inside each other (``pimc(fallback=pimc(fallback=heuristic))`` is 3 deep): more
is refused, where text nested a few hundred deep reached Python's recursion limit (whist-serve parses the specs of
its browser clients)."""
_KEY = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*=")


def parse_agent_spec(text: str) -> AgentSpec:
    """Parse an agent spec (bracket or colon form; see the module docstring).

    Raises:
        OptionError: naming what is wrong (unknown agent, unknown parameter, bad value, unbalanced
            brackets or quotes, text left over) and what is allowed.
    """
    if not isinstance(text, str):
        raise OptionError(f"an agent spec is a string such as 'heuristic' or 'pimc(samples=10)', got {text!r}")
    parser = _Parser(text)
    parser.skip_space()
    if parser.at_end():
        raise OptionError(f"the agent spec is empty; known agents: {known_spellings()}")
    spec = parser.spec(stops="")
    parser.skip_space()
    if not parser.at_end():
        parser.leftover()
    return spec


def split_agent_specs(text: str) -> list[str]:
    """Split a comma-separated list of specs (``"heuristic,pimc:samples=10,max_tricks=7,random"``).

    Commas inside brackets or quotes do not split; a piece that starts with ``key=`` continues the
    colon spec before it. Blank pieces are dropped. Each piece is returned as written (stripped).

    Raises:
        OptionError: for unbalanced brackets or quotes.
    """
    pieces: list[str] = []
    depth, quote, start = 0, "", 0
    for i, ch in enumerate(text):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                raise OptionError(f"unbalanced brackets in {text!r}: ')' at position {i} has no matching '('")
        elif ch == "," and depth == 0:
            pieces.append(text[start:i])
            start = i + 1
    if quote:
        raise OptionError(f"unbalanced quotes in {text!r}: a {quote} is never closed")
    if depth:
        raise OptionError(f"unbalanced brackets in {text!r}: {depth} '(' never closed")
    pieces.append(text[start:])
    out: list[str] = []
    for piece in pieces:
        if out and _continues_colon_spec(out[-1], piece):
            out[-1] += "," + piece
        elif piece.strip():
            out.append(piece)
    return [p.strip() for p in out]


def _continues_colon_spec(previous: str, piece: str) -> bool:
    """Whether ``piece`` is another ``key=value`` of a colon spec of keyed parameters (``pimc:a=1``)."""
    m = _NAME.match(previous.strip())
    if m is None or not previous.strip()[m.end() :].startswith(":"):
        return False
    kind = AGENT_KINDS.get(m.group())
    return kind is not None and kind.positional is None and re.match(r"\s*[A-Za-z_]\w*\s*=", piece) is not None


def known_spellings() -> str:
    """The known agents as they are written, for messages and ``--help``."""
    return ", ".join(k.spelling() for k in AGENT_KINDS.values())


class _Parser:
    """A cursor over the text; each method reads one piece of the grammar or raises an OptionError."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.depth = 0  # the specs being read, this one's included

    def at_end(self) -> bool:
        return self.pos >= len(self.text)

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def skip_space(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def error(self, what: str, at: int | None = None) -> OptionError:
        where = self.pos if at is None else at
        return OptionError(f"{what} (in agent spec {self.text!r}, at position {where})")

    def leftover(self) -> None:
        rest = self.text[self.pos :]
        if rest.startswith(")"):
            raise self.error("unbalanced brackets: this ')' has no matching '('")
        raise self.error(f"unexpected {rest!r} after the agent; write one spec such as 'pimc(samples=10)'")

    def name(self) -> str:
        m = _NAME.match(self.text, self.pos)
        if m is None:
            raise self.error(f"expected an agent name; known agents: {known_spellings()}")
        self.pos = m.end()
        return m.group()

    def spec(self, stops: str) -> AgentSpec:
        """``name``, ``name(args)`` or ``name:body``; a colon body ends at a ``stops`` character outside
        brackets and quotes, or at the end of the text."""
        start = self.pos
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise self.error(f"agents nest at most {MAX_NESTING} deep in one spec")
        name = self.name()
        kind = _kind(name, self.text)
        self.skip_space()
        ch = self.peek()
        if ch == "(":
            open_at = self.pos
            self.pos += 1
            args = self.bracket_args(kind, open_at)
        elif ch == ":":
            self.pos += 1
            args = self.colon_args(kind, stops)
        else:
            args = {}
        self.depth -= 1
        try:
            return AgentSpec(name, args)
        except OptionError as err:
            raise OptionError(f"{err} (in agent spec {self.text!r}, at position {start})") from None

    def bracket_args(self, kind: AgentKind, open_at: int) -> dict[str, Value]:
        args: dict[str, Value] = {}
        self.skip_space()
        if self.peek() == ")":
            self.pos += 1
            return args
        while True:
            self.skip_space()
            if self.at_end():
                break
            self.argument(kind, args, stops=",)", nested_stops=",)")
            self.skip_space()
            ch = self.peek()
            if ch == ",":
                self.pos += 1
                continue
            if ch == ")":
                self.pos += 1
                return args
            if not ch:
                break
            raise self.error(f"expected ',' or ')' after a parameter of {kind.name}, got {ch!r}")
        raise OptionError(
            f"unbalanced brackets in agent spec {self.text!r}: the '(' at position {open_at} is never closed"
        )

    def colon_args(self, kind: AgentKind, stops: str) -> dict[str, Value]:
        pos = kind.positional
        if pos is not None:
            # model:<path>: the rest is the path verbatim (a path may hold ':', ',', '=', brackets)
            end = self.scan(stops) if stops else len(self.text)
            raw = self.text[self.pos : end].strip()
            self.pos = end
            return {pos.name: raw} if raw else {}
        args: dict[str, Value] = {}
        while True:
            self.skip_space()
            if self.at_end() or (stops and self.peek() in stops):
                return args
            # a nested colon spec runs to the end of the body: write it last
            self.argument(kind, args, stops="," + stops, nested_stops=stops)
            self.skip_space()
            if self.peek() == ",":
                self.pos += 1
                continue
            if self.at_end() or (stops and self.peek() in stops):
                return args
            raise self.error(f"expected ',' between the parameters of {kind.name}")

    def argument(self, kind: AgentKind, args: dict[str, Value], stops: str, nested_stops: str) -> None:
        """One ``key=value`` (or a positional value) into ``args``; a scalar ends at a ``stops`` character,
        a nested colon spec at a ``nested_stops`` one."""
        m = _KEY.match(self.text, self.pos)
        if m is not None:
            key = m.group(1)
            param = _param(kind, key, self.text)
            self.pos = m.end()
        elif kind.positional is not None:
            param = kind.positional
            key = param.name
        else:
            item = self.text[self.pos : self.scan(stops)]
            known = ", ".join(p.name for p in kind.params)
            raise self.error(f"{kind.name} parameter {item.strip()!r} is not key=value; known: {known or 'none'}")
        if key in args:
            raise self.error(f"{kind.name} parameter {key} is given twice")
        self.skip_space()
        if param.kind == "agent":
            args[key] = self.spec(stops=nested_stops)
        else:
            value_at = self.pos
            raw = self.scalar(stops)
            try:
                args[key] = _convert(kind, param, raw)
            except OptionError as err:
                raise self.error(str(err), at=value_at) from None

    def scalar(self, stops: str) -> str:
        """A value up to a ``stops`` character outside brackets and quotes; quoted values lose their quotes."""
        ch = self.peek()
        if ch in ("'", '"'):
            end = self.text.find(ch, self.pos + 1)
            if end < 0:
                raise self.error(f"unbalanced quotes: the {ch} is never closed")
            value = self.text[self.pos + 1 : end]
            self.pos = end + 1
            return value
        end = self.scan(stops)
        value = self.text[self.pos : end].strip()
        self.pos = end
        return value

    def scan(self, stops: str) -> int:
        """Where the text from here ends: at a ``stops`` character outside brackets and quotes, or its end."""
        depth, quote = 0, ""
        i = self.pos
        while i < len(self.text):
            ch = self.text[i]
            if quote:
                quote = "" if ch == quote else quote
            elif ch in "'\"":
                quote = ch
            elif ch == "(":
                depth += 1
            elif ch == ")" and depth:
                depth -= 1
            elif ch in stops and depth == 0:
                return i
            i += 1
        return i


def _kind(name: str, text: str) -> AgentKind:
    kind = AGENT_KINDS.get(name)
    if kind is None:
        close = difflib.get_close_matches(name, AGENT_KINDS, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        where = f" in agent spec {text!r}" if text != name else ""
        raise OptionError(f"unknown agent {name!r}{where}{hint}; known: {known_spellings()}")
    return kind


def _param(kind: AgentKind, key: str, text: str) -> Param:
    param = kind.param(key)
    if param is None:
        known = ", ".join(p.name for p in kind.params)
        where = f" (in agent spec {text!r})" if text != kind.name else ""
        if not known:
            raise OptionError(f"{kind.name} takes no parameters, got {key!r}{where}; write just '{kind.name}'")
        raise OptionError(f"{kind.name} has no parameter {key!r}{where}; known: {known}")
    return param


def _missing(kind: AgentKind, param: Param) -> str:
    return (
        f"{kind.name} needs its {param.name}: write '{kind.name}:<{param.name}>' "
        f"or '{kind.name}({param.name}=<{param.name}>)'"
    )


def _allowed(param: Param) -> str:
    bound = f" ≥ {param.minimum:g}" if param.minimum is not None else ""
    return {
        "int": f"an integer{bound}",
        "float": f"a number{bound}",
        "bool": "true or false",
        "str": "a string",
        "agent": "an agent spec",
    }[param.kind]


def _convert(kind: AgentKind, param: Param, raw: str) -> Value:
    """The typed value of ``raw`` for ``param``."""
    value: Value
    try:
        if param.kind == "int":
            value = int(raw)
        elif param.kind == "float":
            value = float(raw)
        elif param.kind == "bool":
            lowered = raw.lower()
            if lowered not in ("true", "false"):
                raise ValueError(raw)
            value = lowered == "true"
        else:
            value = raw
    except ValueError:
        raise OptionError(f"{kind.name} parameter {param.name} must be {_allowed(param)}, got {raw!r}") from None
    return value


def _check_value(kind: AgentKind, param: Param, value: Any) -> None:
    """Raise when ``value`` is not of ``param``'s type or below its minimum."""
    expected: dict[str, tuple[type, ...]] = {
        "int": (int,),
        "float": (int, float),
        "bool": (bool,),
        "str": (str,),
        "agent": (AgentSpec,),
    }
    ok = isinstance(value, expected[param.kind]) and not (param.kind in ("int", "float") and isinstance(value, bool))
    if ok and param.kind == "str" and not value:
        ok = False
    if ok and param.minimum is not None and value < param.minimum:
        ok = False
    if ok and param.kind == "float" and value != value:  # NaN
        ok = False
    if not ok:
        raise OptionError(f"{kind.name} parameter {param.name} must be {_allowed(param)}, got {value!r}")


MakeAgent = Callable[[AgentSpec], "Agent"]
"""Builds a nested agent spec (PIMC's ``fallback``) for the same game and options (the factory hands one to each
kind's builder)."""
