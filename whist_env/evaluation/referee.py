"""The referee: bots play in processes of their own, under limits, and whatever a bot does is counted against it.

A bot is a command (any language) that speaks the bot protocol (:mod:`whist_env.evaluation.protocol`) on its
standard input and output. The referee never imports a bot and never trusts one:

* **A process per seat.** Every seat is played by its own process, started in a fresh, empty working directory
  (the bot's file or folder copied into it) with a scrubbed environment: ``PATH``, ``LANG``, ``HOME`` and ``TMPDIR``
  (the working directory), one BLAS thread, a Java VM told the memory limit (:func:`bot_environment`), and nothing
  else of the referee's (no tokens, keys or passwords).
  A bot's two partner copies in classic whist are two processes; each half of a duplicate match is played by fresh
  processes (:func:`play_half`), so no process sees both halves of a deal.
* **Limits** (:class:`Limits`): a time per decision and a time budget per process (wall clock, from the request to
  the answer's newline), CPU seconds (``RLIMIT_CPU``), private memory (``RLIMIT_DATA``), the size of files it writes
  (``RLIMIT_FSIZE``), the length of an answer line and the bytes written to standard output; standard error is
  drained into a log capped at ``log_bytes`` (the rest is counted, not kept).
* **Faults.** A timeout, an illegal or malformed answer, a flood (a line or an output over its bound, or input it
  does not read), a spent budget, a crash or an early exit, a failed start or another protocol version is a
  :class:`Fault` of that bot: the referee plays the stand-in action (the lowest legal action id) in its place and
  the deal goes on. A bot whose process has ended, or that used its budget or flooded, forfeits at once; after
  ``max_faults`` faults in a match any bot forfeits. A forfeited bot's process is ended and the stand-in plays its
  seats to the end of the match.
* **Nothing is left behind.** Each process starts a session of its own; at its end the whole process group is
  killed, and on Linux the referee's worker is a child subreaper (:func:`become_subreaper`), so a grandchild that
  left the group (``setsid()``) is re-parented to it and ended too (:func:`end_leftovers`). On Linux a bot also dies
  with its referee (``PR_SET_PDEATHSIG``).

What the referee does **not** guard against: a bot reading or writing files outside its working directory, using
the network, two bots colluding through files or sockets, or a bot taking many processes, much disk (many files) or
shared memory (which ``RLIMIT_DATA`` does not count) while it plays. Run each bot in a real sandbox for that:
``--bot-prefix 'bwrap ...'`` or ``'docker run ...'`` wraps every bot command (``{workdir}`` in it is the bot's
working directory). :func:`platform_limits` says which limits this platform enforces (Linux: all of them).
"""

from __future__ import annotations

import collections
import contextlib
import ctypes
import errno
import hashlib
import os
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from math import inf
from pathlib import Path
from typing import Any

import numpy as np

from whist_env.errors import IllegalActionError, OptionError
from whist_env.evaluation.protocol import (
    AnswerError,
    ViewCodec,
    check_hello_answer,
    clip,
    decode_line,
    encode_line,
    hello,
    layout_of,
)
from whist_env.record import record_of
from whist_env.rules.core import TrickGame
from whist_env.spec import GameSpec
from whist_env.view import PlayerView

LINUX = sys.platform.startswith("linux")
# how a process that closed its standard output but did not exit within a moment is described
RAN_ON = "closed its standard output and ran on"
PR_SET_PDEATHSIG, PR_SET_CHILD_SUBREAPER, PR_GET_CHILD_SUBREAPER = 1, 36, 37  # <linux/prctl.h>
KEPT_ENV = ("PATH", "LANG", "LC_ALL", "SYSTEMROOT")
"""The referee's environment variables a bot gets (where set); nothing else of the referee's reaches a bot."""

FAULT_KINDS: dict[str, str] = {
    "start": "did not start, or did not answer the hello in time",
    "version": "speaks another protocol version",
    "timeout": "did not answer within the time per decision",
    "illegal": "answered an action that is not legal now",
    "malformed": "answered a line that names no action (not JSON, or not an action)",
    "flood": "wrote a line or an output over its bound, or did not read its input",
    "budget": "used up its time budget for the match",
    "crash": "ended with an error (an exception, a signal, a limit: CPU, memory, file size)",
    "exit": "ended without an error before the match was over",
    "leftover": "left a process running after its end (the referee ended it)",
}
"""Every kind of fault, and what it means (the leaderboard's and ``whist-bot check``'s words)."""
ENDING = frozenset({"start", "version", "flood", "budget", "crash", "exit"})
"""Faults after which the bot forfeits at once (its process is gone or cannot be trusted to be in step)."""


MAX_MB = 1 << 40
"""The largest memory or file limit, in MiB (``RLIMIT_*`` take bytes in a signed 64-bit field)."""


@dataclass(frozen=True)
class Limits:
    """What a bot may use. Times are wall-clock seconds from the request to the answer's newline.

    Attributes:
        decision_s: per decision.
        match_s: per process, over all its decisions (one half of a match).
        start_s: from the start of the process to its answer to the hello.
        cpu_s: CPU seconds per process (``RLIMIT_CPU``; None: ``match_s + start_s``).
        memory_mb: private memory per process, in MiB (``RLIMIT_DATA``: the heap and private mappings).
        file_mb: the largest file a process may write, in MiB (``RLIMIT_FSIZE``).
        line_bytes: the longest answer line.
        output_bytes: everything a process may write to standard output.
        log_bytes: what is kept of its standard error (the rest is counted).
        max_faults: faults in one match after which a bot forfeits it.
        grace_s: how long a bot may take to exit after the goodbye before it is killed.
    """

    decision_s: float = 1.0
    match_s: float = 120.0
    start_s: float = 10.0
    cpu_s: float | None = None
    memory_mb: int = 1024
    file_mb: int = 64
    line_bytes: int = 65536
    output_bytes: int = 1 << 22
    log_bytes: int = 65536
    max_faults: int = 3
    grace_s: float = 1.0

    def __post_init__(self) -> None:
        for name, value in asdict(self).items():  # not (0 < value < inf): NaN too, which no limit could ever reach
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < inf
            ):
                raise OptionError(f"limit {name} must be a positive finite number, got {value!r}")
        for name in ("memory_mb", "file_mb"):  # in bytes, the kernel's limit must fit its 64-bit field
            if getattr(self, name) > MAX_MB:
                raise OptionError(f"limit {name} must be at most {MAX_MB} (MiB), got {getattr(self, name)!r}")

    @property
    def cpu(self) -> float:
        """The CPU seconds a process may use."""
        return self.cpu_s if self.cpu_s is not None else self.match_s + self.start_s

    def for_bot(self) -> dict[str, Any]:
        """The limits as the hello tells them."""
        return {**asdict(self), "cpu_s": self.cpu}


def platform_limits() -> dict[str, bool]:
    """Which of the referee's guards this platform has (Linux: all; elsewhere the missing ones are reported)."""
    posix = os.name == "posix"
    return {
        "time limits and stand-in": True,
        "cpu (RLIMIT_CPU)": posix,
        "memory (RLIMIT_DATA)": LINUX,
        "file size (RLIMIT_FSIZE)": posix,
        "process group killed": posix,
        "subreaper (grandchildren that left the group)": LINUX,
        "bot dies with the referee (PDEATHSIG)": LINUX,
    }


@dataclass(frozen=True)
class BotCommand:
    """How to start one bot.

    Attributes:
        name: the bot's name (unique in a tournament).
        argv: the command, run in the bot's fresh working directory.
        source: a file or a folder copied into each working directory before the start (None: nothing).
        digest: the sha256 of what the bot is (its files, or its command for a library agent): a changed bot is
            a new bot for the tournament's cache.
        refused: why the bot cannot be started (its file or folder did not load): each process the referee would
            start for it is a ``start`` fault instead.
    """

    name: str
    argv: tuple[str, ...]
    source: str | None = None
    digest: str = ""
    refused: str = ""


@dataclass
class Fault:
    """One fault of a bot: its ``kind`` (a key of :data:`FAULT_KINDS`), where (``half``, ``deal``; -1: at the start
    or the end) and what happened, in words."""

    kind: str
    half: int
    deal: int
    message: str


@dataclass
class BotLedger:
    """One bot's account over a match: its faults, its forfeit, and what its processes used."""

    name: str
    faults: list[Fault] = field(default_factory=list)
    forfeit: str | None = None  # why, once it forfeited
    decisions: int = 0
    answer_s: float = 0.0  # wall time from requests to answers
    cpu_s: float = 0.0  # its processes' CPU time (from the kernel, at their end)
    start_s: list[float] = field(default_factory=list)  # each process's time from its start to its hello
    processes: int = 0
    log_bytes: int = 0  # standard error written (kept and dropped)

    def fault(self, kind: str, half: int, deal: int, message: str, limits: Limits) -> None:
        """Count a fault; the bot forfeits on an ending one or at ``limits.max_faults`` (a process left behind is
        counted, found only once its half is over, and forfeits nothing)."""
        self.faults.append(Fault(kind, half, deal, message))
        played = [f for f in self.faults if f.kind != "leftover"]
        if kind != "leftover" and self.forfeit is None and (kind in ENDING or len(played) >= limits.max_faults):
            self.forfeit = f"{kind}: {message}" if kind in ENDING else f"{len(played)} faults (last: {kind})"

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {**asdict(self), "faults": [asdict(f) for f in self.faults]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> BotLedger:
        """The inverse of :meth:`as_dict`."""
        return cls(**{**data, "faults": [Fault(**f) for f in data["faults"]]})


# --------------------------------------------------------------------------------------------- processes
_libc: Any = None
if LINUX:
    with contextlib.suppress(OSError):
        _libc = ctypes.CDLL(None, use_errno=True)


def become_subreaper() -> bool:
    """Make this process a child subreaper (Linux): the orphaned descendants of its children are re-parented to it,
    so that :func:`end_leftovers` can end a grandchild that left its bot's process group. False elsewhere.

    For the whole life of a process of the referee's own (a tournament's worker); a process that goes on to other
    work uses :func:`subreaper`, which ends the flag with the work."""
    global _SUBREAPER
    if _libc is None:
        return False
    _SUBREAPER = _libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    return _SUBREAPER


_SUBREAPER = False


def is_subreaper() -> bool:
    """Whether the kernel holds this process a child subreaper (Linux; False elsewhere)."""
    if _libc is None:
        return False
    flag = ctypes.c_int(0)
    return _libc.prctl(PR_GET_CHILD_SUBREAPER, ctypes.byref(flag), 0, 0, 0) == 0 and flag.value != 0


@contextlib.contextmanager
def subreaper() -> Iterator[bool]:
    """A child subreaper for the work of the block (``whist-bot check``, run in a caller's process too): on leaving,
    what was re-parented here meanwhile is ended and reaped and the flag is put back as it was. A process left a
    subreaper for good adopts the orphans of every later child and, not reaping them, keeps them as zombies, which
    look alive to ``kill(pid, 0)``: a Ray worker then never sees its killed raylet die. Yields
    :func:`become_subreaper`'s answer."""
    global _SUBREAPER
    was, known, keep = is_subreaper(), _SUBREAPER, children()
    try:
        yield become_subreaper()
    finally:
        end_leftovers(keep)
        if not was and _libc is not None:
            _libc.prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
        _SUBREAPER = known


_LIVE: dict[int, BotProcess] = {}  # the bot processes running now, by pid
_ROOTS: set[Path] = set()  # the working folders of the halves being played


def end_everything(status: int = 143) -> None:
    """Kill every bot process of this process (their process groups too), end what they left, remove their folders
    and exit at once with ``status``: a referee worker's answer to SIGTERM (a Ctrl-C or a killed tournament), so that
    no bot outlives it. (Exiting with SystemExit would not do: the process pool catches it and plays the next
    match.)"""
    for pid in list(_LIVE):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)
    end_leftovers(set())
    for root in list(_ROOTS):
        shutil.rmtree(root, ignore_errors=True)
    os._exit(status)


def die_with_parent(sig: int = signal.SIGKILL) -> bool:
    """Have the kernel send this process ``sig`` when its parent ends (Linux; False elsewhere)."""
    return _libc is not None and _libc.prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0) == 0


def children() -> set[int]:
    """The process ids whose parent is this process (Linux: read from ``/proc``; elsewhere empty)."""
    me, out = os.getpid(), set[int]()
    if not LINUX:
        return out
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                stat = Path(entry.path, "stat").read_bytes()
            except OSError:
                continue
            fields = stat[stat.rindex(b")") + 2 :].split()  # after "pid (comm) ": state, ppid, ...
            if int(fields[1]) == me:
                out.add(int(entry.name))
    return out


def end_leftovers(keep: set[int]) -> dict[int, str]:
    """Kill and reap every child of this process but ``keep``: the descendants of bots re-parented here (only in a
    child subreaper, where nothing else becomes a child behind its back). Returns each one ended with its working
    directory (which tells whose it was; a folder already removed reads ``... (deleted)``)."""
    if not _SUBREAPER:
        return {}
    ended: dict[int, str] = {}
    for _ in range(100):  # each round may re-parent the children of what it killed
        left = children() - keep - set(ended)
        if not left:
            break
        for pid in left:
            try:
                ended[pid] = os.readlink(f"/proc/{pid}/cwd")
            except OSError:
                ended[pid] = ""
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        for pid in left:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
    return ended


def bot_environment(workdir: Path, memory_mb: int = Limits.memory_mb) -> dict[str, str]:
    """The environment a bot starts with: :data:`KEPT_ENV` from the referee's, its working directory as ``HOME``
    and ``TMPDIR``, one BLAS thread, a Java VM sized for ``memory_mb``, and nothing else (no secret of the
    referee's environment reaches a bot).

    A JVM sizes its heap from the machine's memory (its first heap 1/64 of it) and knows nothing of ``RLIMIT_DATA``:
    on a machine of 64 GiB or more it cannot start under the default 1024 MiB. ``JAVA_TOOL_OPTIONS`` tells it the
    limit as its memory (``-XX:MaxRAM``); a ``-Xmx`` in the bot's command still overrides it."""
    env = {name: os.environ[name] for name in KEPT_ENV if name in os.environ}
    env.setdefault("LANG", "C.UTF-8")
    env.update(
        HOME=str(workdir),
        TMPDIR=str(workdir),
        OMP_NUM_THREADS="1",
        OPENBLAS_NUM_THREADS="1",
        MKL_NUM_THREADS="1",
        PYTHONDONTWRITEBYTECODE="1",
        JAVA_TOOL_OPTIONS=f"-XX:MaxRAM={memory_mb}m",
    )
    return env


def _child_limits(limits: Limits) -> Callable[[], None] | None:
    """What the child process runs before it executes the bot: its resource limits (the referee is single-threaded,
    so running Python between fork and exec is safe here)."""
    if os.name != "posix":
        return None
    import resource

    cpu = max(1, int(limits.cpu + 0.999))
    memory = limits.memory_mb << 20
    files = limits.file_mb << 20

    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
        resource.setrlimit(resource.RLIMIT_FSIZE, (files, files))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if LINUX:
            resource.setrlimit(resource.RLIMIT_DATA, (memory, memory))
            if _libc is not None:
                _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)

    return apply


def _start_hint(err: OSError, program: str) -> str:
    """What a student can do about a command that did not start (empty: nothing to say)."""
    if err.errno == errno.ENOEXEC:
        return " (a script needs a first line naming its interpreter, such as #!/bin/sh)"
    if err.errno == errno.ENOENT and Path(program).name.startswith(("python", "py")):
        return " (in a bot.toml, {python} names the referee's own Python)"
    return ""


def copy_bot_files(source: str, workdir: Path) -> None:
    """Copy a bot's file, or its folder's contents, into the folder ``workdir`` (links kept as links)."""
    path = Path(source)
    if path.is_dir():
        shutil.copytree(path, workdir, dirs_exist_ok=True, symlinks=True)
    else:
        shutil.copy2(path, workdir / path.name)


class _NoAnswerError(Exception):
    """A request that got no usable line (a fault of the given kind)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class BotProcess:
    """One bot's process at one seat: its pipes (non-blocking, read through the half's selector), its line buffer,
    its captured standard error and its resource use."""

    def __init__(self, bot: BotCommand, seat: int, limits: Limits, selector: selectors.BaseSelector) -> None:
        self.bot, self.seat, self.limits, self.selector = bot, seat, limits, selector
        self.popen: subprocess.Popen[bytes] | None = None
        self.workdir: Path | None = None
        self.lines: collections.deque[bytes] = collections.deque()
        self.inbuf = bytearray()
        self.pending = bytearray()  # bytes for its standard input not written yet
        self.writing = False  # its standard input is in the selector (waiting for room in the pipe)
        self.log = bytearray()
        self.log_total = 0
        self.stdout_total = 0
        self.late = 0  # answers still owed to requests that timed out (dropped when they come)
        self.ended: str | None = None  # how the process ended, once it has (or why it was stopped)
        self.flooded: str | None = None
        self.used_s = 0.0  # seconds spent answering requests
        self.took = 0.0  # seconds the last request took
        self.cpu_s = 0.0
        self.observation = False
        self.killed = False  # it was still running when it was stopped (it did not exit after the goodbye)
        self.launched = 0.0  # when it was started (time.monotonic)
        self.stdin_fd = -1

    # ------------------------------------------------------------------ start and end
    def start(self, root: Path, prefix: Sequence[str]) -> None:
        """Start the process in a fresh working directory under ``root``.

        Raises:
            _NoAnswerError: ``start`` for a bot that did not load, or when its files cannot be copied or the command
                cannot be started.
        """
        if self.bot.refused:
            self.ended = f"it did not load: {self.bot.refused}"
            raise _NoAnswerError("start", self.ended)
        self.workdir = Path(tempfile.mkdtemp(prefix=f"{_safe(self.bot.name)[:40]}-seat{self.seat}-", dir=root))
        if self.bot.source:
            try:
                copy_bot_files(self.bot.source, self.workdir)
            except OSError as err:  # gone or unreadable since it was loaded, or no room to copy it
                self.ended = f"its files could not be copied into its working directory: {err}"
                raise _NoAnswerError("start", self.ended) from None
        argv = [part.replace("{workdir}", str(self.workdir)) for part in prefix] + list(self.bot.argv)
        try:
            self.popen = subprocess.Popen(
                argv,
                cwd=self.workdir,
                env=bot_environment(self.workdir, self.limits.memory_mb),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
                preexec_fn=_child_limits(self.limits),  # the referee is single-threaded: safe between fork and exec
                close_fds=True,
            )
        except (OSError, ValueError) as err:  # ValueError: a NUL in the command (bot_command refuses one)
            hint = _start_hint(err, argv[0]) if isinstance(err, OSError) else ""
            self.ended = f"could not start {argv[0]!r}: {err}{hint}"
            raise _NoAnswerError("start", self.ended) from None
        _LIVE[self.popen.pid] = self
        self.stdin_fd = self.popen.stdin.fileno()  # type: ignore[union-attr]
        for pipe in self._pipes():
            os.set_blocking(pipe.fileno(), False)
        self.selector.register(self.popen.stdout, selectors.EVENT_READ, (self, "out"))  # type: ignore[arg-type]
        self.selector.register(self.popen.stderr, selectors.EVENT_READ, (self, "err"))  # type: ignore[arg-type]

    def _pipes(self) -> list[Any]:
        popen = self.popen
        return [] if popen is None else [popen.stdin, popen.stdout, popen.stderr]

    @property
    def alive(self) -> bool:
        """Whether the process runs and may still be asked."""
        return self.popen is not None and self.ended is None and self.flooded is None

    def poll(self) -> int | None:
        """Its exit code (negative: the signal that ended it), reaping it with its resource use; None while it runs."""
        popen = self.popen
        if popen is None or popen.returncode is not None:
            return None if popen is None else popen.returncode
        if not hasattr(os, "wait4"):  # pragma: no cover - not POSIX: no resource use
            return popen.poll()
        try:
            pid, status, usage = os.wait4(popen.pid, os.WNOHANG)
        except ChildProcessError:  # pragma: no cover - reaped behind our back
            return popen.poll()
        if pid == 0:
            return None
        popen.returncode = os.waitstatus_to_exitcode(status)
        self.cpu_s = usage.ru_utime + usage.ru_stime  # with its children that it waited for
        return popen.returncode

    def stop(self, goodbye: Mapping[str, Any] | None) -> None:
        """End the process: the goodbye (when given and it still runs), its input closed, ``grace_s`` to exit, then
        its whole process group killed; reaped, with its CPU time read."""
        popen = self.popen
        if popen is None:
            return
        grace = 0.0
        if goodbye is not None and self.alive:
            self.send(encode_line(goodbye))
            grace = self.limits.grace_s
        self._unregister(popen.stdin)
        with contextlib.suppress(OSError):
            popen.stdin.close()  # type: ignore[union-attr]
        deadline = time.monotonic() + grace
        while self.poll() is None and time.monotonic() < deadline:
            pump(self.selector, min(0.01, max(0.0, deadline - time.monotonic())))
        self.killed = self.poll() is None
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(popen.pid, signal.SIGKILL)
        while self.poll() is None:
            time.sleep(0.001)
        _LIVE.pop(popen.pid, None)
        for pipe, which in ((popen.stdout, "out"), (popen.stderr, "err")):
            self._drain(pipe, which)
            self._unregister(pipe)
            with contextlib.suppress(OSError):
                pipe.close()  # type: ignore[union-attr]
        if self.workdir is not None:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def exit_text(self) -> str:
        """How the process ended, in words (``exit status 1``, ``killed by SIGXCPU (its CPU time limit)``)."""
        code = self.poll()
        if code is None:
            return "still running"
        if code < 0:
            name = signal.Signals(-code).name
            why = {"SIGXCPU": " (its CPU time limit)", "SIGKILL": " (killed)", "SIGXFSZ": " (its file size limit)"}
            return f"killed by {name}{why.get(name, '')}"
        return f"exit status {code}"

    def _unregister(self, pipe: Any) -> None:
        with contextlib.suppress(KeyError, ValueError, OSError):
            self.selector.unregister(pipe)

    # ------------------------------------------------------------------ pipes
    def send(self, data: bytes) -> None:
        """Queue ``data`` for its standard input and write what the pipe takes now (the rest when it is ready)."""
        if self.ended is not None or self.popen is None:
            return
        if not self.pending:  # the usual case: the pipe takes it all at once
            try:
                written = os.write(self.stdin_fd, data)
            except BlockingIOError:
                written = 0
            except OSError:  # a broken pipe: it has ended
                self._note_end()
                return
            if written == len(data):
                return
            data = data[written:]
        self.pending += data
        self._flush()
        if len(self.pending) > self.limits.output_bytes:
            self.flooded = f"it did not read {len(self.pending)} bytes of its input"

    def _flush(self) -> None:
        stdin = self.popen.stdin if self.popen is not None else None
        if stdin is None or stdin.closed:
            return
        if self.pending:
            try:
                del self.pending[: os.write(stdin.fileno(), self.pending)]
            except BlockingIOError:
                pass
            except OSError:  # a broken pipe: it has ended
                self.pending.clear()
                self._note_end()
        if self.pending and not self.writing:  # the pipe is full: write the rest when it has room
            self.selector.register(stdin, selectors.EVENT_WRITE, (self, "in"))
            self.writing = True
        elif not self.pending and self.writing:
            self._unregister(stdin)
            self.writing = False

    def on_ready(self, which: str) -> None:
        """Handle a ready pipe (called by :func:`pump`)."""
        if which == "in":
            self._flush()
            return
        pipe = self.popen.stdout if which == "out" else self.popen.stderr  # type: ignore[union-attr]
        try:
            data = os.read(pipe.fileno(), 1 << 16)  # type: ignore[union-attr]
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self._unregister(pipe)
            if which == "out":
                self._note_end()
            return
        self._take(which, data)

    def _take(self, which: str, data: bytes) -> None:
        if which == "err":
            self.log_total += len(data)
            room = self.limits.log_bytes - len(self.log)
            if room > 0:
                self.log += data[:room]
            return
        self.stdout_total += len(data)
        self.inbuf += data
        while (cut := self.inbuf.find(b"\n")) >= 0:
            self.lines.append(bytes(self.inbuf[:cut]))
            del self.inbuf[: cut + 1]
        if len(self.inbuf) > self.limits.line_bytes:
            self.flooded = f"a line of more than {self.limits.line_bytes} bytes on standard output (line_bytes)"
        elif self.stdout_total > self.limits.output_bytes:
            self.flooded = f"more than {self.limits.output_bytes} bytes on standard output (output_bytes)"

    def _drain(self, pipe: Any, which: str) -> None:
        """Keep what is left in a pipe of a process that has ended (its last words on standard error)."""
        if pipe is None or pipe.closed:
            return
        for _ in range(256):  # at most 16 MiB: a descendant that still holds the pipe may write on
            try:
                data = os.read(pipe.fileno(), 1 << 16)
            except OSError:  # nothing more now (BlockingIOError), or closed
                return
            if not data:
                return
            self._take(which, data)

    def _note_end(self) -> None:
        """Its standard output closed (or its input broke): give it a moment to exit, and say how it ended."""
        if self.ended is not None or self.popen is None:
            return
        deadline = time.monotonic() + 0.2
        while self.poll() is None and time.monotonic() < deadline:
            time.sleep(0.002)
        self.ended = self.exit_text() if self.poll() is not None else RAN_ON

    def ended_fault(self) -> _NoAnswerError:
        """The fault of a process that has ended, or closed its standard output and ran on: ``exit`` (status 0) or
        ``crash``, with its last words."""
        tail = bytes(self.log[-600:]).decode("utf-8", "replace").strip()
        said = f"; the end of its stderr: {tail[-400:]!r}" if tail else ""
        if self.ended == RAN_ON:
            return _NoAnswerError("crash", f"the process {RAN_ON} (the referee ends it){said}")
        return _NoAnswerError("exit" if self.poll() == 0 else "crash", f"the process ended ({self.ended}){said}")

    def not_json_hello(self, line: bytes) -> str:
        """What a first line that is not JSON says: the line, and when the process ends within a moment (a runtime
        that could not start, such as a JVM short of memory, writes its report on standard output and exits) how it
        ended, what followed the line and the end of its standard error."""
        text = f"its answer to the hello is not JSON: {line[:120]!r}"
        deadline = time.monotonic() + 0.5
        while self.poll() is None and time.monotonic() < deadline:
            pump(self.selector, 0.01)
        if self.poll() is None or self.popen is None:
            return text
        self._drain(self.popen.stdout, "out")
        self._drain(self.popen.stderr, "err")
        said = b"\n".join([line, *self.lines, bytes(self.inbuf)]).decode("utf-8", "replace")
        tail = bytes(self.log[-400:]).decode("utf-8", "replace").strip()
        return (
            f"instead of answering the hello it wrote {clip(said, 300)} on standard output and ended "
            f"({self.exit_text()})" + (f"; the end of its stderr: {tail!r}" if tail else "")
        )

    def read_line(self, deadline: float, owed: bool = True) -> bytes:
        """The next line it writes (a late answer to an earlier request dropped first), by ``deadline``.

        Args:
            deadline: ``time.monotonic()`` by which the line must be in.
            owed: the line answers a request (a timeout then leaves an answer owed, dropped when it comes); False
                for a line that may come or not (whether a bot answers what it should not).

        Raises:
            _NoAnswerError: ``timeout``, ``flood``, ``crash`` or ``exit``.
        """
        while True:
            while self.late and self.lines:
                self.lines.popleft()
                self.late -= 1
            if self.lines:
                return self.lines.popleft()
            if self.flooded is not None:
                raise _NoAnswerError("flood", self.flooded)
            if self.ended is not None:
                raise self.ended_fault()
            left = deadline - time.monotonic()
            if left <= 0:
                self.late += owed
                raise _NoAnswerError("timeout", "")
            pump(self.selector, left)

    def request(self, data: bytes, timeout: float) -> bytes:
        """Send one message (its line) and read the answer within ``timeout`` seconds; the time taken is added to
        :attr:`used_s`, and :attr:`took` holds it. A bot still busy with a request that timed out is on the clock
        for this one meanwhile (its late answer, dropped, must come first): a decision of ``k`` times the limit costs
        ``k`` timeouts, as if each further limit's worth of its time were another decision missed.

        Raises:
            _NoAnswerError: as :meth:`read_line` (a timeout's message says how long it waited).
        """
        start = time.monotonic()
        self.send(data)
        try:
            return self.read_line(start + timeout)
        except _NoAnswerError as err:
            if err.kind == "timeout":
                raise _NoAnswerError("timeout", f"no answer within {timeout:g} s") from None
            raise
        finally:
            self.took = time.monotonic() - start
            self.used_s += self.took


def pump(selector: selectors.BaseSelector, timeout: float) -> None:
    """Wait up to ``timeout`` seconds for any bot's pipe, and handle every ready one (standard error is drained
    whoever is asked, so that no bot blocks on a full pipe)."""
    for key, _ in selector.select(max(0.0, timeout)):
        proc, which = key.data
        proc.on_ready(which)


# --------------------------------------------------------------------------------------------- a half
@dataclass(frozen=True)
class Seating:
    """One half of a match: the bot of each seat, and each seat's generator seed."""

    bots: tuple[BotCommand, ...]
    seeds: tuple[int, ...]


@dataclass
class HalfResult:
    """One half over its deals: each deal's returns per seat, and each deal's game record (when kept)."""

    returns: list[tuple[float, ...]]
    records: list[dict[str, Any]]
    wall_s: float


def stand_in(view: PlayerView) -> int:
    """The action the referee plays for a bot that faulted or forfeited: the lowest legal action id."""
    return (view.legal & -view.legal).bit_length() - 1


@dataclass
class Referee:
    """Plays halves of matches between bot processes (see the module docstring).

    Attributes:
        spec: the game.
        options: the game's options (one deal per episode, as the arena plays).
        limits: what every bot may use.
        seed: the deals' seed: deal ``i`` is drawn as the arena draws it (:meth:`Arena.deal`).
        workroot: where the bots' working directories are made (None: the system's temporary folder).
        prefix: a command that wraps every bot command (a sandbox), ``{workdir}`` in it replaced.
        logs: a folder for each process's standard error (None: not kept).
        record: keep each table's game record.
        profile: time the parts of each decision (build, encode, pipe, decode, check) into :attr:`timing`.
    """

    spec: GameSpec[Any, Any]
    options: dict[str, Any]
    limits: Limits = field(default_factory=Limits)
    seed: int = 0
    workroot: Path | None = None
    prefix: tuple[str, ...] = ()
    logs: Path | None = None
    record: bool = True
    profile: bool = False
    timing: dict[str, list[float]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._workdirs: dict[str, str] = {}  # the working directory of each process of the half -> its bot
        self.game: TrickGame[Any] = self.spec.make_rules(**self.options)
        self.codec = ViewCodec(self.game)
        self.encoder = self.spec.make_encoder(self.game)
        self.layout = layout_of(self.encoder)

    def deal(self, index: int) -> tuple[int, list[int]]:
        """Dealer and deck of deal ``index`` (the arena's: ``default_rng([seed, index])``)."""
        rng = np.random.default_rng([self.seed, index])
        dealer = int(rng.integers(self.game.num_players))
        return dealer, rng.permutation(52).tolist()

    def play_half(
        self, seating: Seating, deals: Sequence[int], ledgers: Mapping[str, BotLedger], half: int = 0
    ) -> HalfResult:
        """Play ``deals`` with a fresh process per seat (a forfeited bot's seats: the stand-in, no process).

        Args:
            seating: the bot and generator seed of each seat.
            deals: the deals' indices.
            ledgers: each bot's account for the match, by name (faults and forfeits carry over between halves).
            half: this half's number (in the faults).
        """
        started = time.perf_counter()
        selector = selectors.DefaultSelector()
        keep = children()
        procs: list[BotProcess | None] = [None] * len(seating.bots)
        root = Path(tempfile.mkdtemp(prefix="whist-referee-", dir=self.workroot))
        _ROOTS.add(root)
        try:
            for seat, bot in enumerate(seating.bots):
                if ledgers[bot.name].forfeit is None:
                    procs[seat] = self._launch(bot, seat, seating.seeds[seat], len(deals), root, selector,
                                               ledgers[bot.name], half)  # fmt: skip
            for seat, proc in enumerate(procs):
                if proc is not None:
                    procs[seat] = self._greet(proc, ledgers[proc.bot.name], half)
            returns, records = [], []
            for index in deals:
                result, record = self._play_deal(index, procs, ledgers, half)
                returns.append(result)
                if record is not None:
                    records.append(record)
            self._finish(procs, ledgers, returns)
        finally:
            for proc in procs:
                if proc is not None:
                    proc.stop(None)
            for pid, cwd in end_leftovers(keep).items():
                name = self._owner(cwd)
                if name is not None:
                    text = f"its process {pid} was still running after the bot's end (killed)"
                    ledgers[name].fault("leftover", half, -1, text, self.limits)
            self._workdirs.clear()
            selector.close()
            shutil.rmtree(root, ignore_errors=True)
            _ROOTS.discard(root)
        return HalfResult(returns, records, time.perf_counter() - started)

    def _owner(self, cwd: str) -> str | None:
        """The bot whose working directory ``cwd`` is (or lies in; a removed one reads ``<path> (deleted)``)."""
        for folder, name in self._workdirs.items():
            if cwd == folder or cwd.startswith((folder + os.sep, folder + " ")):
                return name
        return None

    # ------------------------------------------------------------------ the parts of a half
    def _launch(
        self, bot: BotCommand, seat: int, seed: int, deals: int, root: Path, selector: selectors.BaseSelector,
        ledger: BotLedger, half: int,
    ) -> BotProcess | None:  # fmt: skip
        """Start one bot and send it the hello (the answers are read once every seat's bot has started, so that
        they start side by side); None (and a fault) when it cannot start."""
        proc = BotProcess(bot, seat, self.limits, selector)
        ledger.processes += 1
        greeting = hello(self.game, self.options, seat, seed, self.limits.for_bot(), self.layout, deals)
        try:
            proc.start(root, self.prefix)
        except _NoAnswerError as err:
            ledger.fault("start", half, -1, str(err), self.limits)
            self._close(proc, ledger, None)
            return None
        self._workdirs[str(proc.workdir)] = bot.name
        proc.launched = time.monotonic()
        proc.send(encode_line(greeting))
        return proc

    def _greet(self, proc: BotProcess, ledger: BotLedger, half: int) -> BotProcess | None:
        """Read a launched bot's answer to the hello (within ``start_s`` of its start); None (and a fault) when it
        gives none, or another protocol version."""
        try:
            line = proc.read_line(proc.launched + self.limits.start_s)
            try:
                answer = check_hello_answer(decode_line(line))
            except ValueError:
                raise _NoAnswerError("start", proc.not_json_hello(line)) from None
            except AnswerError as err:
                raise _NoAnswerError("version" if err.kind == "version" else "start", str(err)) from None
        except _NoAnswerError as err:
            if err.kind == "timeout":
                err = _NoAnswerError("start", f"no answer to the hello within {self.limits.start_s:g} s (start_s)")
            kind = "start" if err.kind in ("exit", "crash") else err.kind
            ledger.fault(kind, half, -1, str(err), self.limits)
            self._close(proc, ledger, None)
            return None
        ledger.start_s.append(time.monotonic() - proc.launched)
        proc.observation = answer.get("observation") is True
        return proc

    def _play_deal(
        self, index: int, procs: list[BotProcess | None], ledgers: Mapping[str, BotLedger], half: int
    ) -> tuple[tuple[float, ...], dict[str, Any] | None]:
        game = self.game
        dealer, deck = self.deal(index)
        game_rng = np.random.default_rng([self.seed, index, 1])
        recorder = record_of(game, game_rng, self.options, deck, dealer) if self.record else None
        state = recorder.state if recorder is not None else game.new_episode(game_rng, deck=deck, dealer=dealer)
        decision = 0
        while not state.done:
            seat = state.to_act
            view = game.view(state, seat)
            proc = procs[seat]
            action = stand_in(view)
            if proc is not None:
                ledger = ledgers[proc.bot.name]
                if ledger.forfeit is None:
                    action = self._decide(proc, view, index, decision, state, ledger, half)
                if ledger.forfeit is not None:
                    self._close(proc, ledger, {"type": "goodbye", "reason": f"forfeit: {ledger.forfeit}"})
                    procs[seat] = None
            decision += 1
            if recorder is not None:
                recorder.step(action)
            else:
                game.step(state, action, game_rng)
        returns = tuple(float(r) for r in state.returns)
        for seat, proc in enumerate(procs):
            if proc is not None and proc.alive:
                view_json = self.codec.to_json(game.view(state, seat))
                proc.send(encode_line({"type": "deal_end", "deal": index, "returns": returns, "view": view_json}))
        return returns, (recorder.record().to_dict() if recorder is not None else None)

    def _decide(
        self, proc: BotProcess, view: PlayerView, deal: int, decision: int, state: Any, ledger: BotLedger, half: int
    ) -> int:
        """Ask ``proc`` for its action: the stand-in's, with a fault, when the answer is none or not legal."""
        t0 = time.perf_counter()
        message: dict[str, Any] = {
            "type": "act",
            "deal": deal,
            "decision": decision,
            "view": self.codec.to_json(view),
            "legal": self.codec.legal(view),
        }
        if proc.observation:
            obs, mask = self.encoder.encode_with_mask(view)
            message["observation"], message["mask"] = obs.tolist(), mask.tolist()
        t1 = time.perf_counter()
        data = encode_line(message)
        t2 = time.perf_counter()
        left = self.limits.match_s - proc.used_s
        ledger.decisions += 1
        try:
            line = proc.request(data, min(self.limits.decision_s, left))
            t3 = time.perf_counter()
            action = self.codec.read_answer(line, view.legal)
        except _NoAnswerError as err:
            kind, text = err.kind, str(err)
            if kind == "timeout" and left <= self.limits.decision_s:
                kind, text = "budget", f"its {self.limits.match_s:g} s for the match are used up (match_s)"
            ledger.fault(kind, half, deal, text, self.limits)
            return stand_in(view)
        except AnswerError as err:
            ledger.fault(err.kind, half, deal, self._why(state, line, err), self.limits)
            return stand_in(view)
        finally:
            ledger.answer_s += proc.took
        if self.profile:
            t4 = time.perf_counter()
            for part, value in (("build", t1 - t0), ("encode", t2 - t1), ("pipe", t3 - t2), ("decode", t4 - t3)):
                self.timing.setdefault(part, []).append(value)
            self.timing.setdefault("total", []).append(t4 - t0)
        return action

    def _why(self, state: Any, line: bytes, err: AnswerError) -> str:
        """An illegal answer in the rules' own words where they give them (``must follow spades``)."""
        if err.kind == "illegal" and err.action is not None and 0 <= err.action < self.game.num_actions:
            try:
                self.game.step(state.copy(), err.action, np.random.default_rng(0))
            except IllegalActionError as rules:
                return f"{rules} (the answer: {line[:80].decode('utf-8', 'replace')})"
        return str(err)

    def _finish(
        self, procs: list[BotProcess | None], ledgers: Mapping[str, BotLedger], returns: list[tuple[float, ...]]
    ) -> None:
        totals = [sum(r[s] for r in returns) for s in range(self.game.num_players)]
        for seat, proc in enumerate(procs):
            if proc is None:
                continue
            ledger = ledgers[proc.bot.name]
            end = {"type": "match_end", "deals": len(returns), "returns": totals, "faults": len(ledger.faults),
                   "forfeit": ledger.forfeit is not None}  # fmt: skip
            proc.send(encode_line(end))
            self._close(proc, ledger, {"type": "goodbye", "reason": "the match is over"})
            procs[seat] = None

    def _close(self, proc: BotProcess, ledger: BotLedger, goodbye: Mapping[str, Any] | None) -> None:
        proc.stop(goodbye)
        ledger.cpu_s += proc.cpu_s
        ledger.log_bytes += proc.log_total
        if self.logs is not None and proc.log_total:
            self.logs.mkdir(parents=True, exist_ok=True)
            dropped = proc.log_total - len(proc.log)
            with (self.logs / f"{_safe(ledger.name)}.stderr.log").open("ab") as out:
                out.write(f"--- seat {proc.seat}, process {ledger.processes}: {proc.exit_text()} ---\n".encode())
                out.write(bytes(proc.log))
                if dropped:
                    out.write(f"\n--- {dropped} more bytes not kept (log_bytes) ---\n".encode())


def _safe(name: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name)[:80]


def seat_seed(seed: int, *parts: object) -> int:
    """A bot's generator seed from the tournament's seed and where it sits (32 bits: every language reads it
    exactly; a hash, so a bot cannot work the tournament's seed, and with it the deals, back out of it)."""
    digest = hashlib.sha256("/".join(map(str, (seed, *parts))).encode()).digest()
    return int.from_bytes(digest[:4], "little")
