"""Observation of ``classic_whist_v0``: the common trick pieces plus partnership scores."""

from __future__ import annotations

from typing import Any

from whist_env.encoding import layout as L
from whist_env.encoding.trick import TrickEncoder
from whist_env.games.classic_whist.rules import ClassicWhistExtras
from whist_env.rules.core import State, TrickGame
from whist_env.view import PlayerView

MAX_SCORE = 16  # 9 (one short of a 10-point game) + 7 trick points


class ClassicWhistEncoder(TrickEncoder):
    """Common pieces (relative seats me/left/partner/right) + team points and games won."""

    def __init__(self) -> None:
        super().__init__(4, 13, partnership=True)
        off = self.layout.offsets
        self._o_pts = (off["points[us]"], off["points[them]"])
        self._o_games = (off["games[us]"], off["games[them]"])

    def game_pieces(self) -> list[L.Piece]:
        return [
            L.count("points[us]", MAX_SCORE, "my partnership's points in this game"),
            L.count("points[them]", MAX_SCORE, "the opponents' points in this game"),
            L.count("games[us]", 2, "games my partnership won in the rubber"),
            L.count("games[them]", 2, "games the opponents won in the rubber"),
        ]

    def encode_game(self, view: PlayerView) -> tuple[int, list[float]]:
        # only this game's views come here: an annotation, as cast() is a call on every observation
        extra: ClassicWhistExtras = view.extra  # type: ignore[assignment]
        return self._game_bits(extra)

    def encode_game_state(self, game: TrickGame[Any], state: State, seat: int) -> tuple[int, list[float]]:
        """:meth:`encode_game` of this seat's view, read from the state (``encode_state``'s path)."""
        extra: ClassicWhistExtras = game.view_extra(state, seat)  # type: ignore[assignment]
        return self._game_bits(extra)

    def _game_bits(self, extra: ClassicWhistExtras) -> tuple[int, list[float]]:
        us, them = extra.team_points
        g_us, g_them = extra.games_won
        o_pts, o_games = self._o_pts, self._o_games
        bits = (
            (1 << (o_pts[0] + (us if us < MAX_SCORE else MAX_SCORE)))
            | (1 << (o_pts[1] + (them if them < MAX_SCORE else MAX_SCORE)))
            | (1 << (o_games[0] + g_us))
            | (1 << (o_games[1] + g_them))
        )
        return bits, []
