"""Oh Hell in the batched engine: the kernels of RULES.md §4 over :mod:`whist_env.vector.core`.

Every option of the game is read from the config array at run time (one compiled kernel serves them all): 2 to 8
players, the three trump modes, both exact-bid scorings and both miss scorings, a match over the schedule or one
deal of ``hand_size`` cards (``max_cards``/``start_cards`` cap the schedule), and ``include_history``.

A deal has a bidding phase before the card play: bid ``b`` is action ``52 + b``, so the action space (up to
``52 + 27`` actions) is wider than one 64-bit mask; the kernels keep the legal cards and the legal bids as two
masks and write the action mask from both. The plain twin these kernels are tested against is
:class:`whist_env.games.oh_hell.rules.OhHell` with its encoder (``tests/vector``).
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from whist_env.cards import NUM_CARDS
from whist_env.errors import IllegalActionError
from whist_env.games.oh_hell.encoding import BEHIND_MAX, SCORE_UNIT
from whist_env.games.oh_hell.rules import BID_BASE, TRUMP_MODES, OhHell, OhHellExtras, OhHellState
from whist_env.rules.core import PHASE_BIDDING, PHASE_OVER, PHASE_PLAY, State
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
    LEADER,
    MAX_SEATS,
    NUM_SEATS,
    PHASE,
    RET,
    TO_ACT,
    TRICK_NO,
    TRUMP,
    TURN_UP,
    WON,
    RawVectorEnv,
    cards_gone,
    deal_round_robin,
    env_list,
    expand,
    jit,
    jit_borrow,
    jit_borrow_inline,
    legal_mask,
    play_card,
    put_bits,
    put_flags,
    put_one,
    rng_below,
    scratch,
    shuffle_deck,
    write_common,
)
from whist_env.view import PlayerView

# The game's own columns: each seat's bid (-1: not yet), how many bids were made, the card drawn for trump (-1:
# none), the cards set aside after the deal (a mask).
BIDS = GAME_COLS  # MAX_SEATS
NUM_BIDS = BIDS + MAX_SEATS
DRAWN = NUM_BIDS + 1
SET_ASIDE = DRAWN + 1
# The config array: trump mode (an index of TRUMP_MODES), prefix_one scoring, per-trick miss points, recall, the
# number of deals, then the hand size of each deal.
CFG_TRUMP, CFG_PREFIX, CFG_PER_TRICK, CFG_RECALL, CFG_NUM_DEALS, CFG_SCHEDULE = range(6)
MODE_DRAWN = TRUMP_MODES.index("drawn_card")
MODE_TURN_UP = TRUMP_MODES.index("turn_up")
# The game's observation slots (after the common ones); bid, need and behind have one slot per relative seat.
SLOT_PHASE, SLOT_HAND_SIZE, SLOT_DEALS_AFTER, SLOT_DRAWN, SLOT_LOST = range(GAME_SLOTS, GAME_SLOTS + 5)
SLOT_BID = GAME_SLOTS + 5
SLOT_NEED = SLOT_BID + MAX_SEATS
SLOT_BEHIND = SLOT_NEED + MAX_SEATS


@jit_borrow
def start_deal(st: np.ndarray, cfg: np.ndarray) -> None:
    """RULES.md §4.2: deal ``n k`` cards of ``DECK`` singly from the dealer's left, set the rest aside; §4.3 the
    trump (the drawn card's suit, or the first undealt card turned up); §4.4 förhand bids first (and leads)."""
    n = st[NUM_SEATS]
    d = st[DEALER]
    k = cfg[CFG_SCHEDULE + st[DEAL_INDEX]]
    dealt = n * k
    deal_round_robin(st, n, (d + 1) % n, dealt)
    st[DEAL_TRICKS] = k
    rest = dealt
    if cfg[CFG_TRUMP] == MODE_TURN_UP and dealt < NUM_CARDS:
        st[TURN_UP] = st[DECK + dealt]  # out of play, face up for the whole deal
        st[TRUMP] = st[TURN_UP] // 13
        rest += 1
    elif cfg[CFG_TRUMP] == MODE_DRAWN:
        st[TRUMP] = st[DRAWN] // 13
    aside = 0
    for c in range(rest, NUM_CARDS):
        aside |= 1 << st[DECK + c]
    st[SET_ASIDE] = aside
    for s in range(MAX_SEATS):
        st[BIDS + s] = -1
    st[NUM_BIDS] = 0
    st[PHASE] = PHASE_BIDDING
    st[LEADER] = (d + 1) % n
    st[TO_ACT] = st[LEADER]


@jit_borrow
def draw_trump_card(st: np.ndarray, rng: np.ndarray, i: int, cfg: np.ndarray) -> None:
    """RULES.md §4.3 drawn_card: a card drawn from the full pack before the deal (and the shuffle), returned."""
    st[DRAWN] = rng_below(rng, i, NUM_CARDS) if cfg[CFG_TRUMP] == MODE_DRAWN else -1


@jit_borrow
def new_episode(st: np.ndarray, rng: np.ndarray, i: int, cfg: np.ndarray, deck: np.ndarray, dealer: int) -> None:
    """Start an episode: the given dealer or one drawn, the trump card drawn, the given deck (``deck[0] >= 0``)
    or one shuffled (RULES.md §0.3 draw order)."""
    n = st[NUM_SEATS]
    st[DEALER] = dealer if dealer >= 0 else rng_below(rng, i, n)
    st[DEAL_INDEX] = 0
    for s in range(MAX_SEATS):
        st[RET + s] = 0
    draw_trump_card(st, rng, i, cfg)
    if deck[0] >= 0:
        for c in range(NUM_CARDS):
            st[DECK + c] = deck[c]
    else:
        shuffle_deck(st, rng, i)
    start_deal(st, cfg)


@jit_borrow
def legal_bids(st: np.ndarray) -> int:
    """RULES.md §4.4: the legal bids as a mask (bit ``b``: bid ``b``), 0..k less the one the hook rule forbids."""
    k = st[DEAL_TRICKS]
    n = st[NUM_SEATS]
    mask = (1 << (k + 1)) - 1
    if st[NUM_BIDS] == n - 1:
        others = 0
        for s in range(n):
            if st[BIDS + s] >= 0:
                others += st[BIDS + s]
        forbidden = k - others
        if 0 <= forbidden <= k:
            mask &= ~(1 << forbidden)
    return mask


@jit_borrow
def is_legal(st: np.ndarray, action: int) -> bool:
    """Whether ``action`` is legal for the seat to act (a bid in the bidding, a card in the play)."""
    if st[PHASE] == PHASE_BIDDING:
        b = action - BID_BASE
        return 0 <= b <= st[DEAL_TRICKS] and (legal_bids(st) >> b) & 1 == 1
    return 0 <= action < NUM_CARDS and (legal_mask(st) >> action) & 1 == 1


@jit_borrow
def check_actions(state: np.ndarray, actions: np.ndarray, bad: np.ndarray) -> int:
    """Mark in ``bad`` each playing environment whose action is not legal now; returns how many."""
    count = 0
    for i in range(state.shape[0]):
        st = state[i]
        bad[i] = st[PHASE] != PHASE_OVER and not is_legal(st, actions[i])
        count += bad[i]
    return count


@jit_borrow
def deal_score(bid: int, took: int, prefix_one: bool, per_trick: bool) -> int:
    """RULES.md §4.6: an exact bid scores "1" written before it (prefix_one: 10 + bid below 10, else 100 + bid;
    bids are at most 26) or 10 + bid; a miss scores 0, or one point per trick taken."""
    if took == bid:
        return (100 + bid if bid >= 10 else 10 + bid) if prefix_one else 10 + bid
    return took if per_trick else 0


@jit_borrow
def observe_row(
    bits: np.ndarray,
    mask_bits: np.ndarray,
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
    output rows (uint64 words), built in the scratches ``bits`` and ``mask_bits``; ``known`` is scratch for
    :func:`seat_knowledge` (§4.7: no seat knows another's cards)."""
    bits[:] = 0
    n = st[NUM_SEATS]
    recall = cfg[CFG_RECALL] != 0
    phase = st[PHASE]
    write_common(bits, offs, st, me, known, seat_knowledge(st, recall, me, known), st[TURN_UP], recall)
    if phase == PHASE_BIDDING:
        put_one(bits, offs, SLOT_PHASE, 0)
    elif phase == PHASE_PLAY:
        put_one(bits, offs, SLOT_PHASE, 1)
    k = st[DEAL_TRICKS]
    put_one(bits, offs, SLOT_HAND_SIZE, k)
    put_one(bits, offs, SLOT_DEALS_AFTER, cfg[CFG_NUM_DEALS] - 1 - st[DEAL_INDEX])
    if st[DRAWN] >= 0:
        put_one(bits, offs, SLOT_DRAWN, st[DRAWN])
    left = k
    lead = st[RET]
    for s in range(n):
        left -= st[WON + s]
        lead = max(lead, st[RET + s])
    lost = 0
    s = me - 1
    for r in range(n):
        s = s + 1 if s + 1 < n else 0  # (me + r) % n, without a division
        b = st[BIDS + s]
        put_one(bits, offs, SLOT_BID + r, b + 1)  # entry 0: not yet
        if b >= 0:
            took = st[WON + s]
            if took <= b:
                put_one(bits, offs, SLOT_NEED + r, b - took)
                if b - took > left:
                    lost |= 1 << r
            else:
                lost |= 1 << r
        gap = -((st[RET + s] - lead) // SCORE_UNIT)  # in tens of points, rounded up
        put_one(bits, offs, SLOT_BEHIND + r, min(gap, BEHIND_MAX))
    put_flags(bits, offs, SLOT_LOST, lost)
    expand(bits, obs_row, lut)
    mask_bits[:] = 0
    if me == st[TO_ACT] and phase != PHASE_OVER:
        if phase == PHASE_BIDDING:
            put_bits(mask_bits, BID_BASE, legal_bids(st))
        else:
            put_bits(mask_bits, 0, legal_mask(st))
    expand(mask_bits, mask_row, mask_lut)


@jit_borrow
def seat_knowledge(st: np.ndarray, recall: bool, me: int, known: np.ndarray) -> int:
    """What seat ``me`` knows of the cards (the rules' view, §4.7): fills ``known`` (its own hand; no seat knows
    another's cards) and returns the cards ``me`` cannot place (the turn-up is out of play, face up; the drawn
    card's place is unknown). The heuristic's port reads them too."""
    n = st[NUM_SEATS]
    hand = st[HAND + me]
    for s in range(n):
        known[s] = 0
    known[me] = hand
    seen = hand | cards_gone(st, recall)
    if st[TURN_UP] >= 0:
        seen |= 1 << st[TURN_UP]
    return FULL & ~seen


@jit_borrow_inline
def step_row(st: np.ndarray, rng: np.ndarray, i: int, cfg: np.ndarray, action: int, rewards_row: np.ndarray) -> bool:
    """Bid or play ``action`` (legal) for the seat to act, score a finished deal into ``rewards_row`` (RULES.md
    §4.6) and deal the next one; returns whether the episode is over (the batch loop then ends it)."""
    n = st[NUM_SEATS]
    if st[PHASE] == PHASE_BIDDING:  # §4.4: one public bid each, clockwise; then förhand leads
        seat = st[TO_ACT]
        st[BIDS + seat] = action - BID_BASE
        st[NUM_BIDS] += 1
        st[LAST_ACTOR] = seat
        if st[NUM_BIDS] == n:
            st[PHASE] = PHASE_PLAY
            st[TO_ACT] = (st[DEALER] + 1) % n
        else:
            st[TO_ACT] = (seat + 1) % n
    elif play_card(st, action) >= 0 and st[TRICK_NO] == st[DEAL_TRICKS]:
        prefix_one = cfg[CFG_PREFIX] != 0
        per_trick = cfg[CFG_PER_TRICK] != 0
        for s in range(n):
            score = deal_score(st[BIDS + s], st[WON + s], prefix_one, per_trick)
            rewards_row[s] = score
            st[RET + s] += score
        if st[DEAL_INDEX] + 1 >= cfg[CFG_NUM_DEALS]:
            return True
        st[DEAL_INDEX] += 1
        st[DEALER] = (st[DEALER] + 1) % n  # §4.1: the deal passes to the left
        draw_trump_card(st, rng, i, cfg)
        shuffle_deck(st, rng, i)
        start_deal(st, cfg)
    return False


@jit_borrow
def step_one(st: np.ndarray, rng: np.ndarray, i: int, cfg: np.ndarray, action: int, rewards_row: np.ndarray) -> bool:
    """:func:`step_row` as a call, for kernels in other files (the search's playouts, ``search.py``): an inlined
    function must stay in its own file, where numba's cache sees its changes."""
    return step_row(st, rng, i, cfg, action, rewards_row)


# What the per-row functions above take besides the batch loops' own arguments (whist_env/vector/template.py): the
# mask needs bits of its own (more than 64 actions).
LOOP_ARGS = {
    "episode_args": "cfg",
    "check_args": "",
    "step_scratch": "",
    "observe_scratch": "mask_bits = scratch(mask, mask_lut)",
}


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
    mask_bits = scratch(mask, mask_lut)
    reset_rows(
        state, rng, cfg, offs, lut, mask_lut, have_decks, decks, dealers, current, obs, mask, rewards,
        bits, known, none, mask_bits,
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
    mask_bits: np.ndarray,
) -> None:
    """:func:`reset_kernel`'s loop over the environments, in the scratches it allocated."""
    for i in range(state.shape[0]):
        st = state[i]
        new_episode(st, rng, i, cfg, decks[i] if have_decks else none, dealers[i])
        for s in range(rewards.shape[1]):
            rewards[i, s] = 0
        current[i] = st[TO_ACT]
        observe_row(bits, mask_bits, obs[i], mask[i], st, cfg, offs, lut, mask_lut, st[TO_ACT], known)


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
    mask_bits = scratch(mask, mask_lut)
    step_rows(
        state, rng, cfg, offs, lut, mask_lut, actions, current, obs, mask, rewards, terminated,
        bits, known, none, mask_bits,
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
    mask_bits: np.ndarray,
) -> None:
    """:func:`step_kernel`'s loop over the environments, with legal actions, in the scratches it allocated."""
    for i in range(state.shape[0]):
        st = state[i]
        for s in range(rewards.shape[1]):
            rewards[i, s] = 0
        if st[PHASE] == PHASE_OVER:  # next-step autoreset: the action is ignored
            new_episode(st, rng, i, cfg, none, -1)
        elif step_row(st, rng, i, cfg, actions[i], rewards[i]):  # the episode is over
            st[PHASE] = PHASE_OVER
            st[TO_ACT] = -1
            terminated[i] = True
        seat = st[TO_ACT] if st[PHASE] != PHASE_OVER else st[LAST_ACTOR]
        current[i] = st[TO_ACT]
        observe_row(bits, mask_bits, obs[i], mask[i], st, cfg, offs, lut, mask_lut, seat, known)


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
    mask_bits = scratch(mask, mask_lut)
    observe_rows(state, cfg, offs, lut, mask_lut, seats, obs, mask, bits, known, mask_bits)


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
    mask_bits: np.ndarray,
) -> None:
    """:func:`observe_kernel`'s loop over the environments, in the scratches it allocated."""
    for i in range(state.shape[0]):
        observe_row(bits, mask_bits, obs[i], mask[i], state[i], cfg, offs, lut, mask_lut, seats[i], known)


# --- end generated: batch loops ---


class OhHellVector(RawVectorEnv):
    """``oh_hell_v0`` batched: every option of the game (see :class:`RawVectorEnv` for the API).

    With ``trump_mode="drawn_card"`` each environment draws the trump card from its own generator before every
    deal, also before a first deal from a deck given to :meth:`reset` (as the rules do without a ``trump_card``);
    ``field("drawn_card")`` shows it.
    """

    reset_kernel = reset_kernel
    step_kernel = step_kernel
    observe_kernel = observe_kernel
    game_fields: ClassVar[dict[str, tuple[int, int]]] = {
        "bids": (BIDS, MAX_SEATS),
        "num_bids": (NUM_BIDS, 1),
        "drawn_card": (DRAWN, 1),
        "set_aside": (SET_ASIDE, 1),
    }
    game: OhHell

    @property  # a property, not the base's class attribute: the names follow the seats at the table
    def game_piece_names(self) -> tuple[str, ...]:  # type: ignore[override]
        """The layout names of the game's slots, from ``GAME_SLOTS`` on (per-seat slots: relative seats)."""
        labels = self.encoder.seat_labels
        per_seat = [
            [f"{piece}[{labels[r]}]" if r < len(labels) else "" for r in range(MAX_SEATS)]
            for piece in ("bid", "need", "behind")
        ]
        return ("phase", "hand_size", "deals_after", "drawn_card", "lost", *(n for row in per_seat for n in row))

    def config_array(self) -> np.ndarray:
        cfg = self.game.config
        head = [
            TRUMP_MODES.index(cfg.trump_mode),
            cfg.exact_score_mode == "prefix_one",
            cfg.miss_points == "per_trick",
            cfg.include_history,
            len(self.game.schedule),
        ]
        return np.array(head + list(self.game.schedule), np.int64)

    def hidden_masks(self) -> np.ndarray:
        """The spec's hidden piece: the cards set aside after the deal.  # (B, 1) int64"""
        return self.field("set_aside").copy()

    def legal_actions(self, env: int) -> tuple[int, ...]:
        """The legal actions of the seat to act in environment ``env`` (bids as ``52 + bid``), ascending."""
        st = self._state[self._env_index(env)]
        if st[PHASE] == PHASE_BIDDING:
            bids = int(legal_bids(st))
            return tuple(BID_BASE + b for b in range(bids.bit_length()) if (bids >> b) & 1)
        cards = int(legal_mask(st))
        return tuple(c for c in range(NUM_CARDS) if (cards >> c) & 1)

    def _illegal(self, actions: np.ndarray) -> IllegalActionError:
        """The error naming the environments whose action was refused (the first one's legal actions in full)."""
        bad = np.flatnonzero(self._bad)
        first = int(bad[0])
        seat = int(self._state[first, TO_ACT])
        legal = self.legal_actions(first)
        a = int(actions[first])
        describe = self.game.action_text
        phase = "bidding: bid with actions 52 + bid" if self._state[first, PHASE] == PHASE_BIDDING else "play"
        return IllegalActionError(
            f"{self.game_id}: illegal action in environment(s) {env_list(bad)}; no environment changed. "
            f"Environment {first} ({phase}): seat {seat} cannot play {describe(a)}; legal: "
            + " ".join(describe(c) for c in legal),
            seat,
            a,
            legal,
        )

    def export_state(self, env: int) -> OhHellState:
        """Environment ``env`` as a rules state (``deal_summary`` is not kept by the engine: it is left empty)."""
        st: list[int] = self._state[self._env_index(env)].tolist()
        n = self.num_players
        state = OhHellState(n, st[DEALER])
        self._export_common(state, st, st[DEALT : DEALT + n])  # no card changes hands in a deal
        state.bids = st[BIDS : BIDS + n]
        state.num_bids = st[NUM_BIDS]
        state.drawn_card = st[DRAWN]
        state.set_aside = st[SET_ASIDE]
        state.scores = st[RET : RET + n]  # §4.6: the totals are the returns so far
        return state

    def _view_row(self, view: PlayerView) -> np.ndarray:
        """The common columns, in bidding too, and the deal's size, the bids and the drawn trump card (the search's
        playouts, :mod:`whist_env.games.oh_hell.search`, start from it in either phase)."""
        extra: OhHellExtras = view.extra  # type: ignore[assignment]
        n = view.num_players
        row = self._view_row_common(view)
        row[PHASE] = PHASE_BIDDING if view.phase == "bidding" else PHASE_PLAY
        row[LAST_ACTOR] = view.to_act
        row[DEAL_TRICKS] = extra.hand_size
        row[BIDS : BIDS + MAX_SEATS] = -1
        row[BIDS : BIDS + n] = extra.bids
        row[NUM_BIDS] = sum(b >= 0 for b in extra.bids)
        row[DRAWN] = extra.drawn_card
        return row

    def import_state(self, env: int, state: State) -> None:
        """Set environment ``env`` to ``state`` (an ``OhHellState`` bidding, in play or over, checked by the rules'
        invariants). The engine does not know the deck it was dealt from: :meth:`decks` gives -1s for it. Before
        any :meth:`reset`, the other environments have no episode: the next :meth:`step` starts theirs (and ignores
        their actions), as after an ended episode."""
        i = self._checked_import(env, state, OhHellState, (PHASE_BIDDING, PHASE_PLAY, PHASE_OVER))
        assert isinstance(state, OhHellState)  # checked: for mypy
        row = self._import_common(state)
        row[BIDS : BIDS + MAX_SEATS] = -1
        row[BIDS : BIDS + self.num_players] = state.bids
        row[NUM_BIDS] = state.num_bids
        row[DRAWN] = state.drawn_card
        row[SET_ASIDE] = state.set_aside
        self._state[i] = row
        self._started = True
