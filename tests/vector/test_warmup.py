"""Compiling a game's kernels on two cores (``whist_env.learning.warmup``): the second process compiles and ends well,
a failed or stuck one costs nothing but its own time, and a one-core machine starts none."""

from __future__ import annotations

import subprocess
import sys

import pytest

from whist_env.learning import warmup


def test_the_second_process_compiles_the_heuristics_port_and_ends_well() -> None:
    aside = warmup.compile_aside("german_whist_v0", {})
    assert aside is not None  # this machine has two cores
    warmup.compile_learner_path("german_whist_v0", {})
    assert aside.wait(timeout=300)


def test_a_failed_or_stuck_second_process_is_reported_and_stopped() -> None:
    failed = warmup.compile_aside("no_such_game_v0", {})
    assert failed is not None and not failed.wait(timeout=120)
    stuck = warmup.Aside(subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"]))
    assert not stuck.wait(timeout=0.5)
    assert stuck.proc.returncode is not None  # killed, not left behind


def test_one_core_starts_no_second_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(warmup.os, "cpu_count", lambda: 1)
    assert warmup.compile_aside("german_whist_v0", {}) is None


@pytest.mark.parametrize("game_id", ["oh_hell_v0", "classic_whist_v0"])
def test_both_halves_run_for_other_games_and_options(game_id: str) -> None:
    options = {"episode": "deal"}
    assert warmup.compile_heuristic(game_id, options).tolist() == [-1]  # a fresh engine: nobody to act yet
    assert warmup.compile_learner_path(game_id, options) == 6  # two tables, three learner decisions each
