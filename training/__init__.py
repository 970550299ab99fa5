"""The trainers, outside the wheel: ``python training/train.py --config configs/<name>.yaml`` runs any of them.

* ``train.py``: the one command; :mod:`training.run`: a run's life, the same for every trainer (flags, resume,
  the run directory, exit codes, the report) and the :class:`~training.run.Trainer` interface a trainer implements;
* ``sb3/``, ``ppo/``, ``rllib/``: the three trainers (``trainer:`` key ``sb3``, ``ppo``, ``rllib``), each a
  ``trainer.py`` with its :class:`~training.run.Trainer` and its own pieces (callbacks and envs, the batched loop
  and rollouts, RLlib's config);
* shared: :mod:`training.config` (typed YAML configs), :mod:`training.checkpoint` (plain-data checkpoints and their
  atomic write), :mod:`training.evaluation` (the learner in the arena), :mod:`training.report` (``eval.csv``, the
  curve, ``report.md``), ``ship.py`` (a run into the package's shipped networks), ``convert_checkpoints.py`` (old
  pickled checkpoints into plain data, ``--trust``), ``exploit.py`` (an agent's exploiter gap: a best response
  trained against it for a budget, with the ppo trainer's loop), ``experiments/`` (recipes of shipped artefacts).

The learner code these drive (SB3 glue, cloning, the torch networks, RLlib's modules) is :mod:`whist_env.learning`.
"""
