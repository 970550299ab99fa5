"""English Humbug: two players, all 52 cards dealt, 26 tricks (RULES.md §3, seed 002).

The non-dealer receives the first card and leads the first trick; the dealer's last card is turned
up for trump and stays in his hand. The result is the difference in tricks. In ``hidden_hand`` mode
(the default) each player studies both original hands before his first card, and afterwards sees
only his own hand, the trick, the last trick and the counts: no opponent hand and no history.
``open_table`` keeps the opponent's current hand visible throughout.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from whist_env.errors import OptionError
from whist_env.options import GameConfig, option
from whist_env.rules.core import PHASE_OVER, PHASE_PLAY, State, TrickGame
from whist_env.rules.tricks import deal_round_robin
from whist_env.view import CardSet, ViewExtras

NUM_PLAYERS = 2
TRICKS = 26


@dataclass(frozen=True)
class HumbugConfig(GameConfig):
    """Options of ``humbug_v0`` (RULES.md §3.3, §3.4)."""

    mode: str = option("hidden_hand", choices=("hidden_hand", "open_table"), doc="what stays visible")
    num_deals: int = option(1, kind=int, minimum=1, maximum=10_000, doc="deals in the episode (series)")
    include_history: bool | None = option(
        None, kind=bool, optional=True, doc="perfect recall (open_table only; default True there)"
    )

    def check(self, game_id: str) -> None:
        if self.mode == "hidden_hand" and self.include_history:
            raise OptionError(
                f"{game_id}: include_history=True is not allowed with mode='hidden_hand' (RULES.md §3.3 "
                "forbids card-by-card history); use mode='open_table' or leave include_history unset"
            )


@dataclass(frozen=True, kw_only=True, init=False)
class HumbugExtras(ViewExtras):
    """What a Humbug seat knows beyond the common view (RULES.md §3.3)."""

    mode: str  # the ``mode`` option: "open_table" or "hidden_hand"
    deals_left: int  # deals left in the series, this one included
    # (my hand as dealt, the opponent's hand as dealt) while this seat is at its study step, else None
    initial_layout: tuple[CardSet, CardSet] | None = None


class Humbug(TrickGame[State]):
    """Rules of ``humbug_v0``."""

    game_id = "humbug_v0"
    config_cls = HumbugConfig
    state_cls = State
    config: HumbugConfig
    turn_up_on_table = False  # the turn-up is in the dealer's hand: shown by id, not placed (§3.3)
    info_seat_keys = ("balance",)  # the seat's own balance; the rest of info is the same for both

    def __init__(self, /, **options: Any) -> None:
        super().__init__(**options)
        self.num_players = NUM_PLAYERS
        self.open_table = self.config.mode == "open_table"
        # §0.8 / §3.3: hidden-hand mode never keeps history.
        self.recall = self.open_table and self.config.include_history is not False

    def start_deal(self, state: State, deck: list[int]) -> None:
        """RULES.md §3.1: deal alternately from the non-dealer; ``deck[51]`` (the dealer's) is trump."""
        d = state.dealer
        n = 1 - d
        self.reset_deal(state, deal_round_robin(deck, (n, d), NUM_PLAYERS), TRICKS)
        state.turn_up = deck[51]
        state.trump = deck[51] // 13
        # The turn-up is an ordinary card of the dealer's hand from the start (§3.1); its id stays in
        # every observation through turn_up_visible.
        state.turn_up_public = False
        state.phase = PHASE_PLAY
        state.leader = state.to_act = n  # §3.2 the non-dealer leads

    def end_deal(self, state: State) -> list[float] | None:
        """RULES.md §3.4: the player with more tricks wins by the difference; per-deal rewards."""
        t = state.tricks_won
        diff = t[0] - t[1]
        state.scores = [state.scores[0] + diff, state.scores[1] - diff]
        state.deal_summary = (("tricks", tuple(t)), ("difference", diff), ("balance", tuple(state.scores)))
        over = state.deal_index + 1 >= self.config.num_deals
        return self.finish(state, [float(diff), float(-diff)] if diff else None, over)

    def studying(self, state: State, seat: int) -> bool:
        """Whether ``seat`` is at its study step: it has not yet played a card this deal (§3.3)."""
        return state.phase == PHASE_PLAY and not state.played[seat]

    def known_cards(self, state: State, seat: int) -> list[int]:
        known = [0, 0]
        known[seat] = state.hands[seat]
        if state.phase != PHASE_OVER and (self.open_table or self.studying(state, seat)):
            known[1 - seat] = state.hands[1 - seat]
        return known

    def turn_up_visible(self, state: State, seat: int) -> int:
        # §3.3: the turn-up card id is part of every observation in both modes.
        return state.turn_up

    def view_extra(self, state: State, seat: int) -> HumbugExtras:
        return HumbugExtras(
            mode=self.config.mode,
            deals_left=self.config.num_deals - state.deal_index,
            initial_layout=(state.dealt[seat], state.dealt[1 - seat]) if self.studying(state, seat) else None,
        )

    def summary_fields(self) -> dict[str, int | tuple[int, ...]]:
        """The deal summary in ``info``."""
        return {"tricks": (0, 0), "difference": 0, "balance": (0, 0)}

    def info_now(self, state: State, seat: int) -> dict[str, Any]:
        info = super().info_now(state, seat)
        info["balance"] = state.scores[seat]
        return info

    def info_seat(self, state: State, seat: int) -> dict[str, Any]:
        return {"balance": state.scores[seat]}

    def deal_unit(self) -> str:
        """One deal's reward in words."""
        return "one deal of 26 tricks: ±(trick difference)"

    def deal_return_range(self) -> tuple[float, float]:
        """RULES.md §3.4: the deal pays the trick difference, at most all 26 tricks to one side."""
        return -float(TRICKS), float(TRICKS)

    def check_invariants(self, state: State) -> None:
        super().check_invariants(state)
        if state.phase == PHASE_PLAY:
            assert sum(h.bit_count() for h in state.hands) + len(state.history) == 52
            assert abs(state.hands[0].bit_count() - state.hands[1].bit_count()) <= 1
        assert state.scores[0] == -state.scores[1]
