"""The toy, added with ``whist_env.register`` only, played in worker processes: spawned workers start with the
built-in games, so the arena and the warm start send them the game's spec (and register it there)."""

from __future__ import annotations

import pickle
from typing import Any

from whist_env.evaluation import evaluate
from whist_env.learning.cloning import generate_dataset


def test_the_spec_pickles_by_reference_to_its_functions(low_whist_spec: Any) -> None:
    """What a worker receives: the spec's fields, its rules class and functions named by module (not copied)."""
    copy = pickle.loads(pickle.dumps(low_whist_spec))
    assert copy == low_whist_spec
    assert copy.rules_cls is low_whist_spec.rules_cls and copy.make_encoder is low_whist_spec.make_encoder


def test_the_aec_arena_plays_a_registered_game_in_two_workers(low_whist_spec: Any) -> None:
    game_id = low_whist_spec.game_id
    one = evaluate(game_id, ["heuristic", "random"], num_deals=8, seed=2)
    two = evaluate(game_id, ["heuristic", "random"], num_deals=8, seed=2, workers=2)
    assert two.timing["workers"] == 2 and two.num_deals == 8
    assert [a.mean for a in two.agents] == [a.mean for a in one.agents]
    assert sum(a.illegal for a in two.agents) == 0


def test_the_warm_start_plays_a_registered_game_in_two_workers(low_whist_spec: Any) -> None:
    one = generate_dataset(low_whist_spec.game_id, {}, teacher="heuristic", deals=6, seed=1)
    two = generate_dataset(low_whist_spec.game_id, {}, teacher="heuristic", deals=6, seed=1, workers=2)
    assert len(two) == len(one) == 6 * 52
    assert (two.action == one.action).all() and (two.obs == one.obs).all()
