"""The Humbug whist heuristic (:class:`whist_env.games.humbug_whist.heuristic.HumbugWhistHeuristic`) on
the engine's rows.

The exchange decision compares the hand's strength with what a random blind is worth (the same sums, in the same
order, as the Python agent, so that the comparison comes out the same); the card play is the shared two-player
play (:func:`whist_env.vector.heuristics.table.two_player_play`), exact in a known ending.
"""

from __future__ import annotations

import numpy as np

from whist_env.games.humbug_whist.engine import CFG_RECALL, seat_knowledge
from whist_env.games.humbug_whist.rules import EXCHANGE, KEEP
from whist_env.rules.core import PHASE_EXCHANGE, PHASE_PLAY
from whist_env.vector.core import (
    HAND,
    MAX_SEATS,
    NO_TRUMP,
    PHASE,
    TO_ACT,
    TRUMP,
    card_count,
    jit,
    legal_mask,
)
from whist_env.vector.heuristics.table import (
    JACK,
    TABLE_SIZE,
    W_NO_RESTRICT,
    fill_table_row,
    lowest,
    new_work,
    two_player_play,
)

# A side-suit card's worth by rank (J 0.1, Q 0.3, K 0.6, A 1.0): ``humbug_whist.SIDE_VALUES``.
SIDE_VALUES = np.array([0.0] * 9 + [0.1, 0.3, 0.6, 1.0])


@jit
def card_strength(card: int, trump: int) -> float:
    """``humbug_whist.card_strength`` (``trump`` NO_TRUMP for none)."""
    r = card % 13
    if trump != NO_TRUMP and card // 13 == trump:
        return 0.55 + 0.1 * r + (0.35 if r >= JACK else 0.0)
    return SIDE_VALUES[r]


@jit
def strength_sum(cards: int, trump: int) -> float:
    """The sum of :func:`card_strength` over ``cards``, ascending (the Python sum's order)."""
    total = 0.0
    rest = cards
    while rest:
        total += card_strength(lowest(rest), trump)
        rest &= rest - 1
    return total


@jit
def exchange_decision(hand: int, unseen: int, trump: int) -> int:
    """EXCHANGE when the hand is weaker than a random blind drawn from the unseen cards is worth on average."""
    n = card_count(unseen)
    blind = 13 * strength_sum(unseen, trump) / n if n else 0.0
    return EXCHANGE if strength_sum(hand, trump) < blind else KEEP


@jit
def act_row(st: np.ndarray, cfg: np.ndarray, tb: np.ndarray, known: np.ndarray, work: np.ndarray) -> int:
    """The heuristic's action for the seat to act in the state row ``st`` (-1 where the episode is over)."""
    phase = st[PHASE]
    if phase != PHASE_PLAY and phase != PHASE_EXCHANGE:
        return -1
    recall = cfg[CFG_RECALL] != 0
    me = st[TO_ACT]
    unseen = seat_knowledge(st, recall, me, known)
    if phase == PHASE_EXCHANGE:
        return exchange_decision(st[HAND + me], unseen, st[TRUMP])
    fill_table_row(tb, st, known, unseen, recall, -1, work[W_NO_RESTRICT], work)
    return two_player_play(tb, legal_mask(st))


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
