"""What one seat may know at one moment: :class:`PlayerView`.

Opponents and observation encoders only ever receive a view, never the game state, so they cannot
read hidden cards by construction. Seats in a view are absolute (0..n-1); encoders rotate them so
that the observer is seat 0. Card sets are int masks (see ``whist_env.cards``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from whist_env.cards import bits_of, card_str, format_cards, suit_str


@dataclass(slots=True)
class PlayerView:
    """Everything seat ``seat`` may know now, and nothing else.

    Attributes:
        game: environment id of the game (``"classic_whist_v0"``, ...).
        seat: the observer.
        num_players: number of seats at the table.
        phase: ``"play"``, ``"bidding"``, ``"exchange"``, ... or ``"over"``.
        to_act: seat whose decision it is (-1 when the episode is over).
        dealer: dealer of the current deal.
        leader: seat that led (or is to lead) the current trick.
        hand: the observer's current hand (mask).
        legal: legal actions as a bit mask over the action space (0 unless ``to_act == seat``).
        trump: trump suit 0..3, or None (no trump, or not yet known).
        turn_up: the face-up trump card while it is public, else -1.
        trick: current trick as ``(seat, card)`` in play order.
        last_trick: the last completed trick while it is still visible (until the next lead).
        last_winner: winner of ``last_trick`` (-1 when none is visible).
        played: per seat, cards that seat played this deal (all zero without recall).  # (n,)
        known: per seat, cards known to be in that seat's hand now; ``known[seat] == hand``.  # (n,)
        voids: per seat, 4-bit mask of suits that seat has shown out of (zero without recall).  # (n,)
        unseen: cards whose place this seat cannot tell (in some other hand, a blind, the stock, ...).
        tricks_won: tricks taken this deal, per seat.  # (n,)
        scores: the game's running score per seat (see the game's docs).  # (n,)
        deal_index: deals completed before this one in the episode.
        extra: game-specific public or private knowledge (bids, stock, exchanges, ...).
    """

    game: str
    seat: int
    num_players: int
    phase: str
    to_act: int
    dealer: int
    leader: int
    hand: int
    legal: int
    trump: int | None
    turn_up: int
    trick: tuple[tuple[int, int], ...]
    last_trick: tuple[tuple[int, int], ...]
    last_winner: int
    played: tuple[int, ...]
    known: tuple[int, ...]
    voids: tuple[int, ...]
    unseen: int
    tricks_won: tuple[int, ...]
    scores: tuple[float, ...]
    deal_index: int
    extra: Mapping[str, Any] = field(default_factory=dict)

    def relative(self, seat: int) -> int:
        """Seat index relative to the observer (0 = me, 1 = my left, ...)."""
        return (seat - self.seat) % self.num_players

    def absolute(self, relative_seat: int) -> int:
        """Absolute seat of a seat given relative to the observer."""
        return (self.seat + relative_seat) % self.num_players

    @property
    def led_suit(self) -> int:
        """Suit led to the current trick, or -1 when the trick is empty."""
        return self.trick[0][1] // 13 if self.trick else -1

    def legal_actions(self) -> list[int]:
        """The legal actions as a sorted list."""
        return bits_of(self.legal)

    def summary(self) -> str:
        """A few lines in words, for teaching and debugging."""
        trick = " ".join(f"{s}:{card_str(c)}" for s, c in self.trick) or "-"
        last = " ".join(f"{s}:{card_str(c)}" for s, c in self.last_trick) or "-"
        lines = [
            f"{self.game} seat {self.seat} of {self.num_players}, phase {self.phase}, to act {self.to_act}, "
            f"dealer {self.dealer}, trump {suit_str(self.trump)}",
            f"hand: {format_cards(self.hand)}",
            f"trick: {trick}   last trick: {last} (won by {self.last_winner})",
            f"tricks won: {list(self.tricks_won)}   scores: {list(self.scores)}",
        ]
        if self.turn_up >= 0:
            lines.append(f"turn-up: {card_str(self.turn_up)}")
        for s in range(self.num_players):
            if s != self.seat and self.known[s]:
                lines.append(f"known in seat {s}: {format_cards(self.known[s])}")
        for key, value in self.extra.items():
            lines.append(f"{key}: {value}")
        return "\n".join(lines)
