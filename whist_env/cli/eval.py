"""``whist-eval``: compare agents over seeded duplicate deals and print the report.

    whist-eval humbug_v0 --agents heuristic random --deals 2000 --seed 0
    whist-eval all --agents heuristic random --deals 2000 --seed 0 --workers 2 --markdown results.md
    whist-eval oh_hell_v0 --option num_players=5 --option trump_mode=drawn_card --json report.json
    whist-eval german_whist_v0 --agents pimc heuristic --deals 200 --records worst/ --worst 5
    whist-eval german_whist_v0 --agents pretrained random --deals 2000 --batched   # the batched engine: seconds
    whist-eval german_whist_v0 --ladder --agents random heuristic pretrained pimc --deals 1000 --workers 2
    whist-eval humbug_v0 --agents heuristic random --max-deals 5000 --stop-when-decided   # stops once decided

``--ladder`` plays a round robin of the agents on the same duplicate deals and rates them on one scale in the game's
unit (:mod:`whist_env.evaluation.ladder`): a ratings table with 95% intervals, the pairwise table and a PNG plot
(``ladder_<game>.png`` in the working directory, or ``--plot``); each match is cached, so adding an agent plays
only its matches.

``--stop-when-decided`` makes ``--deals`` (also spelt ``--max-deals``) a cap: the deals are played in chunks of
``--look-every`` and the run (each ladder match on its own) stops at the first chunk where every pair's anytime-valid
interval excludes 0 (:mod:`whist_env.evaluation.sequential`: the error rate ``--alpha`` holds per pair however often
it looks; ``--bonferroni`` divides it by the number of pairs).

``--records DIR`` writes the game records (JSON, :class:`~whist_env.record.GameRecord`) of every table of the
``--worst`` deals for the first agent (lowest margin over the best other agent), so a surprising result can be
replayed: ``GameRecord.from_json(text).replay()`` rebuilds any position.

The method (duplicate deals, seat rotation, the unit compared per game, the intervals) is described
in :mod:`whist_env.evaluation.arena`. The exit status is 2 when any agent played an illegal action.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from whist_env.cli.demo import (
    CliParser,
    at_least,
    one_line_warnings,
    parse_option,
    report_error,
    report_interrupt,
    write_or_spare,
)
from whist_env.errors import OptionError


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``whist-eval``."""
    from whist_env.evaluation.arena import LINEUPS

    p = CliParser(
        prog="whist-eval",
        description="Play agents against each other over seeded duplicate deals (seats rotated) and report "
        "mean rewards with 95% confidence intervals, win/draw/loss rates and illegal actions.",
    )
    p.add_argument("games", nargs="+", help="environment ids, or 'all' for every registered game")
    p.add_argument(
        "--agents",
        nargs="+",
        default=["heuristic", "random"],
        help="two or more agent specs: random, heuristic, model:<path.zip>, pimc:samples=10,max_tricks=7, "
        "'pimc(samples=20, fallback=model(path=runs/x/model.zip))' (see docs/agents.md; default: heuristic random)",
    )
    p.add_argument(
        "--deals",
        "--max-deals",
        dest="deals",
        type=at_least(1),
        default=1000,
        help="deals per game, each replayed per lineup; the cap with --stop-when-decided (default 1000)",
    )
    p.add_argument(
        "--stop-when-decided",
        action="store_true",
        help="stop once every pair's anytime-valid interval excludes 0, looking every --look-every deals "
        "(whist_env.evaluation.sequential; with --ladder, each match stops on its own)",
    )
    p.add_argument(
        "--alpha",
        type=float,
        default=0.05,
        help="--stop-when-decided: error rate per pair, the chance that an even pair gets a verdict (default 0.05)",
    )
    p.add_argument(
        "--look-every", type=at_least(1), default=100, help="--stop-when-decided: deals between looks (default 100)"
    )
    p.add_argument(
        "--bonferroni",
        action="store_true",
        help="--stop-when-decided: divide --alpha by the number of pairs (alpha then bounds any false verdict)",
    )
    p.add_argument("--seed", type=at_least(0), default=0, help="the run's seed (default 0)")
    p.add_argument("--workers", type=at_least(1), default=1, help="processes to play in (default 1)")
    p.add_argument(
        "--option",
        action="append",
        default=[],
        type=parse_option,
        metavar="KEY=VALUE",
        help="a game option (repeatable), e.g. --option num_players=5",
    )
    p.add_argument("--lineup", choices=LINEUPS, default="alternate", help="how agents are seated (default alternate)")
    p.add_argument("--full-episodes", action="store_true", help="play whole episodes instead of single deals")
    p.add_argument(
        "--batched",
        action="store_true",
        help="play on the batched engine (whist_env.evaluation.batched; needs the vector extra): the same "
        "deals and report, for agents with a batched form (random, heuristic, pretrained), in one process "
        "(not with --workers)",
    )
    p.add_argument(
        "--ladder",
        action="store_true",
        help="rate the agents on one scale: a round robin on the same duplicate deals, least-squares ratings with "
        "bootstrap intervals, the pairwise table and a plot (each match on the batched engine where both agents "
        "have a batched form, else in the AEC arena with --workers)",
    )
    p.add_argument("--anchor", help="--ladder: the agent rated 0 (default: random if it plays, else the first)")
    p.add_argument(
        "--plot",
        type=Path,
        metavar="PATH",
        help="--ladder: where to write the plot (default ladder_<game>.png in the working directory)",
    )
    p.add_argument("--no-plot", action="store_true", help="--ladder: no plot")
    p.add_argument(
        "--cache",
        type=Path,
        metavar="DIR",
        help="--ladder: the folder of cached matches (default $XDG_CACHE_HOME/whist_env/ladder or ~/.cache/...)",
    )
    p.add_argument("--no-cache", action="store_true", help="--ladder: play every match, read and write no cache")
    p.add_argument("--json", type=Path, help="write the report(s) as JSON to this file")
    p.add_argument("--markdown", type=Path, help="write the report(s) as markdown to this file")
    p.add_argument(
        "--records",
        type=Path,
        metavar="DIR",
        help="write the game records (JSON) of the worst deals for the first agent to this folder, to replay them",
    )
    p.add_argument("--worst", type=at_least(1), default=5, help="how many deals --records writes per game (default 5)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--debug", action="store_true", help="show the traceback of an error")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``whist-eval``; returns the exit status.

    Every error is one line on stderr and exit status 2 (``--debug`` shows the traceback): a bad argument,
    a missing or damaged model, a model of another game or options, a file that cannot be written. Ctrl-C
    stops the run and its workers with one line and exit status 130.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    with one_line_warnings("whist-eval"):
        try:
            return _run(args)
        except KeyboardInterrupt:
            if "--debug" in args:
                raise
            return report_interrupt("whist-eval")
        except Exception as err:
            if "--debug" in args:
                raise
            return report_error("whist-eval", err)


def _run(argv: Sequence[str]) -> int:
    """Parse the arguments, play, print and write the reports; returns the exit status."""
    import json

    from whist_env.evaluation.arena import ArenaConfig, play_deals, stop_rule, summarise
    from whist_env.evaluation.report import summary_table
    from whist_env.registry import game_ids, get_spec, unknown_game

    args = build_parser().parse_args(argv)
    known = game_ids()
    games = known if args.games == ["all"] else args.games
    options = dict(args.option)
    reports: list[Any] = []
    status = 0
    try:
        ladder_only = [flag for flag, on in (("--anchor", args.anchor is not None), ("--plot", args.plot is not None),
                       ("--no-plot", args.no_plot), ("--cache", args.cache is not None), ("--no-cache", args.no_cache))
                       if on]  # fmt: skip
        if ladder_only and not args.ladder:
            raise OptionError(f"{' '.join(ladder_only)} apply to --ladder only: add --ladder (or drop them)")
        stop_only = [flag for flag, on in (("--alpha", args.alpha != 0.05), ("--look-every", args.look_every != 100),
                     ("--bonferroni", args.bonferroni)) if on]  # fmt: skip
        if stop_only and not args.stop_when_decided:
            raise OptionError(f"{' '.join(stop_only)} apply to --stop-when-decided only: add it (or drop them)")
        stop = dict(stop_when_decided=True, alpha=args.alpha, look_every=args.look_every, bonferroni=args.bonferroni)
        stop_args: dict[str, Any] = stop if args.stop_when_decided else {}
        if args.ladder and (args.batched or args.records):
            raise OptionError(
                "--ladder chooses the engine per match (batched where both agents have a batched form) and writes no "
                "records: drop --batched and --records"
            )
        if args.batched and args.records:
            raise OptionError("--records replays deals in the AEC arena; run without --batched to write them")
        if args.batched and args.workers > 1:
            raise OptionError(
                f"--batched plays every deal in one process on the batched engine; --workers {args.workers} applies "
                "to the AEC arena only: drop --workers (or --batched)"
            )
        if "all" in args.games and len(args.games) > 1:
            raise OptionError("'all' plays every game: give it alone, or name the games without it")
        for game_id in games:  # every id before any game is played
            if game_id not in known:
                raise unknown_game(game_id, [*known, "all"])
        if args.ladder and args.plot is not None and not args.no_plot:
            _check_plot(args.plot)
        if args.records and args.records.exists() and not args.records.is_dir():
            raise OptionError(f"--records {args.records} is a file: give a folder for the game records")
        for game_id in games:
            spec = get_spec(game_id)  # the one look-up of the id: the arena, the agents and the workers take the spec
            if args.ladder:
                reports.append(_ladder(spec, args, options, stop_args))
                continue
            if args.batched:
                from whist_env.evaluation.batched import evaluate_batched

                report = evaluate_batched(
                    spec, args.agents, args.deals, args.seed, options, single_deal=not args.full_episodes,
                    lineup=args.lineup, progress=not args.quiet, **stop_args,
                )  # fmt: skip
                reports.append(report)
                print(report.to_markdown(), end="\n\n", flush=True)
                continue
            # evaluate(), with the per-deal results kept for --records
            config = ArenaConfig(
                game_id, tuple(args.agents), args.deals, args.seed, options, not args.full_episodes, args.lineup,
                spec=spec,
            )  # fmt: skip
            rule = None
            if args.stop_when_decided:
                rule = stop_rule(config, args.alpha, args.look_every, args.bonferroni)
            results, wall = play_deals(config, workers=args.workers, progress=not args.quiet, stop=rule)
            report = summarise(config, results, wall, args.workers, rule)
            reports.append(report)
            print(report.to_markdown(), end="\n\n", flush=True)
            if args.records:
                status |= _write_records(args.records, config, results, args.worst)
    except OptionError as err:
        if args.debug:
            raise
        status = report_error("whist-eval", err)
        if not reports:
            return status
        print(f"whist-eval: the {len(reports)} game(s) played before it are reported below", file=sys.stderr)
    if len(reports) > 1 and len(args.agents) == 2 and not args.ladder:
        print(summary_table(reports))
    if args.json:
        data = [r.to_dict() for r in reports]
        text = json.dumps(data[0] if len(data) == 1 else data, indent=2, ensure_ascii=False) + "\n"
        status |= write_or_spare("whist-eval", "--json", args.json, text, ".json")
    if args.markdown:
        parts = [r.to_markdown() for r in reports]
        if len(reports) > 1 and len(args.agents) == 2 and not args.ladder:
            parts.insert(0, summary_table(reports))
        status |= write_or_spare("whist-eval", "--markdown", args.markdown, "\n\n".join(parts) + "\n", ".md")
    illegal = sum(r.illegal_actions for r in reports)
    if illegal:
        print(f"whist-eval: {illegal} illegal action(s) were played; the comparison is not valid", file=sys.stderr)
        return 2
    return status


def _ladder(spec: Any, args: argparse.Namespace, options: dict[str, Any], stop_args: dict[str, Any]) -> Any:
    """``--ladder`` for one game: play (or read from the cache) every match, print the report, draw the plot."""
    from whist_env.evaluation.ladder import default_cache_dir, ladder

    cache = None if args.no_cache else (args.cache or default_cache_dir())
    report = ladder(
        spec, args.agents, args.deals, args.seed, options, workers=args.workers, single_deal=not args.full_episodes,
        lineup=args.lineup, anchor=args.anchor, cache_dir=cache, progress=not args.quiet, **stop_args,
    )  # fmt: skip
    print(report.to_markdown(), end="\n\n", flush=True)
    if not args.no_plot:
        plot = args.plot or Path(f"ladder_{spec.game_id}.png")
        if args.plot is not None and (len(args.games) > 1 or args.games == ["all"]):
            plot = plot.with_name(f"{plot.stem}_{spec.game_id}{plot.suffix}")  # one plot per game
        print(f"plot: {report.plot(plot)}", flush=True)
    return report


def _check_plot(plot: Path) -> None:
    """Refuse a ``--plot`` file that could not be written, before the ladder is played."""
    from matplotlib.figure import Figure

    kinds = Figure().canvas.get_supported_filetypes()
    if plot.suffix.lower().lstrip(".") not in kinds:
        raise OptionError(f"--plot {plot}: give a file ending in one of {', '.join('.' + k for k in sorted(kinds))}")
    if not plot.parent.is_dir():
        raise OptionError(f"--plot {plot}: the folder {plot.parent} does not exist")


def _write_records(folder: Path, config: Any, results: Sequence[Any], count: int) -> int:
    """Replay the ``count`` worst deals for the first agent and write each table's game record to ``folder``
    (``<game>-deal<index>-table<k>.json``); returns 2 when the folder cannot be written (said on stderr)."""
    from whist_env.evaluation.arena import Arena, worst_deals

    arena = Arena(config)
    label = config.labels()[0]
    lines = []
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for index, margin in worst_deals(results, count, len(config.agents)):
            records = arena.records(index)  # the deal played again, recorded: the same seeds give the same play
            for k, record in enumerate(records):
                (folder / f"{config.game_id}-deal{index}-table{k}.json").write_text(
                    record.to_json(indent=1) + "\n", encoding="utf-8"
                )
            lines.append(f"  deal {index}: margin {margin:+.3g} ({len(records)} tables)")
    except OSError as err:
        reason = err.strerror or type(err).__name__
        print(f"whist-eval: error: cannot write --records {folder} ({reason})", file=sys.stderr)
        return 2
    print(f"{config.game_id}: the records of the {len(lines)} worst deals for {label} (its return minus the best "
          f"other agent's) are in {folder}:", *lines, sep="\n", end="\n\n", flush=True)  # fmt: skip
    return 0


def main_entry() -> None:
    """Console-script entry point: ``whist-eval``."""
    raise SystemExit(main())


if __name__ == "__main__":
    main_entry()
