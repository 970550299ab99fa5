"""``whist-bot check``: a bot played through a short script before it meets anyone, each problem said in plain words.

For every game it names, the bot plays a couple of deals at two seats (the referee's stand-in plays the others),
through every phase the game has (bidding, the exchange, both stages of German Whist, card play), under the limits a
tournament applies. Then the cases a bot must get right besides: a message of a type it does not know and fields it
does not know (ignored: a later protocol may add them), a ``deal_end`` (news: not answered), a decision with one
legal action, and the goodbye (it must exit). The verdict is a line per part, ``ok`` or what went wrong and what to
do about it.
"""

from __future__ import annotations

import selectors
import statistics
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from whist_env.evaluation.protocol import AnswerError, check_hello_answer, clip, decode_line, encode_line, hello
from whist_env.evaluation.referee import (
    FAULT_KINDS,
    BotCommand,
    BotLedger,
    BotProcess,
    Limits,
    Referee,
    Seating,
    stand_in,
)
from whist_env.registry import get_spec

STAND_IN = "the referee's stand-in"
HINTS = {
    "start": 'it must answer the hello with one line: {"type": "hello", "protocol": 1}',
    "version": "speak the referee's protocol version (the hello's \"protocol\")",
    "timeout": "answer each act within the time per decision (the hello's limits.decision_s)",
    "illegal": 'answer one of the act\'s legal actions (message["legal"], or view.legal_actions() in Python)',
    "malformed": "write only answers on standard output, one JSON value per line (in Python, act returns an action "
    "id of view.legal_actions()); print debugging to stderr",
    "flood": "keep each answer to one short line, and read every message on standard input",
    "budget": "your answers together took longer than the match's time budget (limits.match_s)",
    "crash": "it ended with an error: its last words on stderr say why",
    "exit": "it must keep running until the goodbye",
    "leftover": "end every process you start before your bot exits",
}
"""What to do about each kind of fault, in a student's words."""
News = dict[str, tuple[dict[str, Any], str]]
"""Messages that want no answer, by what each is: the message, and the hint for a bot that answers or ends on it."""


@dataclass
class CheckReport:
    """What ``whist-bot check`` found: a line per part, and the number of problems."""

    lines: list[str] = field(default_factory=list)
    problems: int = 0

    def add(self, text: str, problem: bool = False) -> None:
        """One line of the report (``problem``: it counts)."""
        self.lines.append(text)
        self.problems += problem

    def text(self) -> str:
        """The report, with its verdict last."""
        verdict = (
            "no problem found: the bot is ready for a tournament"
            if not self.problems
            else f"{self.problems} problem{'s' if self.problems > 1 else ''} found: fix them, then check again"
        )
        return "\n".join([*self.lines, verdict])


def check_bot(
    argv: Sequence[str],
    games: Sequence[str],
    limits: Limits | None = None,
    deals: int = 2,
    source: str | None = None,
    prefix: Sequence[str] = (),
) -> CheckReport:
    """Play the bot ``argv`` through the script (see the module docstring).

    Args:
        argv: the bot's command (run in a fresh folder holding a copy of ``source``).
        games: the games' ids.
        limits: the limits (default: a tournament's).
        deals: deals per game at its first seat (one more at a second seat).
        source: a file or folder copied into the bot's working directory (None: the command runs as given).
        prefix: a command that wraps the bot's (a sandbox).
    """
    limits = limits or Limits()
    report = CheckReport()
    bot = BotCommand("bot", tuple(argv), source)
    for game_id in games:
        _check_game(report, bot, game_id, limits, deals, tuple(prefix))
    _check_edges(report, bot, games[0], limits, tuple(prefix))
    return report


def _check_game(
    report: CheckReport, bot: BotCommand, game_id: str, limits: Limits, deals: int, prefix: tuple[str, ...]
) -> None:
    spec = get_spec(game_id)
    phases: set[str] = set()
    ledger = BotLedger(bot.name)
    stand = BotCommand(STAND_IN, ())
    with tempfile.TemporaryDirectory(prefix="whist-check-logs-") as logs:
        referee = Referee(spec, dict(spec.single_deal), limits, seed=1, prefix=prefix, profile=True, logs=Path(logs))
        n = referee.game.num_players
        for seat, count in ((0, deals), (n - 1, 1)):
            ledgers = {bot.name: ledger, STAND_IN: BotLedger(STAND_IN, forfeit="plays the other seats")}
            seating = Seating(tuple(bot if s == seat else stand for s in range(n)), tuple(range(n)))
            result = referee.play_half(seating, range(seat * 100, seat * 100 + count), ledgers)
            phases |= _phases_of(referee, result.records, seat)
            if ledger.forfeit is not None:
                break
        log = Path(logs, f"{bot.name}.stderr.log")
        stderr = log.read_bytes().decode("utf-8", "replace") if log.exists() else ""
    answers = referee.timing.get("pipe", [])
    timing = (
        f"answers in {1000 * statistics.median(answers):.1f} ms (median), {1000 * max(answers):.1f} ms (slowest)"
        if answers
        else "no answer in time or in form"
    )
    started = f"started in {ledger.start_s[0]:.2f} s" if ledger.start_s else "did not start"
    head = f"{game_id}: {ledger.decisions} decisions in phases {', '.join(sorted(phases)) or '-'}; {timing}; {started}"
    if not ledger.faults:
        report.add(f"{head}: ok")
        return
    report.add(f"{head}:", problem=True)
    for fault in ledger.faults[:5]:
        where = f"deal {fault.deal % 100}" if fault.deal >= 0 else "at the start"
        report.add(f"  {fault.kind} ({where}): {fault.message}")
        report.add(f"    -> {HINTS.get(fault.kind, FAULT_KINDS.get(fault.kind, ''))}")
    if len(ledger.faults) > 5:
        report.add(f"  ... and {len(ledger.faults) - 5} more")
    said = [line for line in stderr.splitlines() if line.strip() and not line.startswith("--- ")]
    if said and not {f.kind for f in ledger.faults[:5]} & {"crash", "exit"}:  # theirs quote their stderr already
        report.add(f"  the end of its stderr: {clip(chr(10).join(said[-4:]), 600)}")
    if ledger.forfeit is not None:
        report.add(f"  in a tournament it would forfeit the match here ({ledger.forfeit})")


def _phases_of(referee: Referee, records: Sequence[dict[str, Any]], seat: int) -> set[str]:
    """The phases in which ``seat`` decided, replayed from the game records."""
    from whist_env.record import GameRecord

    phases = set()
    for data in records:
        for game, state in GameRecord.from_dict(data).states():
            if not state.done and state.to_act == seat:
                phases.add(game.view(state, seat).phase)
    return phases


def _check_edges(report: CheckReport, bot: BotCommand, game_id: str, limits: Limits, prefix: tuple[str, ...]) -> None:
    """Unknown messages and fields, a deal_end (news, not answered), a decision with one legal action, and the
    goodbye. A bot that ends at one of them is told so there; the cases after it are not checked."""
    spec = get_spec(game_id)
    referee = Referee(spec, dict(spec.single_deal), limits)
    seat, news, act, only = _edge_messages(referee)
    with selectors.DefaultSelector() as selector, tempfile.TemporaryDirectory(prefix="whist-check-") as root:
        proc = BotProcess(bot, seat, limits, selector)
        try:
            proc.start(Path(root), prefix)
            check_hello_answer(decode_line(proc.request(encode_line(_hello(referee, seat)), limits.start_s)))
        except Exception as err:  # noqa: BLE001 - said below; the games' lines already named it
            report.add(f"the edge cases: not checked, the bot did not start ({err})", problem=True)
            proc.stop(None)
            return
        if not _news_ignored(report, proc, news, limits):
            report.add("the rest of the edge cases: not checked (the process has ended)")
            proc.stop(None)
            return
        label = referee.codec.labels[only]
        try:
            referee.codec.read_answer(proc.request(encode_line(act), limits.decision_s), 1 << only)
        except AnswerError as err:
            report.add(f"an act with a field it does not know and one legal action ({label}): {err}", problem=True)
        except Exception as err:  # noqa: BLE001 - the process ended or took too long
            report.add(f"an act with a field it does not know: {err or 'no answer in time'}", problem=True)
        else:
            report.add(f"an act with a field it does not know and one legal action: answered {label}: ok")
        _check_goodbye(report, proc, limits)


def _edge_messages(referee: Referee) -> tuple[int, News, dict[str, Any], int]:
    """The edge cases' messages: ``(seat, news, act, only)``. ``news`` maps what each message is to the message and
    the hint for a bot that answers it or ends on it: one of a type no bot knows, and a deal_end of a deal played
    out, as a match sends it. ``act`` is a decision with one legal action, ``only``, and a field from a later
    version, at ``seat``."""
    game = referee.game
    state = game.new_episode(np.random.default_rng(5))
    while game.view(state, state.to_act).legal.bit_count() != 1 and not state.done:
        game.step(state, stand_in(game.view(state, state.to_act)), np.random.default_rng(0))
    seat = state.to_act
    view = game.view(state, seat)
    end = game.new_episode(np.random.default_rng(6))
    while not end.done:
        game.step(end, stand_in(game.view(end, end.to_act)), np.random.default_rng(0))
    deal_end = {
        "type": "deal_end",
        "deal": 0,
        "returns": [float(r) for r in end.returns],
        "view": referee.codec.to_json(game.view(end, seat)),
    }
    news: News = {
        "a message of a type it does not know": (
            {"type": "notice", "text": "a message of a type this bot does not know"},
            "ignore a type you do not know (a later protocol may add one)",
        ),
        "a deal_end": (
            deal_end,
            "deal_end, match_end and goodbye are news (an answer to one is read as the next act's)",
        ),
    }
    act: dict[str, Any] = {
        "type": "act",
        "deal": 0,
        "decision": 0,
        "view": referee.codec.to_json(view),
        "legal": referee.codec.legal(view),
        "a_field_from_a_later_version": {"ignore": "me"},
    }
    return seat, news, act, view.legal.bit_length() - 1


def _news_ignored(report: CheckReport, proc: BotProcess, news: News, limits: Limits) -> bool:
    """Send each message of ``news``, which wants no answer, and say whether the bot ignored it: False once the
    process has ended on one."""
    for what, (message, hint) in news.items():
        proc.send(encode_line(message))
        try:
            stray = proc.read_line(time.monotonic() + min(0.5, limits.decision_s), owed=False)
        except Exception as err:  # noqa: BLE001 - no line in time: as it should be; or it ended (said here)
            if getattr(err, "kind", "") != "timeout":
                report.add(f"{what}: {err}; take every message and go on: {hint}", problem=True)
                return False
            report.add(f"{what}: ignored: ok")
        else:
            report.add(f"{what}: it answered {stray[:80]!r}; answer act messages only: {hint}", problem=True)
    return True


def _check_goodbye(report: CheckReport, proc: BotProcess, limits: Limits) -> None:
    """Say goodbye (to a process still running) and see that it exits within ``grace_s``."""
    if not proc.alive:
        report.add(f"goodbye: not sent: the process had ended ({proc.exit_text()}), as said above")
        proc.stop(None)
        return
    start = time.monotonic()
    proc.stop({"type": "goodbye", "reason": "the check is over"})
    took = time.monotonic() - start
    if proc.killed:
        report.add(f"goodbye: it did not exit within {limits.grace_s:g} s; exit when it comes", problem=True)
    else:
        report.add(f"goodbye: it exited in {took:.2f} s ({proc.exit_text()}): ok")


def _hello(referee: Referee, seat: int) -> dict[str, Any]:
    return hello(referee.game, referee.options, seat, 1, referee.limits.for_bot(), referee.layout, 1)
