"""Rule-based play for ``humbug_v0`` (RULES.md §3)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from whist_env.agents.cardplay import Table
from whist_env.agents.heuristic import HeuristicAgent, two_player_play
from whist_env.rules.humbug import HumbugExtras
from whist_env.view import PlayerView


@dataclass
class _Layout:
    """One deal's initial layout as this seat studied it, and the opponent cards it has seen go since."""

    deal_index: int
    dealer: int
    mine: int  # my 26 cards as dealt
    theirs: int  # the opponent's 26 cards as dealt
    gone: int  # opponent cards I saw played (in the trick or the last trick of a view)


class HumbugHeuristic(HeuristicAgent):
    """Humbug with the whole distribution in mind.

    * **Cash sure winners**: with the opponent's hand known, a card is a sure winner when the
      opponent holds no higher card of its suit and cannot ruff it; trumps are drawn first with
      masters while the agent holds more trumps than the opponent.
    * **Keep count of each suit**: the opponent's possible cards are tracked suit by suit, so leads go
      where it must follow, and a long suit's small cards become winners once it is out.
    * Otherwise **make the opponent pay**: lead the card whose cheapest winning reply is the highest
      the opponent holds relative to the card led (forcing out its high cards promotes the agent's),
      or a low card of a suit it is out of, to draw a trump. Follow with the cheapest card that wins
      (the follower plays last, so any winner holds), else play low; discard low cards from short
      suits, keeping masters and trumps.
    * With both hands known and at most seven cards each, the ending is solved exactly.

    **What it may see.** In ``open_table`` mode the view holds the opponent's current hand. In
    ``hidden_hand`` mode it does so only at the study step (``extra.initial_layout``, before the
    seat's first card); the agent then **keeps its own memory**, per seat and keyed by the deal
    (deal index, dealer and the seat's own dealt hand), of the initial layout and of the opponent
    cards it has since seen on the table in its views. From that memory it infers the cards the
    opponent may still hold (its dealt hand, less the cards seen played, among the cards this seat
    cannot place, and the turn-up until it is played). Nothing else is remembered and nothing
    hidden is read; a fresh agent that joins after the study step plays with the view alone.
    """

    game_id = "humbug_v0"

    def __init__(self, **options: object) -> None:
        super().__init__(**options)
        self._memory: dict[int, _Layout] = {}

    def remember(self, view: PlayerView) -> _Layout | None:
        """Update and return this seat's memory of the deal (None when it has not seen the layout)."""
        seat = view.seat
        layout = cast(HumbugExtras, view.extra).initial_layout
        if layout is not None:
            mem = _Layout(view.deal_index, view.dealer, layout[0], layout[1], 0)
            self._memory[seat] = mem
        else:
            found = self._memory.get(seat)
            if (
                found is None
                or found.deal_index != view.deal_index
                or found.dealer != view.dealer
                or view.hand & ~found.mine
            ):
                return None
            mem = found
        opp = 1 - seat
        for s, c in view.trick + view.last_trick:
            if s == opp:
                mem.gone |= 1 << c
        return mem

    def play(self, view: PlayerView) -> int:
        opp = 1 - view.seat
        restrict = None
        if not (view.known[opp] and cast(HumbugExtras, view.extra).mode == "open_table"):
            mem = self.remember(view)
            if mem is not None:
                # The turn-up stays in every view (so never "unseen") but is in the dealer's hand until played.
                visible = view.unseen | (1 << view.turn_up if view.turn_up >= 0 else 0)
                restrict = {opp: mem.theirs & ~mem.gone & visible}
        t = Table(view, restrict=restrict)
        return two_player_play(t, view.legal)
