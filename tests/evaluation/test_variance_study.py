"""``benchmarks/bench_variance.py``, the variance study of issue #43: its tables are the arena's, and its terms are
exactly 0 where theory says so."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))  # the study lives with the benchmarks

import bench_variance as study  # noqa: E402

from whist_env.evaluation.arena import Arena, ArenaConfig  # noqa: E402


def random_value(tmp_path: Path) -> study.Value:
    rng = np.random.default_rng(0)
    path = tmp_path / "value.npz"
    np.savez(path, **{g: rng.normal(size=(study.STAGES, study.NUM_FEATURES)) for g in study.GAMES})
    return study.Value(path)


@pytest.mark.parametrize("game_id", ["german_whist_v0", "humbug_whist_v0"])
def test_the_study_plays_the_arenas_tables(game_id: str, tmp_path: Path) -> None:
    """The sampled network acts through the study's one forward pass with the arena's generators: the same cards,
    the same per-deal differences as the arena's own play."""
    pairing = (study.SAMPLED, "heuristic")
    rows = study.play_deals(study.arena_of(game_id, pairing, 3, 11), 3, random_value(tmp_path))
    arena = Arena(ArenaConfig(game_id, pairing, 3, 11))  # type: ignore[arg-type]
    for index in range(3):
        a, b = arena.play_deal(index).scores(2)
        assert rows[index, 0] == pytest.approx(a - b)
    assert rows[:, 1].any() and (game_id == "humbug_whist_v0" or rows[:, 2].any())


def test_the_terms_are_exactly_0_where_theory_says(tmp_path: Path) -> None:
    """Deterministic agents give decision terms of exactly 0, and Humbug (no chance after the deal) chance terms of
    exactly 0, whatever V is; German Whist's chance terms are not."""
    value = random_value(tmp_path)
    humbug = study.play_deals(study.arena_of("humbug_v0", ("pretrained", "heuristic"), 2, 3), 2, value)
    assert not humbug[:, 1:3].any()
    german = study.play_deals(study.arena_of("german_whist_v0", ("pretrained", "heuristic"), 2, 3), 2, value)
    assert not german[:, 1].any() and german[:, 2].all()
