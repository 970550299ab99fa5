"""What one seat may know at one moment: :class:`PlayerView`.

Opponents and observation encoders only ever receive a view, never the game state, so they cannot
read hidden cards by construction. Seats in a view are absolute (0..n-1); encoders rotate them so
that the observer is seat 0. Card sets are int masks (see ``whist_env.cards``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from types import SimpleNamespace
from typing import Annotated, Any

from whist_env.cards import bits_of, card_pretty, format_cards, suit_str

CardSet = Annotated[int, "card set"]
"""The type of a :class:`ViewExtras` field that holds a set of cards as an int mask (bit ``c`` = card ``c``).

It is an ``int`` to Python and mypy; the annotation tells generic readers that the number is a set of cards, not a
count or a single card (the bot protocol, :mod:`whist_env.evaluation.protocol`, sends it as a list of card ids).
"""


# A frozen dataclass on SimpleNamespace, without a dataclass __init__: ``view_extra`` builds one on
# every observation, and the generated __init__ of a frozen class sets each field through
# object.__setattr__ (for German Whist's nine fields about 0.35 µs more than a dict). SimpleNamespace's
# __init__, in C, stores the keywords in one step (about 0.1 µs more than a dict). It does not check
# the names: tests/test_view.py checks every game's extras along random games.
@dataclass(frozen=True, kw_only=True, init=False)
class ViewExtras(SimpleNamespace):
    """Game-specific knowledge in a view; each game subclasses it in its rules module (``GermanWhistExtras``, ...).

    Subclasses are declared ``@dataclass(frozen=True, kw_only=True, init=False)`` and built by keyword;
    fields left out keep their defaults. A field that holds a set of cards is annotated :data:`CardSet` (an
    ``int`` mask), so that generic readers (the bot protocol) can tell it from a count. Readers outside a game's own
    modules use only the fields declared here, which every game has, so that no generic code needs to know which
    game it looks at.

    Attributes:
        stock_size: cards in a stock that no seat holds (German Whist's, the face-up card included);
            0 in a game without a stock.
    """

    stock_size: int = 0

    def items(self) -> list[tuple[str, Any]]:
        """``(name, value)`` of the fields worth printing, in declaration order.

        None means "not known now" and is left out, and so is a common field at its default (a game
        without a stock has no stock to speak of).
        """
        out = []
        for f in fields(self):
            value = getattr(self, f.name)
            if value is None or (f.name in _COMMON and value == f.default):
                continue
            out.append((f.name, value))
        return out


_COMMON = frozenset(f.name for f in fields(ViewExtras))
NO_EXTRAS = ViewExtras()


@dataclass(slots=True, kw_only=True)
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
        extra: game-specific public or private knowledge (bids, stock, exchanges, ...), a
            :class:`ViewExtras` subclass defined by the game's rules module.
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
    extra: ViewExtras = field(default=NO_EXTRAS)

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
        trick = " ".join(f"{s}:{card_pretty(c)}" for s, c in self.trick) or "-"
        last = " ".join(f"{s}:{card_pretty(c)}" for s, c in self.last_trick) or "-"
        lines = [
            f"{self.game} seat {self.seat} of {self.num_players}, phase {self.phase}, to act {self.to_act}, "
            f"dealer {self.dealer}, trump {suit_str(self.trump)}",
            f"hand: {format_cards(self.hand, pretty=True)}",
            f"trick: {trick}   last trick: {last} (won by {self.last_winner})",
            f"tricks won: {list(self.tricks_won)}   scores: {list(self.scores)}",
        ]
        if self.turn_up >= 0:
            lines.append(f"turn-up: {card_pretty(self.turn_up)}")
        for s in range(self.num_players):
            if s != self.seat and self.known[s]:
                lines.append(f"known in seat {s}: {format_cards(self.known[s], pretty=True)}")
        for key, value in self.extra.items():
            lines.append(f"{key}: {value}")
        return "\n".join(lines)
