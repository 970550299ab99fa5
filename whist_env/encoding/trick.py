"""The observation pieces every trick-taking game shares, and the encoder base built on them.

A game's encoder subclasses :class:`TrickEncoder`, adds its own pieces in :meth:`game_pieces` and
fills them in :meth:`encode_game`. Every seat-indexed piece is rotated so that the observer is
relative seat 0 ("me"), then clockwise.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from whist_env.cards import ABOVE, FULL_DECK, NUM_CARDS, NUM_RANKS, SUIT_MASKS
from whist_env.encoding import layout as L
from whist_env.rules.core import PHASE_OVER, State, TrickGame
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
        self._no_seats = (0,) * n  # played and voids without recall
        self._fused_game: TrickGame[Any] | None = None  # the game encode_state last found it may do the view of
        self._fused_plain = (True, True, True, True)  # and which of its view hooks that game leaves as they are
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

    def __getstate__(self) -> dict[str, object]:
        """For pickle and ``copy``: without the game :meth:`encode_state` last saw (a copy checks its game anew)."""
        state = self.__dict__.copy()
        state["_fused_game"] = None
        return state

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
        bits = self._table_bits(
            view.seat,
            view.hand,
            view.unseen,
            view.turn_up,
            view.trump,
            view.known,
            view.played,
            view.voids,
            view.tricks_won,
            view.trick,
            view.leader,
            view.to_act,
            view.last_trick,
            view.last_winner,
            view.dealer,
        )
        phase_bit = self._phase_bit.get(view.phase)
        if phase_bit:
            bits |= phase_bit
        extra_bits, scalars = self.encode_game(view)
        return bits | extra_bits, scalars

    def encode_state(self, game: TrickGame[Any], state: State, seat: int) -> tuple[np.ndarray, np.ndarray]:
        """``encode_with_mask(game.view(state, seat))`` without building the view: the AEC environment's hot path.

        The view's work (what ``seat`` may see, through the game's hooks) is done here on the state's own fields, and
        the game's pieces come from :meth:`encode_game_state`. A game that overrides ``view()`` itself, or whose
        encoder fills its pieces from the view alone (:meth:`encode_game` without :meth:`encode_game_state`), takes
        the plain path. The two are held equal at every seat after every action of random games of every option grid
        (``whist_env.testing.reference_mismatches``).
        """
        if self._fused_game is not game:
            if not self._fusable(game):
                return self.encode_with_mask(game.view(state, seat))
            self._fused_game = game
            # the game's view hooks it leaves as they are (done inline, as view() does), read once
            self._fused_plain = (game._plain_turn_up, game._plain_out_of_play, game._plain_recall, game._plain_trump)
        plain_turn_up, plain_out_of_play, plain_recall, plain_trump = self._fused_plain
        hand = state.hands[seat]
        known = game.known_cards(state, seat)
        if plain_turn_up:
            turn_up = state.turn_up if state.turn_up_public else -1
        else:
            turn_up = game.turn_up_visible(state, seat)
        seen = hand if plain_out_of_play else hand | game.known_out_of_play(state, seat)
        for m in known:
            if m:
                seen |= m
        if turn_up >= 0 and game.turn_up_on_table:
            seen |= 1 << turn_up
        if game.recall if plain_recall else game.recall_for(state, seat):
            seen |= state.played_all
            played: Sequence[int] = state.played
            voids: Sequence[int] = state.voids
        else:
            for _, c in state.trick:
                seen |= 1 << c
            for _, c in state.last_trick:
                seen |= 1 << c
            played = voids = self._no_seats
        phase = state.phase
        bits = self._table_bits(
            seat,
            hand,
            FULL_DECK & ~seen,
            turn_up,
            state.trump if plain_trump else game.trump_visible(state, seat),
            known,
            played,
            voids,
            state.tricks_won,
            state.trick,
            state.leader,
            state.to_act,
            state.last_trick,
            state.last_winner,
            state.dealer,
        )
        phase_bit = self._phase_bit.get(game._phase_text[phase])
        if phase_bit:
            bits |= phase_bit
        extra_bits, scalars = self.encode_game_state(game, state, seat)
        legal = game.legal_mask(state) if state.to_act == seat and phase != PHASE_OVER else 0
        return self.layout.pack_with_mask(bits | extra_bits, scalars, legal)

    def _fusable(self, game: TrickGame[Any]) -> bool:
        """Whether :meth:`encode_state` may do ``game``'s view itself (see there)."""
        plain_view = type(game).view is TrickGame.view
        cls = type(self)
        own_game_pieces = cls.encode_game is not TrickEncoder.encode_game
        return plain_view and (not own_game_pieces or cls.encode_game_state is not TrickEncoder.encode_game_state)

    def encode_game_state(self, game: TrickGame[Any], state: State, seat: int) -> tuple[int, list[float]]:
        """:meth:`encode_game` of ``game.view(state, seat)``, read from the state (the game's
        :meth:`~whist_env.rules.core.TrickGame.view_extra` and the state's fields); an encoder with pieces of its own
        may override it to speed up :meth:`encode_state`."""
        return self.encode_game(game.view(state, seat))

    def _table_bits(
        self,
        me: int,
        hand: int,
        unseen: int,
        turn_up: int,
        trump: int | None,
        known: Sequence[int],
        played: Sequence[int],
        voids: Sequence[int],
        tricks: Sequence[int],
        trick: Sequence[tuple[int, int]],
        leader: int,
        to_act: int,
        last_trick: Sequence[tuple[int, int]],
        last_winner: int,
        dealer: int,
    ) -> int:
        """The common pieces of seat ``me``'s observation as one int, from what the seat may see (the fields of its
        :class:`PlayerView` of the same names)."""
        bits = (hand << self._o_hand) | (unseen << self._o_unseen)
        if turn_up >= 0:
            bits |= 1 << (self._o_turn + turn_up)
        bits |= self._trump_bit[4 if trump is None else trump]
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
        if trick:
            trick_at = self._trick_at[me]
            for seat, card in trick:
                bits |= 1 << (trick_at[seat] + card)
                table |= 1 << card
            bits |= self._leader_bit[me][trick[0][0]]
            facts = self._winning_now(hand, trump, trick[0][1] // NUM_RANKS, table) << self._o_winning
        elif to_act >= 0:
            bits |= self._leader_bit[me][leader]
        if last_trick:
            last_at = self._last_at[me]
            for seat, card in last_trick:
                bits |= 1 << (last_at[seat] + card)
            bits |= self._last_winner_bit[me][last_winner]
        bits |= self._dealer_bit[me][dealer]
        if to_act >= 0:
            bits |= self._to_act_bit[me][to_act]
        # master and out[...]: per suit, from the cards still alive (neither played nor on the table). Written out
        # suit by suit, without negative ints (``~x``): their bit operations cost more in CPython, as does a loop.
        alive = FULL_DECK ^ (gone | table)
        not_mine = alive ^ (alive & hand)
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
        return bits | (facts << self._o_facts)

    @staticmethod
    def _winning_now(hand: int, trump: int | None, led: int, table: int) -> int:
        """The ``winning_now`` card set: cards of ``hand`` that would be the best card of the trick on the table
        (``table``, not empty, ``led`` its suit) if played now; legality is not considered."""
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
