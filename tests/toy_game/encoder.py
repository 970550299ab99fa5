"""Observation of the toy ``low_whist_v0``: the common trick pieces plus the tricks left (and, in a
series, the deals left)."""

from __future__ import annotations

from typing import cast

from whist_env.encoding import layout as L
from whist_env.encoding.trick import TrickEncoder
from whist_env.view import PlayerView

from .rules import NUM_PLAYERS, TRICKS, LowWhistExtras


class LowWhistEncoder(TrickEncoder):
    """Common pieces (me, left, across, right) + ``tricks_left``; ``deals_left`` when ``num_deals > 1``."""

    def __init__(self, num_deals: int = 1) -> None:
        self.num_deals = num_deals
        super().__init__(NUM_PLAYERS, TRICKS)
        self._o_left = self.layout.offsets["tricks_left"]

    def game_pieces(self) -> list[L.Piece]:
        pieces = [L.count("tricks_left", TRICKS, "tricks still to play in this deal")]
        if self.num_deals > 1:
            pieces.append(L.scalar("deals_left", float(self.num_deals), "deals left in the series, this one included"))
        return pieces

    def encode_game(self, view: PlayerView) -> tuple[int, list[float]]:
        bits = 1 << (self._o_left + TRICKS - sum(view.tricks_won))
        if self.num_deals == 1:
            return bits, []
        return bits, [float(cast(LowWhistExtras, view.extra).deals_left)]
