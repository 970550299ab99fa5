"""RULES.md §5 (German Whist): test vectors GW-1 … GW-6, the variants, invariants and known cards."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from whist_env.cards import FULL_DECK, HEARTS, SUIT_MASKS, cards_of, format_cards, mask_of, parse_card, parse_cards
from whist_env.errors import IllegalActionError, OptionError
from whist_env.games.german_whist.rules import (
    PHASE1_TRICKS,
    GermanWhist,
    GermanWhistState,
    counted_tricks,
    deal_reward,
)
from whist_env.games.german_whist.spec import SPEC
from whist_env.rules.core import PHASE_PLAY
from whist_env.testing import play_random_episode, random_action

CANONICAL = list(range(52))
OPTION_GRID = [dict(o) for o in SPEC.option_grid]
GRID_IDS = [",".join(f"{k}={v}" for k, v in o.items()) or "default" for o in OPTION_GRID]


def deck_for(non_dealer: str, dealer: str, stock: str) -> list[int]:
    """RULES.md §5.1: non_dealer = deck[0:26:2], dealer = deck[1:26:2], stock = deck[26:52]."""
    nd, d, st = parse_cards(non_dealer), parse_cards(dealer), parse_cards(stock)
    assert len(nd) == len(d) == 13 and len(st) == 26
    deck = [0] * 52
    deck[0:26:2] = nd
    deck[1:26:2] = d
    deck[26:] = st
    return deck


def rest_of(*hands: str, first: str) -> str:
    """A stock: the cards ``first`` in that order, then every card in neither ``hands`` nor ``first``."""
    taken = mask_of(parse_cards(" ".join(hands) + " " + first))
    return first + " " + format_cards(FULL_DECK & ~taken)


def start(deck: list[int], dealer: int = 1, **options: Any) -> tuple[GermanWhist, GermanWhistState]:
    game = GermanWhist(**options)
    state = game.new_episode(np.random.default_rng(0), deck=deck, dealer=dealer)
    assert isinstance(state, GermanWhistState)
    return game, state


def play(game: GermanWhist, state: GermanWhistState, *cards: str) -> None:
    rng = np.random.default_rng(0)
    for c in cards:
        game.step(state, parse_card(c), rng)


# ----------------------------------------------------------------------------------- GW-1
def test_gw1_deal_and_stock() -> None:
    game, state = start(CANONICAL, dealer=1)
    assert cards_of(state.hands[0]) == parse_cards("2C 4C 6C 8C TC QC AC 3D 5D 7D 9D JD KD")
    assert cards_of(state.hands[1]) == parse_cards("3C 5C 7C 9C JC KC 2D 4D 6D 8D TD QD AD")
    assert state.turn_up == parse_card("2H") and state.trump == HEARTS
    assert game.view(state, 0).turn_up == game.view(state, 1).turn_up == parse_card("2H")
    assert state.to_act == 0 and state.leader == 0
    assert game.stock_size(state) == 26

    rng = np.random.default_rng(0)
    expected = {1: ("2H", "3H", "4H"), 7: ("AH", "2S", "3S"), 13: ("KS", "AS", None)}
    for k in range(1, PHASE1_TRICKS + 1):
        before = list(state.hands)
        while state.trick_number < k:
            game.step(state, cards_of(game.legal_mask(state))[0], rng)
        w = state.last_winner
        (s0, c0), (s1, c1) = state.last_trick
        took = state.hands[w] & ~before[w]
        drew = state.hands[1 - w] & ~before[1 - w]
        assert took == 1 << CANONICAL[24 + 2 * k] and drew == 1 << CANONICAL[25 + 2 * k]  # §5.2
        assert state.prizes[w] >> CANONICAL[24 + 2 * k] & 1 and state.draws[1 - w] >> CANONICAL[25 + 2 * k] & 1
        assert state.trump == HEARTS  # turned-up cards never change trump
        assert state.hands[0].bit_count() == state.hands[1].bit_count() == 13
        if k in expected:
            prize, hidden, face_up = expected[k]
            assert took == 1 << parse_card(prize) and drew == 1 << parse_card(hidden)
            assert state.turn_up == (parse_card(face_up) if face_up else -1)
        else:
            assert state.turn_up == CANONICAL[26 + 2 * k]
    assert game.stock_size(state) == 0 and state.turn_up == -1
    assert game.view(state, 0).extra.stage == 2
    assert state.to_act == state.last_winner  # §5.3 the winner of trick 13 leads trick 14


# ----------------------------------------------------------------------------------- GW-2, GW-3
GW2_DECK = deck_for(
    "TS 2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC",
    "KS 3S AH KH QH 2D 3D 4D 5D 6D 7D 8D 9D",
    rest_of("TS 2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC KS 3S AH KH QH 2D 3D 4D 5D 6D 7D 8D 9D", first="5H"),
)


@pytest.mark.parametrize(("reply", "winner"), [("KS", 1), ("3S", 0)])
def test_gw2_follow_suit_and_winner(reply: str, winner: int) -> None:
    game, state = start(GW2_DECK)
    assert state.trump == HEARTS
    play(game, state, "TS")
    assert game.legal_mask(state) == mask_of(parse_cards("KS 3S"))  # hearts are not allowed while holding spades
    with pytest.raises(IllegalActionError, match="seat 1 cannot play A♥: must follow spades; legal: 3♠ K♠"):
        play(game, state, "AH")
    play(game, state, reply)
    assert state.last_winner == winner


GW3_DECK = deck_for(
    "AC 2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS",
    "2H AD 3H 4H 5H 6H 7H 8H 9H KD QD JD TD",
    rest_of("AC 2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS 2H AD 3H 4H 5H 6H 7H 8H 9H KD QD JD TD", first="TH"),
)


@pytest.mark.parametrize(("reply", "winner"), [("2H", 1), ("AD", 0)])
def test_gw3_trump_wins_off_suit_loses(reply: str, winner: int) -> None:
    game, state = start(GW3_DECK)
    play(game, state, "AC")
    assert game.legal_mask(state) == state.hands[1]  # no clubs: anything goes
    play(game, state, reply)
    assert state.last_winner == winner


# ----------------------------------------------------------------------------------- GW-4
@pytest.mark.parametrize(
    ("phase1", "phase2", "count_all", "counted", "win"),
    [
        ((2, 11), (8, 5), False, (8, 5), 1.0),  # phase 1 does not matter
        ((11, 2), (5, 8), False, (5, 8), -1.0),
        ((6, 7), (8, 5), True, (14, 12), 1.0),
        ((5, 8), (8, 5), True, (13, 13), 0.0),  # a draw
    ],
)
def test_gw4_scoring(
    phase1: tuple[int, int], phase2: tuple[int, int], count_all: bool, counted: tuple[int, int], win: float
) -> None:
    assert counted_tricks(phase1, phase2, count_all) == counted
    assert deal_reward(counted, "win") == win
    assert deal_reward(counted, "trick_diff") == counted[0] - counted[1]
    for reward in ("win", "trick_diff"):
        game, state = start(CANONICAL, count_all_tricks=count_all, reward=reward)
        state.phase1_won = list(phase1)
        state.tricks_won = [phase1[0] + phase2[0], phase1[1] + phase2[1]]
        state.trick_number = 26
        r = deal_reward(counted, reward)
        assert game.end_deal(state) == ([r, -r] if r else None)
        assert state.done and state.returns == [r, -r]
        assert dict(state.deal_summary)["counted_tricks"] == counted
        assert dict(state.deal_summary)["winner"] == (0 if win > 0 else 1 if win < 0 else -1)


# ----------------------------------------------------------------------------------- GW-5
GW5_NON_DEALER = "TS AD KD QD JD TD 9D 8D 7D 6D 5D 4D AC"
GW5_DEALER = "KS 2H 9C 2D 3D 3H 4H 6H 7H 8H 9H TH JH"
GW5_DECK = deck_for(GW5_NON_DEALER, GW5_DEALER, rest_of(GW5_NON_DEALER, GW5_DEALER, first="5H 2C 3C 4C"))


def gw5_position(**options: Any) -> tuple[GermanWhist, GermanWhistState]:
    """Trick 3 (trump ♥), seat 0 has led TS; seat 1 holds KS (its only spade), 2H and 9C."""
    game, state = start(GW5_DECK, **options)
    play(game, state, "AD", "2D", "KD", "3D", "TS")
    assert state.trick_number == 2 and state.to_act == 1
    assert state.hands[1] & mask_of(parse_cards("KS 2H 9C")) == mask_of(parse_cards("KS 2H 9C"))
    assert state.hands[1] & SUIT_MASKS[3] == 1 << parse_card("KS")
    return game, state


@pytest.mark.parametrize(("reply", "winner"), [("9C", 0), ("2H", 1), ("KS", 1)])
def test_gw5_phase1_without_follow_suit(reply: str, winner: int) -> None:
    game, state = gw5_position(phase1_follow_suit=False)
    assert game.legal_mask(state) == state.hands[1]  # any card in tricks 1–13
    assert mask_of(parse_cards("KS 2H 9C")) & ~game.legal_mask(state) == 0
    play(game, state, reply)
    assert state.last_winner == winner  # §0.5: a non-trump off-suit card cannot win
    assert state.voids[1] == 0  # playing off-suit proves nothing when following is optional


def test_gw5_same_position_in_phase2_must_follow() -> None:
    game, state = gw5_position(phase1_follow_suit=False)
    later = state.copy()
    assert isinstance(later, GermanWhistState)
    later.trick_number = 14  # the same cards on the table in trick 15
    later.tricks_won = [14, 0]
    later.phase1_won = [13, 0]
    assert game.legal_mask(later) == 1 << parse_card("KS")
    with pytest.raises(IllegalActionError, match="must follow spades; legal: K♠"):
        game.step(later, parse_card("9C"), np.random.default_rng(0))


def test_gw5_base_rule_follows_in_phase1() -> None:
    game, state = gw5_position()
    assert game.legal_mask(state) == 1 << parse_card("KS")


# ----------------------------------------------------------------------------------- GW-6
def test_gw6_hidden_draw_is_private() -> None:
    game, state = start(CANONICAL, dealer=1)
    play(game, state, "AC", "3C")  # seat 1 must follow clubs and loses
    assert state.last_winner == 0
    three_h = parse_card("3H")
    v1 = game.view(state, 1)
    assert v1.hand >> three_h & 1 and v1.extra.my_draws == 1 << three_h  # private
    v0 = game.view(state, 0)
    assert v0.hand >> parse_card("2H") & 1 and v0.extra.prizes[0] == 1 << parse_card("2H")
    assert v0.extra.my_draws == 0 and v0.known[1] == 0
    assert v0.unseen >> three_h & 1  # seat 0 cannot place 3H
    assert v0.extra.opponent_draws == 1 and v0.extra.opponent_hand_size == 13
    assert v1.known[0] == 1 << parse_card("2H")  # the prize is public
    assert "3♥" not in game.render(state, 0) and "3♥" in game.render(state, 1)
    assert game.info(state, 0) == game.info(state, 1) | {"balance": 0}


# ----------------------------------------------------------------------------------- voids, recall
def test_void_from_showing_out_is_cleared_by_a_hidden_draw() -> None:
    game, state = start(GW3_DECK)
    play(game, state, "AC", "AD")  # seat 1 shows out of clubs and loses the trick
    assert state.last_winner == 0
    assert state.voids[1] == 0  # it drew a hidden card, which may be a club
    game, state = start(GW3_DECK)
    play(game, state, "AC", "2H")  # seat 1 shows out of clubs and wins: takes the face-up TH
    assert state.voids[1] == 1 << 0
    assert game.view(state, 0).voids[1] == 1 << 0


def test_without_recall_only_the_visible_exchange_is_known() -> None:
    game, state = start(CANONICAL, dealer=1, include_history=False)
    play(game, state, "AC", "3C")
    two_h, three_h = parse_card("2H"), parse_card("3H")
    assert game.view(state, 1).known[0] == 1 << two_h  # while the last trick is on the table
    assert game.view(state, 1).extra.my_draws == 1 << three_h
    play(game, state, "2C")  # the next lead clears the last trick
    assert game.view(state, 1).known[0] == 0
    assert game.view(state, 1).extra.my_draws == 0 and game.view(state, 1).played == (0, 0)


def test_perfect_recall_knows_the_whole_opponent_hand_once_the_stock_is_empty() -> None:
    game = GermanWhist()
    rng = np.random.default_rng(5)
    for _ in range(20):
        for state in play_random_episode(game, rng, check=False):
            if state.done:
                continue
            assert isinstance(state, GermanWhistState)
            for seat in (0, 1):
                v = game.view(state, seat)
                if state.trick_number >= PHASE1_TRICKS:
                    assert v.known[1 - seat] == state.hands[1 - seat] and v.unseen == 0
                else:
                    assert v.known[1 - seat] == state.hands[1 - seat] & state.prizes[1 - seat]


@pytest.mark.parametrize("options", OPTION_GRID, ids=GRID_IDS)
def test_known_cards_are_really_there(options: dict[str, Any]) -> None:
    game = GermanWhist(**options)
    rng = np.random.default_rng(17)
    for _ in range(100):
        for state in play_random_episode(game, rng, check=False):
            for seat in (0, 1):
                v = game.view(state, seat)
                assert v.known[seat] == state.hands[seat]
                assert v.known[1 - seat] & ~state.hands[1 - seat] == 0, "a card marked known is not there"
                assert v.unseen & (v.hand | v.known[1 - seat]) == 0
                for suit in range(4):
                    if v.voids[1 - seat] >> suit & 1:
                        assert not state.hands[1 - seat] & SUIT_MASKS[suit], "a proven void is not void"
                assert v.extra.my_draws & ~state.draws[seat] == 0


# ----------------------------------------------------------------------------------- no leak
def hidden_twin(game: GermanWhist, state: GermanWhistState, seat: int, rng: np.random.Generator) -> GermanWhistState:
    """A state ``seat`` cannot tell from ``state``: an opponent card it cannot place swapped with a
    face-down stock card, and the face-down part of the stock shuffled. None when nothing can move."""
    k = state.trick_number
    if k >= PHASE1_TRICKS or state.done:
        return None  # type: ignore[return-value]
    opp = 1 - seat
    view = game.view(state, seat)
    movable = cards_of(state.hands[opp] & view.unseen)
    below = list(state.stock[2 * k + 1 :])  # under the face-up card
    twin = state.copy()
    assert isinstance(twin, GermanWhistState)
    if movable:
        a = movable[int(rng.integers(len(movable)))]
        j = int(rng.integers(len(below)))
        b = below[j]
        below[j] = a
        twin.hands[opp] ^= (1 << a) | (1 << b)
        if twin.draws[opp] >> a & 1:
            twin.draws[opp] ^= (1 << a) | (1 << b)
        dealt = list(twin.dealt)
        if dealt[opp] >> a & 1:
            dealt[opp] ^= (1 << a) | (1 << b)
        twin.dealt = tuple(dealt)
    rng.shuffle(below)
    twin.stock = state.stock[: 2 * k + 1] + tuple(below)
    return twin


def assert_same_for(game: GermanWhist, seat: int, a: GermanWhistState, b: GermanWhistState) -> None:
    from whist_env.german_whist_v0 import raw_env

    enc = raw_env.make_encoder(game)
    va, vb = game.view(a, seat), game.view(b, seat)
    oa, ob = enc.encode(va), enc.encode(vb)
    assert np.array_equal(oa, ob), "the observation depends on hidden cards"
    assert enc.describe(oa) == enc.describe(ob)
    assert game.render(a, seat) == game.render(b, seat)
    assert game.info(a, seat) == game.info(b, seat)
    assert va.legal == vb.legal and va.extra == vb.extra and va.known == vb.known


def test_loser_hidden_draw_never_reaches_the_winner() -> None:
    rng = np.random.default_rng(9)
    for trial in range(200):
        deck = rng.permutation(52).tolist()
        other = deck.copy()
        m = int(rng.integers(29, 52))  # anywhere below the new face-up card deck[28]
        other[27], other[m] = other[m], other[27]
        game = GermanWhist(**OPTION_GRID[trial % len(OPTION_GRID)])
        states = []
        for d in (deck, other):
            st = game.new_episode(np.random.default_rng(0), deck=d, dealer=trial % 2)
            states.append(st)
        a, b = states
        first = random_action(game.legal_mask(a), rng)
        for st in (a, b):
            game.step(st, first, rng)
        reply = random_action(game.legal_mask(a), rng)
        for st in (a, b):
            game.step(st, reply, rng)
        winner = a.last_winner
        assert b.last_winner == winner and a.hands[1 - winner] != b.hands[1 - winner]
        assert isinstance(a, GermanWhistState) and isinstance(b, GermanWhistState)
        assert_same_for(game, winner, a, b)
        assert not np.array_equal(raw_encode(game, a, 1 - winner), raw_encode(game, b, 1 - winner)), (
            "the loser sees its own draw"
        )


def raw_encode(game: GermanWhist, state: GermanWhistState, seat: int) -> np.ndarray:
    from whist_env.german_whist_v0 import raw_env

    return raw_env.make_encoder(game).encode(game.view(state, seat))


@pytest.mark.parametrize("options", OPTION_GRID, ids=GRID_IDS)
def test_no_leak_of_stock_or_hidden_draws(options: dict[str, Any]) -> None:
    game = GermanWhist(**options)
    rng = np.random.default_rng(23)
    twins = 0
    for _ in range(30):
        for state in play_random_episode(game, rng, check=False):
            assert isinstance(state, GermanWhistState)
            for seat in (0, 1):
                twin = hidden_twin(game, state, seat, rng)
                if twin is not None:
                    assert_same_for(game, seat, state, twin)
                    twins += 1
    assert twins > 0


# ----------------------------------------------------------------------------------- invariants
def assert_deal_shape(game: GermanWhist, states: list[GermanWhistState]) -> None:
    """13 cards each before every trick, the stock shrinks by two per phase-1 trick, 13 phase-2 tricks."""
    last = None
    for state in states:
        k = state.trick_number
        if state.phase == PHASE_PLAY and not state.trick:
            size = 13 if k <= PHASE1_TRICKS else 26 - k
            assert state.hands[0].bit_count() == state.hands[1].bit_count() == size
            assert game.stock_size(state) == (26 - 2 * k if k < PHASE1_TRICKS else 0)
        last = state
    assert last is not None and last.done


@pytest.mark.slow
@pytest.mark.parametrize("options", OPTION_GRID, ids=GRID_IDS)
def test_invariants_after_every_action_over_2000_games(options: dict[str, Any]) -> None:
    game = GermanWhist(**options)
    rng = np.random.default_rng(2025)
    deals = 0
    for _ in range(2000):
        played_all = 0
        for state in play_random_episode(game, rng):  # check_invariants after every action
            assert isinstance(state, GermanWhistState)
            k = state.trick_number
            if state.phase == PHASE_PLAY and not state.trick:
                size = 13 if k <= PHASE1_TRICKS else 26 - k
                assert state.hands[0].bit_count() == state.hands[1].bit_count() == size
                assert game.stock_size(state) == (26 - 2 * k if k < PHASE1_TRICKS else 0)
            if k == 26 or state.done:
                played_all = state.played[0] | state.played[1]
            for seat in (0, 1):
                known = game.known_cards(state, seat)[1 - seat]
                assert known & ~state.hands[1 - seat] == 0
        assert state.done and played_all == FULL_DECK
        summary = dict(state.deal_summary)
        assert sum(summary["phase2_tricks"]) == 13 and sum(summary["phase1_tricks"]) == 13
        assert state.returns[0] == -state.returns[1]
        deals += state.deal_index + 1
    assert deals == 2000 * game.config.num_deals


def test_a_short_run_of_random_games_keeps_the_invariants() -> None:
    for options in OPTION_GRID:
        game = GermanWhist(**options)
        rng = np.random.default_rng(1)
        for _ in range(10):
            states = [s.copy() for s in play_random_episode(game, rng)]
            assert_deal_shape(game, states)  # type: ignore[arg-type]


# ----------------------------------------------------------------------------------- series, options
def test_series_alternates_dealer_and_pays_each_deal() -> None:
    game = GermanWhist(num_deals=3, reward="trick_diff")
    rng = np.random.default_rng(4)
    state = game.new_episode(rng, dealer=0)
    dealers, paid = [state.dealer], [0.0, 0.0]
    while not state.done:
        rewards = game.step(state, random_action(game.legal_mask(state), rng), rng)
        if rewards is not None:
            paid = [paid[0] + rewards[0], paid[1] + rewards[1]]
            if not state.done:
                dealers.append(state.dealer)
                assert state.to_act == 1 - state.dealer  # the non-dealer leads trick 1
    assert dealers == [0, 1, 0]
    assert paid == state.returns and state.scores == [int(paid[0]), int(paid[1])]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"reward": "points"}, "reward='points' is not allowed; choose one of 'win', 'trick_diff'"),
        ({"num_deals": 0}, "num_deals=0 is out of range; allowed 1..10000"),
        ({"num_deals": 2.0}, "num_deals must be int"),
        ({"phase1_follow_suit": "no"}, "phase1_follow_suit must be bool"),
        ({"count_all_tricks": 1}, "count_all_tricks must be bool"),
        ({"include_history": None}, "include_history must be bool"),
        ({"follow_suit": False}, "german_whist_v0 has no option 'follow_suit'. Allowed options: phase1_follow_suit"),
    ],
)
def test_bad_options(options: dict[str, Any], message: str) -> None:
    with pytest.raises(OptionError, match=message):
        GermanWhist(**options)


def test_first_dealer_and_deck_come_from_the_generator() -> None:
    a = GermanWhist().new_episode(np.random.default_rng(42))
    b = GermanWhist().new_episode(np.random.default_rng(42))
    assert a.dealer == b.dealer and a.hands == b.hands and a.stock == b.stock  # type: ignore[attr-defined]
    rng = np.random.default_rng(42)
    dealer = int(rng.integers(2))
    deck = rng.permutation(52).tolist()
    assert a.dealer == dealer and a.stock == tuple(deck[26:])  # type: ignore[attr-defined]
