"""German Whist's batched engine beyond the lockstep test: the stock and its draws, free phase-1 tricks, a series,
bad input, and the export and import of positions (RULES.md §5)."""

from __future__ import annotations

import numpy as np
import pytest

import whist_env.vector as vector
from whist_env import make
from whist_env.errors import IllegalActionError, OptionError
from whist_env.games.classic_whist.rules import ClassicWhistState
from whist_env.games.german_whist.rules import PHASE1_TRICKS
from whist_env.testing import random_legal, unchanged

GAME = "german_whist_v0"
B = 6


def play_tricks(venv: vector.RawVectorEnv, tricks: int, rng: np.random.Generator) -> vector.TimeStep:
    """Random legal play for ``tricks`` whole tricks in every environment (from a fresh deal)."""
    ts = venv.observe(venv.field("to_act")[:, 0])
    mask = ts[1]
    step = None
    for _ in range(2 * tricks):
        step = venv.step(random_legal(mask, rng))
        mask = step.action_mask
    assert step is not None
    return step


def test_each_phase_one_trick_draws_from_the_stock() -> None:
    """RULES.md §5.2: the winner takes the face-up card, the loser the next one face down; the next is turned."""
    venv = vector.make(GAME, B, seed=3)
    venv.reset()
    rng = np.random.default_rng(0)
    deck = venv.decks()
    assert (venv.field("turn_up")[:, 0] == deck[:, 26]).all() and (venv.field("trump")[:, 0] == deck[:, 26] // 13).all()
    for k in range(1, PHASE1_TRICKS + 1):
        play_tricks(venv, 1, rng)
        winner = venv.field("last_winner")[:, 0]
        for i in range(B):
            w = int(winner[i])
            assert (int(venv.field("prizes")[i, w]) >> int(deck[i, 24 + 2 * k])) & 1
            assert (int(venv.field("draws")[i, 1 - w]) >> int(deck[i, 25 + 2 * k])) & 1
            assert [bin(int(h)).count("1") for h in venv.field("hands")[i, :2]] == [13, 13]
        want = deck[:, 26 + 2 * k] if k < PHASE1_TRICKS else np.full(B, -1)
        assert np.array_equal(venv.field("turn_up")[:, 0], want)
    assert (venv.field("phase1_won")[:, :2].sum(axis=1) == PHASE1_TRICKS).all()
    # state(): the stock and the next draw are empty in phase 2, the face-down draws are each seat's
    hidden = venv.state()[:, 2 * 52 : 6 * 52].reshape(B, 4, 52)
    assert not hidden[:, :2].any() and (hidden[:, 2:].sum(axis=2) == venv.field("phase1_won")[:, 1::-1]).all()


def test_free_phase_one_then_phase_two_must_follow() -> None:
    """RULES.md §5.5 ``phase1_follow_suit=False``: any card in tricks 1-13; from trick 14 suit must be followed,
    and an off-suit card there is refused, naming the environments, with no environment changed."""
    venv = vector.make(GAME, B, seed=5, phase1_follow_suit=False)
    ts = venv.reset()
    rng = np.random.default_rng(1)
    for _ in range(2 * PHASE1_TRICKS):
        hands = venv.field("hands")[np.arange(B), ts.current_player]
        bits = np.array([[(int(h) >> c) & 1 for c in range(52)] for h in hands], np.int8)
        assert np.array_equal(ts.action_mask, bits)  # leader and follower alike: the whole hand
        ts = venv.step(random_legal(ts.action_mask, rng))
    assert (venv.field("voids")[:, :2] == 0).all()  # no off-suit card in phase 1 proved a void
    while True:  # to a phase-2 trick where the follower holds the led suit and another one
        ts = venv.step(random_legal(ts.action_mask, rng))
        led = venv.field("led_suit")[:, 0]
        hands = venv.field("hands")[np.arange(B), np.maximum(ts.current_player, 0)]
        suits = np.array([[(int(h) >> (13 * s)) & 0x1FFF for s in range(4)] for h in hands])
        off = [
            i
            for i in range(B)
            if led[i] >= 0 and suits[i, led[i]] and any(suits[i, s] for s in range(4) if s != led[i])
        ]
        if off:
            break
    i = off[0]
    actions = random_legal(ts.action_mask, rng)
    led_i = int(led[i])
    actions[i] = next(c for c in range(52) if (int(hands[i]) >> c) & 1 and c // 13 != led_i)
    with unchanged(venv), pytest.raises(IllegalActionError, match=rf"illegal action in environment\(s\) {i}\b"):
        venv.step(actions)


def test_a_series_pays_each_deal_and_ends_after_the_last() -> None:
    venv = vector.make(GAME, B, seed=2, num_deals=3, reward="trick_diff")
    ts = venv.reset()
    assert ts.observation.dtype == np.float32  # the series' balance and deals left are scalars
    rng = np.random.default_rng(2)
    paid = np.zeros((B, 2))
    for deal in range(3):
        for _ in range(52):
            assert not ts.terminated.any()
            ts = venv.step(random_legal(ts.action_mask, rng))
            paid += ts.rewards
        assert (ts.rewards[:, 0] == -ts.rewards[:, 1]).all()
        assert (venv.field("deal_index")[:, 0] == min(deal + 1, 2)).all()
    assert ts.terminated.all() and (ts.current_player == -1).all()
    assert np.array_equal(paid[:, 0], venv.field("returns")[:, 0])
    with pytest.raises(OptionError, match="obs_dtype='uint8' cannot hold the layout's scalar pieces"):
        vector.make(GAME, 2, obs_dtype="uint8", num_deals=2)
    with pytest.raises(OptionError, match="num_deals"):
        vector.make(GAME, 2, num_deals=0)


@pytest.mark.parametrize("options", [{}, {"include_history": False, "num_deals": 2}], ids=str)
def test_export_and_import_carry_a_phase_one_position(options: dict[str, object]) -> None:
    """A rules state from the AEC env, imported in phase 1 (stock on the table), plays on as the AEC env does."""
    rng = np.random.default_rng(7)
    twin = make(GAME, raw=True, **options)
    twin.reset(seed=12)
    for _ in range(9):
        twin.step(int(rng.choice(np.flatnonzero(twin.observe(twin.agent_selection)["action_mask"]))))
    venv = vector.make(GAME, B, seed=1, **options)
    venv.reset()
    venv.import_state(4, twin.game_state.copy())
    assert venv.decks()[4, :26].tolist() == [-1] * 26  # the stock is kept; the dealt half is not known
    for step in range(52 - 9):  # to the end of the first deal
        for seat in range(2):
            obs, mask = venv.observe(np.full(B, seat))
            want = twin.observe(f"player_{seat}")
            assert np.array_equal(obs[4], want["observation"]), (step, seat)
            assert np.array_equal(mask[4], want["action_mask"]), (step, seat)
        assert np.array_equal(venv.state()[4], twin.state()), step
        actions = random_legal(venv.observe(np.maximum(venv.field("to_act")[:, 0], 0))[1], rng)
        ts = venv.step(actions)
        twin.step(int(actions[4]))
        assert ts.rewards[4].tolist() == [twin.rewards[f"player_{s}"] for s in range(2)]
    venv.import_state(0, venv.export_state(4))
    assert np.array_equal(venv.observe(np.ones(B, np.int64))[0][0], venv.observe(np.ones(B, np.int64))[0][4])


def test_import_refuses_what_is_not_a_german_whist_position() -> None:
    venv = vector.make(GAME, B, seed=0)
    venv.reset()
    twin = make(GAME, raw=True)
    twin.reset(seed=0)
    state = twin.game_state.copy()
    with pytest.raises(OptionError, match="takes a GermanWhistState, got ClassicWhistState"):
        venv.import_state(0, ClassicWhistState(4, 0))
    state.stock = state.stock[1:] + state.stock[:1]  # the face-up card no longer heads the stock
    with unchanged(venv), pytest.raises(OptionError, match="inconsistent state"):
        venv.import_state(0, state)
