"""``whist-demo``: play and summarise seeded games between random agents through the AEC API.

whist-demo --game german_whist_v0 --episodes 200 --seed 0 --option num_deals=3
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import os
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NoReturn

import numpy as np

from whist_env.envs.registration import make
from whist_env.registry import default_game_id, game_ids, get_spec, unknown_game


class CliParser(argparse.ArgumentParser):
    """The command-line tools' argument parser: a bad argument is one line on stderr and exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {one_line(message)} (see {self.prog} --help)\n")


def at_least(minimum: int) -> Callable[[str], int]:
    """An argparse type: a whole number of at least ``minimum`` (``--seed``: 0, ``--deals``: 1)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be {minimum} or more, got {value}")
        return value

    return parse


def game_id(text: str) -> str:
    """An argparse type: a registered game id; another gets the registry's error, which suggests the closest id
    (argparse's ``choices`` only list them)."""
    if text not in game_ids():
        raise argparse.ArgumentTypeError(str(unknown_game(text)))
    return text


def one_line(text: object) -> str:
    """``text`` on one line (a message that spans lines is joined with ``; ``)."""
    return "; ".join(part.strip() for part in str(text).splitlines() if part.strip())


def write_or_spare(prog: str, flag: str, path: Path, text: str, suffix: str) -> int:
    """Write a result file; if ``path`` cannot be written, write it to a temporary file, say where, return 2
    (nothing a run produced is lost to a mistyped folder)."""
    try:
        path.write_text(text, encoding="utf-8")
        return 0
    except OSError as err:
        fd, spare = tempfile.mkstemp(prefix=f"{prog}-", suffix=suffix)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        reason = err.strerror or type(err).__name__
        print(f"{prog}: error: cannot write {flag} {path} ({reason}); it was written to {spare}", file=sys.stderr)
        return 2


def report_error(prog: str, err: BaseException) -> int:
    """Print ``err`` as the tool's one-line error and return the exit status 2.

    An :class:`~whist_env.errors.OptionError` or ``OSError`` already says what is wrong; anything else is
    unexpected, so its type is named too (``--debug`` shows the traceback).
    """
    from whist_env.errors import OptionError

    text = str(err) if isinstance(err, (OptionError, OSError)) else f"{type(err).__name__}: {err}"
    print(f"{prog}: error: {one_line(text)}", file=sys.stderr)
    return 2


def report_interrupt(prog: str) -> int:
    """Say in one line that Ctrl-C stopped ``prog`` (nothing was written) and return the exit status 130."""
    print(f"\n{prog}: interrupted; nothing was written", file=sys.stderr)
    return 130


@contextlib.contextmanager
def one_line_warnings(prog: str) -> Iterator[None]:
    """Show warnings as ``prog: warning: ...`` lines, without the source line Python adds."""

    def show(message: Warning | str, category: type[Warning], *args: Any, **kwargs: Any) -> None:
        print(f"{prog}: warning: {one_line(message)}", file=sys.stderr)

    with warnings.catch_warnings():
        warnings.showwarning = show  # type: ignore[assignment]
        yield


def parse_option(text: str) -> tuple[str, Any]:
    """``"num_players=5"`` → ``("num_players", 5)``: a game option of the command line, its value a Python literal
    (``True``, ``7``, ``'deal'``) or else the bare string (which the game's options then check)."""
    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"write options as key=value (e.g. num_players=5), got {text!r}")
    try:
        value = ast.literal_eval(raw)
    except (ValueError, SyntaxError, RecursionError, MemoryError):  # the last two: nested or chained too deeply
        value = raw
    return key.strip(), value


def demo(game_id: str, episodes: int, seed: int, options: dict[str, Any], show: bool) -> dict[str, Any]:
    """Play ``episodes`` seeded episodes with uniformly random legal actions; return a summary."""
    get_spec(game_id).make_rules(**options)  # the game's options alone (render_mode=... was make()'s own, a TypeError)
    env = make(game_id, render_mode="ansi", **options)
    chooser = np.random.default_rng(seed + 1)
    returns: dict[str, list[float]] = {a: [] for a in env.possible_agents}
    decisions = 0
    start = time.perf_counter()
    for episode in range(episodes):
        env.reset(seed=seed + episode)
        totals = dict.fromkeys(env.possible_agents, 0.0)
        for agent in env.agent_iter():
            obs, reward, term, trunc, _info = env.last()
            totals[agent] += reward
            if term or trunc:
                env.step(None)
                continue
            if show and episode == 0 and decisions == 0:
                print(env.render())
                print("observation of", agent, "in words:\n" + env.raw.describe(obs))
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[int(chooser.integers(len(legal)))]))
            decisions += 1
        for agent, total in totals.items():
            returns[agent].append(total)
    elapsed = time.perf_counter() - start
    return {
        "game": game_id,
        "options": options,
        "episodes": episodes,
        "decisions": decisions,
        "decisions_per_second": decisions / elapsed if elapsed > 0 else float("nan"),
        "mean_return": {a: float(np.mean(r)) for a, r in returns.items()},
    }


def demo_main(argv: list[str] | None = None) -> int:
    """Entry point of ``whist-demo``; returns the exit status (2 for an error, told in one line)."""
    parser = CliParser(
        prog="whist-demo",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--game", default=default_game_id(), type=game_id, help=f"one of {', '.join(game_ids())}")
    parser.add_argument("--episodes", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--option", action="append", type=parse_option, default=[], help="game option key=value")
    parser.add_argument("--quiet", action="store_true", help="do not print the first position")
    parser.add_argument("--debug", action="store_true", help="show the traceback of an error")
    args = parser.parse_args(argv)
    if args.episodes < 1:
        parser.error("--episodes must be at least 1")
    if args.seed < 0:
        parser.error(f"--seed must be 0 or more, got {args.seed}")
    try:
        summary = demo(args.game, args.episodes, args.seed, dict(args.option), show=not args.quiet)
    except KeyboardInterrupt:
        if args.debug:
            raise
        return report_interrupt("whist-demo")
    except Exception as err:
        if args.debug:
            raise
        return report_error("whist-demo", err)
    print(
        f"\n{summary['game']} {summary['options'] or ''}: {summary['episodes']} episodes, "
        f"{summary['decisions']} decisions ({summary['decisions_per_second']:,.0f}/s)"
    )
    for agent, mean in summary["mean_return"].items():
        print(f"  {agent}: mean return {mean:+.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(demo_main())
