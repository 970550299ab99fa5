"""An agent that plays the main policy of an RLlib checkpoint: ``make_agent("rllib:<checkpoint dir>", game)``.

The path may be a checkpoint directory written by ``training/rllib/trainer.py``
(``<runs_dir>/<run>/checkpoints/iter_000010``), the run directory itself (its newest checkpoint is taken),
or the RLModule directory inside a checkpoint (``.../learner_group/learner/rl_module/main``). Ray and torch
are imported when the agent first plays.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from whist_env.errors import OptionError
from whist_env.learning.rllib import INSTALL_HINT
from whist_env.learning.rllib.league import MAIN
from whist_env.registry import GameRef, spec_of
from whist_env.view import PlayerView

if TYPE_CHECKING:
    from whist_env.agents.agent_spec import AgentSpec, MakeAgent
    from whist_env.agents.base import Agent
    from whist_env.spec import GameSpec

MODULE_PATH = ("learner_group", "learner", "rl_module")
"""Where an RLlib algorithm checkpoint keeps its modules (one directory per module id)."""
MAIN_IDS = (MAIN, "default_policy")
"""The learning module's id in a checkpoint: ``main`` (``engine: aec``), RLlib's ``DEFAULT_MODULE_ID`` (``batched``)."""
META_FILE = "whist_env.json"
"""Written into every checkpoint by the training script: the game and options the policy plays."""


def checkpoints_of(run_dir: Path) -> list[Path]:
    """The checkpoints of a run directory (``checkpoints/iter_*``), oldest first."""
    root = run_dir / "checkpoints"
    return sorted(p for p in root.glob("iter_*") if p.is_dir() and (p / META_FILE).is_file()) if root.is_dir() else []


def resolve_checkpoint(path: str | Path) -> tuple[Path, dict[str, Any]]:
    """The main module's directory for ``path`` and the checkpoint's metadata (``{}`` when it has none).

    Raises:
        OptionError: when ``path`` holds no checkpoint, saying what was looked for.
    """
    p = Path(path)
    if (p / "checkpoints").is_dir():
        found = checkpoints_of(p)
        if not found:
            raise OptionError(f"rllib: the run directory {p} has no checkpoint yet (looked for {p}/checkpoints/iter_*)")
        p = found[-1]
    # ``main`` in a run of the aec league; RLlib's default module id (``default_policy``) in a run on the batched engine
    module_dir = next((d for d in (p.joinpath(*MODULE_PATH, m) for m in MAIN_IDS) if d.is_dir()), p / "missing")
    meta: dict[str, Any] = {}
    if module_dir.is_dir():
        if (p / META_FILE).is_file():
            meta = json.loads((p / META_FILE).read_text())
        return module_dir, meta
    if (p / "module_state.pkl").is_file() and (p / "class_and_ctor_args.pkl").is_file():
        return p, meta  # the module directory itself
    raise OptionError(
        f"rllib: {p} is not an RLlib checkpoint: expected a run directory (with checkpoints/), a checkpoint "
        f"(with {'/'.join(MODULE_PATH)}/{MAIN} or .../default_policy) or a module directory"
    )


class RLlibAgent:
    """Plays the masked argmax of an RLlib policy (:class:`~whist_env.learning.rllib.module.MaskedActorCritic`).

    It encodes the view with the game's encoder (``GameSpec.make_encoder``), exactly as the training
    environment did, and picks the legal action with the highest logit.

    Args:
        path: a checkpoint (see the module docstring); or None with ``module`` given.
        game_id: the environment id, or the game's spec.
        module: an RLModule already in memory (the training script's evaluation), instead of ``path``.
        **options: the game's options (they can change the encoding, e.g. ``num_players``).

    Raises:
        OptionError: when ``path`` holds no checkpoint, or the checkpoint was trained on another game.
    """

    name = "rllib"

    def __init__(self, path: str | Path | None, game_id: GameRef, module: Any = None, **options: Any) -> None:
        if path is None and module is None:
            raise OptionError("RLlibAgent needs a checkpoint path or a module")
        spec = spec_of(game_id)
        game = spec.make_rules(**options)
        self.game_id: str = spec.game_id
        self.options = dict(options)
        self.encoder = spec.make_encoder(game)
        self.path = None if path is None else str(path)
        self._module_dir: Path | None = None
        self.canonical: Any = None
        if path is not None:
            self._module_dir, meta = resolve_checkpoint(path)
            if meta.get("canonical_suits"):  # the policy learnt with trump renamed spades: it plays so too
                from whist_env.encoding.canonical import CanonicalSuits

                self.canonical = CanonicalSuits(self.encoder.layout)
            trained = meta.get("game")
            if trained is not None and trained != self.game_id:
                raise OptionError(f"rllib: the checkpoint {path} was trained on {trained}, not {self.game_id}")
            self.name = f"rllib:{Path(self.path).name}"  # type: ignore[arg-type]
            if importlib.util.find_spec("ray") is None:
                # fail when the agent is made (a CLI's argument check), not in the middle of a match
                raise ImportError(f"the rllib agent needs Ray RLlib and torch; install the extra: {INSTALL_HINT}")
        self._module = module

    def load(self) -> Any:
        """Load the module from the checkpoint (done on first use)."""
        from whist_env.learning.rllib import require

        require("ray.rllib", "the rllib agent")
        from ray.rllib.core.rl_module.rl_module import RLModule

        module: Any = RLModule.from_checkpoint(str(self._module_dir))
        size = int(module.observation_space["observation"].shape[0])
        if size != self.encoder.size:
            raise OptionError(
                f"rllib: the checkpoint {self.path} expects observations of {size} numbers, but {self.game_id} with "
                f"options {self.options} encodes {self.encoder.size}; pass the options it was trained with"
            )
        module.eval()
        self._module = module
        return module

    def act(self, view: PlayerView, rng: np.random.Generator) -> int:
        import torch

        module = self._module if self._module is not None else self.load()
        obs, mask = self.encoder.encode_with_mask(view)
        perm = None
        if self.canonical is not None:
            obs, mask, perm = self.canonical.forward(obs, mask)
        with torch.no_grad():
            logits = module.masked_logits(torch.from_numpy(obs)[None], torch.from_numpy(mask)[None])
        action = int(torch.argmax(logits[0]).item())
        return action if perm is None else int(self.canonical.action_back(action, perm))

    def __getstate__(self) -> dict[str, Any]:
        # A module loaded from a path is not sent to worker processes: each loads its own copy.
        state = self.__dict__.copy()
        if self._module_dir is not None:
            state["_module"] = None
        return state

    def __repr__(self) -> str:
        return f"RLlibAgent({self.path!r}, {self.game_id!r})"


def rllib_agent(agent: AgentSpec, game: GameSpec[Any, Any], options: dict[str, Any], make: MakeAgent) -> Agent:
    """``rllib:<checkpoint dir>`` (the builder of :data:`whist_env.agents.factory.AGENT_BUILDERS`)."""
    return RLlibAgent(agent.get("path"), game, **options)
