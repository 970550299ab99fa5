"""Oh Hell's playout search: its engine playouts against the rules and the Python heuristic (the plain twin), the
row it builds from a view against the engine's own import, and the agent's behaviour."""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import pytest

from whist_env.agents import make_agent
from whist_env.agents.factory import heuristic_for
from whist_env.errors import OptionError
from whist_env.games.oh_hell.engine import CFG_NUM_DEALS, CFG_SCHEDULE, SET_ASIDE, OhHellVector
from whist_env.games.oh_hell.rules import OhHell, OhHellState
from whist_env.games.oh_hell.search import OhHellSearch, playout_kernel
from whist_env.games.oh_hell.spec import SPEC
from whist_env.rules.core import PHASE_BIDDING, PHASE_PLAY
from whist_env.vector.core import DEALT, DECK, HIST, LAST_ACTOR, RET, TURN_PUBLIC

CASES: list[dict[str, Any]] = [
    {"episode": "deal"},
    {"episode": "deal", "num_players": 3, "hand_size": 7, "trump_mode": "turn_up", "miss_points": "per_trick"},
    {"episode": "deal", "num_players": 5, "hand_size": 6, "trump_mode": "drawn_card"},
    {"episode": "deal", "num_players": 2, "hand_size": 9, "exact_score_mode": "ten_plus_bid"},
    {"num_players": 4, "max_cards": 4, "include_history": False},
]


def positions(options: dict[str, Any], count: int, seed: int) -> list[OhHellState]:
    """``count`` positions (bidding and card play) from random games: the heuristic bids, cards are random."""
    game = OhHell(**options)
    rng = np.random.default_rng(seed)
    heuristic = heuristic_for(SPEC, **options)
    out: list[OhHellState] = []
    while len(out) < count:
        state = game.new_episode(rng)
        stop = int(rng.integers(0, 4 * state.deal_tricks))
        steps = 0
        while not state.done and state.phase in (PHASE_BIDDING, PHASE_PLAY):
            if steps == stop:
                out.append(state.copy())
                break
            if state.phase == PHASE_BIDDING:
                action = heuristic.act(game.view(state, state.to_act), rng)
            else:
                action = int(rng.choice(game.legal_actions(state)))
            game.step(state, action, rng)
            if state.deal_index > 0:
                break  # the first deal is over (a match deals the next): start another game
            steps += 1
    return out


def python_playout(game: OhHell, state: OhHellState, action: int, options: dict[str, Any]) -> float:
    """The plain twin of one playout: ``action`` for the seat to act, then the Python heuristic for every seat,
    by the rules, to the end of the deal; the seat's score of the deal."""
    me = state.to_act
    state = state.copy()
    heuristic = heuristic_for(SPEC, **options)
    rng = np.random.default_rng(0)  # the heuristic is deterministic; a match's next deal draws from it
    deal, before = state.deal_index, state.returns[me]
    game.step(state, action, rng)
    while not state.done and state.deal_index == deal:
        game.step(state, heuristic.act(game.view(state, state.to_act), rng), rng)
    return float(state.returns[me] - before)


@pytest.mark.parametrize("options", CASES, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()))
def test_engine_playouts_equal_the_rules_played_by_the_python_heuristic(options: dict[str, Any]) -> None:
    """Every legal action at 40 random positions: the kernel's playout from the row built from the acting seat's
    view, with the true hands put in, scores what the rules score when the Python heuristic plays the deal out."""
    game = OhHell(**options)
    agent = OhHellSearch(SPEC, **options)
    checked = 0
    for state in positions(options, 40, seed=len(str(options))):
        view = game.view(state, state.to_act)
        base = agent._vec._view_row(view)
        cfg = agent._vec.config.copy()
        cfg[CFG_NUM_DEALS] = 1
        cfg[CFG_SCHEDULE] = state.deal_tricks
        actions = np.array(game.legal_actions(state), np.int64)
        out = np.empty((1, len(actions)))
        playout_kernel(base, cfg, np.ones(1, np.uint64), np.array([state.hands], np.int64), actions, out)
        expected = [python_playout(game, state, int(a), options) for a in actions]
        assert out[0].tolist() == expected, (state.phase, view)
        checked += len(actions)
    assert checked > 100


@pytest.mark.parametrize("options", CASES[:3], ids=["default", "3p-turn-up", "5p-drawn"])
def test_the_row_from_a_view_is_the_engines_own_import_of_the_state(options: dict[str, Any]) -> None:
    """With the true hands put in, the row built from the acting seat's view equals the engine's import of the full
    state in every column but those no playout reads (the deck and play order, which an import does not know
    either; the returns; who acted last; whether the turn-up is shown; the cards set aside; the hands as dealt)."""
    game = OhHell(**options)
    vec = OhHellVector(SPEC, 1, seed=0, **options)
    skip = {*range(DECK, DECK + 52), *range(HIST, HIST + 52), *range(RET, RET + 8), *range(DEALT, DEALT + 8)}
    skip |= {LAST_ACTOR, TURN_PUBLIC, SET_ASIDE}
    keep = [c for c in range(vec._state.shape[1]) if c not in skip]
    for state in positions(options, 60, seed=7):
        vec.import_state(0, state)
        row = vec._view_row(game.view(state, state.to_act))
        row[: state.num_players] = state.hands  # HAND is column 0 on
        assert row[keep].tolist() == vec._state[0, keep].tolist()


def test_the_agent_plays_legal_actions_from_the_view_and_a_generator_alone() -> None:
    game = OhHell(episode="deal")
    agent = OhHellSearch(SPEC, samples=6, bid_samples=6)
    assert list(inspect.signature(agent.act).parameters) == ["view", "rng"]
    for state in positions({"episode": "deal"}, 30, seed=3):
        view = game.view(state, state.to_act)
        first = agent.act(view, np.random.default_rng(5))
        assert first in game.legal_actions(state)
        assert agent.act(view, np.random.default_rng(5)) == first  # the generator decides every draw


def test_with_every_hand_known_one_deal_is_played_out() -> None:
    """Two players holding the whole pack: the sampler has one deal to give, and the search plays it out once."""
    options = {"episode": "deal", "num_players": 2, "hand_size": 26}
    game = OhHell(**options)
    agent = OhHellSearch(SPEC, **options)
    for state in positions(options, 10, seed=4):
        view = game.view(state, state.to_act)
        values = agent.action_values(view, np.random.default_rng(0), 50)
        actions = game.legal_actions(state)
        assert values.tolist() == [python_playout(game, state, a, options) for a in actions]


def test_bids_and_cards_follow_the_best_mean_playout_score() -> None:
    """The chosen action has the highest mean playout score over the same drawn deals (ties aside)."""
    game = OhHell(episode="deal")
    agent = OhHellSearch(SPEC, samples=8, bid_samples=8)
    for state in positions({"episode": "deal"}, 20, seed=11):
        view = game.view(state, state.to_act)
        if len(game.legal_actions(state)) == 1:
            continue
        count = agent.bid_samples if view.phase == "bidding" else agent.samples
        values = agent.action_values(view, np.random.default_rng(9), count)
        action = agent.act(view, np.random.default_rng(9))
        legal = game.legal_actions(state)
        assert values[legal.index(action)] == values.max()


def test_act_with_totals_is_act_and_the_values_it_chose_from() -> None:
    """``act_with_totals`` (whist-serve's study panel) plays what ``act`` plays and shows each legal action's mean
    playout score, those of ``action_values`` with the same generator, in bidding and card play; None where the
    fallback plays (max_tricks) or one action is legal."""
    game = OhHell(episode="deal")
    agent = OhHellSearch(SPEC, samples=4, bid_samples=4, max_tricks=8, episode="deal")
    phases = set()
    for state in positions({"episode": "deal"}, 40, seed=12):
        view = game.view(state, state.to_act)
        action, totals = agent.act_with_totals(view, np.random.default_rng(2))
        assert action == agent.act(view, np.random.default_rng(2))
        if totals is None:
            continue
        phases.add(view.phase)
        count = agent.bid_samples if view.phase == "bidding" else agent.samples
        values = agent.action_values(view, np.random.default_rng(2), count)
        assert totals == dict(zip(game.legal_actions(state), values.tolist(), strict=True)) and action in totals
    assert phases == {"bidding", "play"}


def test_pimc_names_the_search_in_oh_hell_with_its_settings_and_fallback() -> None:
    agent = make_agent("pimc:samples=3,bid_samples=5,max_tricks=2", "oh_hell_v0")
    assert isinstance(agent, OhHellSearch) and (agent.samples, agent.bid_samples, agent.max_tricks) == (3, 5, 2)
    hybrid = make_agent("pimc(samples=2, fallback=random)", "oh_hell_v0", num_players=3)
    assert isinstance(hybrid, OhHellSearch) and type(hybrid.fallback).__name__ == "RandomAgent"
    assert hybrid._vec.num_players == 3


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("pimc:samples=0", "samples must be an integer ≥ 1, got 0"),
        ("pimc:bid_samples=-2", "bid_samples must be an integer ≥ 1, got -2"),
        ("pimc:max_tricks=0", "max_tricks must be an integer ≥ 1, got 0"),
        ("pimc:horizon=3", "horizon is for the solver's PIMC.*own search takes samples, bid_samples, max_tricks"),
        ("pimc:playouts=3", "playouts is for the solver's PIMC.*own search takes samples, bid_samples, max_tricks"),
    ],
)
def test_bad_settings_are_errors_naming_what_is_allowed(text: str, match: str) -> None:
    with pytest.raises(OptionError, match=match):
        make_agent(text, "oh_hell_v0")


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"samples": 0}, "samples must be an int >= 1, got 0"),
        ({"bid_samples": 1.5}, "bid_samples must be an int >= 1, got 1.5"),
        ({"max_tricks": 0}, "max_tricks must be None or an int >= 1, got 0"),
        ({"num_players": 9}, "num_players"),
    ],
)
def test_the_constructor_checks_its_settings_too(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(OptionError, match=match):
        OhHellSearch(SPEC, **kwargs)


def test_with_max_tricks_the_early_card_play_is_the_fallbacks() -> None:
    game = OhHell(episode="deal")
    agent = OhHellSearch(SPEC, samples=4, bid_samples=4, max_tricks=3)
    heuristic = heuristic_for(SPEC, episode="deal")
    early = [s for s in positions({"episode": "deal"}, 40, seed=5) if s.phase == PHASE_PLAY and s.trick_number < 8]
    assert early
    for state in early:
        view = game.view(state, state.to_act)
        assert agent.act(view, np.random.default_rng(1)) == heuristic.act(view, np.random.default_rng(1))


@pytest.mark.slow
def test_the_search_beats_the_heuristic_on_duplicate_deals() -> None:
    """A small budget already beats the heuristic (its full measure, with the commands, is in docs/results_search.md):
    24 duplicate deals of 13 cards, each replayed with the seats swapped, seed 20261202."""
    from whist_env.evaluation import evaluate

    report = evaluate("oh_hell_v0", ["pimc:samples=12,bid_samples=24", "heuristic"], num_deals=24, seed=20261202)
    assert report.pairs[0].diff.mean > 0, report.to_markdown()


def test_the_hybrid_plays_the_shipped_network_where_the_search_leaves_the_play() -> None:
    """``pimc(fallback=pretrained)`` in Oh Hell: the shipped network plays the card play ``max_tricks`` leaves out."""
    from whist_env.agents.pretrained import PretrainedAgent

    options = dict(SPEC.single_deal)  # the network's own options
    hybrid = make_agent("pimc(samples=2, bid_samples=2, max_tricks=2, fallback=pretrained)", "oh_hell_v0", **options)
    assert isinstance(hybrid, OhHellSearch) and isinstance(hybrid.fallback, PretrainedAgent)
    game = OhHell(**options)
    early = [s for s in positions(options, 30, seed=2) if s.phase == PHASE_PLAY and s.trick_number < 10]
    for state in early:
        view = game.view(state, state.to_act)
        assert hybrid.act(view, np.random.default_rng(0)) == hybrid.fallback.act(view, np.random.default_rng(0))
    rng = np.random.default_rng(4)
    state = game.new_episode(rng)
    while not state.done:  # a whole deal with the hybrid at seat 0: every action it takes is legal
        seat = state.to_act
        action = hybrid.act(game.view(state, 0), rng) if seat == 0 else int(rng.choice(game.legal_actions(state)))
        game.step(state, action, rng)
