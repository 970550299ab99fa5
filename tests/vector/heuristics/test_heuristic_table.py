"""The numba Table and building blocks (whist_env.vector.heuristics.table) against their Python twins.

Views come from random play of every game over its whole option grid (the seat to act, play phase only); two-player
views are also read with a random ``restrict`` (Humbug's memory of the opponent's hand). Every question the Table
answers and every building block's card must equal the Python one.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from whist_env import make
from whist_env.agents import heuristic as py
from whist_env.agents.cardplay import Table
from whist_env.agents.endgame import ENDGAME_CARDS
from whist_env.cards import NUM_CARDS, SUIT_MASKS, cards_of
from whist_env.registry import game_ids
from whist_env.rules.core import PHASE_PLAY
from whist_env.testing import option_cases, play_random_episode
from whist_env.vector.heuristics import table as nb
from whist_env.view import PlayerView

VIEWS_PER_GAME = 1200
GAMES = game_ids()


def partner_of(view: PlayerView) -> int:
    """The partner seat the game's heuristic gives its Table."""
    return (view.seat + 2) % 4 if view.game == "classic_whist_v0" else -1


def play_views(game_id: str, count: int, seed: int) -> Iterator[PlayerView]:
    """``count`` views of the seat to act in the play phase, from random games spread over the option grid."""
    grid = [options for g, options in option_cases() if g == game_id]
    rng = np.random.default_rng(seed)
    made = 0
    while made < count:
        for options in grid:
            game = make(game_id, raw=True, **options).game
            for state in play_random_episode(game, rng, check=False):
                if state.phase == PHASE_PLAY and state.to_act >= 0:
                    yield game.view(state, state.to_act)
                    made += 1
                    if made >= count:
                        return


def random_restrict(view: PlayerView, rng: np.random.Generator) -> dict[int, int] | None:
    """None, or for the opponent of a two-player view a random part of the unseen cards."""
    if view.num_players != 2 or rng.random() < 0.5:
        return None
    keep = rng.random(NUM_CARDS) < rng.uniform(0.2, 1.0)
    pool = sum(1 << c for c in cards_of(view.unseen) if keep[c])
    return {1 - view.seat: pool}


def check_table(t: Table, tb: np.ndarray) -> None:
    """Every field and question of the Python table equals the numba one."""
    view = t.view
    n = view.num_players
    assert tb[nb.T_LED] == t.led
    assert tb[nb.T_WINNER] == t.winner
    assert tb[nb.T_BEST] == t.best
    assert list(tb[nb.T_AFTER : nb.T_AFTER + tb[nb.T_NUM_AFTER]]) == t.after
    assert list(tb[nb.T_POSSIBLE : nb.T_POSSIBLE + n]) == t.possible
    assert [bool(x) for x in tb[nb.T_EXACT : nb.T_EXACT + n]] == t.exact
    assert tb[nb.T_OUTSIDE] == t.outside
    assert nb.opponents_trumps(tb) == t.opponents_trumps()
    for s in range(n):
        for suit in range(4):
            assert nb.may_be_void(tb, s, suit) == t.may_be_void(s, suit), (s, suit)
            assert nb.may_trump(tb, s, suit) == t.may_trump(s, suit), (s, suit)
    for c in cards_of(view.hand):
        assert nb.lowest_equal(tb, c) == t.lowest_equal(c), c
        assert nb.is_master(tb, c) == t.is_master(c), c
        assert nb.wins_now(tb, c) == t.wins_now(c), c
        assert nb.holds(tb, c) == t.holds(c), c
        assert nb.safe_against(tb, c) == t.safe_against(c), c


def check_blocks(t: Table, tb: np.ndarray, legal: int) -> None:
    """Every building block picks the same card from ``legal`` as its Python twin."""
    view = t.view
    assert nb.discard(tb, legal) == py.discard(t, legal)
    assert nb.low_card(tb, legal) == py.low_card(t, legal)
    for sure in (False, True):
        got = nb.winners(tb, legal, sure)
        assert got == py.winners(t, legal, sure)
        if got:
            assert nb.cheapest_winner(tb, got) == py.cheapest_winner(t, got)
    for avoid in (False, True):
        assert nb.long_suit_lead(tb, legal, avoid) == py.long_suit_lead(t, legal, avoid)
    for draw in (3, 4, 5):
        assert nb.lead_to_win(tb, legal, draw) == py.lead_to_win(t, legal, draw)
    if view.trick:
        for eager in (False, True):
            assert nb.follow_to_win(tb, legal, eager) == py.follow_to_win(t, legal, eager)
    if view.num_players == 2:
        if not view.trick:
            assert nb.two_player_lead(tb, legal) == py.two_player_lead(t, legal)
        assert nb.two_player_play(tb, legal) == py.two_player_play(t, legal)


@pytest.mark.parametrize("game_id", GAMES)
def test_table_and_blocks_equal_python_on_random_views(game_id: str) -> None:
    rng = np.random.default_rng(11)
    endings = 0
    for view in play_views(game_id, VIEWS_PER_GAME, seed=GAMES.index(game_id)):
        restrict = random_restrict(view, rng)
        t = Table(view, partner=partner_of(view), restrict=restrict)
        tb = nb.view_table(view, partner_of(view), restrict)
        check_table(t, tb)
        check_blocks(t, tb, view.legal)
        # a random part of the legal cards too: the blocks are also called on subsets (trumps only, a suit)
        part = sum(1 << c for c in cards_of(view.legal) if rng.random() < 0.6) or view.legal
        check_blocks(t, tb, part)
        if view.num_players == 2 and t.exact[1 - view.seat] and view.hand.bit_count() <= ENDGAME_CARDS:
            endings += 1
    if game_id in ("german_whist_v0", "humbug_v0"):
        assert endings > 20, "too few views reach the exact ending: the endgame branch would go untested"


def test_card_set_helpers_match_python() -> None:
    rng = np.random.default_rng(3)
    for _ in range(2000):
        mask = int(sum(1 << c for c in range(NUM_CARDS) if rng.random() < rng.uniform(0.02, 0.5))) or 1
        assert nb.lowest(mask) == min(cards_of(mask))
        assert nb.highest(mask) == max(cards_of(mask))
        card = int(rng.integers(NUM_CARDS))
        s = card // 13
        assert nb.above(card) == SUIT_MASKS[s] & ~((2 << card) - 1)
        assert nb.suit_length(mask, s) == (mask & SUIT_MASKS[s]).bit_count()
        suits = int(rng.integers(16))
        assert nb.suits_cards(suits) == sum(SUIT_MASKS[x] for x in range(4) if suits >> x & 1)


def test_table_of_a_third_hand_view_by_the_rules() -> None:
    """The trick's winner, the seats after me and my own hand, checked by the rules rather than by the twin."""
    view = next(v for v in play_views("classic_whist_v0", 50, seed=5) if len(v.trick) == 2)
    tb = nb.view_table(view, partner_of(view), None)
    (s0, c0), (s1, c1) = view.trick
    second_wins = c1 // 13 == c0 // 13 and c1 > c0 or c1 // 13 == view.trump != c0 // 13
    assert tb[nb.T_BEST] == (c1 if second_wins else c0)
    assert tb[nb.T_WINNER] == (s1 if second_wins else s0)
    assert tb[nb.T_LED] == c0 // 13
    assert tb[nb.T_NUM_AFTER] == 1
    assert tb[nb.T_AFTER] == (view.seat + 1) % 4
    assert tb[nb.T_POSSIBLE + view.seat] == view.hand
    assert tb[nb.T_EXACT + view.seat] == 1
