"""Reference observation of ``german_whist_v0``: the common pieces plus the stock, the stages and the draws.

RULES.md §5.6: the stock size, the face-up stock card (the common ``turn_up`` piece), the trick counts
of each phase and the opponent's hand size are public; each player's face-down draws are his alone,
the opponent sees only how many there were.
"""

from __future__ import annotations

from typing import NamedTuple, cast

import numpy as np

from whist_env.encoding.reference.common import ReferenceTrickEncoder, card_set, count_of, one_hot, scalar_of
from whist_env.games.german_whist.rules import GermanWhist, GermanWhistExtras
from whist_env.view import PlayerView

STAGES = ("phase1", "phase2")
TRICKS_PER_STAGE = 13  # RULES.md §5.2, §5.3
STOCK_SIZE = 26  # RULES.md §5.1: the 26 cards not dealt


class GermanFacts(NamedTuple):
    """What the game's pieces need from the view; seat pairs are indexed by absolute seat."""

    stage: int  # 1 or 2
    stock_size: int
    phase1_tricks: tuple[int, int]
    prizes: tuple[int, int]  # face-up cards each seat took (as far as the observer remembers)
    my_draws: int
    opponent_draws: int
    opponent_hand_size: int
    deals_left: int


def read_facts(view: PlayerView) -> GermanFacts:
    """The game-specific facts of ``view`` (the one place that reads its extras)."""
    x = cast(GermanWhistExtras, view.extra)
    p1_0, p1_1 = x.phase1_tricks
    prizes_0, prizes_1 = x.prizes
    return GermanFacts(
        stage=x.stage,
        stock_size=x.stock_size,
        phase1_tricks=(p1_0, p1_1),
        prizes=(prizes_0, prizes_1),
        my_draws=x.my_draws,
        opponent_draws=x.opponent_draws,
        opponent_hand_size=x.opponent_hand_size,
        deals_left=x.deals_left,
    )


class GermanWhistReference(ReferenceTrickEncoder):
    """Relative seats me/opponent; 26 tricks a deal; stage, stock, per-stage tricks, prizes and draws; in a
    series (``num_deals > 1``) my balance and the deals left as scalars.

    Args:
        game: the rules; ``num_deals``, ``reward`` and ``count_all_tricks`` set the series pieces' scale.
    """

    def __init__(self, game: GermanWhist) -> None:
        super().__init__(2, 2 * TRICKS_PER_STAGE)
        cfg = game.config
        self.num_deals = cfg.num_deals
        # the largest reward of one deal (RULES.md §5.4): ±1, or the counted tricks
        if cfg.reward == "win":
            self.deal_span = 1
        else:
            self.deal_span = 2 * TRICKS_PER_STAGE if cfg.count_all_tricks else TRICKS_PER_STAGE

    def game_pieces(self, view: PlayerView) -> dict[str, tuple[str, np.ndarray]]:
        facts = read_facts(view)
        me, opp = view.seat, 1 - view.seat
        phase1 = facts.phase1_tricks
        # phase-2 tricks are the deal's tricks less phase 1's
        phase2 = (view.tricks_won[0] - phase1[0], view.tricks_won[1] - phase1[1])
        top = TRICKS_PER_STAGE
        out = {
            "stage": ("onehot", one_hot(facts.stage - 1, len(STAGES))),
            "stock_size": ("count", count_of(facts.stock_size, STOCK_SIZE)),
            "tricks_phase1[me]": ("count", count_of(phase1[me], top)),
            "tricks_phase1[opponent]": ("count", count_of(phase1[opp], top)),
            "tricks_phase2[me]": ("count", count_of(phase2[me], top)),
            "tricks_phase2[opponent]": ("count", count_of(phase2[opp], top)),
            "prizes[me]": ("cards", card_set(facts.prizes[me])),
            "prizes[opponent]": ("cards", card_set(facts.prizes[opp])),
            "my_draws": ("cards", card_set(facts.my_draws)),
            "opponent_draws": ("count", count_of(facts.opponent_draws, top)),
            "opponent_hand_size": ("count", count_of(facts.opponent_hand_size, top)),
        }
        if self.num_deals > 1:  # a single deal's balance is always 0 while it is played
            span = self.deal_span * self.num_deals  # the largest balance a series can reach
            balance = view.scores[me]
            out["balance_ahead"] = ("scalar", scalar_of(max(balance, 0), span))
            out["balance_behind"] = ("scalar", scalar_of(max(-balance, 0), span))
            out["deals_left"] = ("scalar", scalar_of(facts.deals_left, self.num_deals))
        return out
