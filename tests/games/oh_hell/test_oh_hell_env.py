"""``oh_hell_v0`` through the PettingZoo env: PL-6 as a full deal, the action space, the observation, no leaks."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.spaces import Discrete

from whist_env import oh_hell_v0
from whist_env.cards import cards_of, format_cards, mask_of, parse_card, parse_cards
from whist_env.errors import IllegalActionError, OptionError
from whist_env.games.oh_hell.rules import BID_BASE, OhHellState, schedule
from whist_env.rules.core import PHASE_BIDDING
from whist_env.testing import play_random_episode

PL6_HANDS = {0: "AH 2C", 1: "KH 3C", 2: "QH AC"}


def deck_for(hands: dict[int, str], dealer: int) -> list[str]:
    """RULES.md §4.2: deck[i] → seat (dealer+1+i) % n for i < n*k; the other cards follow."""
    n = len(hands)
    per_seat = {s: h.split() for s, h in hands.items()}
    k = len(per_seat[0])
    deck = [per_seat[(dealer + 1 + i) % n][i // n] for i in range(n * k)]
    used = set(parse_cards(deck))
    return deck + format_cards([c for c in range(52) if c not in used]).split()


def legal(env: oh_hell_v0.raw_env) -> list[int]:
    return [int(a) for a in np.flatnonzero(env.observe(env.agent_selection)["action_mask"])]


def test_pl6_mini_deal_through_the_env() -> None:
    env = oh_hell_v0.env(num_players=3, episode="deal", hand_size=2)
    env.reset(seed=0, options={"deck": deck_for(PL6_HANDS, 2), "dealer": 2})
    assert env.action_space("player_0") == Discrete(52 + 3)
    for s, h in PL6_HANDS.items():
        assert env.raw.game_state.hands[s] == mask_of(parse_cards(h))
    assert env.agent_selection == "player_0"  # förhand bids first
    assert legal(env) == [52, 53, 54]
    env.step(BID_BASE + 1)
    env.step(BID_BASE + 0)
    assert env.agent_selection == "player_2"
    assert legal(env) == [BID_BASE + 0, BID_BASE + 2]  # the dealer may not bid 2 - 1 = 1
    env.step(BID_BASE + 0)
    assert env.agent_selection == "player_0"  # förhand leads
    assert legal(env) == parse_cards("2C AH")
    env.step(parse_card("AH"))
    assert legal(env) == [parse_card("KH")]
    for card in ("KH", "QH", "2C", "3C"):
        env.step(parse_card(card))
    assert env.agent_selection == "player_2"
    env.step(parse_card("AC"))
    expected = {"player_0": 11.0, "player_1": 10.0, "player_2": 0.0}
    assert env.rewards == expected
    assert all(env.terminations.values())
    for agent in env.agent_iter():
        _, reward, term, _, info = env.last()
        assert term and reward == expected[agent]
        assert info["winners"].tolist() == [1, 0, 0] and info["scores"].tolist() == [11, 10, 0]
        assert info["last_deal_bids"].tolist() == [1, 0, 0] and info["last_deal"] == 0
        env.step(None)


@pytest.mark.parametrize(
    ("options", "size"),
    [({}, 52 + 14), ({"num_players": 2}, 52 + 27), ({"num_players": 8}, 52 + 7), ({"start_cards": 10}, 52 + 11),
     ({"episode": "deal", "hand_size": 3}, 52 + 4), ({"num_players": 5, "max_cards": 2}, 52 + 3)],
)  # fmt: skip
def test_action_space_is_cards_then_bids(options: dict[str, object], size: int) -> None:
    env = oh_hell_v0.raw_env(**options)  # type: ignore[arg-type]
    assert env.action_space("player_0") == Discrete(size)
    assert env.observation_spaces["player_0"]["action_mask"].shape == (size,)
    assert env.game.describe_action(size - 1) == f"bid {size - 53}"


def test_mask_shows_exactly_the_legal_bids_or_cards() -> None:
    env = oh_hell_v0.raw_env(num_players=4, max_cards=5)
    env.reset(seed=3)
    game, state = env.game, env.game_state
    rng = np.random.default_rng(0)
    checked = 0
    while not state.done and checked < 400:
        mask = env.observe(env.agent_selection)["action_mask"]
        assert [int(a) for a in np.flatnonzero(mask)] == game.legal_actions(state)
        if state.phase == PHASE_BIDDING:
            assert not mask[:52].any() and mask[52 : 52 + state.deal_tricks + 1].sum() >= state.deal_tricks
            assert not mask[52 + state.deal_tricks + 1 :].any()
        else:
            assert not mask[52:].any()
        for agent in env.agents:  # only the seat to act has a mask
            if agent != env.agent_selection:
                assert not env.observe(agent)["action_mask"].any()
        env.step(int(rng.choice(np.flatnonzero(mask))))
        checked += 1


def test_match_returns_are_the_final_totals() -> None:
    env = oh_hell_v0.env(num_players=3, max_cards=3)
    env.reset(seed=11)
    returns = dict.fromkeys(env.possible_agents, 0.0)
    rng = np.random.default_rng(2)
    final = None
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        returns[agent] += reward
        if term or trunc:
            final = info
            env.step(None)
            continue
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert final is not None
    assert [returns[a] for a in env.possible_agents] == final["scores"].tolist()
    best = max(final["scores"])
    assert final["winners"].tolist() == [int(t == best) for t in final["scores"]]


def test_reset_with_trump_card() -> None:
    env = oh_hell_v0.raw_env(trump_mode="drawn_card", episode="deal", hand_size=5)
    env.reset(seed=0, options={"deck": list(range(52)), "dealer": 0, "trump_card": "7D"})
    state = env.game_state
    assert isinstance(state, OhHellState)
    assert state.drawn_card == parse_card("7D") and state.trump == 1
    view = env.view("player_2")
    decoded = env.encoder.layout.unpack(env.observe("player_2")["observation"])
    assert decoded["drawn_card"] == [parse_card("7D")] and decoded["trump"] == "♦"
    assert (view.unseen | view.hand) >> parse_card("7D") & 1  # public card, unknown place: not marked seen
    with pytest.raises(OptionError, match="needs trump_mode='drawn_card'"):
        oh_hell_v0.raw_env().reset(options={"trump_card": "7D"})


def test_illegal_bid_raw_raises_with_the_hook_rule() -> None:
    env = oh_hell_v0.raw_env(num_players=2, episode="deal", hand_size=1)
    env.reset(seed=0, options={"dealer": 1})
    env.step(BID_BASE + 1)
    with pytest.raises(IllegalActionError, match=r"seat 1 cannot play bid 0: hook rule .*; legal: bid 1"):
        env.step(BID_BASE + 0)


def test_observation_pieces_decode() -> None:
    env = oh_hell_v0.raw_env(num_players=4, max_cards=3, trump_mode="turn_up")
    env.reset(seed=0, options={"deck": list(range(52)), "dealer": 3})
    lay = env.encoder.layout
    obs = lay.unpack(env.observe("player_1")["observation"])
    assert obs["hand_size"] == 3 and obs["deals_after"] == 4 and obs["phase"] == "bidding"
    assert obs["turn_up"] == [12] and obs["trump"] == "♣"  # deck[12] = AC is turned
    unseen = obs["unseen"]
    assert isinstance(unseen, list) and 12 not in unseen and 13 in unseen  # set-aside cards are unseen
    assert all(obs[f"bid[{r}]"] == "not yet" for r in ("me", "+1", "+2", "+3"))
    assert obs["dealer"] == "+2" and obs["leader"] == "+3" and obs["to_act"] == "+3"
    env.step(BID_BASE + 2)  # player_0 bids 2
    env.step(BID_BASE + 0)  # player_1 bids 0
    obs = lay.unpack(env.observe("player_1")["observation"])
    assert obs["bid[me]"] == "0" and obs["bid[+3]"] == "2" and obs["bid[+1]"] == "not yet"
    assert obs["need[me]"] == 0 and obs["need[+3]"] == 2 and obs["need[+1]"] is None
    env.step(BID_BASE + 0)
    env.step(BID_BASE + 0)  # 2 + 0 + 0 + 0 = 2 ≠ 3
    # seat 0 holds 2C 6C TC; seat 1 3C 7C JC; seat 2 4C 8C QC; seat 3 5C 9C KC; clubs all round
    for card in ("TC", "JC", "QC", "KC"):
        env.step(parse_card(card))
    obs = lay.unpack(env.observe("player_1")["observation"])
    assert obs["tricks[+2]"] == 1 and obs["last_trick[+2]"] == [parse_card("KC")]
    assert obs["need[+3]"] == 2 and obs["need[+2]"] is None  # seat 3 took one trick over its bid of 0
    assert obs["lost"] == ["+2"]  # seat 0 (+3) needs 2 of the 2 tricks left: still possible
    for card in ("9C", "6C", "7C", "8C"):  # seat 3 wins again: seat 0 cannot make 2 any more
        env.step(parse_card(card))
    obs = lay.unpack(env.observe("player_1")["observation"])
    assert obs["lost"] == ["+2", "+3"] and obs["need[+3]"] == 2
    for agent in env.possible_agents:
        text = env.describe(env.observe(agent))
        assert "bid[me]" in text and "hand_size: 3" in text


def test_behind_shows_the_standings_in_a_match() -> None:
    env = oh_hell_v0.raw_env(num_players=3, max_cards=2)
    env.reset(seed=0, options={"deck": deck_for(PL6_HANDS, 2), "dealer": 2})
    for action in (53, 52, 52, *parse_cards("AH KH QH 2C 3C AC")):
        env.step(action)
    state = env.game_state
    assert state.scores == [11, 10, 0] and state.deal_index == 1
    for seat, expect in ((0, (0, 1, 2)), (1, (1, 2, 0)), (2, (2, 0, 1))):
        obs = env.encoder.layout.unpack(env.observe(f"player_{seat}")["observation"])
        assert (obs["behind[me]"], obs["behind[+1]"], obs["behind[+2]"]) == expect
        assert obs["deals_after"] == 1 and obs["hand_size"] == 1


def test_state_holds_the_cards_set_aside() -> None:
    env = oh_hell_v0.raw_env(num_players=5, episode="deal", hand_size=10)
    env.reset(seed=0, options={"deck": list(range(52)), "dealer": 0})
    text = env.describe_state(env.state())
    assert "set_aside: K♠ A♠" in text


# ----------------------------------------------------------------------------- no leaks
def _containers(state: OhHellState, seat: int, unseen: int) -> list[tuple[str, int, int]]:
    """Places holding cards ``seat`` cannot see: other hands and the cards set aside."""
    out = [("hand", s, state.hands[s] & unseen) for s in range(state.num_players) if s != seat]
    out.append(("aside", -1, state.set_aside & unseen))
    return [c for c in out if c[2]]


def _move(state: OhHellState, where: tuple[str, int, int], out: int, into: int) -> None:
    if where[0] == "hand":
        state.hands[where[1]] = state.hands[where[1]] ^ (1 << out) ^ (1 << into)
    else:
        state.set_aside = state.set_aside ^ (1 << out) ^ (1 << into)


@pytest.mark.parametrize("trump_mode", ["none", "drawn_card", "turn_up"])
@pytest.mark.parametrize("n", [2, 3, 5])
def test_no_leak_between_other_hands_and_the_cards_set_aside(trump_mode: str, n: int) -> None:
    raw = oh_hell_v0.raw_env(num_players=n, trump_mode=trump_mode, max_cards=4)
    game, encoder = raw.game, raw.encoder
    rng = np.random.default_rng(n)
    swaps = drawn_moved = 0
    for _ in range(6):
        for state in play_random_episode(game, rng, check=False):
            if state.done:
                continue
            assert isinstance(state, OhHellState)
            seat = state.to_act
            view = game.view(state, seat)
            places = _containers(state, seat, view.unseen)
            if len(places) < 2:
                continue
            i, j = rng.choice(len(places), 2, replace=False)
            a, b = places[int(i)], places[int(j)]
            ca = [c for c in cards_of(a[2])]
            cb = [c for c in cards_of(b[2])]
            x = state.drawn_card if state.drawn_card in ca else ca[int(rng.integers(len(ca)))]
            y = cb[int(rng.integers(len(cb)))]
            drawn_moved += state.drawn_card in (x, y)
            twin = state.copy()
            assert isinstance(twin, OhHellState)
            _move(twin, a, x, y)
            _move(twin, b, y, x)
            game.check_invariants(twin)  # still a consistent deal
            after = game.view(twin, seat)
            assert np.array_equal(encoder.encode(view), encoder.encode(after)), f"seat {seat} sees a hidden card"
            assert after.legal == view.legal
            swaps += 1
    assert swaps > 20
    if trump_mode == "drawn_card":
        assert drawn_moved > 0


def test_leftovers_and_other_hands_are_unseen() -> None:
    raw = oh_hell_v0.raw_env(num_players=6, episode="deal", hand_size=8)
    raw.reset(seed=4)
    state = raw.game_state
    assert isinstance(state, OhHellState)
    for seat in range(6):
        view = raw.game.view(state, seat)
        others = 0
        for s in range(6):
            if s != seat:
                others |= state.hands[s]
        assert view.unseen == others | state.set_aside
        assert state.set_aside.bit_count() == 4


def test_schedule_through_the_env_for_every_player_count() -> None:
    for n in range(2, 9):
        env = oh_hell_v0.raw_env(num_players=n)
        assert env.game.schedule == schedule(n)  # type: ignore[attr-defined]
        env.reset(seed=n)
        obs = env.encoder.layout.unpack(env.observe(env.agent_selection)["observation"])
        assert obs["hand_size"] == 52 // n and obs["deals_after"] == 2 * (52 // n) - 2
