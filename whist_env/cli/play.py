"""``whist-play``: play any whist_env game in the terminal against random, heuristic or trained agents.

    whist-play --game humbug_v0 --opponents heuristic --seed 7
    whist-play --game oh_hell_v0 --option num_players=3 --option episode=deal --opponents heuristic,random
    whist-play --game humbug_whist_v0 --seat 1 --opponents model:runs/humbug_whist_s0/model.zip --show-hands

You see what your seat may know (the game's own view of the table), your hand sorted by suit with the
legal cards marked, the trick, the scores and the bids. Type a card as ``TS``, ``10S``, ``10♠`` or ``ts``, or
its number in the list of choices; a bid as ``3`` or ``bid 3``; the exchange as ``keep`` or ``exchange``
(``k``/``e``). ``help`` explains, ``table`` shows the table again, ``quit`` (or end of input) stops.
Anything else is answered with a message and a new prompt. The same ``--seed`` deals the same cards, and
with the same answers the agents play the same cards. ``--record FILE`` writes the game's
:class:`~whist_env.record.GameRecord` (JSON) when it ends, also when you quit early (what was played so
far): attach it to a bug report; ``GameRecord.from_json(text).replay()`` rebuilds the position.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from whist_env.cards import NUM_CARDS, SPADES, SUIT_MASKS, SUIT_SYMBOLS, card_pretty, cards_of, parse_card
from whist_env.cli.demo import (
    CliParser,
    at_least,
    game_id,
    one_line_warnings,
    parse_option,
    report_error,
    write_or_spare,
)
from whist_env.errors import IllegalActionError, OptionError
from whist_env.record import Recorder, record_of
from whist_env.registry import GameRef, default_game_id, game_ids, get_spec, spec_of
from whist_env.rules.core import State, TrickGame
from whist_env.view import PlayerView

HELP = """how to answer:
  a card       TS, 10S, 10♠, ts, T♠ (rank 2-9, T or 10, J, Q, K, A; suit C D H S or ♣ ♦ ♥ ♠)
  a number     the number of a choice in the list shown (in the bidding: the number of tricks you bid)
  a bid        3 or 'bid 3'
  exchange     keep (k) or exchange (e)
  table        show the table again
  help         this text
  quit         stop the game (so does the end of input, Ctrl-D)"""


class QuitGame(Exception):  # noqa: N818 (control flow, not an error)
    """The player asked to stop, or the input ended."""


def interpret(text: str, game: TrickGame, state: State) -> int | str:
    """The action a line of input asks for in ``state`` (for ``state.to_act``), or a message saying why not.

    Returns:
        The action id when it is legal now; otherwise a message for the player (garbled input, an unknown
        choice, or why the rules forbid it, naming the legal actions).
    """
    legal = ordered_legal(game, state)
    t = " ".join(text.strip().split())
    low = t.lower()
    if not t:
        return f"{_what_to_type(_phase(game, state))}; 'help' explains"
    action: int | None = None
    phase = _phase(game, state)
    names = {game.describe_action(a).lower(): a for a in range(NUM_CARDS, game.num_actions)}
    if low.isdigit():
        n = int(low)
        if phase == "bidding":
            if "bid " + str(n) not in names:
                return f"there is no bid {n} here; you may bid: {_choices_text(game, legal)}"
            action = names["bid " + str(n)]
        elif 1 <= n <= len(legal):
            action = legal[n - 1]
        else:
            return f"there is no choice {n}: pick 1..{len(legal)} from the list, or type a card such as TS"
    elif low in names:
        action = names[low]
    elif low.startswith("bid") and low[3:].strip().isdigit():
        bid = f"bid {int(low[3:])}"
        if bid in names:
            action = names[bid]
        else:
            return f"there is no {_short(low)!r} here; choose one of: {_choices_text(game, legal)}"
    else:
        prefixed = [a for name, a in names.items() if low.isalpha() and name.startswith(low)]
        if len(prefixed) == 1:
            action = prefixed[0]
        else:
            card_text = t[5:] if low.startswith("play ") else t
            try:
                action = parse_card(card_text.replace(" ", ""))
            except ValueError:
                choices = _choices_text(game, legal)
                return f"cannot read {_short(t)!r}: {_what_to_type(phase)} ({choices}); 'help' explains"
    if action in legal:
        return action
    try:
        game.apply(state.copy(), action)
    except IllegalActionError as err:
        return f"not allowed: {err}"
    return f"not allowed now; choose one of: {_choices_text(game, legal)}"  # pragma: no cover - defensive


def ordered_legal(game: TrickGame, state: State) -> list[int]:
    """The legal actions in the order they are listed: cards as the hand is shown (spades first, highest
    first), then the other actions."""
    return sorted(game.legal_actions(state), key=lambda a: (0, -(a // 13), -a) if a < NUM_CARDS else (1, a, 0))


def _short(text: str, most: int = 40) -> str:
    """``text`` cut to ``most`` characters (an answer echoed or quoted back: a pasted page is not said again)."""
    return text if len(text) <= most else text[: most - 3] + "..."


def _what_to_type(phase: str) -> str:
    if phase == "bidding":
        return "type your bid as a number of tricks, e.g. 2 or 'bid 2'"
    if phase == "exchange":
        return "type keep or exchange (k / e), or 1 / 2 from the list"
    return "type a card such as TS, 10S or 10♠, or its number in the list"


def _phase(game: TrickGame, state: State) -> str:
    return game.view(state, state.to_act).phase if state.to_act >= 0 else "over"


def action_text(game: TrickGame, action: int) -> str:
    """A card as ``10♠``, another action as the game names it (``bid 3``, ``KEEP``)."""
    return game.action_text(action)


def _choices_text(game: TrickGame, legal: Sequence[int]) -> str:
    return " ".join(action_text(game, a) for a in legal)


def hand_lines(view: PlayerView) -> list[str]:
    """The observer's hand by suit, spades first, highest first, legal cards marked ``*``."""
    lines = []
    for s in range(SPADES, -1, -1):
        cards = list(reversed(cards_of(view.hand & SUIT_MASKS[s])))
        text = "  ".join(card_pretty(c)[:-1] + ("*" if (view.legal >> c) & 1 else "") for c in cards)
        lines.append(f"  {SUIT_SYMBOLS[s]}  {text or '-'}")
    return lines


class Session:
    """One game at the terminal: the human at ``seat``, agents in the other seats.

    Args:
        game_id: the environment id, or the game's spec.
        options: the game's options.
        seat: the human's seat.
        opponents: agent specs (``make_agent``'s grammar) for the other seats, from the human's left; one name
            plays every other seat.
        seed: deals (the game's generator) and the agents' choices.
        show_hands: at the end, show every hand as dealt (and what else lay on the table face down).
        record: where to write the game record (JSON) when the game ends or stops; None: nowhere.
        stdin: where answers are read.
        stdout: where the game is written.
    """

    def __init__(
        self,
        game_id: GameRef,
        options: dict[str, Any],
        seat: int,
        opponents: Sequence[str],
        seed: int,
        show_hands: bool = False,
        stdin: TextIO | None = None,
        stdout: TextIO | None = None,
        record: Path | None = None,
    ) -> None:
        from whist_env.agents.factory import make_agent

        self.spec = spec = spec_of(game_id)
        self.game_id = game_id = spec.game_id
        self.options = options
        self.game: TrickGame = spec.make_rules(**options)
        n = self.game.num_players
        if not 0 <= seat < n:
            raise OptionError(f"--seat must be a seat 0..{n - 1} in {game_id}, got {seat}")
        self.seat = seat
        names = list(opponents)
        if len(names) == 1:
            names = names * (n - 1)
        if len(names) != n - 1:
            raise OptionError(
                f"{game_id} has {n - 1} other seats: give one opponent for all of them or {n - 1} "
                f"(from your left), got {len(names)}: {','.join(names)}"
            )
        self.opponent_names = {(seat + 1 + i) % n: name for i, name in enumerate(names)}
        self.agents = {s: make_agent(name, spec, **options) for s, name in self.opponent_names.items()}
        for s, agent in self.agents.items():
            load = getattr(agent, "load", None)
            if callable(load):
                path = Path(str(getattr(agent, "path", "")))
                if not path.exists():  # a model's .zip, or an RLlib checkpoint's directory
                    raise OptionError(f"opponent {self.opponent_names[s]!r}: there is no saved model at {path}")
                load()  # fail now, not in the middle of the game
        self.seed = seed
        self.show_hands = show_hands
        self.stdin = stdin if stdin is not None else sys.stdin
        self.stdout = stdout if stdout is not None else sys.stdout
        self.echo = not _isatty(self.stdin)
        self.rng = np.random.default_rng(seed)
        self.agent_rngs = {s: np.random.default_rng([seed, 1, s]) for s in self.agents}
        self.deals: list[State] = []
        self.record_path = record
        self.recorder: Recorder | None = None

    # ------------------------------------------------------------------ output
    def say(self, text: str = "") -> None:
        self.stdout.write(text + "\n")
        self.stdout.flush()

    def name(self, seat: int) -> str:
        return self.game.seat_name(seat) + (" (you)" if seat == self.seat else "")

    def read(self, prompt: str) -> str:
        self.stdout.write(prompt)
        self.stdout.flush()
        line = self.stdin.readline()
        if not line:
            self.say("")
            raise QuitGame("end of input")
        if self.echo:
            self.say(_short(line.rstrip("\n"), 200))
        return line

    # ------------------------------------------------------------------ the game
    def run(self) -> int:
        """Play the episode; returns the exit status (0, also when the player quits; 2 when the record
        cannot be written). The record is written however the game stops (an error or Ctrl-C too)."""
        try:
            status = self._run()
        finally:
            written = self.write_record()
        return status if written else 2

    def write_record(self) -> bool:
        """Write the game record to ``record`` (when given); False when it cannot be written (said on stderr)."""
        if self.record_path is None or self.recorder is None:
            return True
        record = self.recorder.record()
        if write_or_spare("whist-play", "--record", self.record_path, record.to_json(indent=1) + "\n", ".json"):
            return False  # written to a spare file, and said where
        self.say(f"game record ({len(record.actions)} actions) written to {self.record_path}")
        return True

    def _run(self) -> int:
        game = self.game
        opts = ", ".join(f"{k}={v!r}" for k, v in self.options.items())
        others = ", ".join(f"{game.seat_name(s)} {name}" for s, name in sorted(self.opponent_names.items()))
        self.say(f"whist-play: {self.game_id}{f' ({opts})' if opts else ''}")
        self.say(f"you are {game.seat_name(self.seat)}; {others}")
        self.say(f"seed {self.seed} (--seed {self.seed} deals these cards again); 'help' explains how to answer")
        self.recorder = record_of(game, self.rng)  # the same draws as game.new_episode(self.rng)
        state = self.recorder.state
        self.deals.append(state.copy())
        try:
            while not state.done:
                if state.to_act == self.seat:
                    action = self.ask(state)
                else:
                    seat = state.to_act
                    action = int(self.agents[seat].act(game.view(state, seat), self.agent_rngs[seat]))
                self.step(state, action)
        except QuitGame as stop:
            self.say(f"game stopped ({stop}); bye")
            return 0
        self.finish(state)
        return 0

    def ask(self, state: State) -> int:
        game = self.game
        view = game.view(state, self.seat)
        self.show_turn(state, view)
        prompt = {"bidding": "your bid> ", "exchange": "keep or exchange> "}.get(view.phase, "your card> ")
        while True:
            text = self.read(prompt)
            word = text.strip().lower()
            if word in ("quit", "exit", "q"):
                raise QuitGame("you quit")
            if word in ("help", "?", "h"):
                self.say(HELP)
                continue
            if word in ("table", "t", "show"):
                self.show_turn(state, view)
                continue
            answer = interpret(text, game, state)
            if isinstance(answer, int):
                return answer
            self.say(f"  ! {answer}")

    def show_turn(self, state: State, view: PlayerView) -> None:
        game = self.game
        legal = ordered_legal(game, state)
        self.say("")
        self.say(f"──── your turn: {view.phase} ────")
        self.say(game.render(state, self.seat))
        self.say("your hand (* = legal now):")
        for line in hand_lines(view):
            self.say(line)
        if view.phase == "bidding":
            bids = " ".join(game.describe_action(a).split()[1] for a in legal)
            self.say(f"you may bid: {bids}   (type the number of tricks, e.g. '{bids.split()[0]}' or 'bid ...')")
        else:
            self.say("choices: " + "  ".join(f"{i}) {action_text(game, a)}" for i, a in enumerate(legal, 1)))

    def step(self, state: State, action: int) -> None:
        """Apply ``action`` for the seat to act and tell the human what it may see of it."""
        game = self.game
        seat = state.to_act
        before_view = game.view(state, self.seat)
        key = (state.deal_index, state.trick_number)
        played = [*state.trick, (seat, action)]
        trump = state.trump
        if self.recorder is not None and state is self.recorder.state:
            self.recorder.step(action)  # game.step, recorded
        else:
            game.step(state, action, self.rng)
        if action >= NUM_CARDS:
            if seat != self.seat:
                # Whether another seat's decision is public is the game's business: show what this seat sees.
                shown = game.render_extra(state, self.seat) if state.deal_index == key[0] else ""
                self.say(f"  {self.name(seat)} has decided" + (f": {shown.splitlines()[0]}" if shown else ""))
            return
        if seat != self.seat:
            self.say(f"  {self.name(seat)} plays {card_pretty(action)}")
        if (state.deal_index, state.trick_number) == key:
            return
        winner = game.trick_winner(played, trump)  # the game's rule (a variant may override the standard one)
        self.say(f"  → {self.name(winner)} wins trick {key[1] + 1} ({self._trick_text(played)})")
        if state.deal_index != key[0] or state.done:
            self.end_of_deal(state, key[0])
            if not state.done:
                self.deals.append(state.copy())
            return
        after = game.view(state, self.seat)
        new = after.hand & ~before_view.hand
        if new:
            self.say(f"  you receive {' '.join(card_pretty(c) for c in cards_of(new))}")
        for s in range(game.num_players):
            if s != self.seat and after.known[s] & ~before_view.known[s]:
                cards = " ".join(card_pretty(c) for c in cards_of(after.known[s] & ~before_view.known[s]))
                self.say(f"  {self.name(s)} is now known to hold {cards}")

    def _trick_text(self, trick: Sequence[tuple[int, int]]) -> str:
        return ", ".join(f"{self.game.seat_name(s)} {card_pretty(c)}" for s, c in trick)

    def end_of_deal(self, state: State, deal_index: int) -> None:
        summary = dict(state.deal_summary)
        self.say(f"== deal {deal_index + 1} over ==")
        for key, value in summary.items():
            self.say(f"  {key}: {_value_text(value)}")
        self.say(f"  scores: {_value_text(tuple(state.scores))}")

    def finish(self, state: State) -> None:
        game = self.game
        n = game.num_players
        returns = state.returns
        self.say("")
        self.say("════ game over ════")
        self.say("result: " + ", ".join(f"{self.name(s)} {returns[s]:+g}" for s in range(n)))
        sides = self.spec.sides(n)
        side = {s for s in range(n) if sides[s] == sides[self.seat]}  # the human and any partner
        mine = returns[self.seat]
        best_other = max(returns[s] for s in range(n) if s not in side)
        if mine > best_other:
            verdict = "you win" + (" (with your partner)" if len(side) > 1 else "")
        elif mine == best_other:
            verdict = "a draw: you tie for the best result"
        else:
            verdict = "you lose"
        self.say(f"{verdict} (your return {mine:+g}; the best other {best_other:+g})")
        if self.show_hands:
            for i, start in enumerate(self.deals):
                self.say("")
                self.say(f"every hand of deal {i + 1} as dealt:")
                self.say(game.render(start, None))


def _value_text(value: Any) -> str:
    if isinstance(value, tuple):
        return " ".join(str(v) for v in value)
    return str(value)


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``whist-play``."""
    p = CliParser(
        prog="whist-play",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    default = default_game_id()
    p.add_argument(
        "--game", default=default, type=game_id, help=f"the game: {', '.join(game_ids())} (default {default})"
    )
    p.add_argument(
        "--option", action="append", type=parse_option, default=[], metavar="KEY=VALUE", help="a game option"
    )
    p.add_argument("--seat", type=int, default=0, help="your seat (default 0)")
    p.add_argument(
        "--opponents",
        default="heuristic",
        help="agents for the other seats, from your left: one agent spec for all (random, heuristic, "
        "model:<path.zip>, 'pimc(samples=10, fallback=heuristic)'; see docs/agents.md) or a comma-separated "
        "spec per seat (default heuristic)",
    )
    p.add_argument("--seed", type=at_least(0), default=None, help="seed of the deal (default: a new one, printed)")
    p.add_argument("--show-hands", action="store_true", help="at the end show every hand as dealt")
    p.add_argument(
        "--record",
        type=Path,
        metavar="FILE",
        help="write the game record (JSON: the deal and every action) to FILE when the game ends or you quit; "
        "attach it to a bug report",
    )
    p.add_argument("--debug", action="store_true", help="show the traceback of an error")
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``whist-play``: every error is one line on stderr and exit status 2 (``--debug`` shows
    the traceback); 130 after Ctrl-C."""
    args = list(sys.argv[1:] if argv is None else argv)
    with one_line_warnings("whist-play"):
        try:
            return _play(args)
        except Exception as err:  # an error during the game too (a model that fails to load or act)
            if "--debug" in args:
                raise
            return report_error("whist-play", err)


def _play(argv: list[str] | None = None) -> int:
    """Entry point of ``whist-play``; returns the exit status (2 for bad arguments)."""
    from whist_env.agents.agent_spec import split_agent_specs

    args = build_parser().parse_args(argv)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1_000_000)
    _safe_output(sys.stdout)
    try:
        opponents = split_agent_specs(args.opponents)  # commas inside a spec (pimc:samples=10,max_tricks=7) stay
        spec = get_spec(args.game)  # the one look-up of the id: the session and its agents take the spec
        session = Session(spec, dict(args.option), args.seat, opponents, seed, args.show_hands, record=args.record)
    except (OptionError, ValueError, ImportError, OSError) as err:
        print(f"whist-play: error: {err}", file=sys.stderr)
        return 2
    try:
        return session.run()
    except KeyboardInterrupt:
        print("\ninterrupted; bye")
        return 130


def _safe_output(stream: Any) -> None:
    """Write ``?`` for suit symbols on a terminal that cannot show them, rather than crash."""
    encoding = getattr(stream, "encoding", None) or "utf-8"
    try:
        "♠♥♦♣→".encode(encoding)
    except (UnicodeEncodeError, LookupError):
        reconfigure = getattr(stream, "reconfigure", None)
        if callable(reconfigure):
            reconfigure(errors="replace")


if __name__ == "__main__":
    sys.exit(main())
