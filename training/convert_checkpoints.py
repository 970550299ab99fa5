"""Convert the checkpoints of runs written before plain-data checkpoints (up to c56cd13: sb3's ``model.zip`` and
``state.pkl``, ppo's ``state.pt``) into the format of :mod:`training.checkpoint`, so that ``--resume`` continues them.

    python training/convert_checkpoints.py runs/german_whist_s0 runs/ppo_vec_german_whist_warm_s0 --trust

The old files are pickles: reading them runs whatever code they name. So this script reads them only when told
``--trust`` (convert only runs you made or trust), and it is the only place in whist_env that unpickles a file. Each
checkpoint directory is rewritten in place through the atomic write every checkpoint goes through (a conversion
stopped half-way leaves the old directory or the new one, never a mix); a run resumes from the converted checkpoint
bit for bit as it would have from the old one. RLlib checkpoints are Ray's own format and are not converted.

Exit status: 0 done, 2 a bad argument, no ``--trust``, or a checkpoint that could not be read or written.
"""

from __future__ import annotations

import argparse
import pickle
import sys
import types
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # run as a script: make the `training` package importable
    sys.path.insert(0, str(REPO))

from training.checkpoint import (  # noqa: E402
    SB3_COUNTERS,
    STATE_FILE,
    CheckpointWriteError,
    checkpoint_dirs,
    step_of,
    write_checkpoint_dir,
    write_state,
)
from whist_env.cli.demo import one_line  # noqa: E402

MOVED = {"training.ppo_vec": "training.ppo.rollout", "training.ppo_rollout": "training.ppo.rollout",
         "training.ppo_trainer": "training.ppo.loop"}  # fmt: skip
"""Where the classes that old ppo checkpoints pickled by module live now (their ``Snapshot`` and ``LearnerView``)."""


class _Unpickler(pickle.Unpickler):
    """An unpickler that finds the classes old checkpoints named under their old modules."""

    def find_class(self, module: str, name: str) -> Any:
        return super().find_class(MOVED.get(module, module), name)


def _old_ppo_state(path: Path) -> dict[str, Any]:
    """An old ``state.pt``, unpickled (trusted) with the classes it names found where they live now."""
    import torch

    remap = types.SimpleNamespace(Unpickler=_Unpickler, load=pickle.load, __name__="pickle")
    state: dict[str, Any] = torch.load(path, map_location="cpu", weights_only=False, pickle_module=remap)
    return state


def convert_ppo(folder: Path) -> None:
    """Rewrite ppo's ``state.pt`` in ``folder`` as plain data (the snapshots as their policies' arrays)."""
    state = _old_ppo_state(folder / "state.pt")
    metadata = state.pop("metadata", None)
    state["snapshots"] = [{"step": s.step, "policy": s.policy.arrays()} for s in state["snapshots"]]
    write_checkpoint_dir(folder, lambda tmp: write_state(tmp, "ppo", int(state["num_timesteps"]), metadata, state))


def convert_sb3(folder: Path) -> None:
    """Rewrite sb3's ``model.zip`` and ``state.pkl`` in ``folder`` as plain data: the policy's and the optimizer's
    state dicts, the model's counters, and ``state.pkl``'s contents with every game state as its fields."""
    from stable_baselines3.common.save_util import load_from_zip_file

    from whist_env.envs.single_agent import game_state_fields
    from whist_env.fingerprint import read_metadata

    for name in ("model.zip", "state.pkl"):
        if not (folder / name).is_file():
            raise ValueError(f"{folder} is not a whole sb3 checkpoint: it has no {name}")
    data, params, _ = load_from_zip_file(folder / "model.zip", device="cpu")
    if data is None or params is None:
        raise ValueError(f"{folder / 'model.zip'} holds no model data")
    with open(folder / "state.pkl", "rb") as f:
        extra = pickle.load(f)
    for env in extra["env_states"]:
        if env["state"] is not None:
            env["state"] = game_state_fields(env["state"])
    stored = read_metadata(folder / "model.zip")
    metadata = None if stored is None else stored.to_dict()
    state = {
        "policy": params["policy"],
        "optimizer": params["policy.optimizer"],
        "schedule": extra["schedule"],
        "model_state": {**{name: data[name] for name in SB3_COUNTERS}, **extra["model_state"]},
        "env_states": extra["env_states"],
        "rng": extra["rng"],
    }
    step = int(extra["num_timesteps"])
    write_checkpoint_dir(folder, lambda tmp: write_state(tmp, "sb3", step, metadata, state))


def convert_run(run: Path) -> list[str]:
    """Convert every old checkpoint of ``run``; returns a line per checkpoint converted.

    Raises:
        ValueError: ``run`` is not a run directory of the sb3 or the ppo trainer.
    """
    import yaml

    saved = run / "config.yaml"
    if not saved.is_file():
        raise ValueError(f"{run} is not a run directory (it has no config.yaml)")
    try:
        config = yaml.safe_load(saved.read_text(encoding="utf-8")) or {}
    except (yaml.YAMLError, ValueError, RecursionError) as err:  # ValueError: not UTF-8, or a long int
        raise ValueError(f"{saved} is not a run's config ({type(err).__name__})") from None
    if not isinstance(config, dict):
        raise ValueError(f"{saved} is not a run's config (a mapping of keys)")
    trainer = config.get("trainer", "sb3")
    if trainer not in ("sb3", "ppo"):
        raise ValueError(f"{run} is a run of the {trainer} trainer, whose checkpoints need no conversion")
    done = []
    for folder in checkpoint_dirs(run):
        if (folder / STATE_FILE).is_file() or step_of(folder) is None:
            continue
        (convert_ppo if trainer == "ppo" else convert_sb3)(folder)
        done.append(f"converted {folder} ({trainer})")
    return done


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Convert old (pickled) checkpoints to plain data (see the docstring).")
    p.add_argument("runs", nargs="+", type=Path, help="run directories (runs/<run>)")
    p.add_argument("--trust", action="store_true", help="read the old pickles (they run code: only runs you trust)")
    args = p.parse_args(argv)
    if not args.trust:
        print("error: old checkpoints are pickles, and reading one runs code from it; pass --trust to convert "
              "runs you made or trust", file=sys.stderr)  # fmt: skip
        return 2
    for run in args.runs:
        try:
            lines = convert_run(run)
        except (ValueError, OSError, CheckpointWriteError) as err:
            print(f"error: {run}: {err}", file=sys.stderr)
            return 2
        except Exception as err:  # a damaged old file fails inside torch, pickle, yaml or zipfile: say which, and where
            why = one_line(f"{type(err).__name__}: {err}")
            print(f"error: {run}: cannot read its old checkpoints ({why})", file=sys.stderr)
            return 2
        print("\n".join(lines) if lines else f"{run}: nothing to convert", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
