"""German Whist: two players, a drawing stock with a face-up prize, then 13 scoring tricks (RULES.md §5, seed 004).

Each player gets 13 cards; the other 26 form the stock, whose top card is turned face up and sets
trump for the whole deal. In phase 1 (tricks 1–13) the winner of each trick takes the face-up card
and the loser the next card face down, seen only by him; then the next card is turned. In phase 2
(tricks 14–26) the hands are played out and only these tricks count (unless ``count_all_tricks``).

The stock is kept as the tuple ``deck[26:52]`` and never changes during a deal: after ``k`` phase-1
tricks its remaining cards are ``stock[2k:]`` and the face-up card is ``stock[2k]``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from whist_env.cards import FULL_DECK, SUIT_MASKS, card_pretty, format_cards
from whist_env.options import GameConfig, option
from whist_env.rules.core import PHASE_DEAL_END, PHASE_OVER, PHASE_PLAY, State, TrickGame
from whist_env.rules.tricks import deal_round_robin
from whist_env.view import CardSet, ViewExtras

NUM_PLAYERS = 2
HAND_SIZE = 13
PHASE1_TRICKS = 13  # RULES.md §5.2: tricks 1–13 draw from the stock
TRICKS = 26
STOCK_SIZE = 26


@dataclass(frozen=True)
class GermanWhistConfig(GameConfig):
    """Options of ``german_whist_v0`` (RULES.md §5.4, §5.5, §0.8)."""

    phase1_follow_suit: bool = option(True, doc="follow suit in phase 1 too (False: any card in tricks 1–13)")
    count_all_tricks: bool = option(False, doc="all 26 tricks count: 14+ wins, 13–13 is a draw")
    reward: str = option("win", choices=("win", "trick_diff"), doc="±1 per deal (0: draw), or the trick difference")
    num_deals: int = option(1, kind=int, minimum=1, maximum=10_000, doc="deals in the episode (a series)")
    include_history: bool = option(True, doc="observations remember every card played and drawn (perfect recall)")


@dataclass(frozen=True, kw_only=True, init=False)
class GermanWhistExtras(ViewExtras):
    """What a German Whist seat knows beyond the common view (RULES.md §5.6); ``stock_size`` is the common field.

    Pairs indexed by seat are absolute (seat 0, seat 1).
    """

    stage: int  # 1 while the stock lasts (tricks 1–13), then 2
    phase1_tricks: tuple[int, int]  # (2,) tricks won in phase 1 per seat; phase-2 tricks: tricks_won minus these
    prizes: tuple[CardSet, CardSet]  # (2,) face-up cards each seat took (all of them with recall, else the last)
    my_draws: CardSet  # the cards this seat drew face down (that it remembers)
    opponent_draws: int  # how many cards the opponent drew face down (public: one sees the draw, not what)
    opponent_hand_size: int  # cards in the opponent's hand now (public)
    deals_left: int  # deals left in the series, this one included


class GermanWhistState(State):
    """Adds the stock and what each seat drew from it."""

    __slots__ = (
        "stock",  # (26,) deck[26:52] in order; the part still on the table is stock[2 * min(k, 13):]
        "prizes",  # (2,) masks: face-up cards each seat took (public)
        "draws",  # (2,) masks: cards each seat drew face down (private to that seat)
        "phase1_won",  # (2,) tricks won in phase 1; phase-2 tricks are tricks_won minus these
    )

    def __init__(self, num_players: int, dealer: int) -> None:
        super().__init__(num_players, dealer)
        self.stock: tuple[int, ...] = ()
        self.prizes = [0, 0]
        self.draws = [0, 0]
        self.phase1_won = [0, 0]


def counted_tricks(phase1: tuple[int, int], phase2: tuple[int, int], count_all: bool) -> tuple[int, int]:
    """Tricks that count for the result: RULES.md §5.4 only phase 2; §5.5 ``count_all_tricks`` all 26."""
    if count_all:
        return phase1[0] + phase2[0], phase1[1] + phase2[1]
    return phase2


def deal_reward(counted: tuple[int, int], reward: str) -> float:
    """Seat 0's reward for a deal (seat 1 gets the negative): RULES.md §5.4.

    ``"win"``: +1 for the majority (≥ 7 of 13, or ≥ 14 of 26), −1 for the minority, 0 for 13–13
    (§5.5, [DESIGN]). ``"trick_diff"``: the difference in counted tricks.
    """
    diff = counted[0] - counted[1]
    if reward == "trick_diff":
        return float(diff)
    return float((diff > 0) - (diff < 0))


class GermanWhist(TrickGame[GermanWhistState]):
    """Rules of ``german_whist_v0``."""

    game_id = "german_whist_v0"
    config_cls = GermanWhistConfig
    state_cls = GermanWhistState
    config: GermanWhistConfig
    info_seat_keys = ("balance",)  # the seat's own balance; the rest of info is the same for both

    def __init__(self, /, **options: Any) -> None:
        super().__init__(**options)
        self.num_players = NUM_PLAYERS
        self.recall = self.config.include_history
        self.free_phase1 = not self.config.phase1_follow_suit

    # ----------------------------------------------------------------- deal and play
    def start_deal(self, state: GermanWhistState, deck: list[int]) -> None:
        """RULES.md §5.1: 13 each from the non-dealer; ``deck[26]`` turned face up sets trump."""
        d = state.dealer
        n = 1 - d
        # non_dealer = deck[0:26:2], dealer = deck[1:26:2]
        self.reset_deal(state, deal_round_robin(deck[:26], (n, d), NUM_PLAYERS), TRICKS)
        state.stock = tuple(deck[26:])
        state.trump = deck[26] // 13  # §5.1: trump for the whole deal; later face-up cards never change it
        # The face-up card is public through turn_up_visible (never through turn_up_public, which the
        # core clears when the dealer plays).
        state.turn_up = deck[26]
        state.prizes = [0, 0]
        state.draws = [0, 0]
        state.phase1_won = [0, 0]
        state.phase = PHASE_PLAY
        state.leader = state.to_act = n  # §5.2: the non-dealer leads trick 1

    def must_follow(self, state: GermanWhistState) -> bool:
        # RULES.md §5.5 phase1_follow_suit=False: any card in tricks 1–13; phase 2 always follows.
        return not self.free_phase1 or state.trick_number >= PHASE1_TRICKS

    def on_trick_complete(self, state: GermanWhistState, winner: int) -> list[float] | None:
        """RULES.md §5.2: after tricks 1–13 the winner takes the face-up card, the loser the next one."""
        k = state.trick_number
        if k <= PHASE1_TRICKS:
            stock = state.stock
            loser = 1 - winner
            prize = stock[2 * k - 2]  # deck[24 + 2k]
            prize_bit = 1 << prize
            hidden_bit = 1 << stock[2 * k - 1]  # deck[25 + 2k], seen only by the loser
            hands = state.hands
            hands[winner] |= prize_bit
            hands[loser] |= hidden_bit
            state.prizes[winner] |= prize_bit
            state.draws[loser] |= hidden_bit
            state.phase1_won[winner] += 1
            # A void stays proven only while no card of that suit can have come in: the prize is seen
            # by both, the hidden draw could be of any suit.
            voids = state.voids
            if voids[winner]:
                voids[winner] &= ~(1 << (prize // 13))
            voids[loser] = 0
            state.turn_up = stock[2 * k] if k < PHASE1_TRICKS else -1  # deck[26 + 2k]
            return None
        if k == TRICKS:
            return self.end_deal(state)
        return None

    def phase_tricks(self, state: GermanWhistState) -> tuple[tuple[int, int], tuple[int, int]]:
        """(phase-1 tricks, phase-2 tricks) per seat this deal."""
        p1, t = state.phase1_won, state.tricks_won
        return (p1[0], p1[1]), (t[0] - p1[0], t[1] - p1[1])

    def end_deal(self, state: GermanWhistState) -> list[float] | None:
        """RULES.md §5.4 result and reward, §5.5 ``count_all_tricks``; each deal is paid at its end."""
        cfg = self.config
        phase1, phase2 = self.phase_tricks(state)
        counted = counted_tricks(phase1, phase2, cfg.count_all_tricks)
        r = deal_reward(counted, cfg.reward)
        # scores: the running balance of the series in reward units
        state.scores = [state.scores[0] + int(r), state.scores[1] - int(r)]
        winner = 0 if counted[0] > counted[1] else (1 if counted[1] > counted[0] else -1)
        state.deal_summary = (
            ("phase1_tricks", phase1),
            ("phase2_tricks", phase2),
            ("counted_tricks", counted),
            ("winner", winner),
            ("balance", tuple(state.scores)),
        )
        over = state.deal_index + 1 >= cfg.num_deals
        return self.finish(state, [r, -r] if r else None, over)

    # ----------------------------------------------------------------- what a seat knows
    def stock_size(self, state: GermanWhistState) -> int:
        """Cards still in the stock (the face-up card included)."""
        k = state.trick_number
        return STOCK_SIZE - 2 * k if k < PHASE1_TRICKS else 0

    def last_exchange(self, state: GermanWhistState) -> tuple[int, int, int]:
        """``(winner, prize, hidden draw)`` of the phase-1 trick still visible as the last trick, else -1s.

        Without recall this is all a seat knows of the draws: what happened while the trick is on the table.
        """
        k = state.trick_number
        if state.last_trick and 1 <= k <= PHASE1_TRICKS:
            return state.last_winner, state.stock[2 * k - 2], state.stock[2 * k - 1]
        return -1, -1, -1

    def seen_draws(self, state: GermanWhistState, seat: int) -> tuple[int, int, int]:
        """What ``seat`` knows of the drawing: (prizes of seat 0, prizes of seat 1, own hidden draws)."""
        if self.recall:
            return state.prizes[0], state.prizes[1], state.draws[seat]
        winner, prize, hidden = self.last_exchange(state)
        if winner < 0:
            return 0, 0, 0
        own = 0 if winner == seat else 1 << hidden
        return (1 << prize, 0, own) if winner == 0 else (0, 1 << prize, own)

    def known_cards(self, state: GermanWhistState, seat: int) -> list[int]:
        """Own hand, and the opponent's prize cards not yet played (RULES.md §5.6).

        With perfect recall the opponent's whole hand is known once the stock is empty: it is what
        remains after one's own hand and every played card (§5.2).
        """
        opp = 1 - seat
        known = [0, 0]
        known[seat] = state.hands[seat]
        if state.phase == PHASE_OVER:
            return known
        if self.recall:
            if state.trick_number >= PHASE1_TRICKS:
                known[opp] = state.hands[opp]
            else:
                known[opp] = state.hands[opp] & state.prizes[opp]
        else:
            p = self.seen_draws(state, seat)[opp]
            known[opp] = state.hands[opp] & p
        return known

    def turn_up_visible(self, state: GermanWhistState, seat: int) -> int:
        # RULES.md §5.6: the face-up stock card is public while the stock is not empty.
        return state.turn_up

    def view_extra(self, state: GermanWhistState, seat: int) -> GermanWhistExtras:
        if self.recall:
            prizes, own = (state.prizes[0], state.prizes[1]), state.draws[seat]
        else:
            p0, p1_, own = self.seen_draws(state, seat)
            prizes = (p0, p1_)
        k = state.trick_number
        p1 = state.phase1_won
        return GermanWhistExtras(
            stage=1 if k < PHASE1_TRICKS else 2,
            stock_size=STOCK_SIZE - 2 * k if k < PHASE1_TRICKS else 0,
            phase1_tricks=(p1[0], p1[1]),
            prizes=prizes,
            my_draws=own,
            # public: one sees the opponent draw, not what (§5.6, GW-6)
            opponent_draws=p1[seat],
            opponent_hand_size=state.hands[1 - seat].bit_count(),
            deals_left=self.config.num_deals - state.deal_index,
        )

    def summary_fields(self) -> dict[str, int | tuple[int, ...]]:
        """The deal summary in ``info`` (``winner`` -1: a draw, or no deal over yet)."""
        pair = (0, 0)
        return {"phase1_tricks": pair, "phase2_tricks": pair, "counted_tricks": pair, "winner": -1, "balance": pair}

    def info_now(self, state: GermanWhistState, seat: int) -> dict[str, Any]:
        info = super().info_now(state, seat)
        p1, t = state.phase1_won, state.tricks_won
        k = state.trick_number
        info["phase1_tricks"] = (p1[0], p1[1])
        info["phase2_tricks"] = (t[0] - p1[0], t[1] - p1[1])
        info["stock_size"] = STOCK_SIZE - 2 * k if k < PHASE1_TRICKS else 0
        info["balance"] = state.scores[seat]
        return info

    def info_seat(self, state: GermanWhistState, seat: int) -> dict[str, Any]:
        return {"balance": state.scores[seat]}

    # ----------------------------------------------------------------- checks and text
    def deal_unit(self) -> str:
        """One deal's reward in words: the majority, or the trick difference, of the tricks that count."""
        counted = "all 26 tricks" if self.config.count_all_tricks else "the 13 scoring tricks"
        if self.config.reward == "trick_diff":
            return f"one deal: ±(trick difference) over {counted}"
        draw = ", 0 for 13–13" if self.config.count_all_tricks else ""
        return f"one deal: ±1 for the majority of {counted}{draw}"

    def deal_return_range(self) -> tuple[float, float]:
        """RULES.md §5.4, §5.5: ``win`` pays ±1 (0 for a draw); ``trick_diff`` pays the difference of the counted
        tricks, at most their number (26 with ``count_all_tricks``, else the 13 tricks of phase 2)."""
        if self.config.reward == "win":
            return -1.0, 1.0
        counted = float(TRICKS if self.config.count_all_tricks else TRICKS - PHASE1_TRICKS)
        return -counted, counted

    def check_invariants(self, state: GermanWhistState) -> None:
        super().check_invariants(state)
        k = state.trick_number
        hands, played = state.hands, state.played
        in_stock = 0
        for c in state.stock[2 * min(k, PHASE1_TRICKS) :]:
            in_stock |= 1 << c
        assert self.stock_size(state) == in_stock.bit_count(), "the stock shrinks by two per phase-1 trick"
        everywhere = (hands[0], hands[1], played[0], played[1], in_stock)
        total = 0
        for m in everywhere:
            assert not total & m, "a card is in two places"
            total |= m
        assert total == FULL_DECK, "a card went missing"
        if state.phase == PHASE_PLAY and not state.trick:
            size = HAND_SIZE if k <= PHASE1_TRICKS else TRICKS - k
            assert hands[0].bit_count() == hands[1].bit_count() == size, "13 cards each before every phase-1 trick"
        drawn = state.prizes[0] | state.prizes[1] | state.draws[0] | state.draws[1]
        assert drawn.bit_count() == 2 * min(k, PHASE1_TRICKS) and not drawn & in_stock
        for s in (0, 1):
            assert state.prizes[s].bit_count() == state.draws[1 - s].bit_count() == state.phase1_won[s]
        assert sum(state.phase1_won) == min(k, PHASE1_TRICKS)
        assert state.turn_up == (state.stock[2 * k] if k < PHASE1_TRICKS else -1)
        assert state.trump == state.stock[0] // 13, "trump never changes in a deal"
        for s in (0, 1):
            for suit in range(4):
                if state.voids[s] >> suit & 1:
                    assert not hands[s] & SUIT_MASKS[suit], f"seat {s} is marked void in a suit it holds"
            known = self.known_cards(state, s)
            assert not known[1 - s] & ~hands[1 - s], "a card marked known is not in that hand"
        if state.phase == PHASE_OVER or (state.phase == PHASE_DEAL_END):
            assert (played[0] | played[1]) == FULL_DECK and len(state.history) == 52
            phase1, phase2 = self.phase_tricks(state)
            assert sum(phase2) == TRICKS - PHASE1_TRICKS
        assert state.scores[0] == -state.scores[1]

    def render_header(self, state: GermanWhistState) -> str:
        k = state.trick_number
        stage = 1 if k < PHASE1_TRICKS else 2
        return super().render_header(state) + f" · stage {stage} (trick {min(k + 1, TRICKS)})"

    def render_extra(self, state: GermanWhistState, seat: int | None) -> str:
        size = self.stock_size(state)
        face = f", face-up {card_pretty(state.turn_up)}" if state.turn_up >= 0 else ""
        phase1, phase2 = self.phase_tricks(state)
        lines = [f"stock: {size} cards{face}   phase-1 tricks {list(phase1)}   phase-2 tricks {list(phase2)}"]
        if seat is None:
            below = state.stock[2 * state.trick_number + 1 :] if size else ()
            lines.append(f"stock below the face-up card: {format_cards(list(below), pretty=True) or '-'}")
            for s in (0, 1):
                lines.append(f"{self.seat_name(s)} drew face down: {format_cards(state.draws[s], pretty=True) or '-'}")
        else:
            own = self.seen_draws(state, seat)[2]
            lines.append(f"my face-down draws: {format_cards(own, pretty=True) or '-'}")
        return "\n".join(lines)
