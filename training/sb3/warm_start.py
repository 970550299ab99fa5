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

RELABEL_SEED = 2_000_003
"""DAgger round ``r`` of a run with seed ``s`` plays the episodes of seed ``RELABEL_SEED + 1000 * r + s``: other
deals than the teacher's dataset (seed ``s``) and the evaluations (``1_000_003 + s``)."""


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _cpu_s() -> float:
    """CPU seconds of this process and its finished children (the data workers): a time that a machine shared
    with other work does not inflate as it does the wall time."""
    import resource

    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def warm_start(model: Any, config: TrainConfig, encoder: Any, run_dir: Path | None = None) -> list[dict[str, Any]]:
    """Pretrain ``model.policy`` (actor and value network) as ``config.pretrain`` says, in place.

    Writes ``pretrain.json`` (per fit and epoch: losses, agreement with the teacher, rows, seconds) in
    ``run_dir`` when given.

    Returns:
        The same records.
    """
    from whist_env.learning.cloning import behaviour_clone, canonical_rows, load_or_generate, relabel
    from whist_env.learning.sb3 import PolicyAgent

    p = config.pretrain
    assert p is not None
    start = time.time()
    cpu_start = _cpu_s()
    name = config.run_name or config.game
    data = load_or_generate(
        p.cache_dir or None,
        config.game,
        config.game_options,
        teacher=p.teacher,
        deals=p.deals,
        seed=config.seed,
        workers=p.workers,
        progress=True,
        log=lambda m: _log(f"[{name}] {m}"),
    )
    if config.canonical_suits:  # the cache holds the rows as played; the learner's renamed view is made here
        data = canonical_rows(data)
    _log(f"[{name}] pretraining on {len(data):,} decisions of {p.teacher} ({time.time() - start:.0f} s so far)")
    records: list[dict[str, Any]] = []

    def fit(epochs: int, stage: str) -> None:
        # Cloning runs on the run's torch_threads (1 by default): two threads were measured slower, not faster,
        # on the 2-core machine (5,500 against 13,500 rows per second; docs/results_training.md, "Warm start").
        t = time.time()
        rows = behaviour_clone(
            model.policy,
            data,
            epochs=epochs,
            batch_size=p.batch_size,
            learning_rate=p.learning_rate,
            value_coef=p.value_coef,
            value_scale=config.reward_scale,
            seed=config.seed + len(records),
            log=lambda m: _log(f"[{name}] {stage}: {m}"),
        )
        for i, row in enumerate(rows):
            records.append({"stage": stage, "epoch": i + 1, "rows": len(data), **row})
        records[-1]["seconds"] = round(time.time() - t, 1)

    fit(p.epochs, "clone")
    for r in range(p.relabel_rounds):
        learner = PolicyAgent.from_policy(model.policy, encoder, False, canonical_suits=config.canonical_suits)
        extra = relabel(
            config.game,
            config.game_options,
            learner,
            teacher=p.teacher,
            deals=p.relabel_deals,
            seed=RELABEL_SEED + 1000 * r + config.seed,
            workers=p.workers,
            progress=True,
        )
        data = data.extend(canonical_rows(extra) if config.canonical_suits else extra)
        if p.relabel_epochs:
            fit(p.relabel_epochs, f"dagger {r + 1}")
    seconds, cpu = round(time.time() - start, 1), round(_cpu_s() - cpu_start, 1)
    _log(f"[{name}] pretraining done in {seconds:.0f} s ({cpu:.0f} s of CPU time, data workers included)")
    if run_dir is not None:
        record = {"seconds": seconds, "cpu_seconds": cpu, "records": records}
        (run_dir / "pretrain.json").write_text(json.dumps(record, indent=1) + "\n")
    return records


__all__ = ["RELABEL_SEED", "PretrainConfig", "warm_start"]
