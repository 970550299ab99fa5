"""``german_whist_v0`` through the PettingZoo env: reset from a deck, observation, state(), render, rewards."""

from __future__ import annotations

import numpy as np
import pytest

from whist_env import german_whist_v0
from whist_env.cards import cards_of, parse_card, parse_cards
from whist_env.errors import OptionError
from whist_env.games.german_whist.rules import GermanWhistState
from whist_env.registry import get_spec
from whist_env.testing import same_info

CANONICAL = list(range(52))


def test_reset_with_deck_and_dealer_deals_as_rules_5_1() -> None:
    env = german_whist_v0.env()
    env.reset(options={"deck": CANONICAL, "dealer": 1})
    st = env.raw.game_state
    assert isinstance(st, GermanWhistState)
    assert cards_of(st.hands[0]) == CANONICAL[0:26:2] and cards_of(st.hands[1]) == CANONICAL[1:26:2]
    assert st.stock == tuple(CANONICAL[26:])
    assert env.agent_selection == "player_0"  # the non-dealer leads
    obs = env.observe("player_0")
    d = env.raw.encoder.layout.unpack(obs["observation"])
    assert d["turn_up"] == [parse_card("2H")] and d["trump"] == "♥"
    assert d["stage"] == "phase1" and d["stock_size"] == 26 and d["dealer"] == "opponent"
    assert obs["action_mask"].sum() == 13


def test_state_holds_stock_next_draw_and_draws() -> None:
    env = german_whist_v0.raw_env()
    env.reset(options={"deck": CANONICAL, "dealer": 1})
    d = env.hidden_layout.unpack(env.state()[: env.hidden_layout.size])
    assert d["stock"] == CANONICAL[26:] and d["next_draw"] == [parse_card("3H")]
    assert d["draws[player_0]"] == [] and d["draws[player_1]"] == []
    env.step(parse_card("AC"))
    env.step(parse_card("3C"))  # seat 1 loses trick 1 and draws 3H
    d = env.hidden_layout.unpack(env.state()[: env.hidden_layout.size])
    assert d["draws[player_1]"] == [parse_card("3H")] and d["next_draw"] == [parse_card("5H")]
    assert d["stock"] == CANONICAL[28:]
    assert "next_draw: 5♥" in env.describe_state(env.state())


def test_gw6_through_the_env() -> None:
    env = german_whist_v0.env(render_mode="ansi")
    env.reset(options={"deck": CANONICAL, "dealer": 1})
    env.step(parse_card("AC"))
    env.step(parse_card("3C"))
    lay = env.raw.encoder.layout
    loser = lay.unpack(env.observe("player_1")["observation"])
    winner = lay.unpack(env.observe("player_0")["observation"])
    three_h = parse_card("3H")
    assert three_h in loser["hand"] and loser["my_draws"] == [three_h]
    assert winner["my_draws"] == [] and winner["known[opponent]"] == []
    assert winner["opponent_draws"] == 1 and winner["opponent_hand_size"] == 13
    assert winner["prizes[me]"] == [parse_card("2H")] and loser["known[opponent]"] == [parse_card("2H")]
    for name, value in winner.items():
        if isinstance(value, list) and name != "unseen":
            assert three_h not in value, f"3H leaks into the winner's {name}"
    assert three_h in winner["unseen"]
    text = env.raw.describe(env.observe("player_0"))
    assert all("3♥" not in line for line in text.splitlines() if not line.startswith("unseen:"))
    assert same_info(env.infos["player_0"], {**env.infos["player_1"], "balance": 0})
    seat0 = german_whist_v0.env(render_mode="ansi", render_seat=0)
    seat0.reset(options={"deck": CANONICAL, "dealer": 1})
    seat0.step(parse_card("AC"))
    seat0.step(parse_card("3C"))
    text = seat0.render()
    assert isinstance(text, str) and "3♥" not in text and "3H" not in text and "my face-down draws: -" in text
    full = env.render()
    assert isinstance(full, str) and "player_1 drew face down: 3♥" in full


def test_no_leak_through_observe_render_and_info() -> None:
    """Two decks differing only below the new face-up card: the winner of trick 1 sees the same."""
    rng = np.random.default_rng(3)
    for _ in range(50):
        deck = rng.permutation(52).tolist()
        other = deck.copy()
        m = int(rng.integers(29, 52))
        other[27], other[m] = other[m], other[27]
        envs = [german_whist_v0.env(render_mode="ansi", render_seat=s) for s in (0, 1)]
        twins = [german_whist_v0.env(render_mode="ansi", render_seat=s) for s in (0, 1)]
        for e in envs:
            e.reset(options={"deck": deck, "dealer": 0})
        for e in twins:
            e.reset(options={"deck": other, "dealer": 0})
        for _ in range(2):
            mask = envs[0].observe(envs[0].agent_selection)["action_mask"]
            a = int(rng.choice(np.flatnonzero(mask)))
            for e in envs + twins:
                e.step(a)
        winner = envs[0].raw.game_state.last_winner
        agent = f"player_{winner}"
        ob, ot = envs[0].observe(agent), twins[0].observe(agent)
        assert np.array_equal(ob["observation"], ot["observation"])
        assert np.array_equal(ob["action_mask"], ot["action_mask"])
        assert envs[0].raw.describe(ob) == twins[0].raw.describe(ot)
        assert envs[winner].render() == twins[winner].render()
        assert same_info(envs[0].infos[agent], twins[0].infos[agent])


def test_series_rewards_paid_per_deal_and_summed() -> None:
    env = german_whist_v0.env(num_deals=3, reward="trick_diff")
    env.reset(seed=8)
    rng = np.random.default_rng(0)
    dealers = [env.raw.game_state.dealer]
    paid = {"player_0": 0.0, "player_1": 0.0}
    payouts = 0
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        paid[agent] += reward
        if term or trunc:
            env.step(None)
            continue
        deal = env.raw.game_state.deal_index
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        if env.raw.game_state.deal_index != deal:
            dealers.append(env.raw.game_state.dealer)
        if any(env.rewards.values()):
            payouts += 1
    st = env.raw.game_state
    assert dealers == [dealers[0], 1 - dealers[0], dealers[0]]
    assert paid == {"player_0": st.returns[0], "player_1": st.returns[1]}
    assert paid["player_0"] == -paid["player_1"] == st.scores[0]
    assert payouts <= 3


def test_describe_names_every_stage_piece() -> None:
    env = german_whist_v0.env()
    env.reset(seed=0)
    text = env.raw.describe(env.observe(env.agent_selection))
    for piece in ("hand:", "turn_up:", "trump:", "stage: phase1", "stock_size: 26", "opponent_hand_size: 13"):
        assert piece in text


def test_bad_constructor_options() -> None:
    with pytest.raises(OptionError, match="reward='diff' is not allowed; choose one of 'win', 'trick_diff'"):
        german_whist_v0.env(reward="diff")
    with pytest.raises(OptionError, match="german_whist_v0 has no option 'trump'"):
        german_whist_v0.env(trump="hearts")


def test_option_grid_covers_every_option() -> None:
    from whist_env.games.german_whist.rules import GermanWhistConfig

    used = {k for o in get_spec("german_whist_v0").option_grid for k in o}
    assert used == set(GermanWhistConfig.allowed())


def test_gw1_hands_from_named_cards() -> None:
    env = german_whist_v0.raw_env()
    env.reset(options={"deck": [f"{'23456789TJQKA'[i % 13]}{'CDHS'[i // 13]}" for i in range(52)], "dealer": 1})
    st = env.game_state
    assert cards_of(st.hands[0]) == parse_cards("2C 4C 6C 8C TC QC AC 3D 5D 7D 9D JD KD")
