"""Tables, seats and tokens of ``whist-serve``, and the messages each seat receives.

Pure Python (no web framework), so that tests can drive a table directly. The one rule this module keeps:
a seat's message is built from that seat's :class:`~whist_env.view.PlayerView` and its observation, plus
public facts (the table's settings, hand sizes, the cards played in finished deals). The full state is read
only for the hand sizes (public: everyone sees how many cards a hand holds). While a deal runs, nothing of
another seat's hand, a blind, the stock or an agent's reasoning reaches a seat, unless the table was opened
as an open study table (then the agents' hands and reasoning are shown to everyone; human hands never are).
When a deal ends its record becomes public: every card each seat played (its hand as played; a blind or a
stock card that nobody played stays hidden), the tricks in order, the bids and exchanges, and the agents'
choices. When the game is over, any seat may have its :class:`~whist_env.record.GameRecord` (every card dealt,
hidden ones included, and every action), to replay it or attach it to a bug report; never before.

A ``bot`` seat is held by a token like a human seat, and played by a program over the bot protocol
(:mod:`whist_env.serve.botseat`); the table notes for it what the protocol tells a bot: each decision's number in
its deal (:meth:`Table.bot_decision`), and each finished deal's returns and the bot seats' views at its end
(:attr:`Table.bot_deal_ends`), built from those seats' views only.
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from whist_env.agents.agent_spec import AgentSpec, parse_agent_spec
from whist_env.agents.base import Agent
from whist_env.agents.factory import make_agent
from whist_env.agents.pretrained import shipped_options
from whist_env.cards import NUM_CARDS, card_pretty, cards_of
from whist_env.envs.registration import make
from whist_env.errors import ModelMismatchError, OptionError
from whist_env.record import GameRecord
from whist_env.registry import game_ids, get_spec
from whist_env.spec import GameSpec
from whist_env.view import PlayerView, ViewExtras

HUMAN = "human"
BOT = "bot"
"""A seat played by a program of your own over the bot protocol (``WS /api/tables/{id}/bot?token=...``)."""
PACKAGE_DIR = Path(__file__).resolve().parent.parent  # whist_env/: kept out of what a client reads
# What the lobby offers for a seat; every name make_agent accepts works (``pimc:samples=10``, ``model:<path>``).
SEAT_CHOICES = (HUMAN, "random", "heuristic", "pimc", "pretrained", BOT, "model:<path>")
PLAYERS_OPTION = "num_players"
"""The option that sets the number of seats in a game that has it (Oh Hell); other games have a fixed number."""
AGENT_DOCS = {
    HUMAN: "a person: send the seat's link to its player",
    "random": "plays a legal card or call at random",
    "heuristic": "the game's rule-based player",
    "pimc": "searches sampled deals (the double-dummy solver; in Oh Hell, playouts): strong, slower",
    "pretrained": "the neural network shipped for the game; it plays only the options it was trained with",
    BOT: "your own program, in any language: it connects with the seat's token (whist-bot connect URL --token T "
    "-- python mybot.py) and plays over the bot protocol",
}
"""The agents the lobby offers by name, and what each one is (an agent spec typed in the lobby works too)."""


class TableError(Exception):
    """A request the table refuses (bad token, illegal action, ...); the message says why and what to do."""


_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)  # json.dumps makes one a call


def encode(message: Any) -> str:
    """The bytes a client receives for ``message`` (one canonical form, so streams can be compared); also a part
    of a message (:meth:`Table.message_text` puts a message together from its encoded parts)."""
    return _ENCODER.encode(message)


def jsonable(value: Any) -> Any:
    """``value`` with tuples as lists and numpy scalars as Python numbers (what ``json`` can write)."""
    if isinstance(value, (Mapping, ViewExtras)):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def seat_choices(game: GameSpec[Any, Any]) -> list[str]:
    """The agents the lobby offers for a seat of ``game``: ``pimc`` where the game has a search agent (the solver's
    PIMC, or Oh Hell's playout search), ``pretrained`` where weights are shipped for it."""
    offered = {"pimc": game.searchable, "pretrained": shipped_options(game) is not None}
    return [name for name in AGENT_DOCS if offered.get(name, True)]


def game_catalogue() -> list[dict[str, Any]]:
    """Every game with what the lobby's form needs, for ``GET /api/games``.

    Each entry: ``game``; ``num_players`` (with the default options); ``options`` (name → its allowed values and
    default, in words); ``option_info`` (each option's ``name``, ``kind`` (``choice``, ``bool``, ``int``, ``float``,
    ``str``), ``default``, ``doc``, ``choices``, ``minimum``, ``maximum`` and ``optional`` (None allowed: the rules'
    default), in declaration order); ``players_option`` (the option that sets the number of seats, or None: fixed);
    ``seat_choices`` (the agents offered for a seat); ``single_deal`` (the options that make an episode one deal);
    ``pretrained_options`` (the options the shipped network was trained with, which a ``pretrained`` seat needs, or
    None: no network is shipped).
    """
    out = []
    for game_id in game_ids():
        spec = get_spec(game_id)
        game = make(spec, raw=True).game
        info = game.config_cls.info()
        out.append(
            {
                "game": game_id,
                "num_players": game.num_players,
                "options": game.config_cls.allowed(),
                "option_info": [jsonable(option.as_dict()) for option in info],
                "players_option": PLAYERS_OPTION if any(option.name == PLAYERS_OPTION for option in info) else None,
                "seat_choices": seat_choices(spec),
                "single_deal": jsonable(spec.single_deal),
                "pretrained_options": jsonable(shipped_options(spec)),
            }
        )
    return out


def _plays_shipped_network(agent: AgentSpec) -> bool:
    """Whether ``agent`` or an agent nested in it (PIMC's fallback) is ``pretrained`` with the shipped weights."""
    if agent.name == "pretrained" and agent.get("path") is None:
        return True
    return any(isinstance(value, AgentSpec) and _plays_shipped_network(value) for _, value in agent.args)


def _trained_options_hint(game: GameSpec[Any, Any], kind: str) -> str:
    """For a shipped ``pretrained`` seat refused for its options: the options to open the table with (those that
    differ from the defaults), or ``""``."""
    trained = shipped_options(game) if _plays_shipped_network(parse_agent_spec(kind)) else None
    if trained is None:
        return ""
    defaults = {option.name: option.default for option in game.make_rules().config_cls.info()}
    needed = {k: v for k, v in trained.items() if defaults.get(k, v) != v}
    with_options = f"options {json.dumps(needed)} (the others at their defaults)" if needed else "the default options"
    return (
        f"'pretrained' plays {game.game_id} only with the options its network was trained with: open the table with "
        f"{with_options}, or pick another agent. "
    )


def agent_catalogue() -> list[dict[str, Any]]:
    """The agents the lobby offers by name, what each is and the games it is offered for (``GET /api/agents``)."""
    offered = {game_id: seat_choices(get_spec(game_id)) for game_id in game_ids()}
    return [
        {"name": name, "doc": doc, "games": [game_id for game_id, names in offered.items() if name in names]}
        for name, doc in AGENT_DOCS.items()
    ]


SEARCH_NOTES = {
    "PIMCAgent": "summed double-dummy value of each card over the sampled deals (higher is better)",
    "OhHellSearch": "mean deal score of each bid or card over the played-out sample deals (higher is better)",
}
"""The search agents whose study panel shows the values they chose from (``act_with_totals``), and what those are."""


def explain_and_act(agent: Agent, view: PlayerView, rng: np.random.Generator) -> tuple[int, dict[str, Any]]:
    """The agent's action for ``view`` and what it shows of its reasoning (for the study panel).

    PIMC shows the summed double-dummy value of each legal card over the deals it sampled for this decision, Oh
    Hell's search the mean deal score of each legal bid or card over its played-out deals (where they search;
    elsewhere they follow their fallback); a learned policy shows its probability for each legal action; other
    agents show their choice only. The action is the one the agent plays without the panel: the panel draws nothing
    from ``rng`` (a search's values are those of the agent's own search, made once).
    """
    kind = type(agent).__name__
    details: dict[str, Any] = {"agent": getattr(agent, "name", kind)}
    if kind in SEARCH_NOTES:
        agent_any: Any = agent
        action, totals = agent_any.act_with_totals(view, rng)
        if totals is not None:
            details["values"] = [[int(c), round(float(v), 3)] for c, v in sorted(totals.items())]
            details["note"] = SEARCH_NOTES[kind]
        else:
            details["note"] = "outside the search (one legal action, or a decision it leaves to its fallback)"
        details["action"] = int(action)
        return int(action), details
    if kind == "ModelAgent":
        probs = agent.probabilities(view)  # type: ignore[attr-defined]
        details["probabilities"] = [[a, round(float(probs[a]), 4)] for a in view.legal_actions()]
        details["note"] = "the policy's probability of each legal action"
    action = int(agent.act(view, rng))
    details["action"] = action
    return action, details


@dataclass
class Seat:
    """One seat at a table: a human or a bot (each held by whoever has its token), or an agent."""

    index: int
    kind: str  # "human", "bot" or the agent's name as given
    token: str
    agent: Agent | None = None
    rng: np.random.Generator | None = None
    explanation: dict[str, Any] | None = None  # the agent's last choice (shown only on open study tables)
    searches: bool = False  # the agent searches (PIMC where the game has a solver): it thinks apart from the others
    seed: int = 0  # the seat's generator seed, drawn from the table's seed (an agent's rng; a bot's hello)
    connected: bool = False  # a bot seat: a bot connection holds it now (its hello answered)
    refused: int = 0  # a bot seat: answers refused over the game (malformed, illegal, or with no act pending)

    @property
    def is_agent(self) -> bool:
        """Whether an agent plays this seat (its ``agent`` object is dropped once the game is over)."""
        return self.kind not in (HUMAN, BOT)

    @property
    def is_bot(self) -> bool:
        """Whether a program plays this seat over the bot protocol."""
        return self.kind == BOT


@dataclass(frozen=True)
class BotDealEnd:
    """A finished deal as the bot protocol's ``deal_end`` tells it: each seat's return from the deal, and each bot
    seat's view at its end (taken before the next deal is dealt; a bot is sent its own view only)."""

    deal: int
    returns: tuple[float, ...]  # (n,)
    views: dict[int, PlayerView]  # bot seat -> its view at the end of the deal


@dataclass
class DealRecord:
    """What a finished deal makes public, built from the actions as they were played."""

    deal: int
    dealer: int
    trump: int | None
    played: list[list[int]]  # (n,) cards each seat played, in order: its hand as played
    tricks: list[dict[str, Any]] = field(default_factory=list)  # {"cards": [[seat, card], ...], "winner": seat}
    calls: list[list[Any]] = field(default_factory=list)  # non-card actions: [seat, action, label]
    choices: list[dict[str, Any]] = field(default_factory=list)  # agents' explanations, in play order
    scores: list[Any] = field(default_factory=list)

    def as_message(self) -> dict[str, Any]:
        """The record as JSON-ready data (hands sorted)."""
        return {
            "deal": self.deal,
            "dealer": self.dealer,
            "trump": self.trump,
            "hands": [sorted(cards) for cards in self.played],
            "tricks": self.tricks,
            "calls": self.calls,
            "choices": self.choices,
            "scores": self.scores,
        }


class Table:
    """One game at one table: the environment, its seats and what each seat is told.

    Args:
        table_id: the table's id (part of its URL).
        game_id: the environment id.
        options: the game's options.
        seats: per seat ``"human"``, ``"bot"`` or an agent name that :func:`~whist_env.agents.factory.make_agent`
            accepts.
        study: an open study table: every seat sees the agents' hands and reasoning.
        seed: deals and the agents' choices (None: fresh randomness).
        deck: the first deal's deck order (52 cards), for tests and set problems.
        dealer: the first dealer.

    Raises:
        OptionError: for an unknown game, bad options, a wrong number of seats or an unknown agent name.
    """

    def __init__(
        self,
        table_id: str,
        game_id: str,
        options: Mapping[str, Any] | None = None,
        seats: Sequence[str] | None = None,
        study: bool = False,
        seed: int | None = None,
        deck: Sequence[int] | None = None,
        dealer: int | None = None,
    ) -> None:
        if game_id not in game_ids():
            raise OptionError(f"unknown game {game_id!r}; available: {', '.join(game_ids())}")
        if options is not None and not isinstance(options, Mapping):
            raise OptionError(f"'options' must be an object of option names and values, got {options!r}")
        spec = get_spec(game_id)  # the one look-up of the id: the environment and the agents take the spec
        self.spec = spec
        self.id = table_id
        self.game_id = game_id
        self.options = dict(options or {})
        spec.make_rules(**self.options)  # the game's options alone, before make() takes any as its own (raw=...)
        self.env = make(spec, raw=True, **self.options)
        self.game = self.env.game
        n = self.game.num_players
        kinds = list(seats) if seats is not None else [HUMAN] + ["heuristic"] * (n - 1)
        if len(kinds) != n or not all(isinstance(k, str) and k for k in kinds):
            raise OptionError(
                f"{game_id} with these options has {n} seats: give 'seats' as a list of {n} names, each "
                f"{' | '.join(SEAT_CHOICES)}; got {seats!r}"
            )
        self.study = bool(study)
        seed_seq = np.random.SeedSequence(seed)
        env_seed, *agent_seeds = seed_seq.generate_state(n + 1, dtype=np.uint32).tolist()
        self.seats: list[Seat] = []
        for i, kind in enumerate(kinds):
            agent = None
            if kind not in (HUMAN, BOT):
                try:
                    agent = make_agent(kind, spec, **self.options)
                except ModelMismatchError as err:  # the shipped weights named from the package, not this disk
                    why = str(err).replace(str(PACKAGE_DIR), "whist_env")
                    raise OptionError(f"seat {i}: {_trained_options_hint(spec, kind)}{why}") from err
                except ValueError as err:  # PIMC's parameter errors
                    raise OptionError(f"seat {i}: {err}") from err
            rng = np.random.default_rng(agent_seeds[i])
            searches = bool(getattr(agent, "searches", False))
            seat = Seat(i, kind, secrets.token_urlsafe(24), agent, rng, searches=searches, seed=agent_seeds[i])
            self.seats.append(seat)
        reset_options: dict[str, Any] = {}
        if deck is not None:
            reset_options["deck"] = list(deck)
        if dealer is not None:
            reset_options["dealer"] = dealer
        self.env.reset(seed=env_seed, options=reset_options or None)
        self.lock = threading.RLock()
        self.version = 0
        self.deals: list[DealRecord] = []
        self._deals_text: list[str] = []  # each finished deal's record as encode() writes it (it never changes)
        self.closed = False
        self.failure: str | None = None  # set when an agent raised: the table cannot go on
        self.last_activity = time.monotonic()
        self._record = self._new_record()
        self._trick: list[list[int]] = []
        self.presence = 0  # counts changes of who is connected (a bot seat's connection), apart from ``version``
        self._bot_seats = [seat.index for seat in self.seats if seat.is_bot]
        self._decision = 0  # actions taken in the current deal: the number of the next decision
        self._deal_returns = tuple(float(r) for r in self.env.game_state.returns)  # the returns when the deal began
        self.bot_deal_ends: list[BotDealEnd] = []

    # ------------------------------------------------------------------ seats and turns
    @property
    def num_players(self) -> int:
        """Seats at the table."""
        return self.game.num_players

    @property
    def over(self) -> bool:
        """Whether the episode has ended."""
        return bool(self.env.game_state.done)

    def seat_of(self, token: Any) -> int:
        """The seat a token holds.

        Raises:
            TableError: for a token that holds no seat here.
        """
        if isinstance(token, str) and token:
            for seat in self.seats:
                # as bytes: compare_digest refuses a non-ASCII str (a JSON token may even hold a lone surrogate)
                if secrets.compare_digest(seat.token.encode(), token.encode("utf-8", "surrogatepass")):
                    return seat.index
        raise TableError("this token holds no seat at this table; open the table with the link you were given")

    def bot_decision(self, seat: int) -> tuple[int, int] | None:
        """``(deal, decision)`` of the decision bot seat ``seat`` is to take now (``decision``: the actions taken
        before it in the deal, every seat's), or None when it is not that seat's turn (or the table is stopped)."""
        state = self.env.game_state
        if self.closed or self.failure or state.done or state.to_act != seat:
            return None
        return state.deal_index, self._decision

    def set_connected(self, seat: int, connected: bool) -> None:
        """Note whether a bot connection holds ``seat`` (every seat's message shows it)."""
        with self.lock:
            self.seats[seat].connected = connected
            self.presence += 1

    def agent_to_act(self) -> int | None:
        """The agent seat whose turn it is, or None (a human's turn, or the game is over)."""
        state = self.env.game_state
        if self.closed or self.failure or state.done:
            return None
        seat = self.seats[state.to_act]
        return seat.index if seat.is_agent else None

    def touch(self) -> None:
        """Note activity (idle tables are closed by the server)."""
        self.last_activity = time.monotonic()

    def game_record(self) -> GameRecord:
        """The :class:`~whist_env.record.GameRecord` of the game, once it is over.

        Raises:
            TableError: while the game runs (the record holds every hidden card), or when it stopped unfinished.
        """
        with self.lock:
            if not self.over:
                why = f"the table stopped unfinished ({self.failure})" if self.failure else "the game is still running"
                raise TableError(
                    f"{why}: the game record holds every hand, so it is given only once the game is over; "
                    "ask again at the end of the game"
                )
            return self.env.game_record()

    # ------------------------------------------------------------------ actions
    def check_action(self, seat: int, action: Any) -> int:
        """``action`` as an int when ``seat`` may take it now.

        Raises:
            TableError: naming why not (the game is over, not your turn, not an action id, not legal now).
        """
        if self.closed:
            raise TableError("this table is closed; open a new one in the lobby")
        state = self.env.game_state
        if state.done:
            raise TableError("the game is over; open a new table in the lobby to play again")
        if state.to_act != seat:
            raise TableError(f"it is seat {state.to_act}'s turn, not seat {seat}'s; wait for your turn")
        if not isinstance(action, int) or isinstance(action, bool):
            raise TableError(f"an action is an integer action id, got {action!r}")
        view = self.game.view(state, seat)
        if not 0 <= action < self.game.num_actions or not (view.legal >> action) & 1:
            legal = " ".join(f"{a}={self._label(a)}" for a in view.legal_actions())
            raise TableError(f"action {action!r} is not legal now; legal: {legal}")
        return action

    def act(self, seat: int, action: Any) -> None:
        """Take ``action`` for the human at ``seat``.

        Raises:
            TableError: when the action is refused (nothing changes).
        """
        with self.lock:
            if self.seats[seat].is_bot:
                raise TableError(
                    f"seat {seat} is a bot seat: a program plays it over /api/tables/{self.id}/bot (whist-bot connect)"
                )
            a = self.check_action(seat, action)
            if self.seats[seat].is_agent:
                raise TableError(f"seat {seat} is played by the agent {self.seats[seat].kind!r}")
            self._apply(seat, a, None)

    def act_bot(self, seat: int, action: Any, decision: tuple[int, int]) -> None:
        """Take ``action`` for the bot at ``seat``, its answer to the act of ``decision`` (``(deal, decision)``).

        Raises:
            TableError: when the action is refused, or the table is no longer at that decision (nothing changes).
        """
        with self.lock:
            if not self.seats[seat].is_bot:
                raise TableError(f"seat {seat} is not a bot seat")
            a = self.check_action(seat, action)
            now = self.bot_decision(seat)
            if now != decision:
                raise TableError(f"this answer is to decision {decision}, but the table is at {now}; wait for an act")
            self._apply(seat, a, None)

    def agent_view(self) -> tuple[int, int, PlayerView] | None:
        """``(version, seat, view)`` for the agent to act now, or None (see :meth:`think`)."""
        with self.lock:
            seat = self.agent_to_act()
            if seat is None:
                return None
            return self.version, seat, self.game.view(self.env.game_state, seat)

    def think(self, seat: int, view: PlayerView) -> tuple[int, dict[str, Any]]:
        """The agent's action and explanation for ``view`` (runs off the event loop; touches only the agent)."""
        agent = self.seats[seat].agent
        rng = self.seats[seat].rng
        assert agent is not None and rng is not None
        return explain_and_act(agent, view, rng)

    def apply_agent(self, version: int, seat: int, action: int, explanation: dict[str, Any]) -> bool:
        """Apply an agent's action thought about at ``version``; False when the table moved on meanwhile."""
        with self.lock:
            if self.version != version or self.agent_to_act() != seat:
                return False
            self._apply(seat, self.check_action(seat, action), explanation)
            return True

    def play_agents(self) -> None:
        """Let the agents act until it is a human's turn or the game is over (synchronously; for tests)."""
        while (pending := self.agent_view()) is not None:
            version, seat, view = pending
            action, explanation = self.think(seat, view)
            self.apply_agent(version, seat, action, explanation)

    def _new_record(self) -> DealRecord:
        state = self.env.game_state
        return DealRecord(state.deal_index, state.dealer, None, [[] for _ in range(self.num_players)])

    def _apply(self, seat: int, action: int, explanation: dict[str, Any] | None) -> None:
        state = self.env.game_state
        deal, trump = state.deal_index, state.trump
        # the bot seats' views at the deal's end: the environment deals the next hand in the same step
        before = state.copy() if self._bot_seats else None
        record = self._record
        label = self._label(action)
        if action < NUM_CARDS:
            record.played[seat].append(action)
            self._trick.append([seat, action])
            if record.trump is None:
                record.trump = trump
        else:
            record.calls.append([seat, action, label])
        if explanation is not None:
            rows = explanation.get("values") or explanation.get("probabilities")
            if rows:  # each row's action as the table names it (bids, KEEP/EXCHANGE: the panel has no name for them)
                explanation = {**explanation, "labels": [self._label(int(a)) for a, _ in rows]}
            record.choices.append({"seat": seat, "label": label, **explanation})
            self.seats[seat].explanation = {**explanation, "label": label}
        self.env.step(action)
        if len(self._trick) == self.num_players:
            cards = [(s, c) for s, c in self._trick]
            # the game's rule (a variant may override the standard one)
            record.tricks.append({"cards": self._trick, "winner": self.game.trick_winner(cards, trump)})
            self._trick = []
        state = self.env.game_state
        if before is not None and (state.deal_index != deal or state.done):
            self._note_bot_deal_end(before, action, deal)
        self._decision = 0 if state.deal_index != deal else self._decision + 1
        if state.deal_index != deal or state.done:
            record.scores = jsonable(state.scores)
            self.deals.append(record)
            self._deals_text.append(encode(record.as_message()))
            self._trick = []
            self._record = self._new_record()
        if state.done:
            self._release_agents()
        self.version += 1
        self.touch()

    def _note_bot_deal_end(self, before: Any, action: int, deal: int) -> None:
        """Note the finished deal for the bot protocol's ``deal_end``: ``before`` is the state before its last
        action, which is applied to it here without dealing the next hand."""
        state = self.env.game_state
        if state.done:
            end = state
        else:
            end = before
            self.game.apply(end, action)
        returns = tuple(float(r) - s for r, s in zip(end.returns, self._deal_returns, strict=True))
        views = {seat: self.game.view(end, seat) for seat in self._bot_seats}
        self.bot_deal_ends.append(BotDealEnd(deal, returns, views))
        self._deal_returns = tuple(float(r) for r in end.returns)

    def _release_agents(self) -> None:
        """Drop the agents once the game is over: nobody acts again, and an agent may hold much memory (PIMC's
        transposition table: 16 MB; a network: a megabyte or more), while a finished table stays open for its record and
        views until it is idle for ``--idle-timeout``."""
        for seat in self.seats:
            seat.agent = None

    def _label(self, action: int) -> str:
        return card_pretty(action) if 0 <= action < NUM_CARDS else self.game.describe_action(action)

    # ------------------------------------------------------------------ messages
    def message(self, seat: int) -> dict[str, Any]:
        """Everything ``seat`` is told now (see the module docstring for what may be in it)."""
        with self.lock:
            return {**self._message(seat), "deals": [record.as_message() for record in self.deals]}

    def message_text(self, seat: int) -> str:
        """``encode(self.message(seat))``, what the server sends, made without encoding the finished deals again:
        their records never change, so each is encoded once, when its deal ends (in a long match they are most of
        every message)."""
        with self.lock:
            msg = self._message(seat)
            deals = "[" + ",".join(self._deals_text) + "]"
        # json.dumps(sort_keys=True) writes a dict as its sorted keys, each with its value encoded alone
        items = sorted([*msg.items(), ("deals", None)], key=lambda item: item[0])
        return "{" + ",".join(f"{encode(k)}:{deals if k == 'deals' else encode(v)}" for k, v in items) + "}"

    def _message(self, seat: int) -> dict[str, Any]:
        """:meth:`message` without the finished deals."""
        with self.lock:
            state = self.env.game_state
            agent = self.env.possible_agents[seat]
            view = self.game.view(state, seat)
            msg: dict[str, Any] = {
                "type": "state",
                "table": self._public_table(),
                "you": seat,
                "version": self.version,
                **self._view_part(view),
                "hand_sizes": [h.bit_count() for h in state.hands],  # public: hands are seen, not their cards
                "knows": self.env.describe(self.env.observe(agent)),
            }
            if self.study:
                msg["agents"] = self._open_agents()
            return msg

    def _public_table(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "game": self.game_id,
            "options": jsonable(self.options),
            "num_players": self.num_players,
            "seats": [seat.kind for seat in self.seats],
            "study": self.study,
            "closed": self.closed,
            "failure": self.failure,
            "connected": [seat.connected if seat.is_bot else None for seat in self.seats],  # bot seats only
        }

    def _view_part(self, view: PlayerView) -> dict[str, Any]:
        legal = [{"action": a, "label": self._label(a)} for a in view.legal_actions()]
        return {
            "phase": "over" if view.phase == "over" else view.phase,
            "to_act": view.to_act,
            "dealer": view.dealer,
            "leader": view.leader,
            "trump": view.trump,
            "turn_up": view.turn_up,
            "hand": cards_of(view.hand),
            "known": [cards_of(m) if s != view.seat else [] for s, m in enumerate(view.known)],
            "trick": [list(p) for p in view.trick],
            "last_trick": [list(p) for p in view.last_trick],
            "last_winner": view.last_winner,
            "tricks_won": list(view.tricks_won),
            "scores": jsonable(view.scores),
            "deal_index": view.deal_index,
            "legal": legal,
            "extra": jsonable(view.extra),
        }

    def _open_agents(self) -> list[dict[str, Any]]:
        """Open study tables: each agent seat's hand, what it knows and its last choice."""
        state = self.env.game_state
        out = []
        for seat in self.seats:
            if not seat.is_agent:
                continue
            view = self.game.view(state, seat.index)
            out.append(
                {
                    "seat": seat.index,
                    "agent": seat.kind,
                    "hand": cards_of(view.hand),
                    "knows": self.env.describe(self.env.observe(self.env.possible_agents[seat.index])),
                    "choice": seat.explanation,
                }
            )
        return out
