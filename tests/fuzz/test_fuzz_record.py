"""Fuzzing game records (issue #26): real records of every game, mutated field by field or as text, fed to
``GameRecord.from_json`` and replayed.

What must hold whatever the record: the only errors are ``RecordError`` (a ``ValueError``) or ``OptionError``, each
with a message, never an ``IndexError``, ``KeyError`` or ``TypeError``; a refused field is named in the message;
a record that is read replays to the end, or refuses at a step it names.
"""

from __future__ import annotations

import json
import math
from functools import cache
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from whist_env.errors import OptionError, RecordError
from whist_env.record import GameRecord, record_of
from whist_env.registry import game_ids, get_spec
from whist_env.testing import random_action

FAST = settings(
    max_examples=120,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
# one short episode of each game, and a game of several deals with drawn trumps (later decks and draws)
EPISODES: list[tuple[str, dict[str, Any]]] = [
    ("classic_whist_v0", {"episode": "deal"}),
    ("humbug_v0", {}),
    ("oh_hell_v0", {"num_players": 3, "trump_mode": "drawn_card", "max_cards": 2}),
    ("german_whist_v0", {}),
    ("humbug_whist_v0", {"episode": "deal"}),
]
assert sorted(g for g, _ in EPISODES) == sorted(game_ids())
FIELDS = ["format", "game_id", "options", "dealer", "deck", "start", "draws", "later_decks", "actions"]
FIELDS += ["illegal_action"]
JUNK = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.sampled_from([-1, 0, 1, 3, 51, 52, 10_000, 1.5, math.nan, math.inf, "", "AS", "0", "x" * 200]),
    st.lists(st.integers(-2, 60), max_size=4),
    st.lists(st.sampled_from(["AS", None, 1.0, [1], {}]), max_size=3),
    st.dictionaries(st.sampled_from(["a", "deck", "trump_card", "num_players", "episode"]), st.integers(-1, 60)),
)


@cache
def base_record(game_id: str) -> dict[str, Any]:
    options = dict(EPISODES)[game_id]
    game = get_spec(game_id).make_rules(**options)
    rng = np.random.default_rng(7)
    recorder = record_of(game, rng)
    while not recorder.state.done:
        recorder.step(random_action(game.legal_mask(recorder.state), rng))
    return recorder.record().to_dict()


@st.composite
def mutated(draw: Any) -> tuple[str, str | None]:
    """``(json text, the field mutated or None)`` from one game's record with one to three changes."""
    data = json.loads(json.dumps(base_record(draw(st.sampled_from(game_ids())))))
    touched: list[str] = []
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.integers(0, 9))
        key = draw(st.sampled_from(FIELDS))
        touched.append(key)
        if kind == 0:
            data.pop(key, None)
        elif kind == 1:
            data[key] = draw(JUNK)
        elif kind == 2 and isinstance(data.get(key), list) and data[key]:
            i = draw(st.integers(0, len(data[key]) - 1))
            data[key][i] = draw(JUNK)
        elif kind == 3 and isinstance(data.get(key), list):
            data[key] = data[key][: draw(st.integers(0, len(data[key])))]  # cut short
        elif kind == 4 and isinstance(data.get(key), list):
            data[key] = data[key] + draw(st.lists(st.integers(-1, 60), min_size=1, max_size=3))
        elif kind == 5 and isinstance(data.get("later_decks"), list) and data["later_decks"]:
            deck = data["later_decks"][draw(st.integers(0, len(data["later_decks"]) - 1))]
            if isinstance(deck, list) and deck:
                deck[draw(st.integers(0, len(deck) - 1))] = draw(JUNK)
            touched[-1] = "later_decks"
        elif kind == 6:
            data[draw(st.sampled_from(["options", "start"]))] = draw(
                st.dictionaries(st.sampled_from(["episode", "num_players", "hand_size", "trump_card", "x"]), JUNK)
            )
            touched[-1] = "options/start"
        elif kind == 7:
            data[draw(st.sampled_from(["colour", "Format", ""]))] = 1
            touched[-1] = "unknown"
        elif kind == 8 and isinstance(data.get("actions"), list) and len(data["actions"]) > 1:
            i = draw(st.integers(0, len(data["actions"]) - 2))
            data["actions"][i], data["actions"][i + 1] = data["actions"][i + 1], data["actions"][i]
        else:
            data["game_id"] = draw(st.sampled_from([*game_ids(), "bridge_v0", 3]))
            touched[-1] = "game_id"
    text = json.dumps(data)
    if draw(st.integers(0, 7)) == 0:  # damage the text itself
        cut = draw(st.integers(0, len(text)))
        text = text[:cut] + draw(st.sampled_from(["", "}", "]", ",", "\x00", "NaN", "{"])) + text[cut + 1 :]
        return text, None
    return text, touched[0] if len(touched) == 1 else None


def _read_and_replay(text: str) -> None:
    record = GameRecord.from_json(text)
    n = len(record.actions)
    record.replay(upto=n // 2)
    list(record.states())
    record.replay()


@FAST
@given(case=mutated())
def test_a_damaged_record_is_read_and_replayed_or_refused_with_a_record_error(case: tuple[str, str | None]) -> None:
    text, field = case
    try:
        _read_and_replay(text)
    except (RecordError, OptionError) as err:
        message = str(err)
        assert message, f"an empty message for {text[:200]}"
        if field in FIELDS and "step" not in message and "deal" not in message:
            # a field refused when the record is read names the field (replay errors name the step instead)
            assert field in message or "format" in message or "JSON" in message or "key" in message, (
                field,
                message,
            )


@settings(FAST, max_examples=60)
@given(text=st.one_of(st.text(max_size=60), st.binary(max_size=40).map(lambda b: b.decode("latin-1"))))
def test_garbage_text_is_refused_with_a_record_error(text: str) -> None:
    with pytest.raises(RecordError):
        _read_and_replay(text)


@pytest.mark.parametrize("game_id", game_ids())
@settings(FAST, max_examples=20)
@given(upto=st.integers(-3, 10_000))
def test_replay_upto_any_number_replays_or_names_the_range(game_id: str, upto: int) -> None:
    record = GameRecord.from_dict(base_record(game_id))
    try:
        _, state = record.replay(upto=upto)
    except RecordError as err:
        assert not 0 <= upto <= len(record.actions) and "upto" in str(err)
        return
    assert 0 <= upto <= len(record.actions)
