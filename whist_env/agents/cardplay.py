"""Card-play reasoning shared by the rule-based agents, computed from a :class:`PlayerView` only.

:class:`Table` reads a view once per decision: who is winning the trick, who still has to play to
it, and for every other seat the cards it *may* hold (cards known to be in its hand, plus the cards
this seat cannot place, minus the suits that seat has shown out of). From that it answers the
questions every rule of thumb asks: does this card beat the trick, can anyone still to play beat
it, is this card the master of its suit, how many trumps are still out. All card sets are int masks
(``whist_env.cards``); nothing here can read a hidden card, because a view holds none.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from whist_env.cards import ABOVE, NUM_RANKS, SUIT_MASKS, suits_cards
from whist_env.rules.tricks import beats, trick_leader
from whist_env.view import PlayerView


class Table:
    """What the view of the seat to act says about the card play, computed once per decision.

    Attributes:
        view: the view it was read from.
        me: the seat to act.
        trump: trump suit or None.
        led: suit led to the current trick, -1 when leading.
        winner: seat currently winning the trick, -1 when leading.
        best: card currently winning the trick, -1 when leading.
        after: seats still to play to this trick after me, in order.
        possible: per seat, the cards it may hold (exactly its hand when the view knows it whole). # (n,)
        exact: per seat, whether ``possible`` is exactly that seat's hand. # (n,)
        outside: cards that may be in any other seat's hand.
        partner: my partner's seat, or -1.
        rivals: the seats of ``after`` that are not my partner.
    """

    __slots__ = (
        "view", "me", "trump", "led", "winner", "best", "after", "rivals", "possible", "exact", "outside", "partner"
    )  # fmt: skip

    def __init__(self, view: PlayerView, partner: int = -1, restrict: Mapping[int, int] | None = None) -> None:
        """Read ``view``.

        Args:
            view: the view of the seat to act (in the play phase).
            partner: the partner's seat in a partnership game, else -1.
            restrict: per seat, the cards the agent's own memory of earlier views says that seat may
                hold (Humbug's hidden-hand layout); it replaces the view's unseen cards for that seat.
        """
        self.view = view
        n = view.num_players
        me = view.seat
        self.me = me
        self.partner = partner
        self.trump = view.trump
        trick = view.trick
        if trick:
            self.led = trick[0][1] // NUM_RANKS
            self.winner, self.best = trick_leader(trick, view.trump)
        else:
            self.led, self.winner, self.best = -1, -1, -1
        in_trick = {s for s, _ in trick}
        self.after = [s for s in ((me + i) % n for i in range(1, n)) if s not in in_trick] if view.to_act == me else []
        self.rivals = tuple(s for s in self.after if s != partner)  # read by holds(), several times a decision
        size = view.hand.bit_count()
        possible = [0] * n
        exact = [False] * n
        outside = 0
        for s in range(n):
            if s == me:
                possible[s] = view.hand
                exact[s] = True
                continue
            known = view.known[s]
            # Every seat holds as many cards as I do at the start of a trick (true in every game here).
            hand_size = size - (1 if s in in_trick else 0)
            if known.bit_count() >= hand_size:
                possible[s], exact[s] = known, True
            else:
                pool = restrict[s] if restrict is not None and s in restrict else view.unseen
                unplaced = pool & ~suits_cards(view.voids[s]) & ~view.hand
                possible[s] = known | unplaced
                exact[s] = possible[s].bit_count() == hand_size
            outside |= possible[s]
        self.possible = possible
        self.exact = exact
        self.outside = outside

    # ------------------------------------------------------------------ questions about seats
    def may_be_void(self, seat: int, suit: int) -> bool:
        """Whether ``seat`` is (or is likely to be) out of ``suit``.

        Proven when it may hold none; otherwise likely only when so few cards of the suit are out that
        not every seat that may hold one can have one more (a rule of thumb, not a certainty).
        """
        held = self.possible[seat] & SUIT_MASKS[suit]
        if not held:
            return True
        if self.exact[seat] or self.view.known[seat] & SUIT_MASKS[suit]:
            return False
        holders = sum(1 for s in range(self.view.num_players) if s != self.me and self.possible[s] & SUIT_MASKS[suit])
        return (self.outside & SUIT_MASKS[suit]).bit_count() <= holders - 1 + (holders == 1)

    def may_trump(self, seat: int, suit: int) -> bool:
        """Whether ``seat`` may be void in ``suit`` and hold a trump."""
        t = self.trump
        if t is None or t == suit:
            return False
        return bool(self.possible[seat] & SUIT_MASKS[t]) and self.may_be_void(seat, suit)

    def can_beat(self, seat: int, best: int, led: int) -> bool:
        """Whether ``seat``, still to play to a trick led in ``led`` now won by ``best``, may beat it."""
        if best // NUM_RANKS == led:
            if self.possible[seat] & ABOVE[best]:
                return True
            return self.may_trump(seat, led)
        # ``best`` is a trump played to another suit: only a higher trump by a seat void in ``led`` beats it.
        return bool(self.possible[seat] & ABOVE[best]) and self.may_be_void(seat, led)

    # ------------------------------------------------------------------ questions about cards
    def wins_now(self, card: int) -> bool:
        """Whether ``card`` would be winning the trick right after I play it."""
        return self.best < 0 or beats(card, self.best, self.trump)

    def winning(self, cards: int) -> int:
        """The cards of ``cards`` that would be winning the trick right after I play them (:meth:`wins_now` of
        each, as one mask): all of them when I lead, else the higher cards of the best card's suit, and the trumps
        when the best card is not one."""
        best = self.best
        if best < 0:
            return cards
        trump = self.trump
        if trump is None or trump == best // NUM_RANKS:
            return cards & ABOVE[best]
        return cards & (ABOVE[best] | SUIT_MASKS[trump])

    def holds(self, card: int, seats: Iterable[int] | None = None) -> bool:
        """Whether ``card`` played now wins the trick against every opponent still to play."""
        if self.best >= 0 and not beats(card, self.best, self.trump):  # not self.wins_now(card), without a call
            return False
        led = self.led if self.led >= 0 else card // NUM_RANKS
        for s in self.rivals if seats is None else seats:
            if self.can_beat(s, card, led):
                return False
        return True

    def safe_against(self, card: int) -> bool:
        """Whether a trick won by ``card`` (now or already) can no longer be taken by an opponent."""
        led = self.led if self.led >= 0 else card // NUM_RANKS
        return not any(self.can_beat(s, card, led) for s in self.rivals)

    def is_master(self, card: int) -> bool:
        """Whether no other seat may hold a higher card of ``card``'s suit."""
        return not self.outside & ABOVE[card]

    def opponents_trumps(self) -> int:
        """Trumps that opponents (not my partner) may hold."""
        if self.trump is None:
            return 0
        m = 0
        for s in range(self.view.num_players):
            if s != self.me and s != self.partner:
                m |= self.possible[s]
        return m & SUIT_MASKS[self.trump]

    def lowest_equal(self, card: int) -> int:
        """The lowest card of my hand worth as much as ``card``: no card another seat may hold lies between."""
        hand = self.view.hand
        # Cards on the table still count: a card below one already played to this trick is not equal.
        barrier = self.outside
        for _, played in self.view.trick:
            barrier |= 1 << played
        best = c = card
        while c % NUM_RANKS:
            c -= 1
            if (barrier >> c) & 1:
                break
            if (hand >> c) & 1:
                best = c
        return best


def suit_length(hand: int, suit: int) -> int:
    """Number of cards of ``suit`` in ``hand``."""
    return (hand & SUIT_MASKS[suit]).bit_count()
