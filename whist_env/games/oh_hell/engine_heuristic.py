"""The Oh Hell heuristic (:class:`whist_env.games.oh_hell.heuristic.OhHellHeuristic`) on the engine's rows.

The bid is the legal bid nearest to the hand's calibrated trick estimate: the same float operations, in the same
order, as :func:`whist_env.games.oh_hell.heuristic.expected_tricks` and ``calibrated_tricks`` (powers through
``math.pow`` with a float exponent, C's ``pow`` as Python's ``float ** int`` calls it: numba's ``**`` with an integer
exponent multiplies, which can differ in the last bit), so that the bids come out the same. The card play reads the
seat's view (what :func:`whist_env.games.oh_hell.engine.seat_knowledge` says it knows, the voids shown with recall, the
trick) into a table and plays to the bid as the Python agent does: take tricks while short of it, duck once it is made.
"""

from __future__ import annotations

import math

import numpy as np

from whist_env.games.oh_hell.engine import BIDS, CFG_PER_TRICK, CFG_RECALL, legal_bids, seat_knowledge
from whist_env.games.oh_hell.rules import BID_BASE
from whist_env.rules.core import PHASE_BIDDING, PHASE_PLAY
from whist_env.vector.core import (
    HAND,
    MAX_SEATS,
    NO_TRUMP,
    NUM_SEATS,
    PHASE,
    TO_ACT,
    TRUMP,
    TURN_UP,
    WON,
    card_count,
    jit,
    legal_mask,
)
from whist_env.vector.heuristics.table import (
    SUIT_MASK,
    T_HAND,
    T_NUM_AFTER,
    T_OUTSIDE,
    T_TRICK_LEN,
    T_TRUMP,
    TABLE_SIZE,
    W_NO_RESTRICT,
    above,
    cheapest_winner,
    fill_table_row,
    highest,
    lead_to_win,
    low_card,
    lowest,
    lowest_equal,
    new_work,
    winners,
)

QUEEN = 10
# Queens, kings and aces of every suit: a trick is worth taking now with one of them (``rank(c) >= 10``).
HIGH_CARDS = sum(((1 << 13) - (1 << QUEEN)) << (13 * s) for s in range(4))


# ------------------------------------------------------------------------------------------ bidding
@jit
def expected_tricks(hand: int, num_players: int, trump: int, placed: int) -> float:
    """``oh_hell.expected_tricks`` (``trump`` NO_TRUMP for none; ``placed`` a mask), float for float."""
    k = card_count(hand)
    unplaced = 52 - k - card_count(placed)
    q = min(1.0, (num_players - 1) * k / unplaced) if unplaced else 0.0
    total = 0.0
    for s in range(4):
        mine = hand & SUIT_MASK[s]
        length = card_count(mine)
        j = 0
        while mine:  # highest card first, as ``reversed(cards_of(...))``
            c = highest(mine)
            mine &= ~(1 << c)
            h = card_count(above(c) & ~hand & ~placed)
            p = math.pow(1 - q, float(h))
            if h and length - j > 1:
                p += (1 - p) * (0.45 if h <= j + 1 else 0.15) * math.pow(0.6, float(max(0, h - j - 1)))
            if trump != NO_TRUMP and s != trump:
                p *= math.pow(0.85, float(j))  # later rounds of a side suit get ruffed
            elif trump == NO_TRUMP and j >= 3:
                p = max(p, 0.25 * (length - 3) * (1 - q))  # long-suit small cards in no-trump
            total += p
            j += 1
    if trump != NO_TRUMP:
        n_trumps = card_count(hand & SUIT_MASK[trump])
        short = 0
        for s in range(4):
            if s != trump and card_count(hand & SUIT_MASK[s]) <= 1:
                short += 1
        total += 0.35 * max(0, n_trumps - 2) + 0.3 * min(short, max(0, n_trumps - 1))
    return min(total, float(k))


@jit
def calibrated_tricks(raw: float, hand_size: int, num_players: int, has_trump: bool) -> float:
    """``oh_hell.calibrated_tricks``: the raw estimate corrected towards the fair share ``k / n``."""
    share = hand_size / num_players
    est = 0.83 * raw + 0.4 * share + (0.025 * share - 0.11) * (1 if has_trump else 0) - 0.44
    return min(max(est, 0.0), float(hand_size))


@jit
def choose_bid(estimate: float, bids: int) -> int:
    """``oh_hell.choose_bid`` over the legal bids as a mask: the nearest, the lower one on ties."""
    best, best_gap = -1, 0.0
    for b in range(27):
        if (bids >> b) & 1:
            gap = abs(b - estimate + 0.05)
            if best < 0 or gap < best_gap:  # ascending bids: an equal gap keeps the lower bid
                best, best_gap = b, gap
    return best


@jit
def bid(st: np.ndarray) -> int:
    """The bid action (``OhHellHeuristic.decide``) of the seat to act in the bidding row ``st``."""
    hand = st[HAND + st[TO_ACT]]
    trump = st[TRUMP]
    placed = 1 << st[TURN_UP] if st[TURN_UP] >= 0 else 0
    raw = expected_tricks(hand, st[NUM_SEATS], trump, placed)
    est = calibrated_tricks(raw, card_count(hand), st[NUM_SEATS], trump != NO_TRUMP)
    return BID_BASE + choose_bid(est, legal_bids(st))


# ------------------------------------------------------------------------------------------ card play
@jit
def take(tb: np.ndarray, legal: int, every: bool) -> int:
    """Play to win tricks (``OhHellHeuristic.take``); ``every``: every remaining trick is needed."""
    if tb[T_TRICK_LEN] == 0:
        if every:
            return lead_to_win(tb, legal, 1)
        sure = winners(tb, legal, True)
        if sure:
            return cheapest_winner(tb, sure)
        return lead_to_win(tb, legal, 4)
    sure = winners(tb, legal, True)
    if sure:
        return cheapest_winner(tb, sure)
    now = winners(tb, legal, False)
    if now:
        if tb[T_NUM_AFTER] == 0:
            return cheapest_winner(tb, now)
        if every or now & HIGH_CARDS:
            return lowest_equal(tb, highest(now))
    return low_card(tb, legal)  # ``lowest_loser``


@jit
def duck(tb: np.ndarray, legal: int) -> int:
    """Avoid taking a trick (``OhHellHeuristic.duck``)."""
    trump = tb[T_TRUMP]
    if tb[T_TRICK_LEN] == 0:
        # The card most likely to lose: not a trump, the most higher cards out, then the lowest rank (first minimum).
        best_card, best_key = -1, 1 << 30
        rest = legal
        while rest:
            c = lowest(rest)
            rest &= rest - 1
            key = ((1 if c // 13 == trump else 0) * 13 + 12 - card_count(tb[T_OUTSIDE] & above(c))) * 13 + c % 13
            if key < best_key:
                best_card, best_key = c, key
        return best_card
    win = winners(tb, legal, False)
    lose = legal & ~win
    if lose:
        # Shed the most dangerous card that still loses: trumps first, then the highest rank (first maximum).
        best_card, best_key = -1, -1
        rest = lose
        while rest:
            c = lowest(rest)
            rest &= rest - 1
            key = (1 if c // 13 == trump else 0) * 13 + c % 13
            if key > best_key:
                best_card, best_key = c, key
        return best_card
    if tb[T_NUM_AFTER] == 0:
        return highest(win)  # the trick is mine anyway: get rid of the biggest card
    return cheapest_winner(tb, win)


@jit
def play(tb: np.ndarray, legal: int, need: int, per_trick: bool) -> int:
    """The card to play (``OhHellHeuristic.play``): ``need`` tricks still to take for the bid (< 0: missed)."""
    if need > 0 or (need < 0 and per_trick):
        return take(tb, legal, need >= card_count(tb[T_HAND]) or need < 0)
    return duck(tb, legal)


@jit
def act_row(st: np.ndarray, cfg: np.ndarray, tb: np.ndarray, known: np.ndarray, work: np.ndarray) -> int:
    """The heuristic's action for the seat to act in the state row ``st`` (-1 where the episode is over)."""
    phase = st[PHASE]
    if phase == PHASE_BIDDING:
        return bid(st)
    if phase != PHASE_PLAY:
        return -1
    recall = cfg[CFG_RECALL] != 0
    me = st[TO_ACT]
    unseen = seat_knowledge(st, recall, me, known)
    fill_table_row(tb, st, known, unseen, recall, -1, work[W_NO_RESTRICT], work)
    return play(tb, legal_mask(st), st[BIDS + me] - st[WON + me], cfg[CFG_PER_TRICK] != 0)


# What the per-row functions above take besides the act loop's own arguments (whist_env/vector/template.py).
LOOP_ARGS = {"act_scratch": ""}


# --- begin generated: act loop (whist_env/vector/template.py; python -m whist_env.vector.template --write) ---
@jit
def act_kernel(state: np.ndarray, cfg: np.ndarray, envs: np.ndarray, out: np.ndarray) -> None:
    """The heuristic's action for the seat to act in each environment ``envs[j]`` into ``out[j]`` (-1 where the
    episode is over)."""
    tb = np.zeros(TABLE_SIZE, np.int64)
    known = np.zeros(MAX_SEATS, np.int64)
    work = new_work()
    for j in range(envs.shape[0]):
        out[j] = act_row(state[envs[j]], cfg, tb, known, work)


# --- end generated: act loop ---
