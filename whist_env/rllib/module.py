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

from whist_env.rllib import require

require("ray.rllib", "whist_env.rllib.module")

import torch  # noqa: E402
from ray.rllib.core.columns import Columns  # noqa: E402
from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI  # noqa: E402
from ray.rllib.core.rl_module.torch import TorchRLModule  # noqa: E402

MASKED_LOGIT = -1e9
"""The logit of an illegal action."""
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
