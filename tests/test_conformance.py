"""Conformance tests run over every registered environment and every entry of its spec's option_grid.

A new game is picked up here by its registry line and its spec's option_grid, with no edits to this file.
"""

from __future__ import annotations

import random
import subprocess
import sys
import warnings
from typing import Any

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

import whist_env
from whist_env import make
from whist_env.cards import cards_of
from whist_env.errors import IllegalActionError, OptionError
from whist_env.registry import game_ids, get_spec
from whist_env.testing import case_id, option_cases, play_random_episode

CASES = [pytest.param(g, o, id=case_id(g, o)) for g, o in option_cases()]

# api_test warns twice for any dict observation of an environment outside PettingZoo's own list of
# names, though the {"observation", "action_mask"} dict is the convention of PettingZoo's classic
# games; and it calls reset(options={"options": 1}) to check that reset() takes options: the one unknown
# reset option answered with a warning naming the known ones (any other raises OptionError). Every other
# warning fails the test.
EXPECTED_WARNINGS = (
    "Observation is not a NumPy array",
    "Observation space for each agent probably should be gymnasium.spaces.box or gymnasium.spaces.discrete",
    "ignoring unknown reset option(s) ['options']",
)


def _expected(message: str) -> bool:
    return any(e in message for e in EXPECTED_WARNINGS)


def run_failing_on_unexpected_warnings(fn: Any, *args: Any, **kwargs: Any) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn(*args, **kwargs)
    unexpected = [str(w.message) for w in caught if not _expected(str(w.message))]
    assert not unexpected, f"unexpected warnings: {unexpected}"


@pytest.mark.parametrize(("game_id", "options"), CASES)
def test_pettingzoo_api_test(game_id: str, options: dict[str, Any]) -> None:
    env = make(game_id, **options)
    run_failing_on_unexpected_warnings(api_test, env, num_cycles=300)


@pytest.mark.parametrize(("game_id", "options"), CASES)
def test_pettingzoo_api_test_raw(game_id: str, options: dict[str, Any]) -> None:
    env = make(game_id, raw=True, **options)
    run_failing_on_unexpected_warnings(api_test, env, num_cycles=100)


@pytest.mark.parametrize(("game_id", "options"), CASES)
def test_pettingzoo_seed_test(game_id: str, options: dict[str, Any]) -> None:
    run_failing_on_unexpected_warnings(seed_test, lambda: make(game_id, **options), num_cycles=300)


@pytest.mark.slow
@pytest.mark.parametrize(("game_id", "options"), CASES)
def test_invariants_over_2000_random_games(game_id: str, options: dict[str, Any]) -> None:
    game = make(game_id, raw=True, **options).game
    rng = np.random.default_rng(2024)
    for _ in range(2000):
        states = list(play_random_episode(game, rng))
        state = states[-1]
        assert state.done
        assert len(state.returns) == game.num_players


@pytest.mark.parametrize(("game_id", "options"), CASES)
def test_views_never_claim_what_is_not_there(game_id: str, options: dict[str, Any]) -> None:
    """Known cards of other seats really are in those hands; unseen cards are nowhere in view."""
    game = make(game_id, raw=True, **options).game
    rng = np.random.default_rng(7)
    for _ in range(20):
        for state in play_random_episode(game, rng, check=False):
            for seat in range(game.num_players):
                v = game.view(state, seat)
                assert v.known[seat] == state.hands[seat] == v.hand
                for other in range(game.num_players):
                    assert v.known[other] & ~state.hands[other] == 0, "a card marked known is not there"
                assert v.unseen & v.hand == 0
                on_table = 0
                for _, c in v.trick + v.last_trick:
                    on_table |= 1 << c
                assert v.unseen & on_table == 0
                assert v.unseen & (v.played[0] if v.played else 0) == 0
                assert (v.legal != 0) == (state.to_act == seat and not state.done)


@pytest.mark.parametrize(("game_id", "options"), CASES)
def test_no_leak_between_other_hands(game_id: str, options: dict[str, Any]) -> None:
    """Two states that differ only in how unseen cards lie between other seats encode identically."""
    raw = make(game_id, raw=True, **options)
    game, encoder = raw.game, raw.encoder
    n = game.num_players
    rng = np.random.default_rng(11)
    swaps = 0
    for _ in range(10):
        for state in play_random_episode(game, rng, check=False):
            if state.done:
                continue
            seat = state.to_act
            view = game.view(state, seat)
            others = [s for s in range(n) if s != seat]
            hidden = {s: cards_of(state.hands[s] & view.unseen) for s in others}
            pairs = [(a, b) for a in others for b in others if a < b and hidden[a] and hidden[b]]
            if not pairs:
                continue
            a, b = pairs[int(rng.integers(len(pairs)))]
            ca = hidden[a][int(rng.integers(len(hidden[a])))]
            cb = hidden[b][int(rng.integers(len(hidden[b])))]
            twin = state.copy()
            for s, out, into in ((a, ca, cb), (b, cb, ca)):
                twin.hands[s] = twin.hands[s] ^ (1 << out) ^ (1 << into)
                dealt = list(twin.dealt)
                if dealt[s] >> out & 1:
                    dealt[s] = dealt[s] ^ (1 << out) ^ (1 << into)
                twin.dealt = tuple(dealt)
            before = encoder.encode(view)
            after = encoder.encode(game.view(twin, seat))
            assert np.array_equal(before, after), f"seat {seat} sees where a hidden card lies"
            assert game.view(twin, seat).legal == view.legal
            swaps += 1
    if n > 2:
        assert swaps > 0


@pytest.mark.parametrize(("game_id", "options"), CASES)
def test_observation_decodes_back_to_the_view(game_id: str, options: dict[str, Any]) -> None:
    raw = make(game_id, raw=True, **options)
    game, layout = raw.game, raw.encoder.layout
    rng = np.random.default_rng(3)
    for state in play_random_episode(game, rng, check=False):
        if state.done:
            break
        seat = state.to_act
        view = game.view(state, seat)
        obs = raw.encoder.encode(view)
        assert obs.shape == (layout.size,) and obs.dtype == np.float32
        assert 0.0 <= obs.min() and obs.max() <= 1.0
        decoded = layout.unpack(obs)
        assert decoded["hand"] == cards_of(view.hand)
        assert decoded["unseen"] == cards_of(view.unseen)
        assert decoded["trump"] == ("NT" if view.trump is None else "♣♦♥♠"[view.trump])
        assert decoded["to_act"] == "me"
        mine = [c for s, c in view.trick if s == seat]
        assert decoded["trick[me]"] == mine
        text = raw.describe(obs)
        assert text.startswith("hand:") or not view.hand


@pytest.mark.parametrize(("game_id", "options"), CASES)
def test_same_seed_same_game_despite_global_rng_use(game_id: str, options: dict[str, Any]) -> None:
    def rollout(disturb: bool) -> list[Any]:
        env = make(game_id, **options)
        env.reset(seed=123)
        out: list[Any] = []
        chooser = np.random.default_rng(5)
        for agent in env.agent_iter():
            obs, reward, term, trunc, info = env.last()
            if disturb:
                random.random()
                np.random.random()
            if term or trunc:
                env.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            action = int(legal[int(chooser.integers(len(legal)))])
            out.append((agent, action, float(reward), obs["observation"].tobytes()))
            env.step(action)
        out.append(tuple(sorted(env.raw.game_state.returns)))
        return out

    random.seed(1)
    np.random.seed(1)
    first = rollout(False)
    random.seed(99)
    np.random.seed(99)
    assert rollout(True) == first


@pytest.mark.parametrize(("game_id", "options"), CASES)
def test_illegal_action_raw_raises_and_changes_nothing(game_id: str, options: dict[str, Any]) -> None:
    env = make(game_id, raw=True, **options)
    env.reset(seed=5)
    obs = env.observe(env.agent_selection)
    illegal = np.flatnonzero(obs["action_mask"] == 0)
    assert len(illegal), "expected at least one illegal action at the start"
    before = env.state().copy()
    with pytest.raises(IllegalActionError, match=r"seat \d cannot play .*; legal: "):
        env.step(int(illegal[0]))
    assert np.array_equal(env.state(), before)


@pytest.mark.parametrize(("game_id", "options"), CASES)
def test_illegal_action_wrapped_ends_game_with_penalty(game_id: str, options: dict[str, Any]) -> None:
    env = make(game_id, **options)
    env.reset(seed=5)
    agent = env.agent_selection
    obs = env.observe(agent)
    refused = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    env.step(refused)
    assert all(env.terminations.values())
    assert env.rewards[agent] == -1.0
    assert all(r == 0 for a, r in env.rewards.items() if a != agent)
    assert "cannot play" in env.illegal_reason and env.infos[agent]["illegal_action"] == refused
    assert env.infos[agent]["illegal_actions"] == 1
    for a in env.agent_iter():
        obs, reward, term, _, _ = env.last()
        assert term and not obs["action_mask"].any()  # the game is over: nothing is legal
        if a == agent:
            assert reward == -1.0
        env.step(None)
    assert env.agents == []


@pytest.mark.parametrize(("game_id", "options"), CASES)
def test_state_is_in_state_space_and_describable(game_id: str, options: dict[str, Any]) -> None:
    env = make(game_id, raw=True, **options)
    env.reset(seed=0)
    s = env.state()
    assert env.state_space.contains(s)
    text = env.describe_state(s)
    assert "hand[player_0]" in text


@pytest.mark.parametrize(("game_id", "options"), CASES)
def test_render_ansi(game_id: str, options: dict[str, Any]) -> None:
    env = make(game_id, render_mode="ansi", **options)
    env.reset(seed=0)
    text = env.render()
    assert isinstance(text, str) and game_id in text
    assert any(sym in text for sym in "♣♦♥♠")


@pytest.mark.parametrize("game_id", game_ids())
def test_reset_from_a_given_deck_and_dealer(game_id: str) -> None:
    env = make(game_id, raw=True)
    env.reset(options={"deck": [f"{'23456789TJQKA'[i % 13]}{'CDHS'[i // 13]}" for i in range(52)], "dealer": 1})
    ids = make(game_id, raw=True)
    ids.reset(options={"deck": list(range(52)), "dealer": 1})
    assert np.array_equal(env.state(), ids.state())
    assert env.game_state.dealer == 1


@pytest.mark.parametrize("game_id", game_ids())
@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"deck": list(range(51))}, "exactly 52 cards"),
        ({"deck": [0] * 52}, "each of the 52 cards once; repeated: 2♣"),
        ({"deck": list(range(1, 53))}, "deck entry 52 is not a card"),
        ({"deck": ["XX"] + list(range(1, 52))}, "cannot read 'XX' as a card"),
        ({"deck": "2C 3C"}, "must be an ordered sequence"),
        ({"dealer": 9}, "'dealer' must be a seat"),
        ({"dealer": "0"}, "'dealer' must be a seat"),
    ],
)
def test_bad_reset_options(game_id: str, options: dict[str, Any], message: str) -> None:
    env = make(game_id)
    with pytest.raises(OptionError, match=message):
        env.reset(options=options)


@pytest.mark.parametrize("game_id", game_ids())
def test_unknown_reset_option_raises_with_the_known_ones(game_id: str) -> None:
    env = make(game_id)
    with pytest.raises(OptionError, match=r"unknown reset option\(s\) \['decks'\]; known: \['deck', 'dealer'"):
        env.reset(seed=0, options={"decks": []})
    with pytest.warns(UserWarning, match=r"ignoring unknown reset option\(s\) \['options'\]; known: \['deck'"):
        env.reset(seed=0, options={"options": 1})  # PettingZoo's api_test probe


@pytest.mark.parametrize("game_id", game_ids())
def test_bad_constructor_arguments(game_id: str) -> None:
    with pytest.raises(OptionError, match=f"{game_id} has no option 'colour'. Allowed options: "):
        make(game_id, colour="red")
    with pytest.raises(OptionError, match="render_mode='rgb_array' is not supported"):
        make(game_id, render_mode="rgb_array")
    # Options read from a file (a tournament's, a record's, a config's) may hold any name: ``self`` and ``cls``
    # raised TypeError (got multiple values for argument 'self') where any other unknown name is an OptionError.
    for name in ("self", "cls"):
        with pytest.raises(OptionError, match=f"{game_id} has no option '{name}'"):
            make(game_id, **{name: 1})
        with pytest.raises(OptionError, match=f"{game_id} has no option '{name}'"):
            get_spec(game_id).make_rules(**{name: 1})


@pytest.mark.parametrize("game_id", game_ids())
def test_call_order_and_action_errors(game_id: str) -> None:
    env = make(game_id)
    with pytest.raises(RuntimeError, match="call reset"):
        env.step(0)
    with pytest.raises(RuntimeError, match="call reset"):
        env.observe("player_0")
    env.reset(seed=0)
    with pytest.raises(KeyError, match="unknown agent 'player_9'"):
        env.observe("player_9")
    with pytest.raises(ValueError, match="outside the action space"):
        env.step(10_000)
    with pytest.raises(ValueError, match="must be an int"):
        env.step("AS")
    with pytest.raises(ValueError, match="must be an int"):
        env.step(1.0)


def test_unknown_game_lists_the_games() -> None:
    with pytest.raises(OptionError, match="unknown game 'bridge_v0'; available: classic_whist_v0"):
        make("bridge_v0")


@pytest.mark.parametrize(("typed", "meant"), [("german_wist_v0", "german_whist_v0"), ("humbug", "humbug_v0")])
def test_a_misspelt_game_id_gets_a_suggestion(typed: str, meant: str) -> None:
    with pytest.raises(OptionError, match=rf"unknown game '{typed}' \(did you mean '{meant}'\?\); available: "):
        make(typed)


def test_registered_with_pettingzoo() -> None:
    import pettingzoo

    for game_id in game_ids():
        env = pettingzoo.make("aec", "whist_env/" + game_id)
        env.reset(seed=0)
        assert env.possible_agents[0] == "player_0"


def test_top_level_module_access() -> None:
    from whist_env import classic_whist_v0, humbug_v0

    assert classic_whist_v0.raw_env.metadata["name"] == "classic_whist_v0"
    assert humbug_v0.raw_env.metadata["name"] == "humbug_v0"
    with pytest.raises(AttributeError):
        whist_env.no_such_game_v0  # noqa: B018


def test_import_does_not_pull_heavy_dependencies() -> None:
    code = (
        "import sys, whist_env\n"
        "for g in whist_env.game_ids(): whist_env.make(g).reset(seed=0)\n"
        "heavy = [m for m in ('torch', 'stable_baselines3', 'sb3_contrib', 'ray', 'pygame') if m in sys.modules]\n"
        "print(','.join(heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"import whist_env imported {out.stdout.strip()}"


@pytest.mark.parametrize(("game_id", "options"), CASES)
def test_encoder_sizes_its_action_mask_at_construction(game_id: str, options: dict[str, Any]) -> None:
    """A freshly made encoder already masks the game's whole action space (nothing to call after it)."""
    spec = get_spec(game_id)
    game = spec.make_rules(**options)
    encoder = spec.make_encoder(game)
    assert encoder.layout.num_actions == game.num_actions
    rng = np.random.default_rng(5)
    for state in play_random_episode(game, rng, check=False):
        if state.done:
            break
        view = game.view(state, state.to_act)
        obs, mask = encoder.encode_with_mask(view)
        assert mask.shape == (game.num_actions,) and mask.dtype == np.int8
        assert [int(a) for a in np.flatnonzero(mask)] == view.legal_actions()
        assert np.array_equal(obs, encoder.encode(view))
