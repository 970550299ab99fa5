"""An agent that plays a saved sb3-contrib ``MaskablePPO`` model.

torch and stable-baselines3 are imported only when the model is first used, never at
``import whist_env`` or ``import whist_env.agents``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from whist_env.agents.pretrained import NumpyPolicy, choose, plain_mlp_problem
from whist_env.encoding.canonical import CanonicalSuits
from whist_env.errors import OptionError
from whist_env.fingerprint import ModelMetadata, check_model
from whist_env.registry import GameRef, game_id_of, spec_of
from whist_env.view import PlayerView

if TYPE_CHECKING:
    from whist_env.agents.agent_spec import AgentSpec, MakeAgent
    from whist_env.agents.base import Agent
    from whist_env.spec import GameSpec


class ModelAgent:
    """Plays the action a trained ``MaskablePPO`` model picks, masked to the legal ones.

    The model sees exactly what a learner saw in training: the game's observation encoding of the
    view (built by the game's spec, ``GameSpec.make_encoder``), and the legal-action mask. Models trained on the
    flat vector (``Box``) and on the ``{"observation", "action_mask"}`` dict are both accepted.

    Args:
        path: the saved model (a ``.zip`` written by ``model.save``).
        game_id: the environment id the model was trained on, or the game's spec.
        deterministic: play the most likely action (True), or sample from the policy with ``rng`` (False).
        device: torch device for inference.
        threads: torch's intra-op threads, set when the model is loaded (torch's default would start one
            busy thread per core in every evaluation worker, several times slower on a small machine);
            None leaves torch's setting alone. The setting is per process.
        numpy_forward: when the model is a plain ``MlpPolicy`` (a flat observation, ``Linear`` layers and a
            supported activation), play its actor with numpy after loading (:class:`~whist_env.agents.pretrained.
            NumpyPolicy`: the same logits, about ten times faster per decision than torch's ``predict``); False
            always asks torch. Other models (``MultiInputPolicy``, custom networks) always use torch.
        **options: the game's options (they can change the encoding, e.g. ``num_players``).

    The agent is built without reading the file; on first use (:meth:`load`) the model's metadata
    (:mod:`whist_env.fingerprint`) is checked against ``game_id`` and ``options`` before torch is
    imported (:meth:`check` does it on demand); a model without metadata loads with a warning. A model trained
    with ``canonical_suits`` (its metadata says so) is shown the view with the suits renamed so that trump is
    spades, and its action is renamed back (:mod:`whist_env.encoding.canonical`).

    Raises:
        OptionError: on first use, when there is no model at ``path`` or the file is not a saved model.
        ModelMismatchError: on first use, when the model was trained for another game, other options or
            another observation layout (the message says what differs).
        ImportError: on first use, when sb3-contrib is not installed (``pip install 'whist_env[train]'``).
    """

    name = "model"

    def __init__(
        self,
        path: str | Path,
        game_id: GameRef,
        deterministic: bool = True,
        device: str = "cpu",
        threads: int | None = 1,
        numpy_forward: bool = True,
        **options: Any,
    ) -> None:
        self.path = str(path)
        if not Path(self.path).exists() and Path(self.path + ".zip").is_file():
            self.path += ".zip"  # as model.save and MaskablePPO.load name it
        self.game_id: str = game_id_of(game_id)
        self.deterministic = deterministic
        self.device = device
        if threads is not None and (not isinstance(threads, int) or isinstance(threads, bool) or threads < 1):
            raise OptionError(f"ModelAgent threads must be a positive int or None, got {threads!r}")
        self.threads = threads
        self.numpy_forward = numpy_forward
        self.options = dict(options)
        self.name = f"model:{Path(self.path).name}"
        spec = self.spec = spec_of(game_id)
        game = spec.make_rules(**options)
        self.encoder = spec.make_encoder(game)
        self.num_actions = game.num_actions
        self._model: Any = None
        self._numpy: NumpyPolicy | None = None
        self._dict_obs = False
        self._canonical: CanonicalSuits | None = None

    def check(self) -> ModelMetadata | None:
        """Check the saved model against the game and options (no torch needed); its metadata, or None.

        Raises:
            OptionError: no model at the path, or not a saved model.
            ModelMismatchError: made for another game, other options or another layout.
        """
        return check_model(self.path, self.spec, self.options)

    def load(self) -> Any:
        """Check the model's metadata, then load it (done on first use)."""
        metadata = self.check()
        if metadata is not None and metadata.canonical_suits:
            self._canonical = CanonicalSuits(self.encoder.layout)
        try:
            from sb3_contrib import MaskablePPO
        except ImportError as err:  # pragma: no cover - depends on the environment
            raise ImportError(
                "ModelAgent needs sb3-contrib and torch; install them with pip install 'whist_env[train]'"
            ) from err
        import torch
        from gymnasium import spaces

        if self.threads is not None:
            torch.set_num_threads(self.threads)
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
        if self.numpy_forward and plain_mlp_problem(model.policy) is None:
            self._numpy = NumpyPolicy.from_sb3(model.policy)
        return model

    def act(self, view: PlayerView, rng: np.random.Generator) -> int:
        model = self._model if self._model is not None else self.load()
        obs, mask = self.encoder.encode_with_mask(view)
        if self._canonical is None:
            return self._choose(model, obs, mask, rng)
        obs, mask, perm = self._canonical.forward(obs, mask)
        return int(self._canonical.action_back(self._choose(model, obs, mask, rng), perm))

    def _choose(self, model: Any, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> int:
        if self._numpy is not None:
            return choose(self._numpy.logits(obs), mask, self.deterministic, rng)
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
        perm = None
        if self._canonical is not None:
            obs, mask, perm = self._canonical.forward(obs, mask)
        observation: Any = {"observation": obs, "action_mask": mask} if self._dict_obs else obs
        legal = mask.astype(bool)
        obs_tensor, _ = model.policy.obs_to_tensor(observation)
        with torch.no_grad():
            dist = model.policy.get_distribution(obs_tensor, action_masks=legal[None, :])
            probs = dist.distribution.probs[0].cpu().numpy().astype(np.float64)
        probs = np.where(legal, probs, 0.0)
        if self._canonical is not None and perm is not None:  # the renamed game's action a is the real action_back(a)
            real = np.zeros_like(probs)
            real[self._canonical.action_back(np.arange(len(probs)), perm)] = probs
            probs = real
        return probs / probs.sum()

    def __getstate__(self) -> dict[str, Any]:
        # A loaded torch model is not sent to worker processes: each loads its own copy.
        state = self.__dict__.copy()
        state["_model"] = None
        state["_numpy"] = None
        return state

    def __repr__(self) -> str:
        return f"ModelAgent({self.path!r}, {self.game_id!r})"


def model_agent(agent: AgentSpec, game: GameSpec[Any, Any], options: dict[str, Any], make: MakeAgent) -> Agent:
    """``model:<path>`` / ``model(path=..., deterministic=..., device=...)`` (the builder of
    :data:`whist_env.agents.factory.AGENT_BUILDERS`). A ``.npz`` is a policy exported by any trainer
    (``policy.npz``): it plays as ``pretrained(path=...)`` does, with numpy alone (``device`` and ``threads`` do
    not apply)."""
    kwargs = dict(agent.kwargs)
    if str(kwargs.get("path", "")).endswith(".npz"):
        from whist_env.agents.pretrained import PretrainedAgent

        deterministic = bool(kwargs.get("deterministic", True))
        return PretrainedAgent(game, str(kwargs["path"]), deterministic, **options)
    return ModelAgent(**kwargs, game_id=game, **options)  # type: ignore[arg-type]
