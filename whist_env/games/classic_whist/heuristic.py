"""Rule-based play for ``classic_whist_v0`` (RULES.md §2)."""

from __future__ import annotations

from whist_env.agents.cardplay import Table
from whist_env.agents.heuristic import (
    ACE,
    JACK,
    HeuristicAgent,
    cheapest_winner,
    discard,
    follow_to_win,
    lead_to_win,
    low_card,
    winners,
)
from whist_env.cards import SUIT_MASKS, above, cards_of, lowest, rank
from whist_env.view import PlayerView


class ClassicWhistHeuristic(HeuristicAgent):
    """Partnership whist by the classic maxims, from the seat's view only.

    * **Lead from the longest strong suit**: the top of a sequence headed by an honour (K from K Q),
      otherwise the lowest card; suits an opponent is known to ruff are avoided.
    * **Count trumps**: the agent knows which trumps the opponents may still hold (cards played,
      voids shown, the turn-up); while they may hold some and it holds four or more (or more than
      they may hold), it leads trumps, a master first; a side-suit winner counts as sure only when no
      opponent still to play may be out of the suit with a trump left.
    * **Cash sure winners** (masters no opponent can beat or ruff) before leading from length.
    * **Second hand low**, except **cover an honour with an honour** (a led J, Q or K is covered
      with the lowest higher honour); void in second hand, ruff a high or unbeatable lead cheaply.
    * **Third hand high**: take the trick with the cheapest card sure to hold it, else play the
      highest card that beats the trick (the lowest of equal cards).
    * **Do not overtake a partner's winning card** when no opponent still to play can beat it.
    * Fourth hand wins as cheaply as possible, or plays low; discards are low side-suit cards that
      are not masters, from short suits.
    """

    game_id = "classic_whist_v0"

    def play(self, view: PlayerView) -> int:
        t = Table(view, partner=(view.seat + 2) % 4)
        legal = view.legal
        if not view.trick:
            return lead_to_win(t, legal, draw_trumps_from=4)
        follow = legal & SUIT_MASKS[t.led]
        if t.winner == t.partner and t.safe_against(t.best):
            return low_card(t, legal)  # never overtake a partner's sure trick
        position = len(view.trick) + 1
        if position == 2:
            return self.second_hand(t, legal, follow)
        if position == 3:
            return self.third_hand(t, legal, follow)
        return follow_to_win(t, legal)

    def second_hand(self, t: Table, legal: int, follow: int) -> int:
        lead = t.view.trick[0][1]
        if follow:
            if JACK <= rank(lead) < ACE:
                covers = follow & above(lead) & _honours(t.led)
                if covers:
                    return lowest(covers)  # cover an honour with an honour
            sure = winners(t, follow, sure=True)
            if sure and rank(lead) >= JACK:
                return cheapest_winner(t, sure)
            return lowest(follow)  # second hand low
        # Void: ruff a lead the partner cannot beat, or a high one, as cheaply as holds.
        partner_beats = bool(t.possible[t.partner] & above(lead))
        if t.trump is not None and legal & SUIT_MASKS[t.trump] and (not partner_beats or rank(lead) >= JACK):
            sure = winners(t, legal, sure=True)
            if sure:
                return cheapest_winner(t, sure)
            return cheapest_winner(t, winners(t, legal & SUIT_MASKS[t.trump], sure=False) or legal)
        return discard(t, legal)

    def third_hand(self, t: Table, legal: int, follow: int) -> int:
        sure = winners(t, legal, sure=True)
        if sure:
            return cheapest_winner(t, sure)
        if follow:
            now = winners(t, follow, sure=False)
            if now:
                return t.lowest_equal(max(cards_of(now)))  # third hand high
            return lowest(follow)
        if t.winner != t.partner:
            ruff = winners(t, legal, sure=False)
            if ruff:
                return cheapest_winner(t, ruff)
        return discard(t, legal)


def _honours(suit: int) -> int:
    """J Q K A of a suit."""
    return SUIT_MASKS[suit] & ~((1 << (13 * suit + JACK)) - 1)
