"""Rules of the toy ``low_whist_v0``: four players each for himself, 13 cards each, no trump, and the
lowest card of the led suit wins the trick. Each trick taken is worth a point; the reward of a deal
is a seat's tricks less the average (13 / 4), so the rewards of a deal sum to zero.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from whist_env.cards import FULL_DECK, NUM_RANKS
from whist_env.options import GameConfig, option
from whist_env.rules.core import PHASE_PLAY, State, TrickGame
from whist_env.rules.tricks import deal_round_robin
from whist_env.view import ViewExtras

NUM_PLAYERS = 4
TRICKS = 13


@dataclass(frozen=True)
class LowWhistConfig(GameConfig):
    """Options of ``low_whist_v0``."""

    num_deals: int = option(1, kind=int, minimum=1, maximum=10_000, doc="deals in the episode (a series)")
    include_history: bool = option(True, doc="observations remember every card played (perfect recall)")


@dataclass(frozen=True, kw_only=True, init=False)
class LowWhistExtras(ViewExtras):
    """What a Low Whist seat knows beyond the common view."""

    deals_left: int  # deals left in the series, this one included


def lowest_of_led_suit(plays: Sequence[tuple[int, int]]) -> int:
    """Seat that played the lowest card of the led suit (``plays[0]`` led); other suits never win."""
    best_seat, best_card = plays[0]
    suit = best_card // NUM_RANKS
    for seat, card in plays[1:]:
        if card // NUM_RANKS == suit and card < best_card:
            best_seat, best_card = seat, card
    return best_seat


class LowWhist(TrickGame[State]):
    """Rules of ``low_whist_v0``."""

    game_id = "low_whist_v0"
    config_cls = LowWhistConfig
    state_cls = State
    config: LowWhistConfig

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.num_players = NUM_PLAYERS
        self.recall = self.config.include_history

    def start_deal(self, state: State, deck: list[int]) -> None:
        """Deal all 52 cards one at a time from the dealer's left; no trump; the dealer's left leads."""
        first = (state.dealer + 1) % NUM_PLAYERS
        order = [(first + i) % NUM_PLAYERS for i in range(NUM_PLAYERS)]
        self.reset_deal(state, deal_round_robin(deck, order, NUM_PLAYERS), TRICKS)
        state.phase = PHASE_PLAY
        state.leader = state.to_act = first

    def trick_winner(self, plays: Sequence[tuple[int, int]], trump: int | None) -> int:
        """The rule hook: the lowest card of the led suit wins (there is no trump)."""
        return lowest_of_led_suit(plays)

    def summary_fields(self) -> dict[str, int | tuple[int, ...]]:
        return {"tricks": (0,) * NUM_PLAYERS}

    def end_deal(self, state: State) -> list[float] | None:
        """Each seat is paid its tricks less the average; ``scores`` add up the tricks over the series."""
        tricks = state.tricks_won
        state.scores = [score + t for score, t in zip(state.scores, tricks, strict=True)]
        state.deal_summary = (("tricks", tuple(tricks)),)
        rewards = [t - TRICKS / NUM_PLAYERS for t in tricks]
        return self.finish(state, rewards, state.deal_index + 1 >= self.config.num_deals)

    def view_extra(self, state: State, seat: int) -> LowWhistExtras:
        return LowWhistExtras(deals_left=self.config.num_deals - state.deal_index)

    def check_invariants(self, state: State) -> None:
        super().check_invariants(state)
        everywhere = 0
        for s in range(NUM_PLAYERS):
            assert not everywhere & (state.hands[s] | state.played[s]), "a card is in two places"
            everywhere |= state.hands[s] | state.played[s]
        assert everywhere == FULL_DECK, "a card went missing"
        assert state.trump is None, "Low Whist has no trump"
