"""The sb3 trainer (``trainer: sb3``, the default): sb3-contrib's MaskablePPO on the AEC env's single-agent wrapper.

What a run does, after :mod:`training.run` has resolved it:

1. builds ``n_envs`` single-agent environments (``whist_env.envs.single_agent``, :mod:`training.sb3.envs`): the
   learner in one seat, the configured opponents (and, with ``self_play``, frozen snapshots of the learner) in the
   others;
2. trains ``MaskablePPO`` (:mod:`whist_env.learning.sb3`) with the legal-action masks, logging to TensorBoard
   (``runs/<run>/tb``); between rollouts it evaluates against the ``eval_opponents`` on duplicate deals, refreshes
   the self-play snapshots, and writes checkpoints from which ``--resume`` continues exactly
   (:mod:`training.sb3.callbacks`);
3. saves ``runs/<run>/model.zip`` (SB3's own format, with the game's metadata) and ``policy.npz`` (the numpy
   format every trainer exports, played by ``pretrained(path=...)``), and evaluates the model on
   ``final_eval_deals`` duplicate deals per opponent.

The trained model plays through ``whist_env.agents.ModelAgent`` (``make_agent("model:runs/<run>/model.zip",
game)``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from training.config import TrainConfig, load_config


class SB3Session:
    """A MaskablePPO run in progress (see :class:`training.run.Session`)."""

    envs = None
    final_phase = "final evaluation"

    def __init__(self, config: TrainConfig, run_dir: Path, found: tuple[Path, dict[str, Any]] | None) -> None:
        import torch

        from training.checkpoint import restore_model_state, restore_rng
        from training.sb3.callbacks import TrainingCallback
        from training.sb3.envs import build_vec_env, probe_encoder
        from whist_env.learning.sb3 import make_ppo

        torch.set_num_threads(config.torch_threads)
        self.config, self.run_dir, self.resumed = config, run_dir, found is not None
        self.encoder = probe_encoder(config)
        self.venv = build_vec_env(config)
        ppo_keys = ("net_arch", "learning_rate", "lr_schedule", "device", "n_steps", "batch_size", "n_epochs",
                    "gamma", "gae_lambda", "clip_range", "ent_coef", "vf_coef", "max_grad_norm")  # fmt: skip
        self.model = make_ppo(self.venv, seed=config.seed, tensorboard_log=str(run_dir / "tb"),
                              **{key: getattr(config, key) for key in ppo_keys})  # fmt: skip
        schedule = None
        if found is not None:  # the model rebuilt from the config, its state dicts and counters loaded
            checkpoint, header = found
            state = header["state"]
            self.model.policy.load_state_dict(state["policy"])
            self.model.policy.optimizer.load_state_dict(state["optimizer"])
            for env_index, snapshot in enumerate(state["env_states"]):
                self.venv.env_method("set_state", snapshot, indices=[env_index])
            restore_model_state(self.model, state["model_state"])
            restore_rng(state["rng"])
            schedule = state["schedule"]
            print(f"[{config.run_name}] resuming from {checkpoint.name} ({self.model.num_timesteps:,} steps)")
        else:
            print(f"[{config.run_name}] {config.game}: {config.total_timesteps:,} steps -> {run_dir}", flush=True)
        self.evaluate_at = make_evaluate(config, self.encoder, run_dir)
        self.callback = TrainingCallback(config, run_dir, self.evaluate_at, self.encoder, schedule)
        self.callback.attach(self.model)

    @property
    def steps(self) -> int:
        return int(self.model.num_timesteps)

    @property
    def history(self) -> list[dict[str, Any]]:
        return list(self.callback.history)

    def warm_start(self) -> None:
        from training.sb3.warm_start import warm_start

        warm_start(self.model, self.config, self.encoder, self.run_dir)

    def train(self) -> float:
        from whist_env.learning.sb3 import run_ppo

        callback = self.callback
        run_ppo(self.model, self.config.total_timesteps, callback.tasks(), on_start=callback.on_start,
                resume=self.resumed)  # fmt: skip
        return float(callback.wall_s())

    def save(self) -> None:
        self.callback.checkpoint()

    def export(self) -> Path:
        from whist_env.fingerprint import save_model_metadata  # the game, all its options, the layout: checked on load

        config = self.config
        self.model.save(self.run_dir / "model.zip")
        save_model_metadata(self.run_dir / "model.zip", config.game, config.game_options,
                            canonical_suits=config.canonical_suits)  # fmt: skip
        return self.run_dir / "model.zip"

    def evaluate(self, policy: Path) -> list[dict[str, Any]]:
        config = self.config
        print(f"[{config.run_name}] final evaluation: {config.final_eval_deals} duplicate deals per opponent")
        finals = self.evaluate_at(self.model, self.steps, config.final_eval_deals, "final")
        for row in finals:
            row["wall_s"] = round(self.callback.wall_s(), 1)
        return finals

    def close(self) -> None:
        from training.sb3.envs import close_vec_env

        close_vec_env(self.venv)


def make_evaluate(config: TrainConfig, encoder: Any, run_dir: Path | None = None):  # noqa: ANN201 (callbacks.EvalFn)
    """The periodic and final evaluation: the greedy policy against each ``eval_opponents`` entry.

    With a ``run_dir``, where every agent has a batched form (:func:`training.evaluation.batched_ok`), each evaluation
    exports the policy of that moment to ``run_dir/policy.npz`` (the one exporter,
    :func:`whist_env.agents.pretrained.export_policy`) and plays it on the batched arena, as the ppo trainer does:
    the same deals and the same greedy decisions as the AEC arena, in seconds instead of a minute. Otherwise one
    evaluation agent serves the whole run on the AEC arena; before every evaluation the model's current weights are
    copied into it (:meth:`~whist_env.learning.sb3.PolicyAgent.sync`), so each evaluation plays the policy of that
    moment. The start-up and final evaluations show their progress (with an ETA) on stderr.
    """
    from training import evaluation
    from whist_env.agents.pretrained import export_policy
    from whist_env.learning.sb3 import PolicyAgent

    learner: PolicyAgent | str | None = None
    batched = run_dir is not None and evaluation.batched_ok(
        config.game, config.game_options, ["pretrained", *config.eval_opponents]
    )

    def run(model: Any, timesteps: int, deals: int, kind: str) -> list[dict[str, Any]]:
        nonlocal learner
        if batched:
            assert run_dir is not None
            path = export_policy(
                model.policy, run_dir / "policy.npz", config.game, config.game_options, config.canonical_suits
            )
            learner = f"pretrained(path={path})"
        elif learner is None:
            learner = PolicyAgent.from_policy(model.policy, encoder, True, canonical_suits=config.canonical_suits)
        else:
            assert isinstance(learner, PolicyAgent)
            learner.sync(model.policy)
        workers = config.eval_workers if kind == "final" else 1
        progress = kind == "final" or timesteps == 0
        rows = []
        for name in config.eval_opponents:
            if progress:
                what = "final" if kind == "final" else "start-up"
                print(f"[{config.run_name}] {what} evaluation vs {name}: {deals} duplicate deals", file=sys.stderr,
                      flush=True)  # fmt: skip
            r = evaluation.evaluate_learner(
                config.game, config.game_options, learner, name, deals, config.eval_seed, workers, progress, batched
            )
            rows.append({"timesteps": timesteps, "wall_s": 0.0, "kind": kind, "opponent": name, **r})
        return rows

    return run


class SB3Trainer:
    """The sb3 trainer's side of the run contract (:class:`training.run.Trainer`)."""

    name = "sb3"
    config_class = TrainConfig
    length = "total_timesteps"
    resumable = ("total_timesteps",)
    exit_codes: dict[type[BaseException], int] = {}

    def add_flags(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--n-envs", type=int, help="override n_envs")

    def load_config(self, path: Path, overrides: dict[str, Any]) -> TrainConfig:
        return load_config(path, overrides)

    def find_checkpoint(self, run_dir: Path) -> tuple[Path, dict[str, Any]] | None:
        from training.checkpoint import SB3_REQUIRED, find_state

        warn = lambda line: print(line, file=sys.stderr, flush=True)  # noqa: E731
        return find_state(run_dir, self.name, SB3_REQUIRED, warn=warn)

    def metadata(self, found: tuple[Path, Any]) -> dict[str, Any] | None:
        stored: dict[str, Any] | None = found[1]["metadata"]
        return stored

    def start(self, config: TrainConfig, run_dir: Path, args: argparse.Namespace) -> SB3Session:
        return SB3Session(config, run_dir, None)

    def resume(
        self, config: TrainConfig, run_dir: Path, found: tuple[Path, Any], args: argparse.Namespace
    ) -> SB3Session:
        return SB3Session(config, run_dir, found)

    def leave(self, args: argparse.Namespace, status: int) -> None:
        pass


TRAINER = SB3Trainer()
