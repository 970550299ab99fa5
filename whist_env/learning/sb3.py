"""The one MaskablePPO training loop of the project: ``training/train.py`` and the notebooks
(:func:`whist_env.teaching.train_ppo`) both run it.

    >>> from whist_env.learning.sb3 import Periodic, make_ppo, run_ppo
    >>> model = make_ppo(env, seed=0, net_arch=[128, 128], n_steps=128, batch_size=64, n_epochs=10)
    >>> run_ppo(model, 4000, [Periodic("evaluate", 1000, lambda t: print(t))])

What it holds:

* :func:`make_ppo`: a ``MaskablePPO`` with an MLP policy (the learning rate constant or decayed linearly);
* :func:`run_ppo`: ``model.learn`` with the :class:`Periodic` tasks (evaluation, self-play snapshots,
  checkpoints, progress lines) run between two rollouts, where the model, the environments and the random
  states form a consistent whole, and the return of every finished training episode handed to a hook;
* :class:`PolicyAgent`: an agent over the live actor network, whose weights :meth:`PolicyAgent.sync` copies
  from the model before every evaluation, so an evaluation always plays the current policy.

torch and stable-baselines3 are imported inside the functions that need them: ``import whist_env`` (and
``import whist_env.learning.sb3``) never imports them.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from whist_env.encoding.canonical import CanonicalSuits
from whist_env.encoding.trick import TrickEncoder
from whist_env.view import PlayerView

if TYPE_CHECKING:
    from torch import nn

__all__ = ["Periodic", "PolicyAgent", "actor_of", "make_ppo", "run_ppo"]


# ---------------------------------------------------------------------- the policy as an agent
def actor_of(policy: Any) -> nn.Module:
    """An independent copy of the actor (observation -> action logits) of an sb3 ``MaskableActorCriticPolicy``
    built with the default flatten features extractor, in eval mode on the CPU."""
    from torch import nn

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

    Unlike ``whist_env.agents.ModelAgent`` (which loads a saved model file), it holds only the actor part of the
    network (a few hundred kB, cheap to send to worker processes) and samples with the generator it is given,
    never with torch's global one.

    Args:
        actor: maps a ``(1, obs_size)`` float tensor to ``(1, num_actions)`` logits (see :func:`actor_of`).
        encoder: the game's observation encoder (the one the network was trained on).
        deterministic: argmax (True) or sample (False).
        name: shown in reports.
        canonical_suits: the network was trained with the suits renamed so that trump is spades
            (:mod:`whist_env.encoding.canonical`): it reads the renamed observation and its action is renamed back.
    """

    def __init__(
        self,
        actor: nn.Module,
        encoder: TrickEncoder,
        deterministic: bool = True,
        name: str = "learner",
        canonical_suits: bool = False,
    ):
        self.actor = actor
        self.encoder = encoder
        self.deterministic = deterministic
        self.name = name
        self.canonical = CanonicalSuits(encoder.layout) if canonical_suits else None

    @classmethod
    def from_policy(  # noqa: ANN206 (the subclass's own type)
        cls,
        policy: Any,
        encoder: TrickEncoder,
        deterministic: bool = True,
        name: str = "learner",
        canonical_suits: bool = False,
    ):
        """A frozen copy of ``policy``'s actor."""
        return cls(actor_of(policy), encoder, deterministic, name, canonical_suits)

    def sync(self, policy: Any) -> PolicyAgent:
        """Copy ``policy``'s current actor weights into this agent (before each evaluation); returns self."""
        self.actor.load_state_dict(actor_of(policy).state_dict())
        return self

    def act(self, view: PlayerView, rng: np.random.Generator) -> int:
        obs, mask = self.encoder.encode_with_mask(view)
        if self.canonical is not None:
            obs, mask, perm = self.canonical.forward(obs, mask)
            return int(self.canonical.action_back(self._choose(obs, mask, view, rng), perm))
        return self._choose(obs, mask, view, rng)

    def _choose(self, obs: np.ndarray, mask: np.ndarray, view: PlayerView, rng: np.random.Generator) -> int:
        import torch

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
        state: dict[str, Any] = self.actor.state_dict()
        return state

    def __repr__(self) -> str:
        canon = ", canonical_suits=True" if self.canonical is not None else ""
        return f"PolicyAgent({self.name!r}, deterministic={self.deterministic}{canon})"


# ---------------------------------------------------------------------- the loop
def make_ppo(
    env: Any,
    *,
    seed: int,
    net_arch: Sequence[int],
    learning_rate: float = 3e-4,
    lr_schedule: str = "constant",
    device: str = "cpu",
    tensorboard_log: str | None = None,
    **ppo_kwargs: Any,
) -> Any:
    """A ``MaskablePPO`` with an MLP policy of hidden sizes ``net_arch`` on ``env`` (one env or a VecEnv).

    Args:
        env: the training environment(s).
        seed: seeds the network and sb3's global generators.
        net_arch: hidden layer sizes of the policy and value networks.
        learning_rate: Adam's step size (at the start, with ``lr_schedule="linear"``).
        lr_schedule: ``"constant"``, or ``"linear"`` (decayed to 0 at the end of the run).
        device: the torch device.
        tensorboard_log: directory for TensorBoard logs (None: none).
        **ppo_kwargs: further ``MaskablePPO`` arguments (``n_steps``, ``batch_size``, ``gamma``, ...).

    Raises:
        ValueError: for an unknown ``lr_schedule``.
    """
    from sb3_contrib import MaskablePPO

    lr: Any = learning_rate
    if lr_schedule == "linear":
        from stable_baselines3.common.utils import LinearSchedule

        lr = LinearSchedule(learning_rate, 0.0, 1.0)
    elif lr_schedule != "constant":
        raise ValueError(f"lr_schedule must be 'constant' or 'linear', got {lr_schedule!r}")
    return MaskablePPO(
        "MlpPolicy",
        env,
        learning_rate=lr,
        policy_kwargs={"net_arch": list(net_arch)},
        tensorboard_log=tensorboard_log,
        seed=seed,
        device=device,
        verbose=0,
        **ppo_kwargs,
    )


@dataclass
class Periodic:
    """A task of the loop, run between two rollouts once the timestep counter reaches ``next``; ``next`` then
    moves to the following multiple of ``period``.

    Attributes:
        name: names the task in :func:`schedule_state` (checkpoints keep ``next`` under it).
        period: timesteps between two runs.
        fn: called with the timestep counter.
        next: the counter at which it runs next (0: at the start of the run).
    """

    name: str
    period: int
    fn: Callable[[int], None]
    next: int = 0

    def due(self, timesteps: int) -> bool:
        """Run ``fn`` if it is due; whether it ran."""
        if timesteps < self.next:
            return False
        # Moved on first, so that a checkpoint taken by ``fn`` records the schedule after this run.
        self.next = (timesteps // self.period + 1) * self.period
        self.fn(timesteps)
        return True


def run_ppo(
    model: Any,
    total_timesteps: int,
    tasks: Sequence[Periodic] = (),
    *,
    on_episode: Callable[[float], None] | None = None,
    on_start: Callable[[], None] | None = None,
    resume: bool = False,
    tb_log_name: str = "ppo",
) -> Any:
    """Train ``model`` until its timestep counter reaches ``total_timesteps``, running ``tasks`` (in order)
    between rollouts.

    Args:
        model: a ``MaskablePPO`` (from :func:`make_ppo`, or loaded from a checkpoint).
        total_timesteps: the counter to stop at (a resumed model continues from its own counter).
        tasks: run at the start of every rollout that is due (see :class:`Periodic`).
        on_episode: called with the return of every training episode that ends (the Monitor's ``r``).
        on_start: called once before the first rollout (e.g. to hand a resumed run's opponents to the envs).
        resume: continue the model's counter and TensorBoard curve instead of starting them at 0.
        tb_log_name: the TensorBoard run name.

    Returns:
        The model.
    """
    from stable_baselines3.common.callbacks import BaseCallback

    class _Loop(BaseCallback):
        def _on_training_start(self) -> None:
            if on_start is not None:
                on_start()

        def _on_rollout_start(self) -> None:
            for task in tasks:
                task.due(self.num_timesteps)

        def _on_step(self) -> bool:
            if on_episode is not None:
                for info in self.locals.get("infos", []):
                    if "episode" in info:
                        on_episode(float(info["episode"]["r"]))
            return True

    remaining = max(total_timesteps - model.num_timesteps, 0) if resume else total_timesteps
    model.learn(remaining, callback=_Loop(), reset_num_timesteps=not resume, tb_log_name=tb_log_name, log_interval=1)
    return model
