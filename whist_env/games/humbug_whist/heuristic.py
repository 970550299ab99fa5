"""Rule-based exchange and play for ``humbug_whist_v0`` (RULES.md §1)."""

from __future__ import annotations

from whist_env.agents.cardplay import Table
from whist_env.agents.heuristic import ACE, JACK, HeuristicAgent, two_player_play
from whist_env.cards import NUM_RANKS, cards_of, rank
from whist_env.view import PlayerView

KEEP = 52  # RULES.md §0.6 exchange-phase actions
EXCHANGE = 53
# Worth of a side-suit card for tricks: A, K, Q, J.
SIDE_VALUES = {ACE: 1.0, ACE - 1: 0.6, ACE - 2: 0.3, JACK: 0.1}


def card_strength(card: int, trump: int | None) -> float:
    """A card's worth for the deal: trick-taking power, and for trump honours their honour points too."""
    r = rank(card)
    if trump is not None and card // NUM_RANKS == trump:
        # every trump can ruff; A K Q J of trumps also count towards honours (RULES.md §1.6)
        return 0.55 + 0.1 * r + (0.35 if r >= JACK else 0.0)
    return SIDE_VALUES.get(r, 0.0)


def hand_strength(hand: int, trump: int | None) -> float:
    """The sum of :func:`card_strength` over a hand."""
    return sum(card_strength(c, trump) for c in cards_of(hand))


def blind_strength(view: PlayerView) -> float:
    """What a random blind is worth on average: 13 cards drawn from those this seat cannot place."""
    pool = view.unseen
    n = pool.bit_count()
    if not n:
        return 0.0
    return 13 * sum(card_strength(c, view.trump) for c in cards_of(pool)) / n


class HumbugWhistHeuristic(HeuristicAgent):
    """Swedish Humbug whist: exchange a weak hand for the blind, then play as in whist.

    * **Exchange** when the hand's strength falls below what a random blind is worth. A card's
      strength counts aces and kings (and a little for queens and jacks) in the side suits, every
      trump (trumps ruff), and extra for the trump honours A K Q J, which also score honours. A blind
      is worth on average 13 times the mean strength of the cards the seat cannot place; the dealer's
      hand includes the turn-up, which goes out with it if he exchanges.
    * **Play as in whist** for two: draw trumps with masters while holding as many as the opponent
      may, cash sure winners, otherwise lead the card that makes the opponent pay most to win it;
      follow with the cheapest card that wins (the follower plays last), else low, and discard low
      cards from short suits. The blinds stay unseen, so the opponent may hold any card this seat
      cannot place; voids shown are used.
    """

    game_id = "humbug_whist_v0"

    def decide(self, view: PlayerView) -> int:
        if view.phase != "exchange":
            return super().decide(view)
        mine = hand_strength(view.hand, view.trump)
        return EXCHANGE if mine < blind_strength(view) else KEEP

    def play(self, view: PlayerView) -> int:
        return two_player_play(Table(view), view.legal)
