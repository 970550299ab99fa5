"""Trick mechanics shared by every game: legal cards, trick winner, dealing (RULES.md §0.4, §0.5).

All sets of cards are int masks (see ``whist_env.cards``).
"""

from __future__ import annotations

from collections.abc import Sequence

from whist_env.cards import NUM_RANKS, SUIT_MASKS

NO_SUIT = -1


def legal_cards(hand: int, led_suit: int) -> int:
    """Cards of ``hand`` that may be played: RULES.md §0.4.

    The leader (``led_suit == NO_SUIT``) may play anything; a follower must follow the led suit if
    able, otherwise may play anything. There is never a duty to trump or to play higher.
    """
    if led_suit < 0:
        return hand
    follow = hand & SUIT_MASKS[led_suit]
    return follow if follow else hand


def beats(card: int, best: int, trump: int | None) -> bool:
    """Whether ``card``, played now, takes the lead of a trick from ``best``: RULES.md §0.5.

    A card of ``best``'s suit beats it when higher; a card of another suit only when it is a trump.
    """
    s = card // NUM_RANKS
    if s == best // NUM_RANKS:
        return card > best
    return s == trump


def trick_leader(plays: Sequence[tuple[int, int]], trump: int | None) -> tuple[int, int]:
    """``(seat, card)`` winning a non-empty trick of ``(seat, card)`` plays so far, ``plays[0]`` being the lead.

    The highest trump wins; with no trump in the trick the highest card of the led suit (RULES.md §0.5).
    """
    # :func:`beats` inlined (the rules engine calls this once a trick): a card of the best card's suit
    # takes the lead when higher, a card of another suit only when it is a trump.
    best_seat, best_card = plays[0]
    best_suit = best_card // NUM_RANKS
    for seat, card in plays[1:]:
        s = card // NUM_RANKS
        if s == best_suit:
            if card > best_card:
                best_seat, best_card = seat, card
        elif s == trump:
            best_seat, best_card, best_suit = seat, card, s
    return best_seat, best_card


def trick_winner(plays: Sequence[tuple[int, int]], trump: int | None) -> int:
    """Seat that wins a complete trick of ``(seat, card)`` plays (see :func:`trick_leader`): RULES.md §0.5."""
    return trick_leader(plays, trump)[0]


def deal_round_robin(deck: Sequence[int], order: Sequence[int], num_seats: int) -> list[int]:
    """Deal ``deck[i]`` to seat ``order[i % len(order)]`` for every card of ``deck``.

    Returns one mask per seat (``num_seats`` of them); seats not in ``order`` receive nothing.
    """
    hands = [0] * num_seats
    k = len(order)
    for i, card in enumerate(deck):
        hands[order[i % k]] |= 1 << card
    return hands
