"""German Whist in the batched engine: the kernels of RULES.md §5 over :mod:`whist_env.vector.core`.

Two players, 13 cards each; the other 26 cards of the deck are the stock, kept in place as ``DECK[26:52]``: after
``k`` phase-1 tricks its top (face-up) card is ``DECK[26 + 2k]``, and the draws of trick ``k`` (1-based) are
``DECK[24 + 2k]`` (the face-up prize, to the winner) and ``DECK[25 + 2k]`` (face down, to the loser), as the rules
keep ``state.stock``. Every option is read from the config array at run time (one compiled kernel serves them all):
``phase1_follow_suit``, ``count_all_tricks``, the win or trick-difference reward, a series of ``num_deals`` deals
(whose balance and deals left are float32 scalars of the observation) and ``include_history``. The plain twin these
kernels are tested against is :class:`whist_env.games.german_whist.rules.GermanWhist` with its encoder
(``tests/vector``).
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from whist_env.cards import NUM_CARDS
from whist_env.games.german_whist.rules import (
    NUM_PLAYERS,
    PHASE1_TRICKS,
    STOCK_SIZE,
    TRICKS,
    GermanWhist,
    GermanWhistState,
)
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
    LAST_ACTOR,
    LAST_WINNER,
    LEADER,
    MAX_SEATS,
    PHASE,
    RET,
    TO_ACT,
    TRICK_NO,
    TRUMP,
    TURN_UP,
    VOIDS,
    WON,
    RawVectorEnv,
    card_count,
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
    put_bits,
    put_one,
    put_scalar,
    rng_below,
    scratch,
    shuffle_deck,
    write_common,
)

# The game's own columns (absolute seats): face-up cards each seat took, cards each drew face down, phase-1 tricks.
PRIZES = GAME_COLS  # 2
DRAWS = PRIZES + 2  # 2
PHASE1_WON = DRAWS + 2  # 2
STOCK = DECK + NUM_CARDS - STOCK_SIZE  # the stock is the deck's second half, face-up card first
# The config array.
CFG_FREE, CFG_COUNT_ALL, CFG_DIFF, CFG_NUM_DEALS, CFG_RECALL, CFG_SPAN = range(6)
# The game's observation slots (after the common ones).
(
    SLOT_STAGE,
    SLOT_STOCK_SIZE,
    SLOT_P1_ME,
    SLOT_P1_OPP,
    SLOT_P2_ME,
    SLOT_P2_OPP,
    SLOT_PRIZES_ME,
    SLOT_PRIZES_OPP,
    SLOT_MY_DRAWS,
    SLOT_OPP_DRAWS,
    SLOT_OPP_SIZE,
    SLOT_AHEAD,
    SLOT_BEHIND,
    SLOT_DEALS_LEFT,
) = range(GAME_SLOTS, GAME_SLOTS + 14)


@jit_borrow
def start_deal(st: np.ndarray) -> None:
    """RULES.md §5.1: 13 cards each, one at a time from the non-dealer (``DECK[0:26]``); ``DECK[26]`` is turned
    face up and sets trump for the whole deal; the non-dealer leads (§5.2)."""
    first = 1 - st[DEALER]
    deal_round_robin(st, NUM_PLAYERS, first, 2 * PHASE1_TRICKS)
    st[DEAL_TRICKS] = TRICKS
    st[TURN_UP] = st[STOCK]
    st[TRUMP] = st[STOCK] // 13
    for s in range(NUM_PLAYERS):
        st[PRIZES + s] = 0
        st[DRAWS + s] = 0
        st[PHASE1_WON + s] = 0
    st[LEADER] = first
    st[TO_ACT] = first


@jit_borrow
def new_episode(st: np.ndarray, rng: np.ndarray, i: int, deck: np.ndarray, dealer: int) -> None:
    """Start an episode: the given dealer or one drawn, the given deck (``deck[0] >= 0``) or one shuffled."""
    st[DEALER] = dealer if dealer >= 0 else rng_below(rng, i, NUM_PLAYERS)
    st[DEAL_INDEX] = 0
    for s in range(MAX_SEATS):
        st[RET + s] = 0
    if deck[0] >= 0:
        for c in range(NUM_CARDS):
            st[DECK + c] = deck[c]
    else:
        shuffle_deck(st, rng, i)
    start_deal(st)


@jit_borrow
def draw_from_stock(st: np.ndarray, winner: int) -> None:
    """RULES.md §5.2, after phase-1 trick ``k``: the winner takes the face-up card, the loser the next one face
    down; the card under them is turned (none after trick 13). A void stays proven only while no card of that suit
    can have come in: the prize is seen by both, the hidden draw could be of any suit."""
    k = st[TRICK_NO]
    loser = 1 - winner
    prize = st[STOCK + 2 * k - 2]
    hidden = st[STOCK + 2 * k - 1]
    st[HAND + winner] |= 1 << prize
    st[HAND + loser] |= 1 << hidden
    st[PRIZES + winner] |= 1 << prize
    st[DRAWS + loser] |= 1 << hidden
    st[PHASE1_WON + winner] += 1
    st[VOIDS + winner] &= ~(1 << (prize // 13))
    st[VOIDS + loser] = 0
    st[TURN_UP] = st[STOCK + 2 * k] if k < PHASE1_TRICKS else -1


@jit_borrow
def deal_result(st: np.ndarray, cfg: np.ndarray) -> int:
    """RULES.md §5.4, §5.5: seat 0's reward for the finished deal (seat 1 gets the negative)."""
    c0 = st[WON] - st[PHASE1_WON]
    c1 = st[WON + 1] - st[PHASE1_WON + 1]
    if cfg[CFG_COUNT_ALL]:
        c0 = st[WON]
        c1 = st[WON + 1]
    diff = c0 - c1
    if cfg[CFG_DIFF]:
        return diff
    return 1 if diff > 0 else (-1 if diff < 0 else 0)  # ±1 for the majority, 0 for a 13-13 draw


@jit_borrow
def seen_draws(st: np.ndarray, recall: bool, me: int) -> tuple[int, int, int]:
    """What seat ``me`` knows of the drawing (the rules' ``seen_draws``, from its side): the prizes it took, the
    prizes the opponent took, its own face-down draws. RULES.md §5.6: the prizes are public, each seat's face-down
    draws its own; without recall a seat knows only the draws of the phase-1 trick still on the table as the last
    trick."""
    opp = 1 - me
    if recall:
        return st[PRIZES + me], st[PRIZES + opp], st[DRAWS + me]
    k = st[TRICK_NO]
    w = st[LAST_WINNER]
    if w >= 0 and 1 <= k <= PHASE1_TRICKS:
        prize = 1 << st[STOCK + 2 * k - 2]
        if w == me:
            return prize, 0, 0
        return 0, prize, 1 << st[STOCK + 2 * k - 1]
    return 0, 0, 0


@jit_borrow
def seat_knowledge(st: np.ndarray, recall: bool, me: int, known: np.ndarray) -> int:
    """What seat ``me`` knows of the cards (the rules' view): fills ``known`` (per seat, the cards known to be in
    that hand) and returns the cards ``me`` cannot place (the heuristic's port reads them too)."""
    opp = 1 - me
    hand = st[HAND + me]
    known[me] = hand
    known[opp] = 0
    if st[PHASE] != PHASE_OVER:
        # with recall the opponent's hand is known once the stock is empty: what no one has seen elsewhere
        if recall and st[TRICK_NO] >= PHASE1_TRICKS:
            known[opp] = st[HAND + opp]
        else:
            known[opp] = st[HAND + opp] & seen_draws(st, recall, me)[1]
    seen = hand | known[opp] | cards_gone(st, recall)
    if st[TURN_UP] >= 0:  # the face-up stock card is public (§5.6)
        seen |= 1 << st[TURN_UP]
    return FULL & ~seen


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
    output rows (uint64 words), built in the scratch ``bits``."""
    bits[:] = 0
    recall = cfg[CFG_RECALL] != 0
    over = st[PHASE] == PHASE_OVER
    opp = 1 - me
    k = st[TRICK_NO]
    prize_me, prize_opp, own = seen_draws(st, recall, me)
    turn_up = st[TURN_UP]
    write_common(bits, offs, st, me, known, seat_knowledge(st, recall, me, known), turn_up, recall)
    put_one(bits, offs, SLOT_STAGE, 0 if k < PHASE1_TRICKS else 1)
    put_one(bits, offs, SLOT_STOCK_SIZE, STOCK_SIZE - 2 * k if k < PHASE1_TRICKS else 0)
    put_one(bits, offs, SLOT_P1_ME, st[PHASE1_WON + me])
    put_one(bits, offs, SLOT_P1_OPP, st[PHASE1_WON + opp])
    put_one(bits, offs, SLOT_P2_ME, st[WON + me] - st[PHASE1_WON + me])
    put_one(bits, offs, SLOT_P2_OPP, st[WON + opp] - st[PHASE1_WON + opp])
    put_bits(bits, offs[SLOT_PRIZES_ME, 0], prize_me)
    put_bits(bits, offs[SLOT_PRIZES_OPP, 0], prize_opp)
    put_bits(bits, offs[SLOT_MY_DRAWS, 0], own)
    put_one(bits, offs, SLOT_OPP_DRAWS, st[PHASE1_WON + me])  # one sees the opponent draw, not what (§5.6)
    put_one(bits, offs, SLOT_OPP_SIZE, card_count(st[HAND + opp]))
    expand(bits, obs_row, lut)
    if offs[SLOT_DEALS_LEFT, 0] >= 0:  # a series: the balance (the returns so far) and the deals left, as scalars
        span = 1.0 / float(cfg[CFG_SPAN] * cfg[CFG_NUM_DEALS])
        balance = st[RET + me]
        put_scalar(obs_row, offs, SLOT_AHEAD, balance * span if balance > 0 else 0.0)
        put_scalar(obs_row, offs, SLOT_BEHIND, -balance * span if balance < 0 else 0.0)
        put_scalar(obs_row, offs, SLOT_DEALS_LEFT, (cfg[CFG_NUM_DEALS] - st[DEAL_INDEX]) * (1.0 / cfg[CFG_NUM_DEALS]))
    expand_mask(legal_mask(st, cfg[CFG_FREE]) if me == st[TO_ACT] and not over else 0, mask_row, mask_lut)


@jit_borrow_inline
def step_row(st: np.ndarray, rng: np.ndarray, i: int, cfg: np.ndarray, action: int, rewards_row: np.ndarray) -> bool:
    """Play ``action`` (legal) for the seat to act; draw from the stock after a phase-1 trick; after a deal's last
    trick score it into ``rewards_row`` and deal the next one of a series; returns whether the episode is over
    (the batch loop then ends it)."""
    winner = play_card(st, action, cfg[CFG_FREE])
    if winner >= 0 and st[TRICK_NO] <= PHASE1_TRICKS:
        draw_from_stock(st, winner)
    elif winner >= 0 and st[TRICK_NO] == TRICKS:
        r = deal_result(st, cfg)
        rewards_row[0] = r
        rewards_row[1] = -r
        st[RET] += r
        st[RET + 1] -= r
        if st[DEAL_INDEX] + 1 >= cfg[CFG_NUM_DEALS]:
            return True
        st[DEAL_INDEX] += 1
        st[DEALER] = 1 - st[DEALER]  # two players: the deal alternates
        shuffle_deck(st, rng, i)
        start_deal(st)
    return False


# What the per-row functions above take besides the batch loops' own arguments (whist_env/vector/template.py): the
# first tricks that need not be followed (``phase1_follow_suit=False``) are legal moves too.
LOOP_ARGS = {"episode_args": "", "check_args": "cfg[CFG_FREE]", "step_scratch": "", "observe_scratch": ""}


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
    refused = check_actions(state, actions, bad, cfg[CFG_FREE])
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


class GermanWhistVector(RawVectorEnv):
    """``german_whist_v0`` batched: every option of the game (see :class:`RawVectorEnv` for the API)."""

    reset_kernel = reset_kernel
    step_kernel = step_kernel
    observe_kernel = observe_kernel
    game_fields: ClassVar[dict[str, tuple[int, int]]] = {
        "prizes": (PRIZES, 2),
        "draws": (DRAWS, 2),
        "phase1_won": (PHASE1_WON, 2),
    }
    game_piece_names = (
        "stage",
        "stock_size",
        "tricks_phase1[me]",
        "tricks_phase1[opponent]",
        "tricks_phase2[me]",
        "tricks_phase2[opponent]",
        "prizes[me]",
        "prizes[opponent]",
        "my_draws",
        "opponent_draws",
        "opponent_hand_size",
        "balance_ahead",
        "balance_behind",
        "deals_left",
    )
    game: GermanWhist

    def config_array(self) -> np.ndarray:
        cfg = self.game.config
        # the scale of the balance scalars: the encoder's deal span (see whist_env.games.german_whist.make_encoder)
        span = 1 if cfg.reward == "win" else (2 * PHASE1_TRICKS if cfg.count_all_tricks else PHASE1_TRICKS)
        self.free_tricks = 0 if cfg.phase1_follow_suit else PHASE1_TRICKS
        return np.array(
            [self.free_tricks, cfg.count_all_tricks, cfg.reward == "trick_diff", cfg.num_deals, cfg.include_history,
             span],
            np.int64,
        )  # fmt: skip

    def hidden_masks(self) -> np.ndarray:
        """The spec's hidden pieces: the stock still on the table (face-up card included), the next face-down
        draw, each seat's face-down draws.  # (B, 4) int64"""
        k = self.field("trick_number")[:, 0]
        stock = self.field("deck")[:, NUM_CARDS - STOCK_SIZE :]
        pos = np.arange(STOCK_SIZE)
        on_table = (pos >= 2 * k[:, None]) & (k[:, None] < PHASE1_TRICKS)
        cards = np.left_shift(1, np.where(stock >= 0, stock, 0))
        next_draw = (pos == 2 * k[:, None] + 1) & on_table
        return np.stack(
            [
                np.bitwise_or.reduce(np.where(on_table, cards, 0), axis=1),
                np.bitwise_or.reduce(np.where(next_draw, cards, 0), axis=1),
                self.field("draws")[:, 0],
                self.field("draws")[:, 1],
            ],
            axis=1,
        )

    def export_state(self, env: int) -> GermanWhistState:
        """Environment ``env`` as a rules state (``deal_summary`` is not kept by the engine: it is left empty)."""
        st: list[int] = self._state[self._env_index(env)].tolist()
        n = NUM_PLAYERS
        state = GermanWhistState(n, st[DEALER])
        prizes, draws = st[PRIZES : PRIZES + n], st[DRAWS : DRAWS + n]
        # every card a seat played was dealt to it or drawn by it: the dealt hands complete the owners
        self._export_common(state, st, [st[DEALT + s] | prizes[s] | draws[s] for s in range(n)])
        state.stock = tuple(st[STOCK : STOCK + STOCK_SIZE])
        state.prizes = prizes
        state.draws = draws
        state.phase1_won = st[PHASE1_WON : PHASE1_WON + n]
        state.scores = [int(r) for r in st[RET : RET + n]]  # the series' balance is the returns so far
        return state

    def import_state(self, env: int, state: State) -> None:
        """Set environment ``env`` to ``state`` (a ``GermanWhistState`` in play or over, checked by the rules'
        invariants). The engine keeps the stock in the deck's second half; the first half, the deck the hands
        were dealt from, is not known: :meth:`decks` gives -1s there. Before any :meth:`reset`, the other
        environments have no episode: the next :meth:`step` starts theirs (and ignores their actions), as after an
        ended episode."""
        i = self._checked_import(env, state, GermanWhistState)
        assert isinstance(state, GermanWhistState)  # checked: for mypy
        row = self._import_common(state)
        row[STOCK : STOCK + STOCK_SIZE] = state.stock
        row[PRIZES : PRIZES + NUM_PLAYERS] = state.prizes
        row[DRAWS : DRAWS + NUM_PLAYERS] = state.draws
        row[PHASE1_WON : PHASE1_WON + NUM_PLAYERS] = state.phase1_won
        self._state[i] = row
        self._started = True
