"""``WhistAECEnv.game_record()``: the env records each episode as it is played, and the record replays it
exactly (issue 15, item 6)."""

from __future__ import annotations

import copy
import pickle
from typing import Any

import numpy as np
import pytest

from whist_env import make
from whist_env.errors import CallOrderError, IllegalActionError, OptionError, RecordError
from whist_env.record import GameRecord
from whist_env.registry import get_spec
from whist_env.rules.core import State, TrickGame, _all_slots
from whist_env.testing import case_id, option_cases

CASES = option_cases()


def snapshot(state: State) -> tuple[tuple[str, Any], ...]:
    """Every field of the rules state (lists as tuples), for exact comparison."""
    return tuple((name, _frozen(getattr(state, name))) for name in _all_slots(type(state)))


def _frozen(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


def observations(encoder: Any, game: TrickGame, state: State) -> list[bytes]:
    """Every seat's encoded observation and action mask, as bytes."""
    out = []
    for seat in range(game.num_players):
        obs, mask = encoder.encode_with_mask(game.view(state, seat))
        out += [obs.tobytes(), mask.tobytes()]
    return out


def play(env: Any, rng: np.random.Generator) -> None:
    """Random legal play through the AEC loop until every agent is done."""
    for _agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))


def position(raw: Any) -> tuple[Any, ...]:
    """The raw env's rules state, every seat's observation and mask, and its ``state()`` vector."""
    state = raw.game_state
    return snapshot(state), observations(raw.encoder, raw.game, state), raw.state().tobytes()


@pytest.mark.parametrize(("game_id", "options"), CASES, ids=[case_id(g, o) for g, o in CASES])
def test_the_env_record_replays_every_position_of_a_random_game(game_id: str, options: dict[str, Any]) -> None:
    env = make(game_id, **options)  # wrapped, as env() gives it
    raw = env.unwrapped
    for seed in range(2):
        env.reset(seed=seed)
        rng = np.random.default_rng(100 + seed)
        played = [position(raw)]
        middle = None
        for _agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
            played.append(position(raw))
            if len(played) == 20:  # a record taken mid-episode rebuilds the position then
                middle = env.game_record()
                assert snapshot(middle.replay()[1]) == played[-1][0]
        record = env.game_record()
        assert record.illegal_action is None
        assert len(record.actions) == len(played) - 1
        restored = GameRecord.from_json(record.to_json())
        assert restored == record
        encoder = None
        for step, (game, state) in enumerate(restored.states()):
            encoder = encoder or get_spec(game_id).make_encoder(game)  # the replay builds its own rules
            assert snapshot(state) == played[step][0], f"state differs after {step} actions"
            assert observations(encoder, game, state) == played[step][1], f"observations differ after {step} actions"
        assert step == len(record.actions)
        assert middle is None or middle.actions == record.actions[: len(middle.actions)]


def test_the_record_of_a_replayed_position_gives_the_same_state_vector() -> None:
    env = make("german_whist_v0", raw=True)
    env.reset(seed=3)
    rng = np.random.default_rng(0)
    for _ in range(40):  # into the stock phase and past the first draws
        env.step(int(rng.choice(np.flatnonzero(env.observe(env.agent_selection)["action_mask"]))))
    record = GameRecord.from_json(env.game_record().to_json())
    twin = make("german_whist_v0", raw=True)
    twin.reset(options={"deck": list(record.deck), "dealer": record.dealer})
    for action in record.actions:
        twin.step(action)
    assert twin.state().tobytes() == env.state().tobytes()
    assert snapshot(record.replay()[1]) == snapshot(env.game_state)


def test_an_illegal_action_ends_the_wrapped_game_and_the_record_names_it() -> None:
    env = make("classic_whist_v0")
    env.reset(seed=7)
    rng = np.random.default_rng(1)
    legal_played = []
    for _ in range(5):
        action = int(rng.choice(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])))
        env.step(action)
        legal_played.append(action)
    illegal = int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"] == 0)[0])
    env.step(np.int64(illegal))
    assert all(env.terminations.values())
    record = env.game_record()
    assert record.actions == tuple(legal_played)
    assert record.illegal_action == illegal
    data = record.to_dict()
    assert data["illegal_action"] == illegal and type(data["illegal_action"]) is int
    restored = GameRecord.from_json(record.to_json())
    assert restored == record
    game, state = restored.replay()  # the refused action is not applied
    assert snapshot(state) == snapshot(env.unwrapped.game_state)
    assert not state.done and not (game.legal_mask(state) >> illegal) & 1
    while env.agents:  # the record outlives the dead steps
        env.step(None)
    assert env.game_record() == record
    env.reset()
    assert env.game_record().illegal_action is None and env.game_record().actions == ()


def test_the_raw_env_records_no_refused_action() -> None:
    env = make("humbug_v0", raw=True)
    env.reset(seed=2)
    illegal = int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"] == 0)[0])
    with pytest.raises(IllegalActionError):
        env.step(illegal)
    record = env.game_record()
    assert record.actions == () and record.illegal_action is None
    assert "illegal_action" not in record.to_dict()


def test_each_reset_starts_a_new_record_and_keeps_given_start_options() -> None:
    env = make("oh_hell_v0", num_players=3, trump_mode="drawn_card", episode="deal", hand_size=2)
    with pytest.raises(CallOrderError, match="reset"):
        env.game_record()
    env.reset(seed=5)
    play(env, np.random.default_rng(0))
    first = env.game_record()
    assert first.options == {"num_players": 3, "trump_mode": "drawn_card", "episode": "deal", "hand_size": 2}
    deck = list(range(51, -1, -1))
    env.reset(options={"deck": deck, "dealer": 2, "trump_card": "QH"})  # the generator continues
    play(env, np.random.default_rng(1))
    second = env.game_record()
    assert second.deck == tuple(deck) and second.dealer == 2 and second.start == {"trump_card": "QH"}
    assert second.draws == () and second.actions != first.actions
    assert snapshot(second.replay()[1]) == snapshot(env.unwrapped.game_state)
    env.reset()  # a drawn deal after the given one: the generator's draws are recorded again
    assert snapshot(env.game_record().replay()[1]) == snapshot(env.unwrapped.game_state)
    assert len(env.game_record().draws) == 1  # the drawn trump card


def test_a_rejected_reset_keeps_the_record_of_the_episode_in_progress() -> None:
    env = make("humbug_v0")
    env.reset(seed=1)
    env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
    before = env.game_record()
    with pytest.raises(OptionError, match="deck"):
        env.reset(options={"deck": [0] * 52})
    assert env.game_record() == before


@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
def test_a_copied_env_keeps_its_own_record(how: str) -> None:
    env = make("oh_hell_v0", num_players=3, trump_mode="drawn_card", max_cards=2)
    env.reset(seed=4)
    rng = np.random.default_rng(0)
    for _ in range(3):
        env.step(int(rng.choice(np.flatnonzero(env.observe(env.agent_selection)["action_mask"]))))
    twin = copy.deepcopy(env) if how == "deepcopy" else pickle.loads(pickle.dumps(env))
    before = env.game_record()
    assert twin.game_record() == before
    play(twin, np.random.default_rng(1))  # through several deals: later decks and drawn trump cards
    assert env.game_record() == before  # the original's record is not the copy's
    record = twin.game_record()
    assert record.actions[:3] == before.actions and len(record.later_decks) > 0
    assert snapshot(record.replay()[1]) == snapshot(twin.unwrapped.game_state)


def test_illegal_action_is_checked_when_a_record_is_read() -> None:
    env = make("humbug_v0", raw=True)
    env.reset(seed=0)
    data = env.game_record().to_dict()
    assert GameRecord.from_dict({**data, "illegal_action": None}).illegal_action is None
    assert GameRecord.from_dict({**data, "illegal_action": 7}).illegal_action == 7
    for bad in ("7", 7.0, True):
        with pytest.raises(RecordError, match="illegal_action must be an integer"):
            GameRecord.from_dict({**data, "illegal_action": bad})
