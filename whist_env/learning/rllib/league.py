"""Who sits where in RLlib self-play: agent ids, the policy mapping and the league's draw of a table.

Plain Python (no Ray), so that the rules of the league can be read and tested on their own.

Every seat at a table gets a *role* per episode: the learning policy (:data:`MAIN`), one of the frozen
snapshots of it (``snapshot_<k>``), or a scripted agent (``random``, ``heuristic``, any agent spec).
Roles are drawn per *side* (``GameSpec.sides``), so partners in classic whist always share one; at
least one side is :data:`MAIN`, and every other side draws its role from the league's weights.

The seats RLlib plays (main and snapshots) appear in the environment as agents named
``player_<seat>@<module id>``: the module that plays a seat is written in its agent id, and the policy
mapping (:func:`module_for_agent`) only reads it back. This works for every seat count (Oh Hell 2-8)
and needs no state shared between the environment and the mapping, so it holds on any number of env
runners and machines.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from whist_env.errors import OptionError

MAIN = "main"
"""Module id of the shared policy that learns (every seat it plays feeds its updates)."""
SNAPSHOT = "snapshot"
"""The league weight key for "one of the frozen snapshots, drawn uniformly"."""
SEP = "@"


def snapshot_id(slot: int) -> str:
    """Module id of snapshot slot ``slot`` (``snapshot_0``, ...)."""
    return f"{SNAPSHOT}_{slot}"


def module_ids(pool: int) -> list[str]:
    """Every module id of a league with ``pool`` snapshot slots: main first."""
    return [MAIN] + [snapshot_id(k) for k in range(pool)]


def agent_id(seat: int, module: str) -> str:
    """The agent id of ``seat`` played by ``module``: ``player_2@main``."""
    return f"player_{seat}{SEP}{module}"


def seat_of(agent: str) -> int:
    """The seat of an agent id made by :func:`agent_id`."""
    return int(agent.split(SEP, 1)[0].rsplit("_", 1)[1])


def module_for_agent(agent: Any, episode: Any = None, **kwargs: Any) -> str:
    """The policy mapping (RLlib's ``policy_mapping_fn``): the module written in the agent id.

    Args:
        agent: an agent id made by :func:`agent_id`.
        episode: unused (the mapping needs nothing but the id).
        **kwargs: unused (RLlib may pass more in later versions).

    Raises:
        ValueError: for an id that names no module.
    """
    name, sep, module = str(agent).partition(SEP)
    if not sep or not module:
        raise ValueError(f"agent id {agent!r} names no module; expected 'player_<seat>{SEP}<module id>'")
    return module


def check_opponents(opponents: Mapping[str, float]) -> None:
    """Check league weights: non-negative numbers with a positive sum.

    Raises:
        OptionError: naming the bad weights and what is allowed.
    """
    bad = {k: w for k, w in opponents.items() if not isinstance(w, (int, float)) or isinstance(w, bool) or w < 0}
    if not opponents or bad or sum(opponents.values()) <= 0:
        raise OptionError(
            f"opponents must map '{MAIN}', '{SNAPSHOT}' or an agent spec (random, heuristic, ...) to non-negative "
            f"weights with a positive sum, got {dict(opponents)}"
        )


def scripted_names(opponents: Mapping[str, float]) -> list[str]:
    """The scripted league members: every key of ``opponents`` other than main and snapshot."""
    return [k for k in opponents if k not in (MAIN, SNAPSHOT)]


def draw_table(
    sides: Sequence[int], opponents: Mapping[str, float], snapshots: int, rng: np.random.Generator
) -> list[str]:
    """The role of each seat for one episode.

    One side (drawn uniformly) is :data:`MAIN`; every other side draws a key of ``opponents`` by its
    weight. :data:`SNAPSHOT` becomes one of the ``snapshots`` filled slots, drawn uniformly, or
    :data:`MAIN` while there is none yet.

    Args:
        sides: the side of each seat (``GameSpec.sides``): seats of one side share a role.
        opponents: league weights (see :func:`check_opponents`).
        snapshots: snapshot slots filled so far.
        rng: the only source of randomness.

    Returns:
        ``roles[seat]``: a module id (``main``, ``snapshot_<k>``) or a scripted agent's spec.
    """
    num_sides = max(sides) + 1
    keys = list(opponents)
    weights = np.array([opponents[k] for k in keys], dtype=np.float64)
    weights /= weights.sum()
    learner = int(rng.integers(num_sides))
    side_roles = []
    for side in range(num_sides):
        role = MAIN if side == learner else keys[int(rng.choice(len(keys), p=weights))]
        if role == SNAPSHOT:
            role = snapshot_id(int(rng.integers(snapshots))) if snapshots > 0 else MAIN
        side_roles.append(role)
    return [side_roles[side] for side in sides]


def is_module(role: str) -> bool:
    """Whether a role is played by an RLlib module (main or a snapshot) rather than a scripted agent."""
    return role == MAIN or role.startswith(f"{SNAPSHOT}_")


def table_kind(roles: Sequence[str]) -> str:
    """What main faced at a table: ``self``, or the other roles (snapshots as ``snapshot``) joined by ``+``."""
    others = sorted({SNAPSHOT if r.startswith(f"{SNAPSHOT}_") else r for r in roles if r != MAIN})
    return "+".join(others) if others else "self"
