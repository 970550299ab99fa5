"""Rule-based play for ``german_whist_v0`` (RULES.md §5)."""

from __future__ import annotations

from typing import cast

from whist_env.agents.cardplay import Table
from whist_env.agents.heuristic import HeuristicAgent, cheapest_winner, two_player_play, winners
from whist_env.cards import NUM_CARDS, NUM_RANKS, SUIT_MASKS, cards_of, rank
from whist_env.games.german_whist.rules import GermanWhistExtras
from whist_env.view import PlayerView


def card_value(card: int, trump: int | None) -> float:
    """Worth of holding ``card`` for the scoring phase, 0..1: trumps and high cards most."""
    r = rank(card) / 12
    if trump is not None and card // NUM_RANKS == trump:
        return 0.55 + 0.45 * r
    return r**3


# card_value of every card, per trump suit (index 4: no trump), for the agent's loops: a lookup costs a fraction of
# the call, and the floats are the function's own
_VALUES = tuple(tuple(card_value(c, None if t == 4 else t) for c in range(NUM_CARDS)) for t in range(5))


def _values(trump: int | None) -> tuple[float, ...]:
    return _VALUES[4 if trump is None else trump]


class GermanWhistHeuristic(HeuristicAgent):
    """German Whist: buy good prizes cheaply in the drawing phase, then play the hands out known.

    * **Value the face-up prize.** In tricks 1–13 the winner takes the face-up card, the loser an
      unseen one, worth on average what the cards this seat cannot place are worth. A card's worth
      for the scoring phase grows with its rank and is highest for trumps (high trumps and aces
      first). When the prize is worth more than that average, the agent tries to win it at the least
      cost: a lead that is sure to win if it spends less than the prize gains, otherwise the cheapest
      card that beats the opponent's lead when that trade is worth it.
    * **Lose cheaply when the prize is poor**: lead or play the least valuable card, ideally one that
      loses, keeping high cards and trumps for the second phase.
    * **Use the opponent's known cards**: the face-up cards it took and still holds are known to be
      in its hand, so sure winners are judged against them (and against its shown voids).
    * **Play the ending with the opponent's hand known**: once the stock is empty, with perfect recall
      the opponent's 13 cards are known; the agent draws trumps and cashes sure winners, leads what
      makes the opponent pay most, follows as cheaply as wins, and solves the last seven tricks
      exactly. Without recall it judges from what it can place.
    """

    game_id = "german_whist_v0"

    def play(self, view: PlayerView) -> int:
        t = Table(view)
        legal = view.legal
        prize = view.turn_up
        if cast(GermanWhistExtras, view.extra).stage == 2 or prize < 0:
            return two_player_play(t, legal)
        trump = t.trump
        gain = _values(trump)[prize] - self.draw_value(view)
        if not view.trick:
            return self.lead(t, legal, gain)
        return self.follow(t, legal, gain)

    def draw_value(self, view: PlayerView) -> float:
        """Average worth of the unseen card the loser draws (over the cards this seat cannot place)."""
        pool = view.unseen & ~(1 << view.turn_up)
        n = pool.bit_count()
        # summed in ascending card order, as the engine's port sums them
        return sum(map(_values(view.trump).__getitem__, cards_of(pool))) / n if n else 0.0

    def lead(self, t: Table, legal: int, gain: float) -> int:
        values = _values(t.trump)
        if gain > 0:
            sure = winners(t, legal, sure=True)
            if sure:
                card = min(cards_of(sure), key=values.__getitem__)
                card = t.lowest_equal(card)
                # A sure winner keeps its worth for phase 2 too: spend it only for a prize worth more.
                if values[card] <= gain + 0.35:
                    return card
        return self.least_valuable(t, legal, prefer_losing=True)

    def follow(self, t: Table, legal: int, gain: float) -> int:
        values = _values(t.trump)
        beat = winners(t, legal, sure=False)
        if beat and gain > 0:
            card = cheapest_winner(t, beat)
            lose = legal & ~beat
            spare = min(map(values.__getitem__, cards_of(lose)), default=values[card])
            # Winning costs the card spent instead of the cheapest loser, and brings the prize instead of a draw.
            if values[card] - spare <= gain + 0.1:
                return card
        return self.least_valuable(t, legal, prefer_losing=True)

    def least_valuable(self, t: Table, legal: int, prefer_losing: bool) -> int:
        """The legal card worth least, among the ones that lose the trick when that is possible."""
        pool = legal
        if prefer_losing and t.best >= 0:
            losing = legal & ~winners(t, legal, sure=False)
            pool = losing or legal
        elif prefer_losing:
            # Leading: a card the opponent can beat, unless none.
            beatable = 0
            for c in cards_of(legal):
                if not t.holds(c):
                    beatable |= 1 << c
            pool = beatable or legal
        values = _values(t.trump)
        hand = t.view.hand
        shorter = [-(hand & m).bit_count() for m in SUIT_MASKS]  # among equal values, the longer suit's card
        return min(cards_of(pool), key=lambda c: (values[c], shorter[c // NUM_RANKS]))
