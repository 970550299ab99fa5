"""What the notebooks' helpers share: how an agent is given (a name or an object), and a markdown table."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from whist_env.agents.base import Agent
from whist_env.agents.factory import make_agent
from whist_env.registry import GameRef, game_id_of

AgentLike = str | Agent


def _agents_for(
    game_id: GameRef, agents: AgentLike | Sequence[AgentLike], n: int, options: Mapping[str, Any]
) -> list[Agent]:
    """One agent object per seat from one name/agent (copied for every seat) or one per seat."""
    specs: list[Any]
    if isinstance(agents, str) or callable(getattr(agents, "act", None)):
        specs = [agents] * n
    else:
        specs = list(agents)  # type: ignore[arg-type]
    if len(specs) != n:
        raise ValueError(
            f"{game_id_of(game_id)} has {n} seats: give one agent for all of them or {n} agents, got {len(specs)}"
        )
    out: list[Agent] = []
    for spec in specs:
        if isinstance(spec, str):
            out.append(make_agent(spec, game_id, **options))
        else:
            out.append(copy.deepcopy(spec))
    return out


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


__all__ = ["AgentLike", "table"]
