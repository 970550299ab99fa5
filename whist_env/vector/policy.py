"""The batched forms of agents that search builds on as well as the arena and the learner env: :class:`BatchedPolicy`
(a pretrained network over a batch of decisions), :func:`batched_pretrained` (it, built from a ``pretrained`` spec),
:func:`sparse_affine` (its sparse first layer) and the :class:`StateAgent` protocol (the heuristic ports). The arena
(:mod:`whist_env.evaluation.batched`) re-exports them; PIMC's playouts (:mod:`whist_env.search.playout`) and the
learner env (:mod:`whist_env.vector.learner`) import them from here, which imports no agent factory.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np

from whist_env.agents.agent_spec import AgentSpec, parse_agent_spec
from whist_env.agents.pretrained import PretrainedAgent, choose
from whist_env.errors import OptionError
from whist_env.registry import GameRef
from whist_env.vector.core import RawVectorEnv, jit

__all__ = ["NEAR_TIE", "BatchedPolicy", "StateAgent", "batched_pretrained", "is_pretrained", "sparse_affine"]

NEAR_TIE = 1e-3
"""A network's decision whose two best legal logits are closer than this is recomputed for its row alone (see
:class:`BatchedPolicy`)."""


@runtime_checkable
class StateAgent(Protocol):
    """A batched agent that reads the engine's state block (the heuristic ports)."""

    def act_state(self, venv: RawVectorEnv, envs: np.ndarray) -> np.ndarray:
        """The action of the seat to act in each environment of ``envs`` (indices into ``venv``).  # (k,)"""
        ...


class BatchedPolicy:
    """The network of a :class:`~whist_env.agents.pretrained.PretrainedAgent`, played on a batch of decisions at once:
    the same masked argmax (or softmax sample) of the same logits, with the same suit renaming
    (``canonical_suits``) and the same check of the network's game, options and layout (done by the agent).

    Deterministic play makes the agent's own choices: one forward pass for the batch, except that a row whose two
    best legal logits lie within :data:`NEAR_TIE` of each other is computed again alone, as the agent computes it
    (a batch's matrix product rounds differently from a single row's, by about 1e-5, enough to flip a near tie).

    Args:
        agent: the agent whose policy, renaming and ``deterministic`` setting are played.
        rng: the generator samples are drawn from (``deterministic=False`` only).
    """

    def __init__(self, agent: Any, rng: np.random.Generator) -> None:
        self.agent = agent
        self.name = str(agent.name)
        self.rng = rng

    def __call__(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        canonical = self.agent.canonical
        perm = None
        if canonical is not None:
            obs, mask, perm = canonical.forward(obs, mask)
        legal = np.asarray(mask, bool)
        policy = self.agent.policy
        # as choose(): float64 logits, illegal ones -inf, the argmax's ties to the lowest action
        masked = np.where(legal, policy.logits(obs, sparse_affine).astype(np.float64), -np.inf)
        if self.agent.deterministic:
            actions = masked.argmax(axis=1)
            # A matrix product over a batch rounds differently from one row's (measured: up to 2.5e-5 on the shipped
            # networks), which could flip a near tie: there the row is decided as the agent decides it, alone.
            if legal.shape[1] > 1:
                top = np.partition(masked, -2, axis=1)
                for r in np.flatnonzero(top[:, -1] - top[:, -2] < NEAR_TIE):
                    actions[r] = choose(policy.logits(obs[r]), legal[r], True, self.rng)
        else:
            p = np.exp(masked - masked.max(axis=1, keepdims=True))
            cum = np.cumsum(p, axis=1)
            u = self.rng.random(len(p)) * cum[:, -1]
            actions = np.minimum((cum <= u[:, None]).sum(axis=1), legal.shape[1] - 1)
            actions = np.where(legal[np.arange(len(p)), actions], actions, masked.argmax(axis=1))
        return actions if perm is None else canonical.action_back(actions, perm)


def is_pretrained(spec: str | AgentSpec) -> bool:
    """Whether ``spec`` names the ``pretrained`` agent (any spelling :mod:`whist_env.agents.agent_spec` reads:
    ``pretrained``, ``pretrained(path=x.npz)``, ``pretrained:x.npz``); False for other names and unparsable text."""
    if isinstance(spec, AgentSpec):
        return spec.name == "pretrained"
    try:
        return parse_agent_spec(spec).name == "pretrained"
    except OptionError:
        return False


def batched_pretrained(
    spec: str | AgentSpec, game_id: GameRef, options: dict[str, Any], rng: np.random.Generator
) -> BatchedPolicy:
    """The batched form of a ``pretrained`` agent spec: the :class:`~whist_env.agents.pretrained.PretrainedAgent` it
    names (the shipped network, or ``path=<exported .npz>``; ``deterministic`` as given), played by
    :class:`BatchedPolicy`. The one place the arena (:func:`whist_env.evaluation.batched.batched_agent`) and the learner
    env (its ``opponents``) build it, so both play the agent's own cards, suits renamed for a ``canonical_suits``
    network as the agent renames them.

    Args:
        spec: ``"pretrained"``, ``"pretrained(path=...)"`` (any spelling), or the parsed spec.
        game_id: the game (its id, or its spec).
        options: the game's options (checked against the network's metadata).
        rng: the generator of a sampling network's draws.

    Raises:
        OptionError: for a spec that is not ``pretrained`` or does not parse, no shipped weights, no file at ``path``.
        ModelMismatchError: a network made for another game, other options or another layout.
    """
    parsed = parse_agent_spec(spec) if isinstance(spec, str) else spec
    if parsed.name != "pretrained":
        raise OptionError(f"batched_pretrained builds 'pretrained' or 'pretrained(path=...)' agents, got {spec!r}")
    kwargs: dict[str, Any] = {**parsed.kwargs, **options}  # path / deterministic, then the game's options
    return BatchedPolicy(PretrainedAgent(game_id, **kwargs), rng)


@jit
def _sparse_affine(x: np.ndarray, w: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    h = w.shape[1]
    for i in range(x.shape[0]):
        for k in range(h):
            out[i, k] = b[k]
        for j in range(x.shape[1]):
            v = x[i, j]
            if v != 0.0:
                for k in range(h):
                    out[i, k] += v * w[j, k]


def sparse_affine(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``x @ w + b`` (float32) for a batch of observations ``x`` (n, D) that are mostly zeros (about 7% non-zero): the
    rows of ``w`` of the non-zero entries summed (a classic whist playout decision: 42.5 ms against 48.9 with the
    dense product on one BLAS thread; the batched arena's large batches gain little). It rounds differently
    (float32 sums in another order, about 1e-6): :class:`BatchedPolicy` decides near ties alone, as the agent does.
    A single observation, or any other shape, is the dense product.  # (n, H)"""
    if x.ndim != 2 or w.ndim != 2 or x.shape[1] != w.shape[0]:
        return np.asarray(x @ w + b)
    out = np.empty((x.shape[0], w.shape[1]), np.float32)
    _sparse_affine(np.ascontiguousarray(x, np.float32), np.ascontiguousarray(w, np.float32), b.astype(np.float32), out)
    return out
