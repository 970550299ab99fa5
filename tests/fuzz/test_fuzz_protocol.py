"""Fuzzing what a bot sends the referee: its answer to an ``act`` and its answer to the ``hello``.

Whatever the line, the referee's reading of it (``ViewCodec.read_answer``, ``check_hello_answer`` after
``decode_line``) gives a legal action or an ``AnswerError`` with one of the fault kinds and a message; never another
exception, which would stop the tournament, ``whist-bot check`` or the browser table's bot seat. Lines are random
bytes, random JSON values (nested, with every scalar JSON has), and JSON nested deeper than Python can write back.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from whist_env.evaluation import protocol
from whist_env.evaluation.protocol import AnswerError, ViewCodec
from whist_env.registry import game_ids, get_spec

FAST = settings(max_examples=300, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)
ANSWERS = JSON | st.dictionaries(st.just("action"), JSON, min_size=1)  # {"action": ...} too
# JSON nested from just within Python's recursion limit (about 1,000) to past what orjson reads (1,024 levels),
# bare or under a key
DEEP = st.builds(
    lambda depth, wrap: wrap % (b"[" * depth + b"]" * depth),
    st.integers(950, 1100),
    st.sampled_from([b"%s", b'{"action": %s}', b'{"type": %s}', b'{"type": "hello", "protocol": %s}']),
)


@contextmanager
def default_recursion_limit() -> Iterator[None]:
    """Python's default recursion limit, as the referee runs with: Hypothesis raises it while a test runs, which
    would hide an error that only a deep value raises."""
    before = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    try:
        yield
    finally:
        sys.setrecursionlimit(before)


@cache
def position(game_id: str) -> tuple[ViewCodec, int]:
    """A codec of ``game_id`` and the legal actions (a mask) of the first decision of a seeded deal."""
    game = get_spec(game_id).make_rules()
    state = game.new_episode(np.random.default_rng(3))
    return ViewCodec(game), game.view(state, state.to_act).legal


def read(game_id: str, line: bytes) -> None:
    codec, legal = position(game_id)
    try:
        with default_recursion_limit():
            action = codec.read_answer(line, legal)
    except AnswerError as err:
        assert err.kind in ("malformed", "illegal") and str(err)
    else:
        assert (legal >> action) & 1, (line, action)


@FAST
@given(st.sampled_from(sorted(game_ids())), st.binary(max_size=40) | DEEP)
def test_any_bytes_as_an_answer_give_an_action_or_a_fault(game_id: str, line: bytes) -> None:
    read(game_id, line)


@FAST
@given(st.sampled_from(sorted(game_ids())), ANSWERS)
def test_any_json_as_an_answer_gives_an_action_or_a_fault(game_id: str, value: object) -> None:
    read(game_id, json.dumps(value).encode())


@FAST
@given(JSON | st.dictionaries(st.sampled_from(["type", "protocol", "name", "observation"]), JSON) | DEEP)
def test_any_answer_to_the_hello_is_taken_or_refused_with_a_fault(value: object) -> None:
    line = value if isinstance(value, bytes) else json.dumps({"type": "hello", **value} if isinstance(value, dict)
                                                             else value).encode()  # fmt: skip
    try:
        with default_recursion_limit():
            answer = protocol.check_hello_answer(protocol.decode_line(line))
    except ValueError:
        return  # not JSON: the referee's own fault ("start"), named where it reads the line
    except AnswerError as err:
        assert err.kind in ("malformed", "version") and str(err) and "\n" not in str(err)
    else:
        assert answer["type"] == "hello" and answer["protocol"] == protocol.PROTOCOL
