"""Helpers for teaching with whist_env: the notebooks in ``notebooks/`` call these and hold no logic of their own.

    >>> from whist_env import teaching
    >>> print(teaching.games_overview())                        # one row per game
    >>> episode = teaching.play_episode("german_whist_v0", "heuristic", seed=3)
    >>> print(episode.transcript())                             # trick by trick
    >>> rows = teaching.knowledge_timeline(episode, seat=0)     # what seat 0's observation holds, trick by trick

What is here, by notebook:

* the tour: :func:`games_overview`, :func:`action_names`, :func:`legal_text`, :func:`advance`,
  :func:`compare_views`, :func:`sizes`;
* training and evaluation: :func:`train_ppo` (a short MaskablePPO run with a learning curve),
  :func:`baselines`, :func:`plot_learning_curve`;
* hidden information: :func:`play_episode`, :func:`knowledge_timeline`, :func:`plot_series`,
  :class:`Forgetful` (an agent without memory between decisions), :func:`duplicate_vs_single` and
  :func:`variance_table` (how much duplicate deals narrow a confidence interval).

torch, stable-baselines3 and matplotlib are imported only inside the functions that need them.
"""

from __future__ import annotations

import copy
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from whist_env.agents.base import Agent
from whist_env.agents.factory import make_agent
from whist_env.cards import NUM_CARDS, card_pretty, format_cards
from whist_env.evaluation.arena import ArenaConfig, TableResult, play_deals, summarise
from whist_env.evaluation.stats import MeanCI, mean_ci
from whist_env.registry import GAMES, env_module, make
from whist_env.rules.core import State, TrickGame
from whist_env.rules.tricks import trick_winner
from whist_env.view import PlayerView

AgentLike = str | Agent


# ---------------------------------------------------------------------- the games
def games_overview() -> str:
    """A markdown table of every registered game with its default options: seats, sizes and option names."""
    rows = [
        "| game | players | actions | observation | state() | options |",
        "|---|---|---|---|---|---|",
    ]
    for game_id in GAMES:
        env = make(game_id)
        raw = env.raw
        options = ", ".join(f"`{k}`" for k in raw.game.config_cls.allowed())
        rows.append(
            f"| `{game_id}` | {raw.game.num_players} | {raw.game.num_actions} | {raw.encoder.size} | "
            f"{raw.state_space.shape[0]} | {options} |"
        )
    return "\n".join(rows)


def _raw(env: Any) -> Any:
    """The raw AEC env under the default wrapper (or the env itself)."""
    return getattr(env, "raw", env)


def action_names(game: TrickGame | Any, actions: Any) -> list[str]:
    """Names of actions (``"7♣"``, ``"bid 3"``, ``"KEEP"``) given as an action mask (int8 vector or int bit
    mask) or a list of action ids; ``game`` is the rules or an env."""
    rules: TrickGame = game if isinstance(game, TrickGame) else _raw(game).game
    if isinstance(actions, int):
        ids = [a for a in range(rules.num_actions) if (actions >> a) & 1]
    elif isinstance(actions, np.ndarray) and actions.shape == (rules.num_actions,):
        ids = [int(a) for a in np.flatnonzero(actions)]
    else:
        ids = [int(a) for a in actions]
    return [card_pretty(a) if a < NUM_CARDS else rules.describe_action(a) for a in ids]


def legal_text(env: Any, agent: str | None = None) -> str:
    """``"player_2 (phase play) may choose: 7♣ (5), 9♣ (7)"``: the legal actions of ``agent`` (default: the
    agent to act) in words, with their action ids, read from its action mask."""
    agent = agent or env.agent_selection
    mask = env.observe(agent)["action_mask"]
    ids = [int(a) for a in np.flatnonzero(mask)]
    names = action_names(env, ids)
    phase = _raw(env).view(agent).phase
    if not ids:
        return f"{agent} (phase {phase}) has no legal action now (it is not its turn)"
    return f"{agent} (phase {phase}) may choose: " + ", ".join(f"{n} ({a})" for n, a in zip(names, ids, strict=True))


def _agents_for(
    game_id: str, agents: AgentLike | Sequence[AgentLike], n: int, options: Mapping[str, Any]
) -> list[Agent]:
    """One agent object per seat from one name/agent (copied for every seat) or one per seat."""
    specs: list[Any]
    if isinstance(agents, str) or callable(getattr(agents, "act", None)):
        specs = [agents] * n
    else:
        specs = list(agents)  # type: ignore[arg-type]
    if len(specs) != n:
        raise ValueError(f"{game_id} has {n} seats: give one agent for all of them or {n} agents, got {len(specs)}")
    out: list[Agent] = []
    for spec in specs:
        if isinstance(spec, str):
            out.append(make_agent(spec, game_id, **options))
        else:
            out.append(copy.deepcopy(spec))
    return out


def _options_of(env: Any) -> dict[str, Any]:
    """The options a (raw or wrapped) env was built with, as given to the game (defaults included)."""
    return _raw(env).game.config.as_dict()


def advance(env: Any, decisions: int, agent: AgentLike = "heuristic", seed: int = 0) -> None:
    """Play ``decisions`` decisions of an AEC env (after ``reset``) with ``agent`` in every seat.

    Stops early when the episode ends. Useful to reach a position worth looking at (a bid, a trick).
    """
    raw = _raw(env)
    game_id = raw.metadata["name"]
    players = _agents_for(game_id, agent, len(raw.possible_agents), _options_of(env))
    rng = np.random.default_rng(seed)
    for _ in range(decisions):
        name = env.agent_selection
        if env.terminations[name] or env.truncations[name]:
            return
        seat = raw.agent_seat[name]
        env.step(players[seat].act(raw.view(name), rng))


def _piece_text(value: Any, kind: str, max_cards: int | None = None) -> str:
    if kind == "cards":
        if max_cards is not None and len(value) > max_cards:
            return f"{len(value)} cards"
        return format_cards(value, pretty=True) if value else "-"
    if value in (None, []):
        return "-"
    if isinstance(value, list):
        return " ".join(value)
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def compare_views(
    env: Any, agents: Sequence[str] = ("player_0", "player_1"), show_same: bool = True, max_cards: int = 16
) -> str:
    """A markdown table: every observation piece (rows) as each of ``agents`` sees it now (columns).

    Seat-indexed pieces are relative (``me``, ``opponent``, ``left``, ...), so the same row holds each
    agent's own idea of "my hand". Rows where every agent's piece is empty are left out; a ``≠`` marks
    rows where the agents' pieces differ. ``show_same=False`` keeps only those. Card sets of more than
    ``max_cards`` cards are shown as a count.
    """
    layout = _raw(env).encoder.layout
    decoded = [layout.unpack(env.observe(a)["observation"]) for a in agents]
    rows = ["| piece | " + " | ".join(agents) + " | |", "|---|" + "---|" * len(agents) + "---|"]
    for piece in layout.pieces:
        texts = [_piece_text(d[piece.name], piece.kind, max_cards) for d in decoded]
        if all(t in ("-", "0") for t in texts) and piece.kind in ("cards", "flags", "onehot"):
            continue
        differ = len(set(texts)) > 1
        if differ or show_same:
            rows.append(f"| `{piece.name}` | " + " | ".join(texts) + f" | {'≠' if differ else ''} |")
    return "\n".join(rows)


def sizes(env: Any) -> dict[str, int]:
    """Lengths of one agent's observation, of the action mask and of ``state()`` (the omniscient vector)."""
    raw = _raw(env)
    return {
        "observation": int(raw.encoder.size),
        "action_mask": int(raw.game.num_actions),
        "state": int(raw.state_space.shape[0]),
        "state: hidden part (every hand, blinds, stock, ...)": int(raw.hidden_layout.size),
    }


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
    game_id: str,
    agents: AgentLike | Sequence[AgentLike] = "heuristic",
    seed: int = 0,
    options: Mapping[str, Any] | None = None,
) -> Episode:
    """Play one seeded episode of ``game_id`` through the rules with ``agents`` (one for every seat, or one per
    seat), keeping the state at the start and after every trick (see :class:`Episode`).

    The deal comes from ``numpy.random.default_rng(seed)``; the agents draw from ``default_rng([seed, 1])``.
    """
    opts = dict(options or {})
    game: TrickGame = env_module(game_id).raw_env.game_cls(**opts)
    players = _agents_for(game_id, agents, game.num_players, opts)
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
            lines.append(f"{name}: {game.describe_action(action)}")
            continue
        trick.append(f"{name} {card_pretty(action)}")
        if (state.deal_index, state.trick_number) != before:
            winner = trick_winner(played, trump)
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
    raw_cls = env_module(episode.game.game_id).raw_env
    encoder = raw_cls.make_encoder(episode.game)
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


def table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str] | None = None, every: int = 1) -> str:
    """Rows of dicts as a markdown table (every ``every``-th row, and the last)."""
    if not rows:
        return "(no rows)"
    cols = list(columns) if columns is not None else list(rows[0])
    keep = [r for i, r in enumerate(rows) if i % every == 0 or i == len(rows) - 1]
    out = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in keep:
        cells = [f"{r[c]:.3g}" if isinstance(r[c], float) else str(r[c]) for c in cols]
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


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

    def __init__(self, agent: AgentLike, game_id: str = "", **options: Any) -> None:
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
    game_id: str,
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
    base = ArenaConfig(game_id, tuple(agents), num_deals, seed, opts, names=tuple(names))
    results, wall = play_deals(base)
    report = summarise(base, results, wall)
    per_deal = len(results[0].tables)
    tables = num_deals * per_deal
    # Another seed: the single-play deals are independent of the duplicate ones.
    single_cfg = ArenaConfig(game_id, tuple(agents), tables, seed + 7919, opts, names=tuple(names))
    single_results, _ = play_deals(single_cfg)
    diffs = []
    for r in single_results:
        diffs.append(_table_difference(r.tables[r.index % per_deal]))
    labels = base.labels()
    return VarianceComparison(game_id, (labels[0], labels[1]), report.pairs[0].diff, mean_ci(diffs), tables)


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


# ---------------------------------------------------------------------- a short training run
@dataclass
class TrainingRun:
    """The result of :func:`train_ppo`.

    Attributes:
        game_id: the game.
        options: the game's options.
        model: the trained ``MaskablePPO`` model.
        model_path: where the final model was saved (``make_agent(f"model:{model_path}", game_id, **options)``).
        curve: one row per evaluation: ``timesteps``, ``mean``/``ci95`` (the learner's reward per deal against
            ``eval_opponent``) and ``diff``/``diff_ci95`` (learner − opponent, paired over duplicate deals).
        episode_returns: the learner's return of every training episode, in order.
        eval_opponent: who the evaluations were played against.
        seconds: wall time of the run, evaluations included.
    """

    game_id: str
    options: dict[str, Any]
    model: Any
    model_path: str
    curve: list[dict[str, Any]]
    episode_returns: list[float] = field(default_factory=list)
    eval_opponent: str = "heuristic"
    seconds: float = 0.0

    def agent(self) -> Agent:
        """The trained policy as an agent (a :class:`~whist_env.agents.model.ModelAgent` on the saved file)."""
        return make_agent(f"model:{self.model_path}", self.game_id, **self.options)


def _eval_row(
    game_id: str, options: dict[str, Any], learner: AgentLike, opponent: str, deals: int, seed: int
) -> dict[str, float]:
    from whist_env.evaluation import evaluate

    report = evaluate(game_id, [learner, opponent], deals, seed, options, names=("learner", opponent))
    me = report.agent("learner")
    diff = report.pairs[0].diff
    return {"mean": me.mean.mean, "ci95": me.mean.half_width, "diff": diff.mean, "diff_ci95": diff.half_width}


def train_ppo(
    game_id: str,
    options: Mapping[str, Any] | None = None,
    opponents: Any = "heuristic",
    total_timesteps: int = 4000,
    eval_every: int = 1000,
    eval_deals: int = 100,
    eval_opponent: str = "heuristic",
    seed: int = 0,
    n_steps: int = 128,
    batch_size: int = 64,
    n_epochs: int = 10,
    learning_rate: float = 1e-3,
    net_arch: Sequence[int] = (128, 128),
    torch_threads: int = 1,
    out_dir: str | Path | None = None,
) -> TrainingRun:
    """A short ``MaskablePPO`` run in the single-agent env, evaluated on duplicate deals as it goes.

    The learner holds a random seat each episode; ``opponents`` play the others inside the env
    (:func:`whist_env.envs.single_agent.make_single_agent`). Before training and every ``eval_every`` steps the
    current policy (its weights copied into one greedy evaluation agent) is played against ``eval_opponent`` over
    ``eval_deals`` duplicate deals (the same deals every time, so the points of the curve differ by the policy
    only); evaluations run between rollouts (:func:`whist_env.learn.run_ppo`, the loop ``training/train.py``
    runs too), so with ``eval_every`` not a multiple of ``n_steps`` they fall on the first rollout boundary
    after it. For real runs use ``training/train.py`` with a config from ``configs/``.

    Args:
        game_id: the environment id.
        options: the game's options.
        opponents: what :func:`~whist_env.envs.single_agent.make_single_agent` accepts (a name, an agent, ...).
        total_timesteps: learner decisions to train for.
        eval_every: steps between evaluations.
        eval_deals: duplicate deals per evaluation.
        eval_opponent: the agent name evaluations are played against.
        seed: seeds the env, the network and the evaluation deals.
        n_steps: rollout length per update.
        batch_size: minibatch size.
        n_epochs: passes over each rollout.
        learning_rate: Adam's step size.
        net_arch: hidden layer sizes of the policy and value networks.
        torch_threads: ``torch.set_num_threads`` for the run (the previous setting is restored after it).
        out_dir: where to save models (default a new temporary directory).

    Returns:
        A :class:`TrainingRun` with the model, its saved path and the learning curve.

    Note:
        Stable-Baselines3 seeds Python's, NumPy's and torch's global generators with ``seed`` when it builds the
        model; the env and the evaluations use their own generators.
    """
    import time

    import torch

    start = time.perf_counter()
    opts = dict(options or {})
    out = Path(out_dir) if out_dir is not None else Path(tempfile.mkdtemp(prefix=f"whist_{game_id}_"))
    out.mkdir(parents=True, exist_ok=True)
    threads = torch.get_num_threads()
    torch.set_num_threads(torch_threads)
    try:
        ppo_kwargs = {
            "n_steps": n_steps,
            "batch_size": batch_size,
            "n_epochs": n_epochs,
            "learning_rate": learning_rate,
            "net_arch": list(net_arch),
        }
        evaluation = (eval_every, eval_deals, eval_opponent)
        return _train(game_id, opts, opponents, total_timesteps, evaluation, seed, out, ppo_kwargs, start)
    finally:
        torch.set_num_threads(threads)


def _train(
    game_id: str,
    opts: dict[str, Any],
    opponents: Any,
    total_timesteps: int,
    evaluation: tuple[int, int, str],
    seed: int,
    out: Path,
    ppo_kwargs: dict[str, Any],
    start: float,
) -> TrainingRun:
    import time

    from whist_env.envs.single_agent import make_single_agent
    from whist_env.learn import Periodic, PolicyAgent, make_ppo, run_ppo

    eval_every, eval_deals, eval_opponent = evaluation
    env = make_single_agent(game_id, opponents=opponents, **opts)
    # The package's training loop (the one training/train.py runs), with one task: evaluate between rollouts.
    model = make_ppo(env, seed=seed, gamma=1.0, **ppo_kwargs)
    eval_seed = 1_000_003 + seed
    curve: list[dict[str, Any]] = []
    returns: list[float] = []
    # One greedy evaluation agent; each evaluation first copies the model's current weights into it.
    learner = PolicyAgent.from_policy(model.policy, env.encoder, deterministic=True)

    def evaluate_now(timesteps: int) -> None:
        learner.sync(model.policy)
        row = _eval_row(game_id, opts, learner, eval_opponent, eval_deals, eval_seed)
        curve.append({"timesteps": timesteps, **row})

    run_ppo(model, total_timesteps, [Periodic("evaluate", eval_every, evaluate_now)], on_episode=returns.append)
    evaluate_now(int(model.num_timesteps))
    final = out / "model.zip"
    model.save(final)
    # save_model_metadata(final, game_id, opts)  # TODO(lead): wire the model fingerprint (issue 16) here
    return TrainingRun(
        game_id, opts, model, str(final), curve, returns, eval_opponent, round(time.perf_counter() - start, 1)
    )


def baselines(
    game_id: str,
    agents: Sequence[str],
    opponent: str,
    num_deals: int,
    seed: int,
    options: Mapping[str, Any] | None = None,
) -> dict[str, float]:
    """Each of ``agents``' mean reward per deal against ``opponent`` on the same duplicate deals that
    :func:`train_ppo` evaluates on (pass its ``seed``): the reference lines of a learning curve."""
    opts = dict(options or {})
    return {a: _eval_row(game_id, opts, a, opponent, num_deals, 1_000_003 + seed)["mean"] for a in agents}


def plot_learning_curve(run: TrainingRun, baseline: Mapping[str, float] | None = None, window: int = 100) -> Any:
    """Two panels: the evaluation curve (the greedy policy's mean reward per deal against the opponent, with its
    95% interval, and ``baseline`` agents' means as dashed lines), and the training episodes' returns under the
    sampled policy (moving average over ``window`` episodes). Returns the matplotlib Figure."""
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 3.8))
    x = [r["timesteps"] for r in run.curve]
    mean = np.array([r["mean"] for r in run.curve])
    ci = np.array([r["ci95"] for r in run.curve])
    ax1.plot(x, mean, marker="o", label="PPO learner")
    ax1.fill_between(x, mean - ci, mean + ci, alpha=0.25, label="95% interval")
    for i, (name, value) in enumerate((baseline or {}).items()):
        ax1.axhline(value, linestyle="--", color=f"C{i + 2}", label=f"{name} (same deals)")
    ax1.set_xlabel("training steps (learner decisions)")
    ax1.set_ylabel("mean reward per deal")
    ax1.set_title(f"{run.game_id} against {run.eval_opponent}: duplicate deals")
    ax1.grid(alpha=0.3)
    ax1.legend(fontsize="small")
    r = np.asarray(run.episode_returns, dtype=float)
    if len(r):
        w = max(1, min(window, len(r)))
        smooth = np.convolve(r, np.ones(w) / w, mode="valid")
        ax2.plot(np.arange(w - 1, len(r)), smooth)
    ax2.set_xlabel("training episode")
    ax2.set_ylabel(f"return, moving average over {window} episodes")
    ax2.set_title("training episodes (the sampled, exploring policy)")
    ax2.grid(alpha=0.3)
    fig.tight_layout()
    plt.close(fig)  # shown once, as the cell's value
    return fig


__all__ = [
    "Episode",
    "Forgetful",
    "TrainingRun",
    "VarianceComparison",
    "action_names",
    "advance",
    "baselines",
    "compare_views",
    "duplicate_vs_single",
    "games_overview",
    "knowledge_timeline",
    "legal_text",
    "play_episode",
    "plot_learning_curve",
    "plot_series",
    "sizes",
    "table",
    "train_ppo",
    "variance_table",
]
