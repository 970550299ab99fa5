"""Classic partnership Whist in the batched engine: the kernels of RULES.md §2 over :mod:`whist_env.vector.core`.

Every option of the game is read from the config array at run time (one compiled kernel serves them all): the
target of 5, 7 or 10 points, honours, the rubber, the trump rotation, one deal or one game per episode, the
win or points reward, and ``include_history``. The plain twin these kernels are tested against is
:class:`whist_env.games.classic_whist.rules.ClassicWhist` with its encoder (``tests/vector``).
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from whist_env.cards import NUM_CARDS
from whist_env.games.classic_whist.rules import (
    NUM_PLAYERS,
    TRICKS,
    ClassicWhist,
    ClassicWhistExtras,
    ClassicWhistState,
)
from whist_env.rules import scoring
from whist_env.rules.core import PHASE_OVER, State
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
    LAST,
    LAST_ACTOR,
    LEADER,
    MAX_SEATS,
    NO_TRUMP,
    NUM_BITS,
    PHASE,
    PLAYED,
    RET,
    TO_ACT,
    TRICK,
    TRICK_NO,
    TRUMP,
    TURN_PUBLIC,
    TURN_UP,
    WON,
    RawVectorEnv,
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
    rng_below,
    scratch,
    shuffle_deck,
    write_common,
)
from whist_env.view import PlayerView

# The game's own columns: team points in the current game, games won in the rubber, the values of those games.
TEAM_POINTS = GAME_COLS  # 2
GAMES_WON = TEAM_POINTS + 2  # 2
GAME_VALUES = GAMES_WON + 2  # 2 teams x GAMES_TO_WIN_RUBBER: the values of the games each team won
# The config array.
CFG_TARGET, CFG_HONOURS, CFG_RUBBER, CFG_ROTATION, CFG_ONE_DEAL, CFG_POINTS, CFG_RECALL = range(7)
# The game's observation slots (after the common ones).
SLOT_POINTS_US, SLOT_POINTS_THEM, SLOT_GAMES_US, SLOT_GAMES_THEM = range(GAME_SLOTS, GAME_SLOTS + 4)
# RULES.md §2.4: the trump of deal k with the rotation, in the kernels' coding (4: no trump).
ROTATION = np.array([NO_TRUMP if t is None else t for t in (None, 3, 2, 1, 0)], np.int64)


@jit_borrow
def start_deal(st: np.ndarray, cfg: np.ndarray) -> None:
    """RULES.md §2.1: deal ``DECK`` singly from the dealer's left; the dealer's last card is turned up for trump
    (or, with the rotation, §2.4 names the trump); the dealer's left leads (§2.2)."""
    d = st[DEALER]
    deal_round_robin(st, NUM_PLAYERS, (d + 1) % NUM_PLAYERS, NUM_CARDS)
    st[DEAL_TRICKS] = TRICKS
    if cfg[CFG_ROTATION]:
        st[TRUMP] = ROTATION[st[DEAL_INDEX] % 5]
    else:
        st[TURN_UP] = st[DECK + 51]
        st[TURN_PUBLIC] = 1
        st[TRUMP] = st[DECK + 51] // 13
    st[LEADER] = (d + 1) % NUM_PLAYERS
    st[TO_ACT] = st[LEADER]


@jit_borrow
def new_episode(st: np.ndarray, rng: np.ndarray, i: int, cfg: np.ndarray, deck: np.ndarray, dealer: int) -> None:
    """Start an episode: the given dealer or one drawn, the given deck (``deck[0] >= 0``) or one shuffled."""
    st[DEALER] = dealer if dealer >= 0 else rng_below(rng, i, NUM_PLAYERS)
    st[DEAL_INDEX] = 0
    for s in range(MAX_SEATS):
        st[RET + s] = 0
    for k in range(2):
        st[TEAM_POINTS + k] = 0
        st[GAMES_WON + k] = 0
    for k in range(2 * GAMES_TO_WIN_RUBBER):
        st[GAME_VALUES + k] = 0
    if deck[0] >= 0:
        for c in range(NUM_CARDS):
            st[DECK + c] = deck[c]
    else:
        shuffle_deck(st, rng, i)
    start_deal(st, cfg)


# The rules' own scoring functions (plain int arithmetic) compiled for the kernels: one spelling of §1.7, §2.3, §2.4.
trick_points = jit(scoring.trick_points)
game_value = jit(scoring.game_value)
honour_points = jit(scoring.honour_points)


@jit_borrow
def honours_held(st: np.ndarray, team: int) -> int:
    """RULES.md §2.4: the trump honours (A K Q J) the partnership was dealt (none without a trump)."""
    trump = st[TRUMP]
    if trump == NO_TRUMP:
        return 0
    return NUM_BITS[((st[DEALT + team] | st[DEALT + team + 2]) >> (13 * trump)) & HONOUR_RANKS]


@jit_borrow
def end_deal(st: np.ndarray, cfg: np.ndarray, team_rewards: np.ndarray) -> bool:
    """RULES.md §2.3 scoring, §2.4 honours and rubber: score the finished deal into ``team_rewards`` (2,);
    returns whether the episode is over (the rules' ``ClassicWhist.end_deal``)."""
    target = cfg[CFG_TARGET]
    t0 = st[WON] + st[WON + 2]
    t1 = st[WON + 1] + st[WON + 3]
    side = 0 if t0 >= 7 else 1
    won = t0 if side == 0 else t1
    scored = trick_points(won)
    net = scored if side == 0 else -scored  # the deal's points of team 0 less those of team 1
    start0 = st[TEAM_POINTS]
    start1 = st[TEAM_POINTS + 1]
    st[TEAM_POINTS + side] += scored
    winner = side if st[TEAM_POINTS + side] >= target else -1
    if cfg[CFG_HONOURS] and winner < 0:
        # §2.4: tricks score before honours; a side at 4 at the start of the deal cannot score them.
        for team in range(2):
            h = honour_points(honours_held(st, team))
            if h and (start0 if team == 0 else start1) != 4:
                net += h if team == 0 else -h
                st[TEAM_POINTS + team] += h
        for team in range(2):
            if st[TEAM_POINTS + team] >= target:
                winner = team
    team_rewards[0] = 0
    team_rewards[1] = 0
    over = False
    if cfg[CFG_ONE_DEAL]:
        team_rewards[0] = net
        team_rewards[1] = -net
        over = True
    elif cfg[CFG_POINTS] and not cfg[CFG_RUBBER]:
        team_rewards[0] = net
        team_rewards[1] = -net
    if winner >= 0 and not cfg[CFG_ONE_DEAL]:
        loser = 1 - winner
        if not cfg[CFG_RUBBER]:
            over = True
            if not cfg[CFG_POINTS]:
                team_rewards[winner] = 1
                team_rewards[loser] = -1
        else:
            value = game_value(st[TEAM_POINTS + loser])
            st[GAME_VALUES + GAMES_TO_WIN_RUBBER * winner + st[GAMES_WON + winner]] = value
            st[GAMES_WON + winner] += 1
            st[TEAM_POINTS] = 0
            st[TEAM_POINTS + 1] = 0
            if cfg[CFG_POINTS]:
                team_rewards[winner] = value
                team_rewards[loser] = -value
            if st[GAMES_WON + winner] == GAMES_TO_WIN_RUBBER:
                over = True
                if cfg[CFG_POINTS]:
                    team_rewards[winner] += RUBBER_BONUS
                    team_rewards[loser] -= RUBBER_BONUS
                else:
                    team_rewards[winner] = 1
                    team_rewards[loser] = -1
    return over


@jit_borrow
def seat_knowledge(st: np.ndarray, recall: bool, me: int, known: np.ndarray) -> int:
    """What seat ``me`` knows of the cards (the rules' view): fills ``known`` (per seat, the cards known to be in
    that hand) and returns the cards ``me`` cannot place (the heuristic's port reads them too)."""
    over = st[PHASE] == PHASE_OVER
    hand = st[HAND + me]
    for s in range(NUM_PLAYERS):
        known[s] = 0
    known[me] = hand
    t = st[TURN_UP]
    d = st[DEALER]
    # the turn-up is known to be in the dealer's hand while public, and with recall until the dealer plays it
    if t >= 0 and not over and (st[TURN_PUBLIC] or recall) and (st[HAND + d] >> t) & 1 and d != me:
        known[d] |= 1 << t
    seen = hand
    for s in range(NUM_PLAYERS):
        seen |= known[s]
        if recall:
            seen |= st[PLAYED + s]
        else:
            if st[TRICK + s] >= 0:
                seen |= 1 << st[TRICK + s]
            if st[LAST + s] >= 0:
                seen |= 1 << st[LAST + s]
    if st[TURN_PUBLIC] and t >= 0:
        seen |= 1 << t
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
    unseen = seat_knowledge(st, recall, me, known)
    turn_up = st[TURN_UP] if st[TURN_PUBLIC] else -1
    write_common(bits, offs, st, me, known, unseen, turn_up, recall)
    us = me % 2
    put_one(bits, offs, SLOT_POINTS_US, st[TEAM_POINTS + us])
    put_one(bits, offs, SLOT_POINTS_THEM, st[TEAM_POINTS + 1 - us])
    put_one(bits, offs, SLOT_GAMES_US, st[GAMES_WON + us])
    put_one(bits, offs, SLOT_GAMES_THEM, st[GAMES_WON + 1 - us])
    expand(bits, obs_row, lut)
    expand_mask(legal_mask(st) if me == st[TO_ACT] and not over else 0, mask_row, mask_lut)


@jit_borrow_inline
def step_row(
    st: np.ndarray, rng: np.ndarray, i: int, cfg: np.ndarray, action: int, rewards_row: np.ndarray, team: np.ndarray
) -> bool:
    """Play ``action`` (legal) for the seat to act; after a deal's last trick score it (:func:`end_deal`, the team
    rewards in the scratch ``team`` (2,)) into ``rewards_row`` and deal the next hand; returns whether the episode
    is over (the batch loop then ends it)."""
    if play_card(st, action) >= 0 and st[TRICK_NO] == st[DEAL_TRICKS]:
        over = end_deal(st, cfg, team)
        for s in range(NUM_PLAYERS):
            rewards_row[s] = team[s % 2]
            st[RET + s] += team[s % 2]
        if over:
            return True
        st[DEAL_INDEX] += 1
        st[DEALER] = (st[DEALER] + 1) % NUM_PLAYERS  # the deal passes to the left
        shuffle_deck(st, rng, i)
        start_deal(st, cfg)
    return False


# What the per-row functions above take besides the batch loops' own arguments (whist_env/vector/template.py).
LOOP_ARGS = {
    "episode_args": "cfg",
    "check_args": "",
    "step_scratch": "team = np.zeros(2, np.int64)",
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
        new_episode(st, rng, i, cfg, decks[i] if have_decks else none, dealers[i])
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
    team = np.zeros(2, np.int64)
    step_rows(
        state, rng, cfg, offs, lut, mask_lut, actions, current, obs, mask, rewards, terminated,
        bits, known, none, team,
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
    team: np.ndarray,
) -> None:
    """:func:`step_kernel`'s loop over the environments, with legal actions, in the scratches it allocated."""
    for i in range(state.shape[0]):
        st = state[i]
        for s in range(rewards.shape[1]):
            rewards[i, s] = 0
        if st[PHASE] == PHASE_OVER:  # next-step autoreset: the action is ignored
            new_episode(st, rng, i, cfg, none, -1)
        elif step_row(st, rng, i, cfg, actions[i], rewards[i], team):  # the episode is over
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


class ClassicWhistVector(RawVectorEnv):
    """``classic_whist_v0`` batched: every option of the game (see :class:`RawVectorEnv` for the API)."""

    reset_kernel = reset_kernel
    step_kernel = step_kernel
    observe_kernel = observe_kernel
    game_fields: ClassVar[dict[str, tuple[int, int]]] = {
        "team_points": (TEAM_POINTS, 2),
        "games_won": (GAMES_WON, 2),
        "game_values": (GAME_VALUES, 2 * GAMES_TO_WIN_RUBBER),
    }
    game_piece_names = ("points[us]", "points[them]", "games[us]", "games[them]")
    game: ClassicWhist

    def config_array(self) -> np.ndarray:
        cfg = self.game.config
        return np.array(
            [
                cfg.target_points,
                cfg.honours,
                cfg.rubber,
                cfg.trump_rotation,
                cfg.episode == "deal",
                cfg.reward == "points",
                cfg.include_history,
            ],
            np.int64,
        )

    def export_state(self, env: int) -> ClassicWhistState:
        """Environment ``env`` as a rules state (``deal_summary`` is not kept by the engine: it is left empty)."""
        st: list[int] = self._state[self._env_index(env)].tolist()
        state = ClassicWhistState(NUM_PLAYERS, st[DEALER])
        self._export_common(state, st, st[DEALT : DEALT + NUM_PLAYERS])  # no card changes hands in a deal
        state.team_points = st[TEAM_POINTS : TEAM_POINTS + 2]
        state.games_won = st[GAMES_WON : GAMES_WON + 2]
        state.game_values = [
            tuple(
                st[GAME_VALUES + GAMES_TO_WIN_RUBBER * t : GAME_VALUES + GAMES_TO_WIN_RUBBER * t + state.games_won[t]]
            )
            for t in range(2)
        ]
        state.scores = [state.team_points[s % 2] for s in range(NUM_PLAYERS)]
        return state

    def _view_row(self, view: PlayerView) -> np.ndarray:
        """The common columns, and the partnership scores the view gives as (my team, the other team) put back on
        teams 0 and 1 (the values of games won before are not in a view: 0). After the dealer's first card the
        turn-up is no longer public but still known to be in the dealer's hand until played (RULES.md §2.1, with
        recall): another seat's view knows it that way, and it is put back; the dealer's own view does not name it,
        so in a row from the dealer's view the others do not know it either."""
        row = self._view_row_common(view)
        known = view.known[view.dealer]
        if view.turn_up < 0 and view.dealer != view.seat and known:
            row[TURN_UP] = (known & -known).bit_length() - 1
        extra: ClassicWhistExtras = view.extra  # type: ignore[assignment]
        mine = view.seat % 2
        for k, team in enumerate((mine, 1 - mine)):
            row[TEAM_POINTS + team] = extra.team_points[k]
            row[GAMES_WON + team] = extra.games_won[k]
        return row

    def import_state(self, env: int, state: State) -> None:
        """Set environment ``env`` to ``state`` (a ``ClassicWhistState`` in play or over, checked by the rules'
        invariants). The engine does not know the deck it was dealt from: :meth:`decks` gives -1s for it. Before
        any :meth:`reset`, the other environments have no episode: the next :meth:`step` starts theirs (and ignores
        their actions), as after an ended episode."""
        i = self._checked_import(env, state, ClassicWhistState)
        assert isinstance(state, ClassicWhistState)  # checked: for mypy
        row = self._import_common(state)
        row[TEAM_POINTS : TEAM_POINTS + 2] = state.team_points
        row[GAMES_WON : GAMES_WON + 2] = state.games_won
        for t in range(2):
            for k, value in enumerate(state.game_values[t]):
                row[GAME_VALUES + GAMES_TO_WIN_RUBBER * t + k] = value
        self._state[i] = row
        self._started = True
