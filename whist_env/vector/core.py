"""The machinery every batched game shares: the state block, the generators, dealing, card play, the observation
pieces common to all trick games, validation, and :class:`RawVectorEnv`, the Python face a game's kernels plug into.

The state of ``B`` environments is one contiguous ``int64`` block of shape ``(B, K)``: a row per environment,
named column blocks per field (``HAND`` holds each seat's hand as a 52-bit mask, ``DECK`` the deck of the
current deal, ...). Keeping an environment's fields in one row keeps a step's memory traffic to a few cache
lines; :meth:`RawVectorEnv.field` gives any field as a ``(B, width)`` view for Python readers. The columns common
to every trick game come first (sized for up to :data:`MAX_SEATS` seats); a game's own fields start at
:data:`GAME_COLS`.

Each environment has its own xorshift64 generator (one ``uint64`` per environment, never zero), so that a
batch is reproducible from one seed whatever the batch does elsewhere.

An observation is built as bits at the offsets the game's encoder declares (``layout.offsets``, read once by
:func:`piece_table`: the kernels hold no observation offset of their own), then expanded a byte of bits at a time
into its ``uint8`` (or ``float32``) output row, written as whole 8-byte words; output rows are therefore padded to
a multiple of 8 entries, and the ``(B, D)`` observation and ``(B, A)`` mask handed out are views of them.

The compiled code is cached on disk (numba ``cache=True``, in the same writable folder as the solver's kernels).
numba checks a cached kernel against its own source file only: after an edit of this module, clear
``whist_env/vector/__pycache__`` (or the fallback cache folder) so that the game kernels that call these helpers
are compiled again (an install writes every file anew, which does that by itself).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from numba import njit

from whist_env.cards import NUM_CARDS, bits_of
from whist_env.encoding.layout import SUIT_LABELS, Layout
from whist_env.encoding.trick import TrickEncoder
from whist_env.errors import CallOrderError, IllegalActionError, OptionError
from whist_env.options import reset_options
from whist_env.rules.core import PHASE_OVER, PHASE_PLAY, State, TrickGame, check_deck
from whist_env.spec import GameSpec
from whist_env.vector.numba_cache import use_writable_cache
from whist_env.view import PlayerView

use_writable_cache()  # the kernels are cached on disk (cache=True): somewhere this process can write


def jit(f: Callable[..., Any]) -> Callable[..., Any]:
    """Compile ``f`` with numba, cached on disk (every kernel of :mod:`whist_env.vector` goes through here)."""
    jitted: Callable[..., Any] = njit(cache=True)(f)
    return jitted


def jit_borrow(f: Callable[..., Any]) -> Callable[..., Any]:
    """:func:`jit` without numba's reference counting: for the per-row helpers, which allocate no array and return
    none (numba refuses to compile an allocation here), and only borrow arrays their caller holds.

    numba counts the references of every array view it makes (``state[i]``, a slice, an array argument), each an
    atomic update through a call; in the per-row code these views are made for every decision, and the counting
    cost about 40% of Oh Hell's ``step()`` (docs/results_vector.md). A kernel that allocates its scratch arrays
    uses :func:`jit` and hands them to a row loop compiled here (every game's, rendered from
    :mod:`whist_env.vector.template`); nothing such a loop calls may allocate, however deep.
    """
    jitted: Callable[..., Any] = njit(cache=True, _nrt=False)(f)  # type: ignore[call-overload]  # not in the stubs
    return jitted


def jit_borrow_inline(f: Callable[..., Any]) -> Callable[..., Any]:
    """:func:`jit_borrow`, inlined by numba into every caller (``inline="always"``): for a game's ``step_row``,
    which the step loop calls once per decision (as a call, its arguments alone cost Oh Hell about 3% of its
    ``step()``). Only for a function called from its own file: numba checks a cached caller against the caller's
    source file alone, so a caller elsewhere would keep an inlined copy that no longer matches."""
    jitted: Callable[..., Any] = njit(cache=True, _nrt=False, inline="always")(f)  # type: ignore[call-overload]
    return jitted


# ------------------------------------------------------------------------------------------ the state block
MAX_SEATS = 8
NO_TRUMP = 4  # the trump column when there is none (the encoders' ``NT`` entry of the trump one-hot)
FULL = (1 << NUM_CARDS) - 1
SUIT_BITS = 0x1FFF

# Per-seat blocks (MAX_SEATS columns each, absolute seats).
HAND = 0  # cards in hand (mask)
DEALT = HAND + MAX_SEATS  # the hand as dealt (mask)
PLAYED = DEALT + MAX_SEATS  # cards the seat played this deal (mask)
VOIDS = PLAYED + MAX_SEATS  # 4-bit mask of suits the seat showed out of
WON = VOIDS + MAX_SEATS  # tricks taken this deal
TRICK = WON + MAX_SEATS  # the seat's card in the current trick, -1 when none
LAST = TRICK + MAX_SEATS  # the seat's card in the last trick while it is visible, -1 when none
RET = LAST + MAX_SEATS  # rewards paid so far this episode (integers in every game)
# Scalars.
_S = RET + MAX_SEATS
DEALER, LEADER, TO_ACT, TRUMP, TURN_UP, TURN_PUBLIC, LED, NTRICK, TRICK_NO, LAST_WINNER = range(_S, _S + 10)
DEAL_INDEX, PHASE, LAST_ACTOR, NUM_SEATS, DEAL_TRICKS = range(_S + 10, _S + 15)
DECK = _S + 15  # the deck of the current deal, in dealing order (-1s after an import: not known)
HIST = DECK + NUM_CARDS  # the cards played this deal, in order (their seats are their owners in DEALT)
GAME_COLS = HIST + NUM_CARDS  # a game's own columns start here

COMMON_FIELDS: dict[str, tuple[int, int]] = {
    "hands": (HAND, MAX_SEATS),
    "dealt": (DEALT, MAX_SEATS),
    "played": (PLAYED, MAX_SEATS),
    "voids": (VOIDS, MAX_SEATS),
    "tricks_won": (WON, MAX_SEATS),
    "trick": (TRICK, MAX_SEATS),
    "last_trick": (LAST, MAX_SEATS),
    "returns": (RET, MAX_SEATS),
    "dealer": (DEALER, 1),
    "leader": (LEADER, 1),
    "to_act": (TO_ACT, 1),
    "trump": (TRUMP, 1),
    "turn_up": (TURN_UP, 1),
    "turn_up_public": (TURN_PUBLIC, 1),
    "led_suit": (LED, 1),
    "trick_size": (NTRICK, 1),
    "trick_number": (TRICK_NO, 1),
    "last_winner": (LAST_WINNER, 1),
    "deal_index": (DEAL_INDEX, 1),
    "phase": (PHASE, 1),
    "last_actor": (LAST_ACTOR, 1),
    "deck": (DECK, NUM_CARDS),
    "history": (HIST, NUM_CARDS),
}

# ------------------------------------------------------------------------------------------ observation slots
# The kernels address observation pieces by slot; :func:`piece_table` maps each slot to the offset and size
# the encoder's layout gives the piece of that name (offset -1: the layout has no such piece).
SLOT_HAND, SLOT_UNSEEN, SLOT_TURN_UP, SLOT_TRUMP, SLOT_LEADER, SLOT_LAST_WINNER, SLOT_DEALER, SLOT_TO_ACT = range(8)
SLOT_MASTER, SLOT_WINNING_NOW = 8, 9
SLOT_OUT = 10  # 4 slots, one per suit
_SEAT_SLOTS = SLOT_OUT + 4
# Per relative seat r (MAX_SEATS slots each).
SLOT_KNOWN = _SEAT_SLOTS
SLOT_TRICK = SLOT_KNOWN + MAX_SEATS
SLOT_LAST = SLOT_TRICK + MAX_SEATS
SLOT_PLAYED = SLOT_LAST + MAX_SEATS
SLOT_VOID = SLOT_PLAYED + MAX_SEATS
SLOT_TRICKS = SLOT_VOID + MAX_SEATS
GAME_SLOTS = SLOT_TRICKS + MAX_SEATS  # a game's own pieces start here


def common_piece_names(seat_labels: Sequence[str]) -> list[str | None]:
    """The layout piece name of each common slot (None where the slot is unused at this table size)."""
    names: list[str | None] = [None] * GAME_SLOTS
    single = ("hand", "unseen", "turn_up", "trump", "leader", "last_winner", "dealer", "to_act", "master")
    for slot, name in enumerate(single):
        names[slot] = name
    names[SLOT_WINNING_NOW] = "winning_now"
    for s, symbol in enumerate(SUIT_LABELS):
        names[SLOT_OUT + s] = f"out[{symbol}]"
    for r, label in enumerate(seat_labels):
        if r:
            names[SLOT_KNOWN + r] = f"known[{label}]"
        names[SLOT_TRICK + r] = f"trick[{label}]"
        names[SLOT_LAST + r] = f"last_trick[{label}]"
        names[SLOT_PLAYED + r] = f"played[{label}]"
        names[SLOT_VOID + r] = f"void[{label}]"
        names[SLOT_TRICKS + r] = f"tricks[{label}]"
    return names


def piece_table(layout: Layout, names: Sequence[str | None], game_id: str) -> np.ndarray:
    """``(len(names), 2)`` int64: the offset and size of each slot's piece in ``layout`` (-1, 0 when absent).

    Raises:
        NotImplementedError: when the layout holds a piece no slot names (the kernels would leave it zero, so
            the observation would differ from the encoder's).
    """
    table = np.full((len(names), 2), (-1, 0), np.int64)
    for slot, name in enumerate(names):
        if name is not None and name in layout.offsets:
            table[slot] = layout.offsets[name], layout.piece(name).size
    unknown = sorted(set(layout.offsets) - {n for n in names if n is not None})
    if unknown:
        raise NotImplementedError(
            f"{game_id}: the batched engine does not write the observation piece(s) {unknown}; "
            "teach the game's vector kernel these pieces (whist_env/vector/) before using it with this layout"
        )
    return table


# Per 13-bit pattern of one suit's ranks: its highest rank (-1 for none), and how many ranks it holds.
TOP_RANK = np.array([v.bit_length() - 1 for v in range(1 << 13)], np.int64)
NUM_BITS = np.array([v.bit_count() for v in range(1 << 13)], np.int64)

# Row b: the 8 bits of byte b, least significant first. Viewed as uint64 words, a row is what one byte of an
# observation's bits becomes in the output (8 entries: one word of uint8 or int8, four words of float32), so that a
# row of the output is written a word at a time, with no zeroing first.
BYTE_BITS = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1, bitorder="little")


def byte_table(dtype: np.dtype[Any]) -> np.ndarray:
    """:data:`BYTE_BITS` in ``dtype`` as uint64 words, flat: byte ``b`` is words ``b * k .. b * k + k - 1``, where
    ``k`` is the dtype's size (8 entries of it fill ``k`` words).  # (256 k,)"""
    return np.ascontiguousarray(BYTE_BITS.astype(dtype)).view(np.uint64).ravel()


def padded(size: int) -> int:
    """``size`` rounded up to whole bytes of bits (8 entries): the width of an output row."""
    return -(-size // 8) * 8


# An observation is first built as bits in int64 words of WORD bits each (32: shifts never reach the sign bit),
# then expanded into its output row by :func:`expand`.
WORD = 32


@jit
def scratch(obs: np.ndarray, lut: np.ndarray) -> np.ndarray:
    """The bit scratch for observations written into ``obs`` (uint64 words per row) through ``lut``."""
    entries = obs.shape[1] // (lut.shape[0] // 256) * 8
    return np.zeros((entries + WORD - 1) // WORD + 2, np.int64)  # + 2: put_bits writes three words at the end too


@jit_borrow
def put_bits(bits: np.ndarray, at: int, mask: int) -> None:
    """OR the bits of ``mask`` (non-negative, < 2**63) into the scratch ``bits`` from bit ``at`` on (nothing when
    ``at < 0``). Three words are always written, with no loop: a branch on the data is mostly mispredicted."""
    if at < 0:
        return
    w = at // WORD
    shift = at % WORD
    low = WORD - shift
    bits[w] |= (mask & ((1 << low) - 1)) << shift
    rest = mask >> low
    bits[w + 1] |= rest & 0xFFFFFFFF
    bits[w + 2] |= rest >> WORD


@jit_borrow
def put_one(bits: np.ndarray, offs: np.ndarray, slot: int, index: int) -> None:
    """Set entry ``index`` of the piece in ``slot`` (a one-hot or a count, clipped to the piece's last entry)."""
    at = offs[slot, 0]
    if at >= 0:
        size = offs[slot, 1]
        j = at + (index if index < size else size - 1)
        bits[j // WORD] |= 1 << (j % WORD)


@jit_borrow
def put_flags(bits: np.ndarray, offs: np.ndarray, slot: int, flags: int) -> None:
    """Write the bits of ``flags`` as the entries of the flags piece in ``slot``."""
    put_bits(bits, offs[slot, 0], flags & ((1 << offs[slot, 1]) - 1))


@jit_borrow
def expand(bits: np.ndarray, out: np.ndarray, lut: np.ndarray) -> None:
    """Write the scratch ``bits`` into an output row ``out`` (uint64 words) through the byte table ``lut``.

    Every byte is looked up, zero or not, four to a word of ``bits`` with no branch on the data (a branch on the
    bits would be mispredicted on most observations); uint8 rows, one word per byte, have a loop of their own.
    """
    per = lut.shape[0] // 256
    nbytes = out.shape[0] // per
    full = nbytes // 4
    if per == 1:
        for w in range(full):
            x = bits[w]
            out[4 * w] = lut[x & 255]
            out[4 * w + 1] = lut[(x >> 8) & 255]
            out[4 * w + 2] = lut[(x >> 16) & 255]
            out[4 * w + 3] = lut[(x >> 24) & 255]
    elif per == 4:  # float32: the four words of each byte written out, with no inner loop (twice as fast)
        for j in range(4 * full):
            at = ((bits[j >> 2] >> (8 * (j & 3))) & 255) * 4
            # all four loaded before any store: the compiler may then move them as one 32-byte vector
            a, b, c, d = lut[at], lut[at + 1], lut[at + 2], lut[at + 3]
            out[4 * j] = a
            out[4 * j + 1] = b
            out[4 * j + 2] = c
            out[4 * j + 3] = d
    else:
        for w in range(full):
            x = bits[w]
            for b in range(4):
                at = (x >> (8 * b)) & 255
                base = (4 * w + b) * per
                for q in range(per):
                    out[base + q] = lut[at * per + q]
    for j in range(4 * full, nbytes):
        at = (bits[j // 4] >> (8 * (j % 4))) & 255
        for q in range(per):
            out[j * per + q] = lut[at * per + q]


@jit_borrow
def expand_mask(legal: int, out: np.ndarray, lut: np.ndarray) -> None:
    """Write the legal action mask ``legal`` into an int8 mask row ``out`` (uint64 words; ``lut`` of int8)."""
    for j in range(out.shape[0]):
        out[j] = lut[(legal >> (8 * j)) & 255]


@jit_borrow
def put_scalar(row: np.ndarray, offs: np.ndarray, slot: int, value: float) -> None:
    """Write the scalar piece in ``slot`` of a float32 output row ``row`` (uint64 words, after :func:`expand`):
    ``value`` (already divided by the piece's scale, in float64 as the encoder does), clipped to [0, 1]."""
    at = offs[slot, 0]
    if at >= 0:
        row.view(np.float32)[at] = 0.0 if value < 0.0 else (1.0 if value > 1.0 else value)


@jit_borrow
def card_count(mask: int) -> int:
    """How many cards the 52-bit ``mask`` holds."""
    count = 0
    for suit in range(4):
        count += NUM_BITS[(mask >> (13 * suit)) & SUIT_BITS]
    return count


@jit_borrow
def rng_next(rng: np.ndarray, i: int) -> np.uint64:
    """Advance environment ``i``'s xorshift64 generator (Marsaglia 13/7/17) and return its new value."""
    x = rng[i]
    x ^= x << np.uint64(13)
    x ^= x >> np.uint64(7)
    x ^= x << np.uint64(17)
    rng[i] = x
    return x


@jit_borrow
def rng_below(rng: np.ndarray, i: int, k: int) -> int:
    """A number in ``0..k-1`` from environment ``i``'s generator (the high bits: the best ones of xorshift)."""
    return int((rng_next(rng, i) >> np.uint64(32)) % np.uint64(k))


@jit_borrow
def shuffle_deck(st: np.ndarray, rng: np.ndarray, i: int) -> None:
    """A uniformly shuffled deck into ``st[DECK:]`` (Fisher-Yates with environment ``i``'s generator)."""
    for c in range(NUM_CARDS):
        st[DECK + c] = c
    for c in range(NUM_CARDS - 1, 0, -1):
        j = rng_below(rng, i, c + 1)
        t = st[DECK + c]
        st[DECK + c] = st[DECK + j]
        st[DECK + j] = t


@jit_borrow
def deal_round_robin(st: np.ndarray, n: int, first: int, num_cards: int) -> None:
    """Deal ``DECK[k]`` to seat ``(first + k) % n`` for the first ``num_cards`` cards; reset the deal's fields."""
    for s in range(MAX_SEATS):
        st[HAND + s] = 0
        st[PLAYED + s] = 0
        st[VOIDS + s] = 0
        st[WON + s] = 0
        st[TRICK + s] = -1
        st[LAST + s] = -1
    for k in range(num_cards):
        st[HAND + (first + k) % n] |= 1 << st[DECK + k]
    for s in range(MAX_SEATS):
        st[DEALT + s] = st[HAND + s]
    st[TRUMP] = NO_TRUMP
    st[TURN_UP] = -1
    st[TURN_PUBLIC] = 0
    st[LED] = -1
    st[NTRICK] = 0
    st[TRICK_NO] = 0
    st[LAST_WINNER] = -1
    st[PHASE] = PHASE_PLAY


@jit_borrow
def legal_mask(st: np.ndarray, free_tricks: int = 0) -> int:
    """Legal cards of the seat to act: RULES.md §0.4 (follow the led suit if able); 0 when the episode is over.

    The first ``free_tricks`` tricks of a deal need not be followed (German Whist's ``phase1_follow_suit=False``).
    """
    if st[PHASE] != PHASE_PLAY:
        return 0
    hand = st[HAND + st[TO_ACT]]
    led = st[LED]
    if led < 0 or st[TRICK_NO] < free_tricks:
        return hand
    follow = hand & (SUIT_BITS << (13 * led))
    return follow if follow else hand


@jit_borrow
def beats(card: int, best: int, trump: int) -> bool:
    """Whether ``card`` takes the lead of a trick from ``best``: RULES.md §0.5 (``trump`` 4: no trump)."""
    s = card // 13
    if s == best // 13:
        return card > best
    return s == trump


@jit_borrow
def play_card(st: np.ndarray, card: int, free_tricks: int = 0) -> int:
    """Play ``card`` (legal) for the seat to act: RULES.md §0.4, §0.5. Returns the trick's winner, or -1 while
    the trick goes on (the winner then leads; the caller ends the deal after its last trick). In the first
    ``free_tricks`` tricks, where any card is legal, an off-suit card proves nothing."""
    n = st[NUM_SEATS]
    seat = st[TO_ACT]
    led = st[LED]
    suit = card // 13
    if led >= 0 and suit != led and st[TRICK_NO] >= free_tricks:
        st[VOIDS + seat] |= 1 << led  # a legal off-suit card proves the void
    bit = 1 << card
    st[HAND + seat] ^= bit
    st[PLAYED + seat] |= bit
    st[HIST + st[TRICK_NO] * n + st[NTRICK]] = card
    st[LAST_ACTOR] = seat
    if st[NTRICK] == 0:
        st[LED] = suit
        st[LEADER] = seat
        for s in range(n):
            st[LAST + s] = -1
        st[LAST_WINNER] = -1
    st[TRICK + seat] = card
    st[NTRICK] += 1
    if st[TURN_PUBLIC] and seat == st[DEALER]:
        st[TURN_PUBLIC] = 0  # RULES.md §1.5 / §2.1: the turn-up is public until the dealer plays his first card
    if st[NTRICK] < n:
        st[TO_ACT] = (seat + 1) % n
        return -1
    trump = st[TRUMP]
    winner = st[LEADER]
    best = st[TRICK + winner]
    for k in range(1, n):
        s = (st[LEADER] + k) % n
        if beats(st[TRICK + s], best, trump):
            winner, best = s, st[TRICK + s]
    st[WON + winner] += 1
    for s in range(n):
        st[LAST + s] = st[TRICK + s]
        st[TRICK + s] = -1
    st[LAST_WINNER] = winner
    st[NTRICK] = 0
    st[LED] = -1
    st[TRICK_NO] += 1
    st[LEADER] = winner
    st[TO_ACT] = winner  # RULES.md §0.5: the winner leads the next trick
    return winner


@jit_borrow
def cards_gone(st: np.ndarray, recall: bool) -> int:
    """The played cards a seat has seen go: with ``recall`` every card played this deal, else only those of the
    current and the last trick (the part of ``unseen`` every trick game's view rules share)."""
    gone = 0
    for s in range(st[NUM_SEATS]):
        if recall:
            gone |= st[PLAYED + s]
        else:
            if st[TRICK + s] >= 0:
                gone |= 1 << st[TRICK + s]
            if st[LAST + s] >= 0:
                gone |= 1 << st[LAST + s]
    return gone


@jit_borrow
def relative(seat: int, me: int, n: int) -> int:
    """``(seat - me) % n`` for seats ``0..n-1``, without a division (a hot path: every observation)."""
    r = seat - me
    return r + n if r < 0 else r


@jit_borrow
def write_common(
    bits: np.ndarray,
    offs: np.ndarray,
    st: np.ndarray,
    me: int,
    known: np.ndarray,
    unseen: int,
    turn_up: int,
    recall: bool,
) -> None:
    """Write the pieces every trick game shares (``TrickEncoder``) for observer ``me`` into the zeroed scratch ``bits``.

    ``known`` (n,), ``unseen`` and ``turn_up`` are what the game's view rules let ``me`` know (the game
    computes them); ``recall`` whether ``me`` remembers the cards played.
    """
    n = st[NUM_SEATS]
    hand = st[HAND + me]
    put_bits(bits, offs[SLOT_HAND, 0], hand)
    put_bits(bits, offs[SLOT_UNSEEN, 0], unseen)
    if turn_up >= 0:
        put_one(bits, offs, SLOT_TURN_UP, turn_up)
    put_one(bits, offs, SLOT_TRUMP, st[TRUMP])
    over = st[PHASE] == PHASE_OVER
    s = me - 1
    for r in range(n):
        s = s + 1 if s + 1 < n else 0  # (me + r) % n, without a division
        if r:
            put_bits(bits, offs[SLOT_KNOWN + r, 0], known[s])
        if st[TRICK + s] >= 0:
            put_one(bits, offs, SLOT_TRICK + r, st[TRICK + s])
        if st[LAST + s] >= 0:
            put_one(bits, offs, SLOT_LAST + r, st[LAST + s])
        if recall:
            put_bits(bits, offs[SLOT_PLAYED + r, 0], st[PLAYED + s])
            put_flags(bits, offs, SLOT_VOID + r, st[VOIDS + s])
        put_one(bits, offs, SLOT_TRICKS + r, st[WON + s])
    if st[NTRICK] > 0 or not over:
        put_one(bits, offs, SLOT_LEADER, relative(st[LEADER], me, n))
    if st[LAST_WINNER] >= 0:
        put_one(bits, offs, SLOT_LAST_WINNER, relative(st[LAST_WINNER], me, n))
    put_one(bits, offs, SLOT_DEALER, relative(st[DEALER], me, n))
    if not over:
        put_one(bits, offs, SLOT_TO_ACT, relative(st[TO_ACT], me, n))
    write_card_facts(bits, offs, st, hand, recall)


@jit_borrow
def write_card_facts(bits: np.ndarray, offs: np.ndarray, st: np.ndarray, hand: int, recall: bool) -> None:
    """The ``master``, ``winning_now`` and ``out[suit]`` pieces (``features.card_facts_reference``): facts of the
    cards as the view shows them (without recall, only the current trick is known to be gone)."""
    n = st[NUM_SEATS]
    gone = 0
    if recall:
        for s in range(n):
            gone |= st[PLAYED + s]
    else:
        for s in range(n):
            if st[TRICK + s] >= 0:
                gone |= 1 << st[TRICK + s]
    master = 0
    for suit in range(4):
        alive = (~gone >> (13 * suit)) & SUIT_BITS
        top = TOP_RANK[alive]
        if top >= 0:
            master |= 1 << (13 * suit + top)
        put_one(bits, offs, SLOT_OUT + suit, NUM_BITS[alive & ~(hand >> (13 * suit))])
    put_bits(bits, offs[SLOT_MASTER, 0], master)
    if st[NTRICK] > 0 and offs[SLOT_WINNING_NOW, 0] >= 0:
        trump = st[TRUMP]
        best = st[TRICK + st[LEADER]]
        for k in range(1, st[NTRICK]):
            c = st[TRICK + (st[LEADER] + k) % n]
            if beats(c, best, trump):
                best = c
        # beats(c, best): a higher card of best's suit, or any trump when best is not one
        suit = best // 13
        winning = hand & (SUIT_BITS << (13 * suit)) & ~((2 << best) - 1)
        if trump != NO_TRUMP and trump != suit:
            winning |= hand & (SUIT_BITS << (13 * trump))
        put_bits(bits, offs[SLOT_WINNING_NOW, 0], winning)


@jit_borrow
def check_actions(state: np.ndarray, actions: np.ndarray, bad: np.ndarray, free_tricks: int = 0) -> int:
    """Mark in ``bad`` each playing environment whose action is not a legal card now (``free_tricks``: see
    :func:`legal_mask`); returns how many (a step kernel calls it first and changes nothing when it finds any).

    Environments whose episode is over are not checked: their action is ignored (they start a new episode).
    """
    count = 0
    for i in range(state.shape[0]):
        st = state[i]
        bad[i] = False
        if st[PHASE] == PHASE_OVER:
            continue
        a = actions[i]
        if a < 0 or a >= NUM_CARDS or not (legal_mask(st, free_tricks) >> a) & 1:
            bad[i] = True
            count += 1
    return count


# ------------------------------------------------------------------------------------------ the Python face
@dataclass(frozen=True)
class TimeStep:
    """What :meth:`RawVectorEnv.reset` and :meth:`RawVectorEnv.step` return: one row per environment (fresh arrays).

    Attributes:
        current_player: the seat to act, or -1 in an environment whose episode just ended.  # (B,) int64
        observation: the seat to act's observation (an ended episode: the observation of the seat that made
            its last move), equal to the AEC env's observation of that seat. A view of a (B, D padded to a
            multiple of 8) array.  # (B, D) uint8 or float32
        action_mask: 1 for each legal action of the seat to act (all 0 once the episode ended).  # (B, A) int8
        rewards: the rewards this step paid each seat (absolute seats), as the AEC env's ``rewards``.
            # (B, n_players) float32
        terminated: whether the episode ended with this step.  # (B,) bool
        truncated: always False (no game is cut short).  # (B,) bool
    """

    current_player: np.ndarray
    observation: np.ndarray
    action_mask: np.ndarray
    rewards: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray


OBS_DTYPES = ("uint8", "float32")


def make_generators(seed: Any, num_envs: int, game_id: str) -> np.ndarray:
    """One xorshift64 state per environment, all drawn from ``seed`` (None: fresh entropy).  # (B,) uint64

    Raises:
        OptionError: for a seed that is not None or an int >= 0.
    """
    if seed is not None and not (isinstance(seed, (int, np.integer)) and not isinstance(seed, bool) and seed >= 0):
        raise OptionError(f"{game_id}: seed must be None or an int >= 0, got {seed!r}")
    states = np.random.SeedSequence(None if seed is None else int(seed)).generate_state(num_envs, np.uint64)
    return states | np.uint64(1)  # xorshift never leaves 0, so 0 is never a state


def env_list(indices: np.ndarray, limit: int = 8) -> str:
    """``"3, 17, 40"``: the environment indices named in a message (past ``limit`` of them, ``"... and 5 more"``)."""
    idx = [str(int(i)) for i in indices[:limit]]
    more = f" and {len(indices) - limit} more" if len(indices) > limit else ""
    return ", ".join(idx) + more


class RawVectorEnv:
    """``num_envs`` episodes of one game stepped together: the raw multi-agent API (:func:`whist_env.vector.make`),
    every seat's decisions in one stream (not a ``gymnasium.vector.VectorEnv``, which has one agent).

    Every call takes or returns one row per environment. An environment whose episode ended (``terminated``)
    starts a new episode on the next :meth:`step` and ignores the action given for it in that call (gymnasium's
    next-step autoreset). A rejected call (bad actions or reset options) raises before any environment changes.

    A game subclasses it with its kernels (their batch loops rendered from :mod:`whist_env.vector.template`) and
    the conversion of a row to and from a rules ``State``.

    Args:
        spec: the game's spec.
        num_envs: number of environments ``B`` (>= 1).
        seed: seeds every environment's generator (None: fresh entropy).
        obs_dtype: ``"uint8"`` or ``"float32"``; None: uint8 where every piece of the layout is binary (the
            observation is 0/1 entries), else float32.
        **options: the game's options, as its AEC env takes them.

    Raises:
        OptionError: for a bad ``num_envs``, seed, ``obs_dtype`` or game option, naming what is allowed.
    """

    # the kernels of the game (set by each game's subclass)
    reset_kernel: ClassVar[Callable[..., None]]
    step_kernel: ClassVar[Callable[..., None]]
    observe_kernel: ClassVar[Callable[..., None]]
    # the game's own fields: name -> (first column, width), from GAME_COLS on
    game_fields: ClassVar[Mapping[str, tuple[int, int]]] = {}
    # the layout names of the game's own observation slots, from GAME_SLOTS on
    game_piece_names: ClassVar[tuple[str, ...]] = ()
    # the first tricks of each deal that need not be followed (the kernels' ``free_tricks``; a game sets it)
    free_tricks = 0

    def __init__(
        self,
        spec: GameSpec[Any, Any],
        num_envs: int,
        seed: Any = None,
        obs_dtype: str | None = None,
        **options: Any,
    ) -> None:
        gid = spec.game_id
        if not isinstance(num_envs, (int, np.integer)) or isinstance(num_envs, bool) or num_envs < 1:
            raise OptionError(f"{gid}: num_envs must be an int >= 1, got {num_envs!r}")
        if obs_dtype is not None and obs_dtype not in OBS_DTYPES:
            raise OptionError(f"{gid}: obs_dtype must be None or one of {OBS_DTYPES}, got {obs_dtype!r}")
        if spec.hidden_pieces and type(self).hidden_masks is RawVectorEnv.hidden_masks:
            raise NotImplementedError(f"{gid}: the game's batched engine does not give its hidden pieces for state()")
        self.spec = spec
        self.game_id = gid
        self.game: TrickGame[Any] = spec.make_rules(**options)
        self.encoder: TrickEncoder = spec.make_encoder(self.game)
        self.num_envs = int(num_envs)
        self.num_players = self.game.num_players
        self.num_actions = self.game.num_actions
        scalars = [p.name for p in self.encoder.layout.scalars]
        if scalars and obs_dtype == "uint8":
            raise OptionError(
                f"{gid}: obs_dtype='uint8' cannot hold the layout's scalar pieces {scalars}; use 'float32' (or None)"
            )
        self.obs_dtype = np.dtype(obs_dtype or ("float32" if scalars else "uint8"))
        self.observation_size = self.encoder.size
        names = common_piece_names(self.encoder.seat_labels) + list(self.game_piece_names)
        self.offsets = piece_table(self.encoder.layout, names, gid)
        self.config = self.config_array()
        # the kernels' tables: piece offsets, and how a byte of bits becomes 8 entries of the observation or mask
        self._tables = (self.offsets, byte_table(self.obs_dtype), byte_table(np.dtype(np.int8)))
        width = GAME_COLS + sum(w for _, w in self.game_fields.values())
        self._state = np.zeros((self.num_envs, width), np.int64)
        self._state[:, NUM_SEATS] = self.num_players
        self._state[:, PHASE] = PHASE_OVER
        self._rng = make_generators(seed, self.num_envs, gid)
        self._bad = np.zeros(self.num_envs, np.bool_)
        self._started = False

    # ---------------------------------------------------------------- what a game supplies
    def config_array(self) -> np.ndarray:
        """The game's options as the int64 array its kernels read."""
        raise NotImplementedError

    def export_state(self, env: int) -> State:
        """Environment ``env`` as a rules ``State`` of the game (a copy: changing it changes nothing here)."""
        raise NotImplementedError

    def import_state(self, env: int, state: State) -> None:
        """Set environment ``env`` to the rules ``state`` (validated by the game's own invariants)."""
        raise NotImplementedError

    def import_view(self, envs: Any, view: PlayerView, hands: Any) -> None:
        """Set the environments ``envs[j]`` to the deal ``view`` sees, every seat holding ``hands[j]`` (a deal drawn
        for the view by :class:`~whist_env.search.sampler.DealSampler`): where search plays deals out from a seat's
        view (PIMC's ``playouts``, :mod:`whist_env.search.playout`).

        The public facts come from the view. What a view does not give and no kernel reads to play the deal on
        stays unknown: the deck (-1s), the order of the cards played (the history is empty), the returns so far and
        the deal's index in the episode (0).
        Make the engine with the game's single-deal options (``GameSpec.single_deal``) for the episode to end with
        the deal.

        Args:
            envs: distinct environment indices, an integer array (k,).
            view: a seat's view in card play, of this engine's game (with its options).
            hands: every seat's hand in each environment, masks (k, n); ``hands[j][view.seat]`` is the view's hand.

        Raises:
            OptionError: in a game whose engine does not take views yet, for a view of another game or outside
                card play, or hands that do not fit the view (another hand for the seat, cards held twice or
                already played), naming what was wrong.
        """
        rows = self._env_rows(envs)
        gid = self.game_id
        if view.game != gid:
            raise OptionError(f"{gid}: import_view got a view of {view.game}")
        if view.phase != "play":
            raise OptionError(f"{gid}: import_view takes a view in card play, got phase {view.phase!r}")
        n = self.num_players
        held = np.asarray(hands, np.int64)
        if held.shape != (len(rows), n):
            raise OptionError(f"{gid}: import_view needs hands of shape {(len(rows), n)}, got {held.shape}")
        gone = 0
        for mask in view.played:
            gone |= mask
        for _, card in view.trick:
            gone |= 1 << card
        union = np.bitwise_or.reduce(held, axis=1)  # disjoint masks: their sum is their union
        bad = np.flatnonzero((held.sum(axis=1) != union) | (union & gone != 0))
        if len(bad):
            raise OptionError(f"{gid}: import_view: the hands of row {bad[0]} hold a card twice or one played")
        other = np.flatnonzero(held[:, view.seat] != view.hand)
        if len(other):
            raise OptionError(f"{gid}: import_view: row {other[0]} gives seat {view.seat} another hand than its view")
        base = self._view_row(view)
        block = np.repeat(base[None, :], len(rows), axis=0)
        block[:, HAND : HAND + n] = held
        block[:, DEALT : DEALT + n] = held | block[:, DEALT : DEALT + n]
        self._state[rows] = block
        self._started = True

    def _view_row(self, view: PlayerView) -> np.ndarray:
        """The state row of what ``view`` sees (the hands and what they were dealt are added by :meth:`import_view`:
        here ``DEALT`` holds each seat's cards played this deal). A game's engine adds its own columns; this one
        refuses the games that do not."""
        raise OptionError(f"{self.game_id}: the batched engine does not take a seat's view yet (import_view)")

    def _view_row_common(self, view: PlayerView) -> np.ndarray:
        """:meth:`_view_row`'s columns every trick game shares."""
        n = self.num_players
        row = np.zeros(self._state.shape[1], np.int64)
        row[TRICK : TRICK + MAX_SEATS] = -1
        row[LAST : LAST + MAX_SEATS] = -1
        row[DECK : DECK + NUM_CARDS] = -1
        played = list(view.played)
        for seat, card in view.trick:
            row[TRICK + seat] = card
            played[seat] |= 1 << card
        row[DEALT : DEALT + n] = played
        row[PLAYED : PLAYED + n] = view.played
        row[VOIDS : VOIDS + n] = view.voids
        row[WON : WON + n] = view.tricks_won
        for seat, card in view.last_trick:
            row[LAST + seat] = card
        row[DEALER] = view.dealer
        row[LEADER] = view.leader
        row[TO_ACT] = view.to_act
        row[TRUMP] = NO_TRUMP if view.trump is None else view.trump
        row[TURN_UP] = view.turn_up
        row[TURN_PUBLIC] = view.turn_up >= 0
        row[LED] = view.trick[0][1] // 13 if view.trick else -1
        row[NTRICK] = len(view.trick)
        row[TRICK_NO] = sum(view.tricks_won)
        row[LAST_WINNER] = view.last_winner
        row[PHASE] = PHASE_PLAY
        last = view.trick or view.last_trick
        row[LAST_ACTOR] = last[-1][0] if last else view.to_act
        row[NUM_SEATS] = n
        in_trick = any(seat == view.seat for seat, _ in view.trick)
        row[DEAL_TRICKS] = row[TRICK_NO] + view.hand.bit_count() + in_trick
        return row

    def hidden_masks(self) -> np.ndarray:
        """The masks of the spec's ``hidden_pieces`` in every environment, in order (for :meth:`state`).
        # (B, len(hidden_pieces)) int64"""
        return np.zeros((self.num_envs, 0), np.int64)

    # ---------------------------------------------------------------- export and import: the common fields
    def _export_common(self, state: State, st: list[int], owned: Sequence[int]) -> None:
        """Set the fields every trick game's rules ``state`` shares from the state row ``st``; ``owned[s]`` is
        every card seat ``s`` held this deal (the owner of each card in the history)."""
        n = self.num_players
        state.deal_index = st[DEAL_INDEX]
        state.phase = st[PHASE]
        state.to_act = st[TO_ACT]
        state.hands = st[HAND : HAND + n]
        state.dealt = tuple(st[DEALT : DEALT + n])
        state.deal_tricks = st[DEAL_TRICKS]
        state.trump = None if st[TRUMP] == NO_TRUMP else st[TRUMP]
        state.turn_up = st[TURN_UP]
        state.turn_up_public = bool(st[TURN_PUBLIC])
        state.leader = st[LEADER]
        state.led_suit = st[LED]
        count = st[TRICK_NO] * n + st[NTRICK]
        owner = [0] * NUM_CARDS
        for s in range(n):
            for c in bits_of(owned[s]):
                owner[c] = s
        state.history = [(owner[c], c) for c in st[HIST : HIST + count]]
        state.trick = state.history[st[TRICK_NO] * n :]
        if st[LAST_WINNER] >= 0:
            state.last_trick = tuple(state.history[(st[TRICK_NO] - 1) * n : st[TRICK_NO] * n])
        state.last_winner = st[LAST_WINNER]
        state.trick_number = st[TRICK_NO]
        state.tricks_won = st[WON : WON + n]
        state.played = st[PLAYED : PLAYED + n]
        state.played_all = 0
        for mask in state.played:
            state.played_all |= mask
        state.voids = st[VOIDS : VOIDS + n]
        state.returns = [float(r) for r in st[RET : RET + n]]

    def _checked_import(
        self, env: int, state: State, cls: type[State], phases: tuple[int, ...] = (PHASE_PLAY, PHASE_OVER)
    ) -> int:
        """The index of ``env`` after checking ``state`` for :meth:`import_state`: of the game's state class, in
        one of ``phases`` (by default: in play or over), consistent by the rules' invariants, with whole-number
        returns."""
        i = self._env_index(env)
        gid = self.game_id
        if not isinstance(state, cls):
            raise OptionError(f"{gid}: import_state takes a {cls.__name__}, got {type(state).__name__}")
        if state.phase not in phases:
            allowed = ", ".join(self.game.phase_names[p] for p in phases)
            raise OptionError(
                f"{gid}: import_state takes a state in one of the phases {allowed}, got phase {state.phase}"
            )
        try:
            self.game.check_invariants(state)
        except AssertionError as err:
            raise OptionError(f"{gid}: import_state got an inconsistent state: {err}") from None
        if any(r != int(r) for r in state.returns):
            raise OptionError(f"{gid}: import_state needs whole-number returns, got {state.returns}")
        return i

    def _import_common(self, state: State) -> np.ndarray:
        """A state row holding the fields every trick game's rules ``state`` shares (the deck: -1s, not known)."""
        n = self.num_players
        row = np.zeros(self._state.shape[1], np.int64)
        row[TRICK : TRICK + MAX_SEATS] = -1
        row[LAST : LAST + MAX_SEATS] = -1
        row[HAND : HAND + n] = state.hands
        row[DEALT : DEALT + n] = state.dealt
        row[PLAYED : PLAYED + n] = state.played
        row[VOIDS : VOIDS + n] = state.voids
        row[WON : WON + n] = state.tricks_won
        row[RET : RET + n] = [int(r) for r in state.returns]
        for seat, card in state.trick:
            row[TRICK + seat] = card
        for seat, card in state.last_trick:
            row[LAST + seat] = card
        row[HIST : HIST + len(state.history)] = [card for _, card in state.history]
        row[DECK : DECK + NUM_CARDS] = -1
        row[DEALER] = state.dealer
        row[LEADER] = state.leader
        row[TO_ACT] = state.to_act
        row[TRUMP] = NO_TRUMP if state.trump is None else state.trump
        row[TURN_UP] = state.turn_up
        row[TURN_PUBLIC] = state.turn_up_public
        row[LED] = state.led_suit
        row[NTRICK] = len(state.trick)
        row[TRICK_NO] = state.trick_number
        row[LAST_WINNER] = state.last_winner
        row[DEAL_INDEX] = state.deal_index
        row[PHASE] = state.phase
        row[LAST_ACTOR] = state.history[-1][0] if state.history else state.to_act
        row[NUM_SEATS] = n
        row[DEAL_TRICKS] = state.deal_tricks
        return row

    # ---------------------------------------------------------------- the API
    def field(self, name: str) -> np.ndarray:
        """A field of the state block as a ``(B, width)`` view (``"hands"``, ``"deck"``, a game's own fields)."""
        fields = {**COMMON_FIELDS, **self.game_fields}
        if name not in fields:
            raise KeyError(f"{self.game_id}: no state field {name!r}; fields: {sorted(fields)}")
        start, width = fields[name]
        return self._state[:, start : start + width]

    def decks(self) -> np.ndarray:
        """The deck of each environment's current deal, in dealing order (a copy).  # (B, 52) int64"""
        return self.field("deck").copy()

    def reset(self, seed: Any = None, options: Mapping[str, Any] | None = None) -> TimeStep:
        """Start a new episode in every environment.

        Args:
            seed: reseeds every environment's generator (an int >= 0); None: the generators go on.
            options: ``{"decks": (B, 52) cards, "dealers": (B,) seats}`` (either or both): the first deal of
                each environment from these, each deck checked by the AEC env's deck validator. Cards are ids
                0..51 or names like ``"TS"``; ``decks[i][0]`` is dealt first.

        Raises:
            OptionError: for a bad seed or option, naming the environments concerned; nothing changes then.
        """
        gid = self.game_id
        start = reset_options(gid, options, ("decks", "dealers"))
        decks = self._check_decks(start["decks"]) if start.get("decks") is not None else None
        dealers = self._check_dealers(start["dealers"]) if start.get("dealers") is not None else None
        rng = make_generators(seed, self.num_envs, gid) if seed is not None else self._rng
        have = decks is not None
        given_decks = decks if decks is not None else np.zeros((1, NUM_CARDS), np.int64)
        given_dealers = dealers if dealers is not None else np.full(self.num_envs, -1, np.int64)
        current, obs, mask, rewards = self._outputs()
        self._rng = rng
        type(self).reset_kernel(
            self._state, self._rng, self.config, *self._tables, have, given_decks, given_dealers,
            current, obs.view(np.uint64), mask.view(np.uint64), rewards,
        )  # fmt: skip
        self._started = True
        b = self.num_envs
        return TimeStep(current, *self._trim(obs, mask), rewards, np.zeros(b, np.bool_), np.zeros(b, np.bool_))

    def step(self, actions: Any) -> TimeStep:
        """Apply one action in every environment: ``actions[i]`` is the card the seat to act in env ``i`` plays.

        Args:
            actions: an integer array (B,). In an environment whose episode ended at the last step the action
                is ignored: that environment starts a new episode (its first decision is in the result).

        Raises:
            ValueError: for actions of the wrong shape or dtype.
            IllegalActionError: when some actions are illegal; it names the environments, and none changed.
            CallOrderError: before :meth:`reset`.
        """
        if not self._started:
            raise CallOrderError(f"{self.game_id}: call reset() before step(): no episode has started")
        acts = self._int_array(actions, "actions")
        current, obs, mask, rewards = self._outputs()
        term = np.zeros(self.num_envs, np.bool_)
        refused = type(self).step_kernel(
            self._state, self._rng, self.config, *self._tables, acts, self._bad,
            current, obs.view(np.uint64), mask.view(np.uint64), rewards, term,
        )  # fmt: skip
        if refused:
            raise self._illegal(np.asarray(actions))  # as given: a uint64 beyond int64 is named as it was, not wrapped
        return TimeStep(current, *self._trim(obs, mask), rewards, term, np.zeros(self.num_envs, np.bool_))

    def observe(self, seats: Any) -> tuple[np.ndarray, np.ndarray]:
        """The observation and action mask of ``seats[i]`` in environment ``i`` (any seat, not only the one to act).

        Args:
            seats: an integer array (B,) of seats 0..n-1.

        Returns:
            ``(observation (B, D), action_mask (B, A))``; a seat not to act has an all-zero mask.
        """
        if not self._started:
            raise CallOrderError(f"{self.game_id}: call reset() before observe(): no episode has started")
        seat_arr = self._int_array(seats, "seats")
        wrong = np.flatnonzero((seat_arr < 0) | (seat_arr >= self.num_players))
        if len(wrong):
            raise ValueError(
                f"{self.game_id}: seats must be 0..{self.num_players - 1}; environment(s) {env_list(wrong)} "
                f"got {env_list(seat_arr[wrong])}"
            )
        _, obs, mask, _ = self._outputs()
        type(self).observe_kernel(
            self._state, self.config, *self._tables, seat_arr, obs.view(np.uint64), mask.view(np.uint64)
        )
        return self._trim(obs, mask)

    def step_envs(self, envs: Any, actions: Any) -> TimeStep:
        """:meth:`step` for the environments ``envs`` only: the others, and their generators, do not move (the
        learner env of :mod:`whist_env.vector.learner` plays the seats inside with it).

        Args:
            envs: distinct environment indices, an integer array (k,).
            actions: an integer array (k,): ``actions[j]`` for environment ``envs[j]`` (ignored where its episode
                ended: it starts a new one).

        Returns:
            A :class:`TimeStep` of ``k`` rows, in the order of ``envs``.

        Raises:
            ValueError: for bad ``envs`` or actions of the wrong shape or dtype.
            IllegalActionError: when some actions are illegal; it names the environments (batch indices), and none
                changed.
        """
        if not self._started:
            raise CallOrderError(f"{self.game_id}: call reset() before step_envs(): no episode has started")
        rows = self._env_rows(envs)
        given = np.asarray(actions)
        if given.shape != rows.shape or not np.issubdtype(given.dtype, np.integer):
            raise ValueError(
                f"{self.game_id}: actions must be an integer array of shape {rows.shape} (one per environment in "
                f"envs), got shape {given.shape} dtype {given.dtype}"
            )
        acts = np.ascontiguousarray(given, np.int64)
        k = len(rows)
        state, rng, bad = self._state[rows], self._rng[rows], np.zeros(k, np.bool_)
        current, obs, mask, rewards = self._outputs(k)
        term = np.zeros(k, np.bool_)
        refused = type(self).step_kernel(
            state, rng, self.config, *self._tables, acts, bad,
            current, obs.view(np.uint64), mask.view(np.uint64), rewards, term,
        )  # fmt: skip
        if refused:
            first = int(np.flatnonzero(bad)[0])
            seat = int(state[first, TO_ACT])
            legal = tuple(int(a) for a in np.flatnonzero(self._observe_rows(state[first : first + 1], [seat])[1][0]))
            describe = self.game.action_text
            raise IllegalActionError(
                f"{self.game_id}: illegal action in environment(s) {env_list(rows[bad])}; no environment changed. "
                f"Environment {rows[first]}: seat {seat} cannot play {describe(int(given[first]))}; legal: "
                + " ".join(describe(a) for a in legal),
                seat,
                int(given[first]),
                legal,
            )
        self._state[rows] = state
        self._rng[rows] = rng
        return TimeStep(current, *self._trim(obs, mask), rewards, term, np.zeros(k, np.bool_))

    def reset_envs(self, envs: Any) -> TimeStep:
        """Start a new episode in the environments ``envs`` only, whether or not theirs ended, as :meth:`step` starts
        one where an episode ended (a deck shuffled with that environment's generator, a dealer drawn); the others
        do not move. The learner env ends an episode early with it (an illegal action, when it is told to end
        episodes on one).

        Returns:
            A :class:`TimeStep` of ``len(envs)`` rows, in the order of ``envs``.

        Raises:
            ValueError: for bad ``envs``.
            CallOrderError: before :meth:`reset`.
        """
        if not self._started:
            raise CallOrderError(f"{self.game_id}: call reset() before reset_envs(): no episode has started")
        rows = self._env_rows(envs)
        k = len(rows)
        state, rng = self._state[rows], self._rng[rows]
        current, obs, mask, rewards = self._outputs(k)
        type(self).reset_kernel(
            state, rng, self.config, *self._tables, False, np.zeros((1, NUM_CARDS), np.int64),
            np.full(k, -1, np.int64), current, obs.view(np.uint64), mask.view(np.uint64), rewards,
        )  # fmt: skip
        self._state[rows] = state
        self._rng[rows] = rng
        return TimeStep(current, *self._trim(obs, mask), rewards, np.zeros(k, np.bool_), np.zeros(k, np.bool_))

    def observe_envs(self, envs: Any, seats: Any) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`observe` for the environments ``envs`` only: the observation and mask of ``seats[j]`` in
        environment ``envs[j]``.  # (k, D), (k, A)"""
        if not self._started:
            raise CallOrderError(f"{self.game_id}: call reset() before observe_envs(): no episode has started")
        rows = self._env_rows(envs)
        seat_arr = np.asarray(seats)
        if seat_arr.shape != rows.shape or not np.issubdtype(seat_arr.dtype, np.integer):
            raise ValueError(f"{self.game_id}: seats must be an integer array of shape {rows.shape}, got {seat_arr!r}")
        if ((seat_arr < 0) | (seat_arr >= self.num_players)).any():
            raise ValueError(f"{self.game_id}: seats must be 0..{self.num_players - 1}, got {seat_arr.tolist()}")
        return self._observe_rows(self._state[rows], seat_arr)

    def _observe_rows(self, state: np.ndarray, seats: Any) -> tuple[np.ndarray, np.ndarray]:
        """The observation and mask of ``seats[j]`` in the state rows ``state[j]`` (a copy of some rows)."""
        _, obs, mask, _ = self._outputs(state.shape[0])
        type(self).observe_kernel(
            state, self.config, *self._tables, np.ascontiguousarray(seats, np.int64), obs.view(np.uint64),
            mask.view(np.uint64),
        )  # fmt: skip
        return self._trim(obs, mask)

    def _env_rows(self, envs: Any) -> np.ndarray:
        """``envs`` checked: distinct environment indices as an int64 array (k,)."""
        rows = np.asarray(envs)
        if rows.ndim != 1 or not np.issubdtype(rows.dtype, np.integer):
            raise ValueError(f"{self.game_id}: envs must be a 1-D integer array of environment indices, got {envs!r}")
        if ((rows < 0) | (rows >= self.num_envs)).any() or len(np.unique(rows)) != len(rows):
            raise ValueError(
                f"{self.game_id}: envs must be distinct environment indices 0..{self.num_envs - 1}, got {rows.tolist()}"
            )
        return rows.astype(np.int64)

    def state(self) -> np.ndarray:
        """The full hidden state of each environment, as the AEC env's ``state()``: every hand and the game's hidden
        card sets (:meth:`hidden_masks`), then the table as seat 0 sees it (absolute seats).  # (B, 52 n + D) float32"""
        obs, _ = self.observe(np.zeros(self.num_envs, np.int64))
        masks = np.concatenate([self.field("hands")[:, : self.num_players], self.hidden_masks()], axis=1)
        k = masks.shape[1]
        bits = np.unpackbits(masks.astype("<u8").view(np.uint8), axis=1, bitorder="little")  # (B, 64 k)
        bits = bits.reshape(self.num_envs, k, 64)[:, :, :NUM_CARDS].reshape(self.num_envs, -1)
        return np.concatenate([bits.astype(np.float32), obs.astype(np.float32)], axis=1)

    # ---------------------------------------------------------------- checks
    def _env_index(self, env: Any) -> int:
        if not isinstance(env, (int, np.integer)) or isinstance(env, bool) or not 0 <= env < self.num_envs:
            raise IndexError(f"{self.game_id}: environment index must be an int 0..{self.num_envs - 1}, got {env!r}")
        return int(env)

    def _outputs(self, rows: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Fresh output arrays for ``rows`` environments (None: all); the observation and mask rows padded to whole
        bytes of bits (see :func:`expand`)."""
        b = self.num_envs if rows is None else rows
        return (
            np.empty(b, np.int64),
            np.empty((b, padded(self.observation_size)), self.obs_dtype),
            np.empty((b, padded(self.num_actions)), np.int8),
            np.empty((b, self.num_players), np.float32),
        )

    def _trim(self, obs: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The padded outputs as (B, D) and (B, A) views (no copy: rows keep their padded stride)."""
        return obs[:, : self.observation_size], mask[:, : self.num_actions]

    def _int_array(self, values: Any, what: str) -> np.ndarray:
        arr = np.asarray(values)
        if arr.shape != (self.num_envs,) or not np.issubdtype(arr.dtype, np.integer):
            raise ValueError(
                f"{self.game_id}: {what} must be an integer array of shape ({self.num_envs},) (one per environment), "
                f"got shape {arr.shape} dtype {arr.dtype}"
            )
        return np.ascontiguousarray(arr, np.int64)

    def _illegal(self, actions: np.ndarray) -> IllegalActionError:
        """The error naming the environments whose action was refused (the first one's legal cards in full)."""
        bad = np.flatnonzero(self._bad)
        first = int(bad[0])
        st = self._state[first]
        legal = tuple(c for c in range(NUM_CARDS) if (int(legal_mask(st, self.free_tricks)) >> c) & 1)
        a = int(actions[first])
        describe = self.game.action_text
        return IllegalActionError(
            f"{self.game_id}: illegal action in environment(s) {env_list(bad)}; no environment changed. "
            f"Environment {first}: seat {int(st[TO_ACT])} cannot play {describe(a)}; legal: "
            + " ".join(describe(c) for c in legal),
            int(st[TO_ACT]),
            a,
            legal,
        )

    def _check_decks(self, decks: Any) -> np.ndarray:
        """``decks`` as a (B, 52) int64 array; each deck checked by the AEC env's validator (``check_deck``)."""
        gid = self.game_id
        arr = np.asarray(decks)
        if arr.ndim != 2 or arr.shape != (self.num_envs, NUM_CARDS):
            raise OptionError(
                f"{gid}: 'decks' must have shape ({self.num_envs}, 52): one deck of 52 cards per environment, "
                f"got shape {arr.shape}"
            )
        if np.issubdtype(arr.dtype, np.integer) and arr.dtype != np.bool_:
            ok = np.asarray(((arr >= 0) & (arr < NUM_CARDS)).all(axis=1))
            ok[ok] = (np.sort(arr[ok], axis=1) == np.arange(NUM_CARDS)).all(axis=1)
            wrong = np.flatnonzero(~ok)
            out = np.ascontiguousarray(arr, np.int64)
        else:  # card names (or anything else): the validator reads each deck
            wrong_list, rows = [], []
            for i, row in enumerate(arr):
                try:
                    rows.append(check_deck(row, gid))
                except OptionError:
                    wrong_list.append(i)
                    rows.append(list(range(NUM_CARDS)))
            wrong = np.array(wrong_list, np.int64)
            out = np.array(rows, np.int64)
        if len(wrong):
            try:
                check_deck(arr[wrong[0]], gid)
                reason = "not a deck"  # not reached: the row failed the same checks above
            except OptionError as err:
                reason = str(err).removeprefix(f"{gid}: ")
            raise OptionError(f"{gid}: bad deck in environment(s) {env_list(wrong)}; environment {wrong[0]}: {reason}")
        return out

    def _check_dealers(self, dealers: Any) -> np.ndarray:
        """``dealers`` as a (B,) int64 array of seats."""
        gid = self.game_id
        arr = np.asarray(dealers)
        n = self.num_players
        if arr.shape != (self.num_envs,) or not np.issubdtype(arr.dtype, np.integer) or arr.dtype == np.bool_:
            raise OptionError(
                f"{gid}: 'dealers' must be an integer array of shape ({self.num_envs},), seats 0..{n - 1}; "
                f"got shape {arr.shape} dtype {arr.dtype}"
            )
        wrong = np.flatnonzero((arr < 0) | (arr >= n))
        if len(wrong):
            raise OptionError(
                f"{gid}: 'dealers' must be seats 0..{n - 1}; environment(s) {env_list(wrong)} got "
                f"{env_list(arr[wrong])}"
            )
        return np.ascontiguousarray(arr, np.int64)
