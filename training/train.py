"""Train an agent on one whist_env game, evaluate it on duplicate deals, write a report: the one command for every
trainer. A config's ``trainer:`` key alone picks the trainer: ``sb3`` (the default: sb3-contrib's MaskablePPO,
``training/sb3/``), ``ppo`` (masked PPO on the batched engine, ``training/ppo/``) or ``rllib`` (league self-play on
Ray RLlib, ``training/rllib/``).

    python training/train.py --config configs/ppo_vec_german_whist_warm.yaml   # trainer: ppo (README command 1)
    python training/train.py --config configs/german_whist.yaml
    python training/train.py --config configs/german_whist.yaml --total-timesteps 50000 --seed 1
    python training/train.py --config configs/german_whist.yaml --resume      # after an interruption
    python training/train.py --resume --run-name german_whist_s0              # the same, by the run's name
    python training/train.py --config configs/rllib_german_whist.yaml --iterations 20 --num-env-runners 2

A run's life is the same for every trainer (:mod:`training.run`): the common flags, the rules of ``--resume`` and
``--overwrite``, the run directory ``runs/<run>/`` (``config.yaml``, ``command.txt``, checkpoints, the policy,
``eval.csv``, ``learning_curve.png``, ``report.md``), exit codes 0, 2 (a bad config or command) and 130 (Ctrl-C,
with what ``--resume`` continues from). Each trainer's own steps are in its folder's ``trainer.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # run as a script: make the `training` package importable
    sys.path.insert(0, str(REPO))

from training.run import main, trainer_of  # noqa: E402

__all__ = ["main", "trainer_of"]

if __name__ == "__main__":
    sys.exit(main())
