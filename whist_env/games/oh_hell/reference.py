"""Reference observation of ``oh_hell_v0``: the common pieces plus the bids, the schedule and the standings.

RULES.md §4.7: every bid made so far, the hand size ``k``, the deal index, the drawn card (drawn-trump
mode) and the scores are public. The scores are shown as standings (how far each seat trails the
leader, in tens of points) because they are unbounded.
"""

from __future__ import annotations

import math
from typing import NamedTuple, cast

import numpy as np

from whist_env.encoding.reference.common import ReferenceTrickEncoder, count_of, flag_bits, one_card, one_hot
from whist_env.games.oh_hell.rules import OhHell, OhHellExtras
from whist_env.view import PlayerView

PHASES = ("bidding", "play")
SCORE_UNIT = 10  # one step of ``behind``: about one made bid (RULES.md §4.6: 10 + bid)
BEHIND_MAX = 31  # ``behind`` stops at 310 points


class OhHellFacts(NamedTuple):
    """What the game's pieces need from the view; bids are indexed by absolute seat."""

    bids: tuple[int, ...]  # -1: not yet bid
    hand_size: int  # k of this deal
    drawn_card: int  # -1: none


def read_facts(view: PlayerView) -> OhHellFacts:
    """The game-specific facts of ``view`` (the one place that reads its extras)."""
    x = cast(OhHellExtras, view.extra)
    return OhHellFacts(tuple(x.bids), x.hand_size, x.drawn_card)


class OhHellReference(ReferenceTrickEncoder):
    """Relative seats me, +1, +2, ...; phases bidding/play; hand size, deals to come (a match), the drawn
    card (drawn-trump mode), and per seat its bid, the tricks it still needs and (a match) how far it
    trails; then whose bid is lost.

    Args:
        game: the rules; the table size, the schedule and the trump mode set the pieces.
    """

    def __init__(self, game: OhHell) -> None:
        self.max_bid = max(game.schedule)  # the largest hand of the episode
        self.num_deals = len(game.schedule)
        self.match = self.num_deals > 1
        self.drawn_mode = game.config.trump_mode == "drawn_card"
        super().__init__(game.num_players, self.max_bid, phases=PHASES)

    def game_pieces(self, view: PlayerView) -> dict[str, tuple[str, np.ndarray]]:
        facts = read_facts(view)
        n, lab = self.n, self.seat_labels
        k = facts.hand_size
        tricks_left = k - sum(view.tricks_won)
        out = {"hand_size": ("count", count_of(k, self.max_bid))}
        if self.match:
            out["deals_after"] = ("count", count_of(self.num_deals - 1 - view.deal_index, self.num_deals - 1))
        if self.drawn_mode:
            out["drawn_card"] = ("cards", one_card(facts.drawn_card))
        lead = max(view.scores)
        lost = 0  # bit r: relative seat r's bid can no longer be made
        for r in range(n):
            seat = (view.seat + r) % n
            bid, won = facts.bids[seat], view.tricks_won[seat]
            # index 0 is "not yet"; bid b is index b + 1
            out[f"bid[{lab[r]}]"] = ("onehot", one_hot(bid + 1, self.max_bid + 2))
            # tricks still needed, shown while the bid is made and not already passed
            need = bid - won if 0 <= bid and won <= bid else None
            out[f"need[{lab[r]}]"] = ("count", one_hot(need, self.max_bid + 1))
            if self.match:
                gap = math.ceil((lead - view.scores[seat]) / SCORE_UNIT)  # 0 for the leader(s)
                out[f"behind[{lab[r]}]"] = ("count", count_of(gap, BEHIND_MAX))
            # RULES.md §4.6: a bid is lost once passed, or once the tricks left cannot reach it
            if bid >= 0 and (won > bid or bid - won > tricks_left):
                lost |= 1 << r
        out["lost"] = ("flags", flag_bits(lost, n))
        return out
