"""Cards as small ints, and the one place that spells them (RULES.md §0.1).

A card is ``13 * suit + rank`` with suits C D H S (0..3) and ranks 2..A (0..12), so 0 = 2♣ and
51 = A♠. The card id is also the action id of playing that card in every game. Sets of cards are
Python ints used as 52-bit masks (bit ``c`` set = card ``c`` present): they are immutable values,
cheap to copy, and set operations are single machine-level ops.
"""

from __future__ import annotations

from collections.abc import Iterable

NUM_CARDS = 52
NUM_SUITS = 4
NUM_RANKS = 13
SUITS = "CDHS"
RANKS = "23456789TJQKA"
SUIT_SYMBOLS = "♣♦♥♠"
SUIT_NAMES = ("clubs", "diamonds", "hearts", "spades")
FULL_DECK = (1 << NUM_CARDS) - 1
SUIT_MASKS = tuple(((1 << NUM_RANKS) - 1) << (NUM_RANKS * s) for s in range(NUM_SUITS))

CLUBS, DIAMONDS, HEARTS, SPADES = range(4)
# The trump suit as a number where there is none: in infos, as in the trump one-hot's fifth entry ("NT").
NO_TRUMP = 4


def suit(card: int) -> int:
    """Suit index 0..3 (C D H S) of a card id."""
    return card // NUM_RANKS


def rank(card: int) -> int:
    """Rank index 0..12 (2..A) of a card id."""
    return card % NUM_RANKS


def make_card(suit_index: int, rank_index: int) -> int:
    """Card id from a suit index 0..3 and a rank index 0..12."""
    return NUM_RANKS * suit_index + rank_index


def card_str(card: int) -> str:
    """Short form, rank then suit: ``"TS"`` for 10♠."""
    return RANKS[card % NUM_RANKS] + SUITS[card // NUM_RANKS]


def card_pretty(card: int) -> str:
    """Display form with a Unicode suit: ``"10♠"``."""
    r = RANKS[card % NUM_RANKS]
    return ("10" if r == "T" else r) + SUIT_SYMBOLS[card // NUM_RANKS]


def suit_str(suit_index: int | None) -> str:
    """Unicode symbol of a suit, or ``"NT"`` for no trump."""
    return "NT" if suit_index is None else SUIT_SYMBOLS[suit_index]


_SUIT_LOOKUP = {**{c: i for i, c in enumerate(SUITS)}, **{c: i for i, c in enumerate(SUIT_SYMBOLS)}}
_SUIT_LOOKUP.update({"♧": 0, "♢": 1, "♡": 2, "♤": 3})


def parse_card(text: str) -> int:
    """Parse one card: ``"TS"``, ``"10S"``, ``"10♠"``, ``"ts"`` and ``"T♠"`` all give 47.

    Raises:
        ValueError: naming the text and the accepted forms.
    """
    if not isinstance(text, str):
        raise TypeError(f"a card must be a string such as 'TS' or '10♠', got {text!r}")
    t = text.strip()
    if len(t) >= 2:
        suit_char = t[-1].upper() if t[-1].isalpha() else t[-1]
        rank_text = t[:-1].upper()
        if rank_text == "10":
            rank_text = "T"
        if suit_char in _SUIT_LOOKUP and len(rank_text) == 1 and rank_text in RANKS:
            return make_card(_SUIT_LOOKUP[suit_char], RANKS.index(rank_text))
    raise ValueError(
        f"cannot read {text!r} as a card: write rank then suit, rank one of "
        f"2 3 4 5 6 7 8 9 T (or 10) J Q K A, suit one of C D H S or ♣ ♦ ♥ ♠ (e.g. 'TS', '10♠')"
    )


def parse_cards(text: str | Iterable[str]) -> list[int]:
    """Parse several cards from a whitespace/comma separated string or an iterable of strings."""
    items = text.replace(",", " ").split() if isinstance(text, str) else list(text)
    return [parse_card(t) for t in items]


def mask_of(cards: Iterable[int]) -> int:
    """The mask holding the given card ids."""
    m = 0
    for c in cards:
        m |= 1 << c
    return m


def _byte_bits() -> tuple[tuple[tuple[int, ...], ...], ...]:
    """Per byte position k of a mask (bits 8k..8k+7), per byte value, the indices of its set bits."""
    by_value: list[tuple[int, ...]] = [()]
    for bit in range(8):
        by_value += [b + (bit,) for b in by_value]  # the values with this bit set follow the ones below it
    return tuple(tuple(tuple(8 * k + b for b in bits) for bits in by_value) for k in range(7))


_B0, _B1, _B2, _B3, _B4, _B5, _B6 = _byte_bits()


def bits_of(mask: int) -> list[int]:
    """Indices of the bits set in ``mask``, ascending: the card ids of a card mask, the action ids of an action mask."""
    if 0 <= mask < 1 << 56:  # a byte at a time from tables: a third of the loop's time on a hand (tests: the loop)
        return [*_B0[mask & 255], *_B1[(mask >> 8) & 255], *_B2[(mask >> 16) & 255], *_B3[(mask >> 24) & 255],
                *_B4[(mask >> 32) & 255], *_B5[(mask >> 40) & 255], *_B6[mask >> 48]]  # fmt: skip
    return bits_of_loop(mask)


def bits_of_loop(mask: int) -> list[int]:
    """:func:`bits_of` written plainly, for any non-negative ``mask`` (its twin in the tests).

    Raises:
        ValueError: for a negative ``mask``, which has no finite set of bits.
    """
    if mask < 0:
        raise ValueError(f"a mask is a non-negative int (bit c set: card or action c), got {mask}")
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def cards_of(mask: int) -> list[int]:
    """Card ids in a mask, ascending (suit-major: clubs first, then by rank)."""
    return bits_of(mask)


def lowest(mask: int) -> int:
    """Lowest card id of a non-empty mask (in one suit: the lowest rank)."""
    return (mask & -mask).bit_length() - 1


def highest(mask: int) -> int:
    """Highest card id of a non-empty mask (in one suit: the highest rank)."""
    return mask.bit_length() - 1


def above(card: int) -> int:
    """Mask of the cards of ``card``'s suit ranking above it."""
    return SUIT_MASKS[card // NUM_RANKS] & ~((2 << card) - 1)


ABOVE = tuple(above(c) for c in range(NUM_CARDS))
"""``ABOVE[c] == above(c)``, looked up: the encoders and the rules of thumb ask it many times a decision."""


def below(card: int) -> int:
    """Mask of the cards of ``card``'s suit ranking below it."""
    return SUIT_MASKS[card // NUM_RANKS] & ((1 << card) - 1)


def suits_cards(suit_bits: int) -> int:
    """Mask of every card of the suits set in a 4-bit suit set (bit ``s`` = suit ``s``; a seat's voids)."""
    m = 0
    for s in range(NUM_SUITS):
        if suit_bits >> s & 1:
            m |= SUIT_MASKS[s]
    return m


def count(mask: int) -> int:
    """Number of cards in a mask."""
    return mask.bit_count()


def format_cards(cards: Iterable[int] | int, pretty: bool = False) -> str:
    """Space-separated names of cards: an iterable of ids in its order, or a mask, which for people (``pretty``)
    reads as hands do everywhere (spades first, highest first: ``A♠ 10♠ K♥ 9♣``) and otherwise by id (``9C TS AS``)."""
    ids = cards_of(cards) if isinstance(cards, int) else list(cards)
    if pretty and isinstance(cards, int):
        ids.sort(key=lambda c: (-suit(c), -rank(c)))
    fmt = card_pretty if pretty else card_str
    return " ".join(fmt(c) for c in ids)


def format_hand(mask: int) -> str:
    """A hand grouped by suit, highest first, spades first: ``♠ A T 3  ♥ K  ♦ -  ♣ 9 2``."""
    parts = []
    for s in (SPADES, HEARTS, DIAMONDS, CLUBS):
        ranks = [RANKS[rank(c)] for c in reversed(cards_of(mask & SUIT_MASKS[s]))]
        parts.append(SUIT_SYMBOLS[s] + " " + (" ".join(r.replace("T", "10") for r in ranks) or "-"))
    return "  ".join(parts)
