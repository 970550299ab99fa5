"""PIMC: Perfect Information Monte Carlo card play.

At each card decision the agent draws deals consistent with its view (:mod:`whist_env.search.sampler`),
solves each one double-dummy (:mod:`whist_env.search.solver`) and plays the card with the best average
value. It receives only a :class:`~whist_env.view.PlayerView` and a generator, like every agent, so it
cannot read hidden cards; the deals it solves are its own guesses.

Where it does not search it plays like its fallback (the game's heuristic agent from
its spec, ``GameSpec.heuristic``):

* decisions that are not card play: Oh Hell's bids, Swedish Humbug whist's exchange;
* the card play of games the solver does not cover (Oh Hell: not a two-sided game);
* card play with more than ``max_tricks`` tricks left in the deal (the solver's cost grows quickly
  with the tricks left; see ``SearchSpec.max_tricks`` and ``docs/results_search.md``), unless a
  ``horizon`` is set, in which case it searches that many tricks ahead and estimates the rest.

When the cards of the best average tie, the fallback's card is played if it is one of them, else the
lowest. With ``time_budget`` set, sampling stops once the budget is spent (at least one deal is always
solved); the result then depends on the machine's speed, so leave it unset for reproducible runs.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from whist_env.agents.agent_spec import AgentSpec, parse_agent_spec
from whist_env.agents.base import Agent
from whist_env.cards import FULL_DECK
from whist_env.cards import cards_of as _cards
from whist_env.errors import OptionError
from whist_env.registry import GameRef, game_ids, get_spec, spec_of
from whist_env.search.playout import Playouts
from whist_env.search.sampler import DealSampler, SampledDeal
from whist_env.search.solver import Position, Solver, solved_games
from whist_env.spec import load
from whist_env.view import PlayerView

if TYPE_CHECKING:
    from whist_env.spec import GameSpec, SearchSpec


def position_from_view(
    view: PlayerView, deal: SampledDeal, options: dict[str, Any] | None = None, search: SearchSpec[Any] | None = None
) -> Position:
    """The solver's position for a deal drawn for ``view`` (public facts from the view, hands from the deal).

    Args:
        view: the deciding seat's view.
        deal: a deal drawn for it.
        options: the game's options.
        search: the game's ``SearchSpec`` (None: looked up by the view's game).

    Raises:
        ValueError: when the solver does not cover the view's game.
    """
    if search is None:
        search = get_spec(view.game).search
    if search is None:
        raise ValueError(f"the double-dummy solver does not cover {view.game!r} (its spec has no search)")
    sides, counts, follow = search.rules(options or {})
    trick_number = sum(view.tricks_won)
    draws: tuple[tuple[int, int], ...] = ()
    if search.draws is not None:
        draws = search.draws(deal.stock, trick_number)
    return Position(
        hands=deal.hands,
        sides=sides,
        trump=view.trump,
        leader=view.leader if view.trick else view.to_act,
        trick=tuple(c for _, c in view.trick),
        trick_number=trick_number,
        counts=counts,
        follow=follow,
        draws=draws,
    )


def searched_spec(game_id: GameRef) -> GameSpec[Any, Any]:
    """The spec of ``game_id``, a game with a search agent: the double-dummy solver covers it (its spec's ``search``)
    or it has a search of its own (``search_agent``).

    Raises:
        OptionError: for an unknown game, or one without a search agent (PIMC there would only be its fallback: it
            is refused rather than stand in silently).
    """
    spec = spec_of(game_id)
    if not spec.searchable:
        raise OptionError(
            f"pimc: {spec.game_id} has no search agent: the double-dummy solver covers "
            f"{', '.join(solved_games())} (two sides counting tricks){_own_searches()}; for {spec.game_id} use "
            "heuristic, pretrained or a model of your own"
        )
    return spec


def _own_searches() -> str:
    """``", and a game's own search plays oh_hell_v0"``: the registered games whose spec names a search agent of their
    own (``GameSpec.search_agent``), for an error message (empty when none)."""
    own = [g for g in game_ids() if get_spec(g).search_agent is not None]
    if not own:
        return ""
    return f", and a game's own search plays {', '.join(own)}"


def _fallback_for(spec: GameSpec[Any, Any], options: dict[str, Any]) -> Agent:
    """The game's rule-based agent (every spec names one); a bad option raises OptionError."""
    spec.make_rules(**options)  # validates the options like the environment does
    agent: Agent = spec.heuristic_cls()(**options)
    return agent


class PIMCAgent:
    """Samples deals consistent with the view, solves each double-dummy, plays the best card on average.

    Args:
        game_id: the environment id, or the game's spec.
        samples: deals drawn per decision (K).
        time_budget: seconds per decision after which no more deals are drawn (None: always ``samples``).
        max_tricks: search only with at most this many tricks left in the deal; earlier card play follows
            the fallback (None: the game's ``SearchSpec.max_tricks``, or every trick when ``horizon`` is set).
        horizon: search this many tricks ahead and estimate the rest (None: search to the end).
        playouts: with more than ``max_tricks`` tricks left, draw this many deals per card decision and play each
            legal card out on each of them, every seat then played by the fallback to the deal's end
            (:mod:`whist_env.search.playout`), and play the card whose side takes the most tricks on average
            (None: the fallback plays those cards). The fallback needs a batched form (the game's heuristic or a
            pretrained network) and the game an engine that takes views (classic whist).
        fallback: the agent for everything the search does not cover (default: the game's heuristic).
        tt_bits: size of the solver's transposition table (``2 ** tt_bits`` entries).
        **options: the game's options (German Whist's ``count_all_tricks`` and ``phase1_follow_suit``
            change what the solver counts).

    Raises:
        OptionError: for an unknown game, a game the solver does not cover (its spec has no ``search``: PIMC there
            would only be its fallback, so it is refused rather than stand in silently; a game with a search of its
            own, ``search_agent``, is named to ``make_agent``), or a bad option (when no ``fallback`` is given).
        ValueError: for ``samples`` below 1.
    """

    name = "pimc"

    def __init__(
        self,
        game_id: GameRef,
        samples: int = 20,
        time_budget: float | None = None,
        max_tricks: int | None = None,
        horizon: int | None = None,
        fallback: Agent | None = None,
        tt_bits: int = 18,
        playouts: int | None = None,
        **options: Any,
    ) -> None:
        if samples < 1:
            raise ValueError(f"samples must be at least 1, got {samples}")
        if playouts is not None and (not isinstance(playouts, int) or isinstance(playouts, bool) or playouts < 1):
            raise OptionError(f"pimc: playouts must be None or an int >= 1, got {playouts!r}")
        spec = searched_spec(game_id)
        if spec.search is None:
            raise OptionError(
                f"PIMCAgent searches with the double-dummy solver, which covers {', '.join(solved_games())}; "
                f"{spec.game_id} has a search of its own: make_agent('pimc', {spec.game_id!r})"
            )
        self.game_id: str = spec.game_id
        self.samples = samples
        self.time_budget = time_budget
        self.horizon = horizon
        self.options = dict(options)
        search = spec.search
        assert search is not None  # searched_spec checked it
        if max_tricks is None and horizon is None:
            max_tricks = search.max_tricks
        self.max_tricks = max_tricks
        self.fallback = fallback if fallback is not None else _fallback_for(spec, self.options)
        self.playouts = playouts
        self._playouts: Playouts | None = None
        if playouts is not None:
            if self.max_tricks is None:
                raise OptionError("pimc: playouts play the cards before the search starts: give max_tricks with them")
            self._playouts = Playouts(spec, self.fallback, **self.options)
        self.search = search
        self.searches = True  # whist-serve gives searching seats their own threads
        self.total_tricks = len(search.rules(self.options)[1])
        self.tt_bits = tt_bits
        self._solver: Solver | None = None

    @property
    def solver(self) -> Solver:
        """The agent's solver (its table is allocated on first use)."""
        if self._solver is None:
            self._solver = Solver(tt_bits=self.tt_bits, horizon=self.horizon)
        return self._solver

    def act(self, view: PlayerView, rng: np.random.Generator) -> int:
        """A legal action: a searched card, or the fallback's choice outside the search."""
        return self.act_with_totals(view, rng)[0]

    def act_with_totals(self, view: PlayerView, rng: np.random.Generator) -> tuple[int, dict[int, float] | None]:
        """:meth:`act`'s action and the :meth:`card_totals` it chose from (None where it did not search), with
        the same draws from ``rng``: what a study panel shows is what the agent decided on, at no second search."""
        legal = view.legal
        if legal.bit_count() == 1:
            return legal.bit_length() - 1, None
        if view.phase != "play" or view.game != self.game_id:
            return self.fallback.act(view, rng), None
        left = self.total_tricks - sum(view.tricks_won)
        if self.max_tricks is not None and left > self.max_tricks:
            if self._playouts is None:
                return self.fallback.act(view, rng), None
            totals = self.playout_totals(view, rng)
        else:
            totals = self.card_totals(view, rng)
        if len(totals) == 1:
            return next(iter(totals)), totals
        best = max(totals.values())
        best_cards = sorted(c for c, v in totals.items() if v >= best - 1e-9)
        if len(best_cards) > 1:
            choice = self.fallback.act(view, rng)
            if choice in best_cards:
                return choice, totals
        return best_cards[0], totals

    def card_totals(self, view: PlayerView, rng: np.random.Generator) -> dict[int, float]:
        """The summed double-dummy value of every legal card over the sampled deals."""
        legal = view.legal
        if _one_run(view, legal):
            c = legal.bit_length() - 1
            return {c: 0.0}
        sampler = DealSampler(view)
        k = 1 if sampler.determined else self.samples
        start = time.perf_counter()
        totals = dict.fromkeys(_cards(legal), 0.0)
        search = self.search if view.game == self.game_id else None  # another game's view: its own rules
        for i in range(k):
            deal = sampler.sample(rng)
            result = self.solver.solve(position_from_view(view, deal, self.options, search))
            for c in totals:
                totals[c] += result.card_values[c]
            if self.time_budget is not None and i + 1 < k and time.perf_counter() - start > self.time_budget:
                break
        return totals

    def playout_totals(self, view: PlayerView, rng: np.random.Generator) -> dict[int, float]:
        """The summed tricks of the seat's side from now to the deal's end with every legal card, over ``playouts``
        deals drawn for the view and played out by the fallback (:class:`~whist_env.search.playout.Playouts`)."""
        assert self._playouts is not None and self.playouts is not None
        legal = view.legal
        cards = _cards(legal)
        if _one_run(view, legal):
            return {cards[-1]: 0.0}
        sampler = DealSampler(view)
        k = 1 if sampler.determined else self.playouts
        hands = np.array([sampler.sample(rng).hands for _ in range(k)], np.int64)
        sums = self._playouts.values(view, hands, cards).sum(axis=0)
        return {c: float(v) for c, v in zip(cards, sums, strict=True)}

    def __repr__(self) -> str:
        return (
            f"PIMCAgent({self.game_id!r}, samples={self.samples}, time_budget={self.time_budget}, "
            f"max_tricks={self.max_tricks}, horizon={self.horizon}, playouts={self.playouts})"
        )

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_solver"] = None  # the table is rebuilt on first use (copies and pickles stay small)
        return state


def _one_run(view: PlayerView, legal: int) -> bool:
    """Whether all legal cards are equivalent: one suit, adjacent among the cards not yet played."""
    played = 0
    for m in view.played:
        played |= m
    for _, c in view.trick:
        played &= ~(1 << c)
    out = FULL_DECK & ~played
    suit = (legal & -legal).bit_length() - 1
    s = suit // 13
    if legal & ~(0x1FFF << (13 * s)):
        return False
    lo = (legal & -legal).bit_length() - 1
    hi = legal.bit_length() - 1
    between = out & ((1 << (hi + 1)) - (1 << lo))
    return between == legal


def make_pimc(
    name: str | AgentSpec,
    game_id: GameRef,
    make_fallback: Callable[[AgentSpec], Agent] | None = None,
    **options: Any,
) -> Agent:
    """The PIMC agent from its agent spec (in a game with a search of its own, ``GameSpec.search_agent``, that agent
    with the spec's settings): ``"pimc"``, ``"pimc:samples=10,max_tricks=7"``, ``"pimc(samples=20,
    fallback=model(path=runs/x/model.zip))"`` (the grammar of :mod:`whist_env.agents.agent_spec`).

    Args:
        name: the spec, as text or parsed.
        game_id: the environment id, or the game's spec.
        make_fallback: builds the agent of a ``fallback`` spec (``whist_env.agents.make_agent`` passes itself).
        **options: the game's options.

    Raises:
        OptionError: for a spec the grammar rejects, naming what is allowed, or a game without a search agent.
    """
    spec = parse_agent_spec(name) if isinstance(name, str) else name
    if spec.name != "pimc":
        raise OptionError(f"not a PIMC agent spec: {str(spec)!r}; write 'pimc' or 'pimc(samples=10, max_tricks=7)'")
    game = searched_spec(game_id)  # before a fallback is built for nothing
    params: dict[str, Any] = spec.kwargs
    fallback = params.pop("fallback", None)
    if fallback is not None:
        if make_fallback is None:
            raise OptionError(f"{str(spec)!r} names a fallback agent: build it with whist_env.agents.make_agent")
        params["fallback"] = make_fallback(fallback)
    if game.search is None:  # the game's own search (searched_spec checked that it has one)
        for key in ("horizon", "tt_bits", "playouts"):
            if key in params:
                raise OptionError(
                    f"pimc: {key} is for the solver's PIMC ({', '.join(solved_games())}); {game.game_id}'s own search "
                    "takes samples, bid_samples, max_tricks, time_budget and fallback"
                )
        own: Agent = load(str(game.search_agent))(game, **params, **options)
        return own
    if "bid_samples" in params:
        raise OptionError(
            f"pimc: bid_samples is for a game with bids and a search of its own (Oh Hell); the solver's PIMC in "
            f"{game.game_id} takes samples, time_budget, max_tricks, horizon, tt_bits, playouts and fallback"
        )
    return PIMCAgent(game_id, **params, **options)


def pimc_agent(
    agent: AgentSpec, game: GameSpec[Any, Any], options: dict[str, Any], make: Callable[[AgentSpec], Agent]
) -> Agent:
    """``pimc`` / ``pimc(samples=K, fallback=<agent spec>)`` (the builder of
    :data:`whist_env.agents.factory.AGENT_BUILDERS`; the fallback is built with ``make``, so that the search package
    never imports the factory)."""
    return make_pimc(agent, game, make_fallback=make, **options)
