"""Classic partnership Whist, the short game to 5 (RULES.md §2, seed 001).

Four players, partners opposite: {0, 2} against {1, 3}. The dealer's last card is turned up for
trump and stays on the table until the dealer plays to the first trick. The dealer's left leads.
The side with seven or more tricks scores one point per trick over six; the first side to reach
the target wins the game.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from whist_env.cards import CLUBS, DIAMONDS, HEARTS, SPADES
from whist_env.errors import OptionError
from whist_env.options import GameConfig, option
from whist_env.rules.core import PHASE_PLAY, State, TrickGame
from whist_env.rules.scoring import (
    GAMES_TO_WIN_RUBBER,
    RUBBER_BONUS,
    game_value,
    honour_points,
    honours_in,
    rubber_margin,
    trick_points,
)
from whist_env.rules.tricks import deal_round_robin
from whist_env.view import ViewExtras

NUM_PLAYERS = 4
TRICKS = 13
# RULES.md §2.4: fixed trump rotation No-trump, ♠, ♥, ♦, ♣ from the first deal of an episode.
TRUMP_ROTATION = (None, SPADES, HEARTS, DIAMONDS, CLUBS)


@dataclass(frozen=True)
class ClassicWhistConfig(GameConfig):
    """Options of ``classic_whist_v0`` (RULES.md §2.3, §2.4, §0.8)."""

    target_points: int = option(5, choices=(5, 7, 10), doc="points that win a game")
    honours: bool = option(False, doc="score trump honours held by a partnership (4 → 4, 3 → 2)")
    rubber: bool = option(False, doc="the episode is a rubber: best of three games, 3/2/1 game values, +2")
    trump_rotation: bool = option(False, doc="no turn-up; trump cycles NT, ♠, ♥, ♦, ♣ deal by deal")
    episode: str = option("game", choices=("game", "deal"), doc="one game (or rubber) or one deal")
    reward: str = option("win", choices=("win", "points"), doc="±1 at the end, or points as scored")
    include_history: bool = option(True, doc="observations remember every card played (perfect recall)")

    def check(self, game_id: str) -> None:
        if self.rubber and self.episode == "deal":
            raise OptionError(
                f"{game_id}: rubber=True needs episode='game' (a rubber spans several games); "
                "use episode='deal' with rubber=False"
            )


@dataclass(frozen=True, kw_only=True, init=False)
class ClassicWhistExtras(ViewExtras):
    """The match score as a seat sees it (RULES.md §1): pairs are (my team, the other team)."""

    team_points: tuple[int, int]  # (2,) points in the current game
    games_won: tuple[int, int]  # (2,) games won in the rubber


class ClassicWhistState(State):
    """Adds the partnership scores of the game and rubber."""

    __slots__ = (
        "team_points",  # (2,) points in the current game
        "games_won",  # (2,) games won in the rubber
        "game_values",  # (2,) tuples of the values of games won
    )

    def __init__(self, num_players: int, dealer: int) -> None:
        super().__init__(num_players, dealer)
        self.team_points = [0, 0]
        self.games_won = [0, 0]
        self.game_values: list[tuple[int, ...]] = [(), ()]


# Partners sit opposite: seat + 2 is the partner. The game's spec (GameSpec.partner_offset) carries this to
# every other layer; team_of derives from it too.
PARTNER_OFFSET = 2


def team_of(seat: int) -> int:
    """Partnership of a seat: 0 for seats 0 and 2, 1 for seats 1 and 3."""
    return seat % PARTNER_OFFSET


class ClassicWhist(TrickGame[ClassicWhistState]):
    """Rules of ``classic_whist_v0``."""

    game_id = "classic_whist_v0"
    config_cls = ClassicWhistConfig
    state_cls = ClassicWhistState
    info_seat_keys = ()
    config: ClassicWhistConfig

    def __init__(self, /, **options: Any) -> None:
        super().__init__(**options)
        self.num_players = NUM_PLAYERS
        self.recall = self.config.include_history

    def start_deal(self, state: ClassicWhistState, deck: list[int]) -> None:
        """RULES.md §2.1: deal singly from the dealer's left; the dealer's last card is turned up."""
        d = state.dealer
        order = [(d + 1 + i) % NUM_PLAYERS for i in range(NUM_PLAYERS)]
        self.reset_deal(state, deal_round_robin(deck, order, NUM_PLAYERS), TRICKS)
        if self.config.trump_rotation:
            state.trump = TRUMP_ROTATION[state.deal_index % len(TRUMP_ROTATION)]
        else:
            state.turn_up = deck[51]
            state.turn_up_public = True
            state.trump = deck[51] // 13
        state.phase = PHASE_PLAY
        state.leader = state.to_act = (d + 1) % NUM_PLAYERS  # §2.2 the dealer's left leads

    def honours_held(self, state: ClassicWhistState, team: int) -> int:
        """Trump honours (A K Q J) the partnership was dealt (the turn-up counts for the dealer)."""
        if state.trump is None:
            return 0
        hands = state.dealt[team] | state.dealt[team + 2]
        return honours_in(hands, state.trump)

    def end_deal(self, state: ClassicWhistState) -> list[float] | None:
        """RULES.md §2.3 scoring, §2.4 honours and rubber, episode and reward per the options."""
        cfg = self.config
        tricks = (state.tricks_won[0] + state.tricks_won[2], state.tricks_won[1] + state.tricks_won[3])
        side = 0 if tricks[0] >= 7 else 1
        points = [0, 0]
        points[side] = trick_points(tricks[side])
        start = list(state.team_points)
        state.team_points[side] += points[side]
        honours = [0, 0]
        winner = side if state.team_points[side] >= cfg.target_points else -1
        if cfg.honours and winner < 0:
            # §2.4: tricks score before honours; a side at 4 at the start of the deal cannot score them.
            for team in (0, 1):
                h = honour_points(self.honours_held(state, team))
                if h and start[team] != 4:
                    honours[team] = h
                    points[team] += h
                    state.team_points[team] += h
            for team in (0, 1):
                if state.team_points[team] >= cfg.target_points:
                    winner = team
        net = points[0] - points[1]
        team_rewards = [0.0, 0.0]
        over = False
        game_val = 0
        if cfg.episode == "deal":
            team_rewards = [float(net), float(-net)]
            over = True
        elif cfg.reward == "points" and not cfg.rubber:
            team_rewards = [float(net), float(-net)]
        summary: list[tuple[str, Any]] = [
            ("team_tricks", tricks),
            ("trick_points", (points[0] - honours[0], points[1] - honours[1])),
            ("honours", tuple(honours)),
            ("team_points", tuple(state.team_points)),
        ]
        if winner >= 0 and cfg.episode == "game":
            loser = 1 - winner
            summary.append(("game_winner", winner))
            if not cfg.rubber:
                over = True
                if cfg.reward == "win":
                    team_rewards[winner], team_rewards[loser] = 1.0, -1.0
            else:
                game_val = game_value(state.team_points[loser])
                summary.append(("game_value", game_val))
                state.games_won[winner] += 1
                state.game_values[winner] = state.game_values[winner] + (game_val,)
                state.team_points = [0, 0]
                if cfg.reward == "points":
                    team_rewards[winner], team_rewards[loser] = float(game_val), float(-game_val)
                if state.games_won[winner] == GAMES_TO_WIN_RUBBER:
                    over = True
                    margin = rubber_margin(state.game_values[winner], state.game_values[loser])
                    summary.append(("rubber_winner", winner))
                    summary.append(("rubber_margin", margin))
                    if cfg.reward == "points":
                        team_rewards[winner] += RUBBER_BONUS
                        team_rewards[loser] -= RUBBER_BONUS
                    else:
                        team_rewards[winner], team_rewards[loser] = 1.0, -1.0
        state.scores = [state.team_points[s & 1] for s in range(NUM_PLAYERS)]
        state.deal_summary = tuple(summary)
        rewards = [team_rewards[s & 1] for s in range(NUM_PLAYERS)]
        return self.finish(state, rewards if any(rewards) else None, over)

    def begin_episode(self, state: ClassicWhistState) -> None:
        state.scores = [0] * NUM_PLAYERS

    def view_extra(self, state: ClassicWhistState, seat: int) -> ClassicWhistExtras:
        us = team_of(seat)
        return ClassicWhistExtras(
            team_points=(state.team_points[us], state.team_points[1 - us]),
            games_won=(state.games_won[us], state.games_won[1 - us]),
        )

    def summary_fields(self) -> dict[str, int | tuple[int, ...]]:
        """The deal summary in ``info`` (per partnership; -1: no game or rubber won with the deal)."""
        pair = (0, 0)
        return {
            "team_tricks": pair,
            "trick_points": pair,
            "honours": pair,
            "team_points": pair,
            "game_winner": -1,
            "game_value": 0,
            "rubber_winner": -1,
            "rubber_margin": 0,
        }

    def info_now(self, state: ClassicWhistState, seat: int) -> dict[str, Any]:
        info = super().info_now(state, seat)
        info["team_points"] = tuple(state.team_points)
        info["games_won"] = tuple(state.games_won)
        return info

    def deal_unit(self) -> str:
        """One deal's reward in words (honours counted only when the option is on)."""
        return "one deal: the partnership's ±(tricks − 6)" + (" + honours" if self.config.honours else "")

    def deal_return_range(self) -> tuple[float, float]:
        """RULES.md §2.3, §2.4: a side's deal reward is its points minus the other side's. The side with the
        majority scores at most 13 − 6 = 7 for tricks, and with ``honours`` either side adds at most 4 (four
        honours), so the net is within ±7, or ±11 with honours."""
        bound = float(TRICKS - 6 + (4 if self.config.honours else 0))
        return -bound, bound

    def check_invariants(self, state: ClassicWhistState) -> None:
        super().check_invariants(state)
        if state.phase == PHASE_PLAY:
            sizes = sorted(h.bit_count() for h in state.hands)
            assert sizes[-1] - sizes[0] <= 1
            assert sum(sizes) + len(state.history) == 52
            assert state.turn_up_public == (state.turn_up >= 0 and not (state.played[state.dealer])), (
                "turn-up must be public exactly until the dealer plays"
            )
        assert all(p < self.config.target_points for p in state.team_points) or state.done
