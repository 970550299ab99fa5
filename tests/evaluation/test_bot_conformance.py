"""``whist-bot check`` (whist_env.evaluation.conformance): the starters pass in every phase of every game; a bot that
prints debugging to stdout, answers what needs no answer or stays after the goodbye is told so in plain words."""

from __future__ import annotations

import io
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from whist_env.cli.arena import bot_main
from whist_env.evaluation.conformance import check_bot
from whist_env.evaluation.referee import is_subreaper
from whist_env.registry import game_ids

STARTERS = Path(__file__).resolve().parents[2] / "whist_env" / "evaluation" / "starters"

CHATTY = """
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "hello":
        print(json.dumps({"type": "hello", "protocol": 1}), flush=True)
    elif message["type"] == "act":
        print("thinking about", len(message["view"]["hand"]), "cards")  # debugging on stdout
        print(message["view"]["legal"][0], flush=True)
    elif message["type"] == "goodbye":
        break
"""

EAGER = """
import json, sys, time
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "hello":
        print(json.dumps({"type": "hello", "protocol": 1}), flush=True)
    elif message["type"] == "act":
        print(message["view"]["legal"][0], flush=True)
    elif message["type"] not in ("deal_end", "match_end", "goodbye"):
        print(0, flush=True)  # answers a message it does not know
time.sleep(60)  # and stays after the goodbye
"""


def test_the_python_starter_passes_every_phase_of_every_game(capsys: pytest.CaptureFixture) -> None:
    assert bot_main(["check", str(STARTERS / "starter.py"), "--deals", "1"]) == 0
    assert not is_subreaper()  # the check's subreaper ends with it: the caller's process is as it was
    out = capsys.readouterr().out
    for game_id in game_ids():
        assert f"{game_id}: " in out and out.count(": ok") >= len(game_ids()) + 2
    assert "phases bidding, play" in out and "phases exchange, play" in out  # Oh Hell's bids, the Humbug exchange
    assert out.rstrip().endswith("no problem found: the bot is ready for a tournament")


PRINTER = """
import sys
from whist_env.evaluation.bot import run_bot

def act(view, rng):
    print("thinking about", view.hand, "in phase", view.phase, "x" * 200)  # debugging with print(): to stderr
    return view.legal_actions()[0]

run_bot(act)
"""


def test_print_in_a_python_bot_goes_to_stderr(tmp_path: Path) -> None:
    """The helper sends print() to standard error: 40 deals of debugging (far past Python's output buffer) cost no
    fault, and the check's command may name the bot's file relative to the current folder."""
    (tmp_path / "printer.py").write_text(PRINTER)
    report = check_bot((sys.executable, str(tmp_path / "printer.py")), ["german_whist_v0"], deals=40)
    assert report.problems == 0, report.text()


def test_a_byte_order_mark_before_the_hello_answer_is_no_problem(tmp_path: Path) -> None:
    """A .NET bot that sets Console.OutputEncoding to UTF-8 writes a byte order mark before its first line: the hello
    answer was then malformed, and the bot could not play."""
    bot = tmp_path / "marked.py"
    bot.write_text(
        "import sys\nsys.stdout.buffer.write(b'\\xef\\xbb\\xbf')\n"
        "from whist_env.evaluation.bot import run_bot\nrun_bot(lambda view, rng: view.legal_actions()[0])\n"
    )
    report = check_bot((sys.executable, bot.name), ["german_whist_v0"], source=str(bot))
    assert report.problems == 0, report.text()


def test_the_javascript_starter_passes() -> None:
    report = check_bot(("node", "starter.js"), ["german_whist_v0", "oh_hell_v0"], source=str(STARTERS / "starter.js"))
    assert report.problems == 0, report.text()


def test_debugging_on_stdout_is_named(tmp_path: Path) -> None:
    bot = tmp_path / "chatty.py"
    bot.write_text(CHATTY)
    report = check_bot((sys.executable, bot.name), ["german_whist_v0"], source=str(bot))
    text = report.text()
    assert report.problems >= 1 and "malformed" in text and "print debugging to stderr" in text
    assert "'thinking about 13 cards'" in text and "would forfeit the match" in text


def test_a_python_bot_whose_act_returns_no_action_is_told_why(tmp_path: Path) -> None:
    """An ``act`` that returns a bool (it played card 0 or 1 before), and the check shows the end of the bot's stderr
    under its faults, where the helper says what ``act`` returned."""
    bot = tmp_path / "boolean.py"
    bot.write_text("from whist_env.evaluation.bot import run_bot\nrun_bot(lambda view, rng: view.legal > 0)\n")
    report = check_bot((sys.executable, bot.name), ["german_whist_v0"], source=str(bot))
    text = report.text()
    assert "malformed" in text and "'true' names no action" in text, text
    assert "the end of its stderr: " in text and "got True: act must return an action id" in text, text


def test_answering_what_needs_no_answer_and_staying_after_goodbye_are_named(tmp_path: Path) -> None:
    bot = tmp_path / "eager.py"
    bot.write_text(EAGER)
    report = check_bot((sys.executable, bot.name), ["humbug_v0"], source=str(bot))
    text = report.text()
    assert "humbug_v0: " in text and "a message of a type it does not know: it answered b'0'" in text
    assert "goodbye: it did not exit" in text and report.problems == 2, text


NAIVE = """
import json, sys
import jsonschema
from whist_env.evaluation.protocol import schema
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] != "notice":  # the one the check makes up: every other is one the protocol has
        jsonschema.validate(message, schema())
    if message["type"] == "hello":
        print(json.dumps({"type": "hello", "protocol": 1}), flush=True)
    elif message["type"] == "goodbye":
        break
    elif message["type"] == "act":
        print(message["legal"][0]["id"], flush=True)
    elif message["type"] == "deal_end":
        print(0, flush=True)  # answers the news of a deal's end: its next act reads this line as its answer
"""


def test_a_bot_that_answers_deal_end_is_told_so(tmp_path: Path) -> None:
    """Found by writing the loop a student writes first (answer every line): its games show illegal answers in the
    second deal, and the hint said only to answer legal actions. The edge cases now send a deal_end and name the
    answer to it; a message of a type it does not know, which it ignores, passes."""
    bot = tmp_path / "naive.py"
    bot.write_text(NAIVE)
    report = check_bot((sys.executable, bot.name), ["german_whist_v0"], source=str(bot))
    text = report.text()
    assert "a deal_end: it answered b'0'" in text and "deal_end, match_end and goodbye are news" in text, text
    assert "a message of a type it does not know: ignored: ok" in text, text
    assert "one legal action: answered 7D: ok" in text and "goodbye: it exited" in text, text


STRICT = """
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "hello":
        print(json.dumps({"type": "hello", "protocol": 1}), flush=True)
    elif message["type"] == "act":
        print(message["legal"][0]["id"], flush=True)
    elif message["type"] == "goodbye":
        break
    elif message["type"] not in ("deal_end", "match_end"):
        raise ValueError("unknown message type " + message["type"])
"""


def test_a_bot_that_ends_on_a_message_it_does_not_know_is_told_so(tmp_path: Path) -> None:
    """A bot that raises on a type it does not know passed that line ("ignored: ok": no answer came), and its end
    was blamed on the act that followed, with "goodbye: it exited ...: ok" after it."""
    bot = tmp_path / "strict.py"
    bot.write_text(STRICT)
    report = check_bot((sys.executable, bot.name), ["humbug_v0"], source=str(bot))
    text = report.text()
    said = "a message of a type it does not know: the process ended (exit status 1); the end of its stderr: "
    assert said in text and "unknown message type notice" in text and "ignore a type you do not know" in text, text
    assert "ignored: ok" not in text and "goodbye" not in text and "an act with a field" not in text, text
    assert "the rest of the edge cases: not checked (the process has ended)" in text and report.problems == 1, text


def test_a_bot_that_ends_on_a_field_it_does_not_know_gets_no_goodbye_ok(tmp_path: Path) -> None:
    """It ends at the act with a field from a later version: the act's line says so, and the goodbye's line no
    longer says "it exited in 0.00 s (exit status 1): ok"."""
    bot = tmp_path / "fields.py"
    strict_fields = STRICT.replace('raise ValueError("unknown message type " + message["type"])', "pass")
    refuses = '"act":\n        assert "a_field_from_a_later_version" not in message'
    bot.write_text(strict_fields.replace('"act":', refuses))
    report = check_bot((sys.executable, bot.name), ["humbug_v0"], source=str(bot))
    text = report.text()
    assert "a message of a type it does not know: ignored: ok\na deal_end: ignored: ok" in text, text
    assert "an act with a field it does not know: the process ended (exit status 1)" in text, text
    assert "goodbye: not sent: the process had ended (exit status 1), as said above" in text, text
    assert "exited in" not in text and report.problems == 1, text


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("heuristc", "did you mean 'heuristic'"),
        ("pimc(samples=-1)", "samples must be an integer"),
        ("model:/no/such/model.zip", "there is no file /no/such/model.zip"),
        ("pimc(fallback=pretrained(path=/no/such.npz))", "there is no file /no/such.npz"),
    ],
)
def test_whist_bot_run_refuses_a_bad_agent_before_the_hello(
    spec: str, says: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    """Started by hand, with no referee on stdin, it said nothing and exited 0."""
    monkeypatch.setattr(sys, "stdin", SimpleNamespace(buffer=io.BytesIO()))  # no referee: the input ends at once
    assert bot_main(["run", spec]) == 2
    assert says in capsys.readouterr().err


def test_whist_bot_check_of_nothing_says_what_to_give(capsys: pytest.CaptureFixture) -> None:
    assert bot_main(["check", ""]) == 2  # it said: the bot folder . has no bot.toml
    assert "name the bot's command" in capsys.readouterr().err
