"""The toy follows the recipe to the end (docs/adding_a_game.md): its batched engine in lockstep with its AEC env,
its heuristic's port deciding as the Python heuristic, the batched arena giving the AEC arena's report, and the
template covering its rendered loops."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from whist_env.evaluation import ArenaConfig, evaluate, play_deals
from whist_env.evaluation.batched import evaluate_batched, play_batched
from whist_env.testing import compare_positions, lockstep
from whist_env.vector import make, template, vector_game_ids
from whist_env.vector.heuristics import BatchedHeuristic, ported_games

from .rules import LowWhist
from .spec import SPEC

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
GRID = [dict(options) for options in SPEC.option_grid]
NUM_DEALS = 16


class Lowest:
    """The lowest legal action (deterministic: both arenas play the same cards)."""

    name = "lowest"

    def act(self, view: Any, rng: np.random.Generator) -> int:
        return int((view.legal & -view.legal).bit_length() - 1)


def lowest(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """:class:`Lowest`, batched."""
    return mask.argmax(axis=1)


def test_the_toy_has_an_engine_and_a_port(low_whist_spec: Any) -> None:
    game_id = low_whist_spec.game_id
    assert game_id in vector_game_ids() and game_id in ported_games()
    venv = make(game_id, 3, seed=0, num_deals=2)
    assert venv.obs_dtype == np.float32  # deals_left is a scalar
    ts = venv.reset()
    assert (ts.current_player >= 0).all() and ts.observation.shape == (3, venv.observation_size)


@pytest.mark.parametrize("options", GRID, ids=str)
def test_lockstep_over_the_option_grid(low_whist_spec: Any, options: dict[str, Any]) -> None:
    """Seat to act, mask, observation bit for bit, rewards, terminations and exported state as the AEC twins'."""
    assert lockstep(low_whist_spec.game_id, options, num_envs=8, min_deals=60, seed=len(options)) >= 60


def test_lockstep_float32_observations(low_whist_spec: Any) -> None:
    assert lockstep(low_whist_spec.game_id, {"include_history": False}, 4, min_deals=8, seed=3, obs_dtype="float32")


def test_the_trick_goes_to_the_lowest_card_of_the_led_suit(low_whist_spec: Any) -> None:
    """The deck of test_rules: seat 0 leads the ace of clubs, seat 1's three is the lowest club and wins."""
    deck = np.array([13 * s + r for s in range(4) for r in range(13)])
    venv = make(low_whist_spec.game_id, 1, seed=0)
    venv.reset(options={"decks": deck[None], "dealers": [3]})
    for card in (12, 1, 2, 3):  # AC 3C 4C 5C
        ts = venv.step([card])
    assert int(ts.current_player[0]) == 1 and venv.field("tricks_won")[0, :4].tolist() == [0, 1, 0, 0]


def test_export_and_import_round_trip_with_quarter_point_returns(low_whist_spec: Any) -> None:
    game = LowWhist(num_deals=2)
    rng = np.random.default_rng(4)
    state = game.new_episode(rng)
    while state.deal_index == 0 or len(state.history) < 9:
        game.step(state, int(rng.choice([c for c in range(52) if game.legal_mask(state) >> c & 1])), rng)
    assert any(r != int(r) for r in state.returns)  # tricks less 13 / 4
    venv = make(low_whist_spec.game_id, 2, seed=0, num_deals=2)
    venv.import_state(1, state)
    back = venv.export_state(1)
    assert back.returns == state.returns and back.scores == state.scores and back.history == state.history
    assert venv.field("returns")[1, :4].tolist() == state.returns


@pytest.mark.parametrize("options", GRID, ids=str)
def test_the_port_decides_as_the_python_heuristic(low_whist_spec: Any, options: dict[str, Any]) -> None:
    decided = compare_positions(low_whist_spec.game_id, options, 3000, seed=7)
    assert decided.total() >= 3000 and len(decided) == 52  # every card was some decision


def test_the_port_in_its_own_play(low_whist_spec: Any) -> None:
    decided = compare_positions(low_whist_spec.game_id, {}, 3000, seed=8, num_envs=16, heuristic_share=0.95)
    assert decided.total() >= 3000


def test_the_batched_arena_plays_the_aec_arenas_deals(low_whist_spec: Any) -> None:
    game_id = low_whist_spec.game_id
    config = ArenaConfig(game_id, ("heuristic", Lowest()), NUM_DEALS, seed=13)
    aec, _ = play_deals(config)
    bat, _ = play_batched(config, [BatchedHeuristic(game_id, **config.game_options()), lowest], batch_size=10)
    for a, b in zip(aec, bat, strict=True):
        assert [t.returns for t in b.tables] == [t.returns for t in a.tables], f"deal {a.index}"
        assert b.decisions == a.decisions and b.illegal == a.illegal
    report_aec = evaluate(game_id, ["heuristic", Lowest()], NUM_DEALS, seed=3)
    report_bat = evaluate_batched(game_id, ["heuristic", lowest], NUM_DEALS, seed=3, batch_size=10)
    assert report_bat.to_dict(timing=False) == report_aec.to_dict(timing=False)
    assert report_bat.timing["engine"] == "batched"


def test_the_batched_arena_plays_the_heuristic_against_random(low_whist_spec: Any) -> None:
    report = evaluate_batched(low_whist_spec.game_id, ["heuristic", "random"], 64, seed=1)
    assert report.num_deals == 64 and all(a.illegal == 0 for a in report.agents)
    assert report.agent("heuristic").mean.mean > report.agent("random").mean.mean
    again = evaluate_batched(low_whist_spec.game_id, ["heuristic", "random"], 64, seed=1)
    assert again.to_dict(timing=False) == report.to_dict(timing=False)


def test_the_template_covers_the_toys_blocks(low_whist_spec: Any) -> None:
    """Registered, the toy's engine and port are among the generator's targets and rendered as the template says;
    named on the command line, the generator checks them without the registry."""
    mine = {(t.kind, t.path) for t in template.targets() if t.game_id == low_whist_spec.game_id}
    assert mine == {("engine", HERE / "engine.py"), ("port", HERE / "engine_heuristic.py")}
    assert not any(template.stale(t) for t in template.targets())
    files = [str(HERE / "engine.py"), str(HERE / "engine_heuristic.py")]
    assert {(t.kind, t.path) for t in template.file_targets(files)} == mine
    done = subprocess.run(
        [sys.executable, "-m", "whist_env.vector.template", "--check", *files], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    with pytest.raises(template.TemplateError, match="needs exactly one of the lines"):
        template.file_targets([str(HERE / "rules.py")])
