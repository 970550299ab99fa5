"""Helpers of the tour notebook (``notebooks/01_tour.ipynb``): the games, their actions, and one position
seen from several seats.

:func:`games_overview`, :func:`action_names`, :func:`legal_text`, :func:`advance`, :func:`compare_views`,
:func:`sizes`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from whist_env.cards import bits_of, format_cards
from whist_env.envs.registration import make
from whist_env.registry import game_ids
from whist_env.rules.core import TrickGame
from whist_env.teaching.common import AgentLike, _agents_for


# ---------------------------------------------------------------------- the games
def games_overview() -> str:
    """A markdown table of every registered game with its default options: seats, sizes and option names."""
    rows = [
        "| game | players | actions | observation | state() | options |",
        "|---|---|---|---|---|---|",
    ]
    for game_id in game_ids():
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
        ids = bits_of(actions)
    elif isinstance(actions, np.ndarray) and actions.shape == (rules.num_actions,):
        ids = [int(a) for a in np.flatnonzero(actions)]
    else:
        ids = [int(a) for a in actions]
    return [rules.action_text(a) for a in ids]


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


__all__ = ["action_names", "advance", "compare_views", "games_overview", "legal_text", "sizes"]
