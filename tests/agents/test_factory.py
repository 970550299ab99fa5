"""The agent factory's table: one builder per kind of the grammar, loaded on first use."""

from __future__ import annotations

import subprocess
import sys

import pytest

from whist_env.agents import factory
from whist_env.agents.agent_spec import AGENT_KINDS
from whist_env.agents.base import RandomAgent
from whist_env.errors import OptionError
from whist_env.registry import game_ids, get_spec
from whist_env.spec import load


def test_the_table_has_one_builder_per_kind_of_the_grammar() -> None:
    assert list(factory.AGENT_BUILDERS) == list(AGENT_KINDS)
    for entry in factory.AGENT_BUILDERS.values():
        assert callable(load(entry.builder))


def test_agent_names_are_the_spellings_of_the_table() -> None:
    assert factory.AGENT_NAMES == tuple(s for e in factory.AGENT_BUILDERS.values() for s in e.spellings)
    for kind, entry in factory.AGENT_BUILDERS.items():
        assert entry.spellings and all(s.startswith(kind) for s in entry.spellings)


def test_making_the_light_agents_imports_no_heavy_module() -> None:
    code = (
        "import sys\n"
        "from whist_env.agents.factory import make_agent\n"
        "from whist_env.registry import game_ids\n"
        "for g in game_ids(): make_agent('random', g); make_agent('heuristic', g)\n"
        "print(','.join(m for m in ('numba', 'torch', 'ray', 'stable_baselines3') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


@pytest.mark.parametrize("game_id", game_ids())
def test_an_agent_is_made_from_the_spec_as_from_the_id(game_id: str) -> None:
    spec = get_spec(game_id)
    by_spec = factory.make_agent("heuristic", spec)
    assert type(by_spec) is type(factory.make_agent("heuristic", game_id)) is spec.heuristic_cls()
    assert isinstance(factory.make_agent("random", spec), RandomAgent)


def test_a_kind_without_a_builder_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(factory.AGENT_BUILDERS, "rllib")
    with pytest.raises(OptionError, match="agent 'rllib' is not available yet .*model:<path to the .zip>"):
        factory.make_agent("rllib:/nowhere", game_ids()[0])


def test_an_unknown_game_is_named() -> None:
    with pytest.raises(OptionError, match="unknown game 'nope_v0'; available: "):
        factory.make_agent("random", "nope_v0")
