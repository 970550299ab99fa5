"""Observation of ``classic_whist_v0``: the common trick pieces plus partnership scores."""

from __future__ import annotations

from whist_env.encoding import layout as L
from whist_env.encoding.trick import TrickEncoder, count_bit
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
        pts = view.extra["team_points"]
        games = view.extra["games_won"]
        bits = 0
        for i in (0, 1):
            bits |= count_bit(self._o_pts[i], pts[i], MAX_SCORE) | count_bit(self._o_games[i], games[i], 2)
        return bits, []
