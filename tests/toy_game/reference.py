"""Reference observation of the toy ``low_whist_v0``: the common pieces plus the tricks left (and, in a series, the
deals left), written plainly as the twin of ``encoder.py`` (the package's games keep theirs beside their encoder, as
``whist_env/games/<name>/reference.py``)."""

from __future__ import annotations

from typing import cast

import numpy as np

from whist_env.encoding.reference.common import ReferenceTrickEncoder, count_of, scalar_of
from whist_env.view import PlayerView

from .rules import NUM_PLAYERS, TRICKS, LowWhist, LowWhistExtras


class LowWhistReference(ReferenceTrickEncoder):
    """Relative seats me/left/across/right; 13 tricks a deal; the tricks left, and the deals left in a series.

    Args:
        game: the rules (``num_deals`` adds the ``deals_left`` piece).
    """

    def __init__(self, game: LowWhist) -> None:
        super().__init__(NUM_PLAYERS, TRICKS)
        self.num_deals = game.config.num_deals

    def game_pieces(self, view: PlayerView) -> dict[str, tuple[str, np.ndarray]]:
        out = {"tricks_left": ("count", count_of(TRICKS - sum(view.tricks_won), TRICKS))}
        if self.num_deals > 1:
            deals_left = cast(LowWhistExtras, view.extra).deals_left
            out["deals_left"] = ("scalar", scalar_of(deals_left, self.num_deals))
        return out
