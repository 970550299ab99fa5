"""The Oh Hell heuristic's numba port decides as the Python agent does: the bids (float for float) and the play."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from whist_env.cards import NUM_CARDS
from whist_env.games.oh_hell import engine_heuristic as nb
from whist_env.games.oh_hell import heuristic as py
from whist_env.games.oh_hell.rules import BID_BASE
from whist_env.registry import get_spec
from whist_env.testing import compare_positions
from whist_env.vector.core import NO_TRUMP

GAME = "oh_hell_v0"
GRID = [dict(options) for options in get_spec(GAME).option_grid]
# What the grid leaves out: 6 and 7 seats, and full decks (no card left to turn up: no trump in turn_up mode).
EDGES: list[dict[str, Any]] = [
    {"num_players": 6, "trump_mode": "turn_up", "episode": "deal", "hand_size": 8, "miss_points": "per_trick"},
    {"num_players": 7, "trump_mode": "drawn_card", "max_cards": 3},
    {"num_players": 2, "trump_mode": "turn_up", "episode": "deal", "hand_size": 26},
    {"num_players": 4, "trump_mode": "turn_up", "episode": "deal", "hand_size": 13, "include_history": False},
]
CASES = GRID + EDGES
PER_ENTRY = 10_000 // len(CASES) + 1  # >= 10,000 positions over the option grid and the edges


@pytest.mark.parametrize("k", range(len(CASES)))
def test_port_equals_python_heuristic(k: int) -> None:
    decided = compare_positions(GAME, CASES[k], PER_ENTRY, seed=k)
    assert decided.total() >= PER_ENTRY
    bids = sum(count for action, count in decided.items() if action >= BID_BASE)
    assert bids >= 50 and decided.total() - bids >= 200  # both bids and cards were compared
    assert len(decided) > 30  # most cards were some decision


@pytest.mark.slow
@pytest.mark.parametrize("k", range(len(CASES)))
def test_port_equals_python_heuristic_in_heuristic_play(k: int) -> None:
    """Mostly the heuristic's own play (the positions an arena or a learner meets), on more positions."""
    decided = compare_positions(GAME, CASES[k], 4 * PER_ENTRY, seed=100 + k, num_envs=64, heuristic_share=0.95)
    assert decided.total() >= 4 * PER_ENTRY


def test_bid_estimates_are_the_python_floats_bit_for_bit() -> None:
    """expected_tricks, calibrated_tricks and choose_bid on random hands of every size, seats, trump and turn-up:
    equal floats (not just close ones), since a bid turns on which side of a half the estimate falls."""
    rng = np.random.default_rng(7)
    for _ in range(20_000):
        n = int(rng.integers(2, 9))
        k = int(rng.integers(1, NUM_CARDS // n + 1))
        deck = rng.permutation(NUM_CARDS)
        hand = sum(1 << int(c) for c in deck[:k])
        placed = 1 << int(deck[k]) if k < NUM_CARDS and rng.random() < 0.5 else 0
        trump = None if rng.random() < 0.3 else int(rng.integers(4))
        raw = py.expected_tricks(hand, n, trump, placed)
        got = nb.expected_tricks(hand, n, NO_TRUMP if trump is None else trump, placed)
        assert got == raw, (hand, n, trump, placed)
        est = py.calibrated_tricks(raw, k, n, trump is not None)
        assert nb.calibrated_tricks(raw, k, n, trump is not None) == est
        legal = [b for b in range(k + 1) if rng.random() < 0.8] or [0]
        mask = sum(1 << b for b in legal)
        assert nb.choose_bid(est, mask) == py.choose_bid(est, legal)
    # the nearest legal bid, rounded down from 0.55 above one; a bid the hook rule forbids is skipped
    assert nb.choose_bid(1.5, 0b111) == py.choose_bid(1.5, [0, 1, 2]) == 1
    assert nb.choose_bid(1.6, 0b111) == py.choose_bid(1.6, [0, 1, 2]) == 2
    assert nb.choose_bid(1.0, 0b101) == py.choose_bid(1.0, [0, 2]) == 0
