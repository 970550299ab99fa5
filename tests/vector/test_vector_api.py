"""The batched engine's API: make, reset options, autoreset, observe, state, export/import, and bad input.

Every rejected call must name what was wrong (the environment indices included) and change no environment.
"""

from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import pytest

import whist_env.vector as vector
from whist_env import make
from whist_env.cards import card_str
from whist_env.errors import CallOrderError, IllegalActionError, OptionError
from whist_env.rules.core import PHASE_OVER
from whist_env.testing import random_legal, unchanged
from whist_env.vector.core import RawVectorEnv

GAME = "classic_whist_v0"
B = 8


@pytest.fixture
def venv() -> RawVectorEnv:
    env = vector.make(GAME, B, seed=1)
    env.reset()
    return env


@pytest.fixture(params=vector.vector_game_ids())
def any_venv(request: pytest.FixtureRequest) -> RawVectorEnv:
    """A batch of each game with a batched engine, after reset (for the checks every game shares)."""
    env = vector.make(request.param, B, seed=1)
    env.reset()
    return env


def test_make_rejects_bad_arguments() -> None:
    with pytest.raises(OptionError, match="unknown game 'nope'"):
        vector.make("nope", 4)
    import dataclasses

    from toy_game.spec import SPEC

    import whist_env

    # a sixth game registered without a batched engine (the toy has one: its spec with the engine left out)
    no_engine = dataclasses.replace(SPEC, engine=None, engine_heuristic=None)
    whist_env.register(no_engine)
    try:
        assert no_engine.game_id not in vector.vector_game_ids()
        with pytest.raises(OptionError, match=f"{no_engine.game_id} has no batched engine yet"):
            vector.make(no_engine.game_id, 4)
    finally:
        whist_env.unregister(no_engine.game_id)
    for bad in (0, -3, 2.5, True, "8"):
        with pytest.raises(OptionError, match="num_envs must be an int >= 1"):
            vector.make(GAME, bad)  # type: ignore[arg-type]
    with pytest.raises(OptionError, match="obs_dtype must be None or one of"):
        vector.make(GAME, 4, obs_dtype="float64")
    with pytest.raises(OptionError, match="target_points"):
        vector.make(GAME, 4, target_points=6)
    with pytest.raises(OptionError, match="seed must be None or an int >= 0"):
        vector.make(GAME, 4, seed=-1)
    assert GAME in vector.vector_game_ids()


def test_calls_before_reset_are_refused() -> None:
    env = vector.make(GAME, 2)
    with pytest.raises(CallOrderError, match=r"call reset\(\) before step\(\)"):
        env.step(np.zeros(2, np.int64))
    with pytest.raises(CallOrderError, match=r"call reset\(\) before observe\(\)"):
        env.observe(np.zeros(2, np.int64))


def test_timestep_shapes_and_dtypes(venv: RawVectorEnv) -> None:
    ts = venv.step(random_legal(venv.observe(venv.field("to_act")[:, 0])[1], np.random.default_rng(0)))
    assert ts.current_player.shape == (B,)
    assert ts.observation.shape == (B, venv.encoder.size) and ts.observation.dtype == np.uint8
    assert ts.action_mask.shape == (B, 52) and ts.action_mask.dtype == np.int8
    assert ts.rewards.shape == (B, 4) and ts.rewards.dtype == np.float32
    assert ts.terminated.shape == ts.truncated.shape == (B,)
    assert venv.state().shape == (B, 4 * 52 + venv.encoder.size)
    assert vector.make(GAME, 3, obs_dtype="float32").reset().observation.dtype == np.float32


@pytest.mark.parametrize(
    "actions",
    [np.zeros(B + 1, np.int64), np.zeros((B, 1), np.int64), np.zeros(B, np.float64), np.zeros(B, bool), [0.5] * B],
    ids=["too-long", "2-D", "float", "bool", "float-list"],
)
def test_actions_of_the_wrong_shape_or_dtype(any_venv: RawVectorEnv, actions: object) -> None:
    venv = any_venv
    with unchanged(venv), pytest.raises(ValueError, match=rf"actions must be an integer array of shape \({B},\)"):
        venv.step(actions)


def test_illegal_actions_name_the_environments_and_change_nothing(any_venv: RawVectorEnv) -> None:
    venv = any_venv
    ts = venv.step(random_legal(venv.observe(venv.field("to_act")[:, 0])[1], np.random.default_rng(0)))
    actions = random_legal(ts.action_mask, np.random.default_rng(1))
    hands = venv.field("hands")
    for i, bad in ((2, None), (5, venv.num_actions), (6, -1)):
        if bad is None:  # a card another seat holds
            bad = next(c for c in range(52) if not (int(hands[i, ts.current_player[i]]) >> c) & 1)
        actions[i] = bad
    with unchanged(venv), pytest.raises(IllegalActionError) as err:
        venv.step(actions)
    message = str(err.value)
    assert "environment(s) 2, 5, 6" in message and "no environment changed" in message
    describe = venv.game.action_text  # cards as people read them (10♠, as the AEC env's errors), KEEP, bids in words
    assert (
        "Environment 2" in message and f"seat {ts.current_player[2]} cannot play {describe(int(actions[2]))}" in message
    )
    legal = tuple(int(c) for c in np.flatnonzero(ts.action_mask[2]))
    assert err.value.legal == legal and err.value.seat == ts.current_player[2]
    assert "legal: " + " ".join(describe(c) for c in legal) in message
    assert not any(f" {c}" in message for c in ("TS", "AS", "2C"))  # never the short form


def test_a_number_that_is_no_action_is_named_as_given(any_venv: RawVectorEnv) -> None:
    """Found by a hostile-input audit: ``step_envs`` named a uint64 action of 2**63 by its wrapped int64 value, and in
    Oh Hell any number above the bids was a bid ("cannot play bid 148" for 200). Both steps, and the learner env, now
    say "action <n> (outside 0..<last>)" with the number as given (the rules' ``action_text``)."""
    venv = any_venv
    last = venv.num_actions - 1
    learner = vector.make_learner_env(venv.game_id, num_envs=2, opponents="random", seed=0)
    learner.reset(seed=0)
    for value in (venv.num_actions + 148, 2**63, 2**64 - 1):
        said = f"cannot play action {value} (outside 0..{last})"
        steps = [
            lambda value=value: venv.step(np.full(B, value, np.uint64)),
            lambda value=value: venv.step_envs([3], np.array([value], np.uint64)),
            lambda value=value: learner.step(np.full(2, value, np.uint64)),
        ]
        for step in steps:
            with pytest.raises(IllegalActionError, match=re.escape(said)) as err:
                step()
            assert err.value.action == value
    assert venv.game.action_text(-1) == f"action -1 (outside 0..{last})"


def test_decks_and_dealers_are_dealt_and_checked(any_venv: RawVectorEnv) -> None:
    venv = any_venv
    rng = np.random.default_rng(4)
    decks = np.array([rng.permutation(52) for _ in range(B)])
    dealers = rng.integers(venv.num_players, size=B)
    venv.reset(options={"decks": decks, "dealers": dealers})
    assert np.array_equal(venv.decks(), decks)
    assert np.array_equal(venv.field("dealer")[:, 0], dealers)
    game = make(venv.game_id, raw=True).game
    for i in range(B):  # the rules deal the same deck the same way
        state = game.new_episode(np.random.default_rng(), deck=decks[i].tolist(), dealer=int(dealers[i]))
        assert venv.export_state(i).hands == state.hands
    names = [[card_str(int(c)) for c in deck] for deck in decks]
    venv.reset(options={"decks": names})
    assert np.array_equal(venv.decks(), decks)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"decks": "dup"}, r"bad deck in environment\(s\) 3, 6; environment 3: .*repeated: "),
        ({"decks": "range"}, r"bad deck in environment\(s\) 1; environment 1: .*deck entry 52 is not a card"),
        ({"decks": np.zeros((B, 51), np.int64)}, r"'decks' must have shape \(8, 52\)"),
        ({"dealers": np.array([0, 1, 0, 1, 8, 0, 1, -1])}, r"environment\(s\) 4, 7 got 8, -1"),
        ({"dealers": np.zeros(B, np.float64)}, r"'dealers' must be an integer array of shape \(8,\)"),
        ({"deck": list(range(52))}, r"unknown reset option\(s\) \['deck'\]"),
    ],
    ids=["duplicates", "out-of-range", "shape", "dealer-seat", "dealer-dtype", "unknown"],
)
def test_bad_reset_options_change_nothing(any_venv: RawVectorEnv, options: dict[str, object], message: str) -> None:
    venv = any_venv
    decks = np.tile(np.arange(52), (B, 1))
    if isinstance(options.get("decks"), str):
        if options["decks"] == "dup":
            decks[3, 10] = decks[3, 11]
            decks[6, 0] = 51
        else:
            decks[1, 5] = 52
        options = {"decks": decks}
    with unchanged(venv), pytest.raises(OptionError, match=message):
        venv.reset(seed=9, options=options)


def test_seeds_reproduce_and_differ_between_environments() -> None:
    a = vector.make(GAME, 4, seed=7)
    b = vector.make(GAME, 4)
    a.reset()
    b.reset(seed=7)
    assert np.array_equal(a.decks(), b.decks())
    assert len({tuple(d) for d in a.decks()}) == 4
    a.reset()
    assert not np.array_equal(a.decks(), b.decks())  # the generators went on


def test_an_ended_episode_restarts_on_the_next_step_and_ignores_its_action() -> None:
    venv = vector.make(GAME, 3, seed=2, episode="deal")
    ts = venv.reset()
    rng = np.random.default_rng(0)
    for _ in range(52):
        assert not ts.terminated.any()
        ts = venv.step(random_legal(ts.action_mask, rng))
    assert ts.terminated.all() and (ts.current_player == -1).all() and not ts.action_mask.any()
    assert (ts.rewards[:, 0] == -ts.rewards[:, 1]).all() and (ts.rewards[:, 0] == ts.rewards[:, 2]).all()
    old = venv.decks()
    ts = venv.step(np.array([999, -5, 0]))  # ignored: nothing is checked where the episode ended
    assert not ts.terminated.any() and not ts.rewards.any()
    assert (venv.field("phase")[:, 0] != PHASE_OVER).all() and (venv.field("deal_index")[:, 0] == 0).all()
    assert not np.array_equal(venv.decks(), old)
    assert (ts.action_mask.sum(axis=1) == 13).all()  # a new deal: the leader holds 13 cards
    assert np.array_equal(ts.current_player, (venv.field("dealer")[:, 0] + 1) % 4)


def test_observe_checks_the_seats(venv: RawVectorEnv) -> None:
    with unchanged(venv), pytest.raises(ValueError, match=r"environment\(s\) 0, 3 got 4, -1"):
        venv.observe(np.array([4, 0, 0, -1, 0, 0, 0, 0]))
    with pytest.raises(ValueError, match=r"seats must be an integer array of shape \(8,\)"):
        venv.observe([0, 1])


def test_export_and_import_carry_a_position_between_environments(venv: RawVectorEnv) -> None:
    """A rules state from the AEC env, imported mid-deal, plays on as the AEC env does."""
    rng = np.random.default_rng(3)
    twin = make(GAME, raw=True, honours=True, episode="deal")
    twin.reset(seed=11)
    for _ in range(23):
        twin.step(int(rng.choice(np.flatnonzero(twin.observe(twin.agent_selection)["action_mask"]))))
    venv = vector.make(GAME, B, seed=1, honours=True, episode="deal")
    venv.reset()
    venv.import_state(5, twin.game_state.copy())
    assert venv.decks()[5].tolist() == [-1] * 52
    with pytest.raises(IndexError, match="environment index must be an int 0..7"):
        venv.export_state(8)
    for step in range(52 - 23 + 1):  # to the end of the deal (and the episode)
        for seat in range(4):
            obs, mask = venv.observe(np.full(B, seat))
            want = twin.observe(f"player_{seat}")
            assert np.array_equal(obs[5], want["observation"]), (step, seat)
            assert np.array_equal(mask[5], want["action_mask"]), (step, seat)
        if step < 52 - 23:
            actions = random_legal(venv.observe(np.maximum(venv.field("to_act")[:, 0], 0))[1], rng)
            ts = venv.step(actions)
            twin.step(int(actions[5]))
            assert ts.rewards[5].tolist() == [twin.rewards[f"player_{s}"] for s in range(4)]
    assert ts.terminated[5] and twin.terminations["player_0"]
    venv.import_state(0, venv.export_state(5))
    assert np.array_equal(venv.observe(np.full(B, 2))[0][0], venv.observe(np.full(B, 2))[0][5])


def test_import_refuses_what_is_not_a_position(venv: RawVectorEnv) -> None:
    twin = make(GAME, raw=True)
    twin.reset(seed=0)
    state = twin.game_state.copy()
    with pytest.raises(OptionError, match="takes a ClassicWhistState, got str"):
        venv.import_state(0, "state")  # type: ignore[arg-type]
    state.hands[0] |= state.hands[1]
    with unchanged(venv), pytest.raises(OptionError, match="inconsistent state: a card is in two hands"):
        venv.import_state(0, state)


def test_fields_by_name(venv: RawVectorEnv) -> None:
    assert venv.field("hands").shape == (B, 8) and venv.field("team_points").shape == (B, 2)
    with pytest.raises(KeyError, match="no state field 'nope'"):
        venv.field("nope")


def test_import_whist_env_does_not_import_numba() -> None:
    code = "import sys, whist_env; from whist_env import classic_whist_v0; print('numba' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_a_layout_piece_the_kernels_do_not_write_is_refused() -> None:
    """A layout with a piece no kernel slot names would leave it zero: make() refuses it, naming the piece."""
    from whist_env.encoding.layout import Layout, cards
    from whist_env.vector.core import common_piece_names, piece_table

    names = common_piece_names(("me", "left", "partner", "right"))
    layout = Layout([cards("hand"), cards("mystery")])
    with pytest.raises(NotImplementedError, match=r"does not write the observation piece\(s\) \['mystery'\]"):
        piece_table(layout, names, GAME)
    table = piece_table(Layout([cards("unseen"), cards("hand")]), names, GAME)
    assert table[0].tolist() == [52, 52] and table[1].tolist() == [0, 52]  # hand, unseen: wherever the layout puts them
    assert (table[2:] == (-1, 0)).all()  # absent pieces are not written


def test_import_before_any_reset_starts_the_other_environments_on_the_next_step() -> None:
    twin = make(GAME, raw=True)
    twin.reset(seed=4)
    venv = vector.make(GAME, 3, seed=0)
    venv.import_state(1, twin.game_state.copy())
    _, mask = venv.observe(np.full(3, twin.game_state.to_act))
    assert np.array_equal(mask[1], twin.observe(twin.agent_selection)["action_mask"])
    card = int(np.flatnonzero(mask[1])[0])
    ts = venv.step(np.array([-1, card, 999]))  # envs 0 and 2 had no episode: their actions are ignored
    twin.step(card)
    assert ts.current_player[1] == twin.game_state.to_act
    assert np.array_equal(ts.observation[1], twin.observe(twin.agent_selection)["observation"])
    assert (ts.action_mask[[0, 2]].sum(axis=1) == 13).all() and not ts.terminated.any()
