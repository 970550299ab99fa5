"""``whist_env.learning``: the learner side of the package, everything that fits a policy rather than plays one.

* :mod:`~whist_env.learning.sb3`: the MaskablePPO loop (stable-baselines3) of the sb3 trainer and the notebooks;
* :mod:`~whist_env.learning.sb3_vec`: the batched engine's learner env as an SB3 ``VecEnv``;
* :mod:`~whist_env.learning.cloning`: the teacher's datasets, DAgger relabelling and behaviour cloning;
* :mod:`~whist_env.learning.net`: the torch actor-critic on the engine's observations, its numpy copy and exporter;
* :mod:`~whist_env.learning.warmup`: compiling a game's kernels on two cores before a first run;
* :mod:`~whist_env.learning.rllib`: Ray RLlib's multi-agent env, RLModule, learner and checkpoints as agents.

Nothing here is imported by ``import whist_env``; torch, stable-baselines3 and Ray are imported where they are used,
and each module names the extra to install. The training scripts that drive these pieces live in ``training/``.
"""
