"""The Python bot helper (whist_env.evaluation.bot): a function, an object or an agent spec plays over the protocol;
it answers the hello, every act and nothing else, stops at the goodbye, and refuses another protocol version or an
unknown game in one line."""

from __future__ import annotations

import io
import json
from typing import Any

import numpy as np
import pytest

from whist_env.agents import endgame
from whist_env.agents.factory import make_agent
from whist_env.evaluation import protocol
from whist_env.evaluation.bot import run_bot
from whist_env.evaluation.protocol import ViewCodec, encode_line
from whist_env.registry import get_spec


def script(game_id: str, seed: int, deals: int = 2, seat: int = 0) -> tuple[list[bytes], list[Any], Any]:
    """The lines a referee would send one seat over ``deals`` deals (every other seat playing its lowest legal
    action), with a message the bot must ignore after the hello, and the views of that seat's decisions."""
    spec = get_spec(game_id)
    options = dict(spec.single_deal)
    game = spec.make_rules(**options)
    codec = ViewCodec(game)
    layout = protocol.layout_of(spec.make_encoder(game))
    lines = [encode_line(protocol.hello(game, options, seat, seed, {"decision_s": 1.0}, layout, deals))]
    lines.append(encode_line({"type": "notice", "text": "a type this version does not know is ignored"}))
    views = []
    rng = np.random.default_rng(seed)
    for deal in range(deals):
        state = game.new_episode(rng)
        while not state.done:
            view = game.view(state, state.to_act)
            if state.to_act == seat:
                views.append(view)
                lines.append(encode_line({"type": "act", "deal": deal, "decision": len(views), "extra_field": 1,
                                          "view": codec.to_json(view), "legal": codec.legal(view)}))  # fmt: skip
                action = int(view.legal_actions()[-1])
            else:
                action = int(view.legal_actions()[0])
            game.step(state, action, rng)
        lines.append(encode_line({"type": "deal_end", "deal": deal, "returns": list(state.returns),
                                  "view": codec.to_json(game.view(state, seat))}))  # fmt: skip
    lines.append(encode_line({"type": "match_end", "deals": deals, "returns": [0.0] * game.num_players, "faults": 0,
                              "forfeit": False}))  # fmt: skip
    lines.append(encode_line({"type": "goodbye", "reason": "the match is over"}))
    return lines, views, game


def play(bot: Any, lines: list[bytes], **kwargs: Any) -> list[Any]:
    out = io.BytesIO()
    run_bot(bot, stdin=io.BytesIO(b"".join(lines)), stdout=out, **kwargs)
    return [json.loads(line) for line in out.getvalue().splitlines()]


@pytest.mark.parametrize("game_id", ["german_whist_v0", "oh_hell_v0", "humbug_whist_v0"])
def test_a_library_agent_answers_the_hello_and_every_act_as_in_process(game_id: str) -> None:
    lines, views, game = script(game_id, seed=4)
    answers = play("heuristic", lines)
    assert answers[0] == {"type": "hello", "protocol": protocol.PROTOCOL, "name": "heuristic"}
    agent = make_agent("heuristic", get_spec(game_id), **get_spec(game_id).single_deal)
    rng = np.random.default_rng(4)
    assert answers[1:] == [agent.act(view, rng) for view in views]


def test_a_function_and_an_object_play_and_hear_how_deals_end() -> None:
    lines, views, _ = script("german_whist_v0", seed=9)
    seen: list[tuple[Any, ...]] = []

    def lowest(view: Any, rng: np.random.Generator) -> int:
        seen.append((view.seat, isinstance(rng, np.random.Generator)))
        return view.legal_actions()[0]

    answers = play(lowest, lines, name="lowest")
    assert answers[0]["name"] == "lowest" and answers[1:] == [v.legal_actions()[0] for v in views]
    assert seen == [(0, True)] * len(views)

    class Labels:
        name = "labels"

        def __init__(self) -> None:
            self.hello: dict[str, Any] = {}
            self.ends: list[str] = []

        def setup(self, hello: dict[str, Any]) -> None:
            self.hello = hello

        def act(self, view: Any, rng: np.random.Generator) -> str:
            return _label(view.legal_actions()[0])  # a card's name is an answer too

        def deal_end(self, message: dict[str, Any]) -> None:
            self.ends.append(message["type"])

        def match_end(self, message: dict[str, Any]) -> None:
            self.ends.append(message["type"])

    bot = Labels()
    answers = play(bot, lines)
    assert bot.hello["game"] == "german_whist_v0" and bot.ends == ["deal_end", "deal_end", "match_end"]
    assert answers[1:] == [_label(v.legal_actions()[0]) for v in views]


def test_what_act_returns_is_sent_as_the_env_takes_an_action(capsys: pytest.CaptureFixture) -> None:
    """Found by a hostile-input audit: the helper wrote ``b"%d" % action`` for an int, so an ``act`` that returned a
    bool (a comparison, by mistake) played action 1 (3♣) or 0 (2♣) where it was legal, with no fault; and a
    one-element integer array, which the AEC env takes, crashed the bot. An action is now what the env's
    ``as_action`` takes (an int, a numpy integer, a one-element integer array); a string goes as a label; anything
    else goes as JSON, which the referee counts as malformed, and a line on stderr says why."""
    lines, views, _ = script("german_whist_v0", seed=9)
    first = views[0].legal_actions()[0]
    for returned, sent in [
        (lambda v: np.int64(v.legal_actions()[0]), first),
        (lambda v: np.array([v.legal_actions()[0]]), first),
        (lambda v: True, True),
        (lambda v: False, False),
        (lambda v: float(v.legal_actions()[0]), float(first)),
        (lambda v: None, None),
        (lambda v: {v.legal_actions()[0]}, repr({first})),  # not JSON: its repr, which names no action either
        (lambda v: 99, 99),  # an int outside the action space: an illegal answer, no note
    ]:
        answers = play(lambda view, rng, returned=returned: returned(view), lines[:3])
        assert answers[1] == sent and type(answers[1]) is type(sent), (answers[1], sent)
        err = capsys.readouterr().err
        note = "an action must be an int in 0..51" in err and "act must return an action id" in err
        assert note == (type(sent) is not int), err


def _label(card: int) -> str:
    return "23456789TJQKA"[card % 13] + "CDHS"[card // 13]


def test_another_protocol_version_or_an_unknown_game_is_one_line_and_status_2(capsys: pytest.CaptureFixture) -> None:
    lines, _, _ = script("german_whist_v0", seed=1)
    hello = json.loads(lines[0])
    for changed, needle in (({"protocol": protocol.PROTOCOL + 1}, "protocol"), ({"game": "no_such_game_v0"}, "game")):
        with pytest.raises(SystemExit) as stop:
            play(lambda v, r: 0, [encode_line({**hello, **changed})])
        assert stop.value.code == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and needle in err


def test_a_short_match_solves_endings_in_plain_python_with_the_same_cards(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bot process of a hundred deals skips numba (0.6 s to load): the helper turns the heuristics' endgame solver
    to the plain one, which gives the same cards (the heuristic's answers above are checked against in-process)."""
    monkeypatch.setattr(endgame, "_kernel", None)
    lines, _, _ = script("german_whist_v0", seed=2, deals=1)
    play("heuristic", lines)
    assert endgame._kernel is endgame._plain_kernel
