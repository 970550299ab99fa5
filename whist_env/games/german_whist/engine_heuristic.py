"""The German Whist heuristic (:class:`whist_env.games.german_whist.heuristic.GermanWhistHeuristic`) on
the engine's rows.

Each decision reads the seat to act's view from its state row (what :func:`whist_env.games.german_whist.engine.
seat_knowledge` says it knows: its hand, the opponent's face-up prizes it still holds, the whole opponent hand once
the stock is empty with recall; the voids shown with recall; the trick) into a table. While the stock lasts it
weighs the face-up prize against the average unseen card the loser draws and buys good prizes cheaply or loses
cheaply; in stage 2 it plays the shared two-player play (:func:`whist_env.vector.heuristics.table.two_player_play`),
exact in a known ending.

The card values are the Python agent's own :func:`~whist_env.games.german_whist.heuristic.card_value` per rank
(side suit, trump), tabled at import, and the draw value sums them over the unseen cards in ascending order, as the
Python sum does: the floats, and so every comparison with the prize's gain, are the Python agent's.
"""

from __future__ import annotations

import numpy as np

from whist_env.games.german_whist.engine import CFG_FREE, CFG_RECALL, seat_knowledge
from whist_env.games.german_whist.heuristic import card_value as python_card_value
from whist_env.games.german_whist.rules import PHASE1_TRICKS
from whist_env.rules.core import PHASE_PLAY
from whist_env.vector.core import MAX_SEATS, PHASE, TO_ACT, TRICK_NO, TURN_UP, card_count, jit, legal_mask
from whist_env.vector.heuristics.table import (
    T_BEST,
    T_HAND,
    T_TRICK_LEN,
    T_TRUMP,
    TABLE_SIZE,
    W_NO_RESTRICT,
    cheapest_winner,
    fill_table_row,
    holds,
    lowest,
    lowest_equal,
    new_work,
    suit_length,
    two_player_play,
    winners,
)

# A card's worth for the scoring phase by rank, as a side-suit card and as a trump (the Python function's values).
SIDE_VALUE = np.array([python_card_value(r, None) for r in range(13)])
TRUMP_VALUE = np.array([python_card_value(r, 0) for r in range(13)])


@jit
def card_value(card: int, trump: int) -> float:
    """``german_whist.card_value`` (``trump`` NO_TRUMP for none, which is no card's suit)."""
    return TRUMP_VALUE[card % 13] if card // 13 == trump else SIDE_VALUE[card % 13]


@jit
def draw_value(pool: int, trump: int) -> float:
    """The average :func:`card_value` over ``pool`` (summed in ascending card order, as the Python sum), 0 if empty."""
    n = card_count(pool)
    if n == 0:
        return 0.0
    total = 0.0
    rest = pool
    while rest:
        total += card_value(lowest(rest), trump)
        rest &= rest - 1
    return total / n


@jit
def least_value_card(cards: int, trump: int) -> int:
    """The card of a non-empty set with the least :func:`card_value` (the lowest such: Python's first minimum)."""
    best_card, best = -1, 0.0
    rest = cards
    while rest:
        c = lowest(rest)
        rest &= rest - 1
        v = card_value(c, trump)
        if best_card < 0 or v < best:
            best_card, best = c, v
    return best_card


@jit
def least_valuable(tb: np.ndarray, legal: int) -> int:
    """The legal card worth least among those that lose the trick when one does (leading: one the opponent can
    beat); ties go to the card of the longer suit, then the lower card (``least_valuable(prefer_losing=True)``)."""
    trump = tb[T_TRUMP]
    if tb[T_BEST] >= 0:
        pool = legal & ~winners(tb, legal, False)
    else:
        pool = 0
        rest = legal
        while rest:
            c = lowest(rest)
            rest &= rest - 1
            if not holds(tb, c):
                pool |= 1 << c
    if not pool:
        pool = legal
    hand = tb[T_HAND]
    best_card, best, best_len = -1, 0.0, 0
    rest = pool
    while rest:
        c = lowest(rest)
        rest &= rest - 1
        v = card_value(c, trump)
        length = suit_length(hand, c // 13)
        if best_card < 0 or v < best or (v == best and length > best_len):  # min by (value, -suit length)
            best_card, best, best_len = c, v, length
    return best_card


@jit
def lead(tb: np.ndarray, legal: int, gain: float) -> int:
    """Lead a sure winner for a prize worth more than the winner (the cheapest such), else lose cheaply."""
    trump = tb[T_TRUMP]
    if gain > 0:
        sure = winners(tb, legal, True)
        if sure:
            card = lowest_equal(tb, least_value_card(sure, trump))
            # a sure winner keeps its worth for phase 2 too: spend it only for a prize worth more
            if card_value(card, trump) <= gain + 0.35:
                return card
    return least_valuable(tb, legal)


@jit
def follow(tb: np.ndarray, legal: int, gain: float) -> int:
    """Beat the lead as cheaply as wins when the prize is worth the card spent, else lose cheaply."""
    trump = tb[T_TRUMP]
    beat = winners(tb, legal, False)
    if beat and gain > 0:
        card = cheapest_winner(tb, beat)
        lose = legal & ~beat
        spare = card_value(least_value_card(lose, trump) if lose else card, trump)
        # winning costs the card spent instead of the cheapest loser, and brings the prize instead of a draw
        if card_value(card, trump) - spare <= gain + 0.1:
            return card
    return least_valuable(tb, legal)


@jit
def play(tb: np.ndarray, legal: int, prize: int, unseen: int, stage2: bool) -> int:
    """The card to play (``GermanWhistHeuristic.play``): ``prize`` is the face-up stock card (-1 when none),
    ``unseen`` the cards the seat cannot place, ``stage2`` whether the stock is empty."""
    if stage2 or prize < 0:
        return two_player_play(tb, legal)
    trump = tb[T_TRUMP]
    gain = card_value(prize, trump) - draw_value(unseen & ~(1 << prize), trump)
    if tb[T_TRICK_LEN] == 0:
        return lead(tb, legal, gain)
    return follow(tb, legal, gain)


@jit
def act_row(st: np.ndarray, cfg: np.ndarray, tb: np.ndarray, known: np.ndarray, work: np.ndarray) -> int:
    """The heuristic's action for the seat to act in the state row ``st`` (-1 where the episode is over)."""
    if st[PHASE] != PHASE_PLAY:
        return -1
    recall = cfg[CFG_RECALL] != 0
    unseen = seat_knowledge(st, recall, st[TO_ACT], known)
    fill_table_row(tb, st, known, unseen, recall, -1, work[W_NO_RESTRICT], work)
    return play(tb, legal_mask(st, cfg[CFG_FREE]), st[TURN_UP], unseen, st[TRICK_NO] >= PHASE1_TRICKS)


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
