"""English Humbug in the batched engine: the kernels of RULES.md §3 over :mod:`whist_env.vector.core`.

Two players, all 52 cards dealt alternately from the non-dealer, 26 tricks; the dealer's last card sets trump and
stays an ordinary card of his hand (its id is in every observation). Every option is read from the config array at
run time (one compiled kernel serves them all): ``hidden_hand`` (each seat sees both dealt hands only at its study
step, before its first card) or ``open_table`` (the opponent's hand stays visible), ``include_history`` and the
series of ``num_deals`` deals. The plain twin these kernels are tested against is
:class:`whist_env.games.humbug.rules.Humbug` with its encoder (``tests/vector``).
"""

from __future__ import annotations

import numpy as np

from whist_env.cards import NUM_CARDS
from whist_env.errors import OptionError
from whist_env.games.humbug.rules import NUM_PLAYERS, TRICKS, Humbug
from whist_env.rules.core import PHASE_OVER, State
from whist_env.vector.core import (
    DEAL_INDEX,
    DEAL_TRICKS,
    DEALER,
    DEALT,
    DECK,
    FULL,
    GAME_SLOTS,
    HAND,
    LAST_ACTOR,
    LEADER,
    MAX_SEATS,
    PHASE,
    PLAYED,
    RET,
    TO_ACT,
    TRICK_NO,
    TRUMP,
    TURN_PUBLIC,
    TURN_UP,
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
    put_bits,
    put_scalar,
    rng_below,
    scratch,
    shuffle_deck,
    write_common,
)

# The config array.
CFG_OPEN, CFG_RECALL, CFG_NUM_DEALS = range(3)
# The game's observation slots (after the common ones).
SLOT_INIT_ME, SLOT_INIT_OPP, SLOT_AHEAD, SLOT_BEHIND, SLOT_DEALS_LEFT = range(GAME_SLOTS, GAME_SLOTS + 5)


@jit_borrow
def start_deal(st: np.ndarray) -> None:
    """RULES.md §3.1: deal alternately from the non-dealer; ``DECK[51]`` (the dealer's last card) sets trump and
    stays in his hand, not public; §3.2: the non-dealer leads."""
    first = 1 - st[DEALER]
    deal_round_robin(st, NUM_PLAYERS, first, NUM_CARDS)
    st[DEAL_TRICKS] = TRICKS
    st[TURN_UP] = st[DECK + NUM_CARDS - 1]
    st[TURN_PUBLIC] = 0
    st[TRUMP] = st[TURN_UP] // 13
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
def studying(st: np.ndarray, me: int) -> bool:
    """Whether seat ``me`` is at its study step (RULES.md §3.3): it has not played a card this deal yet."""
    return st[PHASE] != PHASE_OVER and st[PLAYED + me] == 0


@jit_borrow
def seat_knowledge(st: np.ndarray, open_table: bool, recall: bool, me: int, known: np.ndarray) -> int:
    """What seat ``me`` knows of the cards (the rules' view): fills ``known`` (per seat, the cards known to be in
    that hand) and returns the cards ``me`` cannot place (the heuristic's port reads them too)."""
    opp = 1 - me
    hand = st[HAND + me]
    known[me] = hand
    # RULES.md §3.3: a seat studies both dealt hands until it plays its first card; open_table shows the
    # opponent's hand throughout
    known[opp] = st[HAND + opp] if st[PHASE] != PHASE_OVER and (open_table or studying(st, me)) else 0
    seen = hand | known[opp]  # the turn-up is in the dealer's hand, not on the table: it proves nothing seen
    return FULL & ~(seen | cards_gone(st, recall))


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
    unseen = seat_knowledge(st, cfg[CFG_OPEN] != 0, recall, me, known)
    write_common(bits, offs, st, me, known, unseen, st[TURN_UP], recall)
    if studying(st, me):
        put_bits(bits, offs[SLOT_INIT_ME, 0], st[DEALT + me])
        put_bits(bits, offs[SLOT_INIT_OPP, 0], st[DEALT + opp])
    expand(bits, obs_row, lut)
    if offs[SLOT_DEALS_LEFT, 0] >= 0:  # a series: the balance (the returns so far) and the deals left, as scalars
        num_deals = cfg[CFG_NUM_DEALS]
        span = 1.0 / float(TRICKS * num_deals)
        balance = st[RET + me]
        put_scalar(obs_row, offs, SLOT_AHEAD, balance * span if balance > 0 else 0.0)
        put_scalar(obs_row, offs, SLOT_BEHIND, -balance * span if balance < 0 else 0.0)
        put_scalar(obs_row, offs, SLOT_DEALS_LEFT, (num_deals - st[DEAL_INDEX]) * (1.0 / num_deals))
    expand_mask(legal_mask(st) if me == st[TO_ACT] and not over else 0, mask_row, mask_lut)


@jit_borrow_inline
def step_row(st: np.ndarray, rng: np.ndarray, i: int, cfg: np.ndarray, action: int, rewards_row: np.ndarray) -> bool:
    """Play ``action`` (legal) for the seat to act; after a deal's last trick score it into ``rewards_row`` (§3.4:
    ± the trick difference) and deal the next one of a series; returns whether the episode is over (the batch loop
    then ends it)."""
    if play_card(st, action) >= 0 and st[TRICK_NO] == TRICKS:
        diff = st[WON] - st[WON + 1]
        rewards_row[0] = diff
        rewards_row[1] = -diff
        st[RET] += diff
        st[RET + 1] -= diff
        if st[DEAL_INDEX] + 1 >= cfg[CFG_NUM_DEALS]:
            return True
        st[DEAL_INDEX] += 1
        st[DEALER] = 1 - st[DEALER]  # two players: the deal alternates
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


class HumbugVector(RawVectorEnv):
    """``humbug_v0`` batched: every option of the game (see :class:`RawVectorEnv` for the API)."""

    reset_kernel = reset_kernel
    step_kernel = step_kernel
    observe_kernel = observe_kernel
    game_piece_names = (
        "initial_layout[me]",
        "initial_layout[opponent]",
        "balance_ahead",
        "balance_behind",
        "deals_left",
    )
    game: Humbug

    def config_array(self) -> np.ndarray:
        game = self.game
        return np.array([game.open_table, game.recall, game.config.num_deals], np.int64)

    def export_state(self, env: int) -> State:
        """Environment ``env`` as a rules state (``deal_summary`` is not kept by the engine: it is left empty)."""
        st: list[int] = self._state[self._env_index(env)].tolist()
        state = State(NUM_PLAYERS, st[DEALER])
        self._export_common(state, st, st[DEALT : DEALT + NUM_PLAYERS])  # no card changes hands in a deal
        state.scores = st[RET : RET + NUM_PLAYERS]  # the series' balance is the returns so far
        return state

    def import_state(self, env: int, state: State) -> None:
        """Set environment ``env`` to ``state`` (a Humbug ``State`` in play or over, checked by the rules'
        invariants). The engine does not know the deck it was dealt from: :meth:`decks` gives -1s for it. Before
        any :meth:`reset`, the other environments have no episode: the next :meth:`step` starts theirs (and ignores
        their actions), as after an ended episode."""
        if type(state) is not State:  # Humbug's rules keep the plain State: a game's subclass is another game
            raise OptionError(f"{self.game_id}: import_state takes a State (Humbug's own), got {type(state).__name__}")
        i = self._checked_import(env, state, State)
        if state.scores != [int(r) for r in state.returns]:
            raise OptionError(
                f"{self.game_id}: import_state needs the balance (scores) equal to the returns, got scores "
                f"{state.scores} and returns {state.returns}"
            )
        self._state[i] = self._import_common(state)
        self._started = True
