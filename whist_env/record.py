"""Game records: what was dealt and played in one episode, enough to rebuild every position exactly.

A :class:`GameRecord` holds the game and its options, the first deal (its deck, 52 card ids, and its
dealer), the actions in order, and whatever else the rules drew from the game's generator: the decks
of the later deals of a longer episode, and the numbers drawn beside them (Oh Hell's drawn trump card).
Recording those draws, rather than a seed, reproduces an episode exactly however the generator was
shared (with agents, with other games) and whatever bit generator it was.

    >>> recorder = record_of(game, rng)                # start recording an episode of ``game``
    >>> while not recorder.state.done:
    ...     recorder.step(choose(game.view(recorder.state, recorder.state.to_act)))
    >>> record = recorder.record()
    >>> text = record.to_json()                        # for a bug report, a file, the web table
    >>> game, state = GameRecord.from_json(text).replay(upto=10)   # the position after 10 actions

Replaying applies the actions through the rules, so a record that does not fit them (an illegal
action, a deck that is not 52 distinct cards, a deal the record has no deck for) raises a
:class:`~whist_env.errors.RecordError` naming the step. The JSON carries a ``"format"`` number
(:data:`FORMAT`); a record of another format is refused with a message naming the one this version reads.
"""

from __future__ import annotations

import dataclasses
import json
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np

from whist_env.errors import IllegalActionError, OptionError, RecordError, unreadable
from whist_env.rules.core import State, TrickGame, check_deck

FORMAT = 1
"""The version of the JSON layout written by :meth:`GameRecord.to_json`."""


@dataclass(frozen=True)
class GameRecord:
    """One episode as dealt and played.

    Attributes:
        game_id: the environment id.
        options: the game's options (JSON values).
        deck: the first deal's deck, 52 card ids (``deck[i]`` dealt as the game's rules say).
        dealer: the first dealer.
        actions: every action of the episode (or of its beginning), in order.
        start: the game's own start options (``new_episode`` keywords such as Oh Hell's ``trump_card``).
        draws: the other numbers the rules drew from the game's generator, in order (Oh Hell's drawn
            trump card of each deal when it was not given in ``start``).
        later_decks: the decks of the second and later deals, in order.
        illegal_action: an illegal action that ended the episode, or None. PettingZoo's wrapped
            environment (``env()``) ends a game when an agent tries an illegal action; the record then holds
            the legal actions played, and this field the one that was refused: the seat to act after
            ``actions`` tried it. It was never applied: :meth:`states` and :meth:`replay` ignore it.
    """

    game_id: str
    options: Mapping[str, Any]
    deck: tuple[int, ...]
    dealer: int
    actions: tuple[int, ...] = ()
    start: Mapping[str, Any] = field(default_factory=dict)
    draws: tuple[int, ...] = ()
    later_decks: tuple[tuple[int, ...], ...] = ()
    illegal_action: int | None = None

    # ----------------------------------------------------------------- JSON
    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values, with the ``"format"`` number first (``illegal_action`` only when there is one)."""
        data = {
            "format": FORMAT,
            "game_id": self.game_id,
            "options": dict(self.options),
            "dealer": self.dealer,
            "deck": list(self.deck),
            "start": dict(self.start),
            "draws": list(self.draws),
            "later_decks": [list(d) for d in self.later_decks],
            "actions": list(self.actions),
        }
        if self.illegal_action is not None:
            data["illegal_action"] = self.illegal_action
        return data

    def to_json(self, indent: int | None = None) -> str:
        """The record as JSON text (:meth:`from_json` reads it back)."""
        return json.dumps(self.to_dict(), indent=indent)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GameRecord:
        """A record from :meth:`to_dict`'s values.

        Raises:
            RecordError: for another format, a missing or unknown key, or a value of the wrong type.
        """
        if not isinstance(data, Mapping):
            raise RecordError(f"a game record is a JSON object, got {type(data).__name__}")
        if data.get("format") != FORMAT:
            raise RecordError(f"game record format {data.get('format')!r} is not readable; this version reads {FORMAT}")
        keys = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - keys - {"format"})
        if unknown:
            raise RecordError(f"unknown key(s) {unknown} in a game record; known: format, {', '.join(sorted(keys))}")
        missing = [k for k in ("game_id", "options", "deck", "dealer") if k not in data]
        if missing:
            raise RecordError(f"a game record needs {', '.join(missing)}")
        if not isinstance(data["game_id"], str):
            raise RecordError(f"game record: game_id must be a string, got {data['game_id']!r}")
        for key in ("options", "start"):
            if not isinstance(data.get(key, {}), Mapping):
                raise RecordError(f"game record: {key} must be an object of option values, got {data[key]!r}")
        return cls(
            game_id=data["game_id"],
            options=dict(data["options"]),
            deck=_ints(data["deck"], "deck"),
            dealer=_int(data["dealer"], "dealer"),
            actions=_ints(data.get("actions", ()), "actions"),
            start=dict(data.get("start", {})),
            draws=_ints(data.get("draws", ()), "draws"),
            later_decks=tuple(_ints(d, f"later_decks[{i}]") for i, d in enumerate(_list(data, "later_decks"))),
            illegal_action=_optional_int(data.get("illegal_action"), "illegal_action"),
        )

    @classmethod
    def from_json(cls, text: str) -> GameRecord:
        """A record from :meth:`to_json`'s text.

        Raises:
            RecordError: for text that is not JSON or not a record of this format.
        """
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as err:  # not JSON, an int of over 4300 digits, or nested too deeply
            raise RecordError(f"a game record must be JSON: {unreadable(err)}") from None
        return cls.from_dict(data)

    # ----------------------------------------------------------------- replay
    def states(self) -> Iterator[tuple[TrickGame, State]]:
        """The rules and the state at the start and after each action (the same state object, advanced:
        copy it to keep a position).

        Raises:
            RecordError: naming the step where the record does not fit the rules.
        """
        game = _make_rules(self.game_id, self.options)
        rng = _ReplayRng(self)
        unknown = sorted(set(self.start) - set(game.extra_reset_options))
        if unknown:  # "deck" or "dealer" here would also clash with the record's own fields of those names
            known = ", ".join(game.extra_reset_options) or "none"
            raise RecordError(f"{self.game_id} record: start: unknown start option(s) {unknown}; known: {known}")
        try:
            state = game.new_episode(cast(np.random.Generator, rng), list(self.deck), self.dealer, **self.start)
        except OptionError as err:
            raise RecordError(f"{self.game_id} record: the first deal cannot start: {err}") from None
        yield game, state
        for i, action in enumerate(self.actions):
            rng.where = f"step {i}"
            if state.done:
                raise RecordError(
                    f"{self.game_id} record, step {i}: the episode is over, yet {len(self.actions) - i} more "
                    f"action(s) follow"
                )
            seat, deal, trick = state.to_act, state.deal_index, state.trick_number
            try:
                game.step(state, action, cast(np.random.Generator, rng))
            except IllegalActionError as err:
                raise RecordError(
                    f"{self.game_id} record, step {i} (deal {deal + 1}, trick {trick + 1}, seat {seat}): {err}"
                ) from None
            yield game, state
        rng.check_used()

    def replay(self, upto: int | None = None) -> tuple[TrickGame, State]:
        """The rules and the state after the first ``upto`` actions (all of them when None).

        Raises:
            RecordError: for an ``upto`` outside 0..len(actions), or where the record does not fit the rules.
        """
        n = len(self.actions)
        if upto is not None and not 0 <= upto <= n:
            raise RecordError(f"upto must be 0..{n} (the record holds {n} actions), got {upto}")
        target = n if upto is None else upto
        for i, position in enumerate(self.states()):
            if i == target < n:
                return position
        # the whole record was applied, and states() has checked that every recorded draw was used
        return position

    def __len__(self) -> int:
        return len(self.actions)


def _list(data: Mapping[str, Any], key: str) -> Sequence[Any]:
    value = data.get(key, ())
    if not isinstance(value, (list, tuple)):
        raise RecordError(f"game record: {key} must be a list, got {value!r}")
    return value


def _int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise RecordError(f"game record: {what} must be an integer, got {value!r}")
    return value


def _optional_int(value: Any, what: str) -> int | None:
    return None if value is None else _int(value, what)


def _ints(value: Any, what: str) -> tuple[int, ...]:
    if not isinstance(value, (list, tuple)):
        raise RecordError(f"game record: {what} must be a list of integers, got {value!r}")
    return tuple(_int(v, f"{what}[{i}]") for i, v in enumerate(value))


def _make_rules(game_id: str, options: Mapping[str, Any]) -> TrickGame:
    from whist_env.registry import get_spec

    try:
        spec = get_spec(game_id)
    except OptionError as err:
        raise RecordError(f"game record: game_id: {err}") from None
    try:
        game: TrickGame = spec.make_rules(**options)
    except OptionError as err:
        raise RecordError(f"game record: options: {err}") from None
    return game


# ----------------------------------------------------------------------------- recording
class Recorder:
    """Records an episode as it is played; made by :func:`record_of`.

    Recording costs one list append per action (and a copy of each deck drawn), so an environment can
    record every episode it plays.

    Attributes:
        game: the rules.
        state: the episode (advance it with :meth:`step` only, so that every action is recorded).
        rng: the stand-in for the generator that records the rules' draws. A caller on a hot path may apply
            an action itself as :meth:`step` does: ``game.step(state, action, rng)``, then
            ``actions.append(action)`` (an int) once it was applied.
        actions: the actions applied so far.
        illegal_action: set by a caller that ends the episode on an illegal action (see
            :attr:`GameRecord.illegal_action`); None otherwise.
    """

    def __init__(
        self,
        game: TrickGame,
        rng: np.random.Generator,
        options: Mapping[str, Any] | None = None,
        deck: Sequence[int | str] | None = None,
        dealer: int | None = None,
        **start: Any,
    ) -> None:
        self.game = game
        self.options = dict(options) if options is not None else given_options(game)
        self.rng = cast(np.random.Generator, _RecordingRng(rng))
        self._draws = cast(_RecordingRng, self.rng)
        self.state = game.new_episode(self.rng, deck, dealer, **start)
        numbers, decks = self._draws.numbers, self._draws.decks
        if dealer is None and numbers:
            numbers.pop(0)  # the rules draw the first dealer before anything else (RULES.md §0.3)
        self._deck = tuple(check_deck(deck, game.game_id)) if deck is not None else tuple(decks.pop(0))
        self._start = dict(start)
        self._dealer = self.state.dealer
        self.actions: list[int] = []
        self.illegal_action: int | None = None

    def step(self, action: int) -> list[float] | None:
        """Apply ``action`` for the seat to act (``game.step``) and record it; returns the rewards.

        Raises:
            IllegalActionError: for an illegal action (nothing is recorded, the state is unchanged).
        """
        rewards = self.game.step(self.state, action, self.rng)
        self.actions.append(int(action))  # recorded once applied
        return rewards

    def record(self) -> GameRecord:
        """The record of the episode so far."""
        return GameRecord(
            game_id=self.game.game_id,
            options=dict(self.options),
            deck=self._deck,
            dealer=self._dealer,
            actions=tuple(self.actions),
            start=dict(self._start),
            draws=tuple(self._draws.numbers),
            later_decks=tuple(tuple(d) for d in self._draws.decks),
            illegal_action=self.illegal_action,
        )


def record_of(
    game: TrickGame,
    rng: np.random.Generator,
    options: Mapping[str, Any] | None = None,
    deck: Sequence[int | str] | None = None,
    dealer: int | None = None,
    **start: Any,
) -> Recorder:
    """Start an episode of ``game`` (``game.new_episode(rng, deck, dealer, **start)``) and record it as it is played.

    Play it with :meth:`Recorder.step` (not ``game.step``) and read :meth:`Recorder.record` at any point.
    The generator is used exactly as ``game.new_episode``/``game.step`` would use it, so a recorded
    episode is the same episode as an unrecorded one, draw for draw.

    Args:
        game: the rules.
        rng: the game's generator (it may be shared with agents).
        options: the options ``game`` was built with (None: read back from ``game.config``, those that
            differ from their default).
        deck: the first deal's deck, or None to draw it.
        dealer: the first dealer, or None to draw it.
        **start: the game's own start options (Oh Hell's ``trump_card``).
    """
    return Recorder(game, rng, options, deck, dealer, **start)


def given_options(game: TrickGame) -> dict[str, Any]:
    """The options ``game`` was built with that differ from their defaults (read back from ``game.config``)."""
    config = game.config
    return {f.name: getattr(config, f.name) for f in dataclasses.fields(config) if getattr(config, f.name) != f.default}


class _RecordingRng:
    """Stands in for the game's generator while recording: forwards each draw and keeps its result."""

    def __init__(self, rng: np.random.Generator) -> None:
        self._rng = rng
        self.numbers: list[int] = []
        self.decks: list[list[int]] = []

    def integers(self, *args: Any, **kwargs: Any) -> Any:
        value = self._rng.integers(*args, **kwargs)
        self.numbers.append(int(value))
        return value

    def permutation(self, x: Any) -> Any:
        value = self._rng.permutation(x)
        self.decks.append(value.tolist())  # Python ints (a list comprehension over the array costs ~5 µs a deal)
        return value

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # copy and pickle probe for their hooks: the plain attributes are copied
            raise AttributeError(name)
        raise RecordError(
            f"the rules drew with rng.{name}(), which a game record does not keep; "
            "rules draw with rng.integers() and rng.permutation() only"
        )


class _ReplayRng:
    """Stands in for the game's generator in a replay: hands out the recorded draws in order."""

    def __init__(self, record: GameRecord) -> None:
        self.record = record
        self.numbers = deque(record.draws)
        self.decks = deque(record.later_decks)
        self.where = "the first deal"

    def _error(self, what: str) -> RecordError:
        return RecordError(f"{self.record.game_id} record, {self.where}: {what}")

    def integers(self, low: int, high: int | None = None) -> int:
        lo, hi = (0, low) if high is None else (low, high)
        if not self.numbers:
            raise self._error(f"the rules draw a number in {lo}..{hi - 1} but the record's draws are used up")
        value = self.numbers.popleft()
        if not lo <= value < hi:
            raise self._error(f"the recorded draw {value} is outside {lo}..{hi - 1}")
        return value

    def permutation(self, n: int) -> np.ndarray:
        if not self.decks:
            raise self._error("a new deal starts but the record has no more decks (later_decks)")
        deck = self.decks.popleft()
        try:
            cards = check_deck(deck, self.record.game_id)
        except OptionError as err:
            raise self._error(f"a later deck is not valid: {err}") from None
        return np.asarray(cards)

    def check_used(self) -> None:
        """Raise when a finished episode left recorded draws unused (the record and the rules disagree)."""
        if self.numbers or self.decks:
            raise self._error(
                f"the record holds {len(self.decks)} deck(s) and {len(self.numbers)} draw(s) the rules never used"
            )

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # copy and pickle probe for their hooks
            raise AttributeError(name)
        raise self._error(f"the rules drew with rng.{name}(), which a game record does not keep")
