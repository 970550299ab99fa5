"""The observation pieces every trick-taking game shares, written out slowly and plainly.

A reference encoder builds each piece as its own small vector with plain loops over the 52 cards
and the seats, keyed by the piece's name, in the order the game's observation declares them. It
knows nothing of the fast encoders' bit arithmetic: the two are written apart so that a test can
hold one against the other (``tests/encoding/test_reference_encoders.py``).

Seat-indexed pieces are relative to the observer: relative seat ``r`` is absolute seat
``(view.seat + r) % n``, "me" first, then clockwise.
"""

from __future__ import annotations

import numpy as np

from whist_env.cards import NUM_CARDS, NUM_RANKS, NUM_SUITS, cards_of
from whist_env.encoding.features import card_facts_reference
from whist_env.encoding.layout import SUIT_LABELS, relative_seat_labels
from whist_env.view import PlayerView

# The kinds of piece a reference encoder writes; a scalar is the only kind that is not 0/1.
BINARY_KINDS = ("cards", "onehot", "count", "flags")
TRUMP_NONE = NUM_SUITS  # the trump piece's last entry ("NT") means no trump


def card_set(mask: int) -> np.ndarray:
    """A 52-entry vector with a 1 at every card in ``mask``."""
    out = np.zeros(NUM_CARDS, np.float32)
    for card in cards_of(mask):
        out[card] = 1.0
    return out


def one_card(card: int) -> np.ndarray:
    """A 52-entry vector with a 1 at ``card``; all zero when ``card`` is -1 (no card)."""
    return card_set(1 << card if card >= 0 else 0)


def one_hot(index: int | None, size: int) -> np.ndarray:
    """A ``size``-entry vector with a 1 at ``index``; all zero when ``index`` is None (none of them)."""
    out = np.zeros(size, np.float32)
    if index is not None:
        out[index] = 1.0
    return out


def count_of(value: int, maximum: int) -> np.ndarray:
    """A number 0..maximum as a one-hot of ``maximum + 1`` entries; larger numbers show as ``maximum``."""
    return one_hot(min(value, maximum), maximum + 1)


def flag_bits(mask: int, size: int) -> np.ndarray:
    """``size`` independent flags: entry ``i`` is bit ``i`` of ``mask``."""
    out = np.zeros(size, np.float32)
    for i in range(size):
        if mask >> i & 1:
            out[i] = 1.0
    return out


def scalar_of(value: float, scale: float) -> np.ndarray:
    """One number divided by ``scale`` and clipped to [0, 1]."""
    return np.array([min(max(value / scale, 0.0), 1.0)], np.float32)


class ReferenceTrickEncoder:
    """Slow, readable twin of a game's fast encoder: the common trick pieces plus the game's own.

    Subclasses set the table in their ``__init__`` (through ``super().__init__``) and fill the game's
    pieces in :meth:`game_pieces`.

    Args:
        num_players: seats at the table.
        max_tricks: largest trick count a seat's ``tricks`` piece shows (more clips to it).
        partnership: name relative seats me/left/partner/right (4 players).
        phases: names of the phases, when the game has more than card play (adds a ``phase`` piece).
    """

    def __init__(
        self,
        num_players: int,
        max_tricks: int,
        partnership: bool = False,
        phases: tuple[str, ...] = (),
    ) -> None:
        self.n = num_players
        self.max_tricks = max_tricks
        self.phases = phases
        self.seat_labels = relative_seat_labels(num_players, partnership)

    def pieces(self, view: PlayerView) -> dict[str, tuple[str, np.ndarray]]:
        """Every piece of ``view``'s observation: name -> (kind, vector), in declaration order."""
        n, lab = self.n, self.seat_labels
        out: dict[str, tuple[str, np.ndarray]] = {}

        def seat_of(r: int) -> int:
            """The absolute seat at relative seat ``r``."""
            return (view.seat + r) % n

        def rel(seat: int) -> int:
            """The relative seat of absolute seat ``seat``."""
            return (seat - view.seat) % n

        out["hand"] = ("cards", card_set(view.hand))
        out["unseen"] = ("cards", card_set(view.unseen))
        out["turn_up"] = ("cards", one_card(view.turn_up))
        out["trump"] = ("onehot", one_hot(TRUMP_NONE if view.trump is None else view.trump, NUM_SUITS + 1))
        # my own known cards are my hand: the piece starts at the first other seat
        for r in range(1, n):
            out[f"known[{lab[r]}]"] = ("cards", card_set(view.known[seat_of(r)]))
        trick_cards = dict(view.trick)  # seat -> card; a seat plays once per trick
        for r in range(n):
            out[f"trick[{lab[r]}]"] = ("cards", one_card(trick_cards.get(seat_of(r), -1)))
        # the seat that led the trick on the table, else the one to lead next (none once the episode is over)
        if view.trick:
            leader: int | None = rel(view.trick[0][0])
        elif view.to_act >= 0:
            leader = rel(view.leader)
        else:
            leader = None
        out["leader"] = ("onehot", one_hot(leader, n))
        last_cards = dict(view.last_trick)
        for r in range(n):
            out[f"last_trick[{lab[r]}]"] = ("cards", one_card(last_cards.get(seat_of(r), -1)))
        out["last_winner"] = ("onehot", one_hot(rel(view.last_winner) if view.last_trick else None, n))
        for r in range(n):
            out[f"played[{lab[r]}]"] = ("cards", card_set(view.played[seat_of(r)]))
        for r in range(n):
            out[f"void[{lab[r]}]"] = ("flags", flag_bits(view.voids[seat_of(r)], NUM_SUITS))
        for r in range(n):
            out[f"tricks[{lab[r]}]"] = ("count", count_of(view.tricks_won[seat_of(r)], self.max_tricks))
        out["dealer"] = ("onehot", one_hot(rel(view.dealer), n))
        out["to_act"] = ("onehot", one_hot(rel(view.to_act) if view.to_act >= 0 else None, n))
        # the card facts, card by card (features.card_facts_reference), its out[...] fractions back as counts
        facts = card_facts_reference(view)
        out["master"] = ("cards", facts[:NUM_CARDS])
        out["winning_now"] = ("cards", facts[NUM_CARDS : 2 * NUM_CARDS])
        for s, label in enumerate(SUIT_LABELS):
            out[f"out[{label}]"] = ("count", count_of(round(float(facts[2 * NUM_CARDS + s]) * NUM_RANKS), NUM_RANKS))
        if self.phases:
            # "over" (or any phase the game does not name) shows as none
            index = self.phases.index(view.phase) if view.phase in self.phases else None
            out["phase"] = ("onehot", one_hot(index, len(self.phases)))
        out.update(self.game_pieces(view))
        return out

    def game_pieces(self, view: PlayerView) -> dict[str, tuple[str, np.ndarray]]:
        """The game's own pieces: name -> (kind, vector), in declaration order."""
        return {}

    def encode(self, view: PlayerView) -> np.ndarray:
        """The observation vector: the binary pieces in declaration order, then the scalar pieces."""
        pieces = self.pieces(view).values()
        binary = [vec for kind, vec in pieces if kind in BINARY_KINDS]
        scalars = [vec for kind, vec in pieces if kind == "scalar"]
        return np.concatenate(binary + scalars).astype(np.float32)

    def order(self, view: PlayerView) -> list[tuple[str, int]]:
        """(name, size) of each piece in the order :meth:`encode` lays them out."""
        pieces = self.pieces(view)
        binary = [(name, len(vec)) for name, (kind, vec) in pieces.items() if kind in BINARY_KINDS]
        scalars = [(name, len(vec)) for name, (kind, vec) in pieces.items() if kind == "scalar"]
        return binary + scalars
