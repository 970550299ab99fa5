"""Deals consistent with what one seat knows, drawn uniformly at random.

:func:`sample_deal` takes a :class:`~whist_env.view.PlayerView` (never the game state) and a numpy
``Generator`` and returns a complete deal: every seat's hand, German Whist's stock in order, and the
cards that are elsewhere (blinds, a hand put away, leftovers, and cards played that a seat without
recall has forgotten). Every deal it can return is consistent with the view:

* the seat's own hand, the cards on the table, and the cards it knows to be in another hand
  (``view.known``: a German Whist prize, the turn-up, Humbug's open opponent hand) are where they are;
* a seat that has shown out of a suit (``view.voids``) gets no card of it;
* every hand has its public size (below); German Whist's stock has its public size, face-up card first;
* only cards the seat cannot place (``view.unseen``) are dealt.

Among those deals each is equally likely (the sampler ignores what the other players' choices might
reveal, as PIMC does). The draw is exact: the number of consistent deals is counted suit by suit over
the seats that have voids (the other seats and the elsewhere pile take the rest and are shuffled), and
each step picks its split with an exact integer draw from the generator.

Hand sizes are public: every hand holds the same number of cards at the start of a trick in all five
games (German Whist draws back to 13 after each phase-1 trick, Oh Hell deals ``k`` to each), so a seat
holds ``len(my hand)`` plus one if I have played to the current trick and it has not, minus one if it
has and I have not. A stock's size (German Whist's) is the common ``view.extra.stock_size``.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import factorial

import numpy as np

from whist_env.cards import SUIT_MASKS, suits_cards
from whist_env.cards import cards_of as _cards
from whist_env.view import PlayerView


@dataclass(frozen=True)
class SampledDeal:
    """A complete deal consistent with a view.

    Attributes:
        hands: every seat's current hand (the observer's own is its real hand).  # (n,)
        stock: German Whist's stock still on the table, in order, face-up card first; ``()`` elsewhere.
        elsewhere: the other cards not in a hand or the stock: blinds, hands put away, leftovers, and
            cards played that the observer has forgotten (no recall).
    """

    hands: tuple[int, ...]
    stock: tuple[int, ...]
    elsewhere: int


def hand_sizes(view: PlayerView) -> tuple[int, ...]:
    """The number of cards in every seat's hand now (public: see the module docstring)."""
    in_trick = [0] * view.num_players
    for seat, _ in view.trick:
        in_trick[seat] = 1
    mine = view.hand.bit_count() + in_trick[view.seat]
    return tuple(mine - in_trick[s] for s in range(view.num_players))


def stock_size(view: PlayerView) -> int:
    """Cards still in the stock (German Whist's, the face-up card included); 0 in a game without one."""
    return view.extra.stock_size


def _randbelow(rng: np.random.Generator, m: int) -> int:
    """An exact uniform integer in ``[0, m)`` for any positive Python int ``m``."""
    if m <= 1 << 62:
        return int(rng.integers(m))
    bits = m.bit_length()
    while True:
        r = 0
        for _ in range((bits + 61) // 62):
            r = (r << 62) | int(rng.integers(1 << 62))
        r >>= ((bits + 61) // 62) * 62 - bits
        if r < m:
            return r


class DealSampler:
    """Draws deals consistent with one view; the counting is done once and reused for every draw.

    Args:
        view: what the seat knows.

    Raises:
        ValueError: when no deal is consistent with the view (a bug in the view or the sampler).
    """

    def __init__(self, view: PlayerView) -> None:
        self.view = view
        n = view.num_players
        me = view.seat
        self.sizes = hand_sizes(view)
        unseen = hidden_cards(view)
        self.unseen = unseen
        stock = stock_size(view)
        self.face_up = view.turn_up if stock else -1
        self.stock_below = max(stock - 1, 0)  # the face-up card is seen; the rest come from ``unseen``
        self.known = [view.known[s] if s != me else view.hand for s in range(n)]
        self.need = [0] * n
        for s in range(n):
            if s != me:
                self.need[s] = self.sizes[s] - self.known[s].bit_count()
                if self.need[s] < 0:
                    raise ValueError(f"seat {s} is known to hold more cards than its hand size {self.sizes[s]}")
        self.elsewhere = unseen.bit_count() - sum(self.need) - self.stock_below
        if self.elsewhere < 0:
            raise ValueError(
                f"the view of seat {me} leaves {unseen.bit_count()} unseen cards for {sum(self.need)} hidden hand "
                f"cards and a stock of {self.stock_below}"
            )
        # seats with a void in a suit that still has unseen cards are dealt suit by suit; the rest share
        # one free pile (with the stock and the elsewhere cards) that is shuffled
        self.constrained: list[int] = []
        self.free_seats: list[int] = []
        for s in range(n):
            if s == me or self.need[s] == 0:
                continue
            forbidden = suits_cards(view.voids[s]) & unseen
            (self.constrained if forbidden else self.free_seats).append(s)
        self.suit_cards = [_cards(unseen & SUIT_MASKS[x]) for x in range(4)]
        self.allowed = [
            [not (view.voids[s] >> x) & 1 for s in self.constrained] for x in range(4)
        ]  # (4, len(constrained))
        self.free_total = unseen.bit_count() - sum(self.need[s] for s in self.constrained)
        self._memo: dict[tuple[int, tuple[int, ...]], int] = {}
        start = tuple(self.need[s] for s in self.constrained)
        # consistent deals: the suit-by-suit splits times the ways to deal the free pile (the stock in order)
        free_ways = factorial(self.free_total) // factorial(self.elsewhere)
        for s in self.free_seats:
            free_ways //= factorial(self.need[s])
        self.count = self._count(0, start) * free_ways
        if self.count == 0:
            raise ValueError(f"no deal is consistent with the view of seat {me} (voids {view.voids})")

    # -- exact counting over suits
    def _splits(self, x: int, needs: tuple[int, ...]) -> list[tuple[tuple[int, ...], int]]:
        """Every way to split suit ``x`` among the constrained seats and the free pile, with its card count."""
        c = len(self.suit_cards[x])
        later = sum(len(self.suit_cards[y]) for y in range(x, 4))
        free_left = later - sum(needs)  # free pile's share of suits x..3
        out: list[tuple[tuple[int, ...], int]] = []
        allowed = self.allowed[x]

        def rec(i: int, left: int, ks: tuple[int, ...]) -> None:
            if i == len(needs):
                if left <= free_left:
                    ways = factorial(c)
                    for k in ks:
                        ways //= factorial(k)
                    out.append((ks, ways // factorial(left)))
                return
            top = min(needs[i], left) if allowed[i] else 0
            for k in range(top + 1):
                rec(i + 1, left - k, ks + (k,))

        rec(0, c, ())
        return out

    def _count(self, x: int, needs: tuple[int, ...]) -> int:
        if x == 4:
            return 1 if not any(needs) else 0
        key = (x, needs)
        if key in self._memo:
            return self._memo[key]
        total = 0
        for ks, ways in self._splits(x, needs):
            rest = tuple(a - b for a, b in zip(needs, ks, strict=True))
            total += ways * self._count(x + 1, rest)
        self._memo[key] = total
        return total

    @property
    def determined(self) -> bool:
        """Whether only one deal matters for the play: every hand is known and the stock order too."""
        return sum(self.need) == 0 and self.stock_below <= 1

    def sample(self, rng: np.random.Generator) -> SampledDeal:
        """One deal, uniformly among those consistent with the view."""
        n = self.view.num_players
        hands = list(self.known)
        free: list[int] = []
        needs = tuple(self.need[s] for s in self.constrained)
        for x in range(4):
            splits = self._splits(x, needs)
            weights = []
            for ks, ways in splits:
                rest = tuple(a - b for a, b in zip(needs, ks, strict=True))
                weights.append(ways * self._count(x + 1, rest))
            r = _randbelow(rng, sum(weights))
            pick = 0
            while r >= weights[pick]:
                r -= weights[pick]
                pick += 1
            ks = splits[pick][0]
            cards = self.suit_cards[x]
            order = [cards[i] for i in rng.permutation(len(cards))]
            pos = 0
            for i, k in enumerate(ks):
                for c in order[pos : pos + k]:
                    hands[self.constrained[i]] |= 1 << c
                pos += k
            free.extend(order[pos:])
            needs = tuple(a - b for a, b in zip(needs, ks, strict=True))
        free = [free[i] for i in rng.permutation(len(free))]
        pos = 0
        for s in self.free_seats:
            for c in free[pos : pos + self.need[s]]:
                hands[s] |= 1 << c
            pos += self.need[s]
        stock: tuple[int, ...] = ()
        if self.face_up >= 0:
            stock = (self.face_up, *free[pos : pos + self.stock_below])
            pos += self.stock_below
        elsewhere = 0
        for c in free[pos:]:
            elsewhere |= 1 << c
        assert len(hands) == n
        return SampledDeal(tuple(hands), stock, elsewhere)


def hidden_cards(view: PlayerView) -> int:
    """The cards the sampler deals: ``view.unseen``, plus a turn-up whose id is public but whose place is not.

    In Humbug's hidden-hand mode the turn-up card's id stays in every observation while the seat does
    not remember whether the dealer has played it: for the non-dealer it is then one of the cards to
    place (in the dealer's hand, or played and forgotten).
    """
    unseen = view.unseen
    t = view.turn_up
    if t >= 0 and view.seat != view.dealer and stock_size(view) == 0:
        accounted = view.hand | unseen
        for m in (*view.known, *view.played):
            accounted |= m
        for _, c in (*view.trick, *view.last_trick):
            accounted |= 1 << c
        if not (accounted >> t) & 1:
            unseen |= 1 << t
    return unseen


def sample_deal(view: PlayerView, rng: np.random.Generator) -> SampledDeal:
    """One complete deal drawn uniformly among those consistent with ``view`` (see the module docstring)."""
    return DealSampler(view).sample(rng)


def sample_deals(view: PlayerView, rng: np.random.Generator, k: int) -> list[SampledDeal]:
    """``k`` independent draws of :func:`sample_deal` (the counting is shared)."""
    sampler = DealSampler(view)
    return [sampler.sample(rng) for _ in range(k)]


def consistent(view: PlayerView, deal: SampledDeal) -> list[str]:
    """What is wrong with ``deal`` for ``view``: an empty list when it is consistent."""
    problems = []
    n = view.num_players
    sizes = hand_sizes(view)
    seen = 0
    for s in range(n):
        h = deal.hands[s]
        if h.bit_count() != sizes[s]:
            problems.append(f"seat {s} holds {h.bit_count()} cards, not {sizes[s]}")
        if view.known[s] & ~h:
            problems.append(f"seat {s} lacks cards known to be in its hand")
        if s != view.seat and h & suits_cards(view.voids[s]):
            problems.append(f"seat {s} holds a card of a suit it showed out of")
        if seen & h:
            problems.append(f"seat {s} shares a card with another hand")
        seen |= h
    if deal.hands[view.seat] != view.hand:
        problems.append("the observer's hand changed")
    stock = 0
    for c in deal.stock:
        stock |= 1 << c
    if len(deal.stock) != stock_size(view):
        problems.append(f"the stock holds {len(deal.stock)} cards, not {stock_size(view)}")
    if deal.stock and deal.stock[0] != view.turn_up:
        problems.append("the stock's top card is not the face-up card")
    hidden = (seen & ~_known_union(view)) | (stock & ~(1 << view.turn_up if view.turn_up >= 0 else 0))
    hidden |= deal.elsewhere
    if hidden != hidden_cards(view):
        problems.append("the hidden cards are not exactly the view's unseen cards")
    if (seen & stock) or (seen & deal.elsewhere) or (stock & deal.elsewhere):
        problems.append("a card is in two places")
    return problems


def _known_union(view: PlayerView) -> int:
    m = view.hand
    for k in view.known:
        m |= k
    return m
