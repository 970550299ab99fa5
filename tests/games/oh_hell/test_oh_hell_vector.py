"""Oh Hell's batched engine beyond the option-grid lockstep test: the default match, the bidding and its hook rule,
the action mask wider than 64 actions, the set-aside cards, refused bids, and positions exported and imported
mid-bidding (RULES.md §4)."""

from __future__ import annotations

import numpy as np
import pytest

import whist_env.vector as vector
from whist_env import make
from whist_env.errors import IllegalActionError, OptionError
from whist_env.games.classic_whist.rules import ClassicWhistState
from whist_env.games.oh_hell.engine import deal_score
from whist_env.games.oh_hell.rules import BID_BASE, forbidden_bid
from whist_env.games.oh_hell.rules import deal_score as rules_deal_score
from whist_env.rules.core import PHASE_BIDDING, PHASE_PLAY
from whist_env.testing import lockstep, random_legal, unchanged

GAME = "oh_hell_v0"
B = 6


def test_the_default_match_in_lockstep_over_its_end() -> None:
    """The default options (4 players, the schedule 13..1..13: 25 deals, 66 actions), past the end of a match."""
    assert lockstep(GAME, {}, num_envs=2, min_deals=56, seed=21) >= 56


@pytest.mark.parametrize(
    "options",
    [
        {"start_cards": 10, "num_players": 6},
        {"num_players": 7, "max_cards": 4},
        {"num_players": 2, "episode": "deal"},  # 26 cards each: bids up to 26 (action 78)
        {"num_players": 3, "episode": "deal", "trump_mode": "turn_up", "miss_points": "per_trick"},  # 51 dealt
    ],
    ids=str,
)
def test_other_schedules_in_lockstep(options: dict[str, object]) -> None:
    """start_cards and max_cards shorten the schedule; 6 and 7 players and the largest hands (not in the option
    grid) too."""
    assert lockstep(GAME, options, num_envs=4, min_deals=40, seed=len(options)) >= 40


@pytest.mark.parametrize("prefix_one", [True, False])
@pytest.mark.parametrize("per_trick", [True, False])
def test_deal_scores_equal_the_rules(prefix_one: bool, per_trick: bool) -> None:
    """RULES.md §4.6: the kernels' deal score is the rules' for every bid and trick count (bids of 10 and more
    included, rarely made in random play)."""
    mode = "prefix_one" if prefix_one else "ten_plus_bid"
    miss = "per_trick" if per_trick else "zero"
    for bid in range(27):
        for took in range(27):
            assert deal_score(bid, took, prefix_one, per_trick) == rules_deal_score(bid, took, mode, miss)


def test_bids_above_action_63_and_the_hook_rule() -> None:
    """RULES.md §4.4: 13 cards give bids 0..13 (actions 52..65: past one 64-bit word); the dealer, bidding last,
    may not make the bids add up to 13, and a forbidden bid is refused with no environment changed."""
    venv = vector.make(GAME, B, seed=4)
    ts = venv.reset()
    assert ts.action_mask.shape == (B, 66)
    assert (ts.action_mask[:, BID_BASE:] == 1).all() and not ts.action_mask[:, :BID_BASE].any()
    rng = np.random.default_rng(2)
    for _ in range(3):  # envs 0..2 bid 0 three times: their dealer may not bid 13 (action 65); the rest at random
        ts = venv.step(np.where(np.arange(B) < 3, BID_BASE, random_legal(ts.action_mask, rng)))
    assert np.array_equal(ts.current_player, venv.field("dealer")[:, 0])
    bids = venv.field("bids")[:, :4]
    for i in range(B):
        earlier = int(bids[i].sum()) + 1  # + 1: the dealer's own -1 (not yet)
        forbidden = forbidden_bid(13, earlier)
        legal = set(np.flatnonzero(ts.action_mask[i]) - BID_BASE)
        assert legal == set(range(14)) - {forbidden}
    dealer_bids = random_legal(ts.action_mask, rng)
    assert not ts.action_mask[:3, BID_BASE + 13].any() and ts.action_mask[:3, BID_BASE : BID_BASE + 13].all()
    wrong = [0, 2]
    dealer_bids[wrong] = BID_BASE + 13
    with unchanged(venv), pytest.raises(IllegalActionError, match=r"environment\(s\) " + ", ".join(map(str, wrong))):
        venv.step(dealer_bids)
    card = int(np.flatnonzero(ts.action_mask[0] == 0)[0])  # a card: bidding is still on
    with unchanged(venv), pytest.raises(IllegalActionError, match=r"bidding: bid with actions 52 \+ bid.*cannot play"):
        venv.step(np.where(np.arange(B) == 0, card, random_legal(ts.action_mask, rng)))
    ts = venv.step(random_legal(ts.action_mask, rng))
    assert (venv.field("phase")[:, 0] == PHASE_PLAY).all()
    assert (venv.field("bids")[:, :4].sum(axis=1) != 13).all()
    assert np.array_equal(ts.current_player, (venv.field("dealer")[:, 0] + 1) % 4)  # §4.5 förhand leads
    assert (ts.action_mask[:, BID_BASE:] == 0).all()


@pytest.mark.parametrize(
    ("options", "aside"),
    [({"num_players": 5}, 2), ({"num_players": 6, "trump_mode": "turn_up"}, 3), ({"num_players": 8}, 4)],
)
def test_cards_set_aside_are_hidden_and_in_the_full_state(options: dict[str, object], aside: int) -> None:
    """RULES.md §4.2: the cards left after the deal are set aside (less the turn-up, which is face up);
    state() holds them after the hands."""
    venv = vector.make(GAME, B, seed=8, **options)
    venv.reset()
    n = venv.num_players
    deck = venv.decks()
    k = 52 // n
    for i in range(B):
        rest = [int(c) for c in deck[i, n * k :]]
        if options.get("trump_mode") == "turn_up":
            assert venv.field("turn_up")[i, 0] == rest.pop(0)
        assert int(venv.field("set_aside")[i, 0]) == sum(1 << c for c in rest) and len(rest) == aside
    full = venv.state()
    assert full.shape == (B, (n + 1) * 52 + venv.encoder.size)
    assert (full[:, n * 52 : (n + 1) * 52].sum(axis=1) == aside).all()


def test_a_drawn_trump_card_is_drawn_before_every_deal() -> None:
    """RULES.md §4.3 drawn_card: the trump is the suit of a card drawn from the full pack (its place unknown)."""
    venv = vector.make(GAME, B, seed=6, trump_mode="drawn_card", num_players=3, max_cards=2)
    venv.reset()
    rng = np.random.default_rng(3)
    seen = []
    for _ in range(3):  # three deals: 2, 1, 2 cards
        drawn = venv.field("drawn_card")[:, 0].copy()
        assert ((drawn >= 0) & (drawn < 52)).all() and np.array_equal(venv.field("trump")[:, 0], drawn // 13)
        seen.append(drawn)
        for _ in range(3 + 3 * venv.export_state(0).deal_tricks):  # 3 bids, then 3 cards a trick
            ts = venv.step(random_legal(venv.observe(venv.field("to_act")[:, 0])[1], rng))
    assert ts.terminated.all()
    assert not all(np.array_equal(seen[0], s) for s in seen[1:])


def test_export_and_import_mid_bidding() -> None:
    """A rules state in the bidding, imported, bids and plays on as the AEC env does."""
    rng = np.random.default_rng(5)
    options = {"num_players": 3, "episode": "deal", "hand_size": 4, "trump_mode": "turn_up"}
    twin = make(GAME, raw=True, **options)
    twin.reset(seed=12)
    twin.step(int(rng.choice(np.flatnonzero(twin.observe(twin.agent_selection)["action_mask"]))))
    assert twin.game_state.phase == PHASE_BIDDING
    venv = vector.make(GAME, 3, seed=1, **options)
    venv.reset()
    venv.import_state(2, twin.game_state.copy())
    assert venv.export_state(2).bids == twin.game_state.bids
    for step in range(2 + 12):
        for seat in range(3):
            obs, mask = venv.observe(np.full(3, seat))
            want = twin.observe(f"player_{seat}")
            assert np.array_equal(obs[2], want["observation"]), (step, seat)
            assert np.array_equal(mask[2], want["action_mask"]), (step, seat)
        actions = random_legal(venv.observe(np.maximum(venv.field("to_act")[:, 0], 0))[1], rng)
        ts = venv.step(actions)
        twin.step(int(actions[2]))
        assert ts.rewards[2].tolist() == [twin.rewards[f"player_{s}"] for s in range(3)]
    assert ts.terminated[2] and twin.terminations["player_0"]


def test_import_refuses_what_is_not_an_oh_hell_position() -> None:
    venv = vector.make(GAME, 2, seed=0)
    venv.reset()
    twin = make(GAME, raw=True)
    twin.reset(seed=0)
    state = twin.game_state.copy()
    with pytest.raises(OptionError, match="takes a OhHellState, got ClassicWhistState"):
        venv.import_state(0, ClassicWhistState(4, 0))
    state.bids[1] = 14  # more than the 13 tricks of the deal
    with unchanged(venv), pytest.raises(OptionError, match="inconsistent state"):
        venv.import_state(0, state)
