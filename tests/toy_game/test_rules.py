"""The toy Low Whist at the rules level: random games end, the legal masks follow suit, low cards win."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from whist_env.cards import SUIT_MASKS, parse_card, parse_cards
from whist_env.errors import IllegalActionError
from whist_env.games.classic_whist.rules import ClassicWhist
from whist_env.games.german_whist.rules import GermanWhist
from whist_env.games.humbug.rules import Humbug
from whist_env.games.humbug_whist.rules import HumbugWhist
from whist_env.games.oh_hell.rules import OhHell
from whist_env.rules.core import PHASE_BIDDING, PHASE_NAMES, PHASE_OVER, PHASE_PLAY, State, TrickGame
from whist_env.rules.tricks import trick_winner
from whist_env.search.solver import check_standard_tricks, position_from_state
from whist_env.testing import play_random_episode

from .rules import LowWhist, LowWhistExtras, lowest_of_led_suit

GRID = [{}, {"include_history": False}, {"num_deals": 3}]


@pytest.mark.parametrize("options", GRID)
def test_random_games_end_with_every_trick_played_and_zero_sum_rewards(options: dict[str, int | bool]) -> None:
    game = LowWhist(**options)
    rng = np.random.default_rng(1)
    for _ in range(30):
        *_, state = play_random_episode(game, rng)  # check_invariants after every action
        assert state.done and state.phase == PHASE_OVER and state.to_act == -1
        assert state.deal_index + 1 == game.config.num_deals
        assert sum(state.scores) == 13 * game.config.num_deals
        assert sum(state.returns) == pytest.approx(0.0)


def test_legal_mask_is_the_hand_to_lead_and_the_led_suit_when_held() -> None:
    game = LowWhist()
    rng = np.random.default_rng(2)
    checked = 0
    for state in play_random_episode(game, rng):
        if state.done:
            break
        hand = state.hands[state.to_act]
        legal = game.legal_mask(state)
        if not state.trick:
            assert legal == hand
        else:
            follow = hand & SUIT_MASKS[state.led_suit]
            assert legal == (follow or hand)
        checked += 1
    assert checked == 52


def test_the_lowest_card_of_the_led_suit_wins_and_off_suit_cards_never_do() -> None:
    plays = [(0, parse_card("9H")), (1, parse_card("2S")), (2, parse_card("3H")), (3, parse_card("AH"))]
    assert lowest_of_led_suit(plays) == 2  # the 2S is off suit: the 3H is the lowest heart
    assert trick_winner(plays, None) == 3  # the standard rule would give it to the ace
    assert lowest_of_led_suit([(2, parse_card("KC")), (3, parse_card("2D"))]) == 2


def test_play_card_calls_the_trick_winner_hook() -> None:
    game = LowWhist()
    deck = parse_cards(" ".join(f"{r}{s}" for s in "CDHS" for r in "23456789TJQKA"))
    state = game.new_episode(np.random.default_rng(0), deck=deck, dealer=3)
    # deal from the dealer's left, one card each: seat 0 holds 2C 6C TC AC 5D ..., seat 1 3C 7C JC ...
    assert state.to_act == 0 and state.hands[0] >> parse_card("AC") & 1
    for card in ("AC", "3C", "4C", "5C"):  # seat 0 leads its ace; seat 1's three is the lowest club
        game.step(state, parse_card(card), np.random.default_rng(0))
    assert state.last_winner == 1 and state.tricks_won == [0, 1, 0, 0] and state.to_act == 1


def test_views_carry_the_typed_extras() -> None:
    game = LowWhist(num_deals=2)
    state = game.new_episode(np.random.default_rng(5))
    view = game.view(state, 0)
    assert view.extra == LowWhistExtras(deals_left=2) and view.trump is None and view.phase == "play"
    assert "deals_left: 2" in view.summary()


def test_the_hook_marks_the_game_non_standard_and_the_solver_refuses_it() -> None:
    assert LowWhist.standard_trick_winner is False
    assert all(cls.standard_trick_winner for cls in _registered_rules())
    game = LowWhist()
    state = game.new_episode(np.random.default_rng(0))
    with pytest.raises(ValueError, match="low_whist_v0: the double-dummy solver assumes .* overrides TrickGame.trick"):
        position_from_state(game, state)
    with pytest.raises(ValueError, match="standard_trick_winner is False"):
        check_standard_tricks(LowWhist)
    assert state.phase == PHASE_PLAY


def _registered_rules() -> list[type[TrickGame[Any]]]:
    return [ClassicWhist, Humbug, HumbugWhist, OhHell, GermanWhist]


# A phase of its own, added without touching a hook that switches on the phase: before the cards,
# every seat in turn says "ready" (action 52). PHASE_READY numbers on after the core's phases.
PHASE_READY = len(PHASE_NAMES)
READY = 52


class ReadyLowWhist(LowWhist):
    phase_names = (*PHASE_NAMES, "ready")
    phase_rules = {PHASE_READY: ("legal_ready", "apply_ready")}

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.num_actions = READY + 1

    def start_deal(self, state: State, deck: list[int]) -> None:
        super().start_deal(state, deck)
        state.phase = PHASE_READY

    def legal_ready(self, state: State) -> int:
        return 1 << READY

    def apply_ready(self, state: State, action: int) -> list[float] | None:
        if action != READY:
            raise self.illegal(state, action, "say ready first")
        state.to_act = (state.to_act + 1) % 4
        if state.to_act == state.leader:
            state.phase = PHASE_PLAY
        return None


def test_a_game_adds_a_phase_through_phase_rules_and_phase_names() -> None:
    game = ReadyLowWhist()
    rng = np.random.default_rng(0)
    state = game.new_episode(rng)
    assert game.view(state, state.to_act).phase == "ready"
    assert game.legal_actions(state) == [READY]
    with pytest.raises(IllegalActionError, match="say ready first"):
        game.step(state, parse_card("2C"), rng)
    for _ in range(4):
        game.step(state, READY, rng)
    assert state.phase == PHASE_PLAY and game.legal_mask(state) == state.hands[state.to_act]
    *_, last = play_random_episode(game, rng)
    assert last.done


def test_a_phase_without_rules_is_named_in_the_error() -> None:
    game = LowWhist()
    state = game.new_episode(np.random.default_rng(0))
    state.phase = PHASE_BIDDING
    with pytest.raises(NotImplementedError, match="low_whist_v0: no rules for phase 'bidding'; declare them in "):
        game.legal_mask(state)
