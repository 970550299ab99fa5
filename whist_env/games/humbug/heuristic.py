"""Rule-based play for ``humbug_v0`` (RULES.md §3)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import cast

from whist_env.agents.cardplay import Table
from whist_env.agents.heuristic import HeuristicAgent, two_player_play
from whist_env.games.humbug.rules import HumbugExtras
from whist_env.view import PlayerView

# Deals remembered per seat: one per game the agent plays at once (several envs may share one agent object).
MAX_GAMES = 8


@dataclass
class _Layout:
    """One deal's initial layout as this seat studied it, and the opponent cards it has seen go since."""

    deal_index: int
    dealer: int
    mine: int  # my 26 cards as dealt
    theirs: int  # the opponent's 26 cards as dealt
    gone: int  # opponent cards I saw played (in the trick or the last trick of a view)
    hand: int = -1  # my hand in the last view of this deal (-1: the whole deal, before any view)
    turn_up: int = -1  # the turn-up card of the deal (-1: none seen)


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
    seat's first card); the agent then **keeps its own memory** of the initial layout and of the
    opponent cards it has since seen on the table in its views. From that memory it infers the cards
    the opponent may still hold (its dealt hand, less the cards seen played, among the cards this seat
    cannot place, and the turn-up until it is played). Nothing else is remembered and nothing hidden
    is read; a fresh agent that joins after the study step plays with the view alone.

    **One memory per game.** One agent object may play in several games at once (envs that share it):
    the memory is kept per seat and per deal, up to :data:`MAX_GAMES` deals per seat, and a view is
    matched to the deal it belongs to by what the view shows (deal index, dealer, turn-up, its hand as
    part of the hand last seen in that deal, the cards on the table as part of the dealt hands). The
    deal matched is the one whose last seen hand is closest to the view's (then the most recently
    used), so a shared agent plays each game as a private copy would (two deals that look the same in
    every respect could not be told apart). :meth:`get_state` and :meth:`set_state` save and restore
    the memory (training checkpoints use them).
    """

    game_id = "humbug_v0"

    def __init__(self, /, **options: object) -> None:
        super().__init__(**options)
        self._memory: dict[int, list[_Layout]] = {}  # seat -> its deals, least recently used first

    def get_state(self) -> dict[int, list[dict[str, int]]]:
        """The memory, as plain data (for checkpoints: ``set_state`` continues exactly)."""
        return {seat: [dataclasses.asdict(m) for m in deals] for seat, deals in self._memory.items()}

    def set_state(self, memory: Mapping[int, Sequence[Mapping[str, int]]]) -> None:
        """Continue with the memory :meth:`get_state` returned."""
        self._memory = {int(seat): [_Layout(**m) for m in deals] for seat, deals in memory.items()}

    def remember(self, view: PlayerView) -> _Layout | None:
        """Update and return this seat's memory of the view's deal (None when it has not seen the layout)."""
        seat = view.seat
        opp = 1 - seat
        deals = self._memory.setdefault(seat, [])
        layout = cast(HumbugExtras, view.extra).initial_layout
        if layout is not None:
            mem = _Layout(view.deal_index, view.dealer, layout[0], layout[1], 0, view.hand, view.turn_up)
            # the same deal studied again before this seat played a card: start its memory afresh
            deals[:] = [m for m in deals if not _same_start(m, mem)]
            deals.append(mem)
            del deals[:-MAX_GAMES]
        else:
            found = _match(deals, view, opp)
            if found is None:
                return None
            mem = found
            deals.remove(mem)
            deals.append(mem)  # most recently used last
            mem.hand = view.hand
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


def _deal_key(m: _Layout) -> tuple[int, ...]:
    return (m.deal_index, m.dealer, m.mine, m.theirs, m.turn_up)


def _same_start(m: _Layout, new: _Layout) -> bool:
    """Whether ``m`` is the deal ``new`` studies, with no card of this seat played since."""
    return _deal_key(m) == _deal_key(new) and m.hand == new.hand


def _match(deals: list[_Layout], view: PlayerView, opp: int) -> _Layout | None:
    """The remembered deal ``view`` belongs to: consistent with it, closest to it, then most recently used."""
    mine_seen = opp_seen = 0
    for s, c in view.trick + view.last_trick:
        if s == opp:
            opp_seen |= 1 << c
        else:
            mine_seen |= 1 << c
    best: _Layout | None = None
    best_gap = 53
    for m in deals:  # least recently used first: on a tie the later one wins
        if (
            m.deal_index != view.deal_index
            or m.dealer != view.dealer
            or (m.turn_up >= 0 and view.turn_up >= 0 and m.turn_up != view.turn_up)
            or view.hand & ~m.mine
            or (m.hand >= 0 and view.hand & ~m.hand)
            or mine_seen & ~m.mine
            or opp_seen & ~m.theirs
        ):
            continue
        gap = (m.hand & ~view.hand).bit_count() if m.hand >= 0 else 26
        if gap <= best_gap:
            best, best_gap = m, gap
    return best
