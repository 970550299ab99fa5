"""RULES.md §2 (classic partnership Whist): test vectors WC-1 … WC-6 and the options of §2.4."""

from __future__ import annotations

import numpy as np
import pytest

from whist_env.cards import HEARTS, SPADES, cards_of, format_cards, mask_of, parse_card, parse_cards
from whist_env.errors import IllegalActionError, OptionError
from whist_env.games.classic_whist.rules import ClassicWhist, ClassicWhistState
from whist_env.rules.core import PHASE_DEAL_END, PHASE_OVER

CANONICAL = list(range(52))


def deck_for(hands: dict[int, str], dealer: int) -> list[int]:
    """A deck that deals the given 13-card hands (RULES.md §2.1: deck[i] → seat (dealer+1+i) % 4)."""
    per_seat = {s: parse_cards(h) for s, h in hands.items()}
    deck = [0] * 52
    for i in range(52):
        seat = (dealer + 1 + i) % 4
        deck[i] = per_seat[seat][i // 4]
    return deck


def fill_hands(
    partial: dict[int, str], trump_card: str, dealer: int, void: dict[int, str] | None = None
) -> dict[int, str]:
    """Complete partial hands to 13 cards each; the dealer's last dealt card is ``trump_card``.

    ``void`` names suits (e.g. ``{2: "S"}``) that a seat's padding must not contain.
    """
    void = void or {}
    used = {parse_card(c) for h in partial.values() for c in h.split()} | {parse_card(trump_card)}
    rest = [c for c in range(52) if c not in used]
    hands = {s: [c for c in parse_cards(partial.get(s, "")) if c != parse_card(trump_card)] for s in range(4)}
    hands[dealer].append(parse_card(trump_card))
    # seats with voids pick first so that they get what they can hold
    for s in sorted(range(4), key=lambda s: s not in void):
        allowed = [c for c in rest if "CDHS"[c // 13] not in void.get(s, "")]
        while len(hands[s]) < 13:
            c = allowed.pop(0)
            rest.remove(c)
            hands[s].insert(0 if s == dealer else len(hands[s]), c)
    return {s: format_cards(h) for s, h in hands.items()}


def new(deck: list[int], dealer: int, **options: object) -> tuple[ClassicWhist, ClassicWhistState]:
    game = ClassicWhist(**options)  # type: ignore[arg-type]
    state = game.new_episode(np.random.default_rng(0), deck=deck, dealer=dealer)
    assert isinstance(state, ClassicWhistState)
    return game, state


def test_wc1_deal() -> None:
    game, state = new(CANONICAL, dealer=3)
    for seat in range(4):
        assert cards_of(state.hands[seat]) == CANONICAL[seat::4]
    assert format_cards(state.hands[3]) == "5C 9C KC 4D 8D QD 3H 7H JH 2S 6S TS AS"
    assert state.turn_up == parse_card("AS") and state.trump == SPADES and state.turn_up_public
    assert state.to_act == 0 and state.leader == 0


def test_wc2_legal_moves() -> None:
    hands = fill_hands({0: "KS", 1: "2S AH 9D", 2: "AC 8D"}, "QH", dealer=3, void={2: "S"})
    game, state = new(deck_for(hands, 3), dealer=3)
    rng = np.random.default_rng()
    assert state.trump == HEARTS
    game.step(state, parse_card("KS"), rng)
    assert cards_of(game.legal_mask(state)) == [parse_card("2S")]
    with pytest.raises(IllegalActionError, match=r"seat 1 cannot play A♥: must follow spades; legal: 2♠"):
        game.step(state, parse_card("AH"), rng)
    game.step(state, parse_card("2S"), rng)
    # seat 2 is void in spades: any card, trumping optional
    assert game.legal_mask(state) == state.hands[2]
    assert state.voids[2] == 0  # no void is proven before the seat shows out
    game.step(state, parse_card("8D"), rng)
    assert state.voids[2] == 1 << SPADES


def test_wc3_trick_winners() -> None:
    hands = fill_hands({0: "KS KC", 1: "2S 4C", 2: "3H QC", 3: "AS AD"}, "2H", dealer=3, void={2: "S"})
    game, state = new(deck_for(hands, 3), dealer=3)
    rng = np.random.default_rng()
    for card in ("KS", "2S", "3H", "AS"):
        game.step(state, parse_card(card), rng)
    assert state.last_winner == 2 and state.to_act == 2  # the only trump; seat 2 leads next
    assert state.tricks_won == [0, 0, 1, 0]
    # second example with seat 1 on lead: put the position there and play it
    state.to_act = 1
    for card in ("4C", "QC", "AD", "KC"):
        game.step(state, parse_card(card), rng)
    assert state.last_winner == 0  # highest club; AD is neither clubs nor trump


@pytest.mark.parametrize(
    ("start", "tricks_side0", "points0", "points1", "won"),
    [
        (2, 9, 5, 0, True),  # WC-4: 9–4 → +3; 2 + 3 = 5 → win (the seed's example)
        (0, 7, 1, 0, False),  # WC-4: 7–6 → +1
        (4, 11, 9, 0, True),  # WC-4: 4 + 5 = 9 → win, exact 5 not required
        (0, 4, 0, 3, False),  # WC-4: the 4-trick side never goes negative
    ],
)
def test_wc4_scoring(start: int, tricks_side0: int, points0: int, points1: int, won: bool) -> None:
    game, state = new(CANONICAL, dealer=3)
    state.team_points = [start, 0]
    state.tricks_won = [tricks_side0, 13 - tricks_side0, 0, 0]
    state.trick_number = 13
    rewards = game.end_deal(state)
    assert state.team_points == [points0, points1] or won
    summary = dict(state.deal_summary)
    assert summary["team_points"] == (points0, points1)
    assert (summary.get("game_winner") == 0) == won
    assert state.phase == (PHASE_OVER if won else PHASE_DEAL_END)
    if won:
        assert rewards == [1.0, -1.0, 1.0, -1.0]
    else:
        assert rewards is None


def test_wc5_turn_up_stays_public_until_dealer_plays() -> None:
    hands = fill_hands({0: "5H", 1: "6H", 2: "7H", 3: "9H"}, "2H", dealer=3)
    game, state = new(deck_for(hands, 3), dealer=3)
    rng = np.random.default_rng()
    assert state.trump == HEARTS
    for card in ("5H", "6H", "7H"):
        for seat in range(4):
            assert game.view(state, seat).turn_up == parse_card("2H")
        game.step(state, parse_card(card), rng)
    legal = set(cards_of(game.legal_mask(state)))
    assert parse_card("2H") in legal and parse_card("9H") in legal
    assert legal == set(cards_of(state.hands[3] & mask_of(range(26, 39))))
    game.step(state, parse_card("9H"), rng)
    for seat in range(4):
        view = game.view(state, seat)
        assert view.turn_up == -1
        # with perfect recall everyone still knows the dealer holds 2H
        assert view.known[3] & (1 << parse_card("2H"))


def test_wc6_rotation() -> None:
    game, state = new(CANONICAL, dealer=3)
    rng = np.random.default_rng(1)
    while state.deal_index == 0 and not state.done:
        game.step(state, cards_of(game.legal_mask(state))[0], rng)
    assert dict(state.deal_summary).get("game_winner") is None  # the game goes on: the next deal starts
    assert state.dealer == 0 and state.to_act == 1 and state.leader == 1


def test_deal_episode_rewards_zero_sum() -> None:
    game, state = new(CANONICAL, dealer=3, episode="deal")
    state.tricks_won = [5, 2, 4, 2]
    state.trick_number = 13
    assert game.end_deal(state) == [3.0, -3.0, 3.0, -3.0]
    assert state.done


def test_points_reward_pays_each_deal() -> None:
    game, state = new(CANONICAL, dealer=3, reward="points")
    state.tricks_won = [1, 4, 1, 4]
    state.trick_number = 13
    assert game.end_deal(state) == [-2.0, 2.0, -2.0, 2.0]
    assert state.phase == PHASE_DEAL_END


def test_honours_score_after_tricks_and_not_at_four() -> None:
    # canonical deck, dealer 3: trump ♠ (AS turned). Seats 0..3 hold JS, QS, KS, AS: team 0 has J K, team 1 Q A.
    game, state = new(CANONICAL, dealer=3, honours=True)
    assert game.honours_held(state, 0) == 2 and game.honours_held(state, 1) == 2
    # a deal where team 1 holds A K Q of trumps: give seat 1 and seat 3 three honours
    hands = fill_hands({1: "QS KS", 3: "AS"}, "AS", dealer=3)
    game, state = new(deck_for(hands, 3), dealer=3, honours=True)
    assert game.honours_held(state, 1) >= 3
    state.tricks_won = [4, 3, 4, 2]  # team 0 takes 8 → +2
    state.trick_number = 13
    game.end_deal(state)
    summary = dict(state.deal_summary)
    assert summary["trick_points"] == (2, 0)
    assert summary["honours"][1] == (4 if game.honours_held(state, 1) == 4 else 2)
    # a side at 4 at the start of the deal cannot score honours
    game, state = new(deck_for(hands, 3), dealer=3, honours=True)
    state.team_points = [0, 4]
    state.tricks_won = [4, 3, 4, 2]
    state.trick_number = 13
    game.end_deal(state)
    assert dict(state.deal_summary)["honours"] == (0, 0)
    # tricks that reach the target end the game before honours are counted
    game, state = new(deck_for(hands, 3), dealer=3, honours=True)
    state.team_points = [3, 0]
    state.tricks_won = [4, 3, 4, 2]
    state.trick_number = 13
    game.end_deal(state)
    assert dict(state.deal_summary)["honours"] == (0, 0) and state.done


def test_rubber_game_values_and_bonus() -> None:
    game, state = new(CANONICAL, dealer=3, rubber=True, reward="points")
    rng = np.random.default_rng(0)

    def finish_deal(team0_tricks: int) -> list[float] | None:
        state.tricks_won = [team0_tricks, 13 - team0_tricks, 0, 0]
        state.trick_number = 13
        rewards = game.end_deal(state)
        if state.phase == PHASE_DEAL_END:
            game.next_deal(state, rng)
        return rewards

    # game 1: team 0 wins 5–0 in one deal of 11 tricks → treble, 3
    assert finish_deal(11) == [3.0, -3.0, 3.0, -3.0]
    assert state.games_won == [1, 0] and state.team_points == [0, 0]
    # game 2: team 1 reaches 2 first, then team 0 wins 5–2 → 2, and the rubber (+2)
    assert finish_deal(5) is None  # team 1 takes 8 tricks: 2 points
    rewards = finish_deal(11)
    assert rewards == [4.0, -4.0, 4.0, -4.0]
    summary = dict(state.deal_summary)
    assert summary["rubber_winner"] == 0 and summary["rubber_margin"] == 3 + 2 + 2
    assert state.done
    assert state.returns == [7.0, -7.0, 7.0, -7.0]


def test_trump_rotation_cycles_from_no_trump() -> None:
    game = ClassicWhist(trump_rotation=True, reward="points", target_points=10)
    rng = np.random.default_rng(3)
    state = game.new_episode(rng)
    seen = []
    while not state.done and len(seen) < 6:
        if not seen or state.deal_index != seen[-1][0]:
            seen.append((state.deal_index, state.trump))
            assert state.turn_up == -1 and not state.turn_up_public
        game.step(state, cards_of(game.legal_mask(state))[0], rng)
    expected = [None, SPADES, HEARTS, 1, 0, None]
    assert [t for _, t in seen] == expected[: len(seen)]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"target_points": 6}, r"target_points=6 is not allowed; choose one of 5, 7, 10"),
        # a value that prints like an allowed one says why it is refused: its type
        ({"target_points": "7"}, r"target_points='7' \(a str, not an int\) is not allowed; choose one of 5, 7, 10"),
        ({"episode": 1}, r"episode=1 \(an int, not a str\) is not allowed; choose one of 'game', 'deal'"),
        ({"honours": 1}, r"honours must be bool"),
        ({"episode": "rubber"}, r"episode='rubber' is not allowed; choose one of 'game', 'deal'"),
        ({"reward": "score"}, r"choose one of 'win', 'points'"),
        ({"trumps": True}, r"has no option 'trumps'. Allowed options: target_points"),
        ({"rubber": True, "episode": "deal"}, r"rubber=True needs episode='game'"),
    ],
)
def test_bad_options(options: dict[str, object], message: str) -> None:
    with pytest.raises(OptionError, match=message):
        ClassicWhist(**options)  # type: ignore[arg-type]
