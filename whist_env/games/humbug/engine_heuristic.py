"""The Humbug heuristic (:class:`whist_env.games.humbug.heuristic.HumbugHeuristic`) on the engine's rows.

The card play is the shared two-player play (:func:`whist_env.vector.heuristics.table.two_player_play`), exact in a
known ending, on a table read from the seat to act's view (:func:`whist_env.games.humbug.engine.seat_knowledge`).

**The memory, from the row.** In ``hidden_hand`` mode the Python agent keeps a memory of each deal: the initial
layout it studied (its view before its first card) and the opponent cards it has since seen on the table, in the
trick or the last trick of its own views; the opponent's pool is its dealt hand less those cards, among the cards
the seat cannot place and the turn-up. A batched heuristic seat sees every view of its seat from the study step of
each deal on, so that memory follows from the deal's history in the row (:func:`opponent_cards_seen`): it saw
every card the opponent led (in the trick, when following) and every card the opponent followed with to a trick the
seat won (in the last trick, when leading the next), but not a card the opponent followed with to a trick it won:
the opponent leads the next trick, which clears the last trick, before the seat looks again. Such a card stays in
the pool (the Python agent's memory does not know it went), so the pool is not simply the opponent's hand. A seat
that joins a deal after its study step (a fresh Python agent mid-deal, which plays with the view alone) is not a
case for the batched engine, where the heuristic plays its seat from the deal's start.
``tests/games/humbug/test_humbug_heuristic_port.py`` checks the pool against the Python agent's memory in
whole games.
In ``open_table`` mode the view shows the opponent's hand: no memory is used.
"""

from __future__ import annotations

import numpy as np

from whist_env.games.humbug.engine import CFG_OPEN, CFG_RECALL, seat_knowledge
from whist_env.rules.core import PHASE_PLAY
from whist_env.vector.core import (
    DEALT,
    HIST,
    MAX_SEATS,
    NTRICK,
    PHASE,
    TO_ACT,
    TRICK_NO,
    TURN_UP,
    jit,
    legal_mask,
)
from whist_env.vector.heuristics.table import NO_RESTRICT, TABLE_SIZE, fill_table_row, new_work, two_player_play


@jit
def opponent_cards_seen(st: np.ndarray, me: int) -> int:
    """The opponent's cards seat ``me`` saw played this deal in the trick or the last trick of its views, at the
    decision of ``me`` now to act: the cards the opponent led, and those it followed with to a trick ``me`` won."""
    opp = 1 - me
    theirs = st[DEALT + opp]
    played = 2 * st[TRICK_NO] + st[NTRICK]  # cards in the history: two per completed trick, then this trick's
    seen = 0
    for i in range(played):
        c = st[HIST + i]
        if not (theirs >> c) & 1:
            continue
        if i % 2 == 0:
            seen |= 1 << c  # it led: in the trick when ``me`` followed
        else:
            # it followed: shown at the next decision of ``me`` only if ``me`` won, and so leads the next trick
            # (the next trick's first card is ``me``'s, or ``me`` is to lead it now)
            nxt = i + 1
            if nxt >= played or not (theirs >> st[HIST + nxt]) & 1:
                seen |= 1 << c
    return seen


@jit
def remembered_pool(st: np.ndarray, me: int, unseen: int) -> int:
    """The cards the ``hidden_hand`` memory of seat ``me`` says the opponent may hold: its dealt hand less the cards
    ``me`` saw it play (:func:`opponent_cards_seen`), among the cards ``me`` cannot place (``unseen``) and the
    turn-up (shown by id, held by the dealer until played)."""
    visible = unseen | (1 << st[TURN_UP])
    return st[DEALT + 1 - me] & ~opponent_cards_seen(st, me) & visible


@jit
def act_row(
    st: np.ndarray, cfg: np.ndarray, tb: np.ndarray, known: np.ndarray, work: np.ndarray, restrict: np.ndarray
) -> int:
    """The heuristic's action for the seat to act in the state row ``st`` (-1 where the episode is over);
    ``restrict`` is scratch for :func:`fill_table_row`'s pools (the opponent's: the memory's, in ``hidden_hand``)."""
    if st[PHASE] != PHASE_PLAY:
        return -1
    open_table = cfg[CFG_OPEN] != 0
    recall = cfg[CFG_RECALL] != 0
    me = st[TO_ACT]
    unseen = seat_knowledge(st, open_table, recall, me, known)
    restrict[me] = NO_RESTRICT
    restrict[1 - me] = NO_RESTRICT if open_table else remembered_pool(st, me, unseen)
    fill_table_row(tb, st, known, unseen, recall, -1, restrict, work)
    return two_player_play(tb, legal_mask(st))


# What the per-row functions above take besides the act loop's own arguments (whist_env/vector/template.py).
LOOP_ARGS = {"act_scratch": "restrict = np.full(MAX_SEATS, NO_RESTRICT, np.int64)"}


# --- begin generated: act loop (whist_env/vector/template.py; python -m whist_env.vector.template --write) ---
@jit
def act_kernel(state: np.ndarray, cfg: np.ndarray, envs: np.ndarray, out: np.ndarray) -> None:
    """The heuristic's action for the seat to act in each environment ``envs[j]`` into ``out[j]`` (-1 where the
    episode is over)."""
    tb = np.zeros(TABLE_SIZE, np.int64)
    known = np.zeros(MAX_SEATS, np.int64)
    work = new_work()
    restrict = np.full(MAX_SEATS, NO_RESTRICT, np.int64)
    for j in range(envs.shape[0]):
        out[j] = act_row(state[envs[j]], cfg, tb, known, work, restrict)


# --- end generated: act loop ---
