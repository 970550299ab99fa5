"""Train a MaskablePPO agent on one whist_env game, evaluate it on duplicate deals, write a report.

    python training/train.py --config configs/german_whist.yaml
    python training/train.py --config configs/german_whist.yaml --total-timesteps 50000 --seed 1
    python training/train.py --config configs/german_whist.yaml --resume      # after an interruption

What it does, in order:

1. reads ``configs/<name>.yaml`` into a typed :class:`~training.config.TrainConfig` (an unknown key is an
   error naming the allowed ones); flags override it (``--set key=value`` for any key);
2. builds ``n_envs`` single-agent environments (``whist_env.envs.single_agent``): the learner in one seat,
   the configured opponents (and, with ``self_play``, frozen snapshots of the learner) in the others;
3. trains ``MaskablePPO`` with the legal-action masks, logging to TensorBoard (``runs/<run>/tb``); between
   rollouts it evaluates against the ``eval_opponents`` on duplicate deals, refreshes the self-play
   snapshots, and writes checkpoints from which ``--resume`` continues exactly;
4. saves ``runs/<run>/model.zip``, evaluates it on ``final_eval_deals`` duplicate deals per opponent, and
   writes ``eval.csv``, ``learning_curve.png`` and ``report.md`` next to ``config.yaml``.

The trained model plays through ``whist_env.agents.ModelAgent`` (``make_agent("model:runs/<run>/model.zip",
game)``).
"""

from __future__ import annotations

import argparse
import shlex
import shutil
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # run as a script: make the `training` package importable
    sys.path.insert(0, str(REPO))

from training.config import ConfigError, TrainConfig, field_docs, load_config, parse_set, save_config  # noqa: E402


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description="Train MaskablePPO on a whist_env game (see the module docstring).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Config keys (--set key=value):\n" + "\n".join(f"  {k}: {v}" for k, v in field_docs().items()),
    )
    p.add_argument("--config", type=Path, help="configs/<name>.yaml (not needed with --resume --run-name)")
    p.add_argument("--total-timesteps", type=int, help="override total_timesteps (with --resume: extend the run)")
    p.add_argument("--seed", type=int, help="override seed")
    p.add_argument("--run-name", help="override run_name (default <config stem>_s<seed>)")
    p.add_argument("--runs-dir", help="override runs_dir (default runs)")
    p.add_argument("--n-envs", type=int, help="override n_envs")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override any config key")
    p.add_argument("--resume", action="store_true", help="continue the run from its latest checkpoint")
    p.add_argument("--overwrite", action="store_true", help="delete an existing run directory of the same name")
    return p.parse_args(argv)


def resolve_config(args: argparse.Namespace) -> tuple[TrainConfig, Path, bool]:
    """The run's config, its directory, and whether it resumes from a checkpoint."""
    overrides: dict[str, Any] = parse_set(args.set)
    for flag, key in (("total_timesteps", "total_timesteps"), ("seed", "seed"), ("run_name", "run_name"),
                      ("runs_dir", "runs_dir"), ("n_envs", "n_envs")):  # fmt: skip
        if getattr(args, flag) is not None:
            overrides[key] = getattr(args, flag)
    if args.resume:
        from training.checkpoint import latest_checkpoint

        if args.config is None and "run_name" not in overrides:
            raise ConfigError("--resume needs --run-name NAME or the --config (and --seed) the run was started with")
        if args.config is not None:
            name_probe = load_config(args.config, overrides)
            runs_dir, run_name = Path(name_probe.runs_dir), name_probe.run_name
        else:
            runs_dir, run_name = Path(overrides.get("runs_dir", "runs")), overrides["run_name"]
        run_dir = runs_dir / run_name
        saved = run_dir / "config.yaml"
        if not saved.exists():
            raise ConfigError(f"--resume: {saved} does not exist; start the run without --resume")
        changed = sorted(set(overrides) - {"total_timesteps", "run_name", "runs_dir"})
        if changed:
            raise ConfigError(f"--resume continues the saved config; only --total-timesteps may change, not {changed}")
        keep = {k: overrides[k] for k in ("total_timesteps",) if k in overrides}
        config = load_config(saved, keep)
        has_checkpoint = latest_checkpoint(run_dir) is not None
        if not has_checkpoint:
            print(f"[{config.run_name}] --resume: no checkpoint yet, starting the run from the beginning", flush=True)
        return config, run_dir, has_checkpoint
    if args.config is None:
        raise ConfigError("--config configs/<name>.yaml is required (available: configs/*.yaml)")
    config = load_config(args.config, overrides)
    run_dir = Path(config.runs_dir) / config.run_name
    if run_dir.exists():
        if not args.overwrite:
            raise ConfigError(
                f"{run_dir} already exists: pass --resume to continue it, --overwrite to start it again, or "
                f"--run-name to start another"
            )
        shutil.rmtree(run_dir)
    return config, run_dir, False


def make_evaluate(config: TrainConfig, encoder: Any):  # noqa: ANN201 (returns callbacks.EvalFn)
    """The periodic and final evaluation: the greedy policy against each ``eval_opponents`` entry."""
    from training.evaluation import evaluate_learner
    from training.policy_agent import PolicyAgent

    eval_seed = 1_000_003 + config.seed  # the same deals at every evaluation of the run (common random numbers)

    def run(model: Any, timesteps: int, deals: int, kind: str) -> list[dict[str, Any]]:
        learner = PolicyAgent.from_policy(model.policy, encoder, deterministic=True)
        workers = config.eval_workers if kind == "final" else 1
        rows = []
        for name in config.eval_opponents:
            r = evaluate_learner(config.game, config.game_options, learner, name, deals, eval_seed, workers)
            rows.append({"timesteps": timesteps, "wall_s": 0.0, "kind": kind, "opponent": name, **r})
        return rows

    return run


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        config, run_dir, resume = resolve_config(args)
    except ConfigError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2

    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.utils import LinearSchedule

    from training.callbacks import TrainingCallback
    from training.checkpoint import latest_checkpoint, load_extra, restore_model_state, restore_rng
    from training.envs import build_vec_env, probe_env
    from training.report import plot_learning_curve, write_eval_csv, write_report

    torch.set_num_threads(config.torch_threads)
    run_dir.mkdir(parents=True, exist_ok=True)
    save_config(config, run_dir / "config.yaml")
    # The command that started the run (a resumed run keeps reporting the original one).
    command_file = run_dir / "command.txt"
    if not command_file.exists():
        given = argv if argv is not None else sys.argv[1:]
        command_file.write_text("python training/train.py " + " ".join(shlex.quote(a) for a in given) + "\n")
    command = command_file.read_text().strip()
    encoder = probe_env(config).encoder
    venv = build_vec_env(config)
    schedule = None
    if resume:
        checkpoint = latest_checkpoint(run_dir)
        assert checkpoint is not None
        extra = load_extra(checkpoint)
        model = MaskablePPO.load(checkpoint / "model.zip", env=venv, device=config.device, force_reset=False)
        model.tensorboard_log = str(run_dir / "tb")
        for env_index, snapshot in enumerate(extra["env_states"]):
            venv.env_method("set_state", snapshot, indices=[env_index])
        restore_model_state(model, extra["model_state"])
        restore_rng(extra["rng"])
        schedule = extra["schedule"]
        print(f"[{config.run_name}] resuming from {checkpoint.name} ({model.num_timesteps:,} steps)", flush=True)
    else:
        lr: Any = config.learning_rate
        if config.lr_schedule == "linear":
            lr = LinearSchedule(config.learning_rate, 0.0, 1.0)
        model = MaskablePPO(
            "MlpPolicy",
            venv,
            learning_rate=lr,
            n_steps=config.n_steps,
            batch_size=config.batch_size,
            n_epochs=config.n_epochs,
            gamma=config.gamma,
            gae_lambda=config.gae_lambda,
            clip_range=config.clip_range,
            ent_coef=config.ent_coef,
            vf_coef=config.vf_coef,
            max_grad_norm=config.max_grad_norm,
            policy_kwargs={"net_arch": list(config.net_arch)},
            tensorboard_log=str(run_dir / "tb"),
            seed=config.seed,
            device=config.device,
            verbose=0,
        )
        print(f"[{config.run_name}] {config.game}: {config.total_timesteps:,} steps -> {run_dir}", flush=True)
    evaluate = make_evaluate(config, encoder)
    callback = TrainingCallback(config, run_dir, evaluate, encoder, schedule)
    remaining = max(config.total_timesteps - model.num_timesteps, 0)
    model.learn(remaining, callback=callback, reset_num_timesteps=not resume, tb_log_name="ppo", log_interval=1)

    # The end of training is checkpointed too, so that a run interrupted in the final evaluation resumes there.
    callback.checkpoint()
    model.save(run_dir / "model.zip")
    from whist_env.fingerprint import save_model_metadata  # the game, all its options, the layout: checked on load

    save_model_metadata(run_dir / "model.zip", config.game, config.game_options)
    venv.close()
    t_final = time.time()
    print(f"[{config.run_name}] final evaluation: {config.final_eval_deals} duplicate deals per opponent", flush=True)
    history = [r for r in callback.history if r["kind"] != "final"]
    finals = evaluate(model, model.num_timesteps, config.final_eval_deals, "final")
    for row in finals:
        row["wall_s"] = round(callback.wall_s(), 1)
    history += finals
    write_eval_csv(run_dir / "eval.csv", history)
    plot_learning_curve(run_dir / "learning_curve.png", history, config.run_name)
    write_report(run_dir / "report.md", config.to_dict(), finals, command, callback.wall_s(), model.num_timesteps)
    print(f"\n{config.run_name}: {config.game}, {model.num_timesteps:,} steps, {callback.wall_s() / 60:.1f} min "
          f"(final evaluation {time.time() - t_final:.0f} s)")  # fmt: skip
    for r in finals:
        print(
            f"  vs {r['opponent']:<10} learner {r['mean']:+.3f} ± {r['ci95']:.3f} per deal, learner − opponent "
            f"{r['diff']:+.3f} ± {r['diff_ci95']:.3f} ({r['deals']} duplicate deals, tables won {r['win_rate']:.1%}, "
            f"illegal actions {r['illegal_actions']})"
        )
    print(f"  report: {run_dir / 'report.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
