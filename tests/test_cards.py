from __future__ import annotations

import pytest

from whist_env.cards import (
    FULL_DECK,
    card_pretty,
    card_str,
    cards_of,
    format_hand,
    mask_of,
    parse_card,
    parse_cards,
    rank,
    suit,
)


def test_ids_follow_rules_0_1() -> None:
    # RULES.md §0.1: card_id = 13*suit + rank, 0 = 2♣ … 51 = A♠
    assert parse_card("2C") == 0
    assert parse_card("AS") == 51
    assert parse_card("TS") == 47
    assert parse_card("AH") == 38
    assert suit(47) == 3 and rank(47) == 8


@pytest.mark.parametrize("text", ["TS", "10S", "10♠", "ts", "T♠", " 10s "])
def test_parse_forms(text: str) -> None:
    assert parse_card(text) == 47


def test_format_round_trip() -> None:
    for c in range(52):
        assert parse_card(card_str(c)) == c
        assert parse_card(card_pretty(c)) == c
    assert card_pretty(47) == "10♠"
    assert card_str(47) == "TS"


@pytest.mark.parametrize("bad", ["", "1S", "TX", "11H", "AHH", "♠"])
def test_bad_cards_are_rejected_with_the_allowed_forms(bad: str) -> None:
    with pytest.raises(ValueError, match="rank then suit"):
        parse_card(bad)


def test_parse_card_rejects_non_strings() -> None:
    with pytest.raises(TypeError):
        parse_card(5)  # type: ignore[arg-type]


def test_masks() -> None:
    cards = parse_cards("2C AS TD")
    m = mask_of(cards)
    assert cards_of(m) == sorted(cards)
    assert cards_of(FULL_DECK) == list(range(52))
    assert format_hand(m) == "♠ A  ♥ -  ♦ 10  ♣ 2"
