"""The two-hand ending of :mod:`whist_env.agents.endgame`, compiled with numba: the same answers, faster.

:func:`solve` returns exactly what the plain :func:`whist_env.agents.endgame.solve` returns (the same
card, including its tie-breaking, and the same value); only the way there differs:

* the cards still in play are renumbered ``0..m-1`` in ascending card order, so a position is a bit mask
  of at most ``m`` bits (each card's owner never changes: the hands are known and nothing is drawn);
* the values of positions at trick starts are memoised in a flat array indexed by that mask and the
  leader, instead of an ``lru_cache`` keyed by the hands;
* the search is a loop over an explicit stack rather than recursion, so numba can cache the compiled
  code on disk (it does not reload self-recursive functions safely).

The search itself is the plain one move for move: the same representatives of equivalent cards, tried in
the same order, with the same cut-offs inside a position (which never change a value: every value the
memo holds is exact). This module imports numba; :mod:`whist_env.agents.endgame` imports it only when
numba is installed, on the first ending it solves.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numba import njit

NO_TRUMP = 4
# Columns of a stack frame (one per trick-start position being searched).
F_IN, F_LEADER, F_LEFT, F_LEADS, F_CARD, F_REPLIES, F_REPLY, F_BEST, F_WORST = range(9)
F_COLS = 9


def _jit(f: Callable[..., Any]) -> Callable[..., Any]:
    jitted: Callable[..., Any] = njit(cache=True)(f)
    return jitted


@_jit
def _count(x: int) -> int:
    n = 0
    while x:
        x &= x - 1
        n += 1
    return n


@_jit
def _lowest_index(x: int) -> int:
    i = 0
    while not (x >> i) & 1:
        i += 1
    return i


@_jit
def _representatives(choice: int, in_play: int, suit_of: np.ndarray) -> int:
    """One card (index) of each run of ``choice`` that no other card of ``in_play`` separates: the lowest.

    The plain ``representatives`` keeps a card unless the next lower card of its suit still in play is
    also in ``choice``; indices are in card order, so that card is the next lower index in play, if of
    the same suit.
    """
    out = 0
    rest = choice
    while rest:
        i = _lowest_index(rest)
        rest &= rest - 1
        j = i - 1
        while j >= 0 and not (in_play >> j) & 1:
            j -= 1
        if j >= 0 and suit_of[j] == suit_of[i] and (choice >> j) & 1:
            continue
        out |= 1 << i
    return out


@_jit
def _beats(card: int, best: int, suit_of: np.ndarray, trump: int) -> bool:
    # Indices are in card order, so within a suit the higher index is the higher card.
    if suit_of[card] == suit_of[best]:
        return card > best
    return suit_of[card] == trump


@_jit
def _legal(hand: int, suit: int, suit_mask: np.ndarray) -> int:
    follow = hand & suit_mask[suit]
    return follow if follow else hand


@_jit
def _push(stack: np.ndarray, sp: int, in_play: int, leader: int, own: np.ndarray, suit_of: np.ndarray) -> None:
    hand = in_play & own[leader]
    stack[sp, F_IN] = in_play
    stack[sp, F_LEADER] = leader
    stack[sp, F_LEFT] = _count(hand)
    stack[sp, F_LEADS] = _representatives(hand, in_play, suit_of)
    stack[sp, F_CARD] = -1
    stack[sp, F_REPLIES] = 0
    stack[sp, F_REPLY] = -1
    stack[sp, F_BEST] = -1
    stack[sp, F_WORST] = 0


@_jit
def _lead_value(
    in_play: int,
    leader: int,
    own: np.ndarray,
    suit_of: np.ndarray,
    suit_mask: np.ndarray,
    trump: int,
    m: int,
    memo: np.ndarray,
    stack: np.ndarray,
) -> int:
    """Tricks ``leader`` (0: me, 1: the opponent) takes from a trick start with the cards ``in_play``.

    The plain ``lead_value`` unrolled onto ``stack``: each frame tries the leader's cards (ascending),
    and for each the follower's replies (ascending), taking the value of each position after the trick
    from ``memo`` or searching it first in a new frame.
    """
    if not in_play & own[leader]:
        return 0
    found = memo[(leader << m) | in_play]
    if found >= 0:
        return found
    _push(stack, 0, in_play, leader, own, suit_of)
    sp = 1
    child = -1  # the value of the position the top frame is waiting for, once searched
    while True:
        f = sp - 1
        here = stack[f, F_IN]
        who = stack[f, F_LEADER]
        left = stack[f, F_LEFT]
        if child >= 0:
            c, d = stack[f, F_CARD], stack[f, F_REPLY]
            v = left - 1 - child if _beats(d, c, suit_of, trump) else 1 + child
            if v < stack[f, F_WORST]:
                stack[f, F_WORST] = v
                if v <= stack[f, F_BEST]:
                    stack[f, F_REPLIES] = 0
            child = -1
        pushed = False
        while True:
            if stack[f, F_CARD] >= 0 and stack[f, F_REPLIES] == 0:
                # every reply to this lead is tried (or cut off): it is worth its worst case
                if stack[f, F_WORST] > stack[f, F_BEST]:
                    stack[f, F_BEST] = stack[f, F_WORST]
                    if stack[f, F_BEST] == left:
                        stack[f, F_LEADS] = 0
                stack[f, F_CARD] = -1
            if stack[f, F_CARD] < 0:
                leads = stack[f, F_LEADS]
                if not leads:
                    break
                c = _lowest_index(leads)
                stack[f, F_LEADS] = leads & (leads - 1)
                stack[f, F_CARD] = c
                stack[f, F_WORST] = left
                follower = here & own[1 - who]
                stack[f, F_REPLIES] = _representatives(_legal(follower, suit_of[c], suit_mask), here, suit_of)
                continue
            c = stack[f, F_CARD]
            replies = stack[f, F_REPLIES]
            d = _lowest_index(replies)
            stack[f, F_REPLIES] = replies & (replies - 1)
            stack[f, F_REPLY] = d
            after = here & ~(1 << c) & ~(1 << d)
            won = _beats(d, c, suit_of, trump)
            nxt = 1 - who if won else who
            value = 0
            if after & own[nxt]:
                value = memo[(nxt << m) | after]
                if value < 0:
                    _push(stack, sp, after, nxt, own, suit_of)
                    sp += 1
                    pushed = True
                    break
            v = left - 1 - value if won else 1 + value
            if v < stack[f, F_WORST]:
                stack[f, F_WORST] = v
                if v <= stack[f, F_BEST]:
                    stack[f, F_REPLIES] = 0
        if pushed:
            continue
        best = stack[f, F_BEST]
        memo[(who << m) | here] = best
        sp -= 1
        if sp == 0:
            return best
        child = best


@_jit
def solve(mine: int, theirs: int, trump: int, led: int) -> tuple[int, int]:
    """The plain ``solve(mine, theirs, trump, led)`` (``trump`` -1 for none): the best card and its value.

    The memo has ``2 << m`` entries for ``m`` cards in play: the caller keeps ``m`` small (the heuristics'
    endings have at most 14; :func:`whist_env.agents.endgame.solve_fast` sends larger ones to the plain solve).
    """
    t = NO_TRUMP if trump < 0 else trump
    everything = mine | theirs
    if led >= 0:
        everything |= 1 << led
    cards = np.empty(52, dtype=np.int64)
    m = 0
    for c in range(52):
        if (everything >> c) & 1:
            cards[m] = c
            m += 1
    suit_of = np.empty(m, dtype=np.int64)
    suit_mask = np.zeros(5, dtype=np.int64)  # row NO_TRUMP stays empty
    own = np.zeros(2, dtype=np.int64)  # 0: my cards, 1: the opponent's (indices)
    led_i = -1
    for i in range(m):
        c = cards[i]
        suit_of[i] = c // 13
        suit_mask[c // 13] |= 1 << i
        if (mine >> c) & 1:
            own[0] |= 1 << i
        elif (theirs >> c) & 1:
            own[1] |= 1 << i
        else:
            led_i = i
    memo = np.full(2 << m, -1, dtype=np.int8)
    stack = np.zeros(((m + 1) // 2 + 2, F_COLS), dtype=np.int64)
    full = (1 << m) - 1
    best_card, best = -1, -1
    if led_i < 0:
        size = _count(own[0])
        leads = _representatives(own[0], full, suit_of)
        while leads:
            c = _lowest_index(leads)
            leads &= leads - 1
            worst = size
            replies = _representatives(_legal(own[1], suit_of[c], suit_mask), full, suit_of)
            while replies:
                d = _lowest_index(replies)
                replies &= replies - 1
                after = full & ~(1 << c) & ~(1 << d)
                if _beats(d, c, suit_of, t):
                    v = size - 1 - _lead_value(after, 1, own, suit_of, suit_mask, t, m, memo, stack)
                else:
                    v = 1 + _lead_value(after, 0, own, suit_of, suit_mask, t, m, memo, stack)
                if v < worst:
                    worst = v
            if worst > best:
                best_card, best = cards[c], worst
        return best_card, best
    remaining = _count(own[0]) - 1
    replies = _representatives(_legal(own[0], suit_of[led_i], suit_mask), full, suit_of)
    while replies:
        d = _lowest_index(replies)
        replies &= replies - 1
        after = full & ~(1 << d) & ~(1 << led_i)
        if _beats(d, led_i, suit_of, t):
            v = 1 + _lead_value(after, 0, own, suit_of, suit_mask, t, m, memo, stack)
        else:
            v = remaining - _lead_value(after, 1, own, suit_of, suit_mask, t, m, memo, stack)
        if v > best:
            best_card, best = cards[d], v
    return best_card, best
