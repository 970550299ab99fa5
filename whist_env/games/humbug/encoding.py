"""Observation of ``humbug_v0``: the common trick pieces plus the study-step layout (and, in a series,
the balance)."""

from __future__ import annotations

from typing import Any

from whist_env.encoding import layout as L
from whist_env.encoding.trick import TrickEncoder
from whist_env.games.humbug.rules import HumbugExtras
from whist_env.rules.core import State, TrickGame
from whist_env.view import PlayerView


class HumbugEncoder(TrickEncoder):
    """Common pieces (me/opponent) + ``initial_layout`` at the study step + series balance.

    The balance pieces exist only when ``num_deals > 1``: in a single deal they never change, and
    scalar pieces cost time on every observation.
    """

    def __init__(self, num_deals: int = 1) -> None:
        self.num_deals = num_deals
        super().__init__(2, 26)
        off = self.layout.offsets
        self._o_init = (off["initial_layout[me]"], off["initial_layout[opponent]"])

    def game_pieces(self) -> list[L.Piece]:
        pieces = [
            L.cards("initial_layout[me]", "my original 26 cards (study step only)"),
            L.cards("initial_layout[opponent]", "the opponent's original 26 cards (study step only)"),
        ]
        if self.num_deals > 1:
            span = 26.0 * self.num_deals
            pieces += [
                L.scalar("balance_ahead", span, "my running balance when positive"),
                L.scalar("balance_behind", span, "my running balance when negative, as a positive number"),
                L.scalar("deals_left", float(self.num_deals), "deals left in the series, this one included"),
            ]
        return pieces

    def encode_game(self, view: PlayerView) -> tuple[int, list[float]]:
        # only this game's views come here: an annotation, as cast() is a call on every observation
        extra: HumbugExtras = view.extra  # type: ignore[assignment]
        return self._game_bits(extra, view.scores[view.seat])

    def encode_game_state(self, game: TrickGame[Any], state: State, seat: int) -> tuple[int, list[float]]:
        """:meth:`encode_game` of this seat's view, read from the state (``encode_state``'s path)."""
        extra: HumbugExtras = game.view_extra(state, seat)  # type: ignore[assignment]
        return self._game_bits(extra, state.scores[seat])

    def _game_bits(self, extra: HumbugExtras, b: float) -> tuple[int, list[float]]:
        bits = 0
        layout = extra.initial_layout
        if layout is not None:
            bits = (layout[0] << self._o_init[0]) | (layout[1] << self._o_init[1])
        if self.num_deals == 1:
            return bits, []
        return bits, [float(max(b, 0)), float(max(-b, 0)), float(extra.deals_left)]
