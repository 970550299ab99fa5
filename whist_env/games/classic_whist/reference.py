"""Reference observation of ``classic_whist_v0``: the common pieces plus partnership points and games."""

from __future__ import annotations

from typing import NamedTuple, cast

import numpy as np

from whist_env.encoding.reference.common import ReferenceTrickEncoder, count_of
from whist_env.games.classic_whist.rules import ClassicWhistExtras
from whist_env.rules.core import TrickGame
from whist_env.view import PlayerView

# 9 points (one short of the longest game, 10) + 7 trick points in one deal: no larger count can show
MAX_POINTS = 16
MAX_GAMES = 2  # a rubber ends when a side has won two games


class ClassicFacts(NamedTuple):
    """What the game's pieces need from the view, from my partnership's side first."""

    team_points: tuple[int, int]  # (us, them)
    games_won: tuple[int, int]  # (us, them)


def read_facts(view: PlayerView) -> ClassicFacts:
    """The game-specific facts of ``view`` (the one place that reads its extras)."""
    x = cast(ClassicWhistExtras, view.extra)
    us, them = x.team_points
    games_us, games_them = x.games_won
    return ClassicFacts((us, them), (games_us, games_them))


class ClassicWhistReference(ReferenceTrickEncoder):
    """Relative seats me/left/partner/right; 13 tricks a deal; points and games of both sides.

    Args:
        game: the rules (classic whist has no option that changes the observation's shape).
    """

    def __init__(self, game: TrickGame) -> None:
        super().__init__(4, 13, partnership=True)

    def game_pieces(self, view: PlayerView) -> dict[str, tuple[str, np.ndarray]]:
        facts = read_facts(view)
        us, them = facts.team_points
        games_us, games_them = facts.games_won
        return {
            "points[us]": ("count", count_of(us, MAX_POINTS)),
            "points[them]": ("count", count_of(them, MAX_POINTS)),
            "games[us]": ("count", count_of(games_us, MAX_GAMES)),
            "games[them]": ("count", count_of(games_them, MAX_GAMES)),
        }
