"""The environments at their edges (issue 16): no leak after an illegal action, rejected resets that
change nothing, strict deck and option checks, call-order errors, a current ``info["phase"]`` (an index into
``game.phase_names``), and one policy for reset options and actions in the AEC and single-agent envs."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np
import pytest

from whist_env import make
from whist_env.cards import card_str
from whist_env.envs.single_agent import make_single_agent
from whist_env.errors import CallOrderError, OptionError
from whist_env.registry import game_ids
from whist_env.testing import same_info

ALL_CARDS = list(range(52))


def first_illegal(env: Any) -> int:
    return int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"] == 0)[0])


def first_legal(env: Any) -> int:
    return int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0])


def snapshot(env: Any) -> tuple:
    """Everything a rejected call must leave as it was."""
    return (
        env.state().tobytes(),
        env.agent_selection,
        {a: env.observe(a)["observation"].tobytes() for a in env.agents},
        repr(env.infos),
        dict(env.rewards),
        dict(env.terminations),
    )


# ---------------------------------------------------------------------- 1. no leak after an illegal action
@pytest.mark.parametrize("game_id", game_ids())
def test_illegal_action_goes_only_to_the_offender(game_id: str) -> None:
    env = make(game_id)
    env.reset(seed=3)
    offender = env.agent_selection
    seat = env.raw.agent_seat[offender]
    refused = first_illegal(env)
    env.step(refused)
    assert env.infos[offender]["illegal_action"] == refused
    assert "legal:" in env.illegal_reason and env.game_record().illegal_action == refused
    for agent in env.agents:
        assert env.terminations[agent]
        info = env.infos[agent]
        assert info["illegal_seat"] == seat and info["illegal_actions"] == 1
        if agent != offender:
            assert info["illegal_action"] == -1  # the refused action may be a card of the offender's hand
    env.reset(seed=4)
    assert env.illegal_reason == "" and all(env.infos[a]["illegal_seat"] == -1 for a in env.agents)


# ---------------------------------------------------------------------- 2. a rejected reset changes nothing
BAD_RESETS: list[dict[str, Any]] = [
    {"dealer": 7},
    {"deck": list(range(51))},
    {"deck": set(ALL_CARDS)},
    {"deck": ["XX", *range(1, 52)]},
    {"decks": ALL_CARDS},
]


@pytest.mark.parametrize("game_id", game_ids())
@pytest.mark.parametrize("bad", BAD_RESETS, ids=lambda o: ",".join(o))
def test_rejected_reset_changes_nothing_aec(game_id: str, bad: dict[str, Any]) -> None:
    env, twin = make(game_id, raw=True), make(game_id, raw=True)
    env.reset(seed=1)
    twin.reset(seed=1)
    env.step(first_legal(env))
    twin.step(first_legal(twin))
    before = snapshot(env)
    for seed in (None, 99):
        with pytest.raises(OptionError):
            env.reset(seed=seed, options=bad)
        assert snapshot(env) == before
    env.reset()
    twin.reset()  # the same next deal as if the rejected resets had never been called
    assert snapshot(env) == snapshot(twin)


@pytest.mark.parametrize("game_id", game_ids())
def test_rejected_reset_changes_nothing_single_agent(game_id: str) -> None:
    env, twin = make_single_agent(game_id), make_single_agent(game_id)
    env.reset(seed=1)
    twin.reset(seed=1)
    before = env.get_state()
    for bad in [*BAD_RESETS, {"learner_seat": 9}, {"learner_seat": True}]:
        for seed in (None, 99):
            with pytest.raises(OptionError):
                env.reset(seed=seed, options=bad)
    after = env.get_state()
    assert after["rng"] == before["rng"] and after["episode"] == before["episode"]
    obs, info = env.reset()
    obs_twin, info_twin = twin.reset()
    assert np.array_equal(obs, obs_twin) and same_info(info, info_twin)


def test_rejected_oh_hell_trump_card_changes_nothing() -> None:
    env, twin = (
        make("oh_hell_v0", raw=True, trump_mode="drawn_card"),
        make("oh_hell_v0", raw=True, trump_mode="drawn_card"),
    )
    env.reset(seed=1)
    twin.reset(seed=1)
    for card in ("XX", 52, 1.0):
        with pytest.raises(OptionError, match="trump_card"):
            env.reset(seed=99, options={"trump_card": card})
    env.reset()
    twin.reset()
    assert snapshot(env) == snapshot(twin)


def test_bad_seed_is_an_option_error_and_changes_nothing() -> None:
    env, twin = make("german_whist_v0"), make("german_whist_v0")
    env.reset(seed=1)
    twin.reset(seed=1)
    for seed in (-1, "x", 1.5):
        with pytest.raises(OptionError, match="seed"):
            env.reset(seed=seed)  # type: ignore[arg-type]
    env.reset()
    twin.reset()
    assert snapshot(env) == snapshot(twin)
    single = make_single_agent("german_whist_v0")
    with pytest.raises(OptionError, match="seed"):
        single.reset(seed=-1)


# ---------------------------------------------------------------------- 3. decks and options
@pytest.mark.parametrize(
    ("deck", "message"),
    [
        (set(ALL_CARDS), "ordered sequence"),
        (frozenset(ALL_CARDS), "ordered sequence"),
        (dict.fromkeys(ALL_CARDS), "ordered sequence"),
        (OrderedDict.fromkeys(ALL_CARDS), "ordered sequence"),
        (iter(ALL_CARDS), "ordered sequence"),
        (np.arange(52).reshape(4, 13), "ordered sequence"),
        (["XX", *range(1, 52)], "cannot read 'XX' as a card"),
        ([1.0, *range(1, 52)], "deck entry 1.0 is not a card"),
    ],
    ids=["set", "frozenset", "dict", "ordereddict", "iterator", "2d-array", "bad-name", "float"],
)
def test_deck_must_be_an_ordered_sequence_of_cards(deck: Any, message: str) -> None:
    for env in (make("classic_whist_v0"), make_single_agent("classic_whist_v0")):
        with pytest.raises(OptionError, match=message):
            env.reset(options={"deck": deck})


@pytest.mark.parametrize(
    "deck", [ALL_CARDS, tuple(ALL_CARDS), range(52), np.arange(52), [card_str(c) for c in range(52)]]
)
def test_ordered_decks_are_accepted(deck: Any) -> None:
    env = make("classic_whist_v0", raw=True)
    env.reset(options={"deck": deck, "dealer": 0})
    ref = make("classic_whist_v0", raw=True)
    ref.reset(options={"deck": ALL_CARDS, "dealer": 0})
    assert np.array_equal(env.state(), ref.state())


@pytest.mark.parametrize("options", [[("deck", ALL_CARDS)], "deck", 3, ("dealer", 1)])
def test_reset_options_must_be_a_dict(options: Any) -> None:
    for env in (make("german_whist_v0"), make_single_agent("german_whist_v0")):
        with pytest.raises(OptionError, match="options must be a dict"):
            env.reset(options=options)


@pytest.mark.parametrize("game_id", game_ids())
def test_unknown_reset_option_raises_naming_the_known_ones_in_both_envs(game_id: str) -> None:
    for env in (make(game_id), make(game_id, raw=True), make_single_agent(game_id)):
        with pytest.raises(OptionError, match=r"unknown reset option\(s\) \['decks'\]; known: \['deck', 'dealer'"):
            env.reset(seed=0, options={"decks": []})
        with pytest.raises(OptionError, match=r"unknown reset option\(s\) \['options'\]"):
            env.reset(seed=0, options={"options": np.array([1, 1])})  # not PettingZoo's probe


@pytest.mark.parametrize("bad", ["x", None, True, float("nan"), float("inf"), [1]])
def test_bad_illegal_reward_is_an_option_error(bad: Any) -> None:
    with pytest.raises(OptionError, match="illegal_reward must be a finite number"):
        make("humbug_v0", illegal_reward=bad)
    with pytest.raises(OptionError, match="illegal_reward must be a finite number"):
        make_single_agent("humbug_v0", illegal_reward=bad)


def test_illegal_reward_accepts_numbers() -> None:
    assert make("humbug_v0", illegal_reward=np.float32(-2)).illegal_reward == -2.0
    assert make_single_agent("humbug_v0", illegal_reward=-5).illegal_reward == -5.0


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"reward": np.array(["win", "trick_diff"])}, "reward=.* is not allowed"),
        ({"num_deals": np.int64(2)}, "num_deals must be int"),
        ({"render_seat": True}, "render_seat must be None or a seat"),
    ],
)
def test_odd_constructor_values_are_option_errors(options: dict[str, Any], message: str) -> None:
    with pytest.raises(OptionError, match=message):
        make("german_whist_v0", **options)


# ---------------------------------------------------------------------- 4. calls out of order
@pytest.mark.parametrize("raw", [False, True])
def test_calls_before_reset_say_to_call_reset(raw: bool) -> None:
    env = make("german_whist_v0", raw=raw)
    for call in (env.last, lambda: env.observe("player_0"), lambda: env.step(0), lambda: env.step(None), env.state):
        with pytest.raises(CallOrderError, match=r"call reset\(\)"):
            call()
    with pytest.raises(CallOrderError, match=r"call reset\(\) before render\(\)"):
        make("german_whist_v0", raw=raw, render_mode="ansi").render()


def play_to_the_end(env: Any) -> None:
    for _ in env.agent_iter():
        _, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else first_legal(env))


@pytest.mark.parametrize("raw", [False, True])
@pytest.mark.parametrize("illegal", [False, True])
def test_calls_after_the_game_ended_say_to_call_reset(raw: bool, illegal: bool) -> None:
    env = make("humbug_v0", raw=raw)
    env.reset(seed=0)
    if illegal and not raw:
        env.step(first_illegal(env))
    play_to_the_end(env)
    assert env.agents == []
    for call in (env.last, lambda: env.step(0), lambda: env.step(None)):
        with pytest.raises(CallOrderError, match=r"the episode is over; call reset\(\)"):
            call()
    assert not env.observe("player_0")["action_mask"].any()  # the final observation, as PettingZoo's envs give
    env.reset(seed=1)
    assert env.last()[2] is False


def test_single_agent_step_after_the_end_is_a_call_order_error() -> None:
    env = make_single_agent("humbug_v0")
    with pytest.raises(CallOrderError, match=r"call reset\(\)"):
        env.step(0)
    env.reset(seed=0)
    env.step(int(np.flatnonzero(~env.action_masks())[0]))
    with pytest.raises(CallOrderError, match=r"the episode is over; call reset\(\)"):
        env.step(0)


# ---------------------------------------------------------------------- 5. info["phase"] is current
@pytest.mark.parametrize(
    ("game_id", "options"),
    [(g, {}) for g in game_ids()] + [("oh_hell_v0", {"num_players": 3}), ("humbug_whist_v0", {"episode": "deal"})],
)
def test_info_phase_is_the_phase_of_the_next_decision(game_id: str, options: dict[str, Any]) -> None:
    env = make(game_id, **options)
    rng = np.random.default_rng(0)
    for seed in range(2):
        env.reset(seed=seed)
        for agent in env.agent_iter():
            _, _, term, trunc, info = env.last()
            if term or trunc:
                assert env.game.phase_names[info["phase"]] == "over"
                env.step(None)
                continue
            assert env.game.phase_names[info["phase"]] == env.raw.view(agent).phase
            assert all(env.infos[a]["phase"] == info["phase"] for a in env.agents)
            env.step(int(rng.choice(np.flatnonzero(env.observe(agent)["action_mask"]))))


# ---------------------------------------------------------------------- one parser for actions
@pytest.mark.parametrize("action", [-1, 52, 1.5, "3", True, np.array([1, 2]), np.float64(3), None])
def test_both_envs_reject_bad_actions_alike(action: Any) -> None:
    aec = make("german_whist_v0")
    aec.reset(seed=0)
    single = make_single_agent("german_whist_v0")
    single.reset(seed=0)
    with pytest.raises(ValueError) as from_aec:
        aec.step(action)
    with pytest.raises(ValueError) as from_single:
        single.step(action)
    assert str(from_aec.value) == str(from_single.value)


@pytest.mark.parametrize("wrap", [int, np.int64, np.int8, lambda a: np.array(a), lambda a: np.array([a])])
def test_both_envs_accept_integer_actions(wrap: Any) -> None:
    aec = make("german_whist_v0", raw=True)
    aec.reset(seed=0)
    card = first_legal(aec)
    aec.step(wrap(card))
    assert aec.game_state.history[0][1] == card
    single = make_single_agent("german_whist_v0", learner_seat=0)
    single.reset(seed=0)
    card = int(np.flatnonzero(single.action_masks())[0])
    single.step(wrap(card))
    assert card in [c for _, c in single.game_state.history]


# ---------------------------------------------------------------------- one card notation for people
def test_errors_name_cards_as_the_screens_show_them() -> None:
    """``10♠`` in the render's trick line, the same ``10♠`` in an error (raw env, wrapped env, single-agent env, the
    learner env); ``parse_card`` reads it back."""
    from whist_env.cards import card_pretty, parse_card
    from whist_env.errors import IllegalActionError

    env = make("german_whist_v0", raw=True, render_mode="ansi")
    env.reset(seed=2)
    led = first_legal(env)
    env.step(led)
    screen = env.render()
    assert f"trick: player_{env.game_state.trick[0][0]} {card_pretty(led)}" in screen
    refused = first_illegal(env)
    with pytest.raises(IllegalActionError) as err:
        env.step(refused)
    message = str(err.value)
    names = message.split("legal: ")[1].split()
    assert f"cannot play {card_pretty(refused)}:" in message
    assert [parse_card(n) for n in names] == list(err.value.legal)
    assert names == [card_pretty(c) for c in err.value.legal]
    wrapped = make("german_whist_v0")
    wrapped.reset(seed=2)
    wrapped.step(led)
    wrapped.step(refused)
    single = make_single_agent("german_whist_v0", learner_seat=0)
    single.reset(seed=2)
    single.step(int(np.flatnonzero(~single.action_masks())[0]))
    for reason in (wrapped.illegal_reason, single.illegal_reason):
        legal = reason.split("legal: ")[1].split()
        assert [card_pretty(parse_card(n)) for n in legal] == legal
