"""The warm start of ``ppo_vec.py`` (config key ``pretrain:``) on the batched engine: the teacher's data, behaviour
cloning of the policy and value networks, and DAgger, all played batched.

The twin of :mod:`training.sb3.warm_start` (``train.py``'s warm start, which plays the teacher through the AEC env in
worker processes). What is the same: the :class:`~whist_env.learning.cloning.Dataset` (one row per decision:
observation,
mask, the teacher's action, the deciding seat's return from there to the end of the episode, the seat), its cache
file (:func:`whist_env.learning.cloning.dataset_path`, the layout's fingerprint inside, refused by
:func:`whist_env.learning.cloning.load_dataset` on any mismatch), :func:`whist_env.learning.cloning.canonical_rows` for
a learner
with ``canonical_suits``, the loss (masked cross-entropy on the teacher's action, squared error on the return) and
the config section (:class:`training.config.PretrainConfig`). What differs:

* **the teacher** is the game's heuristic port (:class:`whist_env.vector.heuristics.BatchedHeuristic`, whose
  decisions are the Python agent's), asked for the learner seat's action on the engine's state block
  (``act_state(venv, envs)``: in the learner env, the seat to act is the learner's whenever the learner is asked);
* **the data** is the learner seat's decisions in :func:`whist_env.vector.make_learner_env` with the heuristic in the
  other seats and the teacher in the learner's (so: the heuristic's self-play, one seat recorded per deal), the
  observations in the engine's dtype (``uint8``); the deals come from the engine's generators seeded with
  :data:`TEACHER_SEED` ``+ seed`` (DAgger round ``r``: ``whist_env.learning.cloning.RELABEL_SEED + 1000 r + seed``),
  other streams than the PPO env's (``seed``) and the evaluation's (the arena's ``1_000_003 + seed``);
* **DAgger**: the cloned network samples the learner's moves on the engine against the heuristic, and the teacher
  labels each of those states;
* **cloning** fits ppo_vec's own network (:func:`whist_env.learning.net.build_actor_critic`, sparse first layers).
"""

from __future__ import annotations

import functools
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from whist_env.learning.cloning import Dataset

TEACHER_SEED = 3_000_017
"""The teacher's deals of a run with seed ``s`` are the engine's of seed ``TEACHER_SEED + s``."""
DATA_ENVS = 1024
"""Environments stepped as one batch while the data is played (the deals beyond it follow in the same envs)."""
RECIPE_SOURCE = "engine"
"""The recipe's ``source``: the cache of this path and of ``train.py``'s (AEC self-play, every seat) never mix."""

Batched = Callable[[np.ndarray, np.ndarray], np.ndarray]


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def teacher_env(game: str, options: dict[str, Any], deals: int, seed: int, num_envs: int = DATA_ENVS) -> Any:
    """The learner env the teacher's data is played in: ``min(deals, num_envs)`` environments, the learner's seat drawn
    per episode, the heuristic in the other seats, same-step autoreset; the engine seeded with ``seed``."""
    from gymnasium.vector import AutoresetMode

    from whist_env.vector import make_learner_env

    return make_learner_env(game, min(deals, num_envs), opponents="heuristic", learner_seat="random", seed=seed,
                            autoreset_mode=AutoresetMode.SAME_STEP, **options)  # fmt: skip


def play_teacher(
    env: Any,
    deals: int,
    learner: Batched | None = None,
    progress: bool = False,
    label: str = "",
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Play ``deals`` episodes in the learner env ``env`` (:func:`teacher_env`), from its reset, and record every
    decision of the learner seat with the heuristic's action there (:class:`whist_env.vector.heuristics.
    BatchedHeuristic` on the engine's state: whenever the learner is asked, the seat to act is the learner's).

    Args:
        env: a same-step learner env of the game (its opponents are its own: the heuristic in :func:`teacher_env`).
        deals: episodes recorded (environment ``i`` of the ``B`` records ``deals // B`` of them, one more when
            ``i < deals % B``).
        learner: who moves in the learner seat: None, the teacher itself (the heuristic's self-play); else a batched
            policy ``(obs (B, D), mask (B, A) bool) -> actions (B,)`` of the real game (DAgger).
        progress: a progress bar on stderr, per finished episode.
        label: the progress bar's label.

    Returns:
        ``obs`` (n, D) in the engine's dtype, ``mask`` (n, A) int8, the teacher's ``action`` (n,) int64, ``outcome``
        (n,) float32 (the learner seat's rewards from the decision to the end of its episode) and ``seat`` (n,) int8,
        step by step, environment by environment within a step.
    """
    import dataclasses

    from whist_env.evaluation.arena import progress_bar
    from whist_env.vector.heuristics import BatchedHeuristic

    b = env.num_envs
    quota = np.full(b, deals // b, np.int64)
    quota[: deals % b] += 1
    with progress_bar(deals, label or f"{env.game_id} heuristic on the engine", enabled=progress) as bar:
        steps = _steps(env, BatchedHeuristic(env.game_id, **dataclasses.asdict(env.venv.game.config)), learner,
                       quota, bar)  # fmt: skip
    obs, mask, action, outcome, seat = _rows_of(steps, b)
    return obs, mask, action, outcome, seat


def _steps(env: Any, teacher: Any, learner: Batched | None, quota: np.ndarray, bar: Any) -> list[tuple[Any, ...]]:
    """:func:`play_teacher`'s steps until every environment has played its ``quota`` of episodes: per step the
    observation, the mask, the teacher's label, the learner's seat, the reward, the episode's end, and whether the
    environment's episode still counts."""
    every = np.arange(env.num_envs)
    finished = np.zeros(env.num_envs, np.int64)
    steps: list[tuple[np.ndarray, ...]] = []
    obs, infos = env.reset()
    while (finished < quota).any():
        mask = env.action_masks()
        labels = teacher.act_state(env.venv, every)
        kept = finished < quota
        seats = infos["learner_seat"].astype(np.int8)
        actions = labels if learner is None else np.asarray(learner(obs, mask), np.int64)
        nxt, reward, terminated, truncated, infos = env.step(actions)
        done = terminated | truncated
        steps.append((obs, mask.astype(np.int8), labels, seats, reward, done, kept))
        obs = nxt
        ended = done & kept
        finished += done
        if ended.any():
            bar.update(int(ended.sum()))
    return steps


def _rows_of(steps: list[tuple[np.ndarray, ...]], b: int) -> tuple[np.ndarray, ...]:
    """:func:`play_teacher`'s rows from its steps (each: obs, mask, label, seat, reward, done, kept), the kept rows
    only; the outcome of a decision is its seat's rewards summed back to the start of its episode (gamma 1)."""
    after = np.zeros(b, np.float32)
    outcomes = []
    for _, _, _, _, reward, done, _ in reversed(steps):
        after = reward + np.where(done, 0.0, after).astype(np.float32)
        outcomes.append(after)
    outcomes.reverse()
    keep = [s[6] for s in steps]
    take = [np.concatenate([s[k][m] for s, m in zip(steps, keep, strict=True)]) for k in range(4)]
    outcome = np.concatenate([o[m] for o, m in zip(outcomes, keep, strict=True)]).astype(np.float32)
    return take[0], take[1], take[2].astype(np.int64), outcome, take[3]


def teacher_dataset(
    game: str,
    options: dict[str, Any],
    deals: int,
    seed: int,
    cache_dir: str = "",
    progress: bool = False,
    log: Callable[[str], None] = _log,
) -> Dataset:
    """The heuristic's decisions in the learner seat over ``deals`` engine episodes (:func:`play_teacher`) as a
    :class:`~whist_env.learning.cloning.Dataset`, read from ``cache_dir`` when it holds them (checked: the game, the
    options, the layout's fingerprint and the recipe; a mismatch raises
    :class:`~whist_env.errors.ModelMismatchError`), else played and saved there (``cache_dir`` empty: no cache).

    ``seed`` is the engine's (:data:`TEACHER_SEED` ``+`` the run's seed in ``ppo_vec``).
    """
    from whist_env.fingerprint import ModelMetadata
    from whist_env.learning.cloning import Dataset, dataset_path, load_dataset, save_dataset

    recipe = {"teacher": "heuristic", "deals": deals, "seed": seed, "source": RECIPE_SOURCE}
    path = dataset_path(cache_dir, game, options, recipe) if cache_dir else None
    if path is not None and path.exists():
        data = load_dataset(path, game, options, recipe)
        log(f"dataset: {len(data):,} decisions from {path}")
        return data
    env = teacher_env(game, options, deals, seed)
    arrays = play_teacher(env, deals, progress=progress, label=f"{game} heuristic self-play")
    data = Dataset(*arrays, metadata=ModelMetadata.for_game(game, options), recipe=recipe)
    if path is not None:
        save_dataset(data, path)
        log(f"dataset: {len(data):,} decisions written to {path}")
    return data


def renamed(data: Dataset, chunk: int = 16384) -> Dataset:
    """:func:`whist_env.learning.cloning.canonical_rows` of ``data``, a chunk of rows at a time (the renaming's index
    arrays are 8 bytes per observation entry)."""
    from whist_env.learning.cloning import canonical_rows

    parts = [canonical_rows(_rows(data, slice(i, i + chunk))) for i in range(0, len(data), chunk)]
    out = parts[0]
    for part in parts[1:]:
        out = out.extend(part)
    return out


def _rows(data: Dataset, index: slice) -> Dataset:
    from whist_env.learning.cloning import Dataset

    return Dataset(data.obs[index], data.mask[index], data.action[index], data.outcome[index], data.seat[index],
                   data.metadata, dict(data.recipe))  # fmt: skip


def sparse_rows(obs: np.ndarray, chunk: int = 16384) -> Any:
    """The :class:`whist_env.learning.net.SparseRows` of a dense observation array ``(n, D)``, made a chunk at a
    time."""
    import torch

    from whist_env.learning.net import SparseRows

    parts = [SparseRows.of(torch.as_tensor(obs[i : i + chunk])) for i in range(0, len(obs), chunk)]
    return SparseRows.cat(parts, obs.shape[1])


def clone(
    model: Any,
    data: Dataset,
    *,
    epochs: int,
    batch_size: int,
    learning_rate: float,
    value_coef: float,
    value_scale: float,
    seed: int,
    log: Callable[[str], None] | None = None,
) -> list[dict[str, float]]:
    """Fit ppo_vec's actor-critic ``model`` to ``data`` in place (the loss of
    :func:`whist_env.learning.cloning.behaviour_clone`): masked cross-entropy on the teacher's action for the actor,
    squared
    error on the return times ``value_scale`` (the run's ``reward_scale``) for the critic, weighted ``value_coef``;
    a fresh Adam at ``learning_rate``, gradients clipped to norm 1.

    Returns:
        Per epoch: ``policy_loss``, ``value_loss`` and ``accuracy`` (share of rows whose masked argmax is the teacher's
        action), averaged over the epoch's rows as they were fitted.
    """
    import torch

    from whist_env.errors import OptionError
    from whist_env.learning.cloning import fit_actor_critic

    if len(data) == 0:  # before the rows are made
        raise OptionError("the dataset is empty: nothing to clone")
    device = next(model.parameters()).device
    rows = sparse_rows(data.obs)
    rows = type(rows)(rows.cols.to(device), None if rows.vals is None else rows.vals.to(device))
    legal = torch.as_tensor(data.mask, device=device).bool()
    return fit_actor_critic(
        list(model.parameters()), lambda idx: model(rows[idx], legal[idx]), data, epochs=epochs,
        batch_size=batch_size, learning_rate=learning_rate, value_coef=value_coef, value_scale=value_scale,
        seed=seed, device=device, log=log,
    )  # fmt: skip


def agreement(model: Any, data: Dataset, batch_size: int = 8192) -> float:
    """Share of ``data``'s rows where the masked argmax of ``model``'s logits is the teacher's action."""
    import torch

    device = next(model.parameters()).device
    hits = 0
    with torch.no_grad():
        for i in range(0, len(data), batch_size):
            rows = sparse_rows(data.obs[i : i + batch_size])
            rows = type(rows)(rows.cols.to(device), None if rows.vals is None else rows.vals.to(device))
            logits, _ = model(rows, torch.as_tensor(data.mask[i : i + batch_size], device=device).bool())
            hits += int((logits.argmax(1).cpu() == torch.as_tensor(data.action[i : i + batch_size])).sum())
    return hits / max(len(data), 1)


class SamplingLearner:
    """The network as a batched policy of the real game ``(obs (k, D), mask (k, A) bool) -> actions (k,)`` that
    samples from its masked softmax (DAgger's learner), with its own torch generator.

    Args:
        model: ppo_vec's actor-critic.
        view: the learner's view (:class:`training.ppo.rollout.LearnerView`: renames the suits, or not).
        seed: the generator's seed.
    """

    def __init__(self, model: Any, view: Any, seed: int) -> None:
        import torch

        self.model = model
        self.view = view
        self.generator = torch.Generator().manual_seed(seed)

    def __call__(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        import torch

        from whist_env.learning.net import SparseRows

        device = next(self.model.parameters()).device
        seen, legal, perm = self.view.forward(obs, mask)
        with torch.no_grad():
            logits, _ = self.model(SparseRows.of(torch.as_tensor(seen, device=device)),
                                   torch.as_tensor(legal, device=device).bool())  # fmt: skip
            probs = torch.softmax(logits, -1).cpu()
        chosen = torch.multinomial(probs, 1, generator=self.generator).squeeze(1).numpy()
        return np.asarray(self.view.back(chosen, perm), np.int64)


def warm_start(model: Any, config: Any, view: Any, run_dir: Path | None = None) -> list[dict[str, Any]]:
    """Pretrain ``model`` (ppo_vec's actor-critic: actor and critic) as ``config.pretrain`` says, in place: the
    teacher's dataset (cached as :func:`teacher_dataset` says), a first fit, then ``relabel_rounds`` DAgger rounds,
    each adding the learner's own states labelled by the teacher and fitting ``relabel_epochs`` more over all rows.

    Writes ``pretrain.json`` in ``run_dir`` (per fit and epoch: losses, agreement, rows; seconds per fit and in all).

    Args:
        model: the network, fitted in place.
        config: the run's :class:`training.config.PPOVecConfig` (with a ``pretrain`` section).
        view: the learner's view (:class:`training.ppo.rollout.LearnerView`), whose renaming the rows get.
        run_dir: where ``pretrain.json`` goes (None: nowhere).

    Returns:
        The records of ``pretrain.json``.
    """
    from whist_env.learning.cloning import run_dagger

    p = config.pretrain
    assert p is not None
    name = config.run_name or config.game
    start = time.perf_counter()
    options = dict(config.game_options)

    def say(message: str) -> None:
        _log(f"[{name}] {message}")

    data = teacher_dataset(config.game, options, p.deals, TEACHER_SEED + config.seed, p.cache_dir, True, say)
    if view.canonical is not None:  # the cache holds the rows as played; the learner's renamed view is made here
        data = renamed(data)
    say(f"pretraining on {len(data):,} decisions of the heuristic ({time.perf_counter() - start:.0f} s so far)")

    def fit(rows: Dataset, epochs: int, seed: int, log: Callable[[str], None]) -> list[dict[str, float]]:
        return clone(model, rows, epochs=epochs, batch_size=p.batch_size, learning_rate=p.learning_rate,
                     value_coef=p.value_coef, value_scale=config.reward_scale, seed=seed, log=log)  # fmt: skip

    dagger = functools.partial(_dagger_rows, model, view, config, data.metadata)
    data, records = run_dagger(data, p, config.seed, fit, dagger, say)
    seconds = round(time.perf_counter() - start, 1)
    say(f"pretraining done in {seconds:.0f} s: {len(data):,} rows, last fit matched the teacher on "
        f"{records[-1]['accuracy']:.1%}")  # fmt: skip
    if run_dir is not None:
        record = {"seconds": seconds, "rows": len(data), "records": records}
        (run_dir / "pretrain.json").write_text(json.dumps(record, indent=1) + "\n")
    return records


def _dagger_rows(model: Any, view: Any, config: Any, metadata: Any, r: int, seed: int) -> Any:
    """DAgger round ``r``'s rows: ``model`` plays the learner's seat (sampling, :class:`SamplingLearner`) on the
    engine's deals of ``seed``, and the heuristic labels each of its decisions (renamed as the learner sees them)."""
    from whist_env.learning.cloning import Dataset

    p = config.pretrain
    env = teacher_env(config.game, dict(config.game_options), p.relabel_deals, seed)
    arrays = play_teacher(env, p.relabel_deals, SamplingLearner(model, view, seed), progress=True,
                          label=f"{config.game} DAgger round {r + 1}")  # fmt: skip
    recipe = {"teacher": "heuristic", "deals": p.relabel_deals, "seed": seed, "source": RECIPE_SOURCE}
    extra = Dataset(*arrays, metadata=metadata if view.canonical is None else _played(metadata), recipe=recipe)
    return renamed(extra) if view.canonical is not None else extra


def _played(metadata: Any) -> Any:
    """``metadata`` of renamed rows as the metadata of rows as played (what :func:`renamed` takes)."""
    import dataclasses

    return dataclasses.replace(metadata, canonical_suits=False)


__all__ = [
    "DATA_ENVS",
    "TEACHER_SEED",
    "SamplingLearner",
    "agreement",
    "clone",
    "play_teacher",
    "teacher_env",
    "renamed",
    "sparse_rows",
    "teacher_dataset",
    "warm_start",
]
