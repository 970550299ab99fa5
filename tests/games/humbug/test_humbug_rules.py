"""RULES.md §3 (English Humbug): test vectors HE-1 … HE-6 and the two modes."""

from __future__ import annotations

import numpy as np
import pytest

from whist_env.cards import SPADES, cards_of, parse_card, parse_cards
from whist_env.errors import OptionError
from whist_env.games.humbug.rules import Humbug
from whist_env.rules.core import PHASE_DEAL_END

CANONICAL = list(range(52))


def deck_for(non_dealer: list[int], dealer: list[int]) -> list[int]:
    """RULES.md §3.1: non_dealer = deck[0::2], dealer = deck[1::2]."""
    deck = [0] * 52
    deck[0::2] = non_dealer
    deck[1::2] = dealer
    return deck


def test_he1_deal() -> None:
    game = Humbug()
    state = game.new_episode(np.random.default_rng(0), deck=CANONICAL, dealer=1)
    assert cards_of(state.hands[0]) == list(range(0, 52, 2))
    assert cards_of(state.hands[1]) == list(range(1, 52, 2))
    assert state.turn_up == parse_card("AS") and state.hands[1] >> parse_card("AS") & 1
    assert state.trump == SPADES
    assert state.to_act == 0


@pytest.mark.parametrize(
    ("t0", "t1", "r0"),
    [(17, 9, 8), (13, 13, 0), (26, 0, 26), (9, 17, -8)],  # HE-4
)
def test_he4_results(t0: int, t1: int, r0: int) -> None:
    game = Humbug()
    state = game.new_episode(np.random.default_rng(0), deck=CANONICAL, dealer=1)
    state.tricks_won = [t0, t1]
    state.trick_number = 26
    rewards = game.end_deal(state)
    assert (rewards or [0.0, 0.0]) == [float(r0), float(-r0)]
    assert state.done


def _he5_state(mode: str):  # noqa: ANN202
    others = [c for c in range(52) if c not in parse_cards("7D KD")]
    n_hand = parse_cards("7D") + others[:25]
    d_hand = parse_cards("KD") + others[25:]
    assert len(n_hand) == len(d_hand) == 26
    game = Humbug(mode=mode)
    state = game.new_episode(np.random.default_rng(0), deck=deck_for(n_hand, d_hand), dealer=1)
    return game, state


@pytest.mark.parametrize("mode", ["hidden_hand", "open_table"])
def test_he5_observation(mode: str) -> None:
    game, state = _he5_state(mode)
    rng = np.random.default_rng()
    # study step: the non-dealer sees both original hands before his first card
    v0 = game.view(state, 0)
    assert v0.extra.initial_layout == (state.dealt[0], state.dealt[1])
    game.step(state, parse_card("7D"), rng)
    assert game.view(state, 0).extra.initial_layout is None
    assert game.view(state, 1).extra.initial_layout is not None  # the dealer has not played yet
    game.step(state, parse_card("KD"), rng)
    v = game.view(state, 1)
    assert v.hand.bit_count() == 25
    assert v.last_trick == ((0, parse_card("7D")), (1, parse_card("KD"))) and v.last_winner == 1
    assert v.tricks_won == (0, 1)
    assert v.extra.initial_layout is None
    if mode == "hidden_hand":
        assert v.known[0] == 0  # no opponent hand
        assert v.played == (0, 0) and v.voids == (0, 0)  # no history
    else:
        assert v.known[0] == state.hands[0] and v.known[0].bit_count() == 25
        assert v.played[0] == 1 << parse_card("7D")
    # after D leads trick 2, the last trick is gone
    game.step(state, cards_of(game.legal_mask(state))[0], rng)
    assert game.view(state, 1).last_trick == () and game.view(state, 0).last_trick == ()


def test_he6_series_balance_and_alternating_dealer() -> None:
    game = Humbug(num_deals=2)
    state = game.new_episode(np.random.default_rng(0), deck=CANONICAL, dealer=0)  # A = seat 0 deals
    state.tricks_won = [9, 17]
    state.trick_number = 26
    assert game.end_deal(state) == [-8.0, 8.0]  # B wins 17–9
    assert state.phase == PHASE_DEAL_END and state.scores == [-8, 8]
    game.next_deal(state, np.random.default_rng(1))
    assert state.dealer == 1 and state.to_act == 0  # dealer B, non-dealer A leads
    state.tricks_won = [15, 11]
    state.trick_number = 26
    assert game.end_deal(state) == [4.0, -4.0]
    assert state.scores == [-4, 4] and state.done  # balance B +4


def test_hidden_hand_forbids_history() -> None:
    with pytest.raises(OptionError, match="include_history=True is not allowed with mode='hidden_hand'"):
        Humbug(include_history=True)
    assert not Humbug().recall
    assert Humbug(mode="open_table").recall
    assert not Humbug(mode="open_table", include_history=False).recall


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"mode": "open"}, "choose one of 'hidden_hand', 'open_table'"),
        ({"num_deals": 0}, r"num_deals=0 is out of range"),
        ({"num_deals": 1.5}, "num_deals must be int"),
        ({"deals": 2}, "has no option 'deals'"),
    ],
)
def test_bad_options(options: dict[str, object], message: str) -> None:
    with pytest.raises(OptionError, match=message):
        Humbug(**options)  # type: ignore[arg-type]


def test_hidden_hand_observation_carries_no_history() -> None:
    """Two positions with the same hands and table but a different past encode identically (§3.3)."""
    from whist_env.games.humbug.encoding import HumbugEncoder
    from whist_env.testing import random_action

    game = Humbug()
    encoder = HumbugEncoder()
    rng = np.random.default_rng(5)
    checked = 0
    for _ in range(20):
        state = game.new_episode(rng)
        while not state.done:
            game.step(state, random_action(game.legal_mask(state), rng), rng)
            on_table = {c for _, c in state.trick + list(state.last_trick)}
            old0 = [c for c in cards_of(state.played[0]) if c not in on_table]
            old1 = [c for c in cards_of(state.played[1]) if c not in on_table]
            if state.done or not old0 or not old1 or state.trick_number < 3:
                continue
            a, b = old0[0], old1[-1]
            twin = state.copy()
            # seat 0 played b instead of a earlier, and seat 1 played a instead of b: same hands now
            twin.played[0] ^= (1 << a) | (1 << b)
            twin.played[1] ^= (1 << a) | (1 << b)
            twin.history = [(s, {a: b, b: a}.get(c, c)) for s, c in twin.history]
            for seat in (0, 1):
                assert np.array_equal(encoder.encode(game.view(state, seat)), encoder.encode(game.view(twin, seat)))
            checked += 1
    assert checked > 100
