"""RULES.md §0.4 (following suit) and §0.5 (trick winner), with the vectors of every game."""

from __future__ import annotations

import pytest

from whist_env.cards import CLUBS, DIAMONDS, HEARTS, SPADES, cards_of, mask_of, parse_card, parse_cards
from whist_env.rules.tricks import NO_SUIT, beats, legal_cards, trick_leader, trick_winner


def legal(hand: str, led: str | None) -> set[str]:
    from whist_env.cards import card_str

    led_suit = NO_SUIT if led is None else parse_card(led) // 13
    return {card_str(c) for c in cards_of(legal_cards(mask_of(parse_cards(hand)), led_suit))}


def winner(plays: str, trump: int | None) -> int:
    cards = parse_cards(plays)
    return trick_winner(list(enumerate(cards)), trump)


def test_leader_may_lead_anything_including_trumps() -> None:
    assert legal("AS 2H 3C", None) == {"AS", "2H", "3C"}


@pytest.mark.parametrize(
    ("hand", "led", "expected"),
    [
        ("KD 2D AS 3C", "7D", {"KD", "2D"}),  # SE-3 / HE-2
        ("AS 3C 5H", "7D", {"AS", "3C", "5H"}),  # SE-3 / HE-2: void, any card
        ("2S AH 9D", "KS", {"2S"}),  # WC-2
        ("AH 9D", "KS", {"AH", "9D"}),  # WC-2: trumping optional
        ("2H AS KD", "9H", {"2H"}),  # PL-3
        ("AS KD", "9H", {"AS", "KD"}),  # PL-3
        ("KS 3S 4H 5H", "TS", {"KS", "3S"}),  # GW-2
    ],
)
def test_follow_suit_vectors(hand: str, led: str, expected: set[str]) -> None:
    assert legal(hand, led) == expected


@pytest.mark.parametrize(
    ("plays", "trump", "expected"),
    [
        ("7D 2S", SPADES, 1),  # SE-3: follower trumps
        ("7D AC", SPADES, 0),  # SE-3: off-suit cannot win
        ("5S AS", SPADES, 1),  # SE-3
        ("7D KD", SPADES, 1),  # SE-3 / HE-3
        ("7D 2D", SPADES, 0),  # HE-3
        ("7D AS", SPADES, 1),  # HE-3
        ("7D 3C", SPADES, 0),  # HE-3
        ("KS 2S 3H AS", HEARTS, 2),  # WC-3: the only trump
        ("4C QC AD KC", HEARTS, 3),  # WC-3: highest club (AD neither clubs nor trump)
        ("9H AS 2H KH", None, 3),  # PL-4 no trump
        ("9H AS 2H KH", SPADES, 1),  # PL-4 trump spades
        ("TS KS", HEARTS, 1),  # GW-2
        ("TS 3S", HEARTS, 0),  # GW-2
        ("AC 2H", HEARTS, 1),  # GW-3
        ("AC AD", HEARTS, 0),  # GW-3
        ("7D 2S 3S", SPADES, 2),  # higher trump overtrumps
        ("AD KD QC", CLUBS, 2),
        ("AD KD QC", DIAMONDS, 0),
    ],
)
def test_trick_winner_vectors(plays: str, trump: int | None, expected: int) -> None:
    assert winner(plays, trump) == expected


@pytest.mark.parametrize("trump", [None, CLUBS, DIAMONDS, HEARTS, SPADES])
def test_beats_is_the_pairwise_form_of_trick_leader(trump: int | None) -> None:
    # RULES.md §0.5, one rule: a two-card trick goes to the second card exactly when it beats the lead.
    for lead in range(52):
        for card in range(52):
            if card != lead:
                second_wins = trick_leader([(0, lead), (1, card)], trump) == (1, card)
                assert beats(card, lead, trump) == second_wins


def test_trick_leader_of_a_trick_in_progress() -> None:
    # The card that leads matters to a follower (Table.best), not only the seat.
    plays = list(enumerate(parse_cards("9D KD 2H")))
    assert trick_leader(plays[:1], HEARTS) == (0, parse_card("9D"))
    assert trick_leader(plays[:2], HEARTS) == (1, parse_card("KD"))
    assert trick_leader(plays, HEARTS) == (2, parse_card("2H"))
    assert trick_leader(plays, None) == (1, parse_card("KD")) and trick_winner(plays, None) == 1
