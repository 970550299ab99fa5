"""A class tournament: bots and reference bots play a round robin of duplicate matches under the referee.

    whist-arena init class/ --game german_whist_v0     # a tournament file, the gates pinned, two starter bots
    whist-arena run class/tournament.toml --out class/results

**Entrants.** The *bots* are files or folders (``bots = ["submissions/*"]``): a ``.py`` file runs with the
referee's Python, a ``.js`` file with ``node``, any other executable file as it is, and a folder names its command
in a ``bot.toml`` (``command = ["node", "main.js"]``, ``{python}`` for the referee's Python). The *gates* are the
library's reference agents (``random``, ``heuristic``, ``pimc``, ``pretrained``, ...), run as bots through the
Python helper (:mod:`whist_env.evaluation.bot`), each pinned in the file by its spec and the sha256 of every file
it plays with (the shipped network's weights): a whist_env that ships other weights refuses to play the gate
rather than move a course's bar. ``whist-arena init`` copies the shipped network beside the file and pins it.
A run copies every bot's files once, when it starts (:func:`snapshot_bots`), and plays every match from that copy:
a submission changed or removed while the tournament runs changes nothing of it. A submission is never the
tournament's error: one that does not load forfeits every match, saying why (:func:`refused_bot`), and one whose
``bot.toml`` gives a refused name, or another bot's, plays under its folder's name (each with a warning).

**Matches.** Every pair of entrants plays the same ``deals`` duplicate deals (deal ``i`` as the arena draws it),
once per seating (:func:`match_seatings`: two players swap seats, classic whist's partnerships are two copies of
each bot, in Oh Hell each bot sits alone against copies of the other in every position), each seating with fresh
processes (:class:`~whist_env.evaluation.referee.Referee`); a bot's score on a deal is its mean return over the
seatings (:func:`deal_scores`). Matches run in ``workers`` processes; each match is stored when it ends
(``cache/``, keyed by everything that decides it: the game, options, deals, seed, limits and both bots' sha256),
so a tournament stopped half-way resumes from its finished matches and ends with the results an uninterrupted run
gives.

**Ratings and gates.** The ratings are the ladder's (:func:`~whist_env.evaluation.ladder.fit_with_draws`: least
squares of every match's mean per-deal difference, in the game's unit per deal, the ``random`` gate at 0), with 95%
intervals of Student's t on the bootstrap's standard error
(:func:`~whist_env.evaluation.ladder.interval_scale`; a bootstrap over the deals, the
fit redone on each resample): for one match, the arena's paired interval. A bot *passes* a gate when the 95%
interval of its rating minus the gate's lies above 0, *fails* it when the interval lies below 0, and is *undecided*
otherwise; a bot that forfeited its match against the gate gets the verdict *forfeit* (the referee's stand-in played
for it). Its score is the sum over the gates of their ``points``: all of them for a pass, ``undecided_score`` (0.5)
of them for an undecided verdict, none for a fail or a forfeit. A forfeited match still counts in the ratings, with
the stand-in's results.

**Matches that stop when decided** (``stop_when_decided = true`` in the file, or ``whist-arena run
--stop-when-decided``): ``deals`` becomes each match's cap; a match plays chunks of ``look_every`` deals (every
seating of a chunk with fresh processes, seeded per chunk, so the time budget ``match_s`` is per chunk) and stops at
the first chunk after which its anytime-valid interval (:mod:`whist_env.evaluation.sequential`, from the game's
per-deal range) excludes 0. Most pairings of a class are lopsided and end after a chunk or two. ``alpha`` is the
error rate per match (``bonferroni = true`` divides it by the number of matches); the ratings are then the ladder's
weighted fit of unequal matches, and the leaderboard says how many deals were played. The cache key holds the rule.

**Outputs** (in ``--out``): ``leaderboard.md``, ``.json``, ``.csv`` and ``index.html`` (with the plot), ``ratings.png``,
each match's game records (``records/<a>--<b>.jsonl.gz``, one JSON line per table), each bot's standard error
(``logs/``), and an autograder file per bot (``autograder/<bot>.json``, Gradescope's ``results.json`` format). One run
at a time writes the folder (:func:`results_lock`).
"""

from __future__ import annotations

import collections
import contextlib
import csv
import glob
import gzip
import hashlib
import html
import io
import itertools
import json
import math
import os
import shlex
import shutil
import signal
import sys
import tempfile
import time
import tomllib
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import asdict, dataclass, field, replace
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import numpy as np

from whist_env.agents.agent_spec import AgentSpec, format_agent_spec, parse_agent_spec
from whist_env.errors import OptionError, unreadable
from whist_env.evaluation.arena import seat_assignments
from whist_env.evaluation.ladder import BOOTSTRAP, Rating, fit_with_draws, interval_scale, plot_ratings
from whist_env.evaluation.protocol import PROTOCOL
from whist_env.evaluation.referee import (
    FAULT_KINDS,
    BotCommand,
    BotLedger,
    HalfResult,
    Limits,
    Referee,
    Seating,
    become_subreaper,
    copy_bot_files,
    die_with_parent,
    end_everything,
    seat_seed,
)
from whist_env.evaluation.sequential import ALPHA, LOOK_EVERY, StopRule, deal_bound, pair_alpha
from whist_env.evaluation.workers import one_blas_thread, sigint_ignored
from whist_env.registry import ensure_spec, get_spec
from whist_env.spec import GameSpec

CACHE_FORMAT = 1
BOT_FILE = "bot.toml"
MAX_BOT_MB = 50  # the largest bot folder, in MiB (copied once per run, then into a fresh folder for every process)
PLAYING = ".playing"  # the suffix of the marker a worker keeps beside a match's logs while it plays the match
MIN_BOOTSTRAP = 100  # the fewest resamples a tournament's 95% intervals are taken from (2.5% of them: 2 or more)
NOT_BOTS = {".md", ".txt", ".rst", ".pdf", ".csv", ".json", ".yml", ".yaml", ".html", ".log", ".zip", ".gz", ".tar"}
"""Extensions of the files a course keeps beside the bots (a README, Gradescope's submission_metadata.yml, an
archive): such a file, unless executable, is skipped with a warning rather than entered as a bot that forfeits."""
LOCK_FILE = ".lock"  # held by the run that writes a results folder (:func:`results_lock`)
GATE_KIND, BOT_KIND = "gate", "bot"


@dataclass(frozen=True)
class Entrant:
    """One player of a tournament.

    Attributes:
        name: unique in the tournament.
        kind: ``"bot"`` (a submission) or ``"gate"`` (a reference agent).
        command: how the referee starts it.
        agent: a gate's agent spec.
        points: a gate's weight in a bot's score.
        pinned: a gate's sha256 was given in the file (and checked).
    """

    name: str
    kind: str
    command: BotCommand
    agent: str | None = None
    points: float = 1.0
    pinned: bool = False


@dataclass(frozen=True)
class Tournament:
    """What a tournament file says (see the module docstring and :func:`load_tournament`).

    Attributes:
        spec: the game.
        options: the game's options, one deal per episode added (the arena's unit).
        entrants: the bots and the gates.
        deals: duplicate deals per match.
        seed: the deals' seed.
        workers: matches played at once.
        limits: what each bot process may use.
        lineup: the arena's lineup (the file's default, :func:`default_lineup`: ``one_vs_rest`` where the game seats
            more than two sides, each bot alone against copies of the other in every seat; ``alternate`` otherwise).
        prefix: a command that wraps every bot command (a sandbox; ``{workdir}`` is the bot's working directory).
        undecided_score: the share of a gate's points an undecided verdict earns.
        records: keep every match's game records.
        bootstrap: resamples of the deals for the intervals (at least :data:`MIN_BOOTSTRAP`).
        workroot: where the bots' working directories are made, and the run's copy of every bot (None: the system's
            temporary folder; it holds every bot's files for the whole run, up to ``MAX_BOT_MB`` each).
        source: the file it was read from.
        stop_when_decided: each match stops when its anytime-valid interval excludes 0 (``deals`` is the cap).
        alpha: with ``stop_when_decided``, the error rate of each match.
        look_every: with ``stop_when_decided``, deals between two looks.
        bonferroni: with ``stop_when_decided``, divide ``alpha`` by the number of matches.
    """

    spec: GameSpec[Any, Any]
    options: dict[str, Any]
    entrants: tuple[Entrant, ...]
    deals: int = 100
    seed: int = 0
    workers: int = 1
    limits: Limits = field(default_factory=Limits)
    lineup: str = "alternate"
    prefix: tuple[str, ...] = ()
    undecided_score: float = 0.5
    records: bool = True
    bootstrap: int = BOOTSTRAP
    workroot: str | None = None
    source: str = ""
    stop_when_decided: bool = False
    alpha: float = ALPHA
    look_every: int = LOOK_EVERY
    bonferroni: bool = False

    def __post_init__(self) -> None:
        names = [e.name for e in self.entrants]
        _check_names(names)
        if len(names) < 2:
            raise OptionError(f"a tournament needs two entrants or more, got {names}")
        if isinstance(self.deals, bool) or not isinstance(self.deals, int) or self.deals < 1:
            raise OptionError(f"deals must be an int >= 1, got {self.deals!r}")
        if isinstance(self.workers, bool) or not isinstance(self.workers, int) or self.workers < 1:
            raise OptionError(f"workers must be an int >= 1, got {self.workers!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise OptionError(f"seed must be an int >= 0, got {self.seed!r}")
        for name in ("records", "stop_when_decided", "bonferroni"):  # "no" would be true to bool()
            if not isinstance(getattr(self, name), bool):
                raise OptionError(f"{name} must be true or false, got {getattr(self, name)!r}")
        if not _number_within(self.undecided_score, 0.0, 1.0):
            raise OptionError(f"undecided_score is the share of a gate's points: 0 to 1, got {self.undecided_score!r}")
        for e in self.entrants:
            if not _number_within(e.points, 0.0, sys.float_info.max):
                raise OptionError(f"{e.name}: points must be a number >= 0, got {e.points!r}")
        if isinstance(self.bootstrap, bool) or not isinstance(self.bootstrap, int) or self.bootstrap < MIN_BOOTSTRAP:
            raise OptionError(
                f"bootstrap must be an int >= {MIN_BOOTSTRAP} (resamples of the deals for the 95% intervals the gates "
                f"are graded by; {BOOTSTRAP} by default), got {self.bootstrap!r}"
            )
        if not _number_within(self.alpha, 0.0, 1.0) or self.alpha in (0, 1):
            raise OptionError(f"alpha must be a number between 0 and 1, got {self.alpha!r}")
        words = isinstance(self.prefix, tuple) and all(isinstance(w, str) and "\0" not in w for w in self.prefix)
        if not words:
            raise OptionError(f"bot_prefix must be a command (a string), got {self.prefix!r}")
        if self.workroot is not None and not Path(self.workroot).is_dir():
            raise OptionError(f"workroot {self.workroot}: there is no such folder (the bots' folders are made in it)")
        if self.prefix and shutil.which(self.prefix[0]) is None:
            raise OptionError(f"bot_prefix {shlex.join(self.prefix)!r}: there is no program {self.prefix[0]!r}")
        self.stop_rule()  # a bad alpha or look_every fails here
        seat_assignments(self.spec.make_rules(**self.options).num_players, 2, self.lineup)  # and a bad lineup here

    def stop_rule(self) -> StopRule | None:
        """The rule each match stops by (None: every match plays ``deals``)."""
        if not self.stop_when_decided:
            return None
        pairs = len(self.entrants) * (len(self.entrants) - 1) // 2
        bound = deal_bound(self.spec.make_rules(**self.options))
        return StopRule(bound, pair_alpha(self.alpha, pairs, self.bonferroni), self.look_every)

    def entrant(self, name: str) -> Entrant:
        """The entrant called ``name``."""
        for e in self.entrants:
            if e.name == name:
                return e
        raise OptionError(f"no entrant {name!r}; entrants: {', '.join(e.name for e in self.entrants)}")

    def pairs(self) -> list[tuple[Entrant, Entrant]]:
        """Every match, its two entrants in name order (so that results do not depend on the file's order)."""
        ordered = sorted(self.entrants, key=lambda e: e.name)
        return [(a, b) for i, a in enumerate(ordered) for b in ordered[i + 1 :]]


def _check_names(names: Sequence[str]) -> None:
    """Every entrant's name its own, allowed (:func:`name_problem`), and its files its own (:func:`_safe`)."""
    if len(set(names)) != len(names):
        twice = sorted({n for n in names if names.count(n) > 1})
        raise OptionError(f"every entrant needs its own name; given twice: {', '.join(twice)}")
    files: dict[str, str] = {}  # two names must not share the files named after them (records, logs, grades)
    for name in names:
        if name_problem(name):
            raise OptionError(
                f"the entrant name {name!r} is refused: {name_problem(name)}; rename it (its file or folder, or "
                "name = ... in its bot.toml)"
            )
        other = files.setdefault(_safe(name).lower(), name)
        if other != name:
            raise OptionError(
                f"the entrants {other!r} and {name!r} would write to the same files ({_safe(name)}.json, ...): "
                "file names keep letters, digits, '-', '_' and '.' (the rest become '_') and may ignore case; "
                "rename one (its file or folder, or name = ... in its bot.toml)"
            )


def name_problem(name: str) -> str:
    """Why an entrant may not be called ``name`` (empty: it may)."""
    if not name.isprintable() or name.startswith(("=", "+", "-", "@")):
        return (
            "a name holds no control characters (it is a line of the leaderboard) and does not begin with =, +, - or "
            "@ (a spreadsheet would run leaderboard.csv's cell as a formula)"
        )
    if not name or name != name.strip():
        return "a name is not blank and neither begins nor ends with a space (the leaderboard would not show it)"
    return ""


# --------------------------------------------------------------------------------------------- the file
def _sha256_files(path: Path) -> str:
    """The sha256 of a file, or of a folder's files (their paths and contents, in sorted order)."""
    digest = hashlib.sha256()
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    for file in files:
        digest.update(str(file.relative_to(path) if path.is_dir() else file.name).encode() + b"\0")
        digest.update(file.read_bytes())
    return digest.hexdigest()


def read_toml(file: Path) -> dict[str, Any]:
    """The tables of the TOML file ``file`` (a tournament file or a bot's ``bot.toml``). A UTF-8 byte order mark
    before the text is read past (Windows PowerShell 5's ``Set-Content -Encoding UTF8`` writes one; TOML itself has
    none).

    Raises:
        OptionError: naming the file, for text that is not TOML, not UTF-8, or nested too deeply to read.
        FileNotFoundError: for no file.
    """
    try:
        return tomllib.loads(file.read_text(encoding="utf-8-sig"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, RecursionError) as err:
        raise OptionError(f"{file}: {unreadable(err)}") from None


def bot_command(path: Path, name: str | None = None) -> BotCommand:
    """How to start the bot at ``path``: a ``.py`` file (the referee's Python), a ``.js`` file (``node``), another
    executable file, or a folder with a ``bot.toml`` naming its ``command`` (and optionally its ``name``).

    Raises:
        OptionError: for a missing path, a folder without ``bot.toml``, a folder over :data:`MAX_BOT_MB` or holding
            what is not a file, a folder or a link (a named pipe, a socket, a device), a ``bot.toml`` that does not
            read or names no command, or a file the referee does not know how to run.
    """
    if not path.exists():
        raise OptionError(f"no bot at {path}")
    if path.is_dir():
        manifest = path / BOT_FILE
        if not manifest.is_file():
            raise OptionError(f"the bot folder {path} has no {BOT_FILE} naming its command (command = [...])")
        entries = list(path.rglob("*"))
        odd = next((p for p in entries if not (p.is_symlink() or p.is_dir() or p.is_file())), None)
        if odd is not None:  # the copy made for each bot process would fail half-way through a tournament
            raise OptionError(
                f"the bot folder {path} holds {odd.relative_to(path)}, which is not a file, a folder or a link (a "
                "named pipe, a socket or a device): remove it"
            )
        size = sum(p.stat().st_size for p in entries if p.is_file())
        if size > MAX_BOT_MB << 20:
            raise OptionError(f"the bot folder {path} holds {size >> 20} MiB; the limit is {MAX_BOT_MB} MiB")
        data = read_toml(manifest)
        unknown = sorted(set(data) - {"command", "name"})
        if unknown:  # a misspelt key would be ignored without a word
            raise OptionError(f"{manifest}: unknown key(s) {unknown}; a bot.toml holds command and, optionally, name")
        command = data.get("command")
        if isinstance(command, str):
            command = split_command(command, f"{manifest}: command")
        if not (isinstance(command, list) and command and all(isinstance(c, str) for c in command) and command[0]):
            raise OptionError(f'{manifest}: command must be a list of strings such as ["node", "main.js"]')
        if any("\0" in c for c in command):  # no program can be given one: it stopped the tournament (ValueError)
            raise OptionError(f"{manifest}: command holds a NUL character (\\u0000), which no program can be given")
        argv = tuple(sys.executable if c == "{python}" else c for c in command)
        given = data.get("name")
        if not isinstance(given, str | None):  # 42, true, [...]: no name to show; the folder's stands in
            warnings.warn(f"{manifest}: name must be a string, got {given!r}; the bot plays under its folder's",
                          stacklevel=2)  # fmt: skip
            given = None
        return BotCommand(given or name or _own_name(path), argv, str(path.resolve()), _sha256_files(path))
    return BotCommand(name or _own_name(path), _file_command(path), str(path.resolve()), _sha256_files(path))


def _file_command(path: Path) -> tuple[str, ...]:
    """How a one-file bot is run, from its name. A ``.py`` file runs with ``-P``: its folder is not put first on
    ``sys.path`` (it holds nothing else), so that ``random.py`` or ``json.py`` does not hide the standard library's
    module from the bot itself, numpy and the helper."""
    if path.suffix == ".py":
        return (sys.executable, "-P", path.name)
    if path.suffix in (".js", ".mjs"):
        return ("node", path.name)
    if os.access(path, os.X_OK):
        return (f"./{path.name}",)
    raise OptionError(
        f"{path}: a bot file is a .py or .js file or an executable; for anything else make a folder with a "
        f"{BOT_FILE} naming its command"
    )


def gate_files(agent: str | AgentSpec, spec: GameSpec[Any, Any]) -> list[Path]:
    """The files a gate plays with: the paths its spec names, and the shipped network where it names
    ``pretrained`` without a path (nested specs included)."""
    parsed = parse_agent_spec(agent) if isinstance(agent, str) else agent
    out: list[Path] = []
    path = parsed.get("path")
    if path is not None:
        out.append(Path(str(path)))
    elif parsed.name == "pretrained" and (shipped := spec.pretrained_file()) is not None:
        import importlib.resources

        with importlib.resources.as_file(shipped) as file:
            out.append(Path(file))
    for _, value in parsed.args:
        if isinstance(value, AgentSpec):
            out += gate_files(value, spec)
    return out


def gate_digest(agent: str, spec: GameSpec[Any, Any], base: Path) -> str:
    """The sha256 a gate is pinned by: of its spec as written and of every file it plays with (:func:`gate_files`,
    relative paths from ``base``), so that the pin holds wherever the course's folder is."""
    digest = hashlib.sha256(agent.encode())
    for path in gate_files(agent, spec):
        file = path if path.is_absolute() else base / path
        if not file.is_file():
            raise OptionError(f"the gate {agent!r} plays with {file}, which does not exist")
        digest.update(file.read_bytes())
    return digest.hexdigest()


def _absolute_paths(spec: AgentSpec, base: Path) -> AgentSpec:
    """``spec`` with every ``path`` made absolute (relative to ``base``): the gate runs in another folder."""
    args: dict[str, Any] = {}
    for key, value in spec.args:
        if isinstance(value, AgentSpec):
            value = _absolute_paths(value, base)
        elif key == "path":
            value = str((base / str(value)).resolve())
        args[key] = value
    return AgentSpec(spec.name, args)


def gate_command(name: str, agent: str, spec: GameSpec[Any, Any], base: Path, pinned: str | None) -> Entrant:
    """A gate: the library agent ``agent`` played as a bot through the Python helper, checked against its pin.

    Raises:
        OptionError: for a bad agent spec, or a pin that is not what this whist_env plays (a re-shipped network).
    """
    resolved = format_agent_spec(_absolute_paths(parse_agent_spec(agent), base))
    digest = gate_digest(agent, spec, base)
    if pinned is not None and pinned != digest:
        raise OptionError(
            f"the gate {name!r} ({agent}) is pinned to sha256 {pinned[:16]}..., but here it plays with "
            f"{digest[:16]}... (another network or file): give it the pinned file (whist-arena init copies the shipped "
            "network beside the tournament file), or re-pin it with `whist-arena pin` once the course agrees"
        )
    argv = (sys.executable, "-m", "whist_env.evaluation.bot", resolved)
    return Entrant(name, GATE_KIND, BotCommand(name, argv, None, digest), resolved, pinned=pinned is not None)


def default_lineup(spec: GameSpec[Any, Any], options: Mapping[str, Any]) -> str:
    """``one_vs_rest`` for a game of more than two sides (Oh Hell with three seats or more: one bot against copies
    of the other, rotated through every seat), ``alternate`` otherwise (two players swap seats; partners are two
    copies of one bot)."""
    n = spec.make_rules(**options).num_players
    return "one_vs_rest" if len(set(spec.sides(n))) > 2 else "alternate"


TOP_KEYS = {"game", "options", "deals", "seed", "workers", "lineup", "bots", "gates", "limits", "undecided_score",
            "records", "bootstrap", "bot_prefix", "workroot", "stop_when_decided", "alpha", "look_every",
            "bonferroni"}  # fmt: skip
GATE_KEYS = {"name", "agent", "points", "sha256"}
KEY_KINDS: dict[str, tuple[tuple[type, ...], str]] = {  # the keys whose values are read before any other check
    "game": ((str,), "a game id (a string)"),
    "options": ((dict,), "a table of the game's options (an [options] section of key = value lines)"),
    "limits": ((dict,), "a table (a [limits] section of key = value lines)"),
    "bots": ((str, list), 'a pattern of bot paths or a list of them, such as ["bots/*"]'),
    "gates": ((list,), "[[gates]] sections"),
    "lineup": ((str,), '"alternate" or "one_vs_rest"'),
    "workroot": ((str,), "a folder's path"),
}


def load_tournament(path: str | Path, **overrides: Any) -> Tournament:
    """Read a tournament file (TOML; see the module docstring and ``whist-arena init``).

    Args:
        path: the file (or a folder holding ``tournament.toml``); relative paths in it are relative to its folder.
        **overrides: fields of :class:`Tournament` to set instead (``workers``, ``deals``, ``prefix``, ...).

    Raises:
        OptionError: for an unknown key, a bad value, a missing bot, or a gate that is not what it is pinned to.
    """
    file, data = read_tournament_file(Path(path))
    base = file.resolve().parent
    spec = get_spec(data.get("game", ""))
    options = dict(data.get("options") or {})
    for key, value in spec.single_deal.items():
        if options.setdefault(key, value) != value:
            raise OptionError(f"{file}: option {key}={options[key]!r}: a tournament plays one deal per episode")
    spec.make_rules(**options)  # a bad option fails here
    try:
        limits = Limits(**(data.get("limits") or {}))
    except TypeError as err:
        raise OptionError(f"{file}: [limits]: {err}; known: {sorted(asdict(Limits()))}") from None
    gates = _gates(data.get("gates") or [], spec, base, file)
    entrants = [*gates, *_bots(data.get("bots") or [], base, [g.name for g in gates])]
    prefix = data.get("bot_prefix") or ()
    fields = {
        "spec": spec,
        "options": options,
        "entrants": tuple(entrants),
        "deals": data.get("deals", 100),
        "seed": data.get("seed", 0),
        "workers": data.get("workers", 1),
        "limits": limits,
        "lineup": data.get("lineup") or default_lineup(spec, options),
        "prefix": split_command(prefix, f"{file}: bot_prefix") if isinstance(prefix, str) else _listed(prefix),
        "undecided_score": data.get("undecided_score", 0.5),
        "records": data.get("records", True),
        "bootstrap": data.get("bootstrap", BOOTSTRAP),
        "workroot": str(base / data["workroot"]) if data.get("workroot") else None,
        "source": str(file),
        "stop_when_decided": data.get("stop_when_decided", False),
        "alpha": data.get("alpha", ALPHA),
        "look_every": data.get("look_every", LOOK_EVERY),
        "bonferroni": data.get("bonferroni", False),
    }
    fields.update({k: v for k, v in overrides.items() if v is not None})
    return Tournament(**fields)


def read_tournament_file(path: Path) -> tuple[Path, dict[str, Any]]:
    """The tournament file at ``path`` (or in the folder ``path``: its ``tournament.toml``) and its tables, its keys
    known and of the right kinds (:data:`KEY_KINDS`), a game named, each gate a table naming its agent.

    Raises:
        OptionError: naming the file and what is wrong.
    """
    file = path / "tournament.toml" if path.is_dir() else path
    try:
        data = read_toml(file)
    except FileNotFoundError:
        raise OptionError(f"no tournament file {file}; make one with whist-arena init DIR --game GAME") from None
    unknown = sorted(set(data) - TOP_KEYS)
    if unknown:
        raise OptionError(f"{file}: unknown key(s) {unknown}; known: {sorted(TOP_KEYS)}")
    for key, (kinds, words) in KEY_KINDS.items():
        if key in data and not isinstance(data[key], kinds):
            raise OptionError(f"{file}: {key} must be {words}, got {data[key]!r}")
    if "game" not in data:
        raise OptionError(f'{file}: names no game; add game = "<game id>" (whist-arena init writes a whole file)')
    for item in data.get("gates", []):
        if not isinstance(item, dict) or "agent" not in item:
            raise OptionError(f'{file}: each [[gates]] needs an agent (agent = "heuristic"), got {item!r}')
    return file, data


def split_command(command: str, what: str) -> tuple[str, ...]:
    """``command`` split as a shell would (``shlex``), or an error naming ``what``."""
    try:
        return tuple(shlex.split(command))
    except ValueError as err:
        raise OptionError(f"{what} {command!r}: {err}") from None


def _listed(value: Any) -> Any:
    """A TOML array as a tuple; anything else as it is (the checks name it)."""
    return tuple(value) if isinstance(value, list) else value


def _number_within(value: Any, low: float, high: float) -> bool:
    """Whether ``value`` is an int or a float (not a bool, not NaN) within ``[low, high]``."""
    return not isinstance(value, bool) and isinstance(value, int | float) and low <= value <= high


def _gates(items: Sequence[Any], spec: GameSpec[Any, Any], base: Path, file: Path) -> list[Entrant]:
    out = []
    for item in items:  # each a table naming its agent (read_tournament_file)
        unknown = sorted(set(item) - GATE_KEYS)
        if unknown:
            raise OptionError(
                f"{file}: [[gates]] {item.get('agent')}: unknown key(s) {unknown}; known: {sorted(GATE_KEYS)}"
            )
        agent = str(item["agent"])
        gate = gate_command(str(item.get("name", agent)), agent, spec, base, item.get("sha256"))
        out.append(replace(gate, points=item.get("points", 1.0)))
    return out


def _bots(patterns: Sequence[Any], base: Path, gates: Sequence[str]) -> list[Entrant]:
    """The bots of the file's patterns (a bot two patterns match, once; a document or an archive, :data:`NOT_BOTS`,
    skipped with a warning). A submission is never the tournament's error: one that does not load is entered under
    its file's or folder's name and forfeits every match (:func:`refused_bot`); one whose ``bot.toml`` names it as
    no entrant may be called, or as another entrant is, plays under its folder's name; a file or folder whose own
    name is refused plays as that name made printable behind a ``_`` (a name no other bot's file has: those are
    skipped); and a bot called as a gate or an earlier bot is (``random.py`` beside the random gate, ``Bob`` and
    ``bob``) plays with ``-2`` (``-3``, ...) added. A warning says so for each."""
    found: list[tuple[Path, BotCommand]] = []
    seen: set[Path] = set()
    for pattern in [patterns] if isinstance(patterns, str) else patterns:
        matches = sorted(glob.glob(str(base / str(pattern))))
        if not matches and not any(ch in str(pattern) for ch in "*?["):
            raise OptionError(f"no bot at {base / str(pattern)}")
        for match in matches:
            path = Path(match)
            if path.name.startswith((".", "_")) or path.name == BOT_FILE or path.resolve() in seen:
                continue
            seen.add(path.resolve())
            if path.suffix.lower() in NOT_BOTS and path.is_file() and not os.access(path, os.X_OK):
                warnings.warn(f"{path} is skipped: a {path.suffix} file is no bot (a README, an export's list)",
                              stacklevel=2)  # fmt: skip
                continue
            try:
                found.append((path, bot_command(path)))
            except OptionError as err:
                warnings.warn(f"the bot {path} forfeits every match: {err}", stacklevel=2)
                found.append((path, refused_bot(path, str(err))))
    keys = collections.Counter(_safe(name).lower() for name in [*gates, *(command.name for _, command in found)])
    taken = {_safe(name).lower() for name in gates}
    out = []
    for path, command in found:
        name, own, why = command.name, _own_name(path), ""
        if name != own and (name_problem(name) or keys[_safe(name).lower()] > 1):
            why = f"its bot.toml names it {name!r} ({name_problem(name) or 'another entrant has it too'})"
            name = own
        if name_problem(name):  # its file's or folder's own name
            why = f"{name!r} is refused: {name_problem(name)}"
            name = "_" + "".join(ch if ch.isprintable() else "_" for ch in name).strip()
        free = name
        for number in itertools.count(2):
            if _safe(free).lower() not in taken:
                break
            why = why or f"another entrant is called {name!r} (or a name of the same files)"
            free = f"{name[:72]}-{number}"
        taken.add(_safe(free).lower())
        if free != command.name:
            warnings.warn(f"the bot {path} plays as {free!r}: {why}", stacklevel=2)
        out.append(Entrant(free, BOT_KIND, replace(command, name=free)))
    return out


def refused_bot(path: Path, why: str) -> BotCommand:
    """A bot whose file or folder does not load (``why``): entered under its file's or folder's name, every match it
    is in starts with a ``start`` fault and forfeits, and its grade says why; so a broken submission neither stops
    the class's tournament nor goes unnoticed. Its sha256 is of ``why``: the fixed bot is a new bot for the cache."""
    return BotCommand(_own_name(path), (), None, hashlib.sha256(why.encode()).hexdigest(), refused=why)


def _own_name(path: Path) -> str:
    """A bot's name when its ``bot.toml`` gives none: its folder's name, or its file's without the extension."""
    return path.name if path.is_dir() else path.stem


# --------------------------------------------------------------------------------------------- playing
@dataclass(frozen=True)
class MatchTask:
    """One match, as a worker plays it."""

    spec: GameSpec[Any, Any]
    options: dict[str, Any]
    a: BotCommand
    b: BotCommand
    deals: int
    seed: int
    lineup: str
    limits: Limits
    prefix: tuple[str, ...]
    records: str | None  # the records file to write (None: none)
    logs: str | None
    workroot: str | None = None
    stop: StopRule | None = None


def match_key(t: Tournament, a: Entrant, b: Entrant) -> dict[str, Any]:
    """Everything that decides a match's result (its cache entry's key)."""
    from whist_env import __version__

    return {
        "format": CACHE_FORMAT,
        "protocol": PROTOCOL,
        "whist_env": __version__,
        "game": t.spec.game_id,
        "options": {k: repr(v) for k, v in sorted(t.options.items())},
        "deals": t.deals,
        "seed": t.seed,
        "lineup": t.lineup,
        "limits": asdict(t.limits),
        "prefix": list(t.prefix),
        "a": [a.name, a.command.digest, list(a.command.argv[1:]) if a.kind == GATE_KIND else []],
        "b": [b.name, b.command.digest, list(b.command.argv[1:]) if b.kind == GATE_KIND else []],
        **({"stop": asdict(rule)} if (rule := t.stop_rule()) is not None else {}),
    }


def _init_worker(spec: GameSpec[Any, Any]) -> None:
    """A referee worker: a child subreaper (it ends what a bot leaves behind), Ctrl-C left to the parent, and a
    SIGTERM (sent by the parent on Ctrl-C, or by the kernel when the parent dies) that ends the match's bots and the
    worker at once."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, lambda *_: end_everything(143))
    die_with_parent(signal.SIGTERM)  # a tournament killed outright takes its workers, and they their bots, along
    become_subreaper()
    ensure_spec(spec)


def play_match(task: MatchTask) -> dict[str, Any]:
    """Play one match: every seating of the lineup with fresh processes, on the same deals (in a worker); with
    ``task.stop``, chunk by chunk until decided (each chunk's seatings with fresh processes, seeded per chunk).

    While the match is played, a marker beside its logs (``<logs>.playing``) names it: a worker killed in the middle
    leaves the marker behind, and the tournament names the match (:class:`RefereeLostError`).

    Returns:
        JSON-ready: ``diffs`` (a's score minus b's, per deal), ``scores`` ([a, b] per deal), each bot's
        :class:`~whist_env.evaluation.referee.BotLedger`, the records' file and size, the wall time.
    """
    marker = Path(task.logs + PLAYING) if task.logs else None
    if marker is not None:
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text(json.dumps([task.a.name, task.b.name]), encoding="utf-8")
    result = _play_match(task)
    if marker is not None:
        marker.unlink()
    return result


def _play_match(task: MatchTask) -> dict[str, Any]:
    start = time.perf_counter()
    referee = Referee(task.spec, task.options, task.limits, task.seed, prefix=task.prefix,
                      workroot=Path(task.workroot) if task.workroot else None,
                      logs=Path(task.logs) if task.logs else None, record=task.records is not None)  # fmt: skip
    n = referee.game.num_players
    seatings = match_seatings(n, task.lineup)
    ledgers = {task.a.name: BotLedger(task.a.name), task.b.name: BotLedger(task.b.name)}
    bots = (task.a, task.b)
    halves = [HalfResult([], [], 0.0) for _ in seatings]
    look = task.stop.look_every if task.stop is not None else task.deals
    scores: list[list[float]] = []
    for chunk, first in enumerate(range(0, task.deals, look)):
        deals = range(first, min(task.deals, first + look))
        for half, assignment in enumerate(seatings):
            # chunk 0 keeps the seeds of a match played in one go; a later chunk's processes get their own
            number = half + chunk * len(seatings)
            seeds = tuple(seat_seed(task.seed, task.a.name, task.b.name, number, seat) for seat in range(n))
            seating = Seating(tuple(bots[j] for j in assignment), seeds)
            part = referee.play_half(seating, deals, ledgers, half)
            halves[half].returns.extend(part.returns)
            halves[half].records.extend(part.records)
            halves[half].wall_s += part.wall_s
        scores += [
            deal_scores([(s, h.returns[i]) for s, h in zip(seatings, halves, strict=True)])
            for i in range(len(scores), deals.stop)
        ]
        if task.stop is not None and task.stop.decided([sa - sb for sa, sb in scores]):
            break
    size = 0
    if task.records is not None:
        size = _write_records(Path(task.records), task, seatings, halves)
    return {
        "a": task.a.name,
        "b": task.b.name,
        "diffs": [sa - sb for sa, sb in scores],
        "scores": scores,
        "ledgers": {name: ledger.as_dict() for name, ledger in ledgers.items()},
        "records": {"file": task.records, "bytes": size},
        "wall_s": round(time.perf_counter() - start, 3),
    }


def match_seatings(num_players: int, lineup: str) -> list[tuple[int, ...]]:
    """The seatings of a match (bot 0 or 1 at each seat): the lineup's rotations (:func:`seat_assignments`), and
    with ``one_vs_rest`` the same again with the roles swapped, so that each bot sits alone against copies of the
    other in every seat (the arena's ``one_vs_rest`` compares only its first agent alone)."""
    seatings = seat_assignments(num_players, 2, lineup)
    if lineup == "one_vs_rest":
        seatings += [tuple(1 - j for j in s) for s in seatings]
    return seatings


def deal_scores(tables: Sequence[tuple[Sequence[int], Sequence[float]]]) -> list[float]:
    """Each bot's score on one deal: the mean over the deal's tables (its seatings) of the bot's mean return at the
    table. Every table counts alike, however many seats a bot holds there (one against three in Oh Hell)."""
    scores = [0.0, 0.0]
    for assignment, returns in tables:
        for j in (0, 1):
            seats = [returns[seat] for seat, who in enumerate(assignment) if who == j]
            scores[j] += sum(seats) / len(seats) / len(tables)
    return scores


def _write_records(path: Path, task: MatchTask, seatings: Sequence[Sequence[int]], halves: Sequence[Any]) -> int:
    """Every table of the match as a JSON line (a header line first), gzip-compressed; returns the file's size."""
    path.parent.mkdir(parents=True, exist_ok=True)
    spare = path.with_suffix(f".{os.getpid()}.tmp")
    names = (task.a.name, task.b.name)
    with gzip.open(spare, "wt", encoding="utf-8") as out:
        header = {"match": list(names), "game": task.spec.game_id, "options": task.options,
                  "deals": len(halves[0].returns), "seed": task.seed,
                  "seatings": [[names[j] for j in s] for s in seatings]}  # fmt: skip
        out.write(json.dumps(header) + "\n")
        for half, (assignment, result) in enumerate(zip(seatings, halves, strict=True)):
            for deal, (returns, record) in enumerate(zip(result.returns, result.records, strict=True)):
                seats = [names[j] for j in assignment]
                out.write(
                    json.dumps({"half": half, "deal": deal, "seats": seats, "returns": returns, "record": record})
                )
                out.write("\n")
    spare.replace(path)
    return path.stat().st_size


def _cell(text: str) -> str:
    """``text`` in a cell of a markdown table (where ``|`` would end the cell)."""
    return text.replace("|", "\\|")


def _safe(name: str) -> str:
    """``name`` as a file name: letters, digits, ``-``, ``_`` and ``.`` kept, the rest ``_``, at most 80 characters
    (two entrants whose names give the same, ignoring case, are refused: :class:`Tournament`)."""
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name)[:80]


def run_tournament(t: Tournament, out: str | Path, progress: Callable[[str], None] | None = None) -> TournamentReport:
    """Play every match not in ``out``'s cache, then rate and write every output (see the module docstring). The
    bots play from copies of their files made at the start (:func:`snapshot_bots`).

    Args:
        t: the tournament.
        out: the results folder (its ``cache/`` holds the finished matches: run again to resume).
        progress: called with a line per finished match.

    Raises:
        OptionError: for a bot whose files cannot be copied at the start, or an ``out`` another run is writing.
    """
    warn_oversubscribed(t)
    with results_lock(Path(out)), snapshot_bots(t) as played:
        return _run_tournament(played, out, progress)


def warn_oversubscribed(t: Tournament) -> None:
    """A warning when ``t`` would play more matches at once than this process has cores: a bot then waits for a core
    while its wall-clock limits run, and may time out for the machine's sake, not its own."""
    cores = usable_cores()
    if min(t.workers, len(t.pairs())) > cores:
        warnings.warn(f"workers = {t.workers}, but this process may use {cores} core(s): a bot then waits for one, "
                      f"and its decision_s and match_s (wall clock) run meanwhile, so it may time out; use at most "
                      f"{cores}", stacklevel=3)  # fmt: skip


def usable_cores() -> int:
    """The CPU cores this process may run on (its affinity where the platform says, else the machine's count)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


@contextlib.contextmanager
def results_lock(folder: Path) -> Iterator[None]:
    """Hold ``folder`` (made if missing) for one run: a second run on it meanwhile (a course's timer firing while the
    last run still plays) is refused, where it would play the same matches again and delete the first's markers,
    which failed the first run. An exclusive ``flock`` on ``folder/.lock``, which the kernel lets go when the run
    ends, however it ends; the file names the run's process. Without ``fcntl`` (Windows) nothing is held.

    Raises:
        OptionError: naming the process that holds the folder, or for a ``folder`` that is a file.
    """
    if folder.exists() and not folder.is_dir():
        raise OptionError(f"{folder} is a file: the results go in a folder (--out)")
    folder.mkdir(parents=True, exist_ok=True)
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    with open(folder / LOCK_FILE, "a+", encoding="utf-8") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock.seek(0)
            holder = lock.read().strip() or "another process"
            raise OptionError(
                f"{folder} is in use by another tournament run ({holder}): wait for it to end, or give another --out"
            ) from None
        lock.truncate(0)
        lock.write(f"pid {os.getpid()}, since {time.strftime('%Y-%m-%d %H:%M:%S %z')}")
        lock.flush()
        yield


@contextlib.contextmanager
def snapshot_bots(t: Tournament) -> Iterator[Tournament]:
    """``t`` with every bot's files copied once, into a temporary folder (under ``workroot``) removed on leaving:
    each bot process is started from this copy, and the cache key holds the copy's sha256. A bot folder changed or
    removed while the tournament runs (a student's new submission, a course's sync) then changes nothing of it: a
    bot plays every match of a run with the same files, and the next run plays the new ones.

    Raises:
        OptionError: naming the bot whose files cannot be copied (removed or unreadable since it was loaded).
    """
    root = Path(tempfile.mkdtemp(prefix="whist-bots-", dir=t.workroot))
    try:
        entrants = []
        for number, e in enumerate(t.entrants):
            if e.kind == BOT_KIND and e.command.source:
                source, copy = Path(e.command.source), root / str(number)
                copy.mkdir()
                copied = copy if source.is_dir() else copy / source.name
                try:
                    copy_bot_files(str(source), copy)
                    digest = _sha256_files(copied)
                except OSError as err:
                    raise OptionError(f"{e.name}: its files at {source} could not be copied: {err}") from None
                e = replace(e, command=replace(e.command, source=str(copied), digest=digest))
            entrants.append(e)
        yield replace(t, entrants=tuple(entrants))
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _run_tournament(t: Tournament, out: str | Path, progress: Callable[[str], None] | None) -> TournamentReport:
    folder = Path(out)
    cache = folder / "cache"
    cache.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    done: dict[tuple[str, str], dict[str, Any]] = {}
    todo: list[tuple[tuple[str, str], str, MatchTask]] = []  # (pair, its cache file, the task)
    for a, b in t.pairs():
        key = match_key(t, a, b)
        digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:24]
        entry = cache / f"{digest}.json"
        cached = _read_cache(entry, key)
        if cached is not None:
            done[(a.name, b.name)] = _compact(cached)
            continue
        stem = f"{_safe(a.name)}--{_safe(b.name)}"
        records = str(folder / "records" / f"{stem}.jsonl.gz") if t.records else None
        task = MatchTask(t.spec, t.options, a.command, b.command, t.deals, t.seed, t.lineup, t.limits, t.prefix,
                         records, str(folder / "logs" / stem), t.workroot, t.stop_rule())  # fmt: skip
        todo.append(((a.name, b.name), str(entry), task))
    _warm_gates(t)
    total, finished = len(todo), 0
    for stale in (folder / "logs").glob(f"*{PLAYING}"):  # left by a worker killed in an earlier run
        stale.unlink()
    if todo:
        with sigint_ignored(), one_blas_thread():
            pool = ProcessPoolExecutor(max_workers=min(t.workers, len(todo)), mp_context=get_context("spawn"),
                                       initializer=_init_worker, initargs=(t.spec,))  # fmt: skip
        try:
            with sigint_ignored():
                futures = {pool.submit(play_match, task): (pair, entry) for pair, entry, task in todo}
            pending = set(futures)
            while pending:
                ready, pending = wait(pending, timeout=1.0, return_when=FIRST_COMPLETED)
                for future in ready:
                    pair, entry_file = futures.pop(future)  # a finished future holds its result: let it go
                    result = future.result()
                    _write_cache(Path(entry_file), match_key(t, t.entrant(pair[0]), t.entrant(pair[1])), result)
                    done[pair] = _compact(result)
                    finished += 1
                    if progress is not None:
                        progress(_progress_line(finished, total, result, started))
        except BaseException as err:
            for process in list(getattr(pool, "_processes", {}).values()):
                process.terminate()  # SIGTERM: each worker ends its match's bots on the way out
            pool.shutdown(wait=True, cancel_futures=True)
            if isinstance(err, BrokenProcessPool):
                raise RefereeLostError(_lost_referee(folder)) from err
            raise
        pool.shutdown(wait=True)
    report = rate(t, [done[(a.name, b.name)] for a, b in t.pairs()], time.perf_counter() - started, total)
    report.write(folder)
    return report


class RefereeLostError(RuntimeError):
    """A referee worker ended abruptly (killed) while the tournament ran: the message names the matches that were
    being played (see :func:`play_match`)."""


def _lost_referee(folder: Path) -> str:
    """What :class:`RefereeLostError` says: the matches whose markers the workers left in ``folder``'s logs."""
    playing = []
    for marker in sorted((folder / "logs").glob(f"*{PLAYING}")):
        try:
            playing.append(" − ".join(json.loads(marker.read_text(encoding="utf-8"))))
        except (OSError, ValueError, TypeError):  # killed while writing it: the file's name says the match
            playing.append(marker.name.removesuffix(PLAYING))
    where = f"while these matches were played: {', '.join(playing)}" if playing else "between two matches"
    return (
        f"a referee worker was killed {where}. Without a sandbox a bot can signal any process of your user, its "
        "referee's included. The finished matches are kept: run the same command to resume; if it happens again, "
        "look at those matches' bots (whist-bot check plays one alone) or run every bot in a sandbox (--bot-prefix, "
        "docs/guide/protocol.md)"
    )


def _progress_line(finished: int, total: int, result: Mapping[str, Any], started: float) -> str:
    diffs = result["diffs"]
    forfeits = [name for name, ledger in result["ledgers"].items() if ledger["forfeit"]]
    note = f"; forfeit: {', '.join(forfeits)}" if forfeits else ""
    elapsed = time.perf_counter() - started
    eta = elapsed / finished * (total - finished)
    return (f"match {finished}/{total}: {result['a']} − {result['b']} {np.mean(diffs):+.3f} per deal "
            f"({result['wall_s']:.1f} s{note}); ETA {eta:.0f} s")  # fmt: skip


def _compact(result: dict[str, Any]) -> dict[str, Any]:
    """A match's result as the tournament keeps it until the end: the per-deal numbers as arrays (a class of 44
    entrants holds 946 matches; as lists of floats their scores alone took 12 KB a match)."""
    return {**result, "diffs": np.asarray(result["diffs"], np.float64), "scores": np.asarray(result["scores"])}


def _read_cache(path: Path, key: Mapping[str, Any]) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None  # none yet, or damaged: the match is played again
    if not isinstance(data, dict) or data.get("key") != json.loads(json.dumps(key)):
        return None
    result: dict[str, Any] = data["result"]
    return result


def _write_cache(path: Path, key: Mapping[str, Any], result: Mapping[str, Any]) -> None:
    spare = path.with_suffix(f".{time.time_ns()}.tmp")
    spare.write_text(json.dumps({"key": key, "result": result}), encoding="utf-8")
    spare.replace(path)  # atomic: a tournament stopped half-way leaves no half-written match


def _warm_gates(t: Tournament) -> None:
    """Play one deal with each gate in this process first, so that numba compiles (and caches) what a gate's search
    needs once, before its processes start under the time limits (a cold cache takes seconds to fill)."""
    from whist_env.agents.factory import make_agent

    game = t.spec.make_rules(**t.options)
    for entrant in t.entrants:
        if entrant.kind != GATE_KIND or entrant.agent is None:
            continue
        agent = make_agent(entrant.agent, t.spec, **t.options)
        rng = np.random.default_rng(0)
        state = game.new_episode(rng)
        while not state.done:
            game.step(state, int(agent.act(game.view(state, state.to_act), rng)), rng)


# --------------------------------------------------------------------------------------------- the report
@dataclass(frozen=True)
class GateVerdict:
    """A bot against one gate: ``verdict`` is ``pass``, ``fail``, ``undecided`` or ``forfeit`` (it forfeited its match
    against the gate); ``diff`` its rating minus the gate's with the 95% interval ``[low, high]``; ``score`` the points
    it earns of ``points``."""

    gate: str
    verdict: str
    diff: float
    low: float
    high: float
    score: float
    points: float


@dataclass
class Standing:
    """One entrant's line of the leaderboard."""

    name: str
    kind: str
    rating: float
    low: float
    high: float
    gates: list[GateVerdict]
    score: float
    max_score: float
    faults: dict[str, int]
    forfeits: int
    matches: int
    decisions: int
    answer_s: float
    cpu_s: float
    start_s: float  # median time from a process's start to its hello
    processes: int
    forfeit_reasons: list[str] = field(default_factory=list)  # why it forfeited (the first few, each once)

    @property
    def ms_per_decision(self) -> float:
        """Mean milliseconds from a request to its answer."""
        return 1000 * self.answer_s / self.decisions if self.decisions else 0.0


@dataclass
class TournamentReport:
    """A tournament's results: the standings (best first), every match, and how long it took."""

    game: str
    options: dict[str, Any]
    unit: str
    deals: int
    seed: int
    anchor: str
    standings: list[Standing]
    matches: list[dict[str, Any]]
    bootstrap: int
    wall_s: float
    played: int
    limits: dict[str, Any]
    undecided_score: float
    stop: dict[str, Any] | None = None  # the stopping rule (alpha per match, look_every, bound), None: fixed deals

    def standing(self, name: str) -> Standing:
        """The line of entrant ``name``."""
        for s in self.standings:
            if s.name == name:
                return s
        raise KeyError(f"no entrant {name!r}")

    def verdict(self, bot: str, gate: str) -> GateVerdict:
        """``bot``'s verdict against ``gate``."""
        for v in self.standing(bot).gates:
            if v.gate == gate:
                return v
        raise KeyError(f"{gate!r} is no gate of this tournament")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (the per-deal differences left out)."""
        return {
            "game": self.game,
            "options": self.options,
            "unit": self.unit,
            "deals": self.deals,
            "seed": self.seed,
            "anchor": self.anchor,
            "method": (
                "round robin of duplicate matches on the same deals; ratings: least squares of every match's mean "
                f"per-deal difference, {self.anchor} = 0; 95% intervals: the rating ± Student's t (deals per match - 1 "
                f"degrees of freedom) times its standard error from {self.bootstrap} bootstrap resamples of the deals; "
                "a gate is passed when the interval of the rating difference lies above 0, "
                f"failed below 0, undecided otherwise ({self.undecided_score:g} of its points), forfeit (no points) "
                "where the bot forfeited its match against the gate"
            ),
            "limits": self.limits,
            "standings": [{**asdict(s), "ms_per_decision": round(s.ms_per_decision, 4)} for s in self.standings],
            "matches": [{k: v for k, v in m.items() if k not in ("diffs", "scores")} for m in self.matches],
            "timing": {"wall_s": round(self.wall_s, 3), "matches_played": self.played},
            "records_bytes": sum(m["records"]["bytes"] for m in self.matches),
            "stop_when_decided": self.stop,
            "deals_played": {f"{m['a']} − {m['b']}": len(m["diffs"]) for m in self.matches},
        }

    def to_markdown(self) -> str:
        """The leaderboard as a markdown table, with the method and the gates' verdicts."""
        gates = [s.name for s in self.standings if s.kind == GATE_KIND]
        opts = ", ".join(f"{k}={v!r}" for k, v in self.options.items()) or "defaults"
        lines = [
            f"**{self.game}** ({opts}): {self.deals} duplicate deals per match, seed {self.seed}; unit: {self.unit}. "
            f"Rating: mean gain per deal over {self.anchor} (= 0), 95% interval (Student's t on the bootstrap's "
            "standard error). Gates: ✓ passed "
            f"(interval above the gate), ✗ failed (below), ? undecided ({self.undecided_score:g} of the points), "
            "F forfeited (the match against the gate).",
            "",
            "| rank | entrant | rating (95% CI) | "
            + " | ".join(f"vs {_cell(g)}" for g in gates)
            + " | score | faults | forfeits | ms/decision | CPU s |",
            "|---" * (8 + len(gates)) + "|",
        ]
        for rank, s in enumerate(self.standings, 1):
            interval = "anchor" if s.name == self.anchor else _bounds(s.low, s.high)
            marks = {v.gate: MARKS[v.verdict] for v in s.gates}
            cells = [marks.get(g, "—") for g in gates]
            faults = ", ".join(f"{k} {v}" for k, v in sorted(s.faults.items())) or "0"
            score = f"{s.score:g}/{s.max_score:g}" if s.kind == BOT_KIND else "gate"
            name = _cell(s.name) if s.kind == BOT_KIND else f"*{_cell(s.name)}*"
            lines.append(
                f"| {rank} | {name} | {s.rating:+.3f} {interval} | "
                + " | ".join(cells)
                + f" | {score} | {faults} | {s.forfeits}/{s.matches} | {s.ms_per_decision:.2f} | {s.cpu_s:.1f} |"
            )
        size = sum(m["records"]["bytes"] for m in self.matches)
        if self.stop is not None:
            played = sum(len(m["diffs"]) for m in self.matches)
            lines += ["", f"Matches stopped when decided: {played} deals in all of at most "
                      f"{self.deals * len(self.matches)}, looks every {self.stop['look_every']} deals, alpha "
                      f"{self.stop['alpha']:.3g} per match (anytime-valid intervals, per-deal bound "
                      f"±{self.stop['bound']:g})."]  # fmt: skip
        lines += ["", f"{len(self.matches)} matches ({self.played} played now, the others from the cache), "
                  f"{self.wall_s:.1f} s; game records: {size / 1e6:.2f} MB."]  # fmt: skip
        return "\n".join(lines)

    def to_csv(self) -> str:
        """One row per entrant."""
        gates = [s.name for s in self.standings if s.kind == GATE_KIND]
        buffer = io.StringIO()
        writer = csv.writer(buffer)
        writer.writerow(["rank", "name", "kind", "rating", "low", "high", *[f"vs {g}" for g in gates], "score",
                         "max_score", *FAULT_KINDS, "forfeits", "matches", "decisions", "ms_per_decision", "cpu_s",
                         "start_s"])  # fmt: skip
        for rank, s in enumerate(self.standings, 1):
            verdicts = {v.gate: v.verdict for v in s.gates}
            writer.writerow([rank, s.name, s.kind, f"{s.rating:.6f}", f"{s.low:.6f}", f"{s.high:.6f}",
                             *[verdicts.get(g, "") for g in gates], s.score, s.max_score,
                             *[s.faults.get(k, 0) for k in FAULT_KINDS], s.forfeits, s.matches, s.decisions,
                             f"{s.ms_per_decision:.4f}", f"{s.cpu_s:.3f}", f"{s.start_s:.3f}"])  # fmt: skip
        return buffer.getvalue()

    def to_html(self, plot: str | None = None, folder: Path | None = None) -> str:
        """A static page: the leaderboard, the plot (``plot``: an image file beside it) and links to the records
        (relative to ``folder``, where the page is written)."""
        gates = [s.name for s in self.standings if s.kind == GATE_KIND]
        esc = html.escape
        head = "".join(f"<th>vs {esc(g)}</th>" for g in gates)
        rows = []
        for rank, s in enumerate(self.standings, 1):
            marks = {v.gate: v for v in s.gates}
            cells = "".join(
                f'<td class="{marks[g].verdict}" title="{_interval(marks[g])}">{MARKS[marks[g].verdict]}</td>'
                if g in marks else "<td>—</td>"
                for g in gates
            )  # fmt: skip
            faults = ", ".join(f"{k} {v}" for k, v in sorted(s.faults.items())) or "0"
            score = f"{s.score:g}/{s.max_score:g}" if s.kind == BOT_KIND else "gate"
            rows.append(
                f'<tr class="{s.kind}"><td>{rank}</td><td>{esc(s.name)}</td><td>{s.rating:+.3f} '
                f"{_bounds(s.low, s.high)}</td>{cells}<td>{score}</td><td>{esc(faults)}</td>"
                f"<td>{s.forfeits}/{s.matches}</td><td>{s.ms_per_decision:.2f}</td><td>{s.cpu_s:.1f}</td></tr>"
            )
        links = "".join(
            f'<li><a href="{esc(os.path.relpath(m["records"]["file"], start=folder or "."))}">{esc(m["a"])} − '
            f"{esc(m['b'])}</a> ({np.mean(m['diffs']):+.3f} per deal)</li>"
            for m in self.matches
            if m["records"]["file"]
        )
        image = f'<p><img src="{esc(plot)}" alt="ratings with their 95% intervals"></p>' if plot else ""
        return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{esc(self.game)} tournament</title>
<style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;
padding:.3em .6em;text-align:right}}td:nth-child(2){{text-align:left}}.pass{{background:#dfd}}.fail{{background:#fdd}}
.undecided{{background:#ffd}}tr.gate{{font-style:italic;color:#555}}</style></head><body>
<h1>{esc(self.game)}: the leaderboard</h1>
<p>{esc(self.to_dict()["method"])}. Unit: {esc(self.unit)}. {self.deals} duplicate deals per match,
seed {self.seed}.</p>
<table><tr><th>rank</th><th>entrant</th><th>rating (95% CI)</th>{head}<th>score</th><th>faults</th><th>forfeits</th>
<th>ms/decision</th><th>CPU s</th></tr>
{"".join(rows)}
</table>{image}
<h2>Game records</h2><ul>{links}</ul></body></html>
"""

    def write(self, folder: Path) -> None:
        """Write every output into ``folder`` (the plot only where matplotlib is installed)."""
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "leaderboard.md").write_text(self.to_markdown() + "\n", encoding="utf-8")
        (folder / "leaderboard.json").write_text(strict_json(self.to_dict()) + "\n", encoding="utf-8")
        (folder / "leaderboard.csv").write_text(self.to_csv(), encoding="utf-8")
        plot = None
        try:
            ratings = [Rating(s.name, s.rating, s.low, s.high) for s in self.standings]
            plot_ratings(ratings, folder / "ratings.png", f"{self.game}: {self.deals} duplicate deals per match",
                         f"rating: mean gain per deal over {self.anchor} ({self.unit})")  # fmt: skip
            plot = "ratings.png"
        except OptionError:
            pass  # no matplotlib: the page goes without the plot
        (folder / "index.html").write_text(self.to_html(plot, folder), encoding="utf-8")
        graded = folder / "autograder"
        graded.mkdir(exist_ok=True)
        for s in self.standings:
            if s.kind == BOT_KIND:
                (graded / f"{_safe(s.name)}.json").write_text(strict_json(autograder(s, self)), encoding="utf-8")


MARKS = {"pass": "✓", "fail": "✗", "undecided": "?", "forfeit": "F"}


def strict_json(data: Any) -> str:
    """``data`` as JSON that every parser reads: a number that is not finite (the start time of a bot that never
    started, the interval of one-deal matches) as ``null``, where Python's ``json`` writes ``NaN`` or ``Infinity``,
    which JavaScript's ``JSON.parse`` and strict parsers refuse."""

    def finite(value: Any) -> Any:
        if isinstance(value, float):
            return value if math.isfinite(value) else None
        if isinstance(value, dict):
            return {k: finite(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [finite(v) for v in value]
        return value

    return json.dumps(finite(data), indent=1, allow_nan=False)


def _bounds(low: float, high: float) -> str:
    """``[low, high]``, or that there is none (matches of one deal)."""
    return f"[{low:+.3f}, {high:+.3f}]" if math.isfinite(low) and math.isfinite(high) else "[none: one deal a match]"


def _interval(v: GateVerdict) -> str:
    return f"{v.diff:+.3f} {_bounds(v.low, v.high)}"


def autograder(s: Standing, report: TournamentReport) -> dict[str, Any]:
    """A bot's grade in Gradescope's ``results.json`` format: a test per gate (its points for a pass, the undecided
    share for an undecided verdict, none for a fail), the total, and the rating on the leaderboard."""
    tests = [
        {
            "name": f"beats {v.gate}",
            "score": v.score,
            "max_score": v.points,
            "status": "passed" if v.verdict == "pass" else "failed",
            "output": f"{v.verdict}: rating difference {v.diff:+.3f}, 95% interval {_bounds(v.low, v.high)} "
            f"({report.unit} per deal, {report.deals} duplicate deals per match)",
        }
        for v in s.gates
    ]
    faults = ", ".join(f"{n} {k}" for k, n in sorted(s.faults.items())) or "none"
    why = "".join(f"\nforfeit: {reason}" for reason in s.forfeit_reasons)
    return {
        "score": s.score,
        "max_score": s.max_score,
        "output": f"{s.name}: rating {s.rating:+.3f} {_bounds(s.low, s.high)} over {report.anchor}; faults: "
        f"{faults}; forfeited {s.forfeits} of {s.matches} matches{why}",
        "tests": tests,
        "leaderboard": [{"name": "rating", "value": round(s.rating, 4)}],
    }


def rate(t: Tournament, results: Sequence[dict[str, Any]], wall_s: float, played: int) -> TournamentReport:
    """The standings from every match's result (see the module docstring for the method)."""
    names = sorted(e.name for e in t.entrants)
    index = {name: j for j, name in enumerate(names)}
    gates = [e for e in t.entrants if e.kind == GATE_KIND]
    anchor = next((g.name for g in gates if g.agent == "random"), gates[0].name if gates else names[0])
    pairs = [(index[r["a"]], index[r["b"]]) for r in results]
    ratings, draws = fit_with_draws(len(names), pairs, [np.asarray(r["diffs"]) for r in results], index[anchor],
                                    t.bootstrap, t.seed)  # fmt: skip
    if draws is None:
        draws = np.repeat(ratings[None, :], 2, axis=0)
    scale = interval_scale(min(len(r["diffs"]) for r in results))
    spread = scale * draws.std(axis=0, ddof=1)
    low, high = ratings - spread, ratings + spread
    standings = []
    for name in names:
        entrant, j = t.entrant(name), index[name]
        ledgers = [BotLedger.from_dict(r["ledgers"][name]) for r in results if name in r["ledgers"]]
        verdicts = []
        if entrant.kind == BOT_KIND:
            forfeited = {next(n for n in r["ledgers"] if n != name) for r in results
                         if name in r["ledgers"] and r["ledgers"][name]["forfeit"]}  # fmt: skip
            for gate in gates:
                diff = float(ratings[j] - ratings[index[gate.name]])
                half = scale * float((draws[:, j] - draws[:, index[gate.name]]).std(ddof=1))
                lo, hi = diff - half, diff + half
                verdict = "pass" if lo > 0 else "fail" if hi < 0 else "undecided"
                if gate.name in forfeited:  # the stand-in played that match, not the bot: no credit for it
                    verdict = "forfeit"
                share = {"pass": 1.0, "fail": 0.0, "undecided": t.undecided_score, "forfeit": 0.0}[verdict]
                verdicts.append(GateVerdict(gate.name, verdict, diff, lo, hi, share * gate.points, gate.points))
        faults: dict[str, int] = {}
        for ledger in ledgers:
            for fault in ledger.faults:
                faults[fault.kind] = faults.get(fault.kind, 0) + 1
        starts = [s for ledger in ledgers for s in ledger.start_s]
        standings.append(
            Standing(
                name=name,
                kind=entrant.kind,
                rating=float(ratings[j]),
                low=float(low[j]),
                high=float(high[j]),
                gates=verdicts,
                score=sum(v.score for v in verdicts),
                max_score=sum(v.points for v in verdicts),
                faults=faults,
                forfeits=sum(ledger.forfeit is not None for ledger in ledgers),
                matches=len(ledgers),
                decisions=sum(ledger.decisions for ledger in ledgers),
                answer_s=sum(ledger.answer_s for ledger in ledgers),
                cpu_s=sum(ledger.cpu_s for ledger in ledgers),
                start_s=float(np.median(starts)) if starts else math.nan,
                processes=sum(ledger.processes for ledger in ledgers),
                forfeit_reasons=list(dict.fromkeys(ledger.forfeit for ledger in ledgers if ledger.forfeit))[:3],
            )
        )
    standings.sort(key=lambda s: (-s.rating, s.name))
    game = t.spec.make_rules(**t.options)
    return TournamentReport(t.spec.game_id, t.options, game.deal_unit() or t.spec.unit, t.deals, t.seed, anchor,
                            standings, list(results), t.bootstrap, wall_s, played, asdict(t.limits),
                            t.undecided_score, None if (rule := t.stop_rule()) is None else asdict(rule))  # fmt: skip
