"""Swedish Humbug whist in the batched engine: the kernels of RULES.md §1 over :mod:`whist_env.vector.core`.

Two players and two face-down blinds: ``DECK[k]`` goes to ``[L, N, R, D][k % 4]`` (§1.3), ``L`` being the
non-dealer's blind and ``R`` the dealer's. Each deal opens with the exchange phase (§1.4: the non-dealer, then the
dealer, chooses KEEP (action 52) or EXCHANGE (53)); the dealer then leads 13 tricks (§1.5), scored with trick
points first, then the honours of the hand actually played (§1.6), in games worth 3/2/1 and a rubber (§1.7).
Every option is read from the config array at run time (one compiled kernel serves them all): the exchange order,
the episode (rubber, game or deal) and ``include_history``. The plain twin these kernels are tested against is
:class:`whist_env.games.humbug_whist.rules.HumbugWhist` with its encoder (``tests/vector``).
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from whist_env.cards import NUM_CARDS
from whist_env.errors import IllegalActionError
from whist_env.games.classic_whist.engine import game_value, honour_points, trick_points
from whist_env.games.humbug_whist.rules import (
    EXCHANGE,
    EXCHANGE_ACTIONS,
    GAME_POINTS,
    KEEP,
    NUM_PLAYERS,
    TRICKS,
    UNDECIDED,
    HumbugWhist,
    HumbugWhistState,
)
from whist_env.rules.core import PHASE_EXCHANGE, PHASE_OVER, PHASE_PLAY, State
from whist_env.rules.scoring import GAMES_TO_WIN_RUBBER, HONOUR_RANKS, RUBBER_BONUS
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
    NUM_BITS,
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
    deal_round_robin,
    env_list,
    expand,
    expand_mask,
    jit,
    jit_borrow,
    jit_borrow_inline,
    legal_mask,
    play_card,
    put_bits,
    put_one,
    rng_below,
    scratch,
    shuffle_deck,
    write_common,
)

# The game's own columns (absolute seats, two columns each unless said): the blinds while untaken, the hands put
# away, the exchange decisions (-1 undecided, 0 keep, 1 exchange), game points, trick points in the game, games won,
# the values of the games each seat won (GAMES_TO_WIN_RUBBER each), rubber points, deals played in the game (one).
BLINDS = GAME_COLS
PUT_AWAY = BLINDS + 2
DECISIONS = PUT_AWAY + 2
GAME_PTS = DECISIONS + 2
TRICK_PTS = GAME_PTS + 2
GAMES_WON = TRICK_PTS + 2
GAME_VALUES = GAMES_WON + 2
RUBBER_PTS = GAME_VALUES + 2 * GAMES_TO_WIN_RUBBER
GAME_DEALS = RUBBER_PTS + 2
# The config array; the episode as EPISODE_RUBBER, EPISODE_GAME or EPISODE_DEAL.
CFG_SIMULTANEOUS, CFG_EPISODE, CFG_RECALL = range(3)
EPISODES = ("rubber", "game", "deal")
EPISODE_RUBBER, EPISODE_GAME, EPISODE_DEAL = range(3)
# The game's observation slots (after the common ones).
(
    SLOT_PHASE,
    SLOT_EXCHANGE_ME,
    SLOT_EXCHANGE_OPP,
    SLOT_STATUS,
    SLOT_PUT_AWAY,
    SLOT_DISCARDED,
    SLOT_GP_ME,
    SLOT_GP_OPP,
    SLOT_TP_ME,
    SLOT_TP_OPP,
    SLOT_GW_ME,
    SLOT_GW_OPP,
    SLOT_RP_ME,
    SLOT_RP_OPP,
) = range(GAME_SLOTS, GAME_SLOTS + 14)
# the turn_up_status piece's entries (rules.humbug_whist.TURN_UP_STATUSES)
STATUS_FACE_UP, STATUS_TAKEN_UP, STATUS_DISCARDED = range(3)


@jit_borrow
def start_deal(st: np.ndarray) -> None:
    """RULES.md §1.3: ``DECK[k]`` to ``[L, N, R, D][k % 4]``; ``DECK[51]`` (the dealer's) is turned up for trump;
    §1.4: the exchange phase opens with the non-dealer; §1.5: the dealer will lead."""
    d = st[DEALER]
    n = 1 - d
    deal_round_robin(st, 4, 0, NUM_CARDS)  # the four hands L, N, R, D in HAND[0..3], then put in their places
    left, non_dealer, right, dealer = st[HAND], st[HAND + 1], st[HAND + 2], st[HAND + 3]
    for s in range(4):
        st[HAND + s] = 0
    st[HAND + n] = non_dealer
    st[HAND + d] = dealer
    for s in range(4):
        st[DEALT + s] = st[HAND + s]
    st[BLINDS + n] = left  # §1.1: the blind at each seat's right
    st[BLINDS + d] = right
    for s in range(NUM_PLAYERS):
        st[PUT_AWAY + s] = 0
        st[DECISIONS + s] = UNDECIDED
    st[DEAL_TRICKS] = TRICKS
    st[TURN_UP] = st[DECK + NUM_CARDS - 1]
    st[TURN_PUBLIC] = 1
    st[TRUMP] = st[TURN_UP] // 13
    st[PHASE] = PHASE_EXCHANGE
    st[TO_ACT] = n
    st[LEADER] = d


@jit_borrow
def new_episode(st: np.ndarray, rng: np.ndarray, i: int, deck: np.ndarray, dealer: int) -> None:
    """Start an episode: the given dealer or one drawn, the given deck (``deck[0] >= 0``) or one shuffled."""
    st[DEALER] = dealer if dealer >= 0 else rng_below(rng, i, NUM_PLAYERS)
    st[DEAL_INDEX] = 0
    for s in range(MAX_SEATS):
        st[RET + s] = 0
    for c in range(GAME_PTS, GAME_DEALS + 1):  # the scores of the game and the rubber
        st[c] = 0
    if deck[0] >= 0:
        for c in range(NUM_CARDS):
            st[DECK + c] = deck[c]
    else:
        shuffle_deck(st, rng, i)
    start_deal(st)


@jit_borrow
def legal_actions(st: np.ndarray) -> int:
    """Legal actions of the seat to act as a mask over the 54 actions: KEEP and EXCHANGE in the exchange phase."""
    if st[PHASE] == PHASE_EXCHANGE:
        return EXCHANGE_ACTIONS
    return legal_mask(st)


@jit_borrow
def check_actions(state: np.ndarray, actions: np.ndarray, bad: np.ndarray) -> int:
    """Mark in ``bad`` each playing environment whose action is not legal now; returns how many (the step kernel
    changes nothing when there are any). Environments whose episode is over are not checked (their action is
    ignored)."""
    count = 0
    for i in range(state.shape[0]):
        st = state[i]
        bad[i] = False
        if st[PHASE] == PHASE_OVER:
            continue
        a = actions[i]
        if a < 0 or a > EXCHANGE or not (legal_actions(st) >> a) & 1:
            bad[i] = True
            count += 1
    return count


@jit_borrow
def exchange(st: np.ndarray, seat: int) -> None:
    """RULES.md §1.4: a seat that chose EXCHANGE puts its hand away and takes the blind at its right; a dealer's
    turn-up goes out with his old hand (trump stays)."""
    if st[DECISIONS + seat] != 1:
        return
    st[PUT_AWAY + seat] = st[HAND + seat]
    st[HAND + seat] = st[BLINDS + seat]
    st[BLINDS + seat] = 0
    if seat == st[DEALER]:
        st[TURN_PUBLIC] = 0


@jit_borrow
def decide(st: np.ndarray, action: int, simultaneous: bool) -> None:
    """RULES.md §1.4: KEEP or EXCHANGE for the seat to act, the non-dealer (public at once, or with the
    simultaneous order once both decided) then the dealer, who then leads (§1.5)."""
    seat = st[TO_ACT]
    d = st[DEALER]
    st[DECISIONS + seat] = action - KEEP
    st[LAST_ACTOR] = seat
    if seat != d:
        if not simultaneous:
            exchange(st, seat)
        st[TO_ACT] = d
        return
    if simultaneous:
        exchange(st, 1 - d)
    exchange(st, d)
    st[PHASE] = PHASE_PLAY
    st[LEADER] = d
    st[TO_ACT] = d


@jit_borrow
def end_deal(st: np.ndarray, cfg: np.ndarray, seat_rewards: np.ndarray) -> bool:
    """RULES.md §1.6 scoring (trick points, then honours of the hand played; no game on honours alone), §1.7 game
    value and rubber: score the finished deal into ``seat_rewards`` (2,); returns whether the episode is over (the
    rules' ``HumbugWhist.end_deal``)."""
    t = 0 if st[WON] >= 7 else 1
    scored = trick_points(st[WON + t])
    st[GAME_PTS + t] += scored
    st[TRICK_PTS + t] += scored
    winner = -1
    if st[GAME_PTS + t] >= GAME_POINTS:
        winner = t  # won on tricks: no honours this deal
    else:
        trump = st[TRUMP]
        for s in range(NUM_PLAYERS):
            st[GAME_PTS + s] += honour_points(NUM_BITS[(st[PLAYED + s] >> (13 * trump)) & HONOUR_RANKS])
        for s in range(NUM_PLAYERS):
            if st[GAME_PTS + s] >= GAME_POINTS and st[TRICK_PTS + s] >= 1:
                winner = s
    st[GAME_DEALS] += 1
    seat_rewards[0] = 0
    seat_rewards[1] = 0
    episode = cfg[CFG_EPISODE]
    over = False
    if episode == EPISODE_DEAL:
        diff = st[WON] - st[WON + 1]
        seat_rewards[0] = diff
        seat_rewards[1] = -diff
        over = True
    if winner >= 0:
        loser = 1 - winner
        value = game_value(st[GAME_PTS + loser])
        st[GAME_VALUES + GAMES_TO_WIN_RUBBER * winner + st[GAMES_WON + winner]] = value
        st[GAMES_WON + winner] += 1
        st[RUBBER_PTS + winner] += value
        for s in range(NUM_PLAYERS):  # §1.7 both game scores reset after a game
            st[GAME_PTS + s] = 0
            st[TRICK_PTS + s] = 0
        st[GAME_DEALS] = 0
        if episode == EPISODE_GAME:
            seat_rewards[winner] = value
            seat_rewards[loser] = -value
            over = True
        elif episode == EPISODE_RUBBER and st[GAMES_WON + winner] == GAMES_TO_WIN_RUBBER:
            st[RUBBER_PTS + winner] += RUBBER_BONUS
            # the rubber margin: the winner's game values and bonus less the loser's game values
            margin = st[RUBBER_PTS + winner] - st[RUBBER_PTS + loser]
            seat_rewards[winner] = margin
            seat_rewards[loser] = -margin
            over = True
    return over


@jit_borrow
def seat_knowledge(st: np.ndarray, recall: bool, me: int, known: np.ndarray) -> int:
    """What seat ``me`` knows of the cards (the rules' view): fills ``known`` (per seat, the cards known to be in
    that hand) and returns the cards ``me`` cannot place (the heuristic's port reads them too)."""
    phase = st[PHASE]
    opp = 1 - me
    d = st[DEALER]
    hand = st[HAND + me]
    known[me] = hand
    known[opp] = 0
    t = st[TURN_UP]
    # the turn-up is known to be in the dealer's hand while public, and with recall until the dealer plays it
    if phase != PHASE_OVER and (st[TURN_PUBLIC] or recall) and (st[HAND + d] >> t) & 1 and d != me:
        known[d] |= 1 << t
    # RULES.md §1.4: with recall the hand a seat put away stays in its memory, and a discarded turn-up is public
    seen = hand | known[opp]
    if recall:
        seen |= st[PUT_AWAY + me]
        if st[DECISIONS + d] == 1 and phase != PHASE_EXCHANGE:
            seen |= 1 << t
    if st[TURN_PUBLIC]:
        seen |= 1 << t
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
    phase = st[PHASE]
    over = phase == PHASE_OVER
    opp = 1 - me
    d = st[DEALER]
    t = st[TURN_UP]
    turn_up = t if st[TURN_PUBLIC] else -1
    discarded = st[DECISIONS + d] == 1
    write_common(bits, offs, st, me, known, seat_knowledge(st, recall, me, known), turn_up, recall)
    if phase == PHASE_EXCHANGE:
        put_one(bits, offs, SLOT_PHASE, 0)
    elif phase == PHASE_PLAY:
        put_one(bits, offs, SLOT_PHASE, 1)
    mine = st[DECISIONS + me]
    # §1.4: the opponent's decision is public once made; with the simultaneous order the dealer sees the
    # non-dealer's only once both decided (which ends the exchange phase)
    theirs = st[DECISIONS + opp] if cfg[CFG_SIMULTANEOUS] == 0 or phase != PHASE_EXCHANGE else UNDECIDED
    if mine >= 0:
        put_one(bits, offs, SLOT_EXCHANGE_ME, mine)
    if theirs >= 0:
        put_one(bits, offs, SLOT_EXCHANGE_OPP, theirs)
    if discarded:
        put_one(bits, offs, SLOT_STATUS, STATUS_DISCARDED)
    else:
        put_one(bits, offs, SLOT_STATUS, STATUS_FACE_UP if st[TURN_PUBLIC] else STATUS_TAKEN_UP)
    if recall:
        put_bits(bits, offs[SLOT_PUT_AWAY, 0], st[PUT_AWAY + me])
        if discarded:
            put_one(bits, offs, SLOT_DISCARDED, t)
    put_one(bits, offs, SLOT_GP_ME, st[GAME_PTS + me])
    put_one(bits, offs, SLOT_GP_OPP, st[GAME_PTS + opp])
    put_one(bits, offs, SLOT_TP_ME, st[TRICK_PTS + me])
    put_one(bits, offs, SLOT_TP_OPP, st[TRICK_PTS + opp])
    put_one(bits, offs, SLOT_GW_ME, st[GAMES_WON + me])
    put_one(bits, offs, SLOT_GW_OPP, st[GAMES_WON + opp])
    put_one(bits, offs, SLOT_RP_ME, st[RUBBER_PTS + me])
    put_one(bits, offs, SLOT_RP_OPP, st[RUBBER_PTS + opp])
    expand(bits, obs_row, lut)
    expand_mask(legal_actions(st) if me == st[TO_ACT] and not over else 0, mask_row, mask_lut)


@jit_borrow_inline
def step_row(
    st: np.ndarray, rng: np.ndarray, i: int, cfg: np.ndarray, action: int, rewards_row: np.ndarray, pair: np.ndarray
) -> bool:
    """Apply ``action`` (legal) for the seat to act: an exchange decision or a card; after a deal's last trick
    score it (:func:`end_deal`, the seat rewards in the scratch ``pair`` (2,)) into ``rewards_row`` and deal the
    next one; returns whether the episode is over (the batch loop then ends it)."""
    if st[PHASE] == PHASE_EXCHANGE:
        decide(st, action, cfg[CFG_SIMULTANEOUS] != 0)
    elif play_card(st, action) >= 0 and st[TRICK_NO] == TRICKS:
        over = end_deal(st, cfg, pair)
        for s in range(NUM_PLAYERS):
            rewards_row[s] = pair[s]
            st[RET + s] += pair[s]
        if over:
            return True
        st[DEAL_INDEX] += 1
        st[DEALER] = 1 - st[DEALER]  # §1.2: the deal alternates
        shuffle_deck(st, rng, i)
        start_deal(st)
    return False


# What the per-row functions above take besides the batch loops' own arguments (whist_env/vector/template.py).
LOOP_ARGS = {
    "episode_args": "",
    "check_args": "",
    "step_scratch": "pair = np.zeros(NUM_PLAYERS, np.int64)",
    "observe_scratch": "",
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
    pair = np.zeros(NUM_PLAYERS, np.int64)
    step_rows(
        state, rng, cfg, offs, lut, mask_lut, actions, current, obs, mask, rewards, terminated,
        bits, known, none, pair,
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
    pair: np.ndarray,
) -> None:
    """:func:`step_kernel`'s loop over the environments, with legal actions, in the scratches it allocated."""
    for i in range(state.shape[0]):
        st = state[i]
        for s in range(rewards.shape[1]):
            rewards[i, s] = 0
        if st[PHASE] == PHASE_OVER:  # next-step autoreset: the action is ignored
            new_episode(st, rng, i, none, -1)
        elif step_row(st, rng, i, cfg, actions[i], rewards[i], pair):  # the episode is over
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


class HumbugWhistVector(RawVectorEnv):
    """``humbug_whist_v0`` batched: every option of the game (see :class:`RawVectorEnv` for the API). Actions are
    the rules' 54: the 52 cards, KEEP (52) and EXCHANGE (53)."""

    reset_kernel = reset_kernel
    step_kernel = step_kernel
    observe_kernel = observe_kernel
    game_fields: ClassVar[dict[str, tuple[int, int]]] = {
        "blinds": (BLINDS, 2),
        "put_away": (PUT_AWAY, 2),
        "decisions": (DECISIONS, 2),
        "game_points": (GAME_PTS, 2),
        "trick_points": (TRICK_PTS, 2),
        "games_won": (GAMES_WON, 2),
        "game_values": (GAME_VALUES, 2 * GAMES_TO_WIN_RUBBER),
        "rubber_points": (RUBBER_PTS, 2),
        "game_deals": (GAME_DEALS, 1),
    }
    game_piece_names = (
        "phase",
        "exchange[me]",
        "exchange[opponent]",
        "turn_up_status",
        "put_away",
        "discarded_turn_up",
        "game_points[me]",
        "game_points[opponent]",
        "trick_points[me]",
        "trick_points[opponent]",
        "games_won[me]",
        "games_won[opponent]",
        "rubber_points[me]",
        "rubber_points[opponent]",
    )
    game: HumbugWhist

    def config_array(self) -> np.ndarray:
        cfg = self.game.config
        return np.array([self.game.simultaneous, EPISODES.index(cfg.episode), cfg.include_history], np.int64)

    def hidden_masks(self) -> np.ndarray:
        """The spec's hidden pieces: both blinds (while untaken), then both hands put away.  # (B, 4) int64"""
        return np.concatenate([self.field("blinds"), self.field("put_away")], axis=1)

    def _illegal(self, actions: np.ndarray) -> IllegalActionError:
        """The error naming the environments whose action was refused (the first one's legal actions in full)."""
        bad = np.flatnonzero(self._bad)
        first = int(bad[0])
        st = self._state[first]
        seat = int(st[TO_ACT])
        legal = tuple(a for a in range(self.num_actions) if (int(legal_actions(st)) >> a) & 1)
        a = int(actions[first])
        describe = self.game.action_text
        where = " in the exchange phase (RULES.md §1.4)" if st[PHASE] == PHASE_EXCHANGE else ""
        return IllegalActionError(
            f"{self.game_id}: illegal action in environment(s) {env_list(bad)}; no environment changed. "
            f"Environment {first}: seat {seat} cannot play {describe(a)}{where}; legal: "
            + " ".join(map(describe, legal)),
            seat,
            a,
            legal,
        )

    def export_state(self, env: int) -> HumbugWhistState:
        """Environment ``env`` as a rules state (``deal_summary`` is not kept by the engine: it is left empty)."""
        st: list[int] = self._state[self._env_index(env)].tolist()
        n = NUM_PLAYERS
        state = HumbugWhistState(n, st[DEALER])
        self._export_common(state, st, st[PLAYED : PLAYED + n])  # each card of the history was played by its owner
        state.blinds = st[BLINDS : BLINDS + n]
        state.put_away = st[PUT_AWAY : PUT_AWAY + n]
        state.decisions = st[DECISIONS : DECISIONS + n]
        state.game_points = st[GAME_PTS : GAME_PTS + n]
        state.trick_points = st[TRICK_PTS : TRICK_PTS + n]
        state.games_won = st[GAMES_WON : GAMES_WON + n]
        first = [GAME_VALUES + GAMES_TO_WIN_RUBBER * s for s in range(n)]  # where each seat's game values start
        state.game_values = [tuple(st[first[s] : first[s] + state.games_won[s]]) for s in range(n)]
        state.rubber_points = st[RUBBER_PTS : RUBBER_PTS + n]
        state.game_deals = st[GAME_DEALS]
        state.scores = list(state.game_points)
        return state

    def import_state(self, env: int, state: State) -> None:
        """Set environment ``env`` to ``state`` (a ``HumbugWhistState`` in the exchange phase, in play or over,
        checked by the rules' invariants). The engine does not know the deck it was dealt from: :meth:`decks`
        gives -1s for it. Before any :meth:`reset`, the other environments have no episode: the next :meth:`step`
        starts theirs (and ignores their actions), as after an ended episode."""
        i = self._checked_import(env, state, HumbugWhistState, (PHASE_EXCHANGE, PHASE_PLAY, PHASE_OVER))
        assert isinstance(state, HumbugWhistState)  # checked: for mypy
        n = NUM_PLAYERS
        row = self._import_common(state)
        row[BLINDS : BLINDS + n] = state.blinds
        row[PUT_AWAY : PUT_AWAY + n] = state.put_away
        row[DECISIONS : DECISIONS + n] = state.decisions
        row[GAME_PTS : GAME_PTS + n] = state.game_points
        row[TRICK_PTS : TRICK_PTS + n] = state.trick_points
        row[GAMES_WON : GAMES_WON + n] = state.games_won
        for s in range(n):
            for k, value in enumerate(state.game_values[s]):
                row[GAME_VALUES + GAMES_TO_WIN_RUBBER * s + k] = value
        row[RUBBER_PTS : RUBBER_PTS + n] = state.rubber_points
        row[GAME_DEALS] = state.game_deals
        self._state[i] = row
        self._started = True
