"""The observation pieces every trick-taking game shares, and the encoder base built on them.

A game's encoder subclasses :class:`TrickEncoder`, adds its own pieces in :meth:`game_pieces` and
fills them in :meth:`encode_game`. Every seat-indexed piece is rotated so that the observer is
relative seat 0 ("me"), then clockwise.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from whist_env.cards import ABOVE, FULL_DECK, NUM_CARDS, NUM_RANKS, SUIT_MASKS
from whist_env.encoding import layout as L
from whist_env.view import PlayerView


class TrickEncoder:
    """Encodes a :class:`PlayerView` as a float32 vector of 0/1 entries (and optional scalars).

    Args:
        num_players: seats at the table.
        max_tricks: largest trick count a seat can have in one deal (sizes the trick-count pieces).
        partnership: name relative seats me/left/partner/right (4 players).
        phases: names of the phases, when the game has more than card play.
        num_actions: the game's action count (sizes the action mask of :meth:`encode_with_mask`).
    """

    def __init__(
        self,
        num_players: int,
        max_tricks: int,
        partnership: bool = False,
        phases: tuple[str, ...] = (),
        num_actions: int = NUM_CARDS,
    ) -> None:
        n = num_players
        self.n = n
        self.seat_labels = L.relative_seat_labels(n, partnership)
        self.max_tricks = max_tricks
        self.phases = phases
        lab = self.seat_labels
        pieces: list[L.Piece] = [
            L.cards("hand", "my current hand"),
            L.cards("unseen", "cards whose place I cannot tell (other hands, blinds, stock, set aside)"),
            L.cards("turn_up", "the face-up trump card while it is on the table"),
            L.onehot("trump", L.TRUMP_LABELS, "trump suit, NT for none"),
        ]
        pieces += [L.cards(f"known[{lab[r]}]", f"cards known to be in {lab[r]}'s hand") for r in range(1, n)]
        pieces += [L.cards(f"trick[{lab[r]}]", f"card {lab[r]} played to the current trick") for r in range(n)]
        pieces.append(L.onehot("leader", lab, "who led the current trick (or leads it)"))
        pieces += [L.cards(f"last_trick[{lab[r]}]", f"card {lab[r]} played to the last trick") for r in range(n)]
        pieces.append(L.onehot("last_winner", lab, "winner of the last trick while it is visible"))
        pieces += [L.cards(f"played[{lab[r]}]", f"cards {lab[r]} played this deal (history)") for r in range(n)]
        pieces += [L.flags(f"void[{lab[r]}]", L.SUIT_LABELS, f"suits {lab[r]} has shown out of") for r in range(n)]
        pieces += [L.count(f"tricks[{lab[r]}]", max_tricks, f"tricks {lab[r]} took this deal") for r in range(n)]
        pieces.append(L.onehot("dealer", lab, "dealer of this deal"))
        pieces.append(L.onehot("to_act", lab, "whose decision it is"))
        pieces += card_fact_pieces()
        if phases:
            pieces.append(L.onehot("phase", phases, "phase of the deal"))
        pieces += self.game_pieces()
        self.layout = L.Layout(pieces, num_actions)
        off = self.layout.offsets
        self._o_hand = off["hand"]
        self._o_unseen = off["unseen"]
        self._o_turn = off["turn_up"]
        self._phase_bit = {p: 1 << (off["phase"] + i) for i, p in enumerate(phases)}
        # trump suit 0..3, or 4 for no trump -> its bit
        self._trump_bit = [1 << (off["trump"] + i) for i in range(len(L.TRUMP_LABELS))]
        # per observer: (relative seat, absolute seat, offsets, the bit of each trick count) per seat;
        # counts above ``max_tricks`` (up to 52, more than any deal has) clip to it. The played, void
        # and tricks pieces follow each other: they are built in a small int from ``played[me]`` on.
        o_seats = self._o_seats = off[f"played[{lab[0]}]"]
        self._rotation = [
            [
                (
                    r,
                    (me + r) % n,
                    off[f"known[{lab[r]}]"] if r else -1,
                    off[f"played[{lab[r]}]"] - o_seats,
                    off[f"void[{lab[r]}]"] - o_seats,
                    [1 << (off[f"tricks[{lab[r]}]"] - o_seats + min(t, max_tricks)) for t in range(NUM_CARDS + 1)],
                )
                for r in range(n)
            ]
            for me in range(n)
        ]
        # per observer, per absolute seat: relative seat, where its trick cards go, and the bits that
        # name it as leader, last winner, dealer or seat to act (each set by one ``|=`` when encoding)
        self._rel = [[(s - me) % n for s in range(n)] for me in range(n)]
        self._trick_at = self._per_seat(lambda r: off[f"trick[{lab[r]}]"])
        self._last_at = self._per_seat(lambda r: off[f"last_trick[{lab[r]}]"])
        self._leader_bit = self._per_seat(lambda r: 1 << (off["leader"] + r))
        self._last_winner_bit = self._per_seat(lambda r: 1 << (off["last_winner"] + r))
        self._dealer_bit = self._per_seat(lambda r: 1 << (off["dealer"] + r))
        self._to_act_bit = self._per_seat(lambda r: 1 << (off["to_act"] + r))
        # The card facts follow each other from ``master`` on: they are built in a small int, shifted in once.
        o_facts = self._o_facts = off["master"]
        self._o_winning = off["winning_now"] - o_facts
        # per suit, the bit of each value of its out[...] count
        self._out_bits = [
            [1 << (off[f"out[{label}]"] - o_facts + k) for k in range(NUM_RANKS + 1)] for label in L.SUIT_LABELS
        ]

    def _per_seat(self, value: Callable[[int], int]) -> list[list[int]]:
        """``value(relative seat)`` per observer and absolute seat."""
        return [[value(r) for r in rel] for rel in self._rel]

    @property
    def size(self) -> int:
        """Length of the observation vector."""
        return self.layout.size

    def game_pieces(self) -> list[L.Piece]:
        """The game's own pieces, appended after the common ones."""
        return []

    def encode_game(self, view: PlayerView) -> tuple[int, list[float]]:
        """Bits (already at their offsets) and scalar values of the game's own pieces."""
        return 0, []

    def encode(self, view: PlayerView) -> np.ndarray:
        """The observation vector of ``view`` (shape ``(layout.size,)``, float32)."""
        bits, scalars = self.encode_bits(view)
        return self.layout.pack(bits, scalars)

    def encode_with_mask(self, view: PlayerView) -> tuple[np.ndarray, np.ndarray]:
        """The observation vector and the int8 action mask of ``view.legal``."""
        bits, scalars = self.encode_bits(view)
        return self.layout.pack_with_mask(bits, scalars, view.legal)

    def encode_bits(self, view: PlayerView) -> tuple[int, list[float]]:
        """The binary pieces as one int, and the scalar values."""
        me = view.seat
        bits = (view.hand << self._o_hand) | (view.unseen << self._o_unseen)
        if view.turn_up >= 0:
            bits |= 1 << (self._o_turn + view.turn_up)
        bits |= self._trump_bit[4 if view.trump is None else view.trump]
        known, played, voids, tricks = view.known, view.played, view.voids, view.tricks_won
        seats = gone = 0
        for r, s, o_known, o_played, o_void, tricks_bit in self._rotation[me]:
            if known[s] and r:
                bits |= known[s] << o_known
            if played[s]:
                seats |= played[s] << o_played
                gone |= played[s]
            if voids[s]:
                seats |= voids[s] << o_void
            seats |= tricks_bit[tricks[s]]
        bits |= seats << self._o_seats
        table = facts = 0
        if view.trick:
            trick_at = self._trick_at[me]
            for seat, card in view.trick:
                bits |= 1 << (trick_at[seat] + card)
                table |= 1 << card
            bits |= self._leader_bit[me][view.trick[0][0]]
            facts = self._winning_now(view, table) << self._o_winning
        elif view.to_act >= 0:
            bits |= self._leader_bit[me][view.leader]
        if view.last_trick:
            last_at = self._last_at[me]
            for seat, card in view.last_trick:
                bits |= 1 << (last_at[seat] + card)
            bits |= self._last_winner_bit[me][view.last_winner]
        bits |= self._dealer_bit[me][view.dealer]
        if view.to_act >= 0:
            bits |= self._to_act_bit[me][view.to_act]
        # master and out[...]: per suit, from the cards still alive (neither played nor on the table). Written out
        # suit by suit, without negative ints (``~x``): their bit operations cost more in CPython, as does a loop.
        alive = FULL_DECK ^ (gone | table)
        not_mine = alive ^ (alive & view.hand)
        clubs, diamonds, hearts, spades = SUIT_MASKS
        out_c, out_d, out_h, out_s = self._out_bits
        facts |= (
            TOP_BIT[(alive & clubs).bit_length()]
            | TOP_BIT[(alive & diamonds).bit_length()]
            | TOP_BIT[(alive & hearts).bit_length()]
            | TOP_BIT[(alive & spades).bit_length()]
            | out_c[(not_mine & clubs).bit_count()]
            | out_d[(not_mine & diamonds).bit_count()]
            | out_h[(not_mine & hearts).bit_count()]
            | out_s[(not_mine & spades).bit_count()]
        )
        bits |= facts << self._o_facts
        phase_bit = self._phase_bit.get(view.phase)
        if phase_bit:
            bits |= phase_bit
        extra_bits, scalars = self.encode_game(view)
        return bits | extra_bits, scalars

    @staticmethod
    def _winning_now(view: PlayerView, table: int) -> int:
        """The ``winning_now`` card set: cards of my hand that would be the best card of the trick on the table
        (``table``, not empty) if played now; legality is not considered."""
        trump = view.trump
        led = view.trick[0][1] // NUM_RANKS
        hand = view.hand
        if trump is not None:
            trumps = table & SUIT_MASKS[trump]
            if trumps:  # a trump (perhaps the suit led) is best so far: only a higher trump beats it
                return hand & ABOVE[trumps.bit_length() - 1]
            # no trump on the table (so trump is not the suit led): any trump of mine wins
            hand_trumps = hand & SUIT_MASKS[trump]
        else:
            hand_trumps = 0
        best_led = (table & SUIT_MASKS[led]).bit_length() - 1
        return (hand & ABOVE[best_led]) | hand_trumps

    def describe(self, obs: Any) -> str:
        """``obs`` in words (accepts the vector or the ``{"observation", "action_mask"}`` dict)."""
        if isinstance(obs, dict):
            obs = obs["observation"]
        return self.layout.describe(np.asarray(obs))

    def rel(self, view: PlayerView, seat: int) -> int:
        """Relative index of an absolute seat for this view."""
        return (seat - view.seat) % self.n


# TOP_BIT[m.bit_length()]: the highest card of the card set ``m`` as a one-card set (0 for the empty set)
TOP_BIT = [0] + [1 << c for c in range(NUM_CARDS)]


def card_fact_pieces() -> list[L.Piece]:
    """The card facts every trick layout declares (issue #13): what a player can read off the table and its own
    history, declared as pieces so that a network need not derive them. Without recall (``played`` empty) they
    know only the current trick."""
    return [
        L.cards(
            "master",
            "per suit, its highest card neither played this deal nor on the table (it may be mine); none once the "
            "suit is gone",
        ),
        L.cards(
            "winning_now",
            "cards of my hand that would be the best card of the current trick if played now (legal or not); "
            "empty while the trick is empty",
        ),
    ] + [
        L.count(f"out[{s}]", NUM_RANKS, f"cards of {s} neither in my hand, nor played this deal, nor on the table")
        for s in L.SUIT_LABELS
    ]


def seat_rotation(n: int, me: int, width: int) -> tuple[int, int, int]:
    """How :func:`to_relative` moves ``n`` seat blocks of ``width`` bits so that seat ``me``'s comes first:
    where ``me``'s block starts, a mask of the bits below it, and how far up those go."""
    cut = me * width
    return cut, (1 << cut) - 1, (n - me) * width


def to_relative(blocks: int, turn: tuple[int, int, int]) -> int:
    """Seat blocks in absolute seat order turned to relative order (see :func:`seat_rotation`)."""
    cut, low, up = turn
    return (blocks >> cut) | ((blocks & low) << up)
