"""Reference observation of ``humbug_whist_v0``: the common pieces plus the exchange and the scores (RULES.md §1.8)."""

from __future__ import annotations

from typing import NamedTuple, cast

import numpy as np

from whist_env.encoding.reference.common import ReferenceTrickEncoder, card_set, count_of, one_card, one_hot
from whist_env.games.humbug_whist.rules import TURN_UP_STATUSES, HumbugWhist, HumbugWhistExtras
from whist_env.view import PlayerView

PHASES = ("exchange", "play")
DECISIONS = ("keep", "exchange")  # as the rules number them: 0 keep, 1 exchange; -1 not made (or not public)
# Game points can pass 5 on honours alone and the game goes on (§1.6 step 4); larger numbers show as 11.
MAX_GAME_POINTS = 11
MAX_TRICK_POINTS = 4  # 5 trick points win the game, so a game still going has at most 4
MAX_GAMES = 2  # two games win the rubber
MAX_RUBBER_POINTS = 8  # 3 + 3 + the rubber bonus 2 (§1.7)


class HumbugWhistFacts(NamedTuple):
    """What the game's pieces need from the view; pairs are (mine, the opponent's)."""

    exchange: tuple[int, int]
    turn_up_status: str
    put_away: int
    discarded_turn_up: int  # -1: none (or forgotten without history)
    game_points: tuple[int, int]
    trick_points: tuple[int, int]
    games_won: tuple[int, int]
    rubber_points: tuple[int, int]


def read_facts(view: PlayerView) -> HumbugWhistFacts:
    """The game-specific facts of ``view`` (the one place that reads its extras)."""
    x = cast(HumbugWhistExtras, view.extra)

    def pair(value: tuple[int, ...]) -> tuple[int, int]:
        mine, theirs = value
        return (mine, theirs)

    return HumbugWhistFacts(
        exchange=pair(x.exchange),
        turn_up_status=x.turn_up_status,
        put_away=x.put_away,
        discarded_turn_up=x.discarded_turn_up,
        game_points=pair(x.game_points),
        trick_points=pair(x.trick_points),
        games_won=pair(x.games_won),
        rubber_points=pair(x.rubber_points),
    )


class HumbugWhistReference(ReferenceTrickEncoder):
    """Relative seats me/opponent; 13 tricks a deal; phases exchange/play; decisions, turn-up status,
    put-away hand and the scores of both.

    Args:
        game: the rules (no option of Swedish Humbug whist changes the observation's shape).
    """

    def __init__(self, game: HumbugWhist) -> None:
        super().__init__(2, 13, phases=PHASES)

    def game_pieces(self, view: PlayerView) -> dict[str, tuple[str, np.ndarray]]:
        facts = read_facts(view)
        mine, theirs = facts.exchange
        out = {
            "exchange[me]": ("onehot", one_hot(mine if mine >= 0 else None, len(DECISIONS))),
            "exchange[opponent]": ("onehot", one_hot(theirs if theirs >= 0 else None, len(DECISIONS))),
            "turn_up_status": (
                "onehot",
                one_hot(TURN_UP_STATUSES.index(facts.turn_up_status), len(TURN_UP_STATUSES)),
            ),
            "put_away": ("cards", card_set(facts.put_away)),
            "discarded_turn_up": ("cards", one_card(facts.discarded_turn_up)),
        }
        for name, maximum, (my_value, their_value) in (
            ("game_points", MAX_GAME_POINTS, facts.game_points),
            ("trick_points", MAX_TRICK_POINTS, facts.trick_points),
            ("games_won", MAX_GAMES, facts.games_won),
            ("rubber_points", MAX_RUBBER_POINTS, facts.rubber_points),
        ):
            out[f"{name}[me]"] = ("count", count_of(my_value, maximum))
            out[f"{name}[opponent]"] = ("count", count_of(their_value, maximum))
        return out
