"""Typed, validated game options: every option a game takes is a field of a frozen dataclass.

A game declares ``@dataclass(frozen=True) class XConfig(GameConfig)`` with fields made by
:func:`option`; :meth:`GameConfig.from_options` rejects unknown names, wrong types and values
outside the allowed set with an :class:`~whist_env.errors.OptionError` that names what is allowed.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import warnings
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from whist_env.errors import OptionError

C = TypeVar("C", bound="GameConfig")


def option(
    default: Any,
    *,
    choices: tuple[Any, ...] | None = None,
    kind: type | tuple[type, ...] | None = None,
    minimum: int | None = None,
    maximum: int | None = None,
    optional: bool = False,
    doc: str = "",
) -> Any:
    """A config field with its validation rules.

    Args:
        default: the default value (RULES.md's default).
        choices: the allowed values, if the option is an enumeration.
        kind: the allowed type(s) when ``choices`` is not given (``bool`` and ``int`` are kept apart).
        minimum: smallest allowed int.
        maximum: largest allowed int.
        optional: whether ``None`` is allowed.
        doc: one line for error messages and docs.
    """
    meta = {
        "choices": choices,
        "kind": kind if kind is not None else type(default),
        "minimum": minimum,
        "maximum": maximum,
        "optional": optional,
        "doc": doc,
    }
    return dataclasses.field(default=default, metadata=meta)


def _type_ok(value: Any, kind: type | tuple[type, ...]) -> bool:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if isinstance(value, bool):
        return bool in kinds
    return isinstance(value, kinds)


@dataclasses.dataclass(frozen=True)
class OptionInfo:
    """One option as a form or a doc page shows it (what :meth:`GameConfig.info` reads from the declaration).

    Attributes:
        name: the option's name.
        kind: ``"choice"`` (one of ``choices``), ``"bool"``, ``"int"``, ``"float"`` or ``"str"``.
        default: the default value (None for an ``optional`` option whose default the rules work out).
        doc: one line: what the option sets.
        choices: the allowed values of a ``"choice"``; None otherwise.
        minimum: smallest allowed int (None: no bound).
        maximum: largest allowed int (None: no bound).
        optional: whether ``None`` (the rules' default) is allowed too.
    """

    name: str
    kind: str
    default: Any
    doc: str
    choices: tuple[Any, ...] | None = None
    minimum: int | None = None
    maximum: int | None = None
    optional: bool = False

    def as_dict(self) -> dict[str, Any]:
        """The option as JSON-ready data (``choices`` as a list)."""
        out = dataclasses.asdict(self)
        out["choices"] = None if self.choices is None else list(self.choices)
        return out


def _kind_name(kind: type | tuple[type, ...]) -> str:
    kinds = set(kind if isinstance(kind, tuple) else (kind,))
    if kinds == {bool}:
        return "bool"
    if kinds <= {int, float}:
        return "int" if kinds == {int} else "float"
    return "str"


@dataclasses.dataclass(frozen=True)
class GameConfig:
    """Base of every game's options. Subclasses add fields made with :func:`option`."""

    @classmethod
    def info(cls) -> tuple[OptionInfo, ...]:
        """Every option with its kind, allowed values, default and description, in declaration order."""
        out = []
        for f in dataclasses.fields(cls):
            m = f.metadata
            choices = m.get("choices")
            out.append(
                OptionInfo(
                    name=f.name,
                    kind="choice" if choices is not None else _kind_name(m["kind"]),
                    default=f.default,
                    doc=m.get("doc", ""),
                    choices=None if choices is None else tuple(choices),
                    minimum=m.get("minimum"),
                    maximum=m.get("maximum"),
                    optional=bool(m.get("optional")),
                )
            )
        return tuple(out)

    @classmethod
    def allowed(cls) -> dict[str, str]:
        """Option name → a short description of its allowed values."""
        out = {}
        for f in dataclasses.fields(cls):
            m = f.metadata
            if m.get("choices") is not None:
                desc = " | ".join(repr(c) for c in m["choices"])
            else:
                kinds = m["kind"] if isinstance(m["kind"], tuple) else (m["kind"],)
                desc = " or ".join(k.__name__ for k in kinds)
                if m.get("minimum") is not None or m.get("maximum") is not None:
                    desc += f" in [{m.get('minimum')}, {m.get('maximum')}]"
            if m.get("optional"):
                desc += " | None"
            out[f.name] = f"{desc} (default {f.default!r})"
        return out

    @classmethod
    def check_names(cls, game_id: str, options: Mapping[str, Any]) -> None:
        """Refuse an option name the game does not have (the values are :meth:`from_options`'s to check).

        Raises:
            OptionError: naming the unknown names and every allowed option.
        """
        unknown = sorted(set(options) - {f.name for f in dataclasses.fields(cls)})
        if unknown:
            allowed = "; ".join(f"{k}: {v}" for k, v in cls.allowed().items())
            raise OptionError(f"{game_id} has no option {', '.join(map(repr, unknown))}. Allowed options: {allowed}")

    @classmethod
    def from_options(cls: type[C], game_id: str, options: Mapping[str, Any]) -> C:
        """Build and validate a config from keyword options.

        Raises:
            OptionError: for an unknown name, a wrong type or a value outside the allowed set.
        """
        cls.check_names(game_id, options)
        names = {f.name: f for f in dataclasses.fields(cls)}
        for key, value in options.items():
            m = names[key].metadata
            if value is None and m.get("optional"):
                continue
            choices = m.get("choices")
            if choices is not None:
                # The type first: ``value == c`` on an array is an array, which has no truth value.
                if not any(type(value) is type(c) and value == c for c in choices):
                    raise OptionError(
                        f"{game_id}: {key}={value!r}{_wrong_type(value, choices)} is not allowed; choose one of "
                        f"{', '.join(repr(c) for c in choices)}"
                    )
                continue
            if not _type_ok(value, m["kind"]):
                kinds = m["kind"] if isinstance(m["kind"], tuple) else (m["kind"],)
                raise OptionError(
                    f"{game_id}: {key} must be {' or '.join(k.__name__ for k in kinds)}"
                    f"{' or None' if m.get('optional') else ''}, got {type(value).__name__} {value!r}"
                )
            lo, hi = m.get("minimum"), m.get("maximum")
            if (lo is not None and value < lo) or (hi is not None and value > hi):
                raise OptionError(f"{game_id}: {key}={value!r} is out of range; allowed {lo}..{hi}")
        config = cls(**options)
        config.check(game_id)
        return config

    def check(self, game_id: str) -> None:
        """Cross-option checks; subclasses raise :class:`OptionError` for bad combinations."""

    def as_dict(self) -> dict[str, Any]:
        """The options as a plain dict."""
        return dataclasses.asdict(self)


def _wrong_type(value: Any, choices: Sequence[Any]) -> str:
    """``" (a str, not an int)"`` where ``value``'s type is none of the choices' (``target_points='7'``), else ``""``:
    the reason a value that prints like an allowed one is refused."""
    kinds = list(dict.fromkeys(type(c).__name__ for c in choices))
    got = type(value).__name__
    if got in kinds:
        return ""
    if value is None:
        return f" (None, not {_a(' or '.join(kinds))})"
    return f" ({_a(got)}, not {_a(' or '.join(kinds))})"


def _a(noun: str) -> str:
    return ("an " if noun[:1] in "aeiou" else "a ") + noun


def finite_number(name: str, value: Any, where: str) -> float:
    """``value`` as a float, for a numeric constructor option such as ``illegal_reward``.

    Args:
        name: the option's name, for the message.
        value: what the caller passed.
        where: the environment's id, for the message.

    Raises:
        OptionError: unless ``value`` is a finite real number (numpy scalars included; not a bool).
    """
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        number = float(value)
        if math.isfinite(number):
            return number
    raise OptionError(f"{where}: {name} must be a finite number (an int or a float), got {value!r}")


def reset_options(where: str, options: Any, known: Sequence[str]) -> dict[str, Any]:
    """The ``options`` of a ``reset()`` as a dict, checked before anything is touched.

    Args:
        where: the environment's id, for messages.
        options: what the caller passed (None for no options).
        known: the reset options the environment takes.

    Raises:
        OptionError: when ``options`` is not a mapping with string keys, or names an unknown option.
    """
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise OptionError(
            f"{where}: reset options must be a dict such as {{'deck': [...], 'dealer': 0}}, "
            f"got {type(options).__name__} {options!r}; known options: {list(known)}"
        )
    unknown = sorted(repr(k) if not isinstance(k, str) else k for k in options if k not in known)
    if unknown:
        # ``reset(options={"options": 1})`` is how PettingZoo's api_test checks that reset() takes options:
        # the one unknown reset option answered with a warning instead of an error, so that the test passes.
        if len(options) == 1 and type(options.get("options")) is int and options["options"] == 1:
            warnings.warn(f"{where}: ignoring unknown reset option(s) {unknown}; known: {list(known)}", stacklevel=3)
            return {}
        raise OptionError(f"{where}: unknown reset option(s) {unknown}; known: {list(known)}")
    return dict(options)
