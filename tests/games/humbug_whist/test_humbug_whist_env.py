"""``humbug_whist_v0`` through the PettingZoo API: deals from a given deck, the exchange, rewards, no leaks."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from gymnasium.spaces import Discrete

from whist_env import humbug_whist_v0
from whist_env.cards import cards_of, format_cards, parse_card
from whist_env.games.humbug_whist.rules import EXCHANGE, KEEP

CANONICAL = list(range(52))


def unpack(env: humbug_whist_v0.raw_env, agent: str) -> dict[str, Any]:
    """``agent``'s observation decoded piece by piece."""
    return dict(env.encoder.layout.unpack(env.observe(agent)["observation"]))


def test_reset_deals_a_given_deck_as_rules_1_3() -> None:
    env = humbug_whist_v0.raw_env()
    env.reset(options={"deck": CANONICAL, "dealer": 1})
    assert env.agent_selection == "player_0"  # the non-dealer decides first
    obs = env.observe("player_0")
    assert format_cards(unpack(env, "player_0")["hand"]) == "3C 7C JC 2D 6D TD AD 5H 9H KH 4S 8S QS"
    dealer = unpack(env, "player_1")
    assert format_cards(dealer["hand"]) == "5C 9C KC 4D 8D QD 3H 7H JH 2S 6S TS AS"
    assert dealer["turn_up"] == [parse_card("AS")] and dealer["turn_up_status"] == "face_up"
    assert dealer["dealer"] == "me" and dealer["phase"] == "exchange"
    assert list(np.flatnonzero(obs["action_mask"])) == [KEEP, EXCHANGE]
    assert env.action_space("player_0") == Discrete(54) and obs["action_mask"].shape == (54,)
    # the blinds are in state() only
    text = env.describe_state(env.state())
    assert "blind[player_0]: 2♣ 6♣ 10♣" in text and "blind[player_1]: 4♣ 8♣ Q♣" in text  # L is N's, R is D's


def test_a_full_rubber_through_env() -> None:
    env = humbug_whist_v0.env()
    env.reset(seed=3)
    rng = np.random.default_rng(3)
    exchanges = 0
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        if term or trunc:
            assert info["games_won"][env.possible_agents.index(agent)] in (0, 1, 2)
            env.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        action = int(legal[rng.integers(len(legal))])
        exchanges += action == EXCHANGE
        env.step(action)
    returns = env.raw.game_state.returns
    assert exchanges > 0 and returns[0] == -returns[1] and 1 <= abs(returns[0]) <= 8


@pytest.mark.parametrize(("episode", "bound"), [("game", 3), ("deal", 13)])
def test_short_episodes(episode: str, bound: int) -> None:
    env = humbug_whist_v0.raw_env(episode=episode)
    env.reset(seed=0)
    total = dict.fromkeys(env.possible_agents, 0.0)
    for agent in env.agent_iter():
        obs, reward, term, trunc, _ = env.last()
        total[agent] += reward
        if term or trunc:
            env.step(None)
            continue
        env.step(int(np.flatnonzero(obs["action_mask"])[-1]))
    s = dict(env.game_state.deal_summary)
    if episode == "game":
        w = s["game_winner"]
        assert total[f"player_{w}"] == s["game_value"] == -total[f"player_{1 - w}"]
    else:
        t = s["tricks"]
        assert total["player_0"] == t[0] - t[1] == -total["player_1"]
    assert 1 <= abs(total["player_0"]) <= bound


def test_wrapped_env_penalises_a_card_in_the_exchange_phase() -> None:
    env = humbug_whist_v0.env()
    env.reset(seed=0)
    agent = env.agent_selection
    env.step(0)
    assert env.rewards[agent] == -1.0 and all(env.terminations.values())
    assert env.infos[agent]["illegal_action"] == 0 and "legal: KEEP EXCHANGE" in env.illegal_reason


# ----------------------------------------------------------------------------- no leaks of the blinds
def swapped(deck: list[int], i: int, j: int) -> list[int]:
    out = deck[:]
    out[i], out[j] = out[j], out[i]
    return out


def rollout(deck: list[int], decisions: tuple[int, int], seat: int, **options: Any) -> list[Any]:
    """Everything ``seat`` is shown (observation, mask, describe, render, info, reward) along one episode."""
    env = humbug_whist_v0.raw_env(render_mode="ansi", render_seat=seat, **options)
    env.reset(seed=5, options={"deck": deck, "dealer": 0})
    me = f"player_{seat}"
    shown: list[Any] = []
    choices = list(decisions)  # the non-dealer (seat 1), then the dealer (seat 0)
    rng = np.random.default_rng(9)
    steps = 0
    while me in env.agents and steps < 200:
        obs = env.observe(me)
        shown.append((obs["observation"].tobytes(), obs["action_mask"].tobytes(), env.describe(obs)))
        shown.append((env.render(), repr(env.infos[me]), env.rewards[me], env.agent_selection))
        agent = env.agent_selection
        if env.terminations[agent]:
            env.step(None)
            continue
        if choices:
            env.step(choices.pop(0))
        else:
            # the same policy on both decks: a seat's choices depend only on its own cards here
            mask = env.observe(agent)["action_mask"]
            legal = np.flatnonzero(mask)
            env.step(int(legal[rng.integers(len(legal))]))
        steps += 1
    return shown


# RULES.md §1.3 positions: deck[i] → [L, N, R, D][i % 4]; deck[51] is the turn-up.
L0, N0, R0, D0 = 0, 1, 2, 3


@pytest.mark.parametrize(
    ("decisions", "seat", "i", "j"),
    [
        ((KEEP, KEEP), 0, L0, R0 + 8),  # both blinds untaken: nobody sees them
        ((KEEP, KEEP), 1, L0 + 4, R0),
        ((EXCHANGE, KEEP), 0, N0, R0),  # the dealer never sees the non-dealer's put-away hand, nor R
        ((KEEP, EXCHANGE), 1, D0, L0),  # the non-dealer never sees the dealer's put-away hand, nor L
    ],
)
@pytest.mark.parametrize("options", [{}, {"exchange_order": "simultaneous"}, {"include_history": False}])
def test_blind_contents_never_reach_a_seat(
    decisions: tuple[int, int], seat: int, i: int, j: int, options: dict[str, Any]
) -> None:
    twin = swapped(CANONICAL, i, j)
    first = rollout(CANONICAL, decisions, seat, episode="deal", **options)
    assert first == rollout(twin, decisions, seat, episode="deal", **options)
    # the twins really differ in the hidden state
    a, b = humbug_whist_v0.raw_env(), humbug_whist_v0.raw_env()
    a.reset(options={"deck": CANONICAL, "dealer": 0})
    b.reset(options={"deck": twin, "dealer": 0})
    assert not np.array_equal(a.state(), b.state())


def test_simultaneous_dealer_sees_nothing_of_the_pending_decision() -> None:
    shown = {}
    for choice in (KEEP, EXCHANGE):
        env = humbug_whist_v0.raw_env(render_mode="ansi", render_seat=0, exchange_order="simultaneous")
        env.reset(options={"deck": CANONICAL, "dealer": 0})
        env.step(choice)
        obs = env.observe("player_0")
        shown[choice] = (obs["observation"].tobytes(), env.describe(obs), env.render(), repr(env.infos["player_0"]))
        env.step(KEEP)
        assert unpack(env, "player_0")["exchange[opponent]"] == ("exchange" if choice == EXCHANGE else "keep")
    assert shown[KEEP] == shown[EXCHANGE]


def test_dealer_exchange_in_the_observation() -> None:
    env = humbug_whist_v0.raw_env()
    env.reset(options={"deck": CANONICAL, "dealer": 0})
    env.step(KEEP)
    env.step(EXCHANGE)
    n = unpack(env, "player_1")
    assert n["turn_up"] == [] and n["trump"] == "♠" and n["turn_up_status"] == "discarded"
    assert n["discarded_turn_up"] == [parse_card("AS")] and parse_card("AS") not in n["unseen"]
    assert n["exchange[me]"] == "keep" and n["exchange[opponent]"] == "exchange" and n["put_away"] == []
    d = unpack(env, "player_0")
    assert format_cards(d["put_away"]) == "5C 9C KC 4D 8D QD 3H 7H JH 2S 6S TS AS"
    assert not set(d["put_away"]) & set(d["unseen"])
    assert cards_of(env.game_state.hands[0]) == d["hand"]
