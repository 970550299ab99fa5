"""An agent that plays a saved sb3-contrib ``MaskablePPO`` model.

torch and stable-baselines3 are imported only when the model is first used, never at
``import whist_env`` or ``import whist_env.agents``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from whist_env.view import PlayerView


class ModelAgent:
    """Plays the action a trained ``MaskablePPO`` model picks, masked to the legal ones.

    The model sees exactly what a learner saw in training: the game's observation encoding of the
    view (built by ``raw_env.make_encoder(game)``), and the legal-action mask. Models trained on the
    flat vector (``Box``) and on the ``{"observation", "action_mask"}`` dict are both accepted.

    Args:
        path: the saved model (a ``.zip`` written by ``model.save``).
        game_id: the environment id the model was trained on.
        deterministic: play the most likely action (True), or sample from the policy with ``rng`` (False).
        device: torch device for inference.
        **options: the game's options (they can change the encoding, e.g. ``num_players``).

    Raises:
        ImportError: on first use, when sb3-contrib is not installed (``pip install 'whist_env[train]'``).
    """

    name = "model"

    def __init__(
        self,
        path: str | Path,
        game_id: str,
        deterministic: bool = True,
        device: str = "cpu",
        **options: Any,
    ) -> None:
        from whist_env.registry import env_module

        self.path = str(path)
        self.game_id = game_id
        self.deterministic = deterministic
        self.device = device
        self.options = dict(options)
        self.name = f"model:{Path(self.path).name}"
        raw_env = env_module(game_id).raw_env
        game = raw_env.game_cls(**options)
        self.encoder = raw_env.make_encoder(game)
        self.encoder.layout.set_num_actions(game.num_actions)
        self.num_actions = game.num_actions
        self._model: Any = None
        self._dict_obs = False

    def load(self) -> Any:
        """Load the model (done on first use)."""
        try:
            from sb3_contrib import MaskablePPO
        except ImportError as err:  # pragma: no cover - depends on the environment
            raise ImportError(
                "ModelAgent needs sb3-contrib and torch; install them with pip install 'whist_env[train]'"
            ) from err
        from gymnasium import spaces

        model = MaskablePPO.load(self.path, device=self.device)
        space: Any = model.observation_space
        self._dict_obs = isinstance(space, spaces.Dict)
        size = space["observation"].shape if self._dict_obs else space.shape
        if tuple(size or ()) != (self.encoder.size,):
            raise ValueError(
                f"the model {self.path} expects observations of shape {tuple(size or ())}, but {self.game_id} with "
                f"options {self.options} encodes {self.encoder.size} numbers; pass the options it was trained with"
            )
        self._model = model
        return model

    def act(self, view: PlayerView, rng: np.random.Generator) -> int:
        model = self._model if self._model is not None else self.load()
        obs, mask = self.encoder.encode_with_mask(view)
        observation: Any = {"observation": obs, "action_mask": mask} if self._dict_obs else obs
        legal = mask.astype(bool)
        if self.deterministic:
            action, _ = model.predict(observation, action_masks=legal, deterministic=True)
            return int(np.asarray(action).reshape(-1)[0])
        # Sample with the given generator rather than torch's global one (reproducible, no global state).
        import torch

        obs_tensor, _ = model.policy.obs_to_tensor(observation)
        with torch.no_grad():
            dist = model.policy.get_distribution(obs_tensor, action_masks=legal[None, :])
            probs = dist.distribution.probs[0].cpu().numpy().astype(np.float64)
        probs = np.where(legal, probs, 0.0)
        return int(rng.choice(len(probs), p=probs / probs.sum()))

    def probabilities(self, view: PlayerView) -> np.ndarray:
        """The policy's probability of each action for ``view`` (0 for illegal ones), e.g. for a study panel."""
        import torch

        model = self._model if self._model is not None else self.load()
        obs, mask = self.encoder.encode_with_mask(view)
        observation: Any = {"observation": obs, "action_mask": mask} if self._dict_obs else obs
        legal = mask.astype(bool)
        obs_tensor, _ = model.policy.obs_to_tensor(observation)
        with torch.no_grad():
            dist = model.policy.get_distribution(obs_tensor, action_masks=legal[None, :])
            probs = dist.distribution.probs[0].cpu().numpy().astype(np.float64)
        probs = np.where(legal, probs, 0.0)
        return probs / probs.sum()

    def __getstate__(self) -> dict[str, Any]:
        # A loaded torch model is not sent to worker processes: each loads its own copy.
        state = self.__dict__.copy()
        state["_model"] = None
        return state

    def __repr__(self) -> str:
        return f"ModelAgent({self.path!r}, {self.game_id!r})"
