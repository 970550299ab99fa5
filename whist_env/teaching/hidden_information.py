"""Helpers of the hidden-information notebook (``notebooks/03_hidden_information.ipynb``).

:func:`play_episode` and :func:`knowledge_timeline` (what a seat's observation holds, trick by trick),
:func:`plot_series`, :class:`Forgetful` (an agent without memory between decisions), and
:func:`duplicate_vs_single` with :func:`variance_table` (how much duplicate deals narrow a confidence interval).

matplotlib is imported only inside :func:`plot_series`.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from whist_env.agents.factory import make_agent
from whist_env.cards import NUM_CARDS, card_pretty
from whist_env.evaluation.arena import ArenaConfig, TableResult, play_deals, summarise
from whist_env.evaluation.stats import MeanCI, mean_ci
from whist_env.registry import GameRef, get_spec, spec_of
from whist_env.rules.core import State, TrickGame
from whist_env.teaching.common import AgentLike, _agents_for
from whist_env.view import PlayerView


# ---------------------------------------------------------------------- playing an episode through the rules
@dataclass
class Episode:
    """One episode played through the rules, with the state kept at the start and after every trick.

    Attributes:
        game: the rules it was played with.
        states: the state at the start of the episode and after each completed trick (copies).
        lines: the transcript, one line per trick (and per bid or exchange decision).
        returns: each seat's return. # (n,)
    """

    game: TrickGame
    states: list[State]
    lines: list[str]
    returns: tuple[float, ...]

    def transcript(self, max_lines: int | None = None) -> str:
        """The transcript, trick by trick (the first ``max_lines`` lines when given)."""
        lines = self.lines if max_lines is None else self.lines[:max_lines]
        more = len(self.lines) - len(lines)
        return "\n".join(lines) + (f"\n… {more} more lines" if more > 0 else "")

    def render(self, index: int = -1, seat: int | None = None) -> str:
        """The table at ``states[index]``: every hand, or what ``seat`` may see."""
        return self.game.render(self.states[index], seat)


def play_episode(
    game_id: GameRef,
    agents: AgentLike | Sequence[AgentLike] = "heuristic",
    seed: int = 0,
    options: Mapping[str, Any] | None = None,
) -> Episode:
    """Play one seeded episode of a game (by id or by spec) through the rules with ``agents`` (one for every seat,
    or one per seat), keeping the state at the start and after every trick (see :class:`Episode`).

    The deal comes from ``numpy.random.default_rng(seed)``; the agents draw from ``default_rng([seed, 1])``. Each
    trick's winner in the transcript is the one the game's rules give it (``TrickGame.trick_winner``).
    """
    opts = dict(options or {})
    spec = spec_of(game_id)
    game: TrickGame = spec.make_rules(**opts)
    players = _agents_for(spec, agents, game.num_players, opts)
    rng = np.random.default_rng(seed)
    agent_rng = np.random.default_rng([seed, 1])
    state = game.new_episode(rng)
    states = [state.copy()]
    lines: list[str] = []
    trick: list[str] = []
    while not state.done:
        seat = state.to_act
        action = int(players[seat].act(game.view(state, seat), agent_rng))
        before = (state.deal_index, state.trick_number)
        played = list(state.trick) + [(seat, action)]
        trump = state.trump
        game.step(state, action, rng)
        name = game.seat_name(seat)
        if action >= NUM_CARDS:
            lines.append(f"{name}: {game.action_text(action)}")
            continue
        trick.append(f"{name} {card_pretty(action)}")
        if (state.deal_index, state.trick_number) != before:
            winner = game.trick_winner(played, trump)
            lines.append(f"deal {before[0] + 1} trick {before[1] + 1}: {', '.join(trick)} → {game.seat_name(winner)}")
            trick = []
            states.append(state.copy())
    return Episode(game, states, lines, tuple(float(r) for r in state.returns))


def _count(value: Any, kind: str) -> Any:
    if kind in ("cards", "flags"):
        return len(value)
    return value


def knowledge_timeline(episode: Episode, seat: int = 0, pieces: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """What ``seat``'s observation holds at the start and after each trick of ``episode``: one row per state,
    ``{"trick": k, piece: number of cards (card pieces), or the value (counts, labels)}``.

    ``pieces`` defaults to the card pieces; ``"placed"`` (52 minus the unseen cards: the cards whose place
    the observation tells) is always added.
    """
    encoder = get_spec(episode.game.game_id).make_encoder(episode.game)
    layout = encoder.layout
    names = list(pieces) if pieces is not None else [p.name for p in layout.pieces if p.kind == "cards"]
    rows = []
    for k, state in enumerate(episode.states):
        decoded = layout.unpack(encoder.encode(episode.game.view(state, seat)))
        row: dict[str, Any] = {"trick": k}
        for name in names:
            row[name] = _count(decoded[name], layout.piece(name).kind)
        row["placed"] = NUM_CARDS - len(decoded["unseen"])  # type: ignore[arg-type]
        rows.append(row)
    return rows


def plot_series(
    series: Mapping[str, Sequence[Mapping[str, Any]]],
    y: str | Sequence[str],
    x: str = "trick",
    title: str = "",
    ylabel: str = "cards",
    ax: Any = None,
) -> Any:
    """Line plot of column(s) ``y`` against ``x`` for each labelled list of rows; returns the matplotlib Figure."""
    import matplotlib.pyplot as plt

    created = ax is None
    if ax is None:
        fig, ax = plt.subplots(figsize=(7, 3.5))
    else:
        fig = ax.figure
    ys = [y] if isinstance(y, str) else list(y)
    for label, rows in series.items():
        for col in ys:
            name = label if len(ys) == 1 else f"{label}: {col}"
            ax.plot([r[x] for r in rows], [r[col] for r in rows], marker=".", label=name)
    ax.set_xlabel(x)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    if created:
        plt.close(fig)  # shown once, as the cell's value, rather than also by the inline backend
    return fig


# ---------------------------------------------------------------------- memory
class Forgetful:
    """An agent with no memory between decisions: a fresh copy of ``agent`` decides every time.

    It plays from the view alone, which is what a memoryless policy (an MLP on the observation) can do;
    comparing it with the agent itself measures what the agent's own memory is worth.

    Args:
        agent: an agent name (``"heuristic"``) or an agent object.
        game_id: the game (needed when ``agent`` is a name).
        **options: the game's options (when ``agent`` is a name).
    """

    def __init__(self, agent: AgentLike, game_id: GameRef = "", **options: Any) -> None:
        self.template = make_agent(agent, game_id, **options) if isinstance(agent, str) else agent
        self.name = f"forgetful {getattr(self.template, 'name', type(self.template).__name__)}"

    def act(self, view: PlayerView, rng: np.random.Generator) -> int:
        return int(copy.deepcopy(self.template).act(view, rng))


# ---------------------------------------------------------------------- duplicate deals and variance
@dataclass(frozen=True)
class VarianceComparison:
    """The difference ``A − B`` of two agents measured with duplicate deals and without.

    Attributes:
        game_id: the game.
        agents: the two agents' labels.
        duplicate: ``A − B`` over ``num_deals`` deals, each replayed with the seats rotated (paired per deal).
        single: ``A − B`` over as many tables as the duplicate run played, each deal played once
            (seats still rotated from deal to deal, so both sides hold each position equally often).
        tables: tables played by each method.
    """

    game_id: str
    agents: tuple[str, str]
    duplicate: MeanCI
    single: MeanCI
    tables: int

    @property
    def width_ratio(self) -> float:
        """How many times wider the interval is without duplicates."""
        return self.single.half_width / self.duplicate.half_width if self.duplicate.half_width > 0 else float("inf")

    @property
    def deals_factor(self) -> float:
        """About how many times more tables the single-play method needs for the same interval (ratio²)."""
        return self.width_ratio**2


def duplicate_vs_single(
    game_id: GameRef,
    agents: Sequence[AgentLike],
    num_deals: int,
    seed: int = 0,
    options: Mapping[str, Any] | None = None,
    names: Sequence[str] = (),
) -> VarianceComparison:
    """Measure ``agents[0] − agents[1]`` with the arena's duplicate deals, and with the same number of tables
    of independent deals played once each; return both intervals (:class:`VarianceComparison`).

    Both use the arena (:mod:`whist_env.evaluation.arena`): the duplicate estimate is its paired per-deal
    difference; the single-play estimate takes, from a run over ``tables`` deals, only table
    ``i % tables_per_deal`` of deal ``i`` (every table is a new deal, no hand is replayed).
    """
    if len(agents) != 2:
        raise ValueError(f"compare exactly two agents, got {len(agents)}")
    opts = dict(options or {})
    spec = spec_of(game_id)
    base = ArenaConfig(spec.game_id, tuple(agents), num_deals, seed, opts, names=tuple(names), spec=spec)
    results, wall = play_deals(base)
    report = summarise(base, results, wall)
    per_deal = len(results[0].tables)
    tables = num_deals * per_deal
    # Another seed: the single-play deals are independent of the duplicate ones.
    single_cfg = ArenaConfig(spec.game_id, tuple(agents), tables, seed + 7919, opts, names=tuple(names), spec=spec)
    single_results, _ = play_deals(single_cfg)
    diffs = []
    for r in single_results:
        diffs.append(_table_difference(r.tables[r.index % per_deal]))
    labels = base.labels()
    return VarianceComparison(spec.game_id, (labels[0], labels[1]), report.pairs[0].diff, mean_ci(diffs), tables)


def _table_difference(t: TableResult) -> float:
    """Agent 0's mean return at one table minus agent 1's (over the seats each held)."""
    mean = []
    for j in (0, 1):
        seats = [r for a, r in zip(t.assignment, t.returns, strict=True) if a == j]
        mean.append(sum(seats) / len(seats))
    return mean[0] - mean[1]


def variance_table(comparisons: Sequence[VarianceComparison]) -> str:
    """A markdown table of :func:`duplicate_vs_single` results."""
    rows = [
        "| game | A − B | tables | duplicate deals (95% CI) | each deal once (95% CI) | width ratio | tables × |",
        "|---|---|---|---|---|---|---|",
    ]
    for c in comparisons:
        rows.append(
            f"| `{c.game_id}` | {c.agents[0]} − {c.agents[1]} | {c.tables} | {c.duplicate.text(2)} | "
            f"{c.single.text(2)} | {c.width_ratio:.2f} | {c.deals_factor:.1f} |"
        )
    return "\n".join(rows)


__all__ = [
    "Episode",
    "Forgetful",
    "VarianceComparison",
    "duplicate_vs_single",
    "knowledge_timeline",
    "play_episode",
    "plot_series",
    "variance_table",
]
