"""RULES.md §4 (exact-bidding Oh Hell / Plump): test vectors PL-1 … PL-6, the options, invariants."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from whist_env.cards import SPADES, cards_of, mask_of, parse_card, parse_cards
from whist_env.errors import IllegalActionError, OptionError
from whist_env.games.oh_hell.rules import (
    BID_BASE,
    OhHell,
    OhHellState,
    deal_score,
    forbidden_bid,
    schedule,
    winners,
)
from whist_env.rules.core import PHASE_BIDDING, PHASE_PLAY
from whist_env.rules.tricks import legal_cards, trick_winner
from whist_env.testing import play_random_episode, random_action

CANONICAL = list(range(52))


def deck_for(hands: dict[int, str], dealer: int) -> list[int]:
    """A deck that deals the given k-card hands (RULES.md §4.2: deck[i] → seat (dealer+1+i) % n, i < n*k).

    The cards no hand holds follow in canonical order (they are set aside, or turned up).
    """
    n = len(hands)
    per_seat = {s: parse_cards(h) for s, h in hands.items()}
    k = len(per_seat[0])
    assert all(len(h) == k for h in per_seat.values())
    deck = [per_seat[(dealer + 1 + i) % n][i // n] for i in range(n * k)]
    return deck + [c for c in range(52) if c not in deck]


def new(deck: list[int] | None, dealer: int, **options: object) -> tuple[OhHell, OhHellState]:
    game = OhHell(**options)  # type: ignore[arg-type]
    state = game.new_episode(np.random.default_rng(0), deck=deck, dealer=dealer)
    assert isinstance(state, OhHellState)
    return game, state


def bid(game: OhHell, state: OhHellState, *bids: int) -> None:
    rng = np.random.default_rng(0)
    for b in bids:
        game.step(state, BID_BASE + b, rng)


def play(game: OhHell, state: OhHellState, cards: str) -> list[float] | None:
    rng = np.random.default_rng(0)
    out = None
    for c in parse_cards(cards):
        out = game.step(state, c, rng)
    return out


# ----------------------------------------------------------------------------- PL-1 schedule
SCHEDULE_TABLE = {
    2: (26, 51, 0),
    3: (17, 33, 1),
    4: (13, 25, 0),
    5: (10, 19, 2),
    6: (8, 15, 4),
    7: (7, 13, 3),
    8: (6, 11, 4),
}


@pytest.mark.parametrize("n", range(2, 9))
def test_pl1_schedule_for_every_player_count(n: int) -> None:
    s, deals, leftover = SCHEDULE_TABLE[n]
    sizes = schedule(n)
    assert sizes == tuple(range(s, 0, -1)) + tuple(range(2, s + 1))
    assert len(sizes) == deals == 2 * s - 1
    assert sizes.count(1) == 1 and sizes[0] == sizes[-1] == s
    assert 52 - n * s == leftover
    game = OhHell(num_players=n)
    assert game.schedule == sizes and game.num_actions == 52 + s + 1


def test_pl1_vectors() -> None:
    assert schedule(4) == (13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13)
    assert schedule(5)[0] == 10 and len(schedule(5)) == 19
    assert schedule(2)[0] == 26 and len(schedule(2)) == 51
    assert schedule(8)[0] == 6 and len(schedule(8)) == 11
    assert len(OhHell(start_cards=10).schedule) == 19


@pytest.mark.parametrize("n", range(2, 9))
def test_pl1_start_cards_10(n: int) -> None:
    """§4.1 variant: S = min(10, floor(52/n)): n = 2..5 → 19 deals, 6 → 15, 7 → 13, 8 → 11."""
    s = min(10, 52 // n)
    game = OhHell(num_players=n, start_cards=10)
    assert game.schedule == schedule(n, 10) == tuple(range(s, 0, -1)) + tuple(range(2, s + 1))
    assert len(game.schedule) == {2: 19, 3: 19, 4: 19, 5: 19, 6: 15, 7: 13, 8: 11}[n]


def test_max_cards_caps_the_schedule() -> None:
    assert OhHell(max_cards=3).schedule == (3, 2, 1, 2, 3)
    assert OhHell(num_players=8, max_cards=20).schedule == schedule(8)  # a cap above floor(52/n) does nothing
    assert OhHell(max_cards=5, start_cards=10).schedule == schedule(4, 5)
    assert OhHell(max_cards=1).schedule == (1,)


def test_match_plays_the_schedule_with_the_deal_passing_left() -> None:
    game = OhHell(num_players=5, max_cards=4)
    seen = []
    for st in play_random_episode(game, np.random.default_rng(1), dealer=3):
        if st.phase == PHASE_BIDDING and st.num_bids == 0:  # type: ignore[attr-defined]
            seen.append((st.deal_index, st.dealer, st.deal_tricks))
    assert [i for i, _, _ in seen] == list(range(7))
    assert [k for _, _, k in seen] == [4, 3, 2, 1, 2, 3, 4]
    dealers = [d for _, d, _ in seen]
    assert dealers[0] == 3
    assert all(b == (a + 1) % 5 for a, b in itertools.pairwise(dealers))  # §4.1 the deal passes left


# ----------------------------------------------------------------------------- §4.2 deal
@pytest.mark.parametrize(("n", "k", "dealer"), [(3, 17, 2), (5, 10, 0), (4, 13, 1), (8, 3, 7), (2, 1, 0)])
def test_deal_from_the_dealers_left_with_leftovers_set_aside(n: int, k: int, dealer: int) -> None:
    game, state = new(CANONICAL, dealer, num_players=n, episode="deal", hand_size=k)
    for i in range(n * k):
        assert state.hands[(dealer + 1 + i) % n] >> i & 1
    assert all(h.bit_count() == k for h in state.hands)
    assert state.set_aside == mask_of(range(n * k, 52))
    assert state.trump is None and state.turn_up == -1
    # §4.4 / §4.5: förhand bids first and will lead
    assert state.phase == PHASE_BIDDING and state.to_act == state.leader == (dealer + 1) % n


# ----------------------------------------------------------------------------- §4.3 trump
def test_turn_up_is_the_first_undealt_card_and_out_of_play() -> None:
    game, state = new(CANONICAL, 0, num_players=5, trump_mode="turn_up", episode="deal", hand_size=10)
    assert state.turn_up == 50 and state.trump == SPADES
    assert state.set_aside == 1 << 51
    view = game.view(state, 1)
    assert view.turn_up == 50 and not view.unseen >> 50 & 1
    assert view.unseen >> 51 & 1  # the card set aside is unseen
    assert not any(m >> 50 & 1 for m in state.hands)


@pytest.mark.parametrize(("n", "k"), [(4, 13), (2, 26)])
def test_turn_up_without_undealt_cards_plays_without_trump(n: int, k: int) -> None:
    game, state = new(None, 0, num_players=n, trump_mode="turn_up", episode="deal", hand_size=k)
    assert state.turn_up == -1 and state.trump is None and state.set_aside == 0
    game.check_invariants(state)


def test_drawn_card_rng_order_trump_before_the_shuffle() -> None:
    """§0.3: first_dealer = rng.integers(n); then per deal trump_card = rng.integers(52), deck = rng.permutation(52)."""
    game = OhHell(num_players=3, trump_mode="drawn_card", max_cards=2)
    state = game.new_episode(np.random.default_rng(42))
    ref = np.random.default_rng(42)
    dealer = int(ref.integers(3))
    card = int(ref.integers(52))
    deck = ref.permutation(52).tolist()
    assert isinstance(state, OhHellState)
    assert state.dealer == dealer and state.drawn_card == card and state.trump == card // 13
    for i in range(6):
        assert state.hands[(dealer + 1 + i) % 3] >> deck[i] & 1
    # the drawn card was returned to the pack: it is somewhere, not removed
    assert (mask_of(range(52)) & ~state.set_aside & ~(state.hands[0] | state.hands[1] | state.hands[2])) == 0


def test_drawn_card_is_public_but_its_place_is_not() -> None:
    game, state = new(None, 0, num_players=4, trump_mode="drawn_card", episode="deal", hand_size=3)
    card = state.drawn_card
    holder = next((s for s in range(4) if state.hands[s] >> card & 1), None)
    for seat in range(4):
        view = game.view(state, seat)
        assert view.extra.drawn_card == card and view.trump == card // 13
        assert view.turn_up == -1
        if seat != holder:
            assert view.unseen >> card & 1, "the drawn card's place is not public"
            assert not any(m >> card & 1 for s, m in enumerate(view.known) if s != seat)


def test_trump_card_start_option() -> None:
    game, state = new(CANONICAL, 0, num_players=4, trump_mode="drawn_card", episode="deal", hand_size=1)
    assert 0 <= state.drawn_card < 52  # with a given deck the card is still drawn
    game = OhHell(trump_mode="drawn_card", episode="deal", hand_size=2)
    given = game.new_episode(np.random.default_rng(0), deck=CANONICAL, dealer=0, trump_card="QS")
    assert given.drawn_card == parse_card("QS") and given.trump == SPADES  # type: ignore[attr-defined]
    assert game.new_episode(np.random.default_rng(0), trump_card=parse_card("2D")).trump == 1
    with pytest.raises(OptionError, match="'trump_card' needs trump_mode='drawn_card'"):
        OhHell().new_episode(np.random.default_rng(0), trump_card="QS")
    with pytest.raises(OptionError, match="must be a card id 0..51"):
        game.new_episode(np.random.default_rng(0), trump_card=52)
    with pytest.raises(ValueError, match="cannot read 'ZZ' as a card"):
        game.new_episode(np.random.default_rng(0), trump_card="ZZ")


# ----------------------------------------------------------------------------- PL-2 hook rule
@pytest.mark.parametrize(
    ("k", "earlier", "legal"),
    [
        (13, (4, 1, 5), [0, 1, 2, *range(4, 14)]),
        (5, (2, 0, 1), [0, 1, 3, 4, 5]),
        (5, (3, 1, 2), [0, 1, 2, 3, 4, 5]),
        (1, (0, 0, 0), [0]),
        (1, (1, 0, 0), [1]),
    ],
)
def test_pl2_hook_rule(k: int, earlier: tuple[int, ...], legal: list[int]) -> None:
    game, state = new(None, 3, episode="deal", hand_size=k)
    bid(game, state, *earlier)
    assert state.to_act == 3 == state.dealer  # the dealer bids last
    assert game.legal_actions(state) == [BID_BASE + b for b in legal]
    for b in set(range(k + 1)) - set(legal):
        with pytest.raises(IllegalActionError, match=rf"seat 3 cannot play bid {b}: hook rule .* legal: bid"):
            game.step(state, BID_BASE + b, np.random.default_rng())
    assert state.bids == [*earlier, -1]


def test_hook_rule_only_binds_the_last_bidder() -> None:
    assert forbidden_bid(13, 4 + 1 + 5) == 3
    assert forbidden_bid(5, 6) is None
    game, state = new(None, 3, episode="deal", hand_size=3)
    assert game.legal_actions(state) == [52, 53, 54, 55]  # first of four bidders: any bid
    bid(game, state, 3, 0)
    assert game.legal_actions(state) == [52, 53, 54, 55]  # third: the bids may still add up to 3
    game, state = new(None, 0, num_players=2, episode="deal", hand_size=2)
    assert game.legal_actions(state) == [52, 53, 54]
    bid(game, state, 2)
    assert game.legal_actions(state) == [53, 54]  # may not bid 0


def test_bids_out_of_range_and_cards_while_bidding_are_rejected() -> None:
    game, state = new(None, 0, num_players=3, episode="deal", hand_size=2)
    with pytest.raises(IllegalActionError, match="bids go from 0 to 2"):
        game.step(state, BID_BASE + 3, np.random.default_rng())
    with pytest.raises(IllegalActionError, match="this is the bidding phase"):
        game.step(state, cards_of(state.hands[1])[0], np.random.default_rng())
    bid(game, state, 0, 0, 0)
    assert state.phase == PHASE_PLAY
    with pytest.raises(IllegalActionError, match="cannot play bid 1: the bidding is over; play a card"):
        game.step(state, BID_BASE + 1, np.random.default_rng())
    assert game.describe_action(BID_BASE + 3) == "bid 3" and game.describe_action(47) == "TS"


# ----------------------------------------------------------------------------- PL-3 legal moves, PL-4 winner
def test_pl3_legal_moves_no_trump() -> None:
    led = parse_card("9H") // 13
    assert legal_cards(mask_of(parse_cards("2H AS KD")), led) == mask_of(parse_cards("2H"))
    assert legal_cards(mask_of(parse_cards("AS KD")), led) == mask_of(parse_cards("AS KD"))
    for follower, legal in (("2H AS KD", "2H"), ("AS KD 3C", "AS KD 3C")):
        game, state = new(deck_for({0: "9H 2C 3D", 1: follower}, 1), 1, num_players=2, episode="deal", hand_size=3)
        bid(game, state, 0, 0)
        play(game, state, "9H")
        assert game.legal_mask(state) == mask_of(parse_cards(legal))


@pytest.mark.parametrize(("trump_mode", "trump_card", "winner"), [("none", None, 3), ("drawn_card", "3S", 1)])
def test_pl4_trick_winner(trump_mode: str, trump_card: str | None, winner: int) -> None:
    plays = list(zip(range(4), parse_cards("9H AS 2H KH"), strict=True))
    assert trick_winner(plays, None) == 3
    assert trick_winner(plays, SPADES) == 1
    game = OhHell(trump_mode=trump_mode, episode="deal", hand_size=1)
    deck = deck_for({0: "9H", 1: "AS", 2: "2H", 3: "KH"}, 3)
    state = game.new_episode(np.random.default_rng(0), deck=deck, dealer=3, trump_card=trump_card)
    assert isinstance(state, OhHellState)
    bid(game, state, 0, 0, 0, 0)
    play(game, state, "9H AS 2H KH")
    assert state.tricks_won[winner] == 1 and state.done


# ----------------------------------------------------------------------------- PL-5 scores
@pytest.mark.parametrize(
    ("b", "took", "prefix_one", "ten_plus_bid"),
    [(3, 3, 13, 13), (0, 0, 10, 10), (2, 3, 0, 0), (10, 10, 110, 20), (13, 13, 113, 23), (26, 26, 126, 36)],
)
def test_pl5_scores(b: int, took: int, prefix_one: int, ten_plus_bid: int) -> None:
    assert deal_score(b, took) == deal_score(b, took, "prefix_one") == prefix_one
    assert deal_score(b, took, "ten_plus_bid") == ten_plus_bid


@pytest.mark.parametrize(("b", "took", "zero", "per_trick"), [(2, 3, 0, 3), (3, 0, 0, 0), (0, 4, 0, 4), (5, 5, 15, 15)])
def test_miss_points(b: int, took: int, zero: int, per_trick: int) -> None:
    assert deal_score(b, took, miss_points="zero") == zero
    assert deal_score(b, took, miss_points="per_trick") == per_trick


def test_winners_share_ties() -> None:
    assert winners([11, 10, 0]) == (0,)
    assert winners([13, 20, 20, 5]) == (1, 2)
    assert winners([0, 0]) == (0, 1)


# ----------------------------------------------------------------------------- PL-6 mini deal
PL6_HANDS = {0: "AH 2C", 1: "KH 3C", 2: "QH AC"}


def test_pl6_mini_deal() -> None:
    game, state = new(deck_for(PL6_HANDS, 2), 2, num_players=3, episode="deal", hand_size=2)
    for s, h in PL6_HANDS.items():
        assert state.hands[s] == mask_of(parse_cards(h))
    bid(game, state, 1, 0)
    assert game.legal_actions(state) == [BID_BASE + 0, BID_BASE + 2]  # forbidden 2 - 1 = 1
    bid(game, state, 0)
    assert state.phase == PHASE_PLAY and state.to_act == 0
    play(game, state, "AH")
    assert game.legal_mask(state) == mask_of(parse_cards("KH"))
    play(game, state, "KH QH")
    assert state.tricks_won == [1, 0, 0] and state.to_act == 0
    rewards = play(game, state, "2C 3C AC")
    assert state.tricks_won == [1, 0, 1]
    assert rewards == [11.0, 10.0, 0.0]
    assert state.scores == [11, 10, 0] and state.done
    assert game.info(state, 0)["winners"] == (1, 0, 0)  # a 1 for each winning seat
    assert dict(state.deal_summary)["deal_scores"] == (11, 10, 0)


def test_match_rewards_are_deal_scores_and_sum_to_the_totals() -> None:
    game = OhHell(num_players=3, max_cards=3, exact_score_mode="ten_plus_bid", miss_points="per_trick")
    rng = np.random.default_rng(5)
    state = game.new_episode(rng)
    paid = [0.0] * 3
    deals = 0
    while not state.done:
        rewards = game.step(state, random_action(game.legal_mask(state), rng), rng)
        if rewards is not None:
            deals += 1
            summary = dict(state.deal_summary)
            assert rewards == [float(x) for x in summary["deal_scores"]]
            paid = [p + r for p, r in zip(paid, rewards, strict=True)]
    assert paid == state.returns == [float(s) for s in state.scores]
    won = winners(state.scores)
    assert game.info(state, 1)["winners"] == tuple(int(s in won) for s in range(state.num_players))


# ----------------------------------------------------------------------------- options
@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"num_players": 1}, r"num_players=1 is out of range; allowed 2..8"),
        ({"num_players": 9}, r"num_players=9 is out of range; allowed 2..8"),
        ({"num_players": "4"}, r"num_players must be int"),
        ({"episode": "deal", "hand_size": 18, "num_players": 3}, r"hand_size=18 is more than a 52-card deck allows"),
        ({"episode": "deal", "hand_size": 27}, r"hand_size=27 is out of range"),
        ({"hand_size": 5}, r"hand_size=5 needs episode='deal'"),
        ({"episode": "deal", "hand_size": 8, "max_cards": 5}, r"larger than the cap 5"),
        ({"trump_mode": "cut"}, r"trump_mode='cut' is not allowed; choose one of 'none', 'drawn_card', 'turn_up'"),
        ({"exact_score_mode": "plus_ten"}, r"exact_score_mode='plus_ten' is not allowed"),
        ({"miss_points": "minus"}, r"miss_points='minus' is not allowed"),
        ({"episode": "game"}, r"episode='game' is not allowed"),
        ({"max_cards": 0}, r"max_cards=0 is out of range"),
        ({"bidding": True}, r"oh_hell_v0 has no option 'bidding'"),
    ],
)
def test_bad_options_are_rejected(options: dict[str, object], message: str) -> None:
    with pytest.raises(OptionError, match=message):
        OhHell(**options)  # type: ignore[arg-type]


def test_deal_episode_defaults_to_the_largest_hand() -> None:
    assert OhHell(num_players=5, episode="deal").schedule == (10,)
    assert OhHell(num_players=5, episode="deal", start_cards=7).schedule == (7,)
    assert OhHell(num_players=6, episode="deal", hand_size=8).num_actions == 52 + 9


# ----------------------------------------------------------------------------- invariants
OPTION_COMBOS = [
    {"trump_mode": t, "exact_score_mode": e, "miss_points": m}
    for t in ("none", "drawn_card", "turn_up")
    for e in ("prefix_one", "ten_plus_bid")
    for m in ("zero", "per_trick")
]


def _random_deals(combo: dict[str, str], games: int, seed: int) -> None:
    """``games`` single deals, cycling n over 2..8 and the hand size over small sizes and the largest."""
    rng = np.random.default_rng(seed)
    cache: dict[tuple[int, int], OhHell] = {}
    for i in range(games):
        n = 2 + i % 7
        largest = 52 // n
        k = largest if i % 25 == 0 else 1 + int(rng.integers(min(4, largest)))
        game = cache.get((n, k))
        if game is None:
            game = cache[(n, k)] = OhHell(num_players=n, episode="deal", hand_size=k, **combo)  # type: ignore[arg-type]
        *_, state = play_random_episode(game, rng)
        assert state.done and sum(state.tricks_won) == k


def test_invariants_quick() -> None:
    for j, combo in enumerate(OPTION_COMBOS):
        _random_deals(combo, 35, j)


@pytest.mark.slow
@pytest.mark.parametrize("combo", OPTION_COMBOS, ids=lambda c: "-".join(c.values()))
def test_invariants_over_2000_random_deals_per_option_combination(combo: dict[str, str]) -> None:
    """2,000 deals per option combination, so ≥ 2,000 per player count too (12 × 2,000 / 7)."""
    _random_deals(combo, 2000, 1)


@pytest.mark.slow
@pytest.mark.parametrize("n", range(2, 9))
def test_invariants_over_full_matches(n: int) -> None:
    rng = np.random.default_rng(n)
    matches = 50 if n > 3 else 25
    for i in range(matches):
        combo = OPTION_COMBOS[i % len(OPTION_COMBOS)]
        game = OhHell(num_players=n, start_cards=10 if i % 2 else None, **combo)  # type: ignore[arg-type]
        deals = 0
        for state in play_random_episode(game, rng):
            if state.phase == PHASE_BIDDING and state.num_bids == 0:  # type: ignore[attr-defined]
                deals += 1
        assert deals == len(game.schedule) and state.done
        assert state.returns == [float(s) for s in state.scores]
