"""Double-dummy solver for the card play: every hand open, best play by both sides.

Covers the two-sided games: ``classic_whist_v0`` (partnerships {0, 2} against {1, 3}), ``humbug_v0``,
``humbug_whist_v0`` (play phase) and ``german_whist_v0`` (phase 2, and phase 1 when the stock order is
given: the draws after each phase-1 trick are part of the position).

    >>> from whist_env.search import Solver, position_from_state
    >>> pos = position_from_state(game, state)      # never mutates ``state``
    >>> result = Solver().solve(pos)
    >>> result.value, result.card_values           # tricks for the side to move; per legal card

Values count the tricks still to be decided *that count for the result* (German Whist phase-1 tricks
count only with ``count_all_tricks``), the current trick included, for the side of the seat to act.

How it searches (the same ideas as the bridge solvers, kept small):

* null-window searches on trick counts ("can side 0 take at least t more tricks?"), driven like
  MTD(f) from a guess; a transposition table keeps bounds at trick starts, with ranks *relative to
  the cards still out* (a position where the 2♠ and 3♠ are gone is the same as one where the 4♠ is
  the lowest spade);
* partition search (Ginsberg's idea, as the bridge solvers use it): each search also returns the
  cards whose ranks its answer depended on (the winner of a trick won by rank, the top cards a
  quick-trick bound counted), and a table entry then stands for every position with the same suit
  lengths in each hand and those cards (with every card above them still out) in the same hands.
  The table is bucketed by suit lengths and leader, and a lookup scans the bucket for an entry whose
  cards match;
* equivalent cards: cards adjacent in rank among the cards still out, held by the seat to play, are
  one move (the highest of each run is tried);
* move ordering: the transposition table's best move first, then masters and cheap winners, low
  cards when the partner is winning;
* quick-trick bounds at trick starts: the leader's top cards it can cash before anyone ruffs, and
  the top trumps of a defender, which win whatever happens.

The search runs compiled with numba when it is installed (a few milliseconds for a German Whist phase-2
position); without numba the same code runs as plain Python, correct but about a hundred times slower.
The compiled kernels are cached on disk (beside this file, or in a user folder when that is read-only:
:mod:`whist_env.vector.numba_cache`), so only the first process compiles them (several seconds).
A ``horizon`` limits the search to the next few tricks, scoring the rest with a quick estimate
(:func:`estimate`), for the long positions that an agent cannot afford to solve exactly.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from whist_env.cards import NUM_RANKS, card_str
from whist_env.registry import game_ids, get_spec
from whist_env.rules.core import PHASE_PLAY, State, TrickGame
from whist_env.rules.tricks import legal_cards

if TYPE_CHECKING:
    from whist_env.spec import SearchSpec

try:  # numba is optional: without it the kernels below run as plain Python
    from numba import njit as _numba_njit

    from whist_env.vector.numba_cache import use_writable_cache

    HAVE_NUMBA = True
    use_writable_cache()  # the kernels are cached on disk (cache=True): somewhere this process can write
except ImportError:  # pragma: no cover - exercised only where numba is missing
    HAVE_NUMBA = False

    def _numba_njit(*args: Any, **kwargs: Any) -> Any:  # type: ignore[no-redef]
        return lambda f: f


def _jit(f: Callable[..., Any]) -> Callable[..., Any]:
    # nogil: a search releases the GIL, so that the threads of a program that searches (whist-serve's agents)
    # and its other threads (the server's event loop) run side by side. The kernels share no mutable state:
    # each Solver owns its arrays, and one Solver searches in one thread at a time.
    jitted: Callable[..., Any] = _numba_njit(cache=True, nogil=True)(f)
    return jitted


# int64 (not literal) arguments of _search's recursive call; see the comment there
_I0 = np.int64(0)
_I_NONE = np.int64(-1)
NO_TRUMP = 4  # trump code in the kernels when there is none
SUIT13 = 0x1FFF
MAX_PLY = 64
MAX_MOVES = 16
# Columns of the per-trick rule table, one row per trick of the deal (and one past the end).
R_COUNTS = 0  # 1 when this trick counts for the result
R_FOLLOW = 1  # 1 when followers must follow suit in this trick
R_DRAW_WIN = 2  # card the trick's winner draws after it, -1 when none
R_DRAW_LOSE = 3  # card the loser draws (two players only), -1 when none
R_STOCK = 4  # mask of every card still to be drawn from this trick on
R_SUFFIX = 5  # counting tricks from this trick to the end
R_SETTLED = 6  # 1 when no draw is left and every trick from here counts (relative ranks, quick tricks)
R_COLS = 7
# Fields of the config vector.
C_N, C_TRUMP, C_HORIZON, C_GEN, C_MASK, C_PARTITION, C_WAYS = 0, 1, 2, 3, 4, 5, 6
# Statistics.
S_NODES, S_TT_HITS, S_STORES = 0, 1, 2
# Transposition table: buckets of entries, each entry a bound valid for a set of positions. Four hands
# give many more positions per suit-length pattern than two: bigger buckets pay for their longer scans.
TT_WAYS = {2: 16, 4: 128}  # entries per bucket, by number of players
E_LENGTHS = 0  # suit lengths of seats 0-2
E_META = 1  # generation << 24 | suit lengths of seat 3 << 8 | trick number << 3 | leader << 1 | settled
E_KEY = 2  # 4 words: each seat's cards (relative ranks when settled)
E_RELEVANT = 6  # the relative ranks the bound depends on (a suit's top cards); every card when not settled
E_DATA = 7  # 1 for an upper bound | bound << 1 | (best move + 1) << 6
E_COLS = 8
ALL_CARDS = (1 << 52) - 1

_POP13 = np.array([bin(i).count("1") for i in range(1 << 13)], dtype=np.int64)
_HIGH13 = np.array([i.bit_length() - 1 for i in range(1 << 13)], dtype=np.int64)  # highest set bit, -1 for 0


@_jit
def _popcount(x: int) -> int:
    return _POP13[x & SUIT13] + _POP13[(x >> 13) & SUIT13] + _POP13[(x >> 26) & SUIT13] + _POP13[(x >> 39) & SUIT13]


@_jit
def _beats(card: int, best: int, trump: int) -> bool:
    s = card // 13
    b = best // 13
    if s == b:
        return card > best
    return s == trump


@_jit
def _top_run(mine: int, out: int) -> int:
    """Length of the run of ``mine`` from the top of ``out`` (13-bit suit patterns)."""
    run = 0
    for r in range(12, -1, -1):
        if (out >> r) & 1:
            if (mine >> r) & 1:
                run += 1
            else:
                break
    return run


@_jit
def _suit_top(out: int, k: int) -> int:
    """The ``k`` highest cards of a 13-bit suit pattern ``out``."""
    top = 0
    while k > 0 and out:
        r = _HIGH13[out]
        out ^= 1 << r
        top |= 1 << r
        k -= 1
    return top


@_jit
def _quick(hands: np.ndarray, sides: np.ndarray, n: int, trump: int, seat: int, inplay: int) -> tuple[int, int]:
    """Tricks ``seat`` cashes on lead with its top cards before anyone can ruff, and those cards (a mask).

    All of a top run in trumps (or without trump); in a side suit as many rounds as every opponent
    holding trumps still follows.
    """
    h = hands[seat]
    my_side = sides[seat]
    opp_trumps = False
    if trump != NO_TRUMP:
        for s in range(n):
            if sides[s] != my_side and (hands[s] >> (13 * trump)) & SUIT13:
                opp_trumps = True
    quick = 0
    cards = 0
    for su in range(4):
        out = (inplay >> (13 * su)) & SUIT13
        run = _top_run((h >> (13 * su)) & SUIT13, out)
        if run == 0:
            continue
        if su != trump and opp_trumps:
            for s in range(n):
                if sides[s] != my_side and (hands[s] >> (13 * trump)) & SUIT13:
                    length = _POP13[(hands[s] >> (13 * su)) & SUIT13]
                    if length < run:
                        run = length
        quick += run
        cards |= _suit_top(out, run) << (13 * su)
    size = _popcount(h)
    return (quick if quick < size else size), cards


@_jit
def _bounds(
    hands: np.ndarray, sides: np.ndarray, n: int, trump: int, leader: int, inplay: int
) -> tuple[int, int, int, int]:
    """Sure tricks at a trick start: the leader's side's quick tricks, the other side's sure trumps.

    The leader cashes its quick tricks (:func:`_quick`), or, with four players, leads to a suit in
    which the partner holds the master and nobody can ruff the first round, and the partner cashes
    its own (the entry is the first of them). A defender's top trumps win a trick each, whatever is led.

    Returns ``(quick, sure, quick_cards, sure_cards)``: each bound with the cards it counted. Only the
    suit lengths and who holds those cards matter: a position that has the same lengths and the same
    cards in the same hands has bounds at least as good (the partition search relies on this).
    """
    my_side = sides[leader]
    quick, quick_cards = _quick(hands, sides, n, trump, leader, inplay)
    if n == 4:
        partner = (leader + 2) % 4
        for su in range(4):
            out = (inplay >> (13 * su)) & SUIT13
            if not out or not (hands[leader] >> (13 * su)) & SUIT13:
                continue
            top = 12
            while not (out >> top) & 1:
                top -= 1
            if not (hands[partner] >> (13 * su + top)) & 1:
                continue
            safe = True
            if trump != NO_TRUMP and su != trump:
                for s in range(n):
                    if sides[s] != my_side and (hands[s] >> (13 * trump)) & SUIT13:
                        if not (hands[s] >> (13 * su)) & SUIT13:
                            safe = False
            if safe:
                via_partner, partner_cards = _quick(hands, sides, n, trump, partner, inplay)
                if via_partner > quick:
                    quick = via_partner
                    quick_cards = partner_cards | (1 << (13 * su + top))
                break
    sure = 0
    sure_cards = 0
    if trump != NO_TRUMP:
        out = (inplay >> (13 * trump)) & SUIT13
        for s in range(n):
            if sides[s] != my_side:
                run = _top_run((hands[s] >> (13 * trump)) & SUIT13, out)
                if run > sure:
                    sure = run
                    sure_cards = _suit_top(out, run) << (13 * trump)
    return quick, sure, quick_cards, sure_cards


@_jit
def estimate(hands: np.ndarray, sides: np.ndarray, n: int, trump: int, leader: int, inplay: int, rem: int) -> int:
    """A quick guess at side 0's tricks of the ``rem`` still to play (used past the search horizon).

    Between the sure bounds, the tricks are shared in proportion to each side's card strength: the
    rank of each card relative to the cards still out of its suit, with trumps worth more.
    """
    strength0 = 1.0
    strength1 = 1.0
    for su in range(4):
        out = (inplay >> (13 * su)) & SUIT13
        pos = 0
        for r in range(12, -1, -1):
            if (out >> r) & 1:
                c = 13 * su + r
                w = 0.0
                if pos < 4:
                    w = 4.0 - pos  # relative A K Q J
                if su == trump:
                    w += 2.0
                for s in range(n):
                    if (hands[s] >> c) & 1:
                        if sides[s] == 0:
                            strength0 += w
                        else:
                            strength1 += w
                pos += 1
    guess = int(rem * strength0 / (strength0 + strength1) + 0.5)
    quick, sure, _, _ = _bounds(hands, sides, n, trump, leader, inplay)
    if sides[leader] == 0:
        lo, hi = quick, rem - sure
    else:
        lo, hi = sure, rem - quick
    if guess < lo:
        guess = lo
    if guess > hi:
        guess = hi
    return guess


@_jit
def _close(relev: int, inplay: int, hands: np.ndarray, n: int) -> int:
    """``relev`` made upward closed at a trick start: each suit's cards out from its lowest relevant card up.

    A run of equivalent cards (adjacent among the cards out, in one hand) is kept whole: the search tried
    only its highest card, so a bound that depends on one card of a run depends on all of them.
    """
    closed = 0
    for su in range(4):
        w = (relev >> (13 * su)) & SUIT13
        if not w:
            continue
        out = (inplay >> (13 * su)) & SUIT13
        low = w & -w
        holder = -1
        for s in range(n):
            if (hands[s] >> (13 * su)) & low:
                holder = s
        while holder >= 0 and out & (low - 1):
            below = 1 << _HIGH13[out & (low - 1)]
            if not (hands[holder] >> (13 * su)) & below:
                break
            low = below
        closed |= (out & ~(low - 1)) << (13 * su)
    return closed


@_jit
def _to_relative(relev: int) -> int:
    """An upward-closed set of cards as relative ranks: a suit's top ``k`` cards out become ranks 12..13-k."""
    rel = 0
    for su in range(4):
        k = _POP13[(relev >> (13 * su)) & SUIT13]
        rel |= (((1 << k) - 1) << (13 - k)) << (13 * su)
    return rel


@_jit
def _from_relative(rel: int, inplay: int) -> int:
    """The cards of ``inplay`` that the relative ranks ``rel`` (top ``k`` per suit) stand for."""
    cards = 0
    for su in range(4):
        k = _POP13[(rel >> (13 * su)) & SUIT13]
        if k:
            cards |= _suit_top((inplay >> (13 * su)) & SUIT13, k) << (13 * su)
    return cards


@_jit
def _card_to_relative(card: int, inplay: int) -> int:
    """A card as its relative rank among the cards of its suit still out (same suit, rank 12 = highest)."""
    su = card // 13
    above = ((inplay >> (13 * su)) & SUIT13) >> (card % 13 + 1)
    return 13 * su + 12 - _POP13[above]


@_jit
def _card_from_relative(rcard: int, inplay: int) -> int:
    """The card of ``inplay`` with relative rank ``rcard``, or -1 when the suit has no such card."""
    su = rcard // 13
    out = (inplay >> (13 * su)) & SUIT13
    for _ in range(12 - rcard % 13):
        if not out:
            return -1
        out ^= 1 << _HIGH13[out]
    if not out:
        return -1
    return 13 * su + _HIGH13[out]


@_jit
def _table_key(
    hands: np.ndarray, n: int, inplay: int, leader: int, tnum: int, settled: int, key: np.ndarray
) -> tuple[int, int]:
    """Fill ``key`` (4 words: each seat's cards) and return ``(lengths, meta)`` of a trick-start position.

    Settled positions are keyed with ranks relative to the cards still out (the i-th highest card of a
    suit becomes rank 12 - i). ``lengths`` packs the suit lengths of seats 0-2, ``meta`` those of seat 3
    with the trick number, leader and the settled flag (the table's generation goes on top).
    """
    for s in range(4):
        key[s] = 0
    if settled:
        for su in range(4):
            out = (inplay >> (13 * su)) & SUIT13
            pos = 13 * su + 12
            while out:
                r = _HIGH13[out]
                out ^= 1 << r
                c = 13 * su + r
                for s in range(n):
                    if (hands[s] >> c) & 1:
                        key[s] |= 1 << pos
                        break
                pos -= 1
    else:
        for s in range(n):
            key[s] = hands[s]
    lengths = 0
    for s in range(3):
        for su in range(4):
            lengths |= _POP13[(hands[s] >> (13 * su)) & SUIT13] << (4 * (4 * s + su))
    meta = 0
    for su in range(4):
        meta |= _POP13[(hands[3] >> (13 * su)) & SUIT13] << (8 + 4 * su)
    meta |= (tnum << 3) | (leader << 1) | settled
    return lengths, meta


@_jit
def _same_holders(table: np.ndarray, e: int, key: np.ndarray, rel: int) -> bool:
    """Whether table entry ``e`` has each card of ``rel`` in the same hand as ``key``."""
    diff = (table[e, E_KEY] ^ key[0]) | (table[e, E_KEY + 1] ^ key[1])
    diff |= (table[e, E_KEY + 2] ^ key[2]) | (table[e, E_KEY + 3] ^ key[3])
    return not diff & rel


@_jit
def _bucket(lengths: int, meta: int, settled: int, key: np.ndarray, mask: int, ways: int) -> int:
    """First entry of the table bucket of a position: settled positions by suit lengths and leader only
    (an entry there may cover many positions), others by their exact hands too."""
    x = (lengths ^ (lengths >> 29)) & 0xFFFFFFFF
    x = ((x ^ meta) * 40503 + 7) & 0xFFFFFFFF
    if not settled:
        for s in range(4):
            f = (key[s] ^ (key[s] >> 32)) & 0xFFFFFFFF
            x = ((x ^ f) * 40503 + s) & 0xFFFFFFFF
    x ^= x >> 15
    x = (x * 2654435761) & 0xFFFFFFFF
    x ^= x >> 13
    return x & mask & ~(ways - 1)


@_jit
def _can_beat(hand: int, best: int, led: int, trump: int) -> bool:
    """Whether ``hand`` holds a legal card that beats ``best`` in a trick led in suit ``led``."""
    follow = (hand >> (13 * led)) & SUIT13
    bs = best // 13
    if follow:
        if bs != led:
            return False  # the trick is ruffed and this hand must follow
        return (follow >> (best % 13 + 1)) != 0
    if trump == NO_TRUMP:
        return False
    trumps = (hand >> (13 * trump)) & SUIT13
    if not trumps:
        return False
    if bs != trump:
        return True
    return (trumps >> (best % 13 + 1)) != 0


@_jit
def _order_score(
    card: int,
    seat: int,
    tlen: int,
    led: int,
    win_card: int,
    win_seat: int,
    hands: np.ndarray,
    sides: np.ndarray,
    n: int,
    trump: int,
    inplay: int,
    best_move: int,
) -> int:
    """How promising ``card`` is for the seat to play (higher first), from the open hands."""
    if card == best_move:
        return 1000
    su = card // 13
    r = card % 13
    my_side = sides[seat]
    if tlen == 0:
        # a lead: does an opponent beat it, and can the partner win over the opponents?
        opp_beats = False
        for i in range(1, n):
            s = (seat + i) % n
            if sides[s] != my_side and _can_beat(hands[s], card, su, trump):
                opp_beats = True
                break
        if not opp_beats:
            return 70 + r + (5 if su == trump else 0)
        sc = 20 - r
        if n > 2:
            partner = (seat + 2) % n
            out = (inplay >> (13 * su)) & SUIT13
            top = 12
            while top >= 0 and not (out >> top) & 1:
                top -= 1
            if top >= 0 and (hands[partner] >> (13 * su + top)) & 1:
                sc = 45 - r  # low towards the partner's master
        if trump != NO_TRUMP and su != trump:
            nxt = (seat + 1) % n
            if not (hands[nxt] >> (13 * su)) & SUIT13 and (hands[nxt] >> (13 * trump)) & SUIT13:
                sc -= 15  # the next hand ruffs
        return sc
    partner_winning = sides[win_seat] == my_side
    beats = _beats(card, win_card, trump)
    later_opp_beats_card = False
    later_opp_beats_winner = False
    for i in range(1, n - tlen):
        s = (seat + i) % n
        if sides[s] != my_side:
            if _can_beat(hands[s], card if beats else win_card, led, trump):
                later_opp_beats_card = True
            if _can_beat(hands[s], win_card, led, trump):
                later_opp_beats_winner = True
    if partner_winning:
        if not later_opp_beats_winner:
            return (90 if su != trump else 70) - r  # the trick is ours: play low
        if beats and not later_opp_beats_card:
            return 60 - r
        return 50 - r
    if beats:
        if not later_opp_beats_card:
            return 80 - r  # cheapest sure winner
        return 55 - r
    if su == trump:
        return 10 - r
    return 50 - r


@_jit
def _search(
    hands: np.ndarray,
    sides: np.ndarray,
    trick: np.ndarray,
    tlen: int,
    leader: int,
    tnum: int,
    win_card: int,
    win_seat: int,
    target: int,
    ply: int,
    cfg: np.ndarray,
    rules: np.ndarray,
    table: np.ndarray,
    moves: np.ndarray,
    scores: np.ndarray,
    keybuf: np.ndarray,
    relevant: np.ndarray,
    stats: np.ndarray,
) -> bool:
    """Whether side 0 takes at least ``target`` of the counting tricks from here (current trick included).

    Also leaves in ``relevant[ply]`` the cards whose ranks the answer depended on: the answer holds for
    every position with the same suit lengths in each hand and those cards in the same hands.
    """
    n = cfg[C_N]
    trump = cfg[C_TRUMP]
    inplay = rules[tnum, R_STOCK]
    for s in range(n):
        inplay |= hands[s]
    for i in range(ply - tlen, ply):  # the cards of the current trick
        inplay |= 1 << trick[i]
    base = -1  # the position's table bucket (trick starts only)
    ways = cfg[C_WAYS]
    best_move = -1
    settled = 0
    lengths = 0
    meta = 0
    if tlen == 0:
        rem = rules[tnum, R_SUFFIX]
        relevant[ply] = 0
        if target <= 0:
            return True
        if target > rem:
            return False
        stats[S_NODES] += 1
        if tnum >= cfg[C_HORIZON]:
            relevant[ply] = inplay
            return estimate(hands, sides, n, trump, leader, inplay, rem) >= target
        settled = rules[tnum, R_SETTLED]
        if settled:
            quick, sure, quick_cards, sure_cards = _bounds(hands, sides, n, trump, leader, inplay)
            if sides[leader] == 0:
                if quick >= target:
                    relevant[ply] = quick_cards
                    return True
                if rem - sure < target:
                    relevant[ply] = sure_cards
                    return False
            else:
                if sure >= target:
                    relevant[ply] = sure_cards
                    return True
                if rem - quick < target:
                    relevant[ply] = quick_cards
                    return False
        key = keybuf[ply]
        lengths, meta = _table_key(hands, n, inplay, leader, tnum, settled, key)
        meta |= cfg[C_GEN] << 24
        base = _bucket(lengths, meta & 0xFFFFFF, settled, key, cfg[C_MASK], ways)
        for e in range(base, base + ways):
            if table[e, E_META] != meta or table[e, E_LENGTHS] != lengths:
                continue
            rel = table[e, E_RELEVANT]
            if not _same_holders(table, e, key, rel):
                continue
            data = table[e, E_DATA]
            bound = (data >> 1) & 31
            if (data & 1 and bound < target) or (not data & 1 and bound >= target):
                stats[S_TT_HITS] += 1
                relevant[ply] = _from_relative(rel, inplay) if settled else inplay
                return not data & 1
            if best_move < 0 and data >> 6:
                best_move = (data >> 6) - 1
                if settled:
                    best_move = _card_from_relative(best_move, inplay)
    seat = (leader + tlen) % n
    hand = hands[seat]
    legal = hand
    led = trick[ply - tlen] // 13 if tlen > 0 else -1
    if tlen > 0 and rules[tnum, R_FOLLOW]:
        follow = hand & (SUIT13 << (13 * led))
        if follow:
            legal = follow
    # one move per run of equivalent cards (the highest of the run), scored for the ordering
    count = 0
    for su in range(4):
        lg = (legal >> (13 * su)) & SUIT13
        if not lg:
            continue
        out = (inplay >> (13 * su)) & SUIT13
        prev_mine = False
        while out:  # the suit's cards still out, from the top
            r = _HIGH13[out]
            out ^= 1 << r
            if (lg >> r) & 1:
                if not prev_mine:
                    c = 13 * su + r
                    moves[ply, count] = c
                    scores[ply, count] = _order_score(
                        c, seat, tlen, led, win_card, win_seat, hands, sides, n, trump, inplay, best_move
                    )
                    count += 1
                prev_mine = True
            else:
                prev_mine = False
    for i in range(1, count):  # insertion sort, best score first
        c = moves[ply, i]
        sc = scores[ply, i]
        j = i - 1
        while j >= 0 and scores[ply, j] < sc:
            moves[ply, j + 1] = moves[ply, j]
            scores[ply, j + 1] = scores[ply, j]
            j -= 1
        moves[ply, j + 1] = c
        scores[ply, j + 1] = sc
    maximizing = sides[seat] == 0
    result = not maximizing
    cut_move = -1
    relev = 0  # union over the moves searched; only the cutting move's when one cuts
    for i in range(count):
        c = moves[ply, i]
        hands[seat] ^= 1 << c
        trick[ply] = c
        if tlen == 0 or _beats(c, win_card, trump):
            nw_card, nw_seat = c, seat
        else:
            nw_card, nw_seat = win_card, win_seat
        if tlen + 1 < n:
            ok = _search(
                hands, sides, trick, tlen + 1, leader, tnum, nw_card, nw_seat, target, ply + 1,
                cfg, rules, table, moves, scores, keybuf, relevant, stats,
            )  # fmt: skip
            child = relevant[ply + 1]
        else:
            dw = rules[tnum, R_DRAW_WIN]
            dl = rules[tnum, R_DRAW_LOSE]
            if dw >= 0:
                hands[nw_seat] |= 1 << dw
            if dl >= 0:
                hands[1 - nw_seat] |= 1 << dl
            won = 1 if rules[tnum, R_COUNTS] and sides[nw_seat] == 0 else 0
            # np.int64, not the literals 0 and -1: literal arguments would make numba compile a second
            # specialisation of this recursive kernel, and a cached kernel that calls another
            # specialisation of itself crashes (segfault) when a later process loads it from the cache.
            ok = _search(
                hands, sides, trick, _I0, nw_seat, tnum + 1, _I_NONE, _I_NONE, target - won, ply + 1,
                cfg, rules, table, moves, scores, keybuf, relevant, stats,
            )  # fmt: skip
            child = relevant[ply + 1]
            if dw >= 0:
                hands[nw_seat] ^= 1 << dw
            if dl >= 0:
                hands[1 - nw_seat] ^= 1 << dl
            # the winner's rank decided the trick when another card of its suit was played to it
            wsuit = nw_card // 13
            for j in range(ply - tlen, ply + 1):
                if trick[j] != nw_card and trick[j] // 13 == wsuit:
                    child |= 1 << nw_card
                    break
        hands[seat] ^= 1 << c
        if ok == maximizing:
            result = ok
            cut_move = c
            relev = child
            break
        relev |= child
    if base >= 0:
        relev = _close(relev, inplay, hands, n) if settled else inplay
        kind = 0 if result else 1  # lower bound (target reached) or upper bound (target - 1)
        bound = target if result else target - 1
        rel = _to_relative(relev) if settled and cfg[C_PARTITION] else ALL_CARDS
        move = cut_move if cut_move >= 0 else best_move
        if move >= 0 and settled:
            move = _card_to_relative(move, inplay)
        data = kind | (bound << 1) | ((move + 1) << 6)
        key = keybuf[ply]
        victim = -1
        for e in range(base, base + ways):
            if table[e, E_META] >> 24 != cfg[C_GEN]:
                if victim < 0:
                    victim = e
                continue
            if (
                table[e, E_META] == meta
                and table[e, E_LENGTHS] == lengths
                and table[e, E_RELEVANT] == rel
                and table[e, E_DATA] & 1 == kind
                and _same_holders(table, e, key, rel)
            ):
                victim = e  # the same set of positions: the new bound is the tighter one
                break
        if victim < 0:
            victim = base + (stats[S_STORES] & (ways - 1))
        stats[S_STORES] += 1
        table[victim, E_LENGTHS] = lengths
        table[victim, E_META] = meta
        for s in range(4):
            table[victim, E_KEY + s] = key[s]
        table[victim, E_RELEVANT] = rel
        table[victim, E_DATA] = data
    relevant[ply] = relev
    return result


# ------------------------------------------------------------------------------------------ positions
@dataclass(frozen=True)
class Position:
    """A card-play position with every hand open: the solver's own compact state.

    Seats are absolute. Each seat is on side 0 or side 1; tricks count for a side.

    Attributes:
        hands: every seat's hand (mask).  # (n,)
        sides: the side of each seat (0 or 1).  # (n,)
        trump: trump suit, or None.
        leader: seat that led (or leads) the current trick.
        trick: cards played to the current trick, from the leader on.
        trick_number: tricks completed in the deal (index of the current trick in the rule rows).
        counts: per trick of the deal, whether it counts for the result.  # (T,)
        follow: per trick of the deal, whether followers must follow suit.  # (T,)
        draws: per trick of the deal, ``(card to the winner, card to the loser)`` drawn after it, or
            ``(-1, -1)`` (German Whist phase 1; two players only).  # (T, 2)
    """

    hands: tuple[int, ...]
    sides: tuple[int, ...]
    trump: int | None
    leader: int
    trick: tuple[int, ...]
    trick_number: int
    counts: tuple[bool, ...]
    follow: tuple[bool, ...]
    draws: tuple[tuple[int, int], ...] = field(default=())

    @property
    def num_players(self) -> int:
        """Number of seats."""
        return len(self.hands)

    @property
    def to_act(self) -> int:
        """The seat to play next."""
        return (self.leader + len(self.trick)) % len(self.hands)

    @property
    def tricks_left(self) -> int:
        """Counting tricks from the current one to the end."""
        return sum(self.counts[self.trick_number :])

    def legal(self) -> int:
        """Legal cards of the seat to act (mask)."""
        hand = self.hands[self.to_act]
        if not self.trick or not self.follow[self.trick_number]:
            return hand
        return legal_cards(hand, self.trick[0] // NUM_RANKS)

    def __str__(self) -> str:
        from whist_env.cards import format_hand

        lines = [f"trump {'NT' if self.trump is None else 'CDHS'[self.trump]}, trick {self.trick_number + 1}"]
        for s, h in enumerate(self.hands):
            lines.append(f"  seat {s} (side {self.sides[s]}): {format_hand(h)}")
        if self.trick:
            lines.append("  trick: " + " ".join(card_str(c) for c in self.trick) + f" (led by {self.leader})")
        return "\n".join(lines)


def solved_games() -> tuple[str, ...]:
    """The registered games the solver covers (those whose spec has a ``search``)."""
    return tuple(g for g in game_ids() if get_spec(g).search is not None)


def game_rules(game_id: str, options: Mapping[str, Any] | None = None) -> tuple[Any, ...]:
    """``(sides, counts, follow)`` of a covered game (``counts``/``follow`` are per trick of the deal).

    Args:
        game_id: one of :func:`solved_games`.
        options: the game's options (German Whist's ``count_all_tricks`` and ``phase1_follow_suit``).

    Raises:
        ValueError: for a game the solver does not cover.
    """
    return _search_of(game_id).rules(options or {})


def _search_of(game_id: str) -> SearchSpec:
    search = get_spec(game_id).search
    if search is None:
        raise ValueError(
            f"the double-dummy solver covers {', '.join(solved_games())}; not {game_id!r} (its spec has no search:"
            " the solver needs two sides)"
        )
    return search


def check_standard_tricks(game: TrickGame | type[TrickGame]) -> None:
    """Refuse a game whose tricks are not won as RULES.md §0.5 says: the solver's kernels assume it.

    Raises:
        ValueError: naming the game and the hook it overrides.
    """
    if not game.standard_trick_winner:
        raise ValueError(
            f"{game.game_id}: the double-dummy solver assumes the highest trump, else the highest card of the "
            "led suit, wins a trick; this game overrides TrickGame.trick_winner (standard_trick_winner is False), "
            "so it cannot be solved; play it with another agent (PIMC is refused in a game without a search)"
        )


def position_from_state(game: TrickGame, state: State) -> Position:
    """The solver's position for a rules state in the card-play phase (the state is not changed).

    Raises:
        ValueError: when the game is not covered or the state is not in the card play.
    """
    check_standard_tricks(game)
    options = dict(game.config.__dict__) if hasattr(game.config, "__dict__") else {}
    search = _search_of(game.game_id)
    sides, counts, follow = search.rules(options)
    if state.phase != PHASE_PLAY:
        raise ValueError(f"{game.game_id}: the solver needs a card-play position; the state is in its {state.phase}")
    draws: tuple[tuple[int, int], ...] = ()
    if search.draws is not None and search.table_stock is not None:
        draws = search.draws(search.table_stock(state), state.trick_number)
    return Position(
        hands=tuple(state.hands),
        sides=sides,
        trump=state.trump,
        leader=state.leader if state.trick else state.to_act,
        trick=tuple(c for _, c in state.trick),
        trick_number=state.trick_number,
        counts=counts,
        follow=follow,
        draws=draws,
    )


# ------------------------------------------------------------------------------------------ the solver
@dataclass
class SolveResult:
    """What :meth:`Solver.solve` found.

    Attributes:
        value: counting tricks the side to move takes from here against best defence.
        card_values: the same for every legal card of the seat to act (equivalent cards share a value).
        nodes: trick-start positions searched.
    """

    value: int
    card_values: dict[int, int]
    nodes: int

    def best_cards(self) -> list[int]:
        """The legal cards of the best value, ascending."""
        return sorted(c for c, v in self.card_values.items() if v == self.value)


class Solver:
    """A double-dummy solver with its own transposition table (reused, never shared between threads).

    Args:
        tt_bits: the table has ``2 ** tt_bits`` entries (64 bytes each), in buckets of ``TT_WAYS``
            (at least one bucket).
        horizon: search only this many more tricks (from the position's current trick) and estimate the
            rest with :func:`estimate`; None searches to the end (exact).
        partition: let a table entry stand for every position that agrees on the cards its bound
            depended on (partition search); False keys entries by the exact position (slower; the tests
            compare the two).
    """

    def __init__(self, tt_bits: int = 18, horizon: int | None = None, partition: bool = True) -> None:
        size = 1 << tt_bits
        self.table = np.zeros((max(size, max(TT_WAYS.values())), E_COLS), dtype=np.int64)
        self.horizon = horizon
        self.partition = partition
        self._gen = 0
        self._moves = np.zeros((MAX_PLY, MAX_MOVES), dtype=np.int64)
        self._scores = np.zeros((MAX_PLY, MAX_MOVES), dtype=np.int64)
        self._keys = np.zeros((MAX_PLY, 4), dtype=np.int64)
        self._relevant = np.zeros(MAX_PLY, dtype=np.int64)
        self.stats = np.zeros(3, dtype=np.int64)

    # -- low level: the kernel's arrays for a position
    def _arrays(self, pos: Position) -> tuple[np.ndarray, ...]:
        n = pos.num_players
        if n > 4:
            raise ValueError("the double-dummy solver handles at most 4 seats")
        total = len(pos.counts)
        rules = np.zeros((total + 1, R_COLS), dtype=np.int64)
        draws = pos.draws or ((-1, -1),) * total
        for t in range(total):
            rules[t, R_COUNTS] = int(pos.counts[t])
            rules[t, R_FOLLOW] = int(pos.follow[t])
            rules[t, R_DRAW_WIN], rules[t, R_DRAW_LOSE] = draws[t]
        stock = 0
        suffix = 0
        settled = 1
        for t in range(total - 1, -1, -1):
            for c in draws[t]:
                if c >= 0:
                    stock |= 1 << c
                    settled = 0
            suffix += int(pos.counts[t])
            if not pos.counts[t]:
                settled = 0
            rules[t, R_STOCK] = stock
            rules[t, R_SUFFIX] = suffix
            rules[t, R_SETTLED] = settled
        rules[total, R_SETTLED] = 1
        self._gen += 1
        horizon = total + 1 if self.horizon is None else pos.trick_number + self.horizon
        cfg = np.array(
            [
                n,
                NO_TRUMP if pos.trump is None else pos.trump,
                horizon,
                self._gen,
                len(self.table) - 1,
                self.partition,
                TT_WAYS.get(n, TT_WAYS[4]),
            ],  # fmt: skip
            dtype=np.int64,
        )
        hands = np.zeros(4, dtype=np.int64)
        hands[:n] = pos.hands
        sides = np.zeros(4, dtype=np.int64)
        sides[:n] = pos.sides
        trick = np.zeros(MAX_PLY, dtype=np.int64)  # cards by ply: the current trick is trick[ply - tlen : ply]
        trick[: len(pos.trick)] = pos.trick
        return hands, sides, trick, cfg, rules

    def _test(self, arrays: tuple[np.ndarray, ...], pos: Position, target: int) -> bool:
        hands, sides, trick, cfg, rules = arrays
        tlen = len(pos.trick)
        hands[: pos.num_players] = pos.hands
        trick[:tlen] = pos.trick
        win_card, win_seat = -1, -1
        trump = int(cfg[C_TRUMP])
        for i, c in enumerate(pos.trick):
            if i == 0 or _beats(c, win_card, trump):
                win_card, win_seat = c, (pos.leader + i) % pos.num_players
        return bool(
            _search(
                hands, sides, trick, tlen, pos.leader, pos.trick_number, win_card, win_seat, target, tlen,
                cfg, rules, self.table, self._moves, self._scores, self._keys, self._relevant, self.stats,
            )
        )  # fmt: skip

    def _side0_value(self, arrays: tuple[np.ndarray, ...], pos: Position, guess: int) -> int:
        lo, hi = 0, pos.tricks_left
        g = guess
        while lo < hi:
            t = min(max(g, lo + 1), hi)
            if self._test(arrays, pos, t):
                lo, g = t, t + 1
            else:
                hi, g = t - 1, t - 1
        return lo

    def _guess(self, arrays: tuple[np.ndarray, ...], pos: Position) -> int:
        """A first guess at side 0's value (MTD(f) converges faster from a close guess)."""
        hands, sides, _, cfg, rules = arrays
        if pos.trick or not rules[pos.trick_number, R_SETTLED]:
            return pos.tricks_left // 2
        inplay = 0
        for h in pos.hands:
            inplay |= h
        hands[: pos.num_players] = pos.hands
        return int(estimate(hands, sides, pos.num_players, int(cfg[C_TRUMP]), pos.leader, inplay, pos.tricks_left))

    # -- public
    def value(self, pos: Position) -> int:
        """Counting tricks the side to move takes from ``pos`` against best defence."""
        arrays = self._arrays(pos)
        left = pos.tricks_left
        v0 = self._side0_value(arrays, pos, self._guess(arrays, pos))
        return v0 if pos.sides[pos.to_act] == 0 else left - v0

    def solve(self, pos: Position, cards: int | None = None) -> SolveResult:
        """The value of ``pos`` and of each legal card (or of the legal cards in the mask ``cards``)."""
        before = int(self.stats[S_NODES])
        seat = pos.to_act
        side = pos.sides[seat]
        legal = pos.legal()
        if cards is not None:
            legal &= cards
        if not legal:
            raise ValueError(f"seat {seat} has no legal card to solve in this position")
        arrays = self._arrays(pos)
        left = pos.tricks_left
        counts_now = pos.counts[pos.trick_number]
        n = pos.num_players
        # one search per run of equivalent cards
        inplay = 0
        for h in pos.hands:
            inplay |= h
        for c in pos.trick:
            inplay |= 1 << c
        for dw, dl in pos.draws[pos.trick_number :]:
            inplay |= (1 << dw if dw >= 0 else 0) | (1 << dl if dl >= 0 else 0)
        runs = _runs(legal, inplay)
        values: dict[int, int] = {}
        guess = left // 2
        trick_win = -1, -1
        for i, c in enumerate(pos.trick):
            if i == 0 or _beats(c, trick_win[1], int(arrays[3][C_TRUMP])):
                trick_win = ((pos.leader + i) % n, c)
        for run in runs:
            c = run[0]
            child_hands = list(pos.hands)
            child_hands[seat] ^= 1 << c
            trick = pos.trick + (c,)
            if len(trick) < n:
                child = Position(
                    tuple(child_hands), pos.sides, pos.trump, pos.leader, trick, pos.trick_number,
                    pos.counts, pos.follow, pos.draws,
                )  # fmt: skip
                v0 = self._side0_value(arrays, child, guess)
            else:
                w_seat, w_card = trick_win
                if not pos.trick or _beats(c, w_card, int(arrays[3][C_TRUMP])):
                    w_seat = seat
                won = int(counts_now and pos.sides[w_seat] == 0)
                draws = pos.draws[pos.trick_number] if pos.draws else (-1, -1)
                if draws[0] >= 0:
                    child_hands[w_seat] |= 1 << draws[0]
                if draws[1] >= 0:
                    child_hands[1 - w_seat] |= 1 << draws[1]
                child = Position(
                    tuple(child_hands), pos.sides, pos.trump, w_seat, (), pos.trick_number + 1,
                    pos.counts, pos.follow, pos.draws,
                )  # fmt: skip
                v0 = won + (self._side0_value(arrays, child, guess - won) if child.tricks_left else 0)
            guess = v0
            v = v0 if side == 0 else left - v0
            for card in run:
                values[card] = v
        best = max(values.values())
        return SolveResult(best, values, int(self.stats[S_NODES]) - before)


def _runs(legal: int, inplay: int) -> list[list[int]]:
    """The legal cards grouped into runs of equivalent cards (adjacent among ``inplay``), highest first."""
    runs: list[list[int]] = []
    for su in range(4):
        prev_mine = False
        for r in range(12, -1, -1):
            c = 13 * su + r
            if (inplay >> c) & 1:
                if (legal >> c) & 1:
                    if prev_mine:
                        runs[-1].append(c)
                    else:
                        runs.append([c])
                    prev_mine = True
                else:
                    prev_mine = False
    return runs


def solve(game: TrickGame, state: State, solver: Solver | None = None) -> SolveResult:
    """Solve a rules state double-dummy: the value for the side to move and of each legal card."""
    return (solver or Solver()).solve(position_from_state(game, state))
