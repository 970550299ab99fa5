"""``whist-arena`` (a class tournament) and ``whist-bot`` (a bot's own tools): the classroom arena's command lines.

    whist-arena init class/ --game german_whist_v0        # tournament.toml, the gates pinned, two starter bots
    whist-arena run class/tournament.toml --workers 2      # the leaderboard, records and grades in class/results/
    whist-arena run class/tournament.toml --require-beat heuristic   # exit 0 only if every bot passes that gate
    whist-arena pin class/tournament.toml                  # the sha256 each gate plays with, to pin it

    whist-bot check "python mybot.py" --game german_whist_v0   # a short script, problems said in plain words
    whist-bot run heuristic                                 # a library agent as a bot on stdin/stdout
    whist-bot connect http://host:8000/table/ID?token=T -- python mybot.py   # a seat at the browser table

The tournament (:mod:`whist_env.evaluation.tournament`) and the referee (:mod:`whist_env.evaluation.referee`) say
what is played and what a bot may do; the protocol is :mod:`whist_env.evaluation.protocol`. Every error is one line
and exit status 2; Ctrl-C stops a tournament with status 130, and the same command resumes it.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from collections.abc import Sequence
from dataclasses import asdict, replace
from importlib import resources
from pathlib import Path

from whist_env.agents.agent_spec import AgentSpec
from whist_env.cli.demo import CliParser, at_least, one_line_warnings, report_error
from whist_env.errors import OptionError

GATES = ("random", "heuristic", "pimc", "pretrained")
"""The reference agents ``whist-arena init`` makes gates of (those the game has)."""


# --------------------------------------------------------------------------------------------- whist-arena
def arena_parser() -> argparse.ArgumentParser:
    """The argument parser of ``whist-arena``."""
    from whist_env.evaluation.referee import Limits

    p = CliParser(
        prog="whist-arena",
        description="A class tournament: bots (any language, over the bot protocol) and the library's reference "
        "bots play a round robin of duplicate matches under a referee that never trusts a bot; out come a "
        "leaderboard with intervals, each bot's verdict against every gate, records and autograder files.",
    )
    sub = p.add_subparsers(dest="command", required=True)
    init = sub.add_parser("init", help="write a tournament file, pin its gates, copy the starter bots")
    init.add_argument("folder", help="the class's folder (made if missing)")
    init.add_argument("--game", required=True, help="the game's id (see whist-demo --help)")
    init.add_argument("--deals", type=at_least(1), default=100, help="duplicate deals per match (default 100)")
    init.add_argument("--seed", type=at_least(0), default=0, help="the deals' seed (default 0; keep it from bots)")
    init.add_argument("--gates", default=",".join(GATES), help=f"the reference agents (default {','.join(GATES)})")
    run = sub.add_parser("run", help="play (or resume) a tournament and write its results")
    run.add_argument("file", help="the tournament file (tournament.toml), or the folder holding it")
    run.add_argument("--out", help="the results folder (default: results/ beside the file)")
    run.add_argument("--workers", type=at_least(1), help="matches at once (default: the file's, else 1)")
    run.add_argument("--deals", type=at_least(1), help="duplicate deals per match (default: the file's)")
    run.add_argument("--bot-prefix", help="a command that wraps every bot's (a sandbox: 'bwrap ...', 'docker run ...')")
    run.add_argument(
        "--stop-when-decided",
        action="store_true",
        default=None,
        help="each match stops once its anytime-valid interval excludes 0 (--deals is the cap)",
    )
    run.add_argument(
        "--alpha", type=float, help="--stop-when-decided: error rate per match (default: the file's, else 0.05)"
    )
    run.add_argument("--look-every", type=at_least(1), help="--stop-when-decided: deals between looks (default 100)")
    run.add_argument(
        "--bonferroni",
        action="store_true",
        default=None,
        help="--stop-when-decided: divide --alpha by the number of matches",
    )
    run.add_argument("--require-beat", metavar="GATE", help="exit 1 unless every bot passes this gate (course CI)")
    run.add_argument("--quiet", action="store_true", help="no line per match")
    run.add_argument("--debug", action="store_true", help="show tracebacks")
    pin = sub.add_parser("pin", help="print the sha256 each gate of a tournament file plays with")
    pin.add_argument("file", help="the tournament file, or the folder holding it")
    limits = run.add_argument_group("limits (each replaces the file's [limits] value; docs/guide/protocol.md)")
    for name, value in asdict(Limits()).items():
        if name != "cpu_s":
            limits.add_argument(f"--{name.replace('_', '-')}", type=type(value), dest=name, metavar=name.upper(),
                                help=f"{LIMIT_HELP[name]} (default {value})")  # fmt: skip
    limits.add_argument("--cpu-s", type=float, dest="cpu_s", metavar="CPU_S",
                        help="CPU seconds per process (default: match_s + start_s)")  # fmt: skip
    return p


LIMIT_HELP = {
    "decision_s": "seconds per decision",
    "match_s": "seconds of answers per process (one half of a match)",
    "start_s": "seconds from a process's start to its hello",
    "memory_mb": "private memory per process, MiB",
    "file_mb": "the largest file a process may write, MiB",
    "line_bytes": "the longest answer line",
    "output_bytes": "all a process may write to standard output",
    "log_bytes": "what is kept of a process's standard error",
    "max_faults": "faults in a match after which a bot forfeits it",
    "grace_s": "seconds a bot may take to exit after the goodbye",
}


def arena_main(argv: Sequence[str] | None = None) -> int:
    """Run ``whist-arena``; returns the exit status (0; 1 when ``--require-beat`` is not met; 2 for an error; 130
    when interrupted)."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    with one_line_warnings("whist-arena"):
        try:
            return _arena(arena_parser().parse_args(args_list))
        except KeyboardInterrupt:
            if "--debug" in args_list:
                raise
            print("\nwhist-arena: interrupted; the finished matches are kept: run the same command to resume",
                  file=sys.stderr)  # fmt: skip
            return 130
        except Exception as err:
            if "--debug" in args_list:
                raise
            return report_error("whist-arena", err)


def _arena(args: argparse.Namespace) -> int:
    from whist_env.evaluation.referee import Limits
    from whist_env.evaluation.tournament import load_tournament, run_tournament, split_command

    if args.command == "init":
        path = init_tournament(Path(args.folder), args.game, args.deals, args.seed, args.gates.split(","))
        print(f"whist-arena: wrote {path}; put the bots in {path.parent / 'bots'}/, then: whist-arena run {path}")
        return 0
    if args.command == "pin":
        return _pin(Path(args.file))
    tournament = load_tournament(args.file, workers=args.workers, deals=args.deals,
                                 prefix=split_command(args.bot_prefix, "--bot-prefix") if args.bot_prefix else None,
                                 stop_when_decided=args.stop_when_decided, alpha=args.alpha,
                                 look_every=args.look_every, bonferroni=args.bonferroni)  # fmt: skip
    given = {name: getattr(args, name) for name in asdict(Limits()) if getattr(args, name, None) is not None}

    if given:
        tournament = replace(tournament, limits=replace(tournament.limits, **given))
    if args.require_beat is not None and tournament.entrant(args.require_beat).kind != "gate":
        gates = ", ".join(e.name for e in tournament.entrants if e.kind == "gate")
        raise OptionError(f"--require-beat names a gate ({gates}), not the bot {args.require_beat!r}")
    for entrant in tournament.entrants:
        if entrant.kind == "gate" and not entrant.pinned:
            print(f"whist-arena: warning: the gate {entrant.name!r} has no sha256 pin: a whist_env that plays it "
                  "otherwise would move it (whist-arena pin prints the pins)", file=sys.stderr)  # fmt: skip
    if not tournament.prefix:
        print(
            "whist-arena: note: without --bot-prefix (a sandbox) a bot can read files, this tournament's seed "
            "included: fine for a trial, not for a graded class (docs/guide/protocol.md)",
            file=sys.stderr,
        )
    out = Path(args.out) if args.out else Path(tournament.source).resolve().parent / "results"
    _say_missing_limits("whist-arena")
    report = run_tournament(tournament, out, None if args.quiet else lambda line: print(line, file=sys.stderr))
    print(report.to_markdown())
    print(f"\nwhist-arena: the leaderboard, records and grades are in {out}/ (open index.html)")
    if args.require_beat is None:
        return 0
    misses = [s.name for s in report.standings if s.kind == "bot"
              and report.verdict(s.name, args.require_beat).verdict != "pass"]  # fmt: skip
    if misses:
        print(f"whist-arena: not beaten {args.require_beat}: {', '.join(misses)}", file=sys.stderr)
        return 1
    return 0


def init_tournament(folder: Path, game_id: str, deals: int, seed: int, gates: Sequence[str]) -> Path:
    """Write ``folder/tournament.toml`` for ``game_id`` (the gates the game has, pinned; the shipped network copied to
    ``folder/gates/``) and the starter bots into ``folder/bots/``; returns the file's path.

    Raises:
        OptionError: for an unknown game or gate, a ``folder`` that is a file, or one that already holds a tournament
            file.
    """
    from whist_env.evaluation.tournament import gate_digest
    from whist_env.registry import get_spec

    spec = get_spec(game_id)
    file = folder / "tournament.toml"
    if folder.exists() and not folder.is_dir():
        raise OptionError(f"{folder} is a file: init makes a folder (or fills one)")
    if file.exists():
        raise OptionError(f"{file} exists already: edit it, or init another folder")
    unknown = sorted(set(gates) - set(GATES))
    if unknown:
        raise OptionError(f"unknown gate(s) {unknown}; known: {', '.join(GATES)}")
    twice = sorted({g for g in gates if list(gates).count(g) > 1})
    if twice:
        raise OptionError(f"--gates names {', '.join(twice)} twice: a gate plays once")
    (folder / "bots").mkdir(parents=True, exist_ok=True)
    starters = resources.files("whist_env.evaluation") / "starters"
    for name, copy in (("starter.py", "python_starter.py"), ("starter.js", "js_starter.js")):
        with resources.as_file(starters / name) as source:
            shutil.copy(source, folder / "bots" / copy)
    lines = [
        "# A class tournament of whist_env (whist-arena run tournament.toml): every entrant plays every other on the",
        "# same duplicate deals; docs: the 'Run a class tournament' tutorial. Paths are relative to this file.",
        f'game = "{game_id}"',
        f"deals = {deals:<16} # duplicate deals per match",
        f"seed = {seed:<17} # the deals' seed: keep this file away from the bots (or sandbox them)",
        "workers = 2              # matches played at once (one per core)",
        'bots = ["bots/*"]        # a .py or .js file, an executable, or a folder with a bot.toml naming its command',
        "undecided_score = 0.5    # the share of a gate's points for an undecided verdict",
        "",
        "[limits]                 # what each bot process may use (see whist-arena run --help)",
        "decision_s = 1.0",
        "match_s = 120.0",
        "memory_mb = 1024",
        "max_faults = 3",
    ]
    points = {"random": 1, "heuristic": 2, "pimc": 1, "pretrained": 1}
    for gate in gates:
        if gate == "pimc" and not spec.searchable or gate == "pretrained" and spec.pretrained_file() is None:
            continue  # the game has no search, or ships no network
        agent = gate
        if gate == "pretrained":  # a copy beside the file: a whist_env that ships other weights keeps this gate
            (folder / "gates").mkdir(exist_ok=True)
            with resources.as_file(spec.pretrained_file()) as shipped:  # type: ignore[arg-type]
                shutil.copy(shipped, folder / "gates" / f"{game_id}.npz")
            agent = f"pretrained(path=gates/{game_id}.npz)"
        lines += ["", "[[gates]]", f'name = "{gate}"', f'agent = "{agent}"', f"points = {points[gate]}",
                  f'sha256 = "{gate_digest(agent, spec, folder)}"']  # fmt: skip
    file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return file


def _pin(path: Path) -> int:
    from whist_env.evaluation.tournament import gate_digest, read_tournament_file
    from whist_env.registry import get_spec

    file, data = read_tournament_file(path)
    spec = get_spec(data["game"])
    for gate in data.get("gates", []):
        agent = str(gate["agent"])
        print(f'{gate.get("name", agent)}: sha256 = "{gate_digest(agent, spec, file.resolve().parent)}"')
    return 0


# --------------------------------------------------------------------------------------------- whist-bot
def bot_parser() -> argparse.ArgumentParser:
    """The argument parser of ``whist-bot``."""
    p = CliParser(prog="whist-bot", description="A bot's tools: check it, run a library agent as a bot, or give it "
                  "a seat at the browser table.")  # fmt: skip
    sub = p.add_subparsers(dest="command", required=True)
    check = sub.add_parser("check", help="play a bot through a short script and say what is wrong, if anything")
    check.add_argument("bot", help="the bot's command, in quotes ('python mybot.py', 'node bot.js', './bot'), or a "
                       "bot file or folder as a tournament takes it")  # fmt: skip
    check.add_argument("--game", action="append", help="a game to check (repeatable; default: every game)")
    check.add_argument("--deals", type=at_least(1), default=2, help="deals per game (default 2)")
    check.add_argument("--decision-s", type=float, default=1.0, help="the time per decision (default 1.0 s)")
    check.add_argument("--debug", action="store_true", help="show tracebacks")
    run = sub.add_parser("run", help="play a library agent as a bot on stdin/stdout (heuristic, pimc, pretrained...)")
    run.add_argument("agent", help="an agent spec (docs/agents.md)")
    sub.add_parser("connect", help="URL --token T -- COMMAND...: play a bot at a seat of the browser table",
                   add_help=False)  # fmt: skip
    return p


def bot_main(argv: Sequence[str] | None = None) -> int:
    """Run ``whist-bot``; returns the exit status (``check``: 0 when no problem was found, 1 otherwise)."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list[:1] == ["connect"]:
        from whist_env.serve.bridge import main as connect

        return connect(args_list[1:])
    with one_line_warnings("whist-bot"):
        try:
            args = bot_parser().parse_args(args_list)
            if args.command == "run":
                from whist_env.agents.agent_spec import parse_agent_spec
                from whist_env.evaluation.bot import run_bot

                _check_paths(parse_agent_spec(args.agent))  # a typo is said now, not after the referee's hello
                run_bot(args.agent)
                return 0
            return _check(args)
        except KeyboardInterrupt:
            return 130
        except Exception as err:
            if "--debug" in args_list:
                raise
            return report_error("whist-bot", err)


def _check_paths(spec: AgentSpec) -> None:
    """Refuse an agent spec that names a file (``model:<path>``, ``pretrained(path=...)``, nested ones too) that does
    not exist."""
    for key, value in spec.args:
        if isinstance(value, AgentSpec):
            _check_paths(value)
        elif key == "path" and not Path(str(value)).exists():
            raise OptionError(f"agent {spec}: there is no file {value}")


def _check(args: argparse.Namespace) -> int:
    from whist_env.evaluation.conformance import check_bot
    from whist_env.evaluation.referee import Limits, subreaper
    from whist_env.evaluation.tournament import bot_command, split_command
    from whist_env.registry import game_ids, get_spec

    for game_id in args.game or ():
        get_spec(game_id)  # an unknown game: one line naming the known ones
    path = Path(args.bot)
    if args.bot.strip() and path.exists():  # Path("") is the current folder
        command = bot_command(path)
        argv, source = command.argv, command.source
    else:  # a command: the files it names here are named by their full path (it runs in a fresh folder)
        words = split_command(args.bot, "the bot's command")
        if len(words) == 1 and shutil.which(words[0]) is None:  # a bot's path mistyped, most likely
            raise OptionError(f"no bot at {words[0]}: no such file or folder here, nor a program of that name")
        argv = tuple(str(Path(part).resolve()) if Path(part).is_file() else part for part in words)
        source = None
    if not argv:
        raise OptionError("name the bot's command, e.g. whist-bot check 'python mybot.py'")
    _say_missing_limits("whist-bot")
    print(f"whist-bot check: {' '.join(argv)}", flush=True)
    limits = replace(Limits(), decision_s=args.decision_s)
    with subreaper():  # ends whatever the bot leaves behind
        report = check_bot(argv, args.game or game_ids(), limits, args.deals, source)
    print(report.text())
    return 1 if report.problems else 0


def _say_missing_limits(prog: str) -> None:
    """One line on stderr naming the referee's guards this platform lacks (none on Linux)."""
    from whist_env.evaluation.referee import platform_limits

    missing = [name for name, there in platform_limits().items() if not there]
    if missing:
        print(f"{prog}: warning: this platform lacks these guards: {'; '.join(missing)}", file=sys.stderr)


def arena_entry() -> None:
    """Console-script entry point: ``whist-arena``."""
    raise SystemExit(arena_main())


def bot_entry() -> None:
    """Console-script entry point: ``whist-bot``."""
    raise SystemExit(bot_main())


if __name__ == "__main__":  # python -m whist_env.cli.arena: whist-arena
    arena_entry()
