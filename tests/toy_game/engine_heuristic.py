"""The toy's heuristic (:class:`toy_game.heuristic.LowWhistHeuristic`) on the engine's rows (the recipe's
``engine_heuristic.py``, docs/adding_a_game.md): the same decision from the seat to act's view, read from the state
row. Its ``act_kernel``, the loop over the batch, is rendered from :mod:`whist_env.vector.template`.

The heuristic needs no table of the shared reasoning (:mod:`whist_env.vector.heuristics.table`): the loop hands one
to ``act_row`` all the same, which leaves it alone.
"""

from __future__ import annotations

import numpy as np

from whist_env.rules.core import PHASE_PLAY
from whist_env.vector.core import LED, MAX_SEATS, PHASE, SUIT_BITS, TRICK, jit, legal_mask
from whist_env.vector.heuristics.table import TABLE_SIZE, new_work

from .rules import NUM_PLAYERS


@jit
def lowest_rank(mask: int) -> int:
    """The card of a non-empty ``mask`` with the lowest rank, the lowest suit among equal ranks (``_lowest``)."""
    for rank in range(13):
        for suit in range(4):
            if (mask >> (13 * suit + rank)) & 1:
                return 13 * suit + rank
    return -1


@jit
def highest_rank(mask: int) -> int:
    """The card of a non-empty ``mask`` with the highest rank, the highest suit among equal ranks (``_highest``)."""
    for rank in range(12, -1, -1):
        for suit in range(3, -1, -1):
            if (mask >> (13 * suit + rank)) & 1:
                return 13 * suit + rank
    return -1


@jit
def act_row(st: np.ndarray, cfg: np.ndarray, tb: np.ndarray, known: np.ndarray, work: np.ndarray) -> int:
    """The heuristic's action for the seat to act in the state row ``st`` (-1 where the episode is over): lead the
    lowest card; follow with the lowest card of the led suit when it is below the card winning so far, else the
    highest; void in the led suit, throw the highest card."""
    if st[PHASE] != PHASE_PLAY:
        return -1
    legal = legal_mask(st)
    led = st[LED]
    if led < 0:
        return lowest_rank(legal)
    if not legal & (SUIT_BITS << (13 * led)):
        return highest_rank(legal)
    winning = 52
    for s in range(NUM_PLAYERS):
        c = st[TRICK + s]
        if c >= 0 and c // 13 == led and c < winning:
            winning = c
    low = lowest_rank(legal)
    return low if low < winning else highest_rank(legal)


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
