"""Rule-based bidding and play for ``oh_hell_v0`` (RULES.md §4)."""

from __future__ import annotations

from typing import cast

from whist_env.agents.cardplay import Table
from whist_env.agents.heuristic import HeuristicAgent, cheapest_winner, discard, lead_to_win, winners
from whist_env.cards import NUM_CARDS, NUM_RANKS, SUIT_MASKS, above, cards_of, highest, lowest, rank
from whist_env.games.oh_hell.rules import OhHellExtras
from whist_env.view import PlayerView

BID_BASE = NUM_CARDS  # RULES.md §0.6: bidding b is action 52 + b


def expected_tricks(hand: int, num_players: int, trump: int | None, placed: int = 0) -> float:
    """Tricks a hand can expect to take: high cards, trumps and suit lengths (a rule of thumb).

    A card with ``h`` higher cards of its suit outside the hand wins if none of them is in play (each
    is in another hand with probability ``q``, the share of the unplaced cards the others hold), and
    otherwise sometimes when guarded by length. Side cards after the second round of a suit are
    discounted when there is a trump. Trumps beyond two count for ruffs, as do short side suits.

    Args:
        hand: the hand (mask).
        num_players: seats at the table.
        trump: trump suit or None.
        placed: cards outside the hand whose place is known to be out of play (a turned-up card).
    """
    k = hand.bit_count()
    unplaced = NUM_CARDS - k - placed.bit_count()
    q = min(1.0, (num_players - 1) * k / unplaced) if unplaced else 0.0
    total = 0.0
    for s in range(4):
        mine = cards_of(hand & SUIT_MASKS[s])
        length = len(mine)
        for j, c in enumerate(reversed(mine)):
            h = (above(c) & ~hand & ~placed).bit_count()
            p = (1 - q) ** h
            if h and length - j > 1:
                p += (1 - p) * (0.45 if h <= j + 1 else 0.15) * (0.6 ** max(0, h - j - 1))
            if trump is not None and s != trump:
                p *= 0.85**j  # later rounds of a side suit get ruffed
            elif trump is None and j >= 3:
                p = max(p, 0.25 * (length - 3) * (1 - q))  # long-suit small cards in no-trump
            total += p
    if trump is not None:
        n_trumps = (hand & SUIT_MASKS[trump]).bit_count()
        short = sum(1 for s in range(4) if s != trump and (hand & SUIT_MASKS[s]).bit_count() <= 1)
        total += 0.35 * max(0, n_trumps - 2) + 0.3 * min(short, max(0, n_trumps - 1))
    return min(total, float(k))


def calibrated_tricks(raw: float, hand_size: int, num_players: int, has_trump: bool) -> float:
    """:func:`expected_tricks` corrected towards the fair share ``k / n``.

    The weights were fitted (least squares) to the tricks this agent took in self-play over 2 to 6
    players, hand sizes 1 to 26, with and without trump; the raw count overrates small hands of few
    players and underrates big ones.
    """
    share = hand_size / num_players
    est = 0.83 * raw + 0.4 * share + (0.025 * share - 0.11) * has_trump - 0.44
    return min(max(est, 0.0), float(hand_size))


def choose_bid(estimate: float, legal_bids: list[int]) -> int:
    """The legal bid nearest to ``estimate`` (rounded down on ties: ducking is easier than taking)."""
    return min(legal_bids, key=lambda b: (abs(b - estimate + 0.05), b))


class OhHellHeuristic(HeuristicAgent):
    """Oh Hell (Plump): bid what the hand is worth, then take exactly that many tricks.

    * **Bid the expected number of tricks** from high cards (a card wins when no higher card of its
      suit is in play, and sometimes when guarded by length), trumps (extra trumps ruff, short side
      suits help them) and suit lengths (small cards of a long suit win late in no-trump); the count
      of cards in play scales it to the hand size and the number of players.
    * **Respect the hook rule**: the last bidder takes the legal bid nearest to the estimate.
    * **Play to the bid**: while short of it, cash sure winners, win tricks as cheaply as holds (the
      highest card when every remaining trick is needed), and lead low from long suits to keep high
      cards; **once it is made, duck**: lead the card least likely to win, follow with the highest
      card that still loses, discard the most dangerous card, and when forced to win, win with the
      lowest card unless last to play. A bid already missed plays on to take tricks only with
      ``miss_points="per_trick"``, else keeps ducking.
    """

    game_id = "oh_hell_v0"

    def decide(self, view: PlayerView) -> int:
        if view.phase != "bidding":
            return super().decide(view)
        bids = [a - BID_BASE for a in view.legal_actions() if a >= BID_BASE]
        placed = 1 << view.turn_up if view.turn_up >= 0 else 0
        raw = expected_tricks(view.hand, view.num_players, view.trump, placed)
        est = calibrated_tricks(raw, view.hand.bit_count(), view.num_players, view.trump is not None)
        return BID_BASE + choose_bid(est, bids)

    def play(self, view: PlayerView) -> int:
        t = Table(view)
        legal = view.legal
        bid = cast(OhHellExtras, view.extra).bids[view.seat]
        need = bid - view.tricks_won[view.seat]
        left = view.hand.bit_count()
        if need > 0 or (need < 0 and self.options.get("miss_points") == "per_trick"):
            return self.take(t, legal, need >= left or need < 0)
        return self.duck(t, legal)

    def take(self, t: Table, legal: int, every: bool) -> int:
        """Play to win tricks; ``every``: every remaining trick is needed."""
        if not t.view.trick:
            if every:
                return lead_to_win(t, legal, draw_trumps_from=1)
            sure = winners(t, legal, sure=True)
            if sure:
                return cheapest_winner(t, sure)
            return lead_to_win(t, legal)
        sure = winners(t, legal, sure=True)
        if sure:
            return cheapest_winner(t, sure)
        now = winners(t, legal, sure=False)
        if now:
            if not t.after:
                return cheapest_winner(t, now)
            if every or any(rank(c) >= 10 for c in cards_of(now)):
                return t.lowest_equal(highest(now))
        return self.lowest_loser(t, legal)

    def lowest_loser(self, t: Table, legal: int) -> int:
        follow = legal & SUIT_MASKS[t.led] if t.led >= 0 else 0
        if follow:
            return lowest(follow)
        return discard(t, legal)

    def duck(self, t: Table, legal: int) -> int:
        """Avoid taking a trick."""
        trump = t.trump
        if not t.view.trick:
            # Lead the card most likely to lose: the most higher cards out, then the lowest rank.
            def risk(c: int) -> tuple[int, int, int]:
                is_trump = int(trump is not None and c // NUM_RANKS == trump)
                return (is_trump, -(t.outside & above(c)).bit_count(), rank(c))

            return min(cards_of(legal), key=risk)
        win = winners(t, legal, sure=False)
        lose = legal & ~win
        if lose:
            # Shed the most dangerous card that still loses: trumps first, then the highest.
            return max(cards_of(lose), key=lambda c: (int(trump is not None and c // NUM_RANKS == trump), rank(c)))
        if not t.after:
            return highest(win)  # the trick is mine anyway: get rid of the biggest card
        return cheapest_winner(t, win)
