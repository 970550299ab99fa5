"""Our masked actor-critic RLModule for RLlib's new API stack (PPO).

Two multilayer perceptrons read the encoded view (``obs["observation"]``): the policy head gives one logit
per action, the value head one number. Illegal actions (``obs["action_mask"] == 0``) get the logit
:data:`MASKED_LOGIT`, so that they are never sampled, never chosen by the argmax, and add nothing to the
entropy (a finite number rather than ``-inf``: ``0 * log 0`` would make the entropy NaN).

The observation dict keeps PettingZoo's key names (``observation``, ``action_mask``): RLlib's example
action-masking module expects ``observations``, but this module reads the names our environments use, so
no renaming wrapper is needed.
"""

from __future__ import annotations

from typing import Any

from whist_env.learning.rllib import require

require("ray.rllib", "whist_env.learning.rllib.module")

import torch  # noqa: E402
from ray.rllib.core.columns import Columns  # noqa: E402
from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI  # noqa: E402
from ray.rllib.core.rl_module.torch import TorchRLModule  # noqa: E402

MASKED_LOGIT = -1e9
"""The logit of an illegal action."""
COLUMNS = "columns"
"""The observation key under which the learner hands :class:`EngineActorCritic` the padded non-zero columns of its
observations (:class:`whist_env.learning.rllib.learner.SparseColumns`); where it is missing, the module scans the
rows."""
DEFAULT_HIDDEN = (256, 256)


def mlp(sizes: list[int], out: int) -> torch.nn.Sequential:
    """Linear layers of ``sizes`` with ReLU between them, then a linear layer to ``out`` outputs."""
    layers: list[torch.nn.Module] = []
    for a, b in zip(sizes, sizes[1:], strict=False):
        layers += [torch.nn.Linear(a, b), torch.nn.ReLU()]
    layers.append(torch.nn.Linear(sizes[-1], out))
    return torch.nn.Sequential(*layers)


def mask_logits(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """``logits`` with every action whose ``mask`` entry is 0 set to :data:`MASKED_LOGIT`."""
    return torch.where(mask > 0, logits, torch.full_like(logits, MASKED_LOGIT))


class MaskedActorCritic(TorchRLModule, ValueFunctionAPI):
    """A masked policy and a value function for a ``{"observation", "action_mask"}`` observation space.

    ``model_config``: ``hidden`` (hidden layer sizes of both networks, default ``[256, 256]``).
    An inference-only copy (on the env runners) has no value network.
    """

    def setup(self) -> None:
        space: Any = self.observation_space
        size = int(space["observation"].shape[0])
        n = int(self.action_space.n)  # type: ignore[union-attr]
        config = self.model_config if isinstance(self.model_config, dict) else {}
        hidden = [int(h) for h in config.get("hidden", DEFAULT_HIDDEN)]
        self.pi = mlp([size, *hidden], n)
        if not self.inference_only:
            self.vf = mlp([size, *hidden], 1)

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        obs = batch[Columns.OBS]
        return {Columns.ACTION_DIST_INPUTS: mask_logits(self.pi(obs["observation"]), obs["action_mask"])}

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> torch.Tensor:
        """The value of each observation in ``batch`` (the learner's GAE and value loss call it)."""
        return self.vf(batch[Columns.OBS]["observation"]).squeeze(-1)

    def masked_logits(self, observation: torch.Tensor, action_mask: torch.Tensor) -> torch.Tensor:
        """The policy's logits for a batch of encoded views, illegal actions masked (for play)."""
        return mask_logits(self.pi(observation), action_mask)


class EngineActorCritic(TorchRLModule, ValueFunctionAPI):
    """The RLModule of RLlib on the batched engine (``engine: batched``): ``ppo_vec``'s own network
    (:func:`whist_env.learning.net.build_actor_critic`: tanh MLPs as SB3's ``MlpPolicy``, the policy's and the value's
    first layers stored as one matrix and computed from the observation's non-zero columns by numba kernels), so that
    the warm start's clone loads as it is and main exports to the shipped ``.npz`` (:meth:`numpy_policy`).

    The first layers are the shared encoder (RLlib's ``Columns.EMBEDDINGS``): the learner's value computation reads
    them from the policy's forward pass instead of computing them again. ``model_config``: ``hidden`` (default
    ``[256, 256]``).
    """

    def setup(self) -> None:
        from whist_env.learning.net import build_actor_critic

        space: Any = self.observation_space
        config = self.model_config if isinstance(self.model_config, dict) else {}
        self.hidden = [int(h) for h in config.get("hidden", DEFAULT_HIDDEN)]
        self.net = build_actor_critic(int(space["observation"].shape[0]), int(self.action_space.n), self.hidden)  # type: ignore[union-attr]

    def _encode(self, observation: torch.Tensor, columns: torch.Tensor | None = None) -> torch.Tensor:
        """The first layers of both heads, bias added: ``(k, 2 h)`` (from ``columns``, the rows' padded non-zero
        columns, where given; else from the rows scanned)."""
        from whist_env.learning.net import SparseRows, first_layers

        rows = SparseRows.of(observation) if columns is None else SparseRows(columns, None)
        return first_layers(rows, self.net.first_weight) + self.net.first_bias

    def _logits(self, embeddings: torch.Tensor, action_mask: torch.Tensor) -> torch.Tensor:
        from whist_env.learning.net import ILLEGAL_LOGIT

        h = self.hidden[0]
        return self.net.actor_rest(embeddings[:, :h]).masked_fill(action_mask <= 0, ILLEGAL_LOGIT)

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        obs = batch[Columns.OBS]
        embeddings = self._encode(obs["observation"], obs.get(COLUMNS))
        return {
            Columns.ACTION_DIST_INPUTS: self._logits(embeddings, obs["action_mask"]),
            Columns.EMBEDDINGS: embeddings,
        }

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> torch.Tensor:
        """The value of each observation (from the policy pass's ``embeddings`` when given)."""
        if embeddings is None:
            obs = batch[Columns.OBS]
            embeddings = self._encode(obs["observation"], obs.get(COLUMNS))
        return self.net.critic_rest(embeddings[:, self.hidden[0] :]).squeeze(-1)

    def masked_logits(self, observation: torch.Tensor, action_mask: torch.Tensor) -> torch.Tensor:
        """The policy's logits for a batch of encoded views, illegal actions masked (for play)."""
        return self._logits(self._encode(observation.float()), action_mask)

    def numpy_policy(self) -> Any:
        """The policy as the numpy :class:`~whist_env.agents.pretrained.NumpyPolicy` the shipped agents play (and
        the engine's league plays as ``main`` and snapshots): the same logits, without torch."""
        from whist_env.learning.net import numpy_actor

        return numpy_actor(self.net)
