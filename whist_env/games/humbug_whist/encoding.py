"""Observation of ``humbug_whist_v0``: the common trick pieces plus the exchange and the scores (RULES.md §1.8)."""

from __future__ import annotations

from typing import Any

from whist_env.encoding.layout import Piece, cards, count, onehot
from whist_env.encoding.trick import TrickEncoder
from whist_env.games.humbug_whist.rules import TURN_UP_STATUSES, HumbugWhist, HumbugWhistExtras
from whist_env.rules.core import State, TrickGame
from whist_env.view import PlayerView

# Game points clip here: a player may pass 5 on honours alone and the game goes on (§1.6 step 4),
# and from 5 on every number means the same (the next trick point wins; a loser there is worth 1).
MAX_GAME_POINTS = 11
MAX_TRICK_POINTS = 4  # trick points in a game that is still going (5 would have won it)
MAX_RUBBER_POINTS = 8  # 3 + 3 + the rubber bonus 2 (§1.7)
_STATUS_INDEX = {s: i for i, s in enumerate(TURN_UP_STATUSES)}


class HumbugWhistEncoder(TrickEncoder):
    """Common pieces (me/opponent; phases exchange/play) + decisions, turn-up status, put-away hand, scores."""

    def __init__(self) -> None:
        super().__init__(2, 13, phases=("exchange", "play"), num_actions=HumbugWhist.num_actions)
        off = self.layout.offsets
        self._o_exchange = (off["exchange[me]"], off["exchange[opponent]"])
        self._o_status = off["turn_up_status"]
        self._o_put_away = off["put_away"]
        self._o_discarded = off["discarded_turn_up"]
        self._o_gp = (off["game_points[me]"], off["game_points[opponent]"])
        self._o_tp = (off["trick_points[me]"], off["trick_points[opponent]"])
        self._o_gw = (off["games_won[me]"], off["games_won[opponent]"])
        self._o_rp = (off["rubber_points[me]"], off["rubber_points[opponent]"])

    def game_pieces(self) -> list[Piece]:
        decisions = ("keep", "exchange")
        return [
            onehot("exchange[me]", decisions, "my exchange decision this deal (none: not yet made)"),
            onehot("exchange[opponent]", decisions, "the opponent's decision once public (§1.4)"),
            onehot("turn_up_status", TURN_UP_STATUSES, "turn-up face up, taken up by the dealer, or discarded"),
            cards("put_away", "the hand I put away by exchanging: out of play (history)"),
            cards("discarded_turn_up", "the turn-up card the dealer put away with his hand (history)"),
            count("game_points[me]", MAX_GAME_POINTS, "my points in this game (clipped)"),
            count("game_points[opponent]", MAX_GAME_POINTS, "the opponent's points in this game (clipped)"),
            count("trick_points[me]", MAX_TRICK_POINTS, "my trick points in this game"),
            count("trick_points[opponent]", MAX_TRICK_POINTS, "the opponent's trick points in this game"),
            count("games_won[me]", 2, "games I won in the rubber"),
            count("games_won[opponent]", 2, "games the opponent won in the rubber"),
            count("rubber_points[me]", MAX_RUBBER_POINTS, "my rubber points (game values, +2 for the rubber)"),
            count("rubber_points[opponent]", MAX_RUBBER_POINTS, "the opponent's rubber points"),
        ]

    def encode_game(self, view: PlayerView) -> tuple[int, list[float]]:
        # only this game's views come here: an annotation, as cast() is a call on every observation
        extra: HumbugWhistExtras = view.extra  # type: ignore[assignment]
        return self._game_bits(extra)

    def encode_game_state(self, game: TrickGame[Any], state: State, seat: int) -> tuple[int, list[float]]:
        """:meth:`encode_game` of this seat's view, read from the state (``encode_state``'s path)."""
        extra: HumbugWhistExtras = game.view_extra(state, seat)  # type: ignore[assignment]
        return self._game_bits(extra)

    def _game_bits(self, extra: HumbugWhistExtras) -> tuple[int, list[float]]:
        bits = (extra.put_away << self._o_put_away) | (1 << (self._o_status + _STATUS_INDEX[extra.turn_up_status]))
        mine, theirs = extra.exchange
        if mine >= 0:
            bits |= 1 << (self._o_exchange[0] + mine)
        if theirs >= 0:
            bits |= 1 << (self._o_exchange[1] + theirs)
        discarded = extra.discarded_turn_up
        if discarded >= 0:
            bits |= 1 << (self._o_discarded + discarded)
        # count pieces written out (not count_bit): this runs on every observation
        # only game points can pass their piece (honours alone); trick points, games and rubber points cannot
        o, (a, b) = self._o_gp, extra.game_points
        top = MAX_GAME_POINTS
        bits |= (1 << (o[0] + (a if a < top else top))) | (1 << (o[1] + (b if b < top else top)))
        o, (a, b) = self._o_tp, extra.trick_points
        bits |= (1 << (o[0] + a)) | (1 << (o[1] + b))
        o, (a, b) = self._o_gw, extra.games_won
        bits |= (1 << (o[0] + a)) | (1 << (o[1] + b))
        o, (a, b) = self._o_rp, extra.rubber_points
        bits |= (1 << (o[0] + a)) | (1 << (o[1] + b))
        return bits, []
