"""Shared pieces of the training tests: a tiny budget for any config."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# configs/rllib_*.yaml are training/rllib/trainer.py's (RLlibConfig), tested in tests/rllib
CONFIGS = sorted(p for p in (REPO / "configs").glob("*.yaml") if not p.name.startswith(("rllib_", "ppo_vec_")))


def tiny_args(config: Path, runs_dir: Path, run_name: str, total: int = 256, *extra: str) -> list[str]:
    """``train.py`` arguments for a run of a few hundred steps with every periodic feature exercised."""
    sets: dict[str, object] = {
        "n_envs": 2,
        "n_steps": 64,
        "batch_size": 64,
        "n_epochs": 1,
        "eval_freq": 128,
        "checkpoint_freq": 128,
        "eval_deals": 2,
        "final_eval_deals": 3,
        "eval_workers": 1,
    }
    args = ["--config", str(config), "--runs-dir", str(runs_dir), "--run-name", run_name]
    args += ["--total-timesteps", str(total)]
    if _has_warm_start(config):  # the warm start too, on a few deals (every step of it still runs)
        sets.update({"pretrain.deals": 20, "pretrain.relabel_deals": 10, "pretrain.workers": 1})
    for key, value in sets.items():
        args += ["--set", f"{key}={value}"]
    return args + list(extra)


def _has_warm_start(config: Path) -> bool:
    import yaml

    return bool((yaml.safe_load(config.read_text()) or {}).get("pretrain"))


class ThreadCheckAgent:
    """Plays the lowest legal action while torch runs on one thread, an illegal one (-1) otherwise: the arena
    counts it, so a report tells whether the process it played in was single-threaded."""

    name = "thread_check"

    def act(self, view: object, rng: object) -> int:
        import torch

        if torch.get_num_threads() != 1:
            return -1
        legal = view.legal  # type: ignore[attr-defined]
        return (legal & -legal).bit_length() - 1


def sb3_checkpoint(run_dir: Path) -> tuple[Path, dict]:
    """The newest valid checkpoint of an sb3 run and its header (the state under ``"state"``)."""
    from training.checkpoint import SB3_REQUIRED, find_state

    found = find_state(run_dir, "sb3", SB3_REQUIRED)
    assert found is not None, f"{run_dir} has no valid checkpoint"
    return found


def latest_checkpoint(run_dir: Path) -> Path | None:
    """The newest valid checkpoint directory of an sb3 run, or None."""
    from training.checkpoint import SB3_REQUIRED, find_state

    found = find_state(run_dir, "sb3", SB3_REQUIRED)
    return None if found is None else found[0]
