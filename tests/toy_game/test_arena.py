"""The toy plays a class tournament over the bot protocol with no protocol code of its own: its views go to JSON and
back through its declared extras, and its bots (which register the toy in their own process) play it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from whist_env.evaluation.protocol import ViewCodec, decode_line, encode_line
from whist_env.evaluation.tournament import load_tournament, run_tournament

TESTS = Path(__file__).resolve().parents[1]
BOT = f"""
import sys
sys.path.insert(0, {str(TESTS)!r})
import whist_env
from toy_game.spec import SPEC
whist_env.register(SPEC)  # a game of one's own is known in the bot's process too
from whist_env.evaluation.bot import run_bot
run_bot(sys.argv[1])
"""


def test_the_toys_views_go_to_json_and_back(low_whist_spec: Any) -> None:
    game = low_whist_spec.make_rules()
    codec = ViewCodec(game)
    rng = np.random.default_rng(1)
    state = game.new_episode(rng)
    while not state.done:
        for seat in range(game.num_players):
            view = game.view(state, seat)
            back = codec.from_json(decode_line(encode_line({"view": codec.to_json(view)}))["view"])
            assert back == view and type(back.extra) is type(view.extra)
        game.step(state, int(rng.choice(game.view(state, state.to_act).legal_actions())), rng)


def test_the_toy_plays_a_tournament_of_bots(low_whist_spec: Any, tmp_path: Path) -> None:
    (tmp_path / "bots").mkdir()
    for name, agent in (("rule_of_thumb", "heuristic"), ("coin", "random")):
        folder = tmp_path / "bots" / name
        folder.mkdir()
        (folder / "toy_bot.py").write_text(BOT)
        (folder / "bot.toml").write_text(f'command = ["{{python}}", "toy_bot.py", "{agent}"]\n')
    text = f'game = "{low_whist_spec.game_id}"\ndeals = 6\nworkers = 2\nbots = ["bots/*"]\n'
    (tmp_path / "tournament.toml").write_text(text)
    report = run_tournament(load_tournament(tmp_path / "tournament.toml"), tmp_path / "out")
    assert {s.name for s in report.standings} == {"rule_of_thumb", "coin"}
    # four sides: each bot alone against three copies of the other in every seat, then the other way round; each
    # bot holds 1 seat in four seatings and 3 in the other four: 6 deals x (4 x 1 + 4 x 3) seats x 13 cards
    assert [(s.faults, s.decisions) for s in report.standings] == [({}, 6 * 16 * 13)] * 2
    (only,) = report.matches
    assert len(only["diffs"]) == 6 and only["records"]["bytes"] > 0
