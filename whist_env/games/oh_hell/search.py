"""Oh Hell's search agent: Monte Carlo playouts of sampled deals, every seat playing for its own bid.

The double-dummy solver of :mod:`whist_env.search` counts tricks for two sides; Oh Hell has ``n`` seats that each
score their own deal, and a seat wants its bid exactly, not the most tricks. So here each decision is searched by
playouts instead of solves. For every candidate action (a legal card, or a legal bid) and every deal drawn for the
seat's view (:class:`whist_env.search.sampler.DealSampler`: its own hand and everything public kept, the voids
shown respected, uniform otherwise), the deal is played out on the batched engine's rows: the candidate first, then
every seat, this one included, by the heuristic's engine port, which bids from its hand and then takes tricks while
short of its bid and ducks once it is made. The candidate with the best mean score of this seat's deal (RULES.md
§4.6) over the same drawn deals is played. Ties go to the fallback's choice when it is one of them, else to the
lowest action.

This is the PIMC scheme (sample, evaluate each sample, average) with a playout as the evaluation. Unlike a
double-dummy solve, a playout's seats do not see the drawn hands (the heuristic reads only its own view), so no seat
plays as if it could see through the cards. The cost is linear in ``samples`` times the candidates: about 15 µs
for a playout of a whole 4-player deal, and 80 µs to draw a deal (``docs/results_search.md`` has the timings and the
strength).

A match (``episode="match"``) is searched one deal at a time: the playout ends with the deal, and its value is that
deal's score.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from whist_env.agents.base import Agent
from whist_env.cards import bits_of
from whist_env.errors import OptionError
from whist_env.games.oh_hell.engine import CFG_NUM_DEALS, CFG_SCHEDULE, OhHellVector
from whist_env.games.oh_hell.engine import step_one as _step_one
from whist_env.games.oh_hell.engine_heuristic import act_row
from whist_env.search.sampler import DealSampler
from whist_env.vector.core import (
    HAND,
    MAX_SEATS,
    NUM_SEATS,
    TO_ACT,
    jit,
)
from whist_env.vector.heuristics.table import TABLE_SIZE, new_work
from whist_env.view import PlayerView


@jit
def playout_kernel(
    base: np.ndarray, cfg: np.ndarray, rng: np.ndarray, hands: np.ndarray, actions: np.ndarray, out: np.ndarray
) -> None:
    """``out[s, a]``: the score of the deal for the seat to act in ``base`` when it takes ``actions[a]`` now with
    the hands ``hands[s]`` (every seat's, ``(S, n)`` masks) and every seat then plays the heuristic's engine port to
    the end of the deal. ``cfg`` is the engine's config array for a one-deal episode, so that the deal's end is the
    episode's; ``rng`` is a one-environment generator (a one-deal episode draws nothing from it)."""
    n = base[NUM_SEATS]
    me = base[TO_ACT]
    tb = np.zeros(TABLE_SIZE, np.int64)
    known = np.zeros(MAX_SEATS, np.int64)
    work = new_work()
    rewards = np.zeros(MAX_SEATS, np.float32)
    st = base.copy()
    for s in range(hands.shape[0]):
        for a in range(actions.shape[0]):
            st[:] = base
            for seat in range(n):
                st[HAND + seat] = hands[s, seat]
            done = _step_one(st, rng, 0, cfg, actions[a], rewards)
            while not done:
                done = _step_one(st, rng, 0, cfg, act_row(st, cfg, tb, known, work), rewards)
            out[s, a] = rewards[me]


class OhHellSearch:
    """Oh Hell's search agent (the ``pimc`` agent spec in Oh Hell; see the module docstring).

    Args:
        game: Oh Hell's ``GameSpec`` (``whist_env.games.oh_hell.spec.SPEC``; ``make_agent("pimc", "oh_hell_v0")``
            passes it).
        samples: deals drawn per card decision.
        bid_samples: deals drawn per bid.
        max_tricks: search the card play only with at most this many tricks left in the deal; earlier cards
            follow the fallback (None: every card is searched).
        time_budget: seconds per decision after which no more deals are drawn (None: always the full count; at
            least 4 deals are always played out). The result then depends on the machine's speed: leave it unset
            for reproducible runs.
        fallback: the agent that breaks ties and plays where the search does not (default: the game's heuristic).
        **options: the game's options.

    Raises:
        OptionError: for a bad game option or a bad search setting.
    """

    name = "pimc"

    def __init__(
        self,
        game: Any,
        samples: int = 40,
        bid_samples: int = 100,
        max_tricks: int | None = None,
        time_budget: float | None = None,
        fallback: Agent | None = None,
        **options: Any,
    ) -> None:
        for what, value in (("samples", samples), ("bid_samples", bid_samples)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise OptionError(f"pimc: {what} must be an int >= 1, got {value!r}")
        if max_tricks is not None and (not isinstance(max_tricks, int) or max_tricks < 1):
            raise OptionError(f"pimc: max_tricks must be None or an int >= 1, got {max_tricks!r}")
        self.samples = samples
        self.bid_samples = bid_samples
        self.max_tricks = max_tricks
        self.time_budget = time_budget
        self.options = dict(options)
        try:  # the engine of one table: its row width, its config array, and the options checked as the env's
            self._vec = OhHellVector(game, 1, seed=0, **self.options)
        except OptionError as err:
            raise OptionError(
                f"pimc in oh_hell_v0: {err}; the search's own settings: samples, bid_samples, max_tricks, "
                "time_budget, fallback"
            ) from None
        self.fallback: Agent = fallback if fallback is not None else game.heuristic_cls()(**self.options)
        self.searches = True  # whist-serve gives searching seats their own threads

    def act(self, view: PlayerView, rng: np.random.Generator) -> int:
        """A legal action: the searched bid or card, or the fallback's choice outside the search."""
        return self.act_with_totals(view, rng)[0]

    def act_with_totals(self, view: PlayerView, rng: np.random.Generator) -> tuple[int, dict[int, float] | None]:
        """:meth:`act`'s action and the mean deal score of each legal action it chose from (:meth:`action_values`;
        None where it did not search), with the same draws from ``rng``: what whist-serve's study panel shows is
        what the agent decided on, at no second search."""
        legal = view.legal
        if legal.bit_count() == 1:
            return legal.bit_length() - 1, None
        if view.phase == "bidding":
            count = self.bid_samples
        elif view.phase == "play":
            left = view.extra.hand_size - sum(view.tricks_won)
            if self.max_tricks is not None and left > self.max_tricks:
                return self.fallback.act(view, rng), None
            count = self.samples
        else:
            return self.fallback.act(view, rng), None
        values = self.action_values(view, rng, count)
        actions = bits_of(legal)
        totals = {int(a): float(v) for a, v in zip(actions, values, strict=True)}
        best = values.max()
        best_actions = [a for a, v in zip(actions, values, strict=True) if v >= best - 1e-9]
        if len(best_actions) > 1:
            choice = self.fallback.act(view, rng)
            if choice in best_actions:
                return choice, totals
        return best_actions[0], totals

    def action_values(self, view: PlayerView, rng: np.random.Generator, count: int) -> np.ndarray:
        """The mean deal score of each legal action (ascending) over ``count`` deals drawn for ``view``."""
        actions = np.array(bits_of(view.legal), np.int64)
        sampler = DealSampler(view)
        base = self._vec._view_row(view)
        cfg = self._vec.config.copy()
        cfg[CFG_NUM_DEALS] = 1
        cfg[CFG_SCHEDULE] = view.extra.hand_size
        rng_row = np.ones(1, np.uint64)
        n = view.num_players
        total = np.zeros(len(actions))
        done = 0
        start = time.perf_counter()
        chunk = 4 if self.time_budget is not None else count
        if sampler.determined:  # every hand is known (two players holding the whole pack): one deal is all
            count = 1
        while done < count:
            k = min(chunk, count - done)
            hands = np.empty((k, n), np.int64)
            for i in range(k):
                hands[i] = sampler.sample(rng).hands
            out = np.empty((k, len(actions)), np.float64)
            playout_kernel(base, cfg, rng_row, hands, actions, out)
            total += out.sum(axis=0)
            done += k
            if self.time_budget is not None and time.perf_counter() - start > self.time_budget:
                break
        return total / done

    def __repr__(self) -> str:
        return (
            f"OhHellSearch(samples={self.samples}, bid_samples={self.bid_samples}, max_tricks={self.max_tricks}, "
            f"time_budget={self.time_budget})"
        )
