"""The heuristics' card-play reasoning in numba: the Table and the building blocks, twins of the Python ones.

:class:`whist_env.agents.cardplay.Table` and the building blocks of :mod:`whist_env.agents.heuristic` read a
:class:`~whist_env.view.PlayerView`. Here the same reasoning reads the plain quantities a view is made of (the
hand, what is known of each seat, the voids shown, the unseen cards, the current trick), so that each game's port
can compute them straight from the engine's state row and call the shared code inside one jitted loop.

A table is one ``int64`` array of :data:`TABLE_SIZE` entries, filled by :func:`fill_table`; the constants below
name its columns (per-seat blocks are :data:`~whist_env.vector.core.MAX_SEATS` wide, absolute seats). Card sets
are 52-bit masks as everywhere. The trump is a suit 0..3 or :data:`~whist_env.vector.core.NO_TRUMP` (4) for none,
as in the engine; :data:`SUIT_MASK` has an empty row 4, so "the trump suit's cards" needs no special case.

Every function makes the decision its Python twin makes, tie-breaks included (the twins take the first minimum
or maximum over cards in ascending order; so do these). ``tests/vector/heuristics/test_heuristic_table.py`` checks them
against the Python ones on random views of every game.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from whist_env.agents import endgame_jit
from whist_env.agents.endgame import ENDGAME_CARDS
from whist_env.vector.core import (
    HAND,
    LEADER,
    MAX_SEATS,
    NO_TRUMP,
    NTRICK,
    NUM_BITS,
    NUM_SEATS,
    SUIT_BITS,
    TO_ACT,
    TOP_RANK,
    TRICK,
    TRUMP,
    VOIDS,
    beats,
    card_count,
    jit,
)

if TYPE_CHECKING:
    from whist_env.view import PlayerView

JACK, ACE = 9, 12
# Per suit its 13 cards; row NO_TRUMP (4) is empty.
SUIT_MASK = np.array([SUIT_BITS << (13 * s) for s in range(4)] + [0], dtype=np.int64)

# Columns of a table.
T_ME = 0  # the seat to act
T_N = 1  # seats at the table
T_PARTNER = 2  # my partner's seat, -1 when none
T_TRUMP = 3  # trump suit, NO_TRUMP when none
T_LED = 4  # suit led to the current trick, -1 when leading
T_WINNER = 5  # seat winning the trick so far, -1 when leading
T_BEST = 6  # card winning the trick so far, -1 when leading
T_HAND = 7  # my hand
T_OUTSIDE = 8  # cards another seat may hold
T_ON_TABLE = 9  # cards played to the current trick
T_TRICK_LEN = 10  # cards in the current trick
T_LEAD_CARD = 11  # the card led to the current trick, -1 when leading
T_NUM_AFTER = 12  # seats still to play to this trick after me
T_AFTER = 13  # those seats, in play order (T_NUM_AFTER of them)
T_POSSIBLE = T_AFTER + MAX_SEATS  # per seat, the cards it may hold (exactly its hand when T_EXACT)
T_EXACT = T_POSSIBLE + MAX_SEATS  # per seat, 1 when T_POSSIBLE is exactly its hand
T_KNOWN = T_EXACT + MAX_SEATS  # per seat, the cards known to be in its hand
TABLE_SIZE = T_KNOWN + MAX_SEATS
NO_RESTRICT = -1  # a seat's entry of ``restrict`` when the unseen cards are its pool


# ------------------------------------------------------------------------------------------ card sets
@jit
def lowest(mask: int) -> int:
    """The lowest card of a non-empty mask."""
    return card_count((mask & -mask) - 1)


@jit
def highest(mask: int) -> int:
    """The highest card of a non-empty mask."""
    for s in range(3, -1, -1):
        bits = (mask >> (13 * s)) & SUIT_BITS
        if bits:
            return 13 * s + TOP_RANK[bits]
    return -1


@jit
def above(card: int) -> int:
    """The cards of ``card``'s suit ranking above it."""
    return SUIT_MASK[card // 13] & ~((2 << card) - 1)


@jit
def suit_length(hand: int, suit: int) -> int:
    """Number of cards of ``suit`` in ``hand``."""
    return NUM_BITS[(hand >> (13 * suit)) & SUIT_BITS]


@jit
def suits_cards(suit_bits: int) -> int:
    """Every card of the suits set in a 4-bit suit set."""
    m = 0
    for s in range(4):
        if (suit_bits >> s) & 1:
            m |= SUIT_MASK[s]
    return m


# ------------------------------------------------------------------------------------------ the table
def new_table() -> np.ndarray:
    """An empty table, for :func:`fill_table` (allocate once per batch, refill per decision)."""
    return np.zeros(TABLE_SIZE, dtype=np.int64)


@jit
def fill_table(
    tb: np.ndarray,
    hand: int,
    known: np.ndarray,
    voids: np.ndarray,
    unseen: int,
    trick_seats: np.ndarray,
    trick_cards: np.ndarray,
    trick_len: int,
    trump: int,
    n: int,
    me: int,
    partner: int,
    restrict: np.ndarray,
) -> None:
    """Read the view of ``me``, the seat to act in the play phase, into ``tb`` (the Python ``Table(view, ...)``).

    Args:
        tb: the table to fill (:data:`TABLE_SIZE` entries).
        hand: my hand (``view.hand``).
        known: per seat, the cards known to be in its hand (``view.known``; at least ``n`` entries).
        voids: per seat, the 4-bit set of suits it showed out of (``view.voids``).
        unseen: the cards I cannot place (``view.unseen``).
        trick_seats: the seats that played to the current trick, in play order (first ``trick_len`` entries).
        trick_cards: their cards.
        trick_len: cards in the current trick.
        trump: trump suit, or NO_TRUMP.
        n: seats at the table.
        me: the seat to act.
        partner: my partner's seat, or -1.
        restrict: per seat, the cards my memory says it may hold (replacing ``unseen`` as its pool), or
            :data:`NO_RESTRICT`.
    """
    tb[T_ME] = me
    tb[T_N] = n
    tb[T_PARTNER] = partner
    tb[T_TRUMP] = trump
    tb[T_HAND] = hand
    tb[T_TRICK_LEN] = trick_len
    in_trick = 0
    on_table = 0
    if trick_len > 0:
        win_seat, best = trick_seats[0], trick_cards[0]
        for i in range(1, trick_len):
            if beats(trick_cards[i], best, trump):
                win_seat, best = trick_seats[i], trick_cards[i]
        tb[T_LED] = trick_cards[0] // 13
        tb[T_WINNER] = win_seat
        tb[T_BEST] = best
        tb[T_LEAD_CARD] = trick_cards[0]
        for i in range(trick_len):
            in_trick |= 1 << trick_seats[i]
            on_table |= 1 << trick_cards[i]
    else:
        tb[T_LED] = -1
        tb[T_WINNER] = -1
        tb[T_BEST] = -1
        tb[T_LEAD_CARD] = -1
    tb[T_ON_TABLE] = on_table
    num_after = 0
    for i in range(1, n):
        s = (me + i) % n
        if not (in_trick >> s) & 1:
            tb[T_AFTER + num_after] = s
            num_after += 1
    tb[T_NUM_AFTER] = num_after
    size = card_count(hand)
    outside = 0
    for s in range(n):
        tb[T_KNOWN + s] = known[s]
        if s == me:
            tb[T_POSSIBLE + s] = hand
            tb[T_EXACT + s] = 1
            continue
        k = known[s]
        # Every seat holds as many cards as I do at the start of a trick (true in every game here).
        hand_size = size - ((in_trick >> s) & 1)
        if card_count(k) >= hand_size:
            poss = k
            exact = 1
        else:
            pool = restrict[s] if restrict[s] != NO_RESTRICT else unseen
            poss = k | (pool & ~suits_cards(voids[s]) & ~hand)
            exact = 1 if card_count(poss) == hand_size else 0
        tb[T_POSSIBLE + s] = poss
        tb[T_EXACT + s] = exact
        outside |= poss
    tb[T_OUTSIDE] = outside


def view_table(view: PlayerView, partner: int = -1, restrict: Mapping[int, int] | None = None) -> np.ndarray:
    """The table of a view of the seat to act: what ``Table(view, partner, restrict)`` reads, for tests and tools.

    Args:
        view: the view of the seat to act, in the play phase.
        partner: my partner's seat, or -1.
        restrict: per seat, the cards my memory says it may hold (as the Python ``Table`` takes it).
    """
    n = view.num_players
    seats = np.zeros(MAX_SEATS, dtype=np.int64)
    cards = np.zeros(MAX_SEATS, dtype=np.int64)
    for i, (s, c) in enumerate(view.trick):
        seats[i], cards[i] = s, c
    pools = np.full(MAX_SEATS, NO_RESTRICT, dtype=np.int64)
    for s, pool in (restrict or {}).items():
        pools[s] = pool
    tb = new_table()
    fill_table(
        tb,
        view.hand,
        np.array(view.known, dtype=np.int64),
        np.array(view.voids, dtype=np.int64),
        view.unseen,
        seats,
        cards,
        len(view.trick),
        NO_TRUMP if view.trump is None else view.trump,
        n,
        view.seat,
        partner,
        pools,
    )
    return tb


# Rows of a work array (:func:`new_work`): the trick's seats and cards, no voids shown, no restriction.
W_SEATS, W_CARDS, W_NO_VOIDS, W_NO_RESTRICT = range(4)


@jit
def new_work() -> np.ndarray:
    """The scratch :func:`fill_table_row` needs (allocate once per batch).  # (4, MAX_SEATS)"""
    work = np.zeros((4, MAX_SEATS), np.int64)
    work[W_NO_RESTRICT, :] = NO_RESTRICT
    return work


@jit
def fill_table_row(
    tb: np.ndarray,
    st: np.ndarray,
    known: np.ndarray,
    unseen: int,
    recall: bool,
    partner: int,
    restrict: np.ndarray,
    work: np.ndarray,
) -> None:
    """:func:`fill_table` for the seat to act in the engine's state row ``st``: its hand, the voids shown (with
    ``recall``), the current trick in play order from the leader, the trump and the number of seats come from the
    row; ``known`` and ``unseen`` are what the game's view rules let that seat know (the game computes them).

    Args:
        tb: the table to fill.
        st: the state row of one environment (in the play phase).
        known: per seat, the cards the seat to act knows to be in that hand.
        unseen: the cards it cannot place.
        recall: whether it remembers the cards played (else no void is shown).
        partner: its partner's seat, or -1.
        restrict: per seat, a pool replacing ``unseen`` (``work[W_NO_RESTRICT]`` for none).
        work: scratch from :func:`new_work`.
    """
    n = st[NUM_SEATS]
    me = st[TO_ACT]
    leader = st[LEADER]
    size = st[NTRICK]
    for i in range(size):
        s = (leader + i) % n
        work[W_SEATS, i] = s
        work[W_CARDS, i] = st[TRICK + s]
    voids = st[VOIDS : VOIDS + MAX_SEATS] if recall else work[W_NO_VOIDS]
    fill_table(
        tb, st[HAND + me], known, voids, unseen, work[W_SEATS], work[W_CARDS], size, st[TRUMP], n, me, partner, restrict
    )


@jit
def is_opponent(tb: np.ndarray, seat: int) -> bool:
    """Whether ``seat`` is neither me nor my partner."""
    return seat != tb[T_ME] and seat != tb[T_PARTNER]


@jit
def may_be_void(tb: np.ndarray, seat: int, suit: int) -> bool:
    """Whether ``seat`` is (or is likely to be) out of ``suit`` (``Table.may_be_void``)."""
    sm = SUIT_MASK[suit]
    if not tb[T_POSSIBLE + seat] & sm:
        return True
    if tb[T_EXACT + seat] or tb[T_KNOWN + seat] & sm:
        return False
    holders = 0
    for s in range(tb[T_N]):
        if s != tb[T_ME] and tb[T_POSSIBLE + s] & sm:
            holders += 1
    return card_count(tb[T_OUTSIDE] & sm) <= holders - 1 + (1 if holders == 1 else 0)


@jit
def may_trump(tb: np.ndarray, seat: int, suit: int) -> bool:
    """Whether ``seat`` may be void in ``suit`` and hold a trump (``Table.may_trump``)."""
    t = tb[T_TRUMP]
    if t == NO_TRUMP or t == suit:
        return False
    return (tb[T_POSSIBLE + seat] & SUIT_MASK[t]) != 0 and may_be_void(tb, seat, suit)


@jit
def can_beat(tb: np.ndarray, seat: int, best: int, led: int) -> bool:
    """Whether ``seat``, still to play to a trick led in ``led`` now won by ``best``, may beat it."""
    if best // 13 == led:
        if tb[T_POSSIBLE + seat] & above(best):
            return True
        return may_trump(tb, seat, led)
    return (tb[T_POSSIBLE + seat] & above(best)) != 0 and may_be_void(tb, seat, led)


@jit
def wins_now(tb: np.ndarray, card: int) -> bool:
    """Whether ``card`` would be winning the trick right after I play it."""
    return tb[T_BEST] < 0 or beats(card, tb[T_BEST], tb[T_TRUMP])


@jit
def safe_against(tb: np.ndarray, card: int) -> bool:
    """Whether a trick won by ``card`` (now or already) can no longer be taken by an opponent still to play."""
    led = tb[T_LED] if tb[T_LED] >= 0 else card // 13
    for i in range(tb[T_NUM_AFTER]):
        s = tb[T_AFTER + i]
        if s != tb[T_PARTNER] and can_beat(tb, s, card, led):
            return False
    return True


@jit
def holds(tb: np.ndarray, card: int) -> bool:
    """Whether ``card`` played now wins the trick against every opponent still to play (``Table.holds``)."""
    return wins_now(tb, card) and safe_against(tb, card)


@jit
def is_master(tb: np.ndarray, card: int) -> bool:
    """Whether no other seat may hold a higher card of ``card``'s suit."""
    return not tb[T_OUTSIDE] & above(card)


@jit
def opponents_trumps(tb: np.ndarray) -> int:
    """Trumps that opponents (not my partner) may hold."""
    m = 0
    for s in range(tb[T_N]):
        if is_opponent(tb, s):
            m |= tb[T_POSSIBLE + s]
    return m & SUIT_MASK[tb[T_TRUMP]]


@jit
def lowest_equal(tb: np.ndarray, card: int) -> int:
    """The lowest card of my hand worth as much as ``card``: no card another seat may hold lies between."""
    hand = tb[T_HAND]
    barrier = tb[T_OUTSIDE] | tb[T_ON_TABLE]
    best = c = card
    while c % 13:
        c -= 1
        if (barrier >> c) & 1:
            break
        if (hand >> c) & 1:
            best = c
    return best


# ------------------------------------------------------------------------------------------ building blocks
@jit
def discard(tb: np.ndarray, legal: int) -> int:
    """A card to throw: a low side-suit card that is not a master, from a short suit (``heuristic.discard``)."""
    hand = tb[T_HAND]
    trump = tb[T_TRUMP]
    best_card, best_key = -1, 1 << 30
    rest = legal
    while rest:
        c = lowest(rest)
        rest &= rest - 1
        s = c // 13
        key = (((1 if s == trump else 0) * 2 + (1 if is_master(tb, c) else 0)) * 13 + c % 13) * 14
        key += suit_length(hand, s)
        if key < best_key:
            best_card, best_key = c, key
    return best_card


@jit
def cheapest_winner(tb: np.ndarray, choice: int) -> int:
    """The cheapest card of ``choice`` (all of which win the trick now): side cards before trumps."""
    side = choice & ~SUIT_MASK[tb[T_TRUMP]]
    return lowest_equal(tb, lowest(side if side else choice))


@jit
def winners(tb: np.ndarray, legal: int, sure: bool) -> int:
    """Legal cards that win the trick now (and, if ``sure``, against every opponent still to play)."""
    m = 0
    rest = legal
    while rest:
        c = lowest(rest)
        rest &= rest - 1
        if holds(tb, c) if sure else wins_now(tb, c):
            m |= 1 << c
    return m


@jit
def long_suit_lead(tb: np.ndarray, legal: int, avoid_trump: bool) -> int:
    """Lead from the longest strong suit: the top of a sequence headed by an honour, else the lowest card."""
    trump = tb[T_TRUMP]
    best_suit, best_key = -1, -1
    for s in range(4):
        held = legal & SUIT_MASK[s]
        if not held:
            continue
        length = card_count(held)
        honours = card_count(held & (SUIT_MASK[s] & ~((1 << (13 * s + JACK)) - 1)))
        ruffed = False
        for o in range(tb[T_N]):
            if is_opponent(tb, o) and may_trump(tb, o, s) and not tb[T_POSSIBLE + o] & SUIT_MASK[s]:
                ruffed = True
                break
        key = ((0 if (avoid_trump and s == trump) else 1) * 2 + (0 if ruffed else 1)) * 64 + 2 * length + honours
        if key > best_key:
            best_suit, best_key = s, key
    held = legal & SUIT_MASK[best_suit]
    top = highest(held)
    second = highest(held & ~(1 << top)) if card_count(held) > 1 else -1
    if top % 13 >= 8 and second >= 0 and lowest_equal(tb, top) <= second:
        return top  # top of a sequence (K Q, Q J, ...): forces out a higher card, or wins
    if is_master(tb, top) and holds(tb, top):
        return top
    return lowest(held)


@jit
def longest_suit_max(hand: int, cards: int) -> int:
    """The card of ``cards`` in my longest suit, the highest such (``max`` by ``(suit_length, card)``)."""
    best_card, best_len = -1, -1
    rest = cards
    while rest:
        c = lowest(rest)
        rest &= rest - 1
        length = suit_length(hand, c // 13)
        if length >= best_len:  # ascending cards: a later equal length is a higher card
            best_card, best_len = c, length
    return best_card


@jit
def lead_to_win(tb: np.ndarray, legal: int, draw_trumps_from: int) -> int:
    """Lead to take tricks: draw trumps when long in them, cash sure winners, else lead from a long suit."""
    hand = tb[T_HAND]
    sure = winners(tb, legal, True)
    trump = tb[T_TRUMP]
    if trump != NO_TRUMP:
        mine = hand & SUIT_MASK[trump]
        theirs = opponents_trumps(tb)
        if mine and theirs:
            n_mine, n_theirs = card_count(mine), card_count(theirs)
            if n_mine >= draw_trumps_from or n_mine > n_theirs:
                top = sure & mine
                if top:
                    return highest(top)
                if n_mine >= draw_trumps_from + 1:
                    return long_suit_lead(tb, mine, False)
    side = sure & ~SUIT_MASK[trump]
    if side:
        return longest_suit_max(hand, side)
    if sure and not opponents_trumps(tb):
        return highest(sure)
    return long_suit_lead(tb, legal, True)


@jit
def low_card(tb: np.ndarray, legal: int) -> int:
    """The lowest card of the led suit, or a discard when unable to follow."""
    follow = legal & SUIT_MASK[tb[T_LED]] if tb[T_LED] >= 0 else 0
    if follow:
        return lowest(follow)
    return discard(tb, legal)


@jit
def follow_to_win(tb: np.ndarray, legal: int, eager: bool) -> int:
    """Follow to take the trick as cheaply as is safe; otherwise play low (``heuristic.follow_to_win``)."""
    partner = tb[T_PARTNER]
    if tb[T_WINNER] == partner and partner >= 0 and safe_against(tb, tb[T_BEST]):
        return low_card(tb, legal)  # do not overtake a partner's winning card
    sure = winners(tb, legal, True)
    if sure:
        return cheapest_winner(tb, sure)
    now = winners(tb, legal, False)
    num_after = tb[T_NUM_AFTER]
    if now and (eager or num_after == 0):
        if num_after == 0:
            return cheapest_winner(tb, now)
        in_led = now & SUIT_MASK[tb[T_LED]]
        return lowest_equal(tb, highest(in_led) if in_led else lowest(now))
    return low_card(tb, legal)


@jit
def two_player_lead(tb: np.ndarray, legal: int) -> int:
    """Lead against one opponent, who plays last and so wins whenever it can (``heuristic.two_player_lead``)."""
    hand = tb[T_HAND]
    sure = winners(tb, legal, True)
    trump = tb[T_TRUMP]
    theirs = tb[T_POSSIBLE + 1 - tb[T_ME]]
    trumps = SUIT_MASK[trump]
    if trump != NO_TRUMP:
        mine_t = hand & trumps
        theirs_t = theirs & trumps
        if mine_t & sure and theirs_t and card_count(mine_t) >= card_count(theirs_t):
            return highest(mine_t & sure)
    side = sure & ~trumps
    if side:
        return longest_suit_max(hand, side)
    if sure and not theirs & trumps:
        return highest(sure)
    best_card, best = -1, -1.0
    rest = legal
    while rest:
        c = lowest(rest)
        rest &= rest - 1
        suit = c // 13
        in_suit = theirs & SUIT_MASK[suit]
        higher = in_suit & ~((2 << c) - 1)
        if higher:
            p = (lowest(higher) % 13) - 0.5 * (c % 13)
        elif not in_suit and trump != NO_TRUMP and suit != trump and theirs & trumps:
            p = float(lowest(theirs & trumps) % 13 + 13 - c % 13)
        else:
            p = 100.0  # it cannot win it
        if best_card < 0 or p > best:
            best_card, best = c, p
    return lowest_equal(tb, best_card)


@jit
def two_player_play(tb: np.ndarray, legal: int) -> int:
    """Card play for two players: exact once the opponent's hand is known and short, else by rule of thumb."""
    opp = 1 - tb[T_ME]
    if tb[T_EXACT + opp] and card_count(tb[T_HAND]) <= ENDGAME_CARDS:
        card, _ = endgame_jit.solve(tb[T_HAND], tb[T_POSSIBLE + opp], tb[T_TRUMP], tb[T_LEAD_CARD])
        if card >= 0 and (legal >> card) & 1:
            return card
    if tb[T_TRICK_LEN] == 0:
        return two_player_lead(tb, legal)
    return follow_to_win(tb, legal, False)
