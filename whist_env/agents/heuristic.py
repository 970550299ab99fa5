"""The rule-based agents' shared base and the plays every game's rules of thumb are built from.

A heuristic agent sees only its :class:`~whist_env.view.PlayerView`. The building blocks below take a
:class:`~whist_env.agents.cardplay.Table` read from that view and return one legal card:

* :func:`discard` throws the least useful card when not following and not trying to win;
* :func:`cheapest_winner` takes a trick with the smallest card that does it;
* :func:`lead_to_win` cashes sure winners (drawing trumps first when long in them), else leads from
  the longest strong suit;
* :func:`follow_to_win` wins as cheaply as it safely can, else plays low;
* :func:`two_player_play` leads for two-player games (:func:`two_player_lead`: make the opponent, who
  plays last, pay most for each trick) and solves the ending exactly once the opponent's hand is
  known and few cards are left.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from whist_env.agents import endgame
from whist_env.agents.cardplay import Table, suit_length
from whist_env.agents.endgame import ENDGAME_CARDS
from whist_env.cards import NUM_RANKS, SUIT_MASKS, cards_of, highest, lowest, rank
from whist_env.view import PlayerView

JACK, QUEEN, KING, ACE = 9, 10, 11, 12


class HeuristicAgent:
    """Base of the rule-based agents: card play in ``play``, other phases (bids, exchange) in ``decide``.

    Subclasses state their rules of thumb in their docstring. They are deterministic (the generator
    is not used), so a duplicate comparison between two copies of the same heuristic is exactly even.

    Args:
        **options: the game's options (the same as the environment's), for rules that depend on them.
    """

    name = "heuristic"
    game_id: ClassVar[str] = ""

    def __init__(self, /, **options: Any) -> None:
        self.options = dict(options)

    def act(self, view: PlayerView, rng: np.random.Generator) -> int:
        """A legal action for ``view.seat``: a card in the play phase, else the game's own decision."""
        if view.phase == "play":
            return self.play(view)
        return self.decide(view)

    def play(self, view: PlayerView) -> int:
        """The card to play."""
        raise NotImplementedError

    def decide(self, view: PlayerView) -> int:
        """A decision outside card play (a bid, an exchange)."""
        raise ValueError(f"{type(self).__name__} has no rule for phase {view.phase!r} of {view.game}")

    def __repr__(self) -> str:
        opts = ", ".join(f"{k}={v!r}" for k, v in self.options.items())
        return f"{type(self).__name__}({opts})"


# ---------------------------------------------------------------------- card choices
def card_cost(t: Table, card: int) -> tuple[int, int, int]:
    """How much giving up ``card`` costs, for ``min``: masters and trumps cost most, then rank."""
    is_trump = t.trump is not None and card // NUM_RANKS == t.trump
    return (int(is_trump), int(t.is_master(card)), rank(card))


def discard(t: Table, legal: int) -> int:
    """A card to throw: a low side-suit card that is not a master, from a short suit (to make a void)."""
    hand = t.view.hand

    def key(c: int) -> tuple[int, int, int, int]:
        tr, master, r = card_cost(t, c)
        return (tr, master, r, suit_length(hand, c // NUM_RANKS))

    return min(cards_of(legal), key=key)


def cheapest_winner(t: Table, choice: int) -> int:
    """The cheapest card of ``choice`` (all of which win the trick now): side cards before trumps."""
    side = choice & ~SUIT_MASKS[t.trump] if t.trump is not None else choice
    pool = side or choice
    return t.lowest_equal(lowest(pool))


def winners(t: Table, legal: int, sure: bool) -> int:
    """Legal cards that win the trick now (and, if ``sure``, against every opponent still to play)."""
    now = t.winning(legal)
    if not sure:
        return now
    m = 0
    for c in cards_of(now):
        if t.holds(c):
            m |= 1 << c
    return m


def sure_leads(t: Table, legal: int) -> int:
    """Cards that win the trick if led now, whatever the others hold (as far as the view can tell)."""
    return winners(t, legal, sure=True)


def long_suit_lead(t: Table, legal: int, avoid_trump: bool = True) -> int:
    """Lead from the longest strong suit: the top of a sequence headed by an honour, else the lowest card."""
    trump = t.trump
    best_suit, best_key = -1, (-1, -1, -1)
    for s in range(4):
        held = legal & SUIT_MASKS[s]
        if not held:
            continue
        length = held.bit_count()
        honours = sum(1 for c in cards_of(held) if rank(c) >= JACK)
        ruffed = any(t.may_trump(o, s) and not t.possible[o] & SUIT_MASKS[s] for o in _opponents(t))
        key = (int(not (avoid_trump and s == trump)), int(not ruffed), 2 * length + honours)
        if key > best_key:
            best_suit, best_key = s, key
    held = legal & SUIT_MASKS[best_suit]
    top = highest(held)
    second = highest(held & ~(1 << top)) if held.bit_count() > 1 else -1
    if rank(top) >= 8 and second >= 0 and t.lowest_equal(top) <= second:
        return top  # top of a sequence (K Q, Q J, ...): forces out a higher card, or wins
    if t.is_master(top) and t.holds(top):
        return top
    return lowest(held)


def _opponents(t: Table) -> list[int]:
    n = t.view.num_players
    return [s for s in range(n) if s != t.me and s != t.partner]


def lead_to_win(t: Table, legal: int, draw_trumps_from: int = 4) -> int:
    """Lead to take tricks: draw trumps when long in them, cash sure winners, else lead from a long suit.

    Args:
        t: the table.
        legal: legal cards (the whole hand when leading).
        draw_trumps_from: lead trumps while opponents may hold some and I hold at least this many (or
            more than they may hold together).
    """
    hand = t.view.hand
    sure = sure_leads(t, legal)
    trump = t.trump
    if trump is not None:
        mine = hand & SUIT_MASKS[trump]
        theirs = t.opponents_trumps()
        if mine and theirs:
            n_mine, n_theirs = mine.bit_count(), theirs.bit_count()
            if n_mine >= draw_trumps_from or n_mine > n_theirs:
                # Count trumps: draw theirs while I hold more, with a master if I have one.
                top = sure & mine
                if top:
                    return highest(top)
                if n_mine >= draw_trumps_from + 1:
                    return long_suit_lead(t, mine, avoid_trump=False)
    side = sure & ~SUIT_MASKS[trump] if trump is not None else sure
    if side:
        # Cash a sure winner; the longest such suit first keeps the others' guards guessing.
        return max(cards_of(side), key=lambda c: (suit_length(hand, c // NUM_RANKS), c))
    if sure and not t.opponents_trumps():
        return highest(sure)
    return long_suit_lead(t, legal)


def follow_to_win(t: Table, legal: int, eager: bool = False) -> int:
    """Follow to take the trick as cheaply as is safe; otherwise play low.

    Args:
        t: the table.
        legal: legal cards.
        eager: when no card is sure to hold, still play the highest card that wins now.
    """
    if t.winner == t.partner and t.partner >= 0 and t.safe_against(t.best):
        return low_card(t, legal)  # do not overtake a partner's winning card
    sure = winners(t, legal, sure=True)
    if sure:
        return cheapest_winner(t, sure)
    now = winners(t, legal, sure=False)
    if now and (eager or not t.after):
        if not t.after:
            return cheapest_winner(t, now)
        return t.lowest_equal(highest(now & SUIT_MASKS[t.led]) if now & SUIT_MASKS[t.led] else lowest(now))
    return low_card(t, legal)


def low_card(t: Table, legal: int) -> int:
    """The lowest card of the led suit, or a discard when unable to follow."""
    follow = legal & SUIT_MASKS[t.led] if t.led >= 0 else 0
    if follow:
        return lowest(follow)
    return discard(t, legal)


def two_player_play(t: Table, legal: int) -> int:
    """Card play for two players: exact once the opponent's hand is known and short, else by rule of thumb."""
    view = t.view
    opp = 1 - view.seat
    if t.exact[opp] and view.hand.bit_count() <= ENDGAME_CARDS:
        led = view.trick[0][1] if view.trick else -1
        # Through the module: a test or benchmark may swap in the plain twin, ``endgame.solve``.
        card, _ = endgame.solve_fast(view.hand, t.possible[opp], t.trump, led)
        if card >= 0 and (legal >> card) & 1:
            return card
    if not view.trick:
        return two_player_lead(t, legal)
    return follow_to_win(t, legal)


def two_player_lead(t: Table, legal: int) -> int:
    """Lead against one opponent, who plays last and so wins whenever it can.

    Draw trumps with masters while holding at least as many as the opponent may; cash sure side-suit
    winners (longest suit first); otherwise lead the card that makes the opponent pay most to win it:
    where it holds higher cards of the suit, the one whose cheapest winning reply is highest relative
    to what the lead costs me (forcing out its high cards promotes mine); where it is out of the suit
    but has trumps, a low card that forces a ruff.
    """
    hand = t.view.hand
    sure = sure_leads(t, legal)
    trump = t.trump
    opp = 1 - t.me
    theirs = t.possible[opp]
    if trump is not None:
        mine_t = hand & SUIT_MASKS[trump]
        theirs_t = theirs & SUIT_MASKS[trump]
        if mine_t & sure and theirs_t and mine_t.bit_count() >= theirs_t.bit_count():
            return highest(mine_t & sure)
    side = sure & ~SUIT_MASKS[trump] if trump is not None else sure
    if side:
        return max(cards_of(side), key=lambda c: (suit_length(hand, c // NUM_RANKS), c))
    if sure and not (trump is not None and theirs & SUIT_MASKS[trump]):
        return highest(sure)

    def pressure(c: int) -> float:
        suit = c // NUM_RANKS
        in_suit = theirs & SUIT_MASKS[suit]
        higher = in_suit & ~((2 << c) - 1)
        if higher:
            return rank(lowest(higher)) - 0.5 * rank(c)
        if not in_suit and trump is not None and suit != trump and theirs & SUIT_MASKS[trump]:
            return rank(lowest(theirs & SUIT_MASKS[trump])) + NUM_RANKS - rank(c)
        return 100.0  # it cannot win it

    return t.lowest_equal(max(cards_of(legal), key=pressure))
