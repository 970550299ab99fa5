"""Reference observation of ``humbug_v0``: the common pieces, the study step's layout and the series balance."""

from __future__ import annotations

from typing import NamedTuple, cast

import numpy as np

from whist_env.encoding.reference.common import ReferenceTrickEncoder, card_set, scalar_of
from whist_env.games.humbug.rules import Humbug, HumbugExtras
from whist_env.view import PlayerView

TRICKS_PER_DEAL = 26  # RULES.md §3.1: 2 × 26 cards


class HumbugFacts(NamedTuple):
    """What the game's pieces need from the view."""

    initial_layout: tuple[int, int] | None  # (mine, the opponent's) original hands, at the study step only
    deals_left: int  # deals left in the series, this one included


def read_facts(view: PlayerView) -> HumbugFacts:
    """The game-specific facts of ``view`` (the one place that reads its extras)."""
    x = cast(HumbugExtras, view.extra)
    layout = x.initial_layout
    return HumbugFacts(None if layout is None else (layout[0], layout[1]), x.deals_left)


class HumbugReference(ReferenceTrickEncoder):
    """Relative seats me/opponent; 26 tricks a deal; both original hands while studying; in a series
    (``num_deals > 1``) my balance and the deals left as scalars.

    Args:
        game: the rules; its ``config.num_deals`` sets whether the series pieces exist and their scale.
    """

    def __init__(self, game: Humbug) -> None:
        super().__init__(2, TRICKS_PER_DEAL)
        self.num_deals = game.config.num_deals

    def game_pieces(self, view: PlayerView) -> dict[str, tuple[str, np.ndarray]]:
        facts = read_facts(view)
        mine, theirs = facts.initial_layout if facts.initial_layout is not None else (0, 0)
        out = {
            "initial_layout[me]": ("cards", card_set(mine)),
            "initial_layout[opponent]": ("cards", card_set(theirs)),
        }
        if self.num_deals > 1:  # a single deal's balance is always 0 while it is played
            span = TRICKS_PER_DEAL * self.num_deals  # the largest balance a series can reach
            balance = view.scores[view.seat]
            out["balance_ahead"] = ("scalar", scalar_of(max(balance, 0), span))
            out["balance_behind"] = ("scalar", scalar_of(max(-balance, 0), span))
            out["deals_left"] = ("scalar", scalar_of(facts.deals_left, self.num_deals))
        return out
