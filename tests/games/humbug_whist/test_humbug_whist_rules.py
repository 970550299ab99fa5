"""RULES.md §1 (Swedish Humbug whist): test vectors SE-1 … SE-7, the exchange phase, information, invariants."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from whist_env.cards import FULL_DECK, HEARTS, SPADES, cards_of, format_cards, mask_of, parse_card, parse_cards
from whist_env.errors import IllegalActionError, OptionError
from whist_env.games.humbug_whist.encoding import HumbugWhistEncoder
from whist_env.games.humbug_whist.rules import (
    EXCHANGE,
    KEEP,
    HumbugWhist,
    HumbugWhistState,
    score_deal,
)
from whist_env.rules.core import PHASE_DEAL_END, PHASE_EXCHANGE, PHASE_PLAY
from whist_env.rules.scoring import game_value, honour_points, honours_in, rubber_margin
from whist_env.rules.tricks import legal_cards, trick_winner
from whist_env.testing import random_action

CANONICAL = list(range(52))
POSITIONS = "LNRD"  # RULES.md §1.3: deck[i] → [L, N, R, D][i % 4]


def deck_for(hands: dict[str, str]) -> list[int]:
    """The deck that deals the four given 13-card hands; the last card of ``D`` is the turn-up."""
    cards = {p: parse_cards(hands[p]) for p in POSITIONS}
    return [cards[POSITIONS[i % 4]][i // 4] for i in range(52)]


def fill(partial: dict[str, str], turn_up: str) -> dict[str, str]:
    """Complete partial hands to 13 cards each, dealing the unused cards round the four hands; ``turn_up`` ends D's."""
    t = parse_card(turn_up)
    used = {c for h in partial.values() for c in parse_cards(h)} | {t}
    rest = [c for c in range(52) if c not in used]
    hands = {p: [c for c in parse_cards(partial.get(p, "")) if c != t] for p in POSITIONS}
    i = 0
    while rest:
        p = POSITIONS[i % 4]
        if len(hands[p]) < (12 if p == "D" else 13):
            hands[p].append(rest.pop(0))
        i += 1
    return {p: format_cards(hands[p] + [t] if p == "D" else hands[p]) for p in POSITIONS}


def new(
    deck: list[int] | None = None, dealer: int = 0, seed: int = 0, **options: Any
) -> tuple[HumbugWhist, HumbugWhistState]:
    game = HumbugWhist(**options)
    state = game.new_episode(np.random.default_rng(seed), deck=deck, dealer=dealer)
    assert isinstance(state, HumbugWhistState)
    game.check_invariants(state)
    return game, state


def play_deal(game: HumbugWhist, state: HumbugWhistState, rng: np.random.Generator) -> tuple[dict[str, Any], list[int]]:
    """Play random legal cards to the end of the current deal; the deal's summary and the cards played."""
    deal, played = state.deal_index, []
    while state.deal_index == deal and not state.done:
        action = random_action(game.legal_mask(state), rng)
        played.append(action)
        game.step(state, action, rng)
        game.check_invariants(state)
    return dict(state.deal_summary), played


# ----------------------------------------------------------------------------- SE-1 deal layout
@pytest.mark.parametrize("dealer", [0, 1])
def test_se1_deal_layout(dealer: int) -> None:
    game, state = new(CANONICAL, dealer=dealer)
    d, n = dealer, 1 - dealer
    layout = {
        "L": "2C 6C TC AC 5D 9D KD 4H 8H QH 3S 7S JS",
        "N": "3C 7C JC 2D 6D TD AD 5H 9H KH 4S 8S QS",
        "R": "4C 8C QC 3D 7D JD 2H 6H TH AH 5S 9S KS",
        "D": "5C 9C KC 4D 8D QD 3H 7H JH 2S 6S TS AS",
    }
    assert format_cards(state.hands[n]) == layout["N"]
    assert format_cards(state.hands[d]) == layout["D"]
    assert format_cards(state.blinds[n]) == layout["L"]  # §1.1 exchange_blind[N] = L
    assert format_cards(state.blinds[d]) == layout["R"]  # §1.1 exchange_blind[D] = R
    assert state.turn_up == parse_card("AS") and state.trump == SPADES and state.turn_up_public
    assert state.phase == PHASE_EXCHANGE and state.to_act == n  # §1.4 the non-dealer decides first
    # each of the four hands holds exactly one ♠ honour (J, Q, K, A)
    for p, hand in layout.items():
        assert honours_in(mask_of(parse_cards(hand)), SPADES) == 1, p


@pytest.mark.parametrize("n_choice", [KEEP, EXCHANGE])
@pytest.mark.parametrize("d_choice", [KEEP, EXCHANGE])
def test_se1_exchanges_and_no_honours_whatever_the_decisions(n_choice: int, d_choice: int) -> None:
    game, state = new(CANONICAL, dealer=0)
    rng = np.random.default_rng(n_choice * 100 + d_choice)
    game.step(state, n_choice, rng)
    game.step(state, d_choice, rng)
    game.check_invariants(state)
    n_hand = (
        "2C 6C TC AC 5D 9D KD 4H 8H QH 3S 7S JS" if n_choice == EXCHANGE else "3C 7C JC 2D 6D TD AD 5H 9H KH 4S 8S QS"
    )
    d_hand = (
        "4C 8C QC 3D 7D JD 2H 6H TH AH 5S 9S KS" if d_choice == EXCHANGE else "5C 9C KC 4D 8D QD 3H 7H JH 2S 6S TS AS"
    )
    assert format_cards(state.hands[1]) == n_hand
    assert format_cards(state.hands[0]) == d_hand
    assert state.trump == SPADES  # trump stays even when AS went out
    if d_choice == EXCHANGE:
        assert (state.put_away[0] >> parse_card("AS")) & 1 and not state.turn_up_public
    assert state.phase == PHASE_PLAY and state.to_act == 0 and state.leader == 0  # §1.5 the dealer leads
    summary, played = play_deal(game, state, rng)
    assert len(played) == 26 and summary["honours"] == (0, 0)
    assert summary["exchanges"] == (
        "EXCHANGE" if d_choice == EXCHANGE else "KEEP",
        "EXCHANGE" if n_choice == EXCHANGE else "KEEP",
    )


# ----------------------------------------------------------------------------- SE-2 exchange and honours
SE2 = fill({"D": "AH KH", "R": "QH"}, turn_up="JH")


@pytest.mark.parametrize("dealer", [0, 1])
def test_se2_dealer_keeps_and_counts_the_turn_up(dealer: int) -> None:
    game, state = new(deck_for(SE2), dealer=dealer)
    rng = np.random.default_rng(3)
    assert state.trump == HEARTS and state.turn_up == parse_card("JH")
    assert honours_in(state.hands[dealer], HEARTS) == 3 and honours_in(state.blinds[dealer], HEARTS) == 1
    game.step(state, KEEP, rng)
    game.step(state, KEEP, rng)
    summary, _ = play_deal(game, state, rng)
    winner_tricks = max(summary["tricks"])
    assert winner_tricks < 11  # so the game did not end on tricks and honours were counted
    expected = [0, 0]
    expected[dealer] = 2  # 3 honours → +2
    assert summary["honours"] == tuple(expected)


@pytest.mark.parametrize("dealer", [0, 1])
def test_se2_dealer_exchanges_and_loses_the_turn_up(dealer: int) -> None:
    game, state = new(deck_for(SE2), dealer=dealer)
    rng = np.random.default_rng(4)
    game.step(state, KEEP, rng)
    game.step(state, EXCHANGE, rng)
    jh = parse_card("JH")
    assert state.trump == HEARTS and not state.turn_up_public
    assert (state.put_away[dealer] >> jh) & 1 and not any((h >> jh) & 1 for h in state.hands)
    assert honours_in(state.hands[dealer], HEARTS) == 1
    summary, played = play_deal(game, state, rng)
    assert jh not in played and len(played) == 26  # out of play for the deal
    assert max(summary["tricks"]) < 11 and summary["honours"] == (0, 0)  # 1 honour → 0


# ----------------------------------------------------------------------------- SE-3 legal moves, trick winner
def test_se3_legal_moves_and_trick_winners() -> None:
    seven_d = parse_card("7D")
    led = seven_d // 13
    assert cards_of(legal_cards(mask_of(parse_cards("KD 2D AS 3C")), led)) == sorted(parse_cards("KD 2D"))
    assert cards_of(legal_cards(mask_of(parse_cards("AS 3C 5H")), led)) == sorted(parse_cards("AS 3C 5H"))
    for lead, follow, winner in (("7D", "2S", 1), ("7D", "AC", 0), ("5S", "AS", 1), ("7D", "KD", 1)):
        assert trick_winner([(0, parse_card(lead)), (1, parse_card(follow))], SPADES) == winner


def test_se3_in_a_deal() -> None:
    # trump ♠; D holds 7D; N holds KD 2D as its only diamonds, and AS 3C
    hands = fill({"D": "7D 5S", "N": "KD 2D 3C 2S", "L": "3D 4D 5D 6D 8D 9D TD JD QD AD", "R": "AS"}, "TS")
    game, state = new(deck_for(hands), dealer=0)
    rng = np.random.default_rng(0)
    game.step(state, KEEP, rng)
    game.step(state, KEEP, rng)
    game.step(state, parse_card("7D"), rng)
    assert game.legal_actions(state) == sorted(parse_cards("KD 2D"))
    with pytest.raises(IllegalActionError, match=r"seat 1 cannot play 2♠: must follow diamonds; legal: 2♦ K♦"):
        game.step(state, parse_card("2S"), rng)
    game.step(state, parse_card("KD"), rng)
    assert state.last_winner == 1 and state.to_act == 1  # follower wins with the higher diamond, leads next


# ----------------------------------------------------------------------------- SE-4 … SE-7 scoring
def test_se4_full_rubber_scoring_function() -> None:
    a, b = 0, 1
    # Game 1, deal 1: A takes 9 → A 3. B holds 3 honours → B 2.
    s = score_deal((0, 0), (0, 0), (9, 4), (0, 3))
    assert s.trick_points == (3, 0) and s.honours == (0, 2) and s.game_points == (3, 2) and s.game_winner == -1
    # Game 1, deal 2: B takes 8 → B 4; honours counted; A holds 4 → A 7; A has trick points → A wins, worth 1.
    s = score_deal(s.game_points, s.trick_points_in_game, (5, 8), (4, 0))
    assert s.trick_points == (0, 2) and s.honours == (4, 0) and s.game_points == (7, 4)
    assert s.game_winner == a and s.game_value == 1
    # Game 2, deal 3: B takes 7 → B 1. A holds 4 honours → A 4 (honours only).
    s = score_deal((0, 0), (0, 0), (6, 7), (4, 0))
    assert s.game_points == (4, 1) and s.trick_points_in_game == (0, 1) and s.game_winner == -1
    # Game 2, deal 4: A takes 8 → A 6 on trick points → A wins game 2; B has 1 → worth 2.
    s = score_deal(s.game_points, s.trick_points_in_game, (8, 5), (0, 0))
    assert s.game_points == (6, 1) and s.game_winner == a and s.game_value == 2
    assert rubber_margin((1, 2), ()) == 5 and b == 1


def finish_deal(
    game: HumbugWhist, state: HumbugWhistState, tricks: tuple[int, int], honours: tuple[int, int]
) -> list[float] | None:
    """End the current deal as if played: ``tricks`` taken and ``honours`` trump honours in each played hand."""
    trump = state.trump
    assert trump is not None
    hon = [parse_card(r + "CDHS"[trump]) for r in "AKQJ"]
    others = [c for c in range(52) if c not in hon]
    played = [0, 0]
    for seat in (0, 1):
        cards = hon[: honours[seat]] if seat == 0 else hon[honours[0] : honours[0] + honours[1]]
        while len(cards) < 13:
            cards.append(others.pop())
        played[seat] = mask_of(cards)
    state.hands = [0, 0]
    state.played = played
    state.blinds = [FULL_DECK & ~played[0] & ~played[1], 0]  # the rest; only invariants look at it
    state.put_away = [0, 0]
    state.decisions = [0, 0]
    state.phase = PHASE_PLAY
    state.tricks_won = list(tricks)
    state.trick_number = 13
    return game.end_deal(state)


def drive(
    deals: list[tuple[tuple[int, int], tuple[int, int]]], **options: Any
) -> tuple[HumbugWhistState, list[dict[str, Any]], list[Any]]:
    """Score a sequence of deals through ``end_deal`` (the engine's path); summaries and rewards per deal."""
    game, state = new(CANONICAL, dealer=0, **options)
    rng = np.random.default_rng(0)
    summaries, rewards = [], []
    for tricks, honours in deals:
        assert not state.done
        dealer = state.dealer
        rewards.append(finish_deal(game, state, tricks, honours))
        summaries.append(dict(state.deal_summary))
        if state.phase == PHASE_DEAL_END:
            game.next_deal(state, rng)
            assert state.dealer == 1 - dealer  # §1.2 alternates every deal, across games too
            game.check_invariants(state)
    return state, summaries, rewards


def test_se4_full_rubber_through_the_engine() -> None:
    state, s, rewards = drive([((9, 4), (0, 3)), ((5, 8), (4, 0)), ((6, 7), (4, 0)), ((8, 5), (0, 0))])
    assert s[0]["game_points"] == (3, 2) and s[0]["honours"] == (0, 2) and "game_winner" not in s[0]
    assert s[1]["game_points"] == (7, 4) and s[1]["game_winner"] == 0 and s[1]["game_value"] == 1
    assert s[2]["game_points"] == (4, 1) and s[2]["honours"] == (4, 0) and "game_winner" not in s[2]
    assert s[3]["game_points"] == (6, 1) and s[3]["game_winner"] == 0 and s[3]["game_value"] == 2
    assert s[3]["rubber_winner"] == 0 and s[3]["rubber_margin"] == 5
    assert state.rubber_points == [5, 0] and state.games_won == [2, 0] and state.game_values == [(1, 2), ()]
    assert rewards == [None, None, None, [5.0, -5.0]] and state.done and state.returns == [5.0, -5.0]
    assert state.game_points == [0, 0] and state.trick_points == [0, 0]


def test_se5_trick_points_before_honours() -> None:
    # A 3 (with trick points), B 4. B takes 7 → B 5 → B wins at once; A's 4 honours score nothing.
    s = score_deal((3, 4), (3, 2), (6, 7), (4, 0))
    assert s.honours == (0, 0) and s.game_points == (3, 5) and s.game_winner == 1 and s.game_value == 1
    assert 3 + honour_points(4) == 7  # if honours had been counted first, A would have had 7
    # through the engine: A 9 tricks → 3; B 7 tricks + 3 honours → 3; B 7 → 4; then the deal of SE-5
    state, summaries, rewards = drive(
        [((9, 4), (0, 0)), ((6, 7), (0, 3)), ((6, 7), (0, 0)), ((6, 7), (4, 0))], episode="game"
    )
    assert [x["game_points"] for x in summaries[:3]] == [(3, 0), (3, 3), (3, 4)]
    assert summaries[3]["honours"] == (0, 0) and summaries[3]["game_points"] == (3, 5)
    assert summaries[3]["game_winner"] == 1 and summaries[3]["game_value"] == 1 and rewards[3] == [-1.0, 1.0]


def test_se6_no_game_on_honours_alone() -> None:
    # A 4 (all honours), B 2. B takes 7 → B 3; A holds 3 honours → A 6 with no trick points → the game goes on.
    s = score_deal((4, 2), (0, 2), (6, 7), (3, 0))
    assert s.game_points == (6, 3) and s.trick_points_in_game == (0, 3) and s.game_winner == -1
    # next deal: A takes 7 → A 7 → A wins; B has 3 → value 1
    s = score_deal(s.game_points, s.trick_points_in_game, (7, 6), (0, 0))
    assert s.game_points == (7, 3) and s.game_winner == 0 and s.game_value == 1
    # contrast: A 2 (all trick points), B 0. B takes 7 → B 1. A holds 4 honours → A 6 → A wins, value 2.
    s = score_deal((2, 0), (2, 0), (6, 7), (4, 0))
    assert s.game_points == (6, 1) and s.game_winner == 0 and s.game_value == 2
    # through the engine: A 4 on honours, B 2; then the two deals above
    state, summaries, rewards = drive([((5, 8), (4, 0)), ((6, 7), (3, 0)), ((7, 6), (0, 0))], episode="game")
    assert summaries[0]["game_points"] == (4, 2)
    assert summaries[1]["game_points"] == (6, 3) and "game_winner" not in summaries[1] and rewards[1] is None
    assert summaries[2]["game_points"] == (7, 3) and summaries[2]["game_value"] == 1 and rewards[2] == [1.0, -1.0]
    state, summaries, rewards = drive([((8, 5), (0, 0)), ((6, 7), (4, 0))], episode="game")
    assert summaries[1]["game_points"] == (6, 1) and summaries[1]["game_winner"] == 0 and rewards[1] == [2.0, -2.0]


@pytest.mark.parametrize(
    ("deals", "values", "margin"),
    [
        # minimum: A wins 5–3 and 5–4 (1 + 1) + 2 = 4; B won 5–0 = 3 → 1
        (
            [((4, 9), (0, 0)), ((11, 2), (0, 0)), ((2, 11), (0, 0)), ((3, 10), (0, 0)), ((11, 2), (0, 0))],
            [(1, 1), (3,)],
            1,
        ),
        # maximum: 5–0, 5–0 → 3 + 3 + 2 = 8
        ([((11, 2), (0, 0)), ((12, 1), (0, 0))], [(3, 3), ()], 8),
        # mixed: A 5–2 (2), B 5–1 (2), A 5–0 (3) → 7 − 2 = 5
        (
            [((5, 8), (0, 0)), ((11, 2), (0, 0)), ((7, 6), (0, 0)), ((2, 11), (0, 0)), ((11, 2), (0, 0))],
            [(2, 3), (2,)],
            5,
        ),
    ],
)
def test_se7_rubber_bounds(deals: list[Any], values: list[tuple[int, ...]], margin: int) -> None:
    assert rubber_margin(values[0], values[1]) == margin
    state, summaries, rewards = drive(deals)
    assert state.done and state.game_values == [values[0], values[1]]
    assert summaries[-1]["rubber_winner"] == 0 and summaries[-1]["rubber_margin"] == margin
    assert rewards[-1] == [float(margin), float(-margin)] and all(r is None for r in rewards[:-1])
    assert state.rubber_points == [sum(values[0]) + 2, sum(values[1])]


def test_se7_edge_loser_on_honours_only() -> None:
    # A 6 on honours only when B takes 8 from 3 → B wins; the game is worth 1 [DESIGN]
    assert game_value(6) == 1
    s = score_deal((6, 3), (0, 3), (5, 8), (0, 0))
    assert s.game_points == (6, 5) and s.game_winner == 1 and s.game_value == 1
    state, summaries, rewards = drive([((5, 8), (4, 0)), ((6, 7), (3, 0)), ((5, 8), (0, 0))], episode="game")
    assert summaries[1]["game_points"] == (6, 3) and "game_winner" not in summaries[1]
    assert summaries[2]["game_winner"] == 1 and summaries[2]["game_value"] == 1 and rewards[2] == [-1.0, 1.0]


def test_deal_episode_rewards_are_the_trick_difference() -> None:
    state, summaries, rewards = drive([((9, 4), (0, 3))], episode="deal")
    assert state.done and rewards == [[5.0, -5.0]] and summaries[0]["game_points"] == (3, 2)


# ----------------------------------------------------------------------------- exchange phase
def test_exchange_phase_actions_and_errors() -> None:
    game, state = new(CANONICAL, dealer=1)
    rng = np.random.default_rng(0)
    assert game.legal_actions(state) == [KEEP, EXCHANGE] and game.num_actions == 54
    assert game.describe_action(KEEP) == "KEEP" and game.describe_action(EXCHANGE) == "EXCHANGE"
    with pytest.raises(
        IllegalActionError, match=r"seat 0 cannot play 2♣: in the exchange phase .*; legal: KEEP EXCHANGE"
    ):
        game.step(state, 0, rng)
    game.step(state, KEEP, rng)
    assert state.to_act == 1 and state.phase == PHASE_EXCHANGE
    game.step(state, KEEP, rng)
    assert state.phase == PHASE_PLAY and state.to_act == 1
    with pytest.raises(IllegalActionError, match="not in the hand"):
        game.step(state, EXCHANGE, rng)


def test_options_are_validated() -> None:
    with pytest.raises(OptionError, match="exchange_order='random' is not allowed"):
        HumbugWhist(exchange_order="random")
    with pytest.raises(OptionError, match="episode='match' is not allowed"):
        HumbugWhist(episode="match")
    with pytest.raises(OptionError, match="include_history must be bool"):
        HumbugWhist(include_history=1)


def test_nondealer_decision_is_public_at_once() -> None:
    game, state = new(CANONICAL, dealer=0)
    rng = np.random.default_rng(0)
    game.step(state, EXCHANGE, rng)
    assert format_cards(state.hands[1]) == "2C 6C TC AC 5D 9D KD 4H 8H QH 3S 7S JS"  # L at once
    assert game.view(state, 0).extra.exchange == (-1, 1)
    assert game.view(state, 1).extra.exchange == (1, -1)


def test_simultaneous_hides_the_nondealer_decision_until_both_decided() -> None:
    enc = HumbugWhistEncoder()
    seen: dict[int, tuple[Any, ...]] = {}
    for choice in (KEEP, EXCHANGE):
        game, state = new(CANONICAL, dealer=0, exchange_order="simultaneous")
        rng = np.random.default_rng(0)
        game.step(state, choice, rng)
        game.check_invariants(state)
        assert format_cards(state.hands[1]) == "3C 7C JC 2D 6D TD AD 5H 9H KH 4S 8S QS"  # not applied yet
        view = game.view(state, 0)
        assert view.extra.exchange == (-1, -1)
        assert game.view(state, 1).extra.exchange == (choice - KEEP, -1)  # a seat knows its own choice
        seen[choice] = (enc.encode(view).tobytes(), view.legal, game.render(state, 0), game.info(state, 0))
        game.step(state, KEEP, rng)
        game.check_invariants(state)
        assert game.view(state, 0).extra.exchange == (0, choice - KEEP)  # both applied and public now
        n_hand = "2C 6C TC AC" if choice == EXCHANGE else "3C 7C JC 2D"
        assert format_cards(state.hands[1]).startswith(n_hand)
    assert seen[KEEP] == seen[EXCHANGE]


@pytest.mark.parametrize("history", [True, False])
def test_dealer_exchange_discards_the_turn_up(history: bool) -> None:
    game, state = new(CANONICAL, dealer=0, include_history=history)
    rng = np.random.default_rng(0)
    a_s = parse_card("AS")
    game.step(state, KEEP, rng)
    v = game.view(state, 1)
    assert v.turn_up == a_s and v.extra.turn_up_status == "face_up" and v.known[0] == 1 << a_s
    game.step(state, EXCHANGE, rng)
    game.check_invariants(state)
    for seat in (0, 1):
        v = game.view(state, seat)
        assert v.turn_up == -1 and v.trump == SPADES and v.extra.turn_up_status == "discarded"
        assert v.extra.exchange == ((1, 0) if seat == 0 else (0, 1))
        assert not (v.known[0] >> a_s) & 1
        assert v.extra.discarded_turn_up == (a_s if history else -1)
        assert bool((v.unseen >> a_s) & 1) != history  # known to be out of play (with memory)
    v0 = game.view(state, 0)
    assert v0.extra.put_away == (mask_of(parse_cards("5C 9C KC 4D 8D QD 3H 7H JH 2S 6S TS AS")) if history else 0)
    assert v0.unseen & state.put_away[0] == (0 if history else state.put_away[0])
    # the non-dealer knows nothing of the dealer's old hand but the turn-up
    v1 = game.view(state, 1)
    assert v1.unseen & state.put_away[0] == state.put_away[0] & ~(1 << a_s if history else 0)


def test_kept_turn_up_is_public_until_the_dealer_plays() -> None:
    game, state = new(CANONICAL, dealer=1)
    rng = np.random.default_rng(0)
    a_s = parse_card("AS")
    game.step(state, KEEP, rng)
    game.step(state, KEEP, rng)
    assert game.view(state, 0).turn_up == a_s and game.view(state, 0).known[1] == 1 << a_s
    game.step(state, parse_card("2S"), rng)  # the dealer (seat 1) leads
    v = game.view(state, 0)
    assert v.turn_up == -1 and v.extra.turn_up_status == "taken_up" and v.known[1] == 1 << a_s


def test_view_shows_scores_for_both_seats_relative() -> None:
    state, _, _ = drive([((9, 4), (0, 3)), ((5, 8), (4, 0)), ((6, 7), (0, 0))])
    game = HumbugWhist()
    e0, e1 = game.view(state, 0).extra, game.view(state, 1).extra
    assert e0.game_points == (0, 1) and e1.game_points == (1, 0)
    assert e0.trick_points == (0, 1) and e0.games_won == (1, 0) and e1.rubber_points == (0, 1)
    info = game.info(state, 1)
    assert info["game_points"] == (0, 1) and info["games_won"] == (1, 0) and info["rubber_points"] == (1, 0)


# ----------------------------------------------------------------------------- no leaks of the blinds
def _hidden_out_of_play(state: HumbugWhistState, seat: int) -> list[int]:
    """Masks of cards out of play that ``seat`` never held: untaken blinds, the opponent's put-away hand."""
    sets = [state.blinds[0], state.blinds[1], state.put_away[1 - seat] & ~(1 << state.turn_up)]
    return [m for m in sets if m]


@pytest.mark.parametrize("options", [{}, {"exchange_order": "simultaneous"}, {"include_history": False}])
def test_blind_cards_never_reach_a_seat(options: dict[str, Any]) -> None:
    game = HumbugWhist(**options)
    enc = HumbugWhistEncoder()
    rng = np.random.default_rng(17)
    swaps = 0
    for _ in range(30):
        state = game.new_episode(rng)
        while not state.done and state.deal_index < 2:
            assert isinstance(state, HumbugWhistState)
            for seat in (0, 1):
                view = game.view(state, seat)
                sets = [m & view.unseen for m in _hidden_out_of_play(state, seat)]
                sets = [m for m in sets if m]
                opp_hand = state.hands[1 - seat] & view.unseen
                pool = sets + ([opp_hand] if opp_hand and sets else [])
                if len(pool) < 2:
                    continue
                a = cards_of(pool[0])[int(rng.integers(pool[0].bit_count()))]
                b = cards_of(pool[-1])[int(rng.integers(pool[-1].bit_count()))]
                twin = state.copy()
                assert isinstance(twin, HumbugWhistState)
                swap = (1 << a) | (1 << b)
                for field in ("hands", "blinds", "put_away"):
                    masks = getattr(twin, field)
                    setattr(twin, field, [m ^ swap if (m & swap).bit_count() == 1 else m for m in masks])
                twin.dealt = tuple(m ^ swap if (m & swap).bit_count() == 1 else m for m in twin.dealt)
                game.check_invariants(twin)
                other = game.view(twin, seat)
                assert np.array_equal(enc.encode(view), enc.encode(other)), "a blind's cards show"
                assert other.legal == view.legal and other.extra == view.extra
                assert enc.describe(enc.encode(other)) == enc.describe(enc.encode(view))
                assert game.render(twin, seat) == game.render(state, seat)
                assert game.info(twin, seat) == game.info(state, seat)
                swaps += 1
            game.step(state, random_action(game.legal_mask(state), rng), rng)
    assert swaps > 500


# ----------------------------------------------------------------------------- invariants over many rubbers
def run_rubbers(count: int, seed: int, **options: Any) -> list[float]:
    game = HumbugWhist(**options)
    rng = np.random.default_rng(seed)
    results = []
    for _ in range(count):
        state = game.new_episode(rng)
        assert isinstance(state, HumbugWhistState)
        dealer, deal, cards_played, decisions = state.dealer, 0, 0, 0
        while not state.done:
            phase = state.phase
            game.step(state, random_action(game.legal_mask(state), rng), rng)
            game.check_invariants(state)
            cards_played += phase == PHASE_PLAY
            decisions += phase == PHASE_EXCHANGE
            if state.deal_index != deal or state.done:
                summary = dict(state.deal_summary)
                assert cards_played == 26 and decisions == 2  # RULES.md §1.4 exactly 26 cards a deal
                assert sum(summary["tricks"]) == 13
                if "game_winner" in summary and not state.done:
                    assert state.game_points == [0, 0] and state.trick_points == [0, 0]  # §1.7 reset
                if "game_winner" in summary:
                    w = summary["game_winner"]
                    assert summary["game_value"] == game_value(summary["game_points"][1 - w])
                    assert summary["game_points"][w] >= 5
                if not state.done:
                    assert state.dealer == 1 - dealer  # §1.2 alternates every deal
                    dealer, deal, cards_played, decisions = state.dealer, state.deal_index, 0, 0
                    assert state.phase == PHASE_EXCHANGE and state.to_act == 1 - state.dealer
        assert state.returns[0] == -state.returns[1]
        if game.config.episode == "rubber":
            w = int(np.argmax(state.returns))
            margin = state.returns[w]
            assert 1 <= margin <= 8 and state.games_won[w] == 2  # §1.7 rubber result in [1, 8]
            assert margin == state.rubber_points[w] - state.rubber_points[1 - w]
            assert state.deal_index + 1 <= 27
        results.append(state.returns[0])
    return results


def test_invariants_over_some_random_rubbers() -> None:
    for options in (
        {},
        {"exchange_order": "simultaneous", "include_history": False},
        {"episode": "game"},
        {"episode": "deal"},
    ):
        run_rubbers(40, 1, **options)


@pytest.mark.slow
def test_invariants_over_2000_random_rubbers() -> None:
    results = run_rubbers(2000, 2024)
    margins = {abs(r) for r in results}
    assert margins <= set(range(1, 9)) and len(margins) >= 7
