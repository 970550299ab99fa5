"""Multi-agent self-play with action masks on Ray RLlib (new API stack), from one machine to a cluster.

    python training/train.py --config configs/rllib_german_whist.yaml --iterations 20 --num-env-runners 2
    python training/train.py --config configs/rllib_german_whist.yaml --resume      # after an interruption
    python training/train.py --config configs/rllib_oh_hell.yaml --address 10.0.0.1:6379   # join a cluster

Needs the extra: ``pip install -e ".[rllib]"``. What it does:

1. reads ``configs/rllib_<name>.yaml`` into a typed :class:`~training.rllib.config.RLlibConfig` (same
   conventions as ``training/train.py``: an unknown key is an error naming the allowed ones, ``--set key=value``
   overrides any key, the run lives in ``<runs_dir>/<run_name>/``);
2. starts Ray on this machine (or joins the cluster at ``--address``) and builds RLlib's PPO. With ``engine:
   batched`` (every shipped config) each env runner steps many tables of the batched engine at once, the league's
   other seats played inside (:mod:`whist_env.learning.rllib.engine_env`,
   :mod:`whist_env.learning.rllib.engine_runner`), main
   optionally warm-started (``pretrain:``), and main and its snapshots sent to the runners as numpy policies. With
   ``engine: aec``: one RLModule per league member: ``main`` (learns; every seat it plays feeds its updates) and
   ``snapshot_<k>`` (frozen copies of main, refreshed every ``snapshot_every`` iterations); scripted agents
   (``random``, ``heuristic``) are league members played inside the environment (:mod:`whist_env.learning.rllib.env`);
   the
   policy mapping reads the module from the agent id (:mod:`whist_env.learning.rllib.league`), for any seat count and
   for partnerships;
3. each iteration prints progress: env steps and their rate, the mean return per seat of every module (not
   RLlib's ``episode_return_mean``, which sums all seats of a zero-sum game to 0), main's return per kind of
   opponent, and the arena's evaluation of main against ``eval_opponents`` (duplicate deals, 95% intervals);
4. checkpoints to ``<run>/checkpoints/iter_<n>/``, from which ``--resume`` continues, and which play as an
   agent: ``make_agent("rllib:<run>/checkpoints/iter_<n>", game)`` (or the run directory: its newest one);
5. writes what the other trainers write: ``eval.csv`` and ``learning_curve.png`` after every evaluation,
   ``report.md`` with each phase's time (``phases.json``) at the end, and with ``engine: batched`` the final main
   as ``policy.npz`` (``pretrained(path=...)``).
"""

from __future__ import annotations

import argparse
import gc
import json
import logging
import os
import shutil
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NoReturn

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:  # run as a script: make the `training` package importable
    sys.path.insert(0, str(REPO))

from training.config import ConfigError  # noqa: E402
from training.rllib.config import (  # noqa: E402
    RLlibConfig,
    load_rllib_config,
)

LEAGUE_FILE = "league.json"
"""In every checkpoint: the iteration, the filled snapshot slots and the next one to overwrite."""
POLICIES_DIR = "league_policies"
"""``engine: batched``: in every checkpoint, the numpy snapshots (``snapshot_<k>.npz``, the shipped format)."""


def load_league_policies(checkpoint: Path, config: RLlibConfig) -> dict[str, Any]:
    """The numpy snapshots a checkpoint of ``engine: batched`` holds, by slot."""
    from whist_env.agents.pretrained import load_policy

    folder = checkpoint / POLICIES_DIR
    found = sorted(folder.glob("*.npz")) if folder.is_dir() else []
    return {p.stem: load_policy(p, config.game, config.game_options) for p in found}


def latest_checkpoint(run_dir: Path) -> Path | None:
    """The newest complete checkpoint of a run (one with its league file; every checkpoint moved into place has it),
    or None."""
    from whist_env.learning.rllib.agent import checkpoints_of

    found = [p for p in checkpoints_of(run_dir) if (p / LEAGUE_FILE).is_file()]
    return found[-1] if found else None


def forget_progress_after(progress: Path, iteration: int) -> None:
    """Drop the rows of ``progress.jsonl`` after ``iteration``, the checkpoint a resumed run continues from: the
    iterations a killed run did after its last checkpoint are done again, and each must have one row. A line cut
    short by the kill is dropped too."""
    if not progress.is_file():
        return

    def keep(line: str) -> bool:
        try:
            return line.endswith("\n") and json.loads(line)["iteration"] <= iteration
        except (ValueError, KeyError, TypeError):
            return False

    lines = progress.read_text().splitlines(keepends=True)
    kept = [line for line in lines if keep(line)]
    if len(kept) != len(lines):
        tmp = progress.with_name(progress.name + ".tmp")
        tmp.write_text("".join(kept))
        os.replace(tmp, progress)


# ----------------------------------------------------------------------------- building the algorithm
def env_config(config: RLlibConfig, snapshots: int) -> dict[str, Any]:
    """The environment's config (:class:`whist_env.learning.rllib.env.WhistMultiAgentEnv`)."""
    return {
        "game": config.game,
        "game_options": dict(config.game_options),
        "opponents": dict(config.opponents),
        "snapshot_pool": config.snapshot_pool,
        "snapshots": snapshots,
        "seed": config.seed,
    }


def _ppo(
    config: RLlibConfig, env_name: str, env_cfg: dict[str, Any], learner: str = "whist", **env_runners: Any
) -> Any:
    """RLlib's PPO config on the new API stack with the run's PPO settings, for either engine (``learner="rllib"``:
    RLlib's own ``PPOTorchLearner`` in place of :class:`~whist_env.learning.rllib.learner.WhistPPOLearner`, the
    benchmark's comparison)."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.algorithms.ppo.torch.ppo_torch_learner import PPOTorchLearner

    from whist_env.learning.rllib.callbacks import LeagueMetrics
    from whist_env.learning.rllib.learner import WhistPPOLearner

    return (
        PPOConfig()
        # the new API stack (RLModule, Learner, EnvRunner, connectors), said explicitly though it is 2.60's default
        .api_stack(enable_rl_module_and_learner=True, enable_env_runner_and_connector_v2=True)
        # RLlib's env check steps random unmasked actions, which a card game rejects (only legal cards can be played)
        .environment(env_name, env_config=env_cfg, disable_env_checking=True)
        .framework("torch")
        .env_runners(
            num_env_runners=config.num_env_runners,
            num_envs_per_env_runner=config.num_envs_per_env_runner,
            num_cpus_per_env_runner=1,
            **env_runners,
        )
        # one learner in the driver; RLlib's PPO learner with a lighter optimizer step
        # (whist_env.learning.rllib.learner)
        .learners(num_learners=0, learner_class=PPOTorchLearner if learner == "rllib" else WhistPPOLearner)
        .training(
            lr=config.learning_rate,
            gamma=config.gamma,
            lambda_=config.lambda_,
            clip_param=config.clip_param,
            entropy_coeff=config.entropy_coeff,
            vf_loss_coeff=config.vf_loss_coeff,
            grad_clip=config.grad_clip,
            grad_clip_by="global_norm",
            train_batch_size_per_learner=config.train_batch_size,
            minibatch_size=config.minibatch_size,
            num_epochs=config.num_epochs,
        )
        .callbacks(LeagueMetrics)
        .debugging(seed=config.seed)
    )


def build_algorithm(config: RLlibConfig, snapshots: int = 0, runner: str = "engine", learner: str = "whist") -> Any:
    """RLlib's PPO on the new API stack.

    ``engine: batched``: one module (main, RLlib's default module id,
    :class:`~whist_env.learning.rllib.module.EngineActorCritic`: ppo_vec's network), the env runners
    (:class:`~whist_env.learning.rllib.engine_runner.EngineEnvRunner`; ``runner="rllib"``: RLlib's own
    ``SingleAgentEnvRunner`` through Gymnasium's vector entry point, the benchmark's comparison) step
    :class:`~whist_env.learning.rllib.engine_env.EngineLeagueEnv`, the env being the vector of tables (see
    ``docs/results_rllib.md`` for why this mechanism). ``engine: aec``: one
    :class:`~whist_env.learning.rllib.module.MaskedActorCritic` per league member, the multi-agent
    :class:`~whist_env.learning.rllib.env.WhistMultiAgentEnv`. ``learner``: as :func:`_ppo` takes it, for either engine.

    What the driver holds once the algorithm is built (Ray, torch, RLlib, the learner: hundreds of thousands of
    objects, kept to the end of the run) is then frozen out of Python's cyclic garbage collector (``gc.freeze``):
    its full collections took about 0.2 s each and fell in every few iterations. The price: a cycle among objects
    alive at that moment is never collected until ``gc.unfreeze()``: the training script builds one algorithm per
    process; the benchmark, one per row, unfreezes after each row so that the next one's freeze does not keep it.
    """
    algo = _build_algorithm(config, snapshots, runner, learner)
    gc.collect()
    gc.freeze()
    return algo


def _build_algorithm(config: RLlibConfig, snapshots: int, runner: str, learner: str) -> Any:
    """:func:`build_algorithm` before the freeze."""
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.tune.registry import register_env

    from whist_env.learning.rllib.module import EngineActorCritic, MaskedActorCritic

    model_config = {"hidden": list(config.net_arch)}
    if config.engine == "batched":
        from whist_env.learning.rllib.engine_env import ENGINE_ENV_NAME, EngineLeagueEnv

        register_env(ENGINE_ENV_NAME, lambda cfg: EngineLeagueEnv(cfg))
        env_cfg = engine_env_config(config)
        table = EngineLeagueEnv({**env_cfg, "num_envs": 1})
        spec = RLModuleSpec(
            module_class=EngineActorCritic,
            observation_space=table.single_observation_space,
            action_space=table.single_action_space,
            model_config=model_config,
        )
        if runner == "rllib":  # RLlib's own runner over the same env (the benchmark's middle row)
            ppo = _ppo(config, ENGINE_ENV_NAME, env_cfg, learner, gym_env_vectorize_mode="vector_entry_point")
        else:
            from whist_env.learning.rllib.engine_runner import EngineEnvRunner

            ppo = _ppo(config, ENGINE_ENV_NAME, env_cfg, learner, env_runner_cls=EngineEnvRunner)
        return ppo.rl_module(rl_module_spec=spec).build_algo()

    from whist_env.learning.rllib.env import ENV_NAME, WhistMultiAgentEnv
    from whist_env.learning.rllib.league import MAIN, module_for_agent, module_ids

    register_env(ENV_NAME, lambda cfg: WhistMultiAgentEnv(cfg))
    env_cfg = env_config(config, snapshots)
    probe = WhistMultiAgentEnv(env_cfg)
    first = probe.possible_agents[0]
    module_spec = RLModuleSpec(
        module_class=MaskedActorCritic,
        observation_space=probe.get_observation_space(first),
        action_space=probe.get_action_space(first),
        model_config=model_config,
    )
    ids = module_ids(config.snapshot_pool)
    ppo = _ppo(config, ENV_NAME, env_cfg, learner)
    ppo = ppo.multi_agent(policies=set(ids), policy_mapping_fn=module_for_agent, policies_to_train=[MAIN])
    return ppo.rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=dict.fromkeys(ids, module_spec))).build_algo()


def engine_env_config(config: RLlibConfig) -> dict[str, Any]:
    """The batched league env's config (:class:`whist_env.learning.rllib.engine_env.EngineLeagueEnv`; RLlib adds
    ``num_envs``)."""
    return {
        "game": config.game,
        "game_options": dict(config.game_options),
        "opponents": dict(config.opponents),
        "snapshot_pool": config.snapshot_pool,
        "canonical_suits": config.canonical_suits,
        "seed": config.seed,
    }


def _each_env(algo: Any, fn: Any) -> None:
    """Call ``fn(env)`` on every environment of every env runner (the driver's local runner too, which holds none
    when remote ones sample)."""

    def apply(runner: Any) -> int:
        if runner.env is None:
            return 0
        envs = getattr(runner.env, "envs", None) or [runner.env]
        for env in envs:
            fn(env.unwrapped)
        return len(envs)

    algo.env_runner_group.foreach_env_runner(apply, local_env_runner=True)


def set_env_snapshots(algo: Any, count: int) -> None:
    """Tell every environment on every env runner how many snapshot slots the league may draw from."""
    _each_env(algo, lambda env: env.set_snapshots(count))


def set_env_policy(algo: Any, role: str, policy: Any) -> None:
    """``engine: batched``: let ``policy`` (numpy) play ``role`` (main, a snapshot) in every env runner's league."""
    _each_env(algo, lambda env: env.set_policy(role, policy))


def main_id(config: RLlibConfig) -> str:
    """The module id of the learning policy: ``main`` (aec) or RLlib's default module (batched: the only one)."""
    from ray.rllib.core import DEFAULT_MODULE_ID

    from whist_env.learning.rllib.league import MAIN

    return DEFAULT_MODULE_ID if config.engine == "batched" else MAIN


def main_state(algo: Any, config: RLlibConfig) -> Any:
    """The main module's full state (policy and value networks) from the learner."""
    mid = main_id(config)
    state = algo.learner_group.get_state(components=f"learner/rl_module/{mid}")
    return state["learner"]["rl_module"][mid]


def main_module(algo: Any, config: RLlibConfig) -> Any:
    """A copy of the main module with the learner's weights (whatever the env runners hold now), in eval mode."""
    import copy

    module = copy.deepcopy(algo.get_module(main_id(config)))
    module.set_state(main_state(algo, config))
    module.eval()
    return module


def take_snapshot(algo: Any, config: RLlibConfig, league: dict[str, Any], pool: int, policy: Any = None) -> str:
    """Copy main's weights into the next snapshot slot (the oldest once all are filled); returns its id.

    ``engine: batched``: the slot is main's numpy copy, kept in ``league["policies"]`` (written with the checkpoint)
    and played inside every env runner's league (``policy``: that copy, when the caller has made it already);
    ``aec``: the slot is an RLlib module."""
    from whist_env.learning.rllib.league import snapshot_id

    slot = snapshot_id(league["next_slot"])
    if config.engine == "batched":
        policy = policy if policy is not None else main_module(algo, config).numpy_policy()
        league.setdefault("policies", {})[slot] = policy
        set_env_policy(algo, slot, policy)
    else:
        algo.set_state({"learner_group": {"learner": {"rl_module": {slot: main_state(algo, config)}}}})
    league["snapshots"] = min(league["snapshots"] + 1, pool)
    league["next_slot"] = (league["next_slot"] + 1) % pool
    set_env_snapshots(algo, league["snapshots"])
    return slot


def refresh_main(algo: Any, config: RLlibConfig) -> Any:
    """``engine: batched``: main's numpy copy into every league (the opponents' and partners' ``main`` role); returns
    it."""
    from whist_env.learning.rllib.league import MAIN

    policy = main_module(algo, config).numpy_policy()
    set_env_policy(algo, MAIN, policy)
    return policy


def clone_warm_start(config: RLlibConfig, size: int, num_actions: int, out_dir: Path) -> Any:
    """The warm start of ``config`` (ppo_vec's, :func:`training.ppo.warm_start.warm_start`: teacher data, behaviour
    cloning of the policy and value networks, DAgger) as a fresh ``build_actor_critic`` network; its first weights
    from the run's seed alone (as ppo_vec seeds them), whatever was drawn from torch's generator before.

    It runs on one torch thread (as ppo_vec's warm start does), whatever ``torch_threads`` says: on two, in the driver
    of a running Ray, the first fit's first batch now and then came out different in the last bits (seen in about 2 of
    5 runs on a loaded machine, never on one thread), and with it the whole warm start."""
    import types

    import torch

    from training.ppo.rollout import LearnerView
    from training.ppo.warm_start import warm_start
    from whist_env.learning.net import build_actor_critic

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        torch.manual_seed(config.seed)
        model = build_actor_critic(size, num_actions, list(config.net_arch))
        view = LearnerView(config.game, dict(config.game_options), config.canonical_suits)
        recipe = types.SimpleNamespace(
            game=config.game, game_options=dict(config.game_options), seed=config.seed, run_name=config.run_name,
            pretrain=config.pretrain, reward_scale=1.0,
        )  # fmt: skip
        warm_start(model, recipe, view, out_dir)
    finally:
        torch.set_num_threads(threads)
    return model


def warm_start_main(algo: Any, config: RLlibConfig, run_dir: Path) -> None:
    """``pretrain:``: clone the heuristic on the engine (:func:`clone_warm_start`) and make the result main's weights,
    on the learner and every env runner."""
    probe = algo.get_module(main_id(config))
    size = int(probe.observation_space["observation"].shape[0])
    model = clone_warm_start(config, size, int(probe.action_space.n), run_dir)
    module = main_module(algo, config)
    module.net.load_state_dict(model.state_dict())  # the same network (EngineActorCritic wraps build_actor_critic)
    state = module.get_state()
    algo.set_state({"learner_group": {"learner": {"rl_module": {main_id(config): state}}}})
    algo.env_runner_group.sync_weights(from_worker_or_learner_group=algo.learner_group, inference_only=True)


# ----------------------------------------------------------------------------- evaluation and reporting
def evaluate_main(algo: Any, config: RLlibConfig, run_dir: Path, policy: Any = None) -> dict[str, dict[str, Any]]:
    """Main against every ``eval_opponents`` in the arena on ``eval_deals`` duplicate deals, keyed by opponent: the
    same deals at every evaluation of the run (``config.eval_seed``, the other trainers' rule).

    ``engine: batched``: main's numpy copy, exported to ``<run>/eval_policy.npz``, plays on the batched arena where
    every opponent has a batched form (:func:`training.evaluation.batched_ok`), in seconds."""
    from training.evaluation import batched_ok, evaluate_learner
    from whist_env.learning.rllib.agent import RLlibAgent

    seed = config.eval_seed
    if config.engine == "batched":
        from whist_env.agents.pretrained import export_policy

        policy = policy if policy is not None else main_module(algo, config).numpy_policy()
        path = export_policy(policy, run_dir / "eval_policy.npz", config.game, config.game_options,
                             canonical_suits=config.canonical_suits)  # fmt: skip
        learner = f"pretrained(path={path})"
        return {
            opponent: evaluate_learner(
                config.game,
                config.game_options,
                learner,
                opponent,
                config.eval_deals,
                seed=seed,
                batched=batched_ok(config.game, dict(config.game_options), [learner, opponent]),
            )  # fmt: skip
            for opponent in config.eval_opponents
        }
    agent = RLlibAgent(None, config.game, module=main_module(algo, config), **config.game_options)
    return {
        opponent: evaluate_learner(config.game, config.game_options, agent, opponent, config.eval_deals, seed=seed)
        for opponent in config.eval_opponents
    }


def eval_history(config: RLlibConfig, run_dir: Path) -> list[dict[str, Any]]:
    """The run's evaluations as the rows of ``eval.csv`` (every trainer's columns: :mod:`training.report`), read from
    ``progress.jsonl`` (which a resumed run has cut back to its checkpoint): ``timesteps`` are the env steps RLlib
    has sampled so far, ``wall_s`` the iterations' training time so far, and the last iteration's evaluation is
    the ``final`` one."""
    progress = run_dir / "progress.jsonl"
    rows: list[dict[str, Any]] = []
    wall = 0.0
    for line in progress.read_text().splitlines() if progress.exists() else []:
        it = json.loads(line)
        wall += it["train_s"]
        kind = "final" if it["iteration"] == config.iterations else "periodic"
        for opponent, e in it["eval"].items():
            rows.append(
                {**e, "opponent": opponent, "timesteps": it["env_steps"], "wall_s": round(wall, 1), "kind": kind}
            )
    return rows


def write_eval_history(config: RLlibConfig, run_dir: Path) -> None:
    """``eval.csv`` and ``learning_curve.png`` from :func:`eval_history`."""
    from training.report import plot_learning_curve, write_eval_csv

    rows = eval_history(config, run_dir)
    write_eval_csv(run_dir / "eval.csv", rows)
    plot_learning_curve(run_dir / "learning_curve.png", rows, config.run_name)


def _metric(result: Mapping[str, Any], *path: str, default: Any = None) -> Any:
    node: Any = result
    for key in path:
        if not isinstance(node, Mapping) or key not in node:
            return default
        node = node[key]
    return node


def _builtin(value: Any) -> Any:
    """A numpy number as a plain one (for ``json.dumps``)."""
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"cannot write {type(value).__name__} {value!r} as JSON")


def summary_line(row: dict[str, Any]) -> str:
    """One iteration in one line."""
    seats = " ".join(f"{m} {v:+.2f}" for m, v in sorted(row["seat_return"].items()))
    vs = " ".join(f"{k} {v:+.2f}" for k, v in sorted(row["main_vs"].items()))
    evals = " ".join(
        f"vs {opp} {e['diff']:+.2f}±{e['diff_ci95']:.2f} (illegal {e['illegal_actions']})"
        for opp, e in row["eval"].items()
    )
    return (
        f"iter {row['iteration']}: {row['env_steps']:,} env steps ({row['env_steps_per_s']:,.0f}/s) | "
        f"return/seat {seats or '-'} | main vs {vs or '-'} | arena {evals or '-'}"
    )


def save_checkpoint(algo: Any, config: RLlibConfig, run_dir: Path, league: dict[str, Any]) -> Path:
    """Write ``checkpoints/iter_<n>/`` (RLlib's checkpoint, the league and the game) atomically and drop old ones.

    Everything is written into a temporary directory that is then moved into place
    (:func:`training.checkpoint.write_checkpoint_dir`, the write every trainer uses): a run killed at any moment
    leaves either the whole checkpoint or none.

    Raises:
        CheckpointWriteError: it could not be written (disk full, ...); the previous one is intact.
    """
    from training.checkpoint import write_checkpoint_dir
    from whist_env.agents.pretrained import export_policy
    from whist_env.fingerprint import ModelMetadata
    from whist_env.learning.rllib.agent import META_FILE, checkpoints_of

    def write(tmp: Path) -> None:
        algo.save_to_path(str(tmp.resolve()))
        (tmp / META_FILE).write_text(
            json.dumps(
                {
                    "game": config.game,
                    "game_options": config.game_options,
                    "net_arch": config.net_arch,
                    "engine": config.engine,
                    "canonical_suits": config.canonical_suits,
                    "metadata": ModelMetadata.for_game(  # the layout --resume checks (training.checkpoint.check_layout)
                        config.game, config.game_options, canonical_suits=config.canonical_suits
                    ).to_dict(),
                }
            )  # fmt: skip
        )
        policies = league.get("policies", {})
        for slot, policy in policies.items():  # engine: batched: the snapshots the env runners' leagues play
            export_policy(policy, tmp / POLICIES_DIR / f"{slot}.npz", config.game, config.game_options,
                          canonical_suits=config.canonical_suits)  # fmt: skip
        (tmp / LEAGUE_FILE).write_text(json.dumps({k: v for k, v in league.items() if k != "policies"}))

    path = write_checkpoint_dir(run_dir / "checkpoints" / f"iter_{league['iteration']:06d}", write)
    for old in checkpoints_of(run_dir)[: -config.keep_checkpoints]:
        if old != path:
            shutil.rmtree(old)
    return path


# ----------------------------------------------------------------------------- the run contract
class RLlibSession:
    """A self-play run on Ray in progress (see :class:`training.run.Session`): Ray started (or the cluster at
    ``--address`` joined) and the algorithm built, from zero or restored from a checkpoint."""

    final_phase = None  # the last iteration's evaluation is the final one: it is part of PPO's time

    def __init__(self, config: RLlibConfig, run_dir: Path, found: Path | None, address: str | None) -> None:
        if address:
            _use_token_auth()  # before Ray is imported: it reads the mode once
        from whist_env.learning.rllib import require

        try:
            require("ray.rllib", "the rllib trainer")
        except ImportError as err:  # one line naming the extra, like a config error
            raise ConfigError(str(err)) from err
        import ray
        import torch

        torch.set_num_threads(config.torch_threads)
        self.config, self.run_dir = config, run_dir
        self.algo: Any = None
        self.league: dict[str, Any] = {"iteration": 0, "snapshots": 0, "next_slot": 0, "env_steps": 0}
        if found is not None:
            self.league.update(json.loads((found / LEAGUE_FILE).read_text()))
            forget_progress_after(run_dir / "progress.jsonl", self.league["iteration"])
        self.envs = f"{config.num_env_runners} env runners × {config.num_envs_per_env_runner} envs ({config.engine})"
        _start_ray(ray, config, address)
        try:
            self._build(found, address)
        except BaseException:
            ray.shutdown()
            raise

    def _build(self, found: Path | None, address: str | None) -> None:
        import ray

        config, league = self.config, self.league
        resources = ray.cluster_resources()
        where = f"cluster at {address}" if address else "local Ray"
        print(f"[{config.run_name}] {config.game}: {where} ({resources.get('CPU', 0):.0f} CPUs), "
              f"{config.num_env_runners} env runners -> {self.run_dir}", flush=True)  # fmt: skip
        self.algo = build_algorithm(config, snapshots=league["snapshots"])
        report_placement(self.algo, config, self.run_dir)
        if found is not None:
            self.algo.restore_from_path(str(found.resolve()))
            if config.engine == "batched":
                league["policies"] = load_league_policies(found, config)
                for slot, policy in league["policies"].items():
                    set_env_policy(self.algo, slot, policy)
            set_env_snapshots(self.algo, league["snapshots"])
            print(f"[{config.run_name}] resuming from {found.name} (iteration {league['iteration']})", flush=True)

    @property
    def steps(self) -> int:
        return int(self.league["env_steps"])

    @property
    def history(self) -> list[dict[str, Any]]:
        return [row for row in eval_history(self.config, self.run_dir) if row["kind"] != "final"]

    def warm_start(self) -> None:
        config = self.config
        start = time.perf_counter()
        warm_start_main(self.algo, config, self.run_dir)
        self.league["warm_start_s"] = round(time.perf_counter() - start, 1)
        if config.engine == "batched":  # the warm start itself, as a file that plays (the issue's baseline)
            from whist_env.agents.pretrained import export_policy

            export_policy(main_module(self.algo, config).numpy_policy(), self.run_dir / "warm_start.npz", config.game,
                          config.game_options, canonical_suits=config.canonical_suits)  # fmt: skip

    def train(self) -> float:
        if self.config.engine == "batched":
            refresh_main(self.algo, self.config)
        _train(self.algo, self.config, self.run_dir, self.league)
        return float(self.league.get("wall_s", 0.0))

    def save(self) -> None:
        """The last iteration is checkpointed by :func:`_train` (every ``checkpoint_every`` and at the end)."""

    def export(self) -> Path:
        """``engine: batched``: main as ``policy.npz``, as every trainer exports it; ``aec``: the checkpoint, which
        plays as ``rllib:<run>``."""
        config = self.config
        if config.engine != "batched":
            return self.run_dir
        from whist_env.agents.pretrained import export_policy

        policy = main_module(self.algo, config).numpy_policy()
        return Path(export_policy(policy, self.run_dir / "policy.npz", config.game, config.game_options,
                                  canonical_suits=config.canonical_suits))  # fmt: skip

    def evaluate(self, policy: Path) -> list[dict[str, Any]]:
        """The last iteration's evaluation (every run evaluates at its last iteration)."""
        return [row for row in eval_history(self.config, self.run_dir) if row["kind"] == "final"]

    def close(self) -> None:
        import ray

        if self.algo is not None:
            self.algo.stop()
        ray.shutdown()


def ray_logs() -> str:
    """The folder of the logs of Ray's newest session on this machine, found as Ray finds its own: under
    ``RAY_TMPDIR``, else (on Linux) ``TMPDIR``, else ``/tmp``."""
    root = os.environ.get("RAY_TMPDIR") or (os.environ.get("TMPDIR") if sys.platform.startswith("linux") else None)
    return os.path.join(root or "/tmp", "ray", "session_latest", "logs") + os.sep


def _start_ray(ray: Any, config: RLlibConfig, address: str | None) -> None:
    """Start a Ray of this run's own (``address="local"``: even where a stopped ``ray start`` left its address
    behind in /tmp/ray), or join the cluster at ``address``; one thread per process (the env runners' small networks
    gain nothing from more, and the cores are few)."""
    runtime_env: dict[str, Any] = {"env_vars": {"OMP_NUM_THREADS": "1"}}
    if address:
        ray.init(address=address, runtime_env=runtime_env, logging_level=logging.WARNING)
        return
    # the local workers import whist_env from this checkout, as the driver does
    runtime_env["env_vars"]["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p)
    cpus = max(os.cpu_count() or 1, config.num_env_runners + 1)
    ray.init(address="local", num_cpus=cpus, include_dashboard=False, runtime_env=runtime_env,
             logging_level=logging.WARNING)  # fmt: skip


class RLlibTrainer:
    """The rllib trainer's side of the run contract (:class:`training.run.Trainer`)."""

    name = "rllib"
    config_class = RLlibConfig
    length = "iterations"
    resumable = ("iterations", "num_env_runners")
    exit_codes: dict[type[BaseException], int] = {}

    def __init__(self) -> None:
        self.exit_codes = {EnvRunnerFailureError: 1}

    def add_flags(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--num-env-runners", type=int, help="override num_env_runners")
        parser.add_argument("--address", help="join the Ray cluster at this address (host:port or ray://host:10001)")

    def load_config(self, path: Path, overrides: dict[str, Any]) -> RLlibConfig:
        return load_rllib_config(path, overrides)

    def find_checkpoint(self, run_dir: Path) -> tuple[Path, Any] | None:
        found = latest_checkpoint(run_dir)
        return None if found is None else (found, None)

    def metadata(self, found: tuple[Path, Any]) -> dict[str, Any] | None:
        from whist_env.learning.rllib.agent import META_FILE

        stored: dict[str, Any] | None = json.loads((found[0] / META_FILE).read_text()).get("metadata")
        return stored

    def start(self, config: RLlibConfig, run_dir: Path, args: argparse.Namespace) -> RLlibSession:
        return RLlibSession(config, run_dir, None, args.address)

    def resume(
        self, config: RLlibConfig, run_dir: Path, found: tuple[Path, Any], args: argparse.Namespace
    ) -> RLlibSession:
        return RLlibSession(config, run_dir, found[0], args.address)

    def leave(self, args: argparse.Namespace, status: int) -> None:
        if args.address:
            _leave_cluster(status)


def _leave_cluster(status: int) -> NoReturn:
    """End the process now with ``status``, skipping the interpreter's teardown, after a run on a cluster
    (``--address``). By now every file is written and closed and Ray is shut down. A driver connected to a cluster
    was seen once (CI, the two-node test, under load) to die of SIGSEGV after its run had finished and printed its
    last line, so a finished run reported exit -11; Ray's core worker being torn down with the interpreter is the
    likely place (it did not happen again in 12 runs here, loaded or not). Nothing is left to do at that point."""
    sys.stdout.flush()
    sys.stderr.flush()
    logging.shutdown()
    os._exit(status)


def report_placement(algo: Any, config: RLlibConfig, run_dir: Path) -> dict[str, Any]:
    """Where the env runners run: each one's Ray node id and address, printed and written to ``<run>/placement.json``
    (how a cluster run, and the multi-node test, see that runners were spread over the nodes)."""
    import ray

    def where(runner: Any) -> dict[str, Any]:
        import socket

        context = ray.get_runtime_context()
        return {"node_id": context.get_node_id(), "host": socket.gethostname(), "pid": os.getpid()}

    runners = algo.env_runner_group.foreach_env_runner(where, local_env_runner=config.num_env_runners == 0)
    nodes = {n["NodeID"]: n["NodeManagerAddress"] for n in ray.nodes() if n.get("Alive")}
    for r in runners:
        r["address"] = nodes.get(r["node_id"], "?")
    placement = {"runners": runners, "nodes": len({r["node_id"] for r in runners}), "cluster_nodes": len(nodes)}
    (run_dir / "placement.json").write_text(json.dumps(placement, indent=1) + "\n")
    print(
        f"[{config.run_name}] {len(runners)} env runner(s) on {placement['nodes']} of the cluster's {len(nodes)} "
        f"node(s): " + ", ".join(f"{r['address']}/{r['node_id'][:8]}" for r in runners),
        flush=True,
    )
    return placement


def _use_token_auth() -> None:
    """Join a cluster with the token ``ray start --head`` made (Ray 2.5x enables token authentication).

    A driver that joins with ``ray.init(address=...)`` is refused ("Authentication token is missing") unless
    ``RAY_AUTH_MODE=token`` is set, even with the token in ``~/.ray/auth_token``; set it when a token is there
    (copy the head's ``~/.ray/auth_token`` to a machine that joins, or set ``RAY_AUTH_TOKEN``).
    """
    has_token = (Path.home() / ".ray" / "auth_token").is_file() or "RAY_AUTH_TOKEN" in os.environ
    if has_token and "RAY_AUTH_MODE" not in os.environ:
        os.environ["RAY_AUTH_MODE"] = "token"


EMPTY_ITERATIONS = 3
"""The run stops (:class:`EnvRunnerFailureError`) after this many iterations in a row that sampled nothing."""


class EnvRunnerFailureError(RuntimeError):
    """The env runners sampled nothing for :data:`EMPTY_ITERATIONS` iterations in a row: they keep failing."""


def _progress_row(result: Mapping[str, Any], it: int, env_steps: int, steps: int, train_s: float, mid: str) -> dict:
    """An iteration's row of ``progress.jsonl`` from RLlib's result: the env steps, the time, the league's returns
    per seat and per opponent, each module's steps (its evaluation is added by :func:`_train`)."""
    from whist_env.learning.rllib.league import MAIN

    league = ("env_runners", "league")
    return {
        "iteration": it,
        "env_steps": env_steps,
        "iteration_env_steps": steps,
        "train_s": round(train_s, 3),
        "env_steps_per_s": steps / train_s if train_s > 0 else 0.0,
        "seat_return": dict(_metric(result, *league, "seat_return", default={}) or {}),
        "episodes": dict(_metric(result, *league, "episodes", default={}) or {}),
        "main_vs": dict(_metric(result, *league, "main_vs", default={}) or {}),
        "module_steps": {  # engine: batched: RLlib's default module is main
            (MAIN if k == mid else k): int(v)
            for k, v in (_metric(result, "env_runners", "num_module_steps_sampled", default={}) or {}).items()
        },
        "eval": {},
    }


def _train(algo: Any, config: RLlibConfig, run_dir: Path, league: dict[str, Any]) -> None:
    progress = run_dir / "progress.jsonl"
    mid = main_id(config)
    empty = 0  # iterations in a row that sampled no env step
    while league["iteration"] < config.iterations:
        start = time.perf_counter()
        result = algo.train()
        train_s = time.perf_counter() - start
        league["iteration"] += 1
        it = league["iteration"]
        steps = int(_metric(result, "env_runners", "num_env_steps_sampled", default=0) or 0)
        # RLlib answers a failed env runner by restarting it, and PPO's iteration without samples by returning early:
        # left alone, a runner that fails at every step would end the run with no training and exit status 0
        empty = empty + 1 if steps == 0 else 0
        if empty:
            print(f"[{config.run_name}] iteration {it} sampled no env steps: the env runners failed (Ray restarts "
                  f"them; their errors are above or in Ray's logs, {ray_logs()})",
                  file=sys.stderr, flush=True)  # fmt: skip
        if empty >= EMPTY_ITERATIONS:
            raise EnvRunnerFailureError(
                f"{config.run_name}: {empty} iterations in a row (up to {it}) sampled no env steps, so the env "
                "runners keep failing; nothing was trained since. See their errors above or in Ray's logs "
                f"({ray_logs()}); --resume continues from the newest checkpoint"
            )
        league["env_steps"] += steps
        row = _progress_row(result, it, league["env_steps"], steps, train_s, mid)
        policy = refresh_main(algo, config) if config.engine == "batched" else None  # main's numpy copy, made once
        if config.snapshot_pool and it % config.snapshot_every == 0:
            row["snapshot"] = take_snapshot(algo, config, league, config.snapshot_pool, policy)
        row["snapshots"] = league["snapshots"]
        if it % config.eval_every == 0 or it == config.iterations:
            row["eval"] = evaluate_main(algo, config, run_dir, policy)
        # the iterations' wall time over every session of the run (their evaluations included), kept by checkpoints
        league["wall_s"] = round(league.get("wall_s", 0.0) + time.perf_counter() - start, 3)
        if it % config.checkpoint_every == 0 or it == config.iterations:
            row["checkpoint"] = str(save_checkpoint(algo, config, run_dir, league))
        with progress.open("a") as f:
            f.write(json.dumps(row, default=_builtin) + "\n")
        print(f"[{config.run_name}] {summary_line(row)}", flush=True)
        if row["eval"]:
            write_eval_history(config, run_dir)


TRAINER = RLlibTrainer()

if __name__ == "__main__":
    sys.exit("run it with python training/train.py --config configs/rllib_<game>.yaml")
