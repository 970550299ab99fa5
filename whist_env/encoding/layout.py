"""Observation layouts declared once as named pieces; size, slices and ``describe`` derive from them.

Most of an observation is binary (card sets, one-hots, flags), so an encoder builds it as one Python
int (piece ``p`` occupies bits ``offset(p) .. offset(p)+size(p)``) and :meth:`Layout.pack` turns that
int into the float32 vector in one ``unpackbits`` call. That is what keeps an observation under 10 µs.
Scalar pieces (normalised numbers in [0, 1]) come after all binary pieces.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from whist_env.cards import NUM_CARDS, SUIT_SYMBOLS, format_cards

# Row b holds the 8 bits of byte b, least significant first, as float32: one ``take`` unpacks a
# whole observation straight into float32 (faster here than unpackbits followed by astype).
_BYTE_BITS = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1, bitorder="little").astype(np.float32)
# dtype instances, not the scalar types: numpy converts ``np.uint8`` to a dtype on every call
_UINT8 = np.dtype(np.uint8)
_INT8 = np.dtype(np.int8)

KINDS = ("cards", "onehot", "count", "flags", "scalar")


@dataclass(frozen=True)
class Piece:
    """One named part of an observation.

    Attributes:
        name: unique name, e.g. ``"hand"`` or ``"played[left]"``.
        kind: ``"cards"`` (52 bits, a card set), ``"onehot"`` (one of ``labels``, or none),
            ``"count"`` (a number 0..size-1 as a one-hot), ``"flags"`` (independent bits named by
            ``labels``) or ``"scalar"`` (one float, the value divided by ``scale``, clipped to [0, 1]).
        size: number of entries.
        labels: names of the entries of a one-hot or flags piece.
        scale: divisor of a scalar piece.
        doc: what it means, for docs and ``describe``.
    """

    name: str
    kind: str
    size: int
    labels: tuple[str, ...] = ()
    scale: float = 1.0
    doc: str = ""


def cards(name: str, doc: str = "") -> Piece:
    """A 52-bit card-set piece."""
    return Piece(name, "cards", NUM_CARDS, doc=doc)


def onehot(name: str, labels: Sequence[str], doc: str = "") -> Piece:
    """A one-hot piece over ``labels`` (all zero means none)."""
    return Piece(name, "onehot", len(labels), tuple(labels), doc=doc)


def count(name: str, maximum: int, doc: str = "") -> Piece:
    """A number 0..maximum encoded as a one-hot of ``maximum + 1`` entries (larger values clip)."""
    return Piece(name, "count", maximum + 1, doc=doc)


def flags(name: str, labels: Sequence[str], doc: str = "") -> Piece:
    """Independent yes/no bits named by ``labels``."""
    return Piece(name, "flags", len(labels), tuple(labels), doc=doc)


def scalar(name: str, scale: float, doc: str = "") -> Piece:
    """One number divided by ``scale`` and clipped to [0, 1]."""
    return Piece(name, "scalar", 1, scale=scale, doc=doc)


SUIT_LABELS = tuple(SUIT_SYMBOLS)
TRUMP_LABELS = (*SUIT_SYMBOLS, "NT")


def relative_seat_labels(num_players: int, partnership: bool = False) -> tuple[str, ...]:
    """Names of seats relative to the observer: me, left, partner, right; or me, opponent; ..."""
    if num_players == 2:
        return ("me", "opponent")
    if num_players == 4 and partnership:
        return ("me", "left", "partner", "right")
    return ("me",) + tuple(f"+{i}" for i in range(1, num_players))


class Layout:
    """An observation declared as an ordered list of pieces.

    Binary pieces are laid out first in declaration order, then scalar pieces.

    Args:
        pieces: the pieces, in order.
        num_actions: size of the action space, hence of the action mask :meth:`pack_with_mask` appends
            (the game's ``num_actions``: 52 card actions, plus bids or exchange decisions).
    """

    def __init__(self, pieces: Sequence[Piece], num_actions: int = NUM_CARDS) -> None:
        names = [p.name for p in pieces]
        if len(set(names)) != len(names):
            raise ValueError(f"duplicate piece names in layout: {names}")
        for p in pieces:
            if p.kind not in KINDS:
                raise ValueError(f"piece {p.name!r} has unknown kind {p.kind!r}; use one of {KINDS}")
        self.binary = [p for p in pieces if p.kind != "scalar"]
        self.scalars = [p for p in pieces if p.kind == "scalar"]
        self.pieces = self.binary + self.scalars
        self.offsets: dict[str, int] = {}
        pos = 0
        for p in self.pieces:
            self.offsets[p.name] = pos
            pos += p.size
        self.size = pos
        self.num_bits = sum(p.size for p in self.binary)
        self._nbytes = (self.size + 7) // 8  # scalar slots live in the tail of the unpacked bytes
        self._scalar_start = self.num_bits
        self._mask_start = self._nbytes * 8
        self._obs_slice = slice(0, self.size)
        # The byte indices that ``take`` reads are copied into a buffer reused from call to call
        # (cheaper than a new ``np.frombuffer`` array each time), so one layout must not pack from
        # two threads at once, no more than an environment may step from two.
        self._obs_bytes = np.empty(self._nbytes, _UINT8)
        self._obs_bytes_view = self._obs_bytes.data
        self.num_actions = num_actions
        self._mask_nbytes = (self._mask_start + num_actions + 7) // 8
        self._mask_slice = slice(self._mask_start, self._mask_start + num_actions)
        self._mask_bytes = np.empty(self._mask_nbytes, _UINT8)  # reused, like ``_obs_bytes``
        self._mask_bytes_view = self._mask_bytes.data
        self._by_name = {p.name: p for p in self.pieces}
        self._inv_scales = [1.0 / p.scale for p in self.scalars]

    def __getstate__(self) -> dict[str, object]:
        """For pickle and ``copy``: everything but the memoryviews (``__setstate__`` remakes them)."""
        state = self.__dict__.copy()
        del state["_obs_bytes_view"], state["_mask_bytes_view"]
        return state

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)
        self._obs_bytes_view = self._obs_bytes.data
        self._mask_bytes_view = self._mask_bytes.data

    def offset(self, name: str) -> int:
        """Start index of a piece."""
        return self.offsets[name]

    def slice(self, name: str) -> slice:
        """Index range of a piece in the observation vector."""
        start = self.offsets[name]
        return slice(start, start + self._by_name[name].size)

    def piece(self, name: str) -> Piece:
        """The piece called ``name``."""
        return self._by_name[name]

    def pack(self, bits: int, scalars: Sequence[float] = ()) -> np.ndarray:
        """The float32 observation vector from the binary pieces' int and the scalar values."""
        self._obs_bytes_view[:] = bits.to_bytes(self._nbytes, "little")
        out = _BYTE_BITS.take(self._obs_bytes, axis=0).ravel()
        if self.scalars:
            out[self._scalar_start : self.size] = self._scale_scalars(scalars)
        return out[self._obs_slice]

    def pack_with_mask(self, bits: int, scalars: Sequence[float], legal: int) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`pack` and the int8 action mask of ``legal`` in one conversion (the hot path)."""
        self._mask_bytes_view[:] = (bits | (legal << self._mask_start)).to_bytes(self._mask_nbytes, "little")
        out = _BYTE_BITS.take(self._mask_bytes, axis=0).ravel()
        if self.scalars:
            out[self._scalar_start : self.size] = self._scale_scalars(scalars)
        return out[self._obs_slice], out[self._mask_slice].astype(_INT8)

    def _scale_scalars(self, scalars: Sequence[float]) -> list[float]:
        if len(scalars) != len(self._inv_scales):
            raise ValueError(f"expected {len(self._inv_scales)} scalar values, got {len(scalars)}")
        out = []
        for v, k in zip(scalars, self._inv_scales, strict=True):
            x = v * k
            out.append(0.0 if x < 0.0 else (1.0 if x > 1.0 else x))
        return out

    def unpack(self, obs: np.ndarray) -> dict[str, object]:
        """Decode an observation into ``{piece name: value}`` (card lists, labels, numbers)."""
        obs = np.asarray(obs)
        if obs.shape != (self.size,):
            raise ValueError(f"expected an observation of shape ({self.size},), got {obs.shape}")
        # The set entries of every binary piece in one pass (binary pieces lie in order from 0), each piece's
        # then read off by offset: one numpy call per observation, not one per piece (whist-serve describes
        # the observation in every message it sends).
        hot = np.flatnonzero(obs[: self.num_bits] > 0.5).tolist()
        out: dict[str, object] = {}
        i = 0
        for p in self.binary:
            start = self.offsets[p.name]
            stop = start + p.size
            j = bisect_left(hot, stop, i)
            idx = [k - start for k in hot[i:j]]  # the piece's set entries
            i = j
            if p.kind == "cards":
                out[p.name] = idx
            elif p.kind == "onehot":
                out[p.name] = p.labels[idx[0]] if idx else None
            elif p.kind == "count":
                out[p.name] = idx[0] if idx else None
            else:  # flags
                out[p.name] = [p.labels[k] for k in idx]
        for p in self.scalars:
            out[p.name] = float(obs[self.offsets[p.name]]) * p.scale
        return out

    def describe(self, obs: np.ndarray, skip_empty: bool = True) -> str:
        """An observation printed back in words, one piece per line."""
        lines = []
        for name, value in self.unpack(obs).items():
            p = self._by_name[name]
            if p.kind == "cards":
                assert isinstance(value, list)
                if not value and skip_empty:
                    continue
                text = format_cards(value, pretty=True) or "-"
            elif value in (None, []) and skip_empty:
                continue
            elif isinstance(value, list):
                text = " ".join(value)
            elif isinstance(value, float):
                text = f"{value:g}"
            else:
                text = str(value)
            lines.append(f"{name}: {text}")
        return "\n".join(lines)

    def doc_table(self) -> str:
        """A markdown table of the pieces: name, kind, index range, meaning."""
        rows = ["| piece | kind | indices | meaning |", "|---|---|---|---|"]
        for p in self.pieces:
            s = self.slice(p.name)
            rows.append(f"| `{p.name}` | {p.kind} | {s.start}..{s.stop - 1} | {p.doc} |")
        return "\n".join(rows)


__all__ = [
    "Layout",
    "Piece",
    "cards",
    "onehot",
    "count",
    "flags",
    "scalar",
    "relative_seat_labels",
    "SUIT_LABELS",
    "TRUMP_LABELS",
]
