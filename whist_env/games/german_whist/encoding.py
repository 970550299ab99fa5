"""Observation of ``german_whist_v0``: the common trick pieces plus the stock, the stages and the draws.

The common ``turn_up`` piece holds the face-up stock card (the prize of the current phase-1 trick),
``known[opponent]`` the opponent's prize cards not yet played (its whole hand in phase 2 with
recall), and ``tricks[...]`` all tricks of the deal; the per-stage counts are game pieces.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from whist_env.encoding.layout import Piece, cards, count, onehot, scalar
from whist_env.encoding.trick import TrickEncoder
from whist_env.games.german_whist.rules import GermanWhistExtras
from whist_env.rules.core import State, TrickGame
from whist_env.view import PlayerView

STAGES = ("phase1", "phase2")


class GermanWhistEncoder(TrickEncoder):
    """Common pieces (me/opponent) + stage, stock size, per-stage tricks, prizes, draws; in a series
    (``num_deals > 1``) also the balance and the deals left.

    Args:
        num_deals: deals in the series (scales ``deals_left`` and the balance).
        deal_span: largest reward of one deal (1 for ``reward="win"``, else the counted tricks).
    """

    def __init__(self, num_deals: int = 1, deal_span: int = 1) -> None:
        self.num_deals = num_deals
        self.deal_span = deal_span
        super().__init__(2, 26)
        # The game pieces are contiguous: build them as one small int from ``stage`` on, shift once.
        # A one-hot or count piece is set by indexing its list of bits (relative to ``stage``).
        off = self.layout.offsets
        self._base = off["stage"]
        self._stage_bit = self._value_bits("stage")
        self._stock_bit = self._value_bits("stock_size")
        self._phase1_bit = (self._value_bits("tricks_phase1[me]"), self._value_bits("tricks_phase1[opponent]"))
        self._phase2_bit = (self._value_bits("tricks_phase2[me]"), self._value_bits("tricks_phase2[opponent]"))
        self._r_prizes = (off["prizes[me]"] - self._base, off["prizes[opponent]"] - self._base)
        self._r_draws = off["my_draws"] - self._base
        self._opp_draws_bit = self._value_bits("opponent_draws")
        self._opp_size_bit = self._value_bits("opponent_hand_size")

    def _value_bits(self, name: str) -> list[int]:
        """The bit of each value of the one-hot or count piece ``name``, relative to ``stage``."""
        at = self.layout.offsets[name] - self._base
        return [1 << (at + v) for v in range(self.layout.piece(name).size)]

    def game_pieces(self) -> list[Piece]:
        span = float(self.deal_span * self.num_deals)
        return [
            onehot("stage", STAGES, "phase 1 (tricks 1–13, drawing) or phase 2 (tricks 14–26, scoring)"),
            count("stock_size", 26, "cards left in the stock, the face-up card included"),
            count("tricks_phase1[me]", 13, "tricks I took in phase 1"),
            count("tricks_phase1[opponent]", 13, "tricks the opponent took in phase 1"),
            count("tricks_phase2[me]", 13, "tricks I took in phase 2"),
            count("tricks_phase2[opponent]", 13, "tricks the opponent took in phase 2"),
            cards("prizes[me]", "face-up cards I took this deal (history)"),
            cards("prizes[opponent]", "face-up cards the opponent took this deal (history)"),
            cards("my_draws", "cards I drew face down this deal: seen by me alone (history)"),
            count("opponent_draws", 13, "how many cards the opponent drew face down (not which)"),
            count("opponent_hand_size", 13, "cards in the opponent's hand"),
        ] + (
            [
                scalar("balance_ahead", span, "my running balance in the series when positive"),
                scalar("balance_behind", span, "my running balance when negative, as a positive number"),
                scalar("deals_left", float(self.num_deals), "deals left in the series, this one included"),
            ]
            if self.num_deals > 1  # one deal: the balance is always 0 while it is played
            else []
        )

    def encode_game(self, view: PlayerView) -> tuple[int, list[float]]:
        # only this game's views come here: an annotation, as cast() is a call on every observation
        x: GermanWhistExtras = view.extra  # type: ignore[assignment]
        return self._game_bits(x, view.seat, view.tricks_won, view.scores)

    def encode_game_state(self, game: TrickGame[Any], state: State, seat: int) -> tuple[int, list[float]]:
        """:meth:`encode_game` of this seat's view, read from the state (``encode_state``'s path)."""
        extra: GermanWhistExtras = game.view_extra(state, seat)  # type: ignore[assignment]
        return self._game_bits(extra, seat, state.tricks_won, state.scores)

    def _game_bits(
        self, x: GermanWhistExtras, me: int, t: Sequence[int], scores: Sequence[float]
    ) -> tuple[int, list[float]]:
        opp = 1 - me
        p1, prizes = x.phase1_tricks, x.prizes
        (p1_me, p1_opp), (p2_me, p2_opp), r_prizes = self._phase1_bit, self._phase2_bit, self._r_prizes
        opp_size = x.opponent_hand_size
        bits = (
            self._stage_bit[x.stage - 1]
            | self._stock_bit[x.stock_size]
            | p1_me[p1[me]]
            | p1_opp[p1[opp]]
            | p2_me[t[me] - p1[me]]
            | p2_opp[t[opp] - p1[opp]]
            | (prizes[me] << r_prizes[0])
            | (prizes[opp] << r_prizes[1])
            | (x.my_draws << self._r_draws)
            | self._opp_draws_bit[x.opponent_draws]
            | self._opp_size_bit[opp_size if opp_size < 13 else 13]
        )
        if self.num_deals == 1:
            return bits << self._base, []
        b = scores[me]
        return bits << self._base, [float(b if b > 0 else 0), float(-b if b < 0 else 0), float(x.deals_left)]
