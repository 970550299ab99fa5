"""The deal sampler: every draw is consistent with the view, and the draws are uniform."""

from __future__ import annotations

import itertools
import math
from collections import Counter
from typing import Any

import numpy as np
import pytest

from whist_env.cards import FULL_DECK, SUIT_MASKS
from whist_env.registry import game_ids, get_spec
from whist_env.rules.core import PHASE_BIDDING, PHASE_EXCHANGE, PHASE_PLAY, State, TrickGame
from whist_env.search.sampler import DealSampler, SampledDeal, consistent, hand_sizes, sample_deal, sample_deals
from whist_env.view import PlayerView

CASES: list[tuple[str, dict[str, Any]]] = [
    ("classic_whist_v0", {"episode": "deal"}),
    ("classic_whist_v0", {"episode": "deal", "include_history": False}),
    ("humbug_v0", {}),
    ("humbug_v0", {"mode": "open_table"}),
    ("humbug_whist_v0", {"episode": "deal"}),
    ("humbug_whist_v0", {"episode": "deal", "include_history": False}),
    ("german_whist_v0", {}),
    ("german_whist_v0", {"include_history": False, "phase1_follow_suit": False}),
    ("oh_hell_v0", {"num_players": 4, "episode": "deal", "hand_size": 9}),
    ("oh_hell_v0", {"num_players": 3, "episode": "deal", "hand_size": 5}),
]


def test_every_game_is_sampled() -> None:
    assert {g for g, _ in CASES} == set(game_ids()), "a new game: add it to CASES"


def substitute(game: TrickGame, state: State, deal: SampledDeal) -> State:
    """The true state with the sampled hidden cards put in (what only the observer's view must not tell)."""
    new = state.copy()
    new.hands = list(deal.hands)
    if game.game_id == "german_whist_v0" and deal.stock:
        k = state.trick_number
        stock = list(new.stock)  # type: ignore[attr-defined]
        stock[2 * k :] = deal.stock
        new.stock = tuple(stock)  # type: ignore[attr-defined]
    return new


def views_along(game: TrickGame, seed: int, every: int = 3) -> list[tuple[State, PlayerView]]:
    """(state, view) pairs for every seat at several points of one random episode."""
    rng = np.random.default_rng(seed)
    state = game.new_episode(rng)
    out = []
    step = 0
    while not state.done:
        if step % every == 0 and state.phase in (PHASE_PLAY, PHASE_BIDDING, PHASE_EXCHANGE):
            for seat in range(state.num_players):
                out.append((state.copy(), game.view(state, seat)))
        actions = game.legal_actions(state)
        game.step(state, actions[int(rng.integers(len(actions)))], rng)
        step += 1
    return out


@pytest.mark.parametrize(("game_id", "options"), CASES)
def test_samples_are_consistent_with_the_view(game_id: str, options: dict[str, Any]) -> None:
    game = get_spec(game_id).make_rules(**options)
    rng = np.random.default_rng(1)
    checked = 0
    for seed in range(3):
        for state, view in views_along(game, seed):
            sizes = hand_sizes(view)
            assert sizes == tuple(h.bit_count() for h in state.hands)
            for deal in sample_deals(view, rng, 3):
                assert consistent(view, deal) == []
                # The decisive test: put the draw into the real state; the observer must see the same view.
                assert game.view(substitute(game, state, deal), view.seat) == view
                checked += 1
    assert checked > 50


def test_the_true_deal_is_consistent() -> None:
    game = get_spec("classic_whist_v0").make_rules(episode="deal")
    for state, view in views_along(game, 4):
        truth = SampledDeal(tuple(state.hands), (), 0)
        assert consistent(view, truth) == []


def test_reproducible_from_the_generator() -> None:
    game = get_spec("classic_whist_v0").make_rules(episode="deal")
    _, view = views_along(game, 2)[20]
    a = sample_deals(view, np.random.default_rng(9), 5)
    b = sample_deals(view, np.random.default_rng(9), 5)
    assert a == b


def _cards(mask: int) -> list[int]:
    return [c for c in range(52) if (mask >> c) & 1]


def small_view(voids: tuple[int, ...]) -> PlayerView:
    """Four seats, three cards each, seat 0 to lead; 9 unseen cards of 3 suits; the given voids."""
    hand = (1 << 0) | (1 << 13) | (1 << 26)  # 2C 2D 2H
    unseen = 0
    for suit, ranks in ((0, (5, 8, 11)), (1, (4, 9, 12)), (2, (3, 7, 10))):
        for r in ranks:
            unseen |= 1 << (13 * suit + r)
    played = FULL_DECK & ~hand & ~unseen
    return PlayerView(
        game="classic_whist_v0",
        seat=0,
        num_players=4,
        phase="play",
        to_act=0,
        dealer=3,
        leader=0,
        hand=hand,
        legal=hand,
        trump=3,
        turn_up=-1,
        trick=(),
        last_trick=(),
        last_winner=-1,
        played=(played, 0, 0, 0),
        known=(hand, 0, 0, 0),
        voids=voids,
        unseen=unseen,
        tricks_won=(3, 3, 2, 2),
        scores=(0, 0, 0, 0),
        deal_index=0,
    )


def all_consistent(view: PlayerView) -> list[tuple[int, ...]]:
    """Every way to deal the unseen cards into seats 1..3 (three each) respecting the voids."""
    unseen = _cards(view.unseen)
    out = []
    for a in itertools.combinations(unseen, 3):
        rest = [c for c in unseen if c not in a]
        for b in itertools.combinations(rest, 3):
            c = tuple(x for x in rest if x not in b)
            hands = tuple(sum(1 << x for x in h) for h in (a, b, c))
            ok = all(not (hands[i] & SUIT_MASKS[s]) for i in range(3) for s in range(4) if (view.voids[i + 1] >> s) & 1)
            if ok:
                out.append(hands)
    return out


def chi_square_p(observed: list[int], expected: float) -> float:
    """Upper-tail p-value of Pearson's statistic for equal expected counts (Wilson–Hilferty)."""
    df = len(observed) - 1
    stat = sum((o - expected) ** 2 / expected for o in observed)
    z = ((stat / df) ** (1 / 3) - (1 - 2 / (9 * df))) / math.sqrt(2 / (9 * df))
    return 0.5 * math.erfc(z / math.sqrt(2))


@pytest.mark.parametrize(
    "voids",
    [
        (0, 0, 0, 0),  # no constraint: 1680 deals
        (0, 0b0001, 0, 0),  # seat 1 has no clubs
        (0, 0b0001, 0b0010, 0),  # two constrained seats
        (0, 0b0001, 0b0010, 0b0100),  # three
        (0, 0b0001, 0b0110, 0),  # a seat void in two suits: 20 deals
        (0, 0b0011, 0b0110, 0),  # only one deal left
    ],
)
def test_uniform_over_consistent_deals(voids: tuple[int, ...]) -> None:
    view = small_view(voids)
    support = all_consistent(view)
    sampler = DealSampler(view)
    assert sampler.count == len(support)
    draws = 60 * len(support) if len(support) < 500 else 10 * len(support)
    rng = np.random.default_rng(12345)
    counts = Counter(sampler.sample(rng).hands[1:] for _ in range(draws))
    assert set(counts) <= set(support), "a drawn deal breaks a void"
    observed = [counts.get(h, 0) for h in support]
    if len(support) == 1:
        assert observed == [draws]
        return
    assert chi_square_p(observed, draws / len(support)) > 1e-3


def test_impossible_view_is_an_error() -> None:
    view = small_view((0, 0b0111, 0b0111, 0))  # seats 1 and 2 can hold nothing of the 9 unseen cards
    with pytest.raises(ValueError, match="no deal is consistent"):
        sample_deal(view, np.random.default_rng(0))
