"""whist_env.encoding.features: the batched card facts against a plain per-view reference, and suit permutations against
encoding a view whose suits were renamed."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest

from whist_env.cards import NUM_CARDS, NUM_RANKS, NUM_SUITS
from whist_env.encoding.features import PERMUTATIONS, CardFacts, SuitPermuter, card_facts_reference, suit_families
from whist_env.encoding.layout import SUIT_LABELS, Layout, cards, count
from whist_env.errors import OptionError
from whist_env.registry import game_ids, get_spec
from whist_env.view import PlayerView


def random_views(game_id: str, seed: int, count: int, options: dict[str, Any] | None = None) -> list[PlayerView]:
    """Views of the seat to act (and of one other seat) at random points of random-play episodes (of one deal
    unless ``options`` say otherwise)."""
    spec = get_spec(game_id)
    game = spec.make_rules(**(dict(spec.single_deal) if options is None else options))
    rng = np.random.default_rng(seed)
    views: list[PlayerView] = []
    while len(views) < count:
        state = game.new_episode(rng)
        while not state.done and len(views) < count:
            seat = state.to_act
            view = game.view(state, seat)
            if rng.random() < 0.3:
                views.append(view)
                views.append(game.view(state, (seat + 1) % game.num_players))
            game.step(state, int(rng.choice(view.legal_actions())), rng)
    return views


def encode(
    game_id: str, views: list[PlayerView], options: dict[str, Any] | None = None
) -> tuple[np.ndarray, np.ndarray, Any]:
    spec = get_spec(game_id)
    encoder = spec.make_encoder(spec.make_rules(**(dict(spec.single_deal) if options is None else options)))
    pairs = [encoder.encode_with_mask(v) for v in views]
    return np.stack([p[0] for p in pairs]), np.stack([p[1] for p in pairs]), encoder


@pytest.mark.parametrize("game_id", game_ids())
def test_card_facts_match_the_reference(game_id: str) -> None:
    views = random_views(game_id, seed=1, count=300)
    obs, _, encoder = encode(game_id, views)
    facts = CardFacts(encoder.layout)  # type: ignore[attr-defined]
    batched = facts(obs)
    assert batched.shape == (len(views), facts.size)
    expected = np.stack([card_facts_reference(v) for v in views])
    np.testing.assert_array_equal(batched, expected)
    np.testing.assert_array_equal(facts(obs[7]), expected[7])  # one vector in, one row out
    # the positions exercise every fact: some tricks in progress with a winning card, some masters in hand
    assert batched[:, NUM_CARDS : 2 * NUM_CARDS].any()
    assert (batched[:, :NUM_CARDS] * obs[:, :NUM_CARDS]).any()


def test_card_facts_by_hand() -> None:
    """A hand-made German Whist-like situation: trump hearts, clubs led with the queen, the ace of clubs gone."""
    spec = get_spec("german_whist_v0")
    encoder = spec.make_encoder(spec.make_rules())
    layout = encoder.layout
    obs = np.zeros(layout.size, np.float32)

    def card(s: int, r: int) -> int:
        return s * NUM_RANKS + r

    hand = [card(0, 11), card(0, 2), card(2, 0), card(3, 12)]  # K♣ 4♣ 2♥ A♠
    for c in hand:
        obs[layout.offsets["hand"] + c] = 1
    obs[layout.offsets["trump"] + 2] = 1
    obs[layout.offsets["leader"] + 1] = 1
    obs[layout.offsets["trick[opponent]"] + card(0, 10)] = 1  # Q♣ led
    obs[layout.offsets["played[opponent]"] + card(0, 10)] = 1
    obs[layout.offsets["played[me]"] + card(0, 12)] = 1  # A♣ gone earlier
    f = CardFacts(layout)(obs)
    master = set(np.flatnonzero(f[:NUM_CARDS]))
    assert master == {card(0, 11), card(1, 12), card(2, 12), card(3, 12)}
    assert set(np.flatnonzero(f[NUM_CARDS : 2 * NUM_CARDS])) == {card(0, 11), card(2, 0)}  # K♣ beats Q♣; a trump
    out = f[2 * NUM_CARDS :] * NUM_RANKS
    np.testing.assert_allclose(out, [13 - 2 - 2, 13, 12, 12])


def rename_view(view: PlayerView, sigma: tuple[int, ...]) -> PlayerView:
    """``view`` with suit ``s`` renamed ``sigma[s]`` in every card and suit it holds (classic and German Whist)."""

    def c(card: int) -> int:
        return sigma[card // NUM_RANKS] * NUM_RANKS + card % NUM_RANKS if card >= 0 else card

    def m(mask: int) -> int:
        out = 0
        for x in range(NUM_CARDS):
            if mask >> x & 1:
                out |= 1 << c(x)
        return out

    def v(voids: int) -> int:
        return sum(1 << sigma[s] for s in range(NUM_SUITS) if voids >> s & 1)

    extra = view.extra
    if hasattr(extra, "prizes"):  # German Whist's extras name cards too
        extra = dataclasses.replace(
            extra,
            prizes=tuple(m(p) for p in extra.prizes),  # type: ignore[attr-defined]
            my_draws=m(extra.my_draws),  # type: ignore[attr-defined]
        )
    return dataclasses.replace(
        view,
        hand=m(view.hand),
        legal=m(view.legal),
        trump=None if view.trump is None else sigma[view.trump],
        turn_up=c(view.turn_up),
        trick=tuple((s, c(x)) for s, x in view.trick),
        last_trick=tuple((s, c(x)) for s, x in view.last_trick),
        played=tuple(m(p) for p in view.played),
        known=tuple(m(k) for k in view.known),
        voids=tuple(v(x) for x in view.voids),
        unseen=m(view.unseen),
        extra=extra,
    )


@pytest.mark.parametrize("game_id", ["classic_whist_v0", "german_whist_v0"])
def test_suit_permutation_equals_encoding_the_renamed_view(game_id: str) -> None:
    views = random_views(game_id, seed=2, count=60)
    obs, mask, encoder = encode(game_id, views)
    permuter = SuitPermuter(encoder.layout)  # type: ignore[attr-defined]
    rng = np.random.default_rng(0)
    perm = rng.integers(len(PERMUTATIONS), size=len(views))
    renamed = [rename_view(v, PERMUTATIONS[p]) for v, p in zip(views, perm, strict=True)]
    want_obs, want_mask, _ = encode(game_id, renamed)
    np.testing.assert_array_equal(permuter.obs(obs, perm), want_obs)
    np.testing.assert_array_equal(permuter.mask(mask, perm), want_mask)


@pytest.mark.parametrize("game_id", game_ids())
def test_actions_round_trip_and_canonical_trump_is_spades(game_id: str) -> None:
    views = random_views(game_id, seed=3, count=80)
    obs, mask, encoder = encode(game_id, views)
    layout = encoder.layout  # type: ignore[attr-defined]
    permuter = SuitPermuter(layout)
    perm = permuter.canonical(obs)
    canon = permuter.obs(obs, perm)
    trump = permuter.trump(obs)
    assert set(permuter.trump(canon)[trump < NUM_SUITS]) <= {NUM_SUITS - 1}
    np.testing.assert_array_equal(canon[trump == NUM_SUITS], obs[trump == NUM_SUITS])  # no trump: unchanged
    canon_mask = permuter.mask(mask, perm)
    actions = np.arange(layout.num_actions)
    for i in range(len(views)):
        p = np.full(layout.num_actions, perm[i])
        there = permuter.action(actions, p)
        np.testing.assert_array_equal(permuter.action_back(there, p), actions)
        np.testing.assert_array_equal(canon_mask[i, there], mask[i])  # a legal action stays legal once renamed
        assert (there[NUM_CARDS:] == actions[NUM_CARDS:]).all()  # bids and other non-card actions are kept


def test_compose_applies_both_renamings() -> None:
    first = np.arange(len(PERMUTATIONS))
    then = np.roll(first, 5)
    both = SuitPermuter.compose(first, then)
    for a, b, ab in zip(first, then, both, strict=True):
        assert PERMUTATIONS[ab] == tuple(PERMUTATIONS[b][PERMUTATIONS[a][s]] for s in range(NUM_SUITS))


def facts_from_pieces(layout: Layout, obs: np.ndarray) -> np.ndarray:
    """The layout's own card-fact pieces (master, winning_now, out[...]) of ``(n, size)`` observations, in the
    columns of :class:`CardFacts` (the out counts as fractions of 13)."""
    out_counts = [obs[:, layout.slice(f"out[{s}]")] for s in SUIT_LABELS]
    assert all((c.sum(axis=1) == 1).all() for c in out_counts)  # a count is exactly one hot entry
    return np.concatenate(
        [obs[:, layout.slice("master")], obs[:, layout.slice("winning_now")]]
        + [np.argmax(c, axis=1)[:, None].astype(np.float32) / NUM_RANKS for c in out_counts],
        axis=1,
    )


# every game in one deal, and with the options that turn recall off (the facts then know only the current trick)
FACT_CASES = [(g, None) for g in game_ids()] + [
    ("classic_whist_v0", {"episode": "deal", "include_history": False}),
    ("german_whist_v0", {"include_history": False}),
    ("humbug_whist_v0", {"episode": "deal", "include_history": False}),
]


@pytest.mark.parametrize(("game_id", "options"), FACT_CASES)
def test_card_facts_agree_with_the_layout_pieces(game_id: str, options: dict[str, Any] | None) -> None:
    views = random_views(game_id, seed=4, count=300, options=options)
    obs, _, encoder = encode(game_id, views, options)
    pieces = facts_from_pieces(encoder.layout, obs)
    np.testing.assert_array_equal(CardFacts(encoder.layout)(obs), pieces)
    np.testing.assert_array_equal(np.stack([card_facts_reference(v) for v in views]), pieces)
    assert pieces[:, NUM_CARDS : 2 * NUM_CARDS].any()  # some tricks in progress with a winning card


@pytest.mark.parametrize("game_id", ["classic_whist_v0", "german_whist_v0"])
def test_renaming_suits_moves_the_facts_with_them(game_id: str) -> None:
    views = random_views(game_id, seed=5, count=60)
    obs, _, encoder = encode(game_id, views)
    layout = encoder.layout
    permuter = SuitPermuter(layout)
    perm = np.random.default_rng(1).integers(len(PERMUTATIONS), size=len(views))
    renamed = [rename_view(v, PERMUTATIONS[p]) for v, p in zip(views, perm, strict=True)]
    moved = permuter.obs(obs, perm)
    # the facts read off the renamed observation are the facts of the renamed position
    np.testing.assert_array_equal(
        facts_from_pieces(layout, moved), np.stack([card_facts_reference(v) for v in renamed])
    )
    # the out[...] counts moved with their suits, and renaming back restores the observation
    assert (facts_from_pieces(layout, moved) != facts_from_pieces(layout, obs))[:, 2 * NUM_CARDS :].any()
    inverse = np.array([PERMUTATIONS.index(tuple(int(s) for s in np.argsort(PERMUTATIONS[p]))) for p in perm])
    np.testing.assert_array_equal(permuter.obs(moved, inverse), obs)
    assert (SuitPermuter.compose(perm, inverse) == 0).all()  # the inverse renamings undo them: the identity


def test_suit_families_are_the_pieces_named_for_every_suit() -> None:
    spec = get_spec("oh_hell_v0")
    layout = spec.make_encoder(spec.make_rules()).layout
    assert suit_families(layout) == [tuple(f"out[{s}]" for s in SUIT_LABELS)]
    # three suits only: not a family, the pieces stay where they are under every renaming
    partial = Layout([cards("hand"), *(count(f"n[{s}]", 3) for s in SUIT_LABELS[:3]), count("trump", 1)])
    assert suit_families(partial) == []
    obs = np.arange(partial.size, dtype=np.float32)[None, :]
    for p in range(len(PERMUTATIONS)):
        moved = SuitPermuter(partial).obs(obs, np.array([p]))
        np.testing.assert_array_equal(moved[0, NUM_CARDS:], obs[0, NUM_CARDS:])
    mixed = Layout([count(f"n[{s}]", 3 if s != SUIT_LABELS[2] else 4) for s in SUIT_LABELS])
    with pytest.raises(OptionError, match=r"n\[.*differ in kind or size"):
        suit_families(mixed)
