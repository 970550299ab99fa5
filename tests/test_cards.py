from __future__ import annotations

import numpy as np
import pytest

from whist_env.cards import (
    FULL_DECK,
    SUIT_MASKS,
    above,
    below,
    bits_of,
    bits_of_loop,
    card_pretty,
    card_str,
    cards_of,
    format_cards,
    format_hand,
    highest,
    lowest,
    mask_of,
    parse_card,
    parse_cards,
    rank,
    suit,
    suits_cards,
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
    # For people a set of cards reads as a hand does (spades first, highest first); ids and lists keep their order.
    assert format_cards(mask_of(parse_cards("2C AS TD KS")), pretty=True) == "A♠ K♠ 10♦ 2♣"
    assert format_cards(mask_of(parse_cards("2C AS TD KS"))) == "2C TD KS AS"
    assert format_cards(parse_cards("2C AS TD"), pretty=True) == "2♣ A♠ 10♦"


def test_bits_of_lists_set_bits_beyond_the_deck_too() -> None:
    # An action mask has bits above 51 (bids, KEEP/EXCHANGE): bits_of lists them all, ascending.
    assert bits_of(0) == []
    assert bits_of((1 << 53) | (1 << 52) | (1 << 7) | 1) == [0, 7, 52, 53]
    assert bits_of(FULL_DECK) == cards_of(FULL_DECK) == list(range(52))


def test_bits_of_tables_equal_the_plain_loop() -> None:
    # bits_of reads masks below 2**56 a byte at a time from tables; bits_of_loop is its plain twin.
    rng = np.random.default_rng(0)
    masks = [0, 1, (1 << 56) - 1, 1 << 55, 1 << 56, (1 << 70) | 5, FULL_DECK, *SUIT_MASKS]
    for _ in range(20_000):
        width = int(rng.integers(1, 72))
        density = rng.uniform(0.0, 1.0)
        masks.append(sum(1 << int(b) for b in np.flatnonzero(rng.random(width) < density)))
    for mask in masks:
        assert bits_of(mask) == bits_of_loop(mask) == [b for b in range(mask.bit_length()) if mask >> b & 1], mask
    with pytest.raises(ValueError, match="non-negative int"):
        bits_of(-1)  # no finite set of bits: refused, not looped over for ever


def test_lowest_highest_above_below() -> None:
    hearts = mask_of(parse_cards("3H 9H KH"))
    assert card_str(lowest(hearts)) == "3H" and card_str(highest(hearts)) == "KH"
    nine = parse_card("9H")
    assert cards_of(above(nine)) == parse_cards("TH JH QH KH AH")
    assert cards_of(below(nine)) == parse_cards("2H 3H 4H 5H 6H 7H 8H")
    assert above(parse_card("AS")) == 0 and below(parse_card("2C")) == 0


def test_suits_cards_of_a_suit_set() -> None:
    assert suits_cards(0) == 0
    assert suits_cards(0b1010) == SUIT_MASKS[1] | SUIT_MASKS[3]
    assert suits_cards(0b1111) == FULL_DECK
