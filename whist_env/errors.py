"""Exceptions raised by whist_env, each with a message that says what was wrong and what is allowed."""

from __future__ import annotations

import tokenize
import zipfile
import zlib


class IllegalActionError(ValueError):
    """An action that the rules do not allow at this point (a revoke, a forbidden bid, ...).

    The raw environments raise it; ``env()`` instead ends the game with a penalty (PettingZoo's
    terminate-illegal convention). The message names the seat, the action and the legal actions.
    """

    def __init__(self, message: str, seat: int = -1, action: int = -1, legal: tuple[int, ...] = ()):
        super().__init__(message)
        self.seat = seat
        self.action = action
        self.legal = legal


class OptionError(ValueError):
    """A bad constructor option, reset option or configuration value."""


class RecordError(ValueError):
    """A game record that cannot be read or does not fit the rules; the message names the step."""


class CallOrderError(RuntimeError):
    """A call out of order: ``step()``, ``last()`` or ``observe()`` before ``reset()`` or after the episode ended.

    The message says what was called and that ``reset()`` starts an episode (PettingZoo's
    OrderEnforcingWrapper messages are the model).
    """


class ModelMismatchError(OptionError):
    """A saved model or dataset that was made for another game, other options or another observation layout.

    The message names every difference (e.g. ``trained with include_history=True, loading for
    include_history=False``); see :mod:`whist_env.fingerprint`.
    """


FILE_DAMAGE: tuple[type[Exception], ...] = (
    OSError,
    ValueError,
    EOFError,
    RecursionError,
    MemoryError,
    NotImplementedError,
    zipfile.BadZipFile,
    zlib.error,
    tokenize.TokenError,
)
"""What reading a damaged ``.npz``, ``.zip`` or JSON file can raise in the libraries that read it, besides our own
checks: ``ValueError`` (not JSON, a bad number, an array numpy will not read without pickle), ``EOFError`` (cut
short), ``MemoryError`` (an array's shape damaged into terabytes), ``NotImplementedError`` (a zip's compression
field damaged), ``zlib.error`` (damaged compressed data), ``tokenize.TokenError`` (a damaged ``.npy`` header) and
``RecursionError`` (text nested too deeply). A loader of such files catches them all and names the file."""


def unreadable(err: Exception) -> str:
    """A parser's error in one line, for a message that names the file or value it read. A ``RecursionError`` (text
    that nests lists or tables deeper than the parser follows: JSON, TOML and YAML parsers all recurse) is said so."""
    if isinstance(err, RecursionError):
        return "it nests values deeper than can be read"
    return " ".join(str(err).split())
