"""The warm start of ``train.py`` (config key ``pretrain:``): clone the teacher, run the DAgger rounds, and leave
the cloned weights in the ``MaskablePPO`` that PPO then fine-tunes. The pieces are in :mod:`whist_env.learning.cloning`.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

from training.config import PretrainConfig, TrainConfig


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _cpu_s() -> float:
    """CPU seconds of this process and its finished children (the data workers): a time that a machine shared
    with other work does not inflate as it does the wall time."""
    import resource

    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def warm_start(model: Any, config: TrainConfig, encoder: Any, run_dir: Path | None = None) -> list[dict[str, Any]]:
    """Pretrain ``model.policy`` (actor and value network) as ``config.pretrain`` says, in place: the teacher's
    dataset (played through the AEC env in worker processes, cached), then the DAgger schedule every trainer runs
    (:func:`whist_env.learning.cloning.run_dagger`).

    Writes ``pretrain.json`` (per fit and epoch: losses, agreement with the teacher, rows, seconds) in
    ``run_dir`` when given.

    Returns:
        The same records.
    """
    from whist_env.learning.cloning import behaviour_clone, canonical_rows, load_or_generate, relabel, run_dagger
    from whist_env.learning.sb3 import PolicyAgent

    p = config.pretrain
    assert p is not None
    start, cpu_start = time.time(), _cpu_s()
    name = config.run_name or config.game
    game, options = config.game, config.game_options

    def say(message: str) -> None:
        _log(f"[{name}] {message}")

    data = load_or_generate(p.cache_dir or None, game, options, teacher=p.teacher, deals=p.deals, seed=config.seed,
                            workers=p.workers, progress=True, log=say)  # fmt: skip
    if config.canonical_suits:  # the cache holds the rows as played; the learner's renamed view is made here
        data = canonical_rows(data)
    say(f"pretraining on {len(data):,} decisions of {p.teacher} ({time.time() - start:.0f} s so far)")

    # Cloning runs on the run's torch_threads (1 by default): two threads were measured slower, not faster,
    # on the 2-core machine (5,500 against 13,500 rows per second; docs/results_training.md, "Warm start").
    def fit(rows: Any, epochs: int, seed: int, log: Any) -> list[dict[str, float]]:
        return behaviour_clone(model.policy, rows, epochs=epochs, batch_size=p.batch_size,
                               learning_rate=p.learning_rate, value_coef=p.value_coef,
                               value_scale=config.reward_scale, seed=seed, log=log)  # fmt: skip

    def dagger(r: int, seed: int) -> Any:
        learner = PolicyAgent.from_policy(model.policy, encoder, False, canonical_suits=config.canonical_suits)
        extra = relabel(game, options, learner, teacher=p.teacher, deals=p.relabel_deals, seed=seed,
                        workers=p.workers, progress=True)  # fmt: skip
        return canonical_rows(extra) if config.canonical_suits else extra

    data, records = run_dagger(data, p, config.seed, fit, dagger, say)
    seconds, cpu = round(time.time() - start, 1), round(_cpu_s() - cpu_start, 1)
    say(f"pretraining done in {seconds:.0f} s ({cpu:.0f} s of CPU time, data workers included)")
    if run_dir is not None:
        record = {"seconds": seconds, "cpu_seconds": cpu, "records": records}
        (run_dir / "pretrain.json").write_text(json.dumps(record, indent=1) + "\n")
    return records


__all__ = ["PretrainConfig", "warm_start"]
