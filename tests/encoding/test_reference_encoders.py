"""The fast bit-table encoders equal the slow reference encoders bit for bit, along random games.

Every entry of every game's option grid; every seat's view at every decision (and at the end of the
episode). A mismatch names the pieces that differ and prints both sides in words.
"""

from __future__ import annotations

import ast
import importlib
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from whist_env import make
from whist_env.encoding.reference.common import ReferenceTrickEncoder
from whist_env.registry import game_ids, get_spec
from whist_env.testing import mismatch_report, reference_mismatches

# game id -> the reference encoder, built from the game's rules object (every registered game that names one)
REFERENCES: dict[str, Callable[[Any], ReferenceTrickEncoder]] = {
    game_id: cls for game_id in game_ids() if (cls := get_spec(game_id).reference_cls()) is not None
}
# The fast suite plays up to two dozen random episodes per option-grid entry, but stops after the episode
# in which its budget of views is spent: a whole classic-whist game or rubber is 1,000+ views, and one
# view costs about 0.2 ms here. The slow suite plays its episodes in full.
FAST_GAMES, FAST_VIEWS = 24, 2_500
SLOW_GAMES = 60


def option_grid(game_id: str) -> list[dict[str, Any]]:
    """The option sets the conformance tests run for ``game_id`` (its spec's ``option_grid``)."""
    return [dict(o) for o in get_spec(game_id).option_grid]


def grid_cases() -> list[Any]:
    cases = []
    for game_id in sorted(REFERENCES):
        for options in option_grid(game_id):
            label = ",".join(f"{k}={v}" for k, v in options.items()) or "default"
            cases.append(pytest.param(game_id, options, id=f"{game_id}[{label}]"))
    return cases


def check_games(game_id: str, options: dict[str, Any], num_games: int, seed: int, max_views: int | None = None) -> int:
    """Hold the fast encoder to the reference along random episodes (:func:`whist_env.testing.reference_mismatches`);
    fail naming the pieces at the first difference, else return how many views were compared."""
    checked, report = reference_mismatches(game_id, options, num_games, seed, max_views)
    if report is not None:
        pytest.fail(report)
    return checked


@pytest.mark.parametrize(("game_id", "options"), grid_cases())
def test_fast_encoder_equals_reference(game_id: str, options: dict[str, Any]) -> None:
    assert check_games(game_id, options, FAST_GAMES, seed=15, max_views=FAST_VIEWS) > 0


@pytest.mark.slow
@pytest.mark.parametrize(("game_id", "options"), grid_cases())
def test_fast_encoder_equals_reference_many_games(game_id: str, options: dict[str, Any]) -> None:
    assert check_games(game_id, options, SLOW_GAMES, seed=1015) > 0


def test_every_game_has_a_reference() -> None:
    # a toy game registered by another test has no reference; every game the package ships must
    shipped = [g for g in game_ids() if type(make(g, raw=True).game).__module__.startswith("whist_env.")]
    assert sorted(shipped) == sorted(REFERENCES)


def test_the_references_import_no_fast_encoder() -> None:
    # A reference that reused the fast encoders' code or bit tables would share their bugs. Checked in
    # the source, not in sys.modules: what ``import whist_env`` pulls in is not the references' doing.
    specs = [get_spec(game_id) for game_id in REFERENCES]
    fast = {"whist_env.encoding.trick"} | {type(spec.make_encoder(spec.make_rules())).__module__ for spec in specs}
    modules = [Path(importlib.import_module("whist_env.encoding.reference.common").__file__ or "")]
    modules += [Path(importlib.import_module((spec.reference or "").split(":")[0]).__file__ or "") for spec in specs]
    for path in modules:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                names = {node.module or ""} | {f"{node.module}.{a.name}" for a in node.names}
            elif isinstance(node, ast.Import):
                names = {a.name for a in node.names}
            else:
                continue
            assert not names & fast, f"{path.name} imports a fast encoder: {sorted(names & fast)}"


@pytest.mark.parametrize("game_id", sorted(REFERENCES))
def test_a_mismatch_names_the_piece(game_id: str) -> None:
    env = make(game_id, raw=True)
    state = env.game.new_episode(np.random.default_rng(0))
    view = env.game.view(state, 0)
    layout = env.encoder.layout
    ref = REFERENCES[game_id](env.game).encode(view)
    wrong = ref.copy()
    wrong[layout.slice("hand")] = 0.0  # as if the fast encoder forgot the hand
    assert re.search(r"piece 'hand' \[0:52\]: fast \[\], reference \[", mismatch_report(layout, wrong, ref, view))


def test_encode_state_takes_the_view_of_a_game_that_overrides_it() -> None:
    """``encode_state`` does the view's work itself only for a game that leaves ``view()`` as it is: a game whose
    ``view()`` hides something gets its own view encoded (the trump suit hidden here, which the state path would
    show)."""
    from whist_env.games.classic_whist.rules import ClassicWhist
    from whist_env.testing import play_random_episode
    from whist_env.view import PlayerView

    class TrumpHidden(ClassicWhist):
        def view(self, state: Any, seat: int) -> PlayerView:
            view = super().view(state, seat)
            view.trump = None
            return view

    game = TrumpHidden()
    encoder = get_spec("classic_whist_v0").make_encoder(game)
    trump = encoder.layout.slice("trump")
    rng = np.random.default_rng(5)
    for state in play_random_episode(game, rng, check=False):
        seat = max(state.to_act, 0)
        obs, mask = encoder.encode_state(game, state, seat)
        want, want_mask = encoder.encode_with_mask(game.view(state, seat))
        assert obs.tobytes() == want.tobytes() and mask.tobytes() == want_mask.tobytes()
        assert obs[trump][-1] == 1.0  # NT: hidden
