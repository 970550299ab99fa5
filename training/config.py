"""The training configuration: ``configs/<name>.yaml`` loaded into a typed, validated dataclass: :class:`TrainConfig`
(``sb3``) and :class:`PPOVecConfig` (``ppo``) over the shared :class:`RunConfig` and :class:`PPOConfig`
(``training.rllib.config.RLlibConfig``, ``rllib``, extends :class:`RunConfig` too).

Every key of the YAML file must be a field of its trainer's config class; an unknown key or a value of the
wrong type is an error that names the allowed keys (STYLE.md, "stringly-typed configs"). Command-line
flags override the file (``--total-timesteps``, ``--seed``, ..., or ``--set key=value`` for any key).
"""

from __future__ import annotations

import dataclasses
import types
import typing
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import yaml

from whist_env.errors import unreadable

if TYPE_CHECKING:
    from whist_env.rules.core import TrickGame

VEC_ENVS = ("dummy", "subproc")
SEARCH_REWARDS = ("phase1_dd",)
ENGINE_TEACHERS = ("heuristic",)
"""The warm-start teachers that have a batched form on the engine (``training/ppo/warm_start.py``)."""
SEED_MAX = 2**32 - 1
"""The largest seed: numpy's legacy seeding (``np.random.seed``, which Stable-Baselines3 calls) takes 32 bits."""

C = TypeVar("C")
"""A config dataclass read by the loader below (:class:`TrainConfig`, ``training.rllib.config.RLlibConfig``)."""

CONFIG_DIR = Path(__file__).resolve().parents[1] / "configs"
"""The repository's configs: ``<game>.yaml`` for ``training/train.py``, ``ppo_vec_<game>.yaml`` and
``rllib_<game>.yaml`` for the other two trainers (a config class names its prefix in ``config_prefix``)."""
CONFIG_PREFIXES = {"sb3": "", "ppo": "ppo_vec_", "rllib": "rllib_"}
"""Each trainer's configs in :data:`CONFIG_DIR`: ``<prefix><game>.yaml`` (a config class names its prefix too)."""
OTHER_TRAINERS = tuple(prefix for prefix in CONFIG_PREFIXES.values() if prefix)
TRAINERS = {
    "sb3": "training/sb3/ (sb3-contrib's MaskablePPO on single-agent envs)",
    "ppo": "training/ppo/ (masked PPO on the batched engine)",
    "rllib": "training/rllib/ (league self-play on Ray RLlib)",
}
"""The ``trainer:`` key of a config: which trainer runs it. ``python training/train.py --config <file>`` hands a
config to its trainer, so it is the one command for all three."""


def check_trainer(value: Any, mine: str) -> None:
    """The ``trainer`` field of a config class whose trainer is ``mine``.

    Raises:
        ConfigError: for another trainer's name (naming the script that runs it) or an unknown one.
    """
    if value == mine:
        return
    if value in TRAINERS:
        raise ConfigError(
            f"trainer: {value!r} configs are run by {TRAINERS[value]}, not this one; run "
            "python training/train.py --config <file>, which hands every config to its trainer"
        )
    raise ConfigError(f"trainer must be one of {', '.join(TRAINERS)}, got {value!r}")


def configs_with_prefix(prefix: str) -> list[str]:
    """The configs in :data:`CONFIG_DIR` of the trainer whose prefix is ``prefix`` (``""``: sb3's), as paths."""
    names = sorted(p.name for p in CONFIG_DIR.glob(f"{prefix}*.yaml"))
    if not prefix:
        names = [n for n in names if not n.startswith(OTHER_TRAINERS)]
    try:
        where = CONFIG_DIR.relative_to(Path.cwd())
    except ValueError:
        where = CONFIG_DIR
    return [str(where / n) for n in names]


def missing_config(cls: type[Any], path: str | Path | None = None) -> ConfigError:
    """The error for a missing ``--config`` (``path`` None) or a config file that does not exist: it lists the
    configs of every trainer (``cls``'s first) and suggests the closest name among them all, since ``train.py``
    cannot tell a misspelt file's trainer (``ppo_vec_german_whist_wram.yaml``)."""
    import difflib

    own = getattr(cls, "config_prefix", "")
    groups: dict[str, list[str]] = {}
    for trainer, prefix in sorted(CONFIG_PREFIXES.items(), key=lambda kv: kv[1] != own):
        configs = configs_with_prefix(prefix)
        if configs:
            groups[trainer] = configs
    every = [c for configs in groups.values() for c in configs]
    listed = (
        "the configs are: " + "; ".join(f"{trainer}: {', '.join(configs)}" for trainer, configs in groups.items())
        if groups
        else f"no configs in {CONFIG_DIR}"
    )
    if path is None:
        return ConfigError(f"--config is required; {listed}")
    close = difflib.get_close_matches(Path(path).name, [Path(c).name for c in every], n=1, cutoff=0.75)
    hint = next((f" (did you mean {c}?)" for c in every if close and Path(c).name == close[0]), "")
    return ConfigError(f"config file {path} does not exist{hint}; {listed}")


class ConfigError(ValueError):
    """A bad training configuration: unknown key, wrong type or a value outside the allowed set."""


def check_search_reward(name: str, game_id: str, game: TrickGame[Any]) -> None:
    """Refuse a ``search_reward`` the game cannot have: ``phase1_dd`` needs a game whose card play becomes
    open-handed (its spec's ``search.open_from``), one deal per episode and perfect recall.

    Raises:
        ConfigError: naming the value and what is allowed.
    """
    from whist_env.registry import game_ids, get_spec

    if name not in SEARCH_REWARDS:
        raise ConfigError(f"search_reward must be empty or one of {', '.join(SEARCH_REWARDS)}, got {name!r}")
    spec = get_spec(game_id)
    if spec.search is None or spec.search.open_from is None:
        games = [g for g in game_ids() if (search := get_spec(g).search) is not None and search.open_from is not None]
        raise ConfigError(
            f"search_reward {name!r} needs a game whose card play becomes open-handed ({', '.join(games)}), "
            f"not {game_id}"
        )
    wanted = {**spec.single_deal, "include_history": True}
    if not game.recall or any(getattr(game.config, key) != value for key, value in spec.single_deal.items()):
        raise ConfigError(
            f"search_reward {name!r} needs one deal per episode and perfect recall "
            f"({', '.join(f'{key}={value}' for key, value in wanted.items())}), "
            f"got {', '.join(f'{key}={getattr(game.config, key)}' for key in wanted)}"
        )


@dataclasses.dataclass
class PretrainConfig:
    """The warm start (``pretrain:`` in a config): behaviour cloning from a teacher, then DAgger rounds, before
    PPO; see :mod:`whist_env.learning.cloning`. Every key is optional; an unknown one is an error."""

    teacher: str = "heuristic"
    """The agent whose decisions are cloned (any agent spec: ``heuristic``, ``pimc:samples=8``, ...)."""
    deals: int = 3000
    """Episodes of the teacher's self-play in the dataset (every seat's decisions are recorded)."""
    epochs: int = 8
    """Passes over the dataset in the first behaviour-cloning fit."""
    batch_size: int = 1024
    """Rows per gradient step of behaviour cloning."""
    learning_rate: float = 1e-3
    """Adam's step size in behaviour cloning (its own optimiser; PPO's starts fresh)."""
    value_coef: float = 1.0
    """Weight of the value network's loss (target: the seat's final outcome); 0 leaves the value network alone."""
    relabel_rounds: int = 1
    """DAgger rounds: the cloned learner plays, the teacher labels its states, the fit goes on over all rows."""
    relabel_deals: int = 1000
    """Episodes the learner plays per DAgger round."""
    relabel_epochs: int = 4
    """Passes over the grown dataset after each DAgger round."""
    workers: int = 2
    """Processes generating the data (``train.py``; ``ppo_vec.py`` plays the teacher batched on the engine, in one
    process)."""
    cache_dir: str = ""
    """Where the teacher's dataset is cached (``.npz`` with the layout's fingerprint; a cached file whose layout,
    options or recipe differ is refused); empty: no cache, the data is generated every run."""

    def validate(self, game: str, game_options: dict[str, Any]) -> None:
        """Checks of the section for a run of ``game`` with ``game_options`` (the teacher is built once).

        Raises:
            ConfigError: naming the key (``pretrain.<key>``), the bad value and what is allowed.
        """
        from whist_env.agents import make_agent
        from whist_env.errors import OptionError

        for name in ("deals", "epochs", "batch_size", "relabel_deals", "workers"):
            if getattr(self, name) <= 0:
                raise ConfigError(f"pretrain.{name} must be positive, got {getattr(self, name)}")
        for name in ("relabel_rounds", "relabel_epochs"):
            if getattr(self, name) < 0:
                raise ConfigError(f"pretrain.{name} must be 0 or more, got {getattr(self, name)}")
        if self.learning_rate <= 0 or self.value_coef < 0:
            raise ConfigError(
                f"pretrain.learning_rate must be positive and pretrain.value_coef 0 or more, got "
                f"{self.learning_rate} and {self.value_coef}"
            )
        try:
            make_agent(self.teacher, game, **game_options)
        except OptionError as err:
            raise ConfigError(f"pretrain.teacher: {err}") from err


@dataclasses.dataclass
class RunConfig:
    """What every trainer's config has (the one config base): the game, the run's directory and seed, the network,
    the opponents in training and in the evaluations, checkpoints, the warm start, and which trainer runs it.
    :class:`TrainConfig` (sb3), :class:`PPOVecConfig` (ppo) and ``training.rllib.config.RLlibConfig``
    (rllib) extend it; all three are read by :func:`load_config_as`, saved by :func:`save_config`, and checked by
    :meth:`validate_run` for these fields."""

    config_prefix: ClassVar[str] = ""  # its configs in configs/: ``<prefix><game>.yaml`` (CONFIG_PREFIXES)

    game: str
    """Environment id to train on (``german_whist_v0``, ``classic_whist_v0``, ``humbug_v0``, ``oh_hell_v0``,
    ``humbug_whist_v0``)."""
    game_options: dict[str, Any] = dataclasses.field(default_factory=dict)
    """The game's options, exactly as ``whist_env.make(game, **game_options)`` takes them."""
    run_name: str = ""
    """Name of the run directory ``<runs_dir>/<run_name>/``; empty: ``<config file stem>_s<seed>``."""
    runs_dir: str = "runs"
    """Where run directories are written."""
    seed: int = 0
    """Seeds the network, the environments, the opponents' draws; the evaluations play the deals of seed
    ``1_000_003 + seed`` (the same at every evaluation of a run)."""
    torch_threads: int = 1
    """``torch.set_num_threads``: 1 is fastest for small networks on few cores."""
    opponents: dict[str, float] = dataclasses.field(default_factory=lambda: {"random": 1.0})
    """Opponents in training and their draw weights, e.g. ``{random: 0.3, heuristic: 0.7}``."""
    learning_rate: float = 3e-4
    """Adam's step size."""
    gamma: float = 1.0
    """Discount factor; 1.0 for these finite episodes with sparse rewards."""
    net_arch: list[int] = dataclasses.field(default_factory=lambda: [256, 256])
    """Hidden layer sizes of the policy and value networks (two MLPs, ``tanh``)."""
    eval_opponents: list[str] = dataclasses.field(default_factory=lambda: ["random", "heuristic"])
    """Opponents of the evaluations (agent specs ``whist_env.agents`` knows)."""
    keep_checkpoints: int = 2
    """Checkpoints kept on disk (the latest ones)."""
    canonical_suits: bool = False
    """The learner sees its game with the suits renamed so that trump is spades (the env's observation is not
    changed; ``whist_env.encoding.canonical``): observations, masks, cloned labels; its actions are renamed back. The
    flag is
    saved in the model's metadata, so every agent that plays the model applies it. Costs nothing; games without a
    trump are unchanged."""
    pretrain: PretrainConfig | None = None
    """Warm start before PPO (keys: see ``pretrain.*``): the teacher's decisions cloned into the policy and value
    networks, then DAgger rounds; absent or null: PPO starts from random weights."""
    trainer: str = "sb3"
    """Which trainer runs this config: ``sb3`` (``training/train.py``, sb3-contrib's MaskablePPO), ``ppo``
    (``training/ppo/trainer.py``, on the batched engine) or ``rllib`` (``training/rllib/trainer.py``);
    ``python training/train.py --config <file>`` hands every config to its trainer."""

    @property
    def eval_seed(self) -> int:
        """The seed of every evaluation's deals in this run (the same deals each time: common random numbers)."""
        return 1_000_003 + self.seed

    def validate_run(self, trainer: str, games: list[str] | None = None, listed: str = "available") -> None:
        """The checks of the shared fields (a subclass's :meth:`validate` calls it first).

        Args:
            trainer: the trainer of the config class (its ``trainer`` must be this one).
            games: the games it trains (default: every registered game), named ``listed`` in the error.

        Raises:
            ConfigError: naming the field, the bad value and what is allowed.
        """
        from whist_env.errors import OptionError
        from whist_env.registry import game_ids, get_spec, unknown_game

        check_trainer(self.trainer, trainer)
        known = game_ids() if games is None else games
        if self.game not in known:
            raise ConfigError(f"game: {unknown_game(self.game, known, listed)}")
        try:  # before anything takes them as keywords (the batched engine's ``seed``, ``self``)
            get_spec(self.game).make_rules(**self.game_options)
        except OptionError as err:
            raise ConfigError(f"game_options: {err}") from err
        for name in ("keep_checkpoints", "torch_threads"):
            if getattr(self, name) <= 0:
                raise ConfigError(f"{name} must be positive, got {getattr(self, name)}")
        if not self.net_arch or any(h <= 0 for h in self.net_arch):
            raise ConfigError(f"net_arch must be a non-empty list of positive layer sizes, got {self.net_arch}")
        check_range("seed", self.seed, 0, SEED_MAX)
        check_range("learning_rate", self.learning_rate, 0, above=True)
        check_range("gamma", self.gamma, 0, 1)
        if any(ch in self.run_name for ch in "/\\") or self.run_name in (".", ".."):
            raise ConfigError(f"run_name must be a plain directory name, got {self.run_name!r}")

    def to_dict(self) -> dict[str, Any]:
        """Plain values, for ``config.yaml``."""
        return dataclasses.asdict(self)


@dataclasses.dataclass
class PPOConfig(RunConfig):
    """The fields the two PPO trainers share (:class:`TrainConfig`, sb3; :class:`PPOVecConfig`,
    ppo): the same names, meanings and checks (:meth:`validate_ppo`); each trainer sets its own defaults."""

    total_timesteps: int = 200_000
    """Learner decisions to train for (summed over the environments)."""
    n_envs: int = 16
    """Environments stepped in parallel."""
    n_steps: int = 256
    """Steps per environment per rollout (a rollout is ``n_steps * n_envs`` decisions)."""
    batch_size: int = 512
    """Minibatch size of a PPO update."""
    n_epochs: int = 4
    """Passes over a rollout per update."""
    lr_schedule: str = "constant"
    """``constant`` or ``linear`` (``learning_rate`` decayed linearly to 0)."""
    gae_lambda: float = 0.95
    """GAE lambda."""
    clip_range: float = 0.2
    """PPO clip range."""
    ent_coef: float = 0.01
    """Entropy bonus."""
    vf_coef: float = 0.5
    """Value loss weight."""
    max_grad_norm: float = 0.5
    """Gradient clipping (global norm)."""
    reward_scale: float = 1.0
    """Rewards are multiplied by this in training (the evaluations report the game's own scores)."""
    learner_seat: str | int = "random"
    """The learner's seat: ``random`` (drawn per episode), a fixed seat, or (sb3 only) ``rotate``."""
    self_play: bool = False
    """Add frozen snapshots of the learner to the opponents."""
    self_play_refresh: int = 50_000
    """Timesteps between two snapshots of the learner."""
    self_play_pool: int = 4
    """Most snapshots kept (the oldest is dropped)."""
    self_play_weight: float = 0.5
    """Probability that an opponent seat is played by a snapshot (once there is one)."""
    eval_freq: int = 50_000
    """Timesteps between two evaluations during training (the first at the start, each at the end of a rollout),
    against ``eval_opponents`` on ``eval_deals`` duplicate deals (``runs/<run>/eval.csv``)."""
    eval_deals: int = 200
    """Duplicate deals per opponent in an evaluation during training."""
    final_eval_deals: int = 2000
    """Duplicate deals per opponent in the final evaluation."""
    eval_workers: int = 1
    """Processes of the final evaluation on the AEC arena (the periodic ones use one)."""
    checkpoint_freq: int = 50_000
    """Timesteps between checkpoints (at the end of a rollout; the end of the run is checkpointed too)."""
    device: str = "cpu"
    """torch device: ``auto``, ``cpu``, ``cuda`` or ``cuda:N``."""

    def validate_ppo(self) -> None:
        """The checks of the PPO fields both trainers share (after :meth:`validate_run`).

        Raises:
            ConfigError: naming the field, the bad value and what is allowed.
        """
        positive = ("total_timesteps", "n_envs", "n_steps", "batch_size", "n_epochs", "checkpoint_freq", "eval_deals")
        for name in positive + ("self_play_refresh", "self_play_pool", "eval_workers"):
            if getattr(self, name) <= 0:
                raise ConfigError(f"{name} must be positive, got {getattr(self, name)}")
        if self.lr_schedule not in ("constant", "linear"):
            raise ConfigError(f"lr_schedule must be 'constant' or 'linear', got {self.lr_schedule!r}")
        check_device(self.device)
        if (self.n_steps * self.n_envs) % self.batch_size:
            raise ConfigError(
                f"batch_size ({self.batch_size}) must divide n_steps * n_envs "
                f"({self.n_steps} * {self.n_envs} = {self.n_steps * self.n_envs})"
            )
        if not self.opponents or any(w < 0 for w in self.opponents.values()) or sum(self.opponents.values()) <= 0:
            raise ConfigError(f"opponents must map agent names to non-negative weights with a positive sum, got "
                              f"{self.opponents}")  # fmt: skip
        if not 0.0 <= self.self_play_weight < 1.0:
            raise ConfigError(f"self_play_weight must be in [0, 1), got {self.self_play_weight}")
        for name in ("clip_range", "max_grad_norm", "reward_scale"):
            check_range(name, getattr(self, name), 0, above=True)
        check_range("gae_lambda", self.gae_lambda, 0, 1)
        for name in ("ent_coef", "vf_coef"):
            check_range(name, getattr(self, name), 0)


@dataclasses.dataclass
class TrainConfig(PPOConfig):
    """Everything one ``training/train.py`` run (sb3) needs; the saved ``runs/<run_name>/config.yaml`` reproduces it.
    The shared fields are :class:`RunConfig`'s and :class:`PPOConfig`'s."""

    seed: int = 0
    """Seeds the model, the environments (env ``i`` gets ``seed + i``) and the evaluations (the deals of seed
    ``1_000_003 + seed``)."""
    opponents: dict[str, float] = dataclasses.field(default_factory=lambda: {"random": 1.0})
    """Scripted opponents and their draw weights, e.g. ``{random: 0.3, heuristic: 0.7}``; each opponent
    seat draws one per episode."""
    vec_env: str = "dummy"
    """``dummy`` (one process; fastest for these cheap envs) or ``subproc`` (one process per env)."""
    partner: str = ""
    """Partnership games only: ``self`` (the learner also plays its partner's seat), an agent name, or empty
    (the partner is drawn like the opponents)."""
    illegal_reward: float = -1.0
    """Reward of an illegal action (only unmasked samplers make one)."""
    search_reward: str = ""
    """Search in the loop. ``phase1_dd`` (German Whist, one deal per episode): the learner's episode ends when
    phase 2 starts, with the reward the deal would pay if both seats then played the open-handed phase 2
    perfectly (the double-dummy solver's value; ``training/sb3/search_reward.py``; a game offers it through its spec's
    ``search.open_from``). The learner is trained on phase 1
    alone; it is meant as the phase-1 policy of a hybrid whose search plays phase 2
    (``pimc(fallback=model:...)``). Empty: the game's own reward."""

    # ------------------------------------------------------------------ validation
    def validate(self) -> None:
        """Cross-field checks.

        Raises:
            ConfigError: naming the field, the bad value and what is allowed.
        """
        self.validate_run("sb3")
        self.validate_ppo()
        for name in ("eval_freq", "final_eval_deals"):
            if getattr(self, name) <= 0:
                raise ConfigError(f"{name} must be positive, got {getattr(self, name)}")
        if self.vec_env not in VEC_ENVS:
            raise ConfigError(f"vec_env must be one of {VEC_ENVS}, got {self.vec_env!r}")
        if isinstance(self.learner_seat, str) and self.learner_seat not in ("random", "rotate"):
            raise ConfigError(f"learner_seat must be 'random', 'rotate' or a seat number, got {self.learner_seat!r}")
        self._validate_game_and_agents()
        if self.pretrain is not None:
            self.pretrain.validate(self.game, self.game_options)

    def _validate_game_and_agents(self) -> None:
        from whist_env.agents import make_agent
        from whist_env.errors import OptionError
        from whist_env.registry import get_spec, partnership_games

        spec = get_spec(self.game)
        game = spec.make_rules(**self.game_options)  # its options checked by validate_run
        n = game.num_players
        if isinstance(self.learner_seat, int) and not 0 <= self.learner_seat < n:
            raise ConfigError(f"learner_seat must be 'random', 'rotate' or a seat 0..{n - 1}, got {self.learner_seat}")
        if self.search_reward:
            check_search_reward(self.search_reward, self.game, game)
        if self.partner and spec.partner_offset is None:
            games = ", ".join(partnership_games())
            raise ConfigError(f"partner applies to partnership games ({games}), not {self.game}")
        names = [("opponents", k) for k in self.opponents] + [("eval_opponents", k) for k in self.eval_opponents]
        if self.partner and self.partner != "self":
            names.append(("partner", self.partner))
        for key, name in names:
            try:
                make_agent(name, self.game, **self.game_options)
            except OptionError as err:
                raise ConfigError(f"{key}: {err}") from err


@dataclasses.dataclass
class PPOVecConfig(PPOConfig):
    """Everything one ``ppo_vec`` run needs; the saved ``runs/<run_name>/config.yaml`` reproduces it. The fields
    and checks shared with ``train.py``'s config are :class:`training.config.PPOConfig`'s; here are the defaults that
    suit the batched engine, and what differs."""

    config_prefix: ClassVar[str] = "ppo_vec_"  # its configs in configs/ (CONFIG_PREFIXES)

    n_envs: int = 256
    """Environments stepped as one batch."""
    n_steps: int = 16
    """Steps per environment per rollout (a rollout is ``n_steps * n_envs`` decisions)."""
    batch_size: int = 1024
    """Minibatch size of a PPO update."""
    opponents: dict[str, float] = dataclasses.field(default_factory=lambda: {"random": 1.0})
    """Opponents the learner env plays itself (``random``, ``heuristic``, ``pretrained``: the game's shipped network,
    ``pretrained(path=<exported .npz>)``: a frozen exported one) and their draw weights; every opponent seat draws one
    per rollout (``{pretrained: 1.0}`` trains against the shipped network; ``training/exploit.py`` does so for a
    budget)."""
    partner: str = ""
    """Partnership games only: ``self`` (the partner's seat is played by the learner's weights of the moment, a
    frozen copy taken before every rollout; its decisions are not trained on), ``random`` or ``heuristic``, or empty
    (the partner is drawn like the opponents)."""
    eval_freq: int = 0
    """Timesteps between two evaluations during training (the first at the start; 0: none), each on ``eval_deals``
    duplicate deals per opponent of ``eval_opponents``, the same deals every time (``runs/<run>/eval.csv``)."""
    eval_deals: int = 2000
    """Duplicate deals per opponent in each evaluation during training (the batched arena plays them in seconds)."""
    final_eval_deals: int = 1000
    """Duplicate deals per opponent in the final evaluation (0: none)."""
    eval_opponents: list[str] = dataclasses.field(default_factory=lambda: ["random"])
    """Opponents of the evaluations (agent names ``whist_env.agents`` knows)."""
    eval_workers: int = 1
    """Processes of the evaluations when they play on the AEC arena (agents without a batched form)."""
    device: str = "auto"
    """torch device: ``auto`` (cuda when available, else cpu), ``cpu``, ``cuda``, ``cuda:1``, ..."""
    pretrain: PretrainConfig | None = None
    """Warm start before PPO (keys: ``pretrain.*``; the teacher is the game's heuristic, played batched on the
    engine: ``training/ppo/warm_start.py``); absent or null: PPO starts from random weights."""
    trainer: str = "ppo"
    """The trainer of this config: ``ppo`` (this one; ``python training/train.py --config <file>`` hands it here)."""

    def validate(self) -> None:
        """Cross-field checks.

        Raises:
            ConfigError: naming the field, the bad value and what is allowed.
        """
        from whist_env.vector import vector_game_ids

        self.validate_run("ppo", vector_game_ids(), "games with a batched engine")
        self.validate_ppo()
        for name in ("eval_freq", "final_eval_deals"):
            if getattr(self, name) < 0:
                raise ConfigError(f"{name} must be 0 or more, got {getattr(self, name)}")
        self._validate_env()
        if self.pretrain is not None:
            self._validate_pretrain(self.pretrain)

    def _validate_pretrain(self, p: PretrainConfig) -> None:
        """The section's own checks, and a teacher with a batched form for this game."""
        from whist_env.errors import OptionError
        from whist_env.vector.heuristics import BatchedHeuristic

        p.validate(self.game, self.game_options)
        if p.teacher not in ENGINE_TEACHERS:
            raise ConfigError(
                f"pretrain.teacher: ppo_vec plays the teacher batched on the engine, which only "
                f"{', '.join(ENGINE_TEACHERS)} can, got {p.teacher!r} (train.py's warm start takes any agent)"
            )
        try:
            BatchedHeuristic(self.game, **self.game_options)
        except OptionError as err:
            raise ConfigError(f"pretrain.teacher: {err}") from err

    def _validate_env(self) -> None:
        """The game options, seat and opponents, checked by building the env (one environment) and the agents."""
        from gymnasium.vector import AutoresetMode

        from whist_env.agents import make_agent
        from whist_env.errors import OptionError
        from whist_env.vector import make_learner_env

        if isinstance(self.learner_seat, str) and self.learner_seat != "random":
            raise ConfigError(f"learner_seat must be 'random' or a seat number, got {self.learner_seat!r}")
        if self.partner:
            from whist_env.registry import get_spec, partnership_games

            if get_spec(self.game).partner_offset is None:
                games = ", ".join(partnership_games())
                raise ConfigError(f"partner applies to partnership games ({games}), not {self.game}")
            if self.partner not in ("self", "random", "heuristic"):
                raise ConfigError(
                    f"partner must be 'self', 'random', 'heuristic' or empty (drawn like the opponents), got "
                    f"{self.partner!r}"
                )
        for name in [*self.opponents, *([self.partner] if self.partner in ("random", "heuristic") else [])]:
            try:
                make_learner_env(
                    self.game,
                    1,
                    opponents=name,
                    learner_seat=self.learner_seat,
                    autoreset_mode=AutoresetMode.SAME_STEP,
                    **self.game_options,
                )
            except OptionError as err:
                raise ConfigError(f"opponents {name!r} (or game_options, learner_seat): {err}") from err
        for name in self.eval_opponents:
            try:
                make_agent(name, self.game, **self.game_options)
            except OptionError as err:
                raise ConfigError(f"eval_opponents: {err}") from err


def field_docs(cls: type = TrainConfig) -> dict[str, str]:
    """Field name -> its docstring (read from the dataclass's source, for error messages and ``--help``).

    Args:
        cls: the config dataclass (:class:`TrainConfig`, or another one read by the same loader, such as
            ``training.rllib.config.RLlibConfig``).
    """
    import ast
    import inspect

    docs: dict[str, str] = {}
    # the class's own fields, then those of its sections (a field whose type is a dataclass, as ``pretrain``)
    hints = typing.get_type_hints(cls)
    own = [k for k in reversed(cls.__mro__) if dataclasses.is_dataclass(k)]  # the bases first: a subclass's doc wins
    sections = [(k, "") for k in own] + [
        (hint, f"{name}.") for name, hint in hints.items() if dataclasses.is_dataclass(hint) and isinstance(hint, type)
    ]
    for klass, prefix in sections:
        tree = ast.parse(inspect.getsource(klass))
        node_cls = tree.body[0]
        assert isinstance(node_cls, ast.ClassDef)
        body = node_cls.body
        for node, nxt in zip(body, body[1:], strict=False):
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                doc = nxt.value.value if isinstance(nxt, ast.Expr) and isinstance(nxt.value, ast.Constant) else None
                if isinstance(doc, str):
                    docs[prefix + node.target.id] = " ".join(doc.split())
    return docs


def _fields(cls: type = TrainConfig) -> dict[str, dataclasses.Field]:
    return {f.name: f for f in dataclasses.fields(cls)}


def _check_type(name: str, value: Any, hint: Any) -> Any:
    """``value`` checked (and, for int -> float, converted) against the type ``hint``."""
    origin = typing.get_origin(hint)
    if hint is type(None):
        if value is None:
            return None
    elif dataclasses.is_dataclass(hint) and isinstance(hint, type):
        if isinstance(value, hint):
            return value
        if isinstance(value, dict):
            return _nested(name, value, hint)
    elif origin in (types.UnionType, typing.Union):
        for arm in typing.get_args(hint):
            if isinstance(value, dict) and dataclasses.is_dataclass(arm):  # its own errors say more than the union's
                return _check_type(name, value, arm)
            try:
                return _check_type(name, value, arm)
            except ConfigError:
                continue
        raise ConfigError(f"{name} must be {_type_name(hint)}, got {type(value).__name__} {value!r}")
    if hint is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            try:
                number = float(value)
            except OverflowError:  # an integer beyond the range of a float
                number = float("inf")
            if -float("inf") < number < float("inf"):  # neither NaN nor infinite
                return number
            raise ConfigError(f"{name} must be a finite number, got {_short(value)}")
    elif hint is int or hint is str or hint is bool:
        if type(value) is hint:
            return value
    elif origin is list:
        (item,) = typing.get_args(hint)
        if isinstance(value, list):
            return [_check_type(f"{name}[{i}]", v, item) for i, v in enumerate(value)]
    elif origin is dict:
        key, item = typing.get_args(hint)
        if isinstance(value, dict):
            return {
                _check_type(f"{name} key", k, key): _check_type(f"{name}[{k!r}]", v, item) for k, v in value.items()
            }
    elif hint is Any:
        return value
    raise ConfigError(f"{name} must be {_type_name(hint)}, got {type(value).__name__} {value!r}")


def _nested(name: str, value: dict[str, Any], hint: type) -> Any:
    """A nested config section (``pretrain:``) from its mapping: unknown keys and wrong types are errors."""
    allowed = [f.name for f in dataclasses.fields(hint)]
    unknown = sorted(k for k in value if k not in allowed)
    if unknown:
        raise ConfigError(f"{name}: unknown key(s) {', '.join(map(repr, unknown))}. Allowed keys: {', '.join(allowed)}")
    hints = typing.get_type_hints(hint)
    return hint(**{k: _check_type(f"{name}.{k}", v, hints[k]) for k, v in value.items()})


def _short(value: Any) -> str:
    """``repr(value)`` cut to 80 characters (a 5000-digit number is not repeated back whole)."""
    text = repr(value) if not isinstance(value, int) or abs(value) < 10**60 else f"a {len(str(abs(value)))}-digit int"
    return text if len(text) <= 80 else text[:77] + "..."


def check_range(
    name: str, value: float, low: float | None = None, high: float | None = None, above: bool = False
) -> None:
    """Refuse a number outside its range: below ``low`` (or equal to it when ``above``: it must be greater) or
    above ``high``.

    Raises:
        ConfigError: naming the key, the range and the value.
    """
    if (low is not None and (value < low or (above and value == low))) or (high is not None and value > high):
        if high is None:
            allowed = f"{'>' if above else '≥'} {low}"
        elif low is None:
            allowed = f"≤ {high}"
        else:
            allowed = f"in {'(' if above else '['}{low}, {high}]"
        raise ConfigError(f"{name} must be {allowed}, got {_short(value)}")


def _type_name(hint: Any) -> str:
    origin = typing.get_origin(hint)
    if origin in (types.UnionType, typing.Union):
        return " or ".join(_type_name(a) for a in typing.get_args(hint))
    if hint is type(None):
        return "null"
    if dataclasses.is_dataclass(hint):
        return "a mapping"
    if origin is not None:
        return f"{origin.__name__}[{', '.join(_type_name(a) for a in typing.get_args(hint))}]"
    return getattr(hint, "__name__", str(hint))


def from_dict(values: dict[str, Any], source: str = "config") -> TrainConfig:
    """A validated :class:`TrainConfig` from plain values (:func:`config_from_dict` of any config class).

    Raises:
        ConfigError: an unknown key (the message lists every allowed key), a missing ``game``, a wrong type
            or a bad value.
    """
    config: TrainConfig = config_from_dict(TrainConfig, values, source)
    return config


def config_from_dict(cls: type[C], values: dict[str, Any], source: str = "config") -> C:
    """A validated config of dataclass ``cls`` (a ``game`` field and a ``validate()`` method) from plain values.

    The loader of :class:`TrainConfig`, for any config dataclass written in the same style.

    Raises:
        ConfigError: see :func:`from_dict`.
    """
    if not isinstance(values, dict):
        raise ConfigError(f"{source}: expected a mapping of keys to values, got {type(values).__name__}")
    fields = _fields(cls)
    unknown = sorted(k for k in values if k not in fields)
    if unknown:
        raise ConfigError(
            f"{source}: unknown key(s) {', '.join(map(repr, unknown))}. Allowed keys: {', '.join(fields)}"
        )
    if "game" not in values:
        raise ConfigError(f"{source}: the key 'game' is required (one of the environment ids)")
    hints = typing.get_type_hints(cls)
    checked = {k: _check_type(k, v, hints[k]) for k, v in values.items()}
    config = cls(**checked)
    config.validate()  # type: ignore[attr-defined]
    return config


class UniqueKeyLoader(yaml.SafeLoader):
    """YAML's safe loader that refuses a key given twice in one mapping (PyYAML keeps the last one without a word:
    a second ``game:`` would train another game)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)  # type: ignore[no-untyped-call]
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"the key {key!r} is given twice", key_node.start_mark
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def check_device(device: str) -> None:
    """Refuse a torch device the run could not use: not ``auto``, ``cpu`` or ``cuda[:N]``, or a CUDA device torch
    does not see here (before the warm start spends minutes and the first use fails)."""
    index = device.removeprefix("cuda").removeprefix(":")
    if device not in ("auto", "cpu", "cuda") and not (device.startswith("cuda:") and index.isdigit()):
        raise ConfigError(f"device must be 'auto', 'cpu' or 'cuda[:N]', got {device!r}")
    if device.startswith("cuda"):
        import torch

        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if count <= (int(index) if index else 0):
            seen = f"{count} CUDA device(s)" if count else "no CUDA device"
            raise ConfigError(f"device {device!r}: torch sees {seen} here; use 'auto' or 'cpu'")


def load_config(path: str | Path, overrides: dict[str, Any] | None = None) -> TrainConfig:
    """Read ``path`` (YAML) into a :class:`TrainConfig`, apply ``overrides`` (flags), validate.

    Raises:
        ConfigError: see :func:`from_dict`; also when the file does not exist or does not hold a YAML mapping,
            and when an override names no config key (it came from ``--set``, not from the file).
    """
    config: TrainConfig = load_config_as(TrainConfig, path, overrides)
    return config


def load_config_as(cls: type[C], path: str | Path, overrides: dict[str, Any] | None = None) -> C:
    """:func:`load_config` for any config dataclass ``cls`` written like :class:`TrainConfig` (``game``,
    ``seed``, ``run_name`` fields and a ``validate()`` method).

    Raises:
        ConfigError: see :func:`load_config`.
    """
    path = Path(path)
    if not path.is_file():
        raise missing_config(cls, path)
    try:
        text = path.read_text()
        values = yaml.load(text, Loader=UniqueKeyLoader)  # a SafeLoader that refuses a key given twice
    except (OSError, UnicodeDecodeError) as err:
        raise ConfigError(f"config file {path} cannot be read: {err}") from err
    except (yaml.YAMLError, ValueError, RecursionError) as err:  # ValueError: an integer of over 4300 digits
        raise ConfigError(f"{path}: not valid YAML: {unreadable(err)}") from err
    if values is None:  # an empty file: every key at its default (and 'game' missing)
        values = {}
    if not isinstance(values, dict):
        raise ConfigError(
            f"{path}: the file must be a mapping of config keys to values ('key: value' lines), expected a mapping, "
            f"got a {type(values).__name__}"
        )
    fields = _fields(cls)
    overrides = dict(overrides or {})
    for key in [k for k in overrides if "." in k and k.split(".", 1)[0] in fields]:
        # --set pretrain.epochs=4: one key of a section (the section's other keys stay as the file has them)
        name, sub = key.split(".", 1)
        section = values.get(name)
        merged = dict(section) if isinstance(section, dict) else {}
        merged[sub] = overrides.pop(key)
        values[name] = merged
    unknown = sorted(k for k in overrides if k not in fields)
    if unknown:
        raise ConfigError(
            f"--set: unknown key(s) {', '.join(map(repr, unknown))} in the --set override (not a key of {path}). "
            f"Allowed keys: {', '.join(fields)}"
        )
    values.update(overrides)
    config = config_from_dict(cls, values, source=str(path))
    if not config.run_name:  # type: ignore[attr-defined]
        config.run_name = f"{path.stem}_s{config.seed}"  # type: ignore[attr-defined]
    return config


def parse_set(items: list[str]) -> dict[str, Any]:
    """``["key=value", ...]`` from ``--set`` into a dict; values are read as YAML (``n_envs=4``, ``net_arch=[64]``).

    Raises:
        ConfigError: for an item without ``=`` or a value that is not YAML.
    """
    out: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--set expects key=value, got {item!r}")
        try:
            out[key.strip()] = yaml.safe_load(raw)
        except (yaml.YAMLError, ValueError, RecursionError) as err:  # ValueError: an integer of over 4300 digits
            raise ConfigError(f"--set {key.strip()}: the value is not valid YAML: {unreadable(err)}") from err
    return out


def save_config(config: Any, path: str | Path) -> None:
    """Write ``config`` (a :class:`TrainConfig` or another config dataclass) as YAML (loadable by
    :func:`load_config` / :func:`load_config_as`), whole or not at all: every session of a run writes its
    ``config.yaml`` again, and ``--resume`` reads it."""
    path = Path(path)
    spare = path.with_name(path.name + ".tmp")
    spare.write_text(yaml.safe_dump(dataclasses.asdict(config), sort_keys=False), encoding="utf-8")
    spare.replace(path)
