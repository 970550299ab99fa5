"""The agent-spec grammar: parsing both forms, the canonical round trip, the errors, and make_agent's use of it."""

from __future__ import annotations

from pathlib import Path

import pytest

from whist_env.agents import RandomAgent, make_agent
from whist_env.agents.agent_spec import (
    AGENT_KINDS,
    MAX_NESTING,
    AgentSpec,
    format_agent_spec,
    parse_agent_spec,
    split_agent_specs,
)
from whist_env.errors import OptionError

# (as written, canonical form)
SPELLINGS = [
    ("random", "random"),
    ("heuristic", "heuristic"),
    ("pimc", "pimc"),
    ("pimc()", "pimc"),
    ("pimc:samples=10,max_tricks=7", "pimc(samples=10, max_tricks=7)"),
    ("pimc:max_tricks=7,samples=10", "pimc(samples=10, max_tricks=7)"),
    ("pimc:samples=5,max_tricks=6,time_budget=0.5", "pimc(samples=5, time_budget=0.5, max_tricks=6)"),
    ("model:runs/x/model.zip", "model(path=runs/x/model.zip)"),
    ("model:C:\\runs\\m,1.zip", "model(path='C:\\runs\\m,1.zip')"),
    ("model(runs/x/model.zip)", "model(path=runs/x/model.zip)"),
    ("model( '/a b(1).zip' , deterministic=false)", "model(path='/a b(1).zip', deterministic=false)"),
    ('model(path="it\'s.zip")', 'model(path="it\'s.zip")'),
    ("pimc:samples=20,fallback=model:runs/x/model.zip", "pimc(samples=20, fallback=model(path=runs/x/model.zip))"),
    ("pimc:fallback=model:/p.zip", "pimc(fallback=model(path=/p.zip))"),
    ("pimc:fallback=heuristic,samples=2", "pimc(samples=2, fallback=heuristic)"),
    ("pimc:fallback=pretrained", "pimc(fallback=pretrained)"),
    ("pimc:fallback=pimc:fallback=random,samples=2", "pimc(fallback=pimc(samples=2, fallback=random))"),
    (
        "pimc( fallback = model(path=runs/x.zip) , samples = 20 )",
        "pimc(samples=20, fallback=model(path=runs/x.zip))",
    ),
    ("pimc(fallback=model:/p.zip, samples=3)", "pimc(samples=3, fallback=model(path=/p.zip))"),
    ("pretrained", "pretrained"),
    ("rllib:/ckpt/dir", "rllib(path=/ckpt/dir)"),
    ("rllib(path=/ckpt/dir)", "rllib(path=/ckpt/dir)"),
]


@pytest.mark.parametrize(("text", "canonical"), SPELLINGS)
def test_every_spelling_parses_to_its_canonical_form_and_back(text: str, canonical: str) -> None:
    spec = parse_agent_spec(text)
    assert format_agent_spec(spec) == canonical
    assert str(spec) == canonical
    assert parse_agent_spec(canonical) == spec


def test_the_tree_is_typed_and_nested() -> None:
    spec = parse_agent_spec("pimc:samples=20,time_budget=0.5,fallback=model:runs/x/model.zip")
    assert spec.name == "pimc"
    assert spec.get("samples") == 20 and isinstance(spec.get("samples"), int)
    assert spec.get("time_budget") == 0.5
    assert spec.get("max_tricks") is None
    fallback = spec.get("fallback")
    assert fallback == AgentSpec("model", {"path": "runs/x/model.zip"})
    assert spec == AgentSpec(
        "pimc", {"fallback": AgentSpec("model", {"path": "runs/x/model.zip"}), "time_budget": 0.5, "samples": 20}
    )
    assert parse_agent_spec("model(path=m.zip, deterministic=false)").get("deterministic") is False


def test_a_built_tree_formats_and_parses_back() -> None:
    deep = AgentSpec("heuristic")
    for i in range(4):
        deep = AgentSpec("pimc", {"samples": i + 1, "fallback": deep})
    assert format_agent_spec(deep).count("fallback=pimc(") == 3
    assert parse_agent_spec(format_agent_spec(deep)) == deep
    deep = AgentSpec("pimc", {"fallback": AgentSpec("model", {"path": "a (b), 'c'.zip"}), "horizon": 3})
    text = format_agent_spec(deep)
    assert text == "pimc(horizon=3, fallback=model(path=\"a (b), 'c'.zip\"))"
    assert parse_agent_spec(text) == deep


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty; known agents: random, heuristic, model:<path>"),
        ("pimcx", "unknown agent 'pimcx'.*did you mean 'pimc'.*known: random, heuristic"),
        ("pimc:k=3", "pimc has no parameter 'k'.*known: samples, bid_samples, time_budget, max_tricks, horizon"),
        ("pimc(k=3)", "pimc has no parameter 'k'"),
        ("heuristic(x=1)", "heuristic takes no parameters.*write just 'heuristic'"),
        ("pimc(samples=x)", "samples must be an integer ≥ 1, got 'x'"),
        ("pimc:samples=2.5", "samples must be an integer ≥ 1, got '2.5'"),
        ("pimc(samples=0)", "samples must be an integer ≥ 1, got 0"),
        ("pimc(time_budget=soon)", "time_budget must be a number ≥ 0"),
        ("model(m.zip, deterministic=maybe)", "deterministic must be true or false"),
        ("pimc(samples=3", r"unbalanced brackets.*'\(' at position 4 is never closed"),
        ("pimc(fallback=model(path=a.zip)", r"unbalanced brackets.*'\(' at position 4 is never closed"),
        ("pimc(samples=3))", r"unbalanced brackets: this '\)' has no matching '\('"),
        ("model('abc)", "unbalanced quotes"),
        ("heuristic random", "unexpected 'random' after the agent"),
        ("model:", "model needs its path: write 'model:<path>'"),
        ("model()", "model needs its path"),
        ("rllib:", "rllib needs its path"),
        ("pimc(fallback=foo)", "unknown agent 'foo'"),
        ("pimc:3", "pimc parameter '3' is not key=value"),
        ("pimc(samples=1, samples=2)", "samples is given twice"),
        ("pimc(fallback=3)", "expected an agent name"),
    ],
)
def test_mistakes_name_what_is_wrong_and_what_is_allowed(text: str, message: str) -> None:
    with pytest.raises(OptionError, match=message):
        parse_agent_spec(text)


def test_specs_nest_at_most_max_nesting_deep() -> None:
    """A spec nested a few hundred deep reached Python's recursion limit: whist-serve answered a browser's table with
    such a seat by "the server failed on this request (a bug)"."""
    assert MAX_NESTING == 10
    for depth in (MAX_NESTING, MAX_NESTING + 1, 600, 20_000):
        inner = depth - 1  # pimc agents around the random one
        for text in ("pimc(fallback=" * inner + "random" + ")" * inner, "pimc:fallback=" * inner + "random"):
            if depth <= MAX_NESTING:
                assert format_agent_spec(parse_agent_spec(text)).count("pimc(") == inner
                continue
            with pytest.raises(OptionError, match=f"agents nest at most 10 deep .* at position {14 * MAX_NESTING}"):
                parse_agent_spec(text)


def test_a_directly_built_spec_is_checked_like_a_parsed_one() -> None:
    with pytest.raises(OptionError, match="unknown agent 'nope'"):
        AgentSpec("nope")
    with pytest.raises(OptionError, match="samples must be an integer"):
        AgentSpec("pimc", {"samples": "many"})
    with pytest.raises(OptionError, match="samples must be an integer"):
        AgentSpec("pimc", {"samples": True})
    with pytest.raises(OptionError, match="fallback must be an agent spec"):
        AgentSpec("pimc", {"fallback": "heuristic"})
    with pytest.raises(OptionError, match="model needs its path"):
        AgentSpec("model")
    with pytest.raises(OptionError, match="cannot be written"):
        format_agent_spec(AgentSpec("model", {"path": "a'b\"c"}))


def test_every_kind_is_spelled_in_the_known_list() -> None:
    with pytest.raises(OptionError) as err:
        parse_agent_spec("nobody")
    for name in AGENT_KINDS:
        assert name in str(err.value)


@pytest.mark.parametrize(
    ("text", "pieces"),
    [
        ("heuristic,random", ["heuristic", "random"]),
        (" heuristic , random ,", ["heuristic", "random"]),
        ("pimc:samples=10,max_tricks=7", ["pimc:samples=10,max_tricks=7"]),
        ("pimc:samples=10,max_tricks=7,random", ["pimc:samples=10,max_tricks=7", "random"]),
        ("pimc(samples=2, max_tricks=3),model:a.zip", ["pimc(samples=2, max_tricks=3)", "model:a.zip"]),
        ("model('a,b.zip'),heuristic", ["model('a,b.zip')", "heuristic"]),
        ("heuristic,pimc:fallback=model:/p.zip", ["heuristic", "pimc:fallback=model:/p.zip"]),
    ],
)
def test_a_list_of_specs_splits_at_the_commas_between_agents(text: str, pieces: list[str]) -> None:
    assert split_agent_specs(text) == pieces


def test_a_list_with_unbalanced_brackets_is_refused() -> None:
    with pytest.raises(OptionError, match="unbalanced brackets"):
        split_agent_specs("pimc(samples=2,random")
    with pytest.raises(OptionError, match="unbalanced brackets"):
        split_agent_specs("pimc),random")


def test_make_agent_builds_a_nested_fallback_through_the_grammar() -> None:
    from whist_env.agents.model import ModelAgent
    from whist_env.search.pimc import PIMCAgent

    agent = make_agent("pimc(samples=3, max_tricks=2, fallback=random)", "humbug_v0")
    assert isinstance(agent, PIMCAgent)
    assert (agent.samples, agent.max_tricks) == (3, 2)
    assert isinstance(agent.fallback, RandomAgent)
    # the legacy spelling, the nested model last; the model is built (not loaded) with the game's options
    agent = make_agent("pimc:samples=4,fallback=model:/nowhere/m.zip", "classic_whist_v0", episode="deal")
    assert isinstance(agent, PIMCAgent) and agent.samples == 4
    assert isinstance(agent.fallback, ModelAgent)
    assert agent.fallback.path == "/nowhere/m.zip" and agent.fallback.options == {"episode": "deal"}
    inner = make_agent("pimc(fallback=pimc(samples=2, fallback=random))", "german_whist_v0")
    assert isinstance(inner, PIMCAgent) and isinstance(inner.fallback, PIMCAgent)
    assert isinstance(inner.fallback.fallback, RandomAgent)
    model = make_agent("model(path=/nowhere/m.zip, deterministic=false)", "humbug_v0")
    assert isinstance(model, ModelAgent) and model.deterministic is False
    assert isinstance(make_agent(AgentSpec("random"), "humbug_v0"), RandomAgent)


@pytest.mark.parametrize("text", ["pretrained", "pimc:fallback=pretrained"])
def test_pretrained_without_shipped_weights_says_so(text: str, nothing_shipped: None) -> None:
    with pytest.raises(OptionError, match="is not available yet.*model:<path"):
        make_agent(text, "humbug_v0")


@pytest.mark.parametrize("text", ["rllib:/nowhere/ckpt", "pimc(fallback=rllib(/nowhere/c))"])
def test_rllib_agent_without_a_checkpoint_says_what_it_looked_for(text: str) -> None:
    # the path is checked before Ray is needed, so this holds with and without the [rllib] extra
    with pytest.raises(OptionError, match="is not an RLlib checkpoint: expected a run directory"):
        make_agent(text, "humbug_v0")


def test_make_agent_reports_grammar_errors() -> None:
    with pytest.raises(OptionError, match="pimc has no parameter 'k'"):
        make_agent("pimc(k=3)", "humbug_v0")
    with pytest.raises(OptionError, match="unknown agent 'heuristc'.*did you mean 'heuristic'"):
        make_agent("heuristc", "humbug_v0")


def test_make_pimc_without_a_builder_refuses_a_named_fallback() -> None:
    from whist_env.search.pimc import make_pimc

    with pytest.raises(OptionError, match="make_agent"):
        make_pimc("pimc:fallback=random", "humbug_v0")
    with pytest.raises(OptionError, match="not a PIMC agent spec"):
        make_pimc("heuristic", "humbug_v0")


def test_docs_list_every_agent_and_parameter_and_quote_real_messages() -> None:

    docs = (Path(__file__).resolve().parents[2] / "docs" / "agents.md").read_text(encoding="utf-8")
    for kind in AGENT_KINDS.values():
        assert f"| `{kind.name}` |" in docs
        for param in kind.params:
            assert f"`{param.name}`" in docs, (kind.name, param.name)
    for text in ["pimcx", "pimc:k=3", "pimc(samples=x)", "pimc(samples=3", "model:"]:
        with pytest.raises(OptionError) as err:
            parse_agent_spec(text)
        assert str(err.value) in docs, str(err.value)
    with pytest.raises(OptionError) as err:
        make_agent("pretrained(path=runs/x/policy.npz)", "humbug_v0")
    assert str(err.value) in docs
    spec = parse_agent_spec("pimc:samples=20,fallback=model:runs/x/model.zip")
    assert f"# '{format_agent_spec(spec)}'" in docs
