"""The classic Whist heuristic (:class:`~whist_env.games.classic_whist.heuristic.ClassicWhistHeuristic`) on the
engine's rows.

Each decision reads the seat to act's view from its state row (what :func:`whist_env.games.classic_whist.engine.
seat_knowledge` says it knows, the voids shown with recall, the trick) into a table and plays the Python agent's
maxims card for card: lead to win, second hand low (cover an honour with an honour), third hand high, never
overtake a partner's sure trick, fourth hand as cheaply as wins.
"""

from __future__ import annotations

import numpy as np

from whist_env.games.classic_whist.engine import CFG_RECALL, NUM_PLAYERS, seat_knowledge
from whist_env.rules.core import PHASE_PLAY
from whist_env.vector.core import MAX_SEATS, NO_TRUMP, PHASE, TO_ACT, jit, legal_mask
from whist_env.vector.heuristics.table import (
    ACE,
    JACK,
    SUIT_MASK,
    T_BEST,
    T_LEAD_CARD,
    T_LED,
    T_PARTNER,
    T_POSSIBLE,
    T_TRICK_LEN,
    T_TRUMP,
    T_WINNER,
    TABLE_SIZE,
    W_NO_RESTRICT,
    above,
    cheapest_winner,
    discard,
    fill_table_row,
    follow_to_win,
    highest,
    lead_to_win,
    low_card,
    lowest,
    lowest_equal,
    new_work,
    safe_against,
    winners,
)


@jit
def honours(suit: int) -> int:
    """J Q K A of a suit."""
    return SUIT_MASK[suit] & ~((1 << (13 * suit + JACK)) - 1)


@jit
def second_hand(tb: np.ndarray, legal: int, follow: int) -> int:
    """Second hand low, covering an honour with an honour; void, ruff a lead the partner cannot beat or a high one."""
    lead = tb[T_LEAD_CARD]
    if follow:
        if JACK <= lead % 13 < ACE:
            covers = follow & above(lead) & honours(tb[T_LED])
            if covers:
                return lowest(covers)
        sure = winners(tb, follow, True)
        if sure and lead % 13 >= JACK:
            return cheapest_winner(tb, sure)
        return lowest(follow)
    partner_beats = (tb[T_POSSIBLE + tb[T_PARTNER]] & above(lead)) != 0
    trump = tb[T_TRUMP]
    if trump != NO_TRUMP and legal & SUIT_MASK[trump] and (not partner_beats or lead % 13 >= JACK):
        sure = winners(tb, legal, True)
        if sure:
            return cheapest_winner(tb, sure)
        ruffs = winners(tb, legal & SUIT_MASK[trump], False)
        return cheapest_winner(tb, ruffs if ruffs else legal)
    return discard(tb, legal)


@jit
def third_hand(tb: np.ndarray, legal: int, follow: int) -> int:
    """Third hand high: the cheapest sure winner, else the highest card that beats the trick."""
    sure = winners(tb, legal, True)
    if sure:
        return cheapest_winner(tb, sure)
    if follow:
        now = winners(tb, follow, False)
        if now:
            return lowest_equal(tb, highest(now))
        return lowest(follow)
    if tb[T_WINNER] != tb[T_PARTNER]:
        ruff = winners(tb, legal, False)
        if ruff:
            return cheapest_winner(tb, ruff)
    return discard(tb, legal)


@jit
def play(tb: np.ndarray, legal: int) -> int:
    """The card to play (``ClassicWhistHeuristic.play``)."""
    size = tb[T_TRICK_LEN]
    if size == 0:
        return lead_to_win(tb, legal, 4)
    follow = legal & SUIT_MASK[tb[T_LED]]
    if tb[T_WINNER] == tb[T_PARTNER] and safe_against(tb, tb[T_BEST]):
        return low_card(tb, legal)  # never overtake a partner's sure trick
    if size == 1:
        return second_hand(tb, legal, follow)
    if size == 2:
        return third_hand(tb, legal, follow)
    return follow_to_win(tb, legal, False)


@jit
def act_row(st: np.ndarray, cfg: np.ndarray, tb: np.ndarray, known: np.ndarray, work: np.ndarray) -> int:
    """The heuristic's action for the seat to act in the state row ``st`` (-1 where the episode is over)."""
    if st[PHASE] != PHASE_PLAY:
        return -1
    recall = cfg[CFG_RECALL] != 0
    me = st[TO_ACT]
    unseen = seat_knowledge(st, recall, me, known)
    fill_table_row(tb, st, known, unseen, recall, (me + 2) % NUM_PLAYERS, work[W_NO_RESTRICT], work)
    return play(tb, legal_mask(st))


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
