"""Swedish Humbug whist: two players, four hands dealt, blind exchange, honours, rubber (RULES.md §1, seed 000).

The players sit opposite each other with a face-down blind at each side (§1.1). Clockwise from the
dealer D the hands are L, N, R, D: ``L`` is the non-dealer's exchange blind (at his right), ``R``
the dealer's. The dealer's last card is turned up for trump. The non-dealer, then the dealer, may
exchange his whole hand unseen for his blind (§1.4); a dealer who exchanges puts the turn-up away
with his old hand, and trump stays. The dealer leads; 13 tricks (§1.5). Trick points score before
honours, honours come from the hand actually played, and a game cannot be won on honours alone
(§1.6). Games are worth 3/2/1, the rubber +2 (§1.7).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from whist_env.cards import FULL_DECK, card_pretty, format_hand
from whist_env.options import GameConfig, option
from whist_env.rules.core import PHASE_EXCHANGE, PHASE_PLAY, State, TrickGame
from whist_env.rules.scoring import (
    GAMES_TO_WIN_RUBBER,
    RUBBER_BONUS,
    game_value,
    honour_points,
    honours_in,
    rubber_margin,
    trick_points,
)
from whist_env.rules.tricks import deal_round_robin
from whist_env.view import CardSet, ViewExtras

NUM_PLAYERS = 2
TRICKS = 13
GAME_POINTS = 5  # §1.6 a game is 5 points
KEEP = 52  # §0.6 exchange-phase actions
EXCHANGE = 53
EXCHANGE_ACTIONS = (1 << KEEP) | (1 << EXCHANGE)
UNDECIDED = -1
DECISION_NAMES = {UNDECIDED: "?", 0: "KEEP", 1: "EXCHANGE"}
DECISION_CODES = {name: code for code, name in DECISION_NAMES.items()}
TURN_UP_STATUSES = ("face_up", "taken_up", "discarded")
# §1.6: with no game ending, every deal gives someone ≥ 1 trick point and nobody keeps 5, so a game
# that is still going has had at most 8 deals (it ends within 9).
MAX_DEALS_IN_GAME = 9


@dataclass(frozen=True)
class HumbugWhistConfig(GameConfig):
    """Options of ``humbug_whist_v0`` (RULES.md §1.4, §1.7, §0.8)."""

    exchange_order: str = option(
        "nondealer_first",
        choices=("nondealer_first", "simultaneous"),
        doc="non-dealer decides first in public; or the dealer does not see it until both decided",
    )
    episode: str = option("rubber", choices=("rubber", "game", "deal"), doc="one rubber, one game or one deal")
    include_history: bool = option(True, doc="observations remember every card played and the hand put away")


@dataclass(frozen=True, kw_only=True, init=False)
class HumbugWhistExtras(ViewExtras):
    """What a Humbug Whist seat knows beyond the common view (RULES.md §1.4, §1.8).

    Pairs are (mine, the opponent's).
    """

    exchange: tuple[int, int]  # (2,) exchange decisions (-1 undecided / not yet public, 0 keep, 1 exchange)
    turn_up_status: str  # "face_up", "taken_up" or "discarded"
    put_away: CardSet  # the hand this seat put away by exchanging (none without recall, or when it kept)
    discarded_turn_up: int  # the turn-up card discarded with the dealer's hand (with recall), else -1
    game_points: tuple[int, int]  # (2,) points in the current game (RULES.md §1.6)
    trick_points: tuple[int, int]  # (2,) the trick points among them (§1.6 step 4)
    games_won: tuple[int, int]  # (2,) games won in the rubber (§1.7)
    rubber_points: tuple[int, int]  # (2,) game values won, plus the rubber bonus once the rubber is won (§1.7)


class HumbugWhistState(State):
    """Adds the blinds, the exchange decisions and the game and rubber scores (seats absolute)."""

    __slots__ = (
        "blinds",  # (2,) masks: blinds[s] = the face-down blind at seat s's right while untaken, else 0
        "put_away",  # (2,) masks: the hand seat s put away by exchanging, 0 when it kept
        "decisions",  # (2,) UNDECIDED, 0 (KEEP) or 1 (EXCHANGE) this deal
        "game_points",  # (2,) points in the current game
        "trick_points",  # (2,) trick points in the current game (§1.6 step 4)
        "games_won",  # (2,) games won in the rubber
        "game_values",  # (2,) tuples of the values of the games won
        "rubber_points",  # (2,) game values won, plus the rubber bonus once the rubber is won
        "game_deals",  # deals completed in the current game
    )

    def __init__(self, num_players: int, dealer: int) -> None:
        super().__init__(num_players, dealer)
        self.blinds = [0, 0]
        self.put_away = [0, 0]
        self.decisions = [UNDECIDED, UNDECIDED]
        self.game_points = [0, 0]
        self.trick_points = [0, 0]
        self.games_won = [0, 0]
        self.game_values: list[tuple[int, ...]] = [(), ()]
        self.rubber_points = [0, 0]
        self.game_deals = 0


@dataclass(frozen=True)
class DealScore:
    """What one deal scores (RULES.md §1.6, §1.7); seats absolute.

    Attributes:
        trick_points: trick points scored this deal.  # (2,)
        honours: honour points scored this deal.  # (2,)
        game_points: game points after the deal, before a won game resets them.  # (2,)
        trick_points_in_game: trick points in the current game after the deal.  # (2,)
        game_winner: the seat that won the game with this deal, -1 when the game goes on.
        game_value: 3, 2 or 1 for a won game, else 0.
    """

    trick_points: tuple[int, int]
    honours: tuple[int, int]
    game_points: tuple[int, int]
    trick_points_in_game: tuple[int, int]
    game_winner: int
    game_value: int


def score_deal(
    game_points: tuple[int, int] | list[int],
    trick_points_in_game: tuple[int, int] | list[int],
    tricks: tuple[int, int] | list[int],
    honours_held: tuple[int, int] | list[int],
) -> DealScore:
    """Score one deal from the scores before it: RULES.md §1.6 steps 1–4 and the game value of §1.7.

    Args:
        game_points: each player's game points before the deal.
        trick_points_in_game: each player's trick points in the current game before the deal.
        tricks: tricks each player took (they add up to 13).
        honours_held: trump honours in the 13-card hand each player actually played.
    """
    gp = list(game_points)
    tp = list(trick_points_in_game)
    t = 0 if tricks[0] >= 7 else 1
    scored = [0, 0]
    # RULES.md §1.6 step 1: trick points first.
    scored[t] = trick_points(tricks[t])
    gp[t] += scored[t]
    tp[t] += scored[t]
    honours = [0, 0]
    winner = -1
    if gp[t] >= GAME_POINTS:
        winner = t  # §1.6 step 2: game won on tricks; no honours are scored in this deal
    else:
        # §1.6 step 3: honours from the hand actually played (4 → 4, 3 → 2).
        for s in (0, 1):
            honours[s] = honour_points(honours_held[s])
            gp[s] += honours[s]
        # §1.6 step 4: no game on honours alone: the winner needs ≥ 1 trick point in this game.
        for s in (0, 1):
            if gp[s] >= GAME_POINTS and tp[s] >= 1:
                winner = s
    value = game_value(gp[1 - winner]) if winner >= 0 else 0  # §1.7 set by the loser's points
    return DealScore((scored[0], scored[1]), (honours[0], honours[1]), (gp[0], gp[1]), (tp[0], tp[1]), winner, value)


class HumbugWhist(TrickGame[HumbugWhistState]):
    """Rules of ``humbug_whist_v0``."""

    game_id = "humbug_whist_v0"
    config_cls = HumbugWhistConfig
    state_cls = HumbugWhistState
    phase_rules = {PHASE_EXCHANGE: ("legal_exchange", "apply_exchange")}
    info_seat_keys = ()
    config: HumbugWhistConfig
    num_actions = 54  # 52 cards, KEEP, EXCHANGE (§0.6)

    def __init__(self, /, **options: Any) -> None:
        super().__init__(**options)
        self.num_players = NUM_PLAYERS
        self.recall = self.config.include_history
        self.simultaneous = self.config.exchange_order == "simultaneous"

    # ----------------------------------------------------------------- deal and exchange
    def start_deal(self, state: HumbugWhistState, deck: list[int]) -> None:
        """RULES.md §1.3: ``deck[i]`` → ``[L, N, R, D][i % 4]``; ``deck[51]`` (the dealer's) is turned up."""
        d = state.dealer
        n = 1 - d
        left, non_dealer, right, dealer = deal_round_robin(deck, (0, 1, 2, 3), 4)
        hands = [0, 0]
        hands[n], hands[d] = non_dealer, dealer
        self.reset_deal(state, hands, TRICKS)
        blinds = [0, 0]
        blinds[n], blinds[d] = left, right  # §1.1 exchange_blind[N] = L, exchange_blind[D] = R
        state.blinds = blinds
        state.put_away = [0, 0]
        state.decisions = [UNDECIDED, UNDECIDED]
        state.turn_up = deck[51]
        state.turn_up_public = True
        state.trump = deck[51] // 13
        state.phase = PHASE_EXCHANGE
        state.to_act = n  # §1.4 the non-dealer decides first
        state.leader = d  # §1.5 the dealer leads the first trick

    def legal_exchange(self, state: HumbugWhistState) -> int:
        """RULES.md §1.4: KEEP or EXCHANGE."""
        return EXCHANGE_ACTIONS

    def describe_action(self, action: int) -> str:
        if action == KEEP:
            return "KEEP"
        if action == EXCHANGE:
            return "EXCHANGE"
        return super().describe_action(action)

    def apply_exchange(self, state: HumbugWhistState, action: int) -> list[float] | None:
        """RULES.md §1.4: KEEP or EXCHANGE, the non-dealer first, then the dealer; then the dealer leads."""
        if action != KEEP and action != EXCHANGE:
            raise self.illegal(state, action, "in the exchange phase choose KEEP (52) or EXCHANGE (53)")
        seat = state.to_act
        d = state.dealer
        state.decisions[seat] = action - KEEP
        if seat != d:
            if not self.simultaneous:
                self._exchange(state, seat)  # §1.4 public at once
            state.to_act = d
            return None
        if self.simultaneous:
            self._exchange(state, 1 - d)  # §1.4 option: both applied once both decided
        self._exchange(state, d)
        state.phase = PHASE_PLAY
        state.leader = state.to_act = d  # §1.5 the dealer leads
        return None

    def _exchange(self, state: HumbugWhistState, seat: int) -> None:
        if state.decisions[seat] != 1:
            return
        # §1.4 blind exchange: the old hand goes out of play, the blind at the seat's right comes in.
        state.put_away[seat] = state.hands[seat]
        state.hands[seat] = state.blinds[seat]
        state.blinds[seat] = 0
        if seat == state.dealer:
            state.turn_up_public = False  # §1.4 the turn-up goes out with the old hand; trump stays

    # ----------------------------------------------------------------- scoring
    def end_deal(self, state: HumbugWhistState) -> list[float] | None:
        """RULES.md §1.6 scoring, §1.7 game value, rubber and episode rewards."""
        assert state.trump is not None
        tricks = (state.tricks_won[0], state.tricks_won[1])
        # §1.6 step 3: the hand actually played is exactly the 13 cards each seat played this deal.
        held = (honours_in(state.played[0], state.trump), honours_in(state.played[1], state.trump))
        sc = score_deal(state.game_points, state.trick_points, tricks, held)
        state.game_points = list(sc.game_points)
        state.trick_points = list(sc.trick_points_in_game)
        state.game_deals += 1
        summary: list[tuple[str, Any]] = [
            ("tricks", tricks),
            ("exchanges", (DECISION_NAMES[state.decisions[0]], DECISION_NAMES[state.decisions[1]])),
            ("trick_points", sc.trick_points),
            ("honours", sc.honours),
            ("game_points", sc.game_points),
        ]
        episode = self.config.episode
        rewards: list[float] | None = None
        over = False
        if episode == "deal":
            diff = tricks[0] - tricks[1]
            rewards = [float(diff), float(-diff)]
            over = True
        w = sc.game_winner
        if w >= 0:
            loser = 1 - w
            value = sc.game_value
            summary += [("game_winner", w), ("game_value", value)]
            state.games_won[w] += 1
            state.game_values[w] = state.game_values[w] + (value,)
            state.rubber_points[w] += value
            # §1.7 both game scores reset after a game
            state.game_points = [0, 0]
            state.trick_points = [0, 0]
            state.game_deals = 0
            if episode == "game":
                rewards = [0.0, 0.0]
                rewards[w], rewards[loser] = float(value), float(-value)
                over = True
            elif episode == "rubber" and state.games_won[w] == GAMES_TO_WIN_RUBBER:
                state.rubber_points[w] += RUBBER_BONUS
                margin = rubber_margin(state.game_values[w], state.game_values[loser])
                summary += [("rubber_winner", w), ("rubber_margin", margin)]
                rewards = [0.0, 0.0]
                rewards[w], rewards[loser] = float(margin), float(-margin)
                over = True
        state.scores = list(state.game_points)
        state.deal_summary = tuple(summary)
        return self.finish(state, rewards, over)

    # ----------------------------------------------------------------- what a seat knows
    def known_out_of_play(self, state: HumbugWhistState, seat: int) -> int:
        """§1.4 the hand ``seat`` put away stays in its memory; the discarded turn-up is public."""
        if not self.recall:
            return 0
        out = state.put_away[seat]
        if state.decisions[state.dealer] == 1 and state.phase != PHASE_EXCHANGE:
            out |= 1 << state.turn_up
        return out

    def view_extra(self, state: HumbugWhistState, seat: int) -> HumbugWhistExtras:
        opp = 1 - seat
        decisions = state.decisions
        # §1.4: the opponent's decision is public once made; with the simultaneous option the dealer
        # sees the non-dealer's only when both have decided (which ends the exchange phase).
        theirs = decisions[opp] if not self.simultaneous or state.phase != PHASE_EXCHANGE else UNDECIDED
        discarded = decisions[state.dealer] == 1  # §1.8 turn_up_status
        gp, tp, gw, rp = state.game_points, state.trick_points, state.games_won, state.rubber_points
        return HumbugWhistExtras(
            exchange=(decisions[seat], theirs),
            turn_up_status="discarded" if discarded else ("face_up" if state.turn_up_public else "taken_up"),
            put_away=state.put_away[seat] if self.recall else 0,
            discarded_turn_up=state.turn_up if discarded and self.recall else -1,
            game_points=(gp[seat], gp[opp]),
            trick_points=(tp[seat], tp[opp]),
            games_won=(gw[seat], gw[opp]),
            rubber_points=(rp[seat], rp[opp]),
        )

    def summary_fields(self) -> dict[str, int | tuple[int, ...]]:
        """The deal summary in ``info``: ``exchanges`` per seat as 0 (kept), 1 (exchanged) or -1 (none yet); -1 for
        no game or rubber won with the deal."""
        pair = (0, 0)
        return {
            "tricks": pair,
            "exchanges": (UNDECIDED, UNDECIDED),
            "trick_points": pair,
            "honours": pair,
            "game_points": pair,
            "game_winner": -1,
            "game_value": 0,
            "rubber_winner": -1,
            "rubber_margin": 0,
        }

    def summary_number(self, name: str, value: Any) -> int | tuple[int, ...]:
        if name == "exchanges":  # the summary names the decisions (KEEP, EXCHANGE); info has their numbers
            return tuple(DECISION_CODES[v] for v in value)
        return super().summary_number(name, value)

    def info_now(self, state: HumbugWhistState, seat: int) -> dict[str, Any]:
        info = super().info_now(state, seat)
        info["game_points"] = tuple(state.game_points)
        info["trick_points"] = tuple(state.trick_points)
        info["games_won"] = tuple(state.games_won)
        info["rubber_points"] = tuple(state.rubber_points)
        return info

    # ----------------------------------------------------------------- checks and text
    def deal_unit(self) -> str:
        """One deal's reward in words (the reward of ``episode="deal"``)."""
        return "one deal after the exchange: ±(trick difference)"

    def deal_return_range(self) -> tuple[float, float]:
        """RULES.md §1.6 with ``episode="deal"``: the deal pays the trick difference of its 13 tricks."""
        return -float(TRICKS), float(TRICKS)

    def check_invariants(self, state: HumbugWhistState) -> None:
        super().check_invariants(state)
        d = state.dealer
        hands, blinds, put_away = state.hands, state.blinds, state.put_away
        parts = [*hands, *blinds, *put_away, *state.played]
        union = 0
        for p in parts:
            assert not union & p, "a card is in two places"
            union |= p
        assert union == FULL_DECK, "the four dealt hands must account for all 52 cards"
        assert state.trump == state.turn_up // 13, "trump is the turn-up's suit (it stays after a discard)"
        pending = self.simultaneous and state.phase == PHASE_EXCHANGE
        for s in (0, 1):
            decision = state.decisions[s]
            if decision == 1 and not pending:  # §1.4 exactly one blind, the one at the seat's right, per exchange
                assert blinds[s] == 0 and put_away[s].bit_count() == TRICKS
                assert put_away[s] == state.dealt[s]
            else:
                assert put_away[s] == 0 and blinds[s].bit_count() == TRICKS
            if state.phase == PHASE_PLAY:
                assert decision != UNDECIDED
                assert hands[s].bit_count() + state.played[s].bit_count() == TRICKS
        if state.phase == PHASE_EXCHANGE:
            assert not state.history and state.to_act in (0, 1)
            assert state.decisions[d] == UNDECIDED
            assert (state.to_act == d) == (state.decisions[1 - d] != UNDECIDED)
        if state.phase in (PHASE_EXCHANGE, PHASE_PLAY):
            if state.decisions[d] == 1:
                assert not state.turn_up_public and (put_away[d] >> state.turn_up) & 1
            else:
                assert state.turn_up_public == (not state.played[d]), "turn-up public until the dealer plays"
            assert sum(h.bit_count() for h in hands) + len(state.history) == 2 * TRICKS
        for s in (0, 1):
            assert state.trick_points[s] <= state.game_points[s]
            if not state.done:
                # §1.6 a game that goes on has no winner yet
                assert not (state.game_points[s] >= GAME_POINTS and state.trick_points[s] >= 1)
                assert state.games_won[s] < GAMES_TO_WIN_RUBBER
            bonus = RUBBER_BONUS if state.games_won[s] == GAMES_TO_WIN_RUBBER else 0
            assert state.rubber_points[s] == sum(state.game_values[s]) + bonus
            assert len(state.game_values[s]) == state.games_won[s]
        assert state.game_deals < MAX_DEALS_IN_GAME
        assert state.scores == state.game_points

    def render_extra(self, state: HumbugWhistState, seat: int | None) -> str:
        name = self.seat_name
        lines = []
        if seat is None:
            dec = [DECISION_NAMES[x] for x in state.decisions]
            lines.append(f"exchange: {name(0)} {dec[0]}, {name(1)} {dec[1]}")
            for s in (0, 1):
                if state.blinds[s]:
                    lines.append(f"blind at {name(s)}'s right (face down): {format_hand(state.blinds[s])}")
                if state.put_away[s]:
                    lines.append(f"put away by {name(s)}: {format_hand(state.put_away[s])}")
        else:
            extra = self.view_extra(state, seat)
            mine, theirs = extra.exchange
            lines.append(f"exchange: {name(seat)} {DECISION_NAMES[mine]}, {name(1 - seat)} {DECISION_NAMES[theirs]}")
            if extra.put_away:
                lines.append(f"put away by me (out of play): {format_hand(extra.put_away)}")
        if state.decisions[state.dealer] == 1:
            # the card itself is remembered only with history, like the observation's discarded_turn_up
            card = f" {card_pretty(state.turn_up)}" if seat is None or self.recall else ""
            lines.append(f"turn-up{card} discarded with the dealer's hand; trump stays")
        lines.append(
            f"game points {list(state.game_points)} · trick points {list(state.trick_points)} · "
            f"games {list(state.games_won)} · rubber points {list(state.rubber_points)}"
        )
        return "\n".join(lines)


__all__ = [
    "DealScore",
    "EXCHANGE",
    "HumbugWhist",
    "HumbugWhistConfig",
    "HumbugWhistState",
    "KEEP",
    "honours_in",
    "score_deal",
]
