"""Fuzzing the agent-spec grammar (issue #26): random text, and text built from the grammar's own pieces, fed to
``parse_agent_spec``, ``split_agent_specs`` and ``make_agent``.

What must hold whatever the text: the only error is ``OptionError`` with a message; a spec that parses is written
back by ``format_agent_spec`` as text that parses to the same spec; ``make_agent`` of a parsed spec gives an agent
or an ``OptionError``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from whist_env.agents.agent_spec import (
    AGENT_KINDS,
    AgentSpec,
    format_agent_spec,
    parse_agent_spec,
    split_agent_specs,
)
from whist_env.agents.base import Agent
from whist_env.agents.factory import make_agent
from whist_env.errors import OptionError
from whist_env.registry import game_ids

FAST = settings(max_examples=300, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])

NAMES = [*AGENT_KINDS, "pimcc", "Random", "model_", "_", "9x", ""]
KEYS = sorted({p.name for k in AGENT_KINDS.values() for p in k.params}) + ["colour", "path ", "x"]
VALUES = ["10", "0", "-1", "1.5", "nan", "inf", "-inf", "1e309", "true", "False", "yes", "''", '""', "'a,b'",
          '"x\'y"', "a b", "runs/m.zip", "C:\\m.zip", "9" * 30, " ", "(", ")", "=", ","]  # fmt: skip
PUNCT = ["(", ")", ":", "=", ",", " ", "'", '"', "\t", "\n"]


@st.composite
def grammar_text(draw: Any) -> str:
    """Text made of the grammar's tokens (names, keys, values, brackets, colons, quotes) in random order."""
    pieces = st.one_of(st.sampled_from(NAMES), st.sampled_from(KEYS), st.sampled_from(VALUES), st.sampled_from(PUNCT))
    return "".join(draw(st.lists(pieces, max_size=14)))


@st.composite
def plausible_spec(draw: Any, depth: int = 0) -> str:
    """A spec that looks right: a known name with a few key=value parameters, maybe nested, in either form."""
    name = draw(st.sampled_from(list(AGENT_KINDS)))
    params = [p for p in AGENT_KINDS[name].params]
    args = []
    for p in draw(st.lists(st.sampled_from(params), max_size=3, unique_by=lambda p: p.name)) if params else []:
        if p.kind == "agent" and depth < 2:
            value = draw(plausible_spec(depth + 1))
        else:
            value = draw(st.sampled_from(VALUES))
        args.append(f"{p.name}={value}")
    if not args:
        return name
    return f"{name}({', '.join(args)})" if draw(st.booleans()) else f"{name}:{','.join(args)}"


TEXT = st.one_of(st.text(max_size=40), grammar_text(), plausible_spec())


def _paths(spec: AgentSpec) -> list[str]:
    out = []
    for key, value in spec.args:
        if isinstance(value, AgentSpec):
            out += _paths(value)
        elif key == "path":
            out.append(str(value))
    return out


@FAST
@given(text=TEXT)
def test_a_spec_parses_or_is_refused_with_an_option_error(text: str) -> None:
    try:
        spec = parse_agent_spec(text)
    except OptionError as err:
        assert str(err), f"an empty message for {text!r}"
        return
    try:
        written = format_agent_spec(spec)
    except OptionError as err:  # a string holding both kinds of quote cannot be written
        assert "both" in str(err)
        return
    assert parse_agent_spec(written) == spec, f"{text!r} -> {written!r} reads back differently"


@FAST
@given(text=st.one_of(TEXT, st.lists(TEXT, max_size=4).map(",".join)))
def test_a_list_of_specs_splits_or_is_refused_with_an_option_error(text: str) -> None:
    try:
        pieces = split_agent_specs(text)
    except OptionError as err:
        assert str(err)
        return
    assert all(piece and piece == piece.strip() for piece in pieces)


@pytest.mark.parametrize("game_id", game_ids())
@settings(FAST, max_examples=60)
@given(text=st.one_of(plausible_spec(), grammar_text()))
def test_make_agent_gives_an_agent_or_an_option_error(game_id: str, text: str) -> None:
    try:
        spec = parse_agent_spec(text)
    except OptionError:
        return
    assume(not any(Path(p).exists() for p in _paths(spec)))  # never read a real file of this machine
    try:
        agent = make_agent(spec, game_id)
    except OptionError as err:
        assert str(err)
        return
    assert isinstance(agent, Agent)
    try:
        assert isinstance(make_agent(text, game_id), Agent)
    except OptionError:
        pytest.fail(f"make_agent refused the text {text!r} whose parsed spec it took")
