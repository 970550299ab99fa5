"""The RLlib self-play configuration: ``configs/rllib_<name>.yaml`` loaded into a typed, validated dataclass.

The same conventions as :mod:`training.config` (and its loader, :func:`training.config.load_config_as`):
every key must be a field of :class:`RLlibConfig`, an unknown key or a wrong type is an error naming the
allowed keys, ``--set key=value`` overrides any key, and the run lives in ``<runs_dir>/<run_name>/``.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, ClassVar

from training.config import (
    ConfigError,
    PretrainConfig,
    RunConfig,
    check_range,
    config_from_dict,
    load_config_as,
)

ENGINES = ("batched", "aec")
"""Where the env runners play: the batched engine's league (:mod:`whist_env.learning.rllib.engine_env`) or one Python
AEC game at a time (:mod:`whist_env.learning.rllib.env`)."""


@dataclasses.dataclass
class RLlibConfig(RunConfig):
    """Everything one RLlib self-play run needs; the saved ``<run>/config.yaml`` reproduces it. The fields every
    trainer's config has are :class:`training.config.RunConfig`'s; RLlib's own PPO settings keep RLlib's names."""

    config_prefix: ClassVar[str] = "rllib_"  # its configs in configs/ (training.config.CONFIG_PREFIXES)

    seed: int = 0
    """Seeds RLlib (its env runners seed their environments from it) and the evaluations."""
    opponents: dict[str, float] = dataclasses.field(
        default_factory=lambda: {"main": 0.4, "snapshot": 0.4, "heuristic": 0.1, "random": 0.1}
    )
    """The league: draw weights of the opponents' roles. ``main`` (the learning policy itself), ``snapshot``
    (a frozen snapshot, drawn uniformly from the pool; ``main`` until the first one) and agent specs
    (``random``, ``heuristic``, ...: scripted league members). Partners share a role."""
    net_arch: list[int] = dataclasses.field(default_factory=lambda: [256, 256])
    """Hidden layer sizes of the policy and value networks (``batched``: ppo_vec's network, tanh, sparse first
    layers; ``aec``: ReLU MLPs)."""
    canonical_suits: bool = False
    """``batched``: the learner (and the league's policies) see the suits renamed so that trump is spades."""
    pretrain: PretrainConfig | None = None
    """``batched``: warm start before RLlib's PPO (keys: ``pretrain.*``, as ppo_vec's: the heuristic's port played
    on the engine, behaviour cloning of the policy and value networks, DAgger); the cloned network becomes main's
    first weights. Absent or null: main starts from random weights."""
    trainer: str = "rllib"
    """The trainer of this config: ``rllib`` (this one; ``python training/train.py --config <file>`` hands it here)."""
    iterations: int = 100
    """Training iterations in all (``--iterations``; a resumed run continues up to this number)."""
    num_env_runners: int = 2
    """Ray actors that play episodes (``--num-env-runners``; 0: sample in the driver process)."""
    engine: str = "batched"
    """Where the env runners play: ``batched`` (each steps ``num_envs_per_env_runner`` tables of the batched engine in
    one call, the league's other seats played inside; only the learning seat's decisions reach RLlib) or ``aec`` (one
    Python game per environment, every seat main or a snapshot plays reaching RLlib; any agent spec in the league)."""
    num_envs_per_env_runner: int = 1
    """Environments each env runner steps (``batched``: tables stepped as one batch)."""
    train_batch_size: int = 4000
    """Env steps sampled per iteration (RLlib's ``train_batch_size_per_learner``)."""
    minibatch_size: int = 512
    """Minibatch size of a PPO update."""
    num_epochs: int = 4
    """Passes over an iteration's batch."""
    lambda_: float = 0.95
    """GAE lambda."""
    clip_param: float = 0.2
    """PPO clip range."""
    entropy_coeff: float = 0.01
    """Entropy bonus."""
    vf_loss_coeff: float = 0.5
    """Value loss weight."""
    grad_clip: float = 0.5
    """Gradient clipping (global norm)."""
    snapshot_every: int = 5
    """Iterations between two snapshots of the main policy."""
    snapshot_pool: int = 4
    """Snapshot slots (modules ``snapshot_0`` ...); when all are filled the oldest is overwritten."""
    eval_every: int = 1
    """Iterations between two arena evaluations of the main policy."""
    eval_deals: int = 100
    """Duplicate deals per opponent in an evaluation."""
    checkpoint_every: int = 5
    """Iterations between checkpoints (the last iteration is always checkpointed)."""

    def validate(self) -> None:
        """Cross-field checks.

        Raises:
            ConfigError: naming the field, the bad value and what is allowed.
        """
        self.validate_run("rllib")
        if self.engine not in ENGINES:
            raise ConfigError(f"engine must be one of {', '.join(ENGINES)}, got {self.engine!r}")
        if self.engine == "aec" and (self.canonical_suits or self.pretrain is not None):
            raise ConfigError("canonical_suits and pretrain need engine: batched (the aec env runners have neither)")
        positive = (
            "iterations",
            "num_envs_per_env_runner",
            "train_batch_size",
            "minibatch_size",
            "num_epochs",
            "snapshot_every",
            "eval_every",
            "eval_deals",
            "checkpoint_every",
        )
        for name in positive:
            if getattr(self, name) <= 0:
                raise ConfigError(f"{name} must be positive, got {getattr(self, name)}")
        if self.num_env_runners < 0 or self.snapshot_pool < 0:
            raise ConfigError(
                f"num_env_runners and snapshot_pool must be 0 or more, got {self.num_env_runners} and "
                f"{self.snapshot_pool}"
            )
        if self.minibatch_size > self.train_batch_size:
            raise ConfigError(
                f"minibatch_size ({self.minibatch_size}) must not exceed train_batch_size ({self.train_batch_size})"
            )
        for name in ("clip_param", "grad_clip"):
            check_range(name, getattr(self, name), 0, above=True)
        check_range("lambda_", self.lambda_, 0, 1)
        for name in ("entropy_coeff", "vf_loss_coeff"):
            check_range(name, getattr(self, name), 0)
        self._validate_game_and_league()

    def _validate_game_and_league(self) -> None:
        from whist_env.agents import make_agent
        from whist_env.errors import OptionError
        from whist_env.learning.rllib.league import SNAPSHOT, check_opponents, scripted_names

        try:
            check_opponents(self.opponents)
        except OptionError as err:
            raise ConfigError(f"opponents: {err}") from err
        if self.opponents.get(SNAPSHOT, 0) > 0 and self.snapshot_pool == 0:
            raise ConfigError("opponents: 'snapshot' has a weight but snapshot_pool is 0; give the pool a slot or more")
        names = [("opponents", k) for k in scripted_names(self.opponents)]
        names += [("eval_opponents", k) for k in self.eval_opponents]
        for key, name in names:
            try:
                make_agent(name, self.game, **self.game_options)
            except OptionError as err:
                raise ConfigError(f"{key}: {err}") from err
        if self.engine == "batched":
            from whist_env.learning.rllib.engine_env import SCRIPTED

            slow = [k for k in scripted_names(self.opponents) if k not in SCRIPTED]
            if slow:
                raise ConfigError(
                    f"opponents: {slow} has no batched form; engine: batched plays {', '.join(SCRIPTED)}, main and "
                    "snapshots (engine: aec plays any agent spec)"
                )
            if self.pretrain is not None:
                from training.config import ENGINE_TEACHERS

                self.pretrain.validate(self.game, self.game_options)
                if self.pretrain.teacher not in ENGINE_TEACHERS:
                    raise ConfigError(
                        f"pretrain.teacher: the warm start on the engine plays {', '.join(ENGINE_TEACHERS)}, got "
                        f"{self.pretrain.teacher!r}"
                    )


def load_rllib_config(path: str | Path, overrides: dict[str, Any] | None = None) -> RLlibConfig:
    """Read ``path`` (YAML) into an :class:`RLlibConfig`, apply ``overrides``, validate.

    Raises:
        ConfigError: an unknown key (naming the allowed ones), a wrong type, a bad value, a missing file.
    """
    return load_config_as(RLlibConfig, path, overrides)


def rllib_config_from_dict(values: dict[str, Any], source: str = "config") -> RLlibConfig:
    """A validated :class:`RLlibConfig` from plain values (a saved ``config.yaml``).

    Raises:
        ConfigError: see :func:`load_rllib_config`.
    """
    return config_from_dict(RLlibConfig, values, source)
