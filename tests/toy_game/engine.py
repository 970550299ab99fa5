"""The toy Low Whist in the batched engine: its per-row functions over :mod:`whist_env.vector.core`, its batch loops
rendered from :mod:`whist_env.vector.template` (the recipe's ``engine.py``, docs/adding_a_game.md).

Everything but the trick's winner is a core helper: the deal (``deal_round_robin``), the legal cards, the card play
(``play_card``), the common observation (``write_common``). ``play_card`` names the standard winner (the highest
card of the led suit); :func:`play_low` then gives the trick to the lowest card of the led suit, the toy's rule
(:func:`toy_game.rules.lowest_of_led_suit`).

The rewards are tricks less the average (13 / 4): quarter points. The state block's ``returns`` column holds whole
numbers, so this engine keeps the returns in quarter points there (:data:`RETURN_SCALE`); :meth:`LowWhistVector.field`
gives ``"returns"`` in points, and the exported state too. The tricks of the series (the rules' ``scores``) are a
field of the game's own.
"""

from __future__ import annotations

import copy
from typing import ClassVar

import numpy as np

from whist_env.cards import NUM_CARDS
from whist_env.rules.core import PHASE_OVER, State
from whist_env.vector.core import (
    DEAL_INDEX,
    DEAL_TRICKS,
    DEALER,
    DEALT,
    DECK,
    FULL,
    GAME_COLS,
    GAME_SLOTS,
    HAND,
    HIST,
    LAST,
    LAST_ACTOR,
    LAST_WINNER,
    LEADER,
    MAX_SEATS,
    PHASE,
    RET,
    TO_ACT,
    TRICK_NO,
    WON,
    RawVectorEnv,
    cards_gone,
    check_actions,
    deal_round_robin,
    expand,
    expand_mask,
    jit,
    jit_borrow,
    jit_borrow_inline,
    legal_mask,
    play_card,
    put_one,
    put_scalar,
    rng_below,
    scratch,
    shuffle_deck,
    write_common,
)

from .rules import NUM_PLAYERS, TRICKS, LowWhist

# The game's own columns: the tricks taken over the series (the rules' ``scores``).
SCORES = GAME_COLS  # NUM_PLAYERS
# The config array.
CFG_RECALL, CFG_NUM_DEALS = range(2)
# The game's observation slots (after the common ones).
SLOT_TRICKS_LEFT, SLOT_DEALS_LEFT = range(GAME_SLOTS, GAME_SLOTS + 2)
# A deal pays each seat its tricks less 13 / 4: the returns column holds them in quarter points.
RETURN_SCALE = NUM_PLAYERS


@jit_borrow
def start_deal(st: np.ndarray) -> None:
    """Deal every card one at a time from the dealer's left; no trump; the dealer's left leads."""
    first = (st[DEALER] + 1) % NUM_PLAYERS
    deal_round_robin(st, NUM_PLAYERS, first, NUM_CARDS)
    st[DEAL_TRICKS] = TRICKS
    st[LEADER] = first
    st[TO_ACT] = first


@jit_borrow
def new_episode(st: np.ndarray, rng: np.ndarray, i: int, deck: np.ndarray, dealer: int) -> None:
    """Start an episode: the given dealer or one drawn, the given deck (``deck[0] >= 0``) or one shuffled."""
    st[DEALER] = dealer if dealer >= 0 else rng_below(rng, i, NUM_PLAYERS)
    st[DEAL_INDEX] = 0
    for s in range(MAX_SEATS):
        st[RET + s] = 0
    for s in range(NUM_PLAYERS):
        st[SCORES + s] = 0
    if deck[0] >= 0:
        for c in range(NUM_CARDS):
            st[DECK + c] = deck[c]
    else:
        shuffle_deck(st, rng, i)
    start_deal(st)


@jit_borrow
def play_low(st: np.ndarray, card: int) -> int:
    """Play ``card`` (legal) for the seat to act with the core's :func:`play_card`; when it ends the trick, give the
    trick to the lowest card of the led suit instead of the standard winner. Returns the trick's winner, or -1 while
    the trick goes on (the winner leads the next one)."""
    standard = play_card(st, card)
    if standard < 0:
        return -1
    led = st[HIST + (st[TRICK_NO] - 1) * NUM_PLAYERS]  # the trick's first card (now in the last trick)
    suit = led // 13
    winner = standard
    best = led
    for s in range(NUM_PLAYERS):
        c = st[LAST + s]
        if c // 13 == suit and c <= best:  # the led card itself, or a lower one of its suit
            best = c
            winner = s
    st[WON + standard] -= 1
    st[WON + winner] += 1
    st[LAST_WINNER] = winner
    st[LEADER] = winner
    st[TO_ACT] = winner
    return winner


@jit_borrow
def observe_row(
    bits: np.ndarray,
    obs_row: np.ndarray,
    mask_row: np.ndarray,
    st: np.ndarray,
    cfg: np.ndarray,
    offs: np.ndarray,
    lut: np.ndarray,
    mask_lut: np.ndarray,
    me: int,
    known: np.ndarray,
) -> None:
    """Observation and action mask of seat ``me`` (the rules' ``view`` and the encoder, in one pass) into the
    output rows (uint64 words), built in the scratch ``bits``: every card is dealt, a seat knows its own hand."""
    bits[:] = 0
    recall = cfg[CFG_RECALL] != 0
    over = st[PHASE] == PHASE_OVER
    hand = st[HAND + me]
    for s in range(NUM_PLAYERS):
        known[s] = 0
    known[me] = hand
    unseen = FULL & ~(hand | cards_gone(st, recall))
    write_common(bits, offs, st, me, known, unseen, -1, recall)
    taken = 0
    for s in range(NUM_PLAYERS):
        taken += st[WON + s]
    put_one(bits, offs, SLOT_TRICKS_LEFT, TRICKS - taken)
    expand(bits, obs_row, lut)
    if offs[SLOT_DEALS_LEFT, 0] >= 0:  # a series: the deals left, this one included, as a scalar
        num_deals = cfg[CFG_NUM_DEALS]
        put_scalar(obs_row, offs, SLOT_DEALS_LEFT, (num_deals - st[DEAL_INDEX]) * (1.0 / num_deals))
    expand_mask(legal_mask(st) if me == st[TO_ACT] and not over else 0, mask_row, mask_lut)


@jit_borrow_inline
def step_row(st: np.ndarray, rng: np.ndarray, i: int, cfg: np.ndarray, action: int, rewards_row: np.ndarray) -> bool:
    """Play ``action`` (legal) for the seat to act; after a deal's last trick pay each seat its tricks less 13 / 4
    into ``rewards_row`` (the returns in quarter points) and deal the next one of a series; returns whether the
    episode is over (the batch loop then ends it)."""
    if play_low(st, action) >= 0 and st[TRICK_NO] == TRICKS:
        for s in range(NUM_PLAYERS):
            won = st[WON + s]
            st[SCORES + s] += won
            rewards_row[s] = won - TRICKS / NUM_PLAYERS
            st[RET + s] += RETURN_SCALE * won - TRICKS
        if st[DEAL_INDEX] + 1 >= cfg[CFG_NUM_DEALS]:
            return True
        st[DEAL_INDEX] += 1
        st[DEALER] = (st[DEALER] + 1) % NUM_PLAYERS  # the deal passes to the left
        shuffle_deck(st, rng, i)
        start_deal(st)
    return False


# What the per-row functions above take besides the batch loops' own arguments (whist_env/vector/template.py).
LOOP_ARGS = {"episode_args": "", "check_args": "", "step_scratch": "", "observe_scratch": ""}


# --- begin generated: batch loops (whist_env/vector/template.py; python -m whist_env.vector.template --write) ---
@jit
def reset_kernel(
    state: np.ndarray,
    rng: np.ndarray,
    cfg: np.ndarray,
    offs: np.ndarray,
    lut: np.ndarray,
    mask_lut: np.ndarray,
    have_decks: bool,
    decks: np.ndarray,
    dealers: np.ndarray,
    current: np.ndarray,
    obs: np.ndarray,
    mask: np.ndarray,
    rewards: np.ndarray,
) -> None:
    """Start an episode in every environment (the given decks and dealers where given) and observe."""
    bits = scratch(obs, lut)
    known = np.zeros(MAX_SEATS, np.int64)
    none = np.full(1, -1, np.int64)
    reset_rows(
        state, rng, cfg, offs, lut, mask_lut, have_decks, decks, dealers, current, obs, mask, rewards,
        bits, known, none,
    )  # fmt: skip


@jit_borrow
def reset_rows(
    state: np.ndarray,
    rng: np.ndarray,
    cfg: np.ndarray,
    offs: np.ndarray,
    lut: np.ndarray,
    mask_lut: np.ndarray,
    have_decks: bool,
    decks: np.ndarray,
    dealers: np.ndarray,
    current: np.ndarray,
    obs: np.ndarray,
    mask: np.ndarray,
    rewards: np.ndarray,
    bits: np.ndarray,
    known: np.ndarray,
    none: np.ndarray,
) -> None:
    """:func:`reset_kernel`'s loop over the environments, in the scratches it allocated."""
    for i in range(state.shape[0]):
        st = state[i]
        new_episode(st, rng, i, decks[i] if have_decks else none, dealers[i])
        for s in range(rewards.shape[1]):
            rewards[i, s] = 0
        current[i] = st[TO_ACT]
        observe_row(bits, obs[i], mask[i], st, cfg, offs, lut, mask_lut, st[TO_ACT], known)


@jit
def step_kernel(
    state: np.ndarray,
    rng: np.ndarray,
    cfg: np.ndarray,
    offs: np.ndarray,
    lut: np.ndarray,
    mask_lut: np.ndarray,
    actions: np.ndarray,
    bad: np.ndarray,
    current: np.ndarray,
    obs: np.ndarray,
    mask: np.ndarray,
    rewards: np.ndarray,
    terminated: np.ndarray,
) -> int:
    """The fused step: check every action (none illegal, or nothing changes and the count of refused ones is
    returned), apply them by the game's rules (:func:`step_row`: a finished deal scored, the next one dealt), end
    the episodes that are over (such an environment starts anew at the next step, which ignores its action), and
    observe the seat to act."""
    refused = check_actions(state, actions, bad)
    if refused:
        return refused
    bits = scratch(obs, lut)
    known = np.zeros(MAX_SEATS, np.int64)
    none = np.full(1, -1, np.int64)
    step_rows(
        state, rng, cfg, offs, lut, mask_lut, actions, current, obs, mask, rewards, terminated,
        bits, known, none,
    )  # fmt: skip
    return 0


@jit_borrow
def step_rows(
    state: np.ndarray,
    rng: np.ndarray,
    cfg: np.ndarray,
    offs: np.ndarray,
    lut: np.ndarray,
    mask_lut: np.ndarray,
    actions: np.ndarray,
    current: np.ndarray,
    obs: np.ndarray,
    mask: np.ndarray,
    rewards: np.ndarray,
    terminated: np.ndarray,
    bits: np.ndarray,
    known: np.ndarray,
    none: np.ndarray,
) -> None:
    """:func:`step_kernel`'s loop over the environments, with legal actions, in the scratches it allocated."""
    for i in range(state.shape[0]):
        st = state[i]
        for s in range(rewards.shape[1]):
            rewards[i, s] = 0
        if st[PHASE] == PHASE_OVER:  # next-step autoreset: the action is ignored
            new_episode(st, rng, i, none, -1)
        elif step_row(st, rng, i, cfg, actions[i], rewards[i]):  # the episode is over
            st[PHASE] = PHASE_OVER
            st[TO_ACT] = -1
            terminated[i] = True
        seat = st[TO_ACT] if st[PHASE] != PHASE_OVER else st[LAST_ACTOR]
        current[i] = st[TO_ACT]
        observe_row(bits, obs[i], mask[i], st, cfg, offs, lut, mask_lut, seat, known)


@jit
def observe_kernel(
    state: np.ndarray,
    cfg: np.ndarray,
    offs: np.ndarray,
    lut: np.ndarray,
    mask_lut: np.ndarray,
    seats: np.ndarray,
    obs: np.ndarray,
    mask: np.ndarray,
) -> None:
    """The observation and mask of ``seats[i]`` in every environment ``i``."""
    bits = scratch(obs, lut)
    known = np.zeros(MAX_SEATS, np.int64)
    observe_rows(state, cfg, offs, lut, mask_lut, seats, obs, mask, bits, known)


@jit_borrow
def observe_rows(
    state: np.ndarray,
    cfg: np.ndarray,
    offs: np.ndarray,
    lut: np.ndarray,
    mask_lut: np.ndarray,
    seats: np.ndarray,
    obs: np.ndarray,
    mask: np.ndarray,
    bits: np.ndarray,
    known: np.ndarray,
) -> None:
    """:func:`observe_kernel`'s loop over the environments, in the scratches it allocated."""
    for i in range(state.shape[0]):
        observe_row(bits, obs[i], mask[i], state[i], cfg, offs, lut, mask_lut, seats[i], known)


# --- end generated: batch loops ---


class LowWhistVector(RawVectorEnv):
    """``low_whist_v0`` batched: every option of the toy (see :class:`RawVectorEnv` for the API)."""

    reset_kernel = reset_kernel
    step_kernel = step_kernel
    observe_kernel = observe_kernel
    game_fields: ClassVar[dict[str, tuple[int, int]]] = {"scores": (SCORES, NUM_PLAYERS)}
    game_piece_names = ("tricks_left", "deals_left")
    game: LowWhist

    def config_array(self) -> np.ndarray:
        cfg = self.game.config
        return np.array([cfg.include_history, cfg.num_deals], np.int64)

    def field(self, name: str) -> np.ndarray:
        """As :meth:`RawVectorEnv.field`; ``"returns"`` in points (a float64 copy: the block keeps quarter points)."""
        if name == "returns":
            return super().field(name) / RETURN_SCALE
        return super().field(name)

    def export_state(self, env: int) -> State:
        """Environment ``env`` as a rules state (``deal_summary`` is not kept by the engine: it is left empty)."""
        st: list[int] = self._state[self._env_index(env)].tolist()
        state = State(NUM_PLAYERS, st[DEALER])
        self._export_common(state, st, st[DEALT : DEALT + NUM_PLAYERS])  # no card changes hands in a deal
        state.returns = [r / RETURN_SCALE for r in st[RET : RET + NUM_PLAYERS]]
        state.scores = st[SCORES : SCORES + NUM_PLAYERS]
        return state

    def import_state(self, env: int, state: State) -> None:
        """Set environment ``env`` to ``state`` (a ``State`` in play or over, checked by the rules' invariants, its
        returns whole quarter points). The engine does not know the deck it was dealt from: :meth:`decks` gives
        -1s for it. Before any :meth:`reset`, the other environments have no episode: the next :meth:`step` starts
        theirs (and ignores their actions), as after an ended episode."""
        scaled = copy.copy(state)  # the block's returns: quarter points, whole numbers
        scaled.returns = [RETURN_SCALE * r for r in state.returns]
        i = self._checked_import(env, scaled, State)
        row = self._import_common(scaled)
        row[SCORES : SCORES + NUM_PLAYERS] = state.scores
        self._state[i] = row
        self._started = True
