"""An :class:`~whist_env.agents.base.Agent` over a live policy network: the learner in evaluations, and
the frozen snapshots of it that self-play puts in the opponents' seats.

Unlike ``whist_env.agents.ModelAgent`` (which loads a saved model file), it holds only the actor part
of the network (a few hundred kB, cheap to send to worker processes) and samples with the generator it
is given, never with torch's global one.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import torch
from torch import nn

from whist_env.encoding.trick import TrickEncoder
from whist_env.view import PlayerView


def actor_of(policy: Any) -> nn.Module:
    """An independent copy of the actor (observation -> action logits) of an sb3 ``MaskableActorCriticPolicy``
    built with the default flatten features extractor, in eval mode on the CPU."""
    actor = nn.Sequential(
        nn.Flatten(),
        copy.deepcopy(policy.mlp_extractor.policy_net),
        copy.deepcopy(policy.action_net),
    ).to("cpu")
    actor.eval()
    for p in actor.parameters():
        p.requires_grad_(False)
    return actor


class PolicyAgent:
    """Plays the masked argmax (or a masked sample drawn with ``rng``) of an actor network's logits.

    Args:
        actor: maps a ``(1, obs_size)`` float tensor to ``(1, num_actions)`` logits (see :func:`actor_of`).
        encoder: the game's observation encoder (the one the network was trained on).
        deterministic: argmax (True) or sample (False).
        name: shown in reports.
    """

    def __init__(self, actor: nn.Module, encoder: TrickEncoder, deterministic: bool = True, name: str = "learner"):
        self.actor = actor
        self.encoder = encoder
        self.deterministic = deterministic
        self.name = name

    @classmethod
    def from_policy(cls, policy: Any, encoder: TrickEncoder, deterministic: bool = True, name: str = "learner"):  # noqa: ANN206
        """A frozen copy of ``policy``'s actor."""
        return cls(actor_of(policy), encoder, deterministic, name)

    def act(self, view: PlayerView, rng: np.random.Generator) -> int:
        obs, mask = self.encoder.encode_with_mask(view)
        with torch.no_grad():
            logits = self.actor(torch.from_numpy(obs).unsqueeze(0))[0].numpy().astype(np.float64)
        legal = mask.astype(bool)
        if not legal.any():
            raise ValueError(f"seat {view.seat} has no legal action (phase {view.phase})")
        logits[~legal] = -np.inf
        if self.deterministic:
            return int(np.argmax(logits))
        p = np.exp(logits - logits.max())
        cum = np.cumsum(p)
        return int(min(np.searchsorted(cum, rng.random() * cum[-1], side="right"), len(cum) - 1))

    def state_dict(self) -> dict[str, Any]:
        """The actor's weights (for checkpoints)."""
        return self.actor.state_dict()

    def __repr__(self) -> str:
        return f"PolicyAgent({self.name!r}, deterministic={self.deterministic})"
