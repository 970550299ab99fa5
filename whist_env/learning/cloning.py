"""Warm start from a teacher: a dataset of the teacher's decisions, DAgger relabelling, behaviour cloning.

    >>> from whist_env.learning.cloning import generate_dataset, behaviour_clone
    >>> data = generate_dataset("german_whist_v0", {}, teacher="heuristic", deals=2000, seed=0, workers=2)
    >>> behaviour_clone(model.policy, data, epochs=8, batch_size=1024, learning_rate=1e-3)

What it holds:

* :class:`Dataset`: one row per decision: the observation, the action mask, the teacher's action, the seat's
  final outcome (its rewards from that decision to the end of the episode, from its own point of view: PPO's
  return with ``gamma = 1``) and the seat; the metadata of
  :mod:`whist_env.fingerprint` (game, every option, layout fingerprint) and how the rows were made.
* :func:`generate_dataset`: the teacher's self-play (any agent spec: ``heuristic``, ``pimc:samples=8``, ...),
  in ``workers`` processes with a progress bar; :func:`load_or_generate` caches it on disk (``.npz``) and
  refuses a cached file whose layout, options or recipe differ (:class:`~whist_env.errors.ModelMismatchError`).
* :func:`relabel`: DAgger: the learner plays one seat against the teacher's copies, and every decision of the
  learner's seat is labelled with what the teacher would have played there.
* :func:`canonical_rows`: the rows as a learner with ``canonical_suits`` sees them (trump renamed spades:
  observation, mask and teacher's action); datasets are cached as played and renamed when loaded.
* :func:`behaviour_clone`: fits a stable-baselines3 ``MaskableActorCriticPolicy`` in place: the actor by masked
  cross-entropy on the teacher's actions, the value network by squared error on the final outcome. The
  policy of a ``MaskablePPO`` cloned this way is what PPO then fine-tunes.

torch is imported inside the functions that need it: ``import whist_env.learning.cloning`` does not import it.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from whist_env.errors import FILE_DAMAGE, ModelMismatchError, OptionError, unreadable
from whist_env.evaluation.workers import one_blas_thread, sigint_ignored
from whist_env.fingerprint import ModelMetadata, check
from whist_env.registry import GameRef, ensure_spec, spec_of

if TYPE_CHECKING:
    from whist_env.spec import GameSpec

__all__ = [
    "Dataset",
    "agreement",
    "behaviour_clone",
    "canonical_rows",
    "dataset_path",
    "generate_dataset",
    "load_dataset",
    "load_or_generate",
    "relabel",
    "save_dataset",
]

DATASET_FORMAT = 1
Arrays = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]  # obs, mask, action, outcome, seat


@dataclass
class Dataset:
    """Decisions of a teacher (or states the learner visited, labelled by the teacher).

    Attributes:
        obs: ``(n, obs_size)`` observations: float32 from the AEC encoders (:func:`generate_dataset`), the engine's
            ``uint8`` from ``training/ppo/warm_start.py`` (the same 0/1 values, a quarter of the bytes).
        mask: ``(n, num_actions)`` int8 legal-action masks.
        action: ``(n,)`` the teacher's action.
        outcome: ``(n,)`` float32, the deciding seat's rewards from this decision to the end of the episode
            (the value target; in a one-deal episode, the deal's result for that seat).
        seat: ``(n,)`` the deciding seat.
        metadata: what the observations mean (game, options, layout fingerprint).
        recipe: how the rows were made (teacher, deals, seed, relabel rounds), checked when a cache is reused.
    """

    obs: np.ndarray
    mask: np.ndarray
    action: np.ndarray
    outcome: np.ndarray
    seat: np.ndarray
    metadata: ModelMetadata
    recipe: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.action)

    def extend(self, other: Dataset) -> Dataset:
        """This dataset with ``other``'s rows appended (the same game and layout).

        Raises:
            ModelMismatchError: when ``other`` was made for another game, options or layout.
        """
        check(other.metadata, self.metadata.game_id, self.metadata.options, what="the dataset to append")
        if other.metadata.canonical_suits != self.metadata.canonical_suits:
            raise ModelMismatchError(
                f"the dataset to append has canonical_suits={other.metadata.canonical_suits}, this one "
                f"{self.metadata.canonical_suits}: rename both with canonical_rows, or neither"
            )
        return Dataset(
            np.concatenate([self.obs, other.obs]),
            np.concatenate([self.mask, other.mask]),
            np.concatenate([self.action, other.action]),
            np.concatenate([self.outcome, other.outcome]),
            np.concatenate([self.seat, other.seat]),
            self.metadata,
            dict(self.recipe),
        )


# ---------------------------------------------------------------------- playing and recording
def _play_chunk(
    spec: GameSpec[Any, Any],
    options: dict[str, Any],
    teacher: str,
    seed: int,
    indices: Sequence[int],
    learner: Any = None,
) -> Arrays:
    """Play episodes ``indices`` and record decisions.

    Without ``learner``, every seat is played by the teacher and every decision is recorded. With a learner,
    it plays one seat (drawn per episode) against the teacher in the others; only its decisions are recorded,
    each labelled with the teacher's action for that view (DAgger).
    """
    from whist_env.agents import make_agent

    game = spec.make_rules(**options)
    encoder = spec.make_encoder(game)
    n = game.num_players
    # One teacher per seat, kept across episodes, as the arena does (agents with memory key it by seat and deal).
    teachers = [make_agent(teacher, spec, **options) for _ in range(n)]
    rows_obs: list[np.ndarray] = []
    rows_mask: list[np.ndarray] = []
    rows_action: list[int] = []
    rows_seat: list[int] = []
    rows_before: list[float] = []  # the deciding seat's rewards so far: its value target is what comes after
    outcomes: list[float] = []
    for index in indices:
        rng = np.random.default_rng([seed, index])
        state = game.new_episode(rng)
        seat_rngs = [np.random.default_rng([seed, index, 1, s]) for s in range(n)]
        learner_seat = int(rng.integers(n)) if learner is not None else -1
        learner_rng = np.random.default_rng([seed, index, 2])  # its own stream: the deal's does not depend on it
        start = len(rows_seat)
        total = [0.0] * n
        while not state.done:
            seat = state.to_act
            view = game.view(state, seat)
            label = int(teachers[seat].act(view, seat_rngs[seat]))
            action = label
            if learner is None or seat == learner_seat:
                obs, mask = encoder.encode_with_mask(view)
                rows_obs.append(obs)
                rows_mask.append(mask)
                rows_action.append(label)
                rows_seat.append(seat)
                rows_before.append(total[seat])
                if learner is not None:
                    action = int(learner.act(view, learner_rng))
            rewards = game.step(state, action, rng)
            if rewards is not None:
                total = [t + float(r) for t, r in zip(total, rewards, strict=True)]
        outcomes.extend(total[s] - b for s, b in zip(rows_seat[start:], rows_before[start:], strict=True))
    size = encoder.layout.size
    return (
        np.asarray(rows_obs, dtype=np.float32).reshape(-1, size),
        np.asarray(rows_mask, dtype=np.int8).reshape(-1, game.num_actions),
        np.asarray(rows_action, dtype=np.int64),
        np.asarray(outcomes, dtype=np.float32),
        np.asarray(rows_seat, dtype=np.int8),
    )


def _init_worker(spec: GameSpec[Any, Any] | None = None) -> None:
    import os
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    os.environ["OMP_NUM_THREADS"] = "1"  # one torch thread per worker (a learner's network is small)
    if spec is not None:
        # a spawned worker knows the built-in games only: a game added with whist_env.register joins its registry
        ensure_spec(spec)


def _collect(
    spec: GameSpec[Any, Any],
    options: Mapping[str, Any],
    teacher: str,
    episodes: int,
    seed: int,
    workers: int,
    progress: bool,
    learner: Any,
    label: str,
) -> Arrays:
    from whist_env.evaluation.arena import progress_bar

    if episodes < 1:
        raise OptionError(f"deals must be at least 1, got {episodes}")
    if workers < 1:
        raise OptionError(f"workers must be at least 1, got {workers}")
    opts = dict(options)
    size = max(1, min(50, math.ceil(episodes / (4 * workers))))
    chunks = [list(range(i, min(episodes, i + size))) for i in range(0, episodes, size)]
    parts: list[Arrays] = []
    with progress_bar(episodes, label, enabled=progress) as bar:
        _play_chunks(spec, opts, teacher, seed, learner, workers, chunks, parts, bar)
    obs, mask, action, outcome, seat = (np.concatenate([p[k] for p in parts]) for k in range(5))
    return obs, mask, action, outcome, seat


def _play_chunks(
    spec: Any, opts: dict[str, Any], teacher: str, seed: int, learner: Any, workers: int,
    chunks: list[list[int]], parts: list[Arrays], bar: Any,
) -> None:  # fmt: skip
    """:func:`generate`'s loop: the chunks in this process or in ``workers`` processes, their arrays appended."""
    if workers == 1:
        for c in chunks:
            parts.append(_play_chunk(spec, opts, teacher, seed, c, learner))
            bar.update(len(c))
    else:
        with ProcessPoolExecutor(
            max_workers=workers, mp_context=get_context("spawn"), initializer=_init_worker, initargs=(spec,)
        ) as pool:
            # the workers start now and inherit both: Ctrl-C stays the parent's, and each loads numpy with one BLAS
            # thread (a worker is one process per core; the learner's network plays in them for DAgger)
            with sigint_ignored(), one_blas_thread():
                futures = [pool.submit(_play_chunk, spec, opts, teacher, seed, c, learner) for c in chunks]
            try:
                for f, c in zip(futures, chunks, strict=True):
                    parts.append(f.result())
                    bar.update(len(c))
            except BaseException:
                pool.shutdown(wait=True, cancel_futures=True)
                raise


def _check_teacher(spec: GameSpec[Any, Any], options: Mapping[str, Any], teacher: str) -> None:
    from whist_env.agents import make_agent

    make_agent(teacher, spec, **dict(options))  # an unknown agent or bad options fail here, not in a worker


def generate_dataset(
    game_id: GameRef,
    options: Mapping[str, Any] | None = None,
    *,
    teacher: str = "heuristic",
    deals: int = 2000,
    seed: int = 0,
    workers: int = 1,
    progress: bool = False,
) -> Dataset:
    """The teacher's self-play over ``deals`` episodes: every decision of every seat.

    Args:
        game_id: the game (its id, or its spec).
        options: its options.
        teacher: an agent spec (``heuristic``, ``pimc:samples=8``, ...) playing every seat.
        deals: episodes played (with the arena's single-deal options, one episode is one deal).
        seed: episode ``i`` is dealt from ``default_rng([seed, i])``: the dataset does not depend on ``workers``.
        workers: processes.
        progress: a progress bar on stderr.

    Raises:
        OptionError: an unknown game, teacher or bad options.
    """
    options = dict(options or {})
    spec = spec_of(game_id)
    metadata = ModelMetadata.for_game(spec, options)
    _check_teacher(spec, options, teacher)
    label = f"{spec.game_id} {teacher} self-play"
    arrays = _collect(spec, options, teacher, deals, seed, workers, progress, None, label)
    recipe = {"teacher": teacher, "deals": deals, "seed": seed}
    return Dataset(*arrays, metadata=metadata, recipe=recipe)


def relabel(
    game_id: GameRef,
    options: Mapping[str, Any] | None,
    learner: Any,
    *,
    teacher: str = "heuristic",
    deals: int = 1000,
    seed: int = 0,
    workers: int = 1,
    progress: bool = False,
) -> Dataset:
    """DAgger: the ``learner`` (an agent, e.g. a :class:`whist_env.learning.sb3.PolicyAgent` that samples) plays one
    seat per episode against the teacher; each of its decisions is recorded with the teacher's action for the
    same view, and the learner's own final outcome.

    The learner is sent to the worker processes: a ``PolicyAgent`` holds only its actor network (small).
    """
    options = dict(options or {})
    spec = spec_of(game_id)
    metadata = ModelMetadata.for_game(spec, options)
    _check_teacher(spec, options, teacher)
    arrays = _collect(spec, options, teacher, deals, seed, workers, progress, learner, f"{spec.game_id} relabel")
    return Dataset(*arrays, metadata=metadata, recipe={"teacher": teacher, "deals": deals, "seed": seed})


def canonical_rows(data: Dataset) -> Dataset:
    """``data`` as a learner with ``canonical_suits`` sees it: observation, mask and the teacher's action renamed so
    that trump is spades (:mod:`whist_env.encoding.canonical`); the metadata records it.

    Raises:
        ValueError: when ``data`` is renamed already (its metadata says ``canonical_suits``).
    """
    import dataclasses

    from whist_env.encoding.canonical import CanonicalSuits
    from whist_env.registry import get_spec

    if data.metadata.canonical_suits:
        raise ValueError("the dataset's suits are renamed already (canonical_suits=True): rename raw rows only")
    spec = get_spec(data.metadata.game_id)
    canon = CanonicalSuits(spec.make_encoder(spec.make_rules(**dict(data.metadata.options))).layout)
    obs, mask, perm = canon.forward(data.obs, data.mask)
    return Dataset(
        obs,
        mask,
        canon.action(data.action, perm),
        data.outcome,
        data.seat,
        dataclasses.replace(data.metadata, canonical_suits=True),
        dict(data.recipe),
    )


# ---------------------------------------------------------------------- on disk
def dataset_path(cache_dir: str | Path, game_id: str, options: Mapping[str, Any], recipe: Mapping[str, Any]) -> Path:
    """Where the dataset of ``game_id`` with ``options`` made by ``recipe`` is cached: a name from a hash of all
    three (another recipe or other options give another file; the layout is checked on load)."""
    import hashlib

    key = json.dumps([game_id, dict(sorted(options.items())), dict(sorted(recipe.items()))], sort_keys=True)
    digest = hashlib.sha256(key.encode()).hexdigest()[:12]
    # The teacher's spec may hold a path or punctuation ("model:runs/x/model.zip"): only its plain characters.
    teacher = re.sub(r"[^A-Za-z0-9_.=-]+", "-", str(recipe.get("teacher", "teacher"))).strip("-.")[:40]
    return Path(cache_dir) / f"{game_id}_{teacher}_{digest}.npz"


def save_dataset(data: Dataset, path: str | Path) -> Path:
    """Write ``data`` to ``path`` (``.npz``; the metadata and recipe as JSON inside), through a temporary file."""
    import os

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    header = {"format": DATASET_FORMAT, "metadata": data.metadata.to_dict(), "recipe": data.recipe}
    tmp = path.with_name(path.name + ".tmp.npz")
    np.savez_compressed(
        tmp,
        obs=data.obs,
        mask=data.mask,
        action=data.action,
        outcome=data.outcome,
        seat=data.seat,
        header=np.array(json.dumps(header)),
    )
    os.replace(tmp, path)
    return path


def load_dataset(
    path: str | Path,
    game_id: GameRef,
    options: Mapping[str, Any] | None = None,
    recipe: Mapping[str, Any] | None = None,
) -> Dataset:
    """Read a dataset and check that it fits ``game_id`` with ``options`` (and, if given, was made by ``recipe``).

    Raises:
        OptionError: no file at ``path``, or not a dataset.
        ModelMismatchError: made for another game, other options or another observation layout (the message
            names each difference), or by another recipe (teacher, deals, seed).
    """
    path = Path(path)
    if not path.is_file():
        raise OptionError(f"there is no dataset at {path}")
    try:
        with np.load(path, allow_pickle=False) as z:
            header = json.loads(str(z["header"]))
            arrays = {k: z[k] for k in ("obs", "mask", "action", "outcome", "seat")}
    except FILE_DAMAGE + (KeyError,) as err:
        why = unreadable(err)
        raise OptionError(f"{path} is not a whist_env dataset (an .npz written by save_dataset): {why}") from err
    if not isinstance(header, dict) or "metadata" not in header:
        raise ModelMismatchError(f"the dataset {path} has no metadata record; delete it to generate it again")
    metadata = ModelMetadata.from_dict(header["metadata"])
    check(metadata, game_id, options, what=f"the dataset {path}")
    saved = dict(header.get("recipe", {}))
    if recipe is not None and saved != dict(recipe):
        differs = [f"{k}: saved {saved.get(k)!r}, wanted {recipe.get(k)!r}"
                   for k in sorted(set(saved) | set(recipe)) if saved.get(k) != recipe.get(k)]  # fmt: skip
        raise ModelMismatchError(
            f"the dataset {path} was made by another recipe ({'; '.join(differs)}); delete it or use another cache_dir"
        )
    return Dataset(**arrays, metadata=metadata, recipe=saved)


def load_or_generate(
    cache_dir: str | Path | None,
    game_id: GameRef,
    options: Mapping[str, Any] | None = None,
    *,
    teacher: str = "heuristic",
    deals: int = 2000,
    seed: int = 0,
    workers: int = 1,
    progress: bool = False,
    log: Callable[[str], None] = print,
) -> Dataset:
    """The cached dataset if ``cache_dir`` holds it (checked: layout, options, recipe), else a new one, saved there.

    ``cache_dir`` None or empty: no cache.
    """
    options = dict(options or {})
    spec = spec_of(game_id)
    recipe = {"teacher": teacher, "deals": deals, "seed": seed}
    path = dataset_path(cache_dir, spec.game_id, options, recipe) if cache_dir else None
    if path is not None and path.exists():
        data = load_dataset(path, spec, options, recipe)
        log(f"dataset: {len(data):,} decisions from {path}")
        return data
    data = generate_dataset(spec, options, teacher=teacher, deals=deals, seed=seed, workers=workers, progress=progress)
    if path is not None:
        save_dataset(data, path)
        log(f"dataset: {len(data):,} decisions written to {path}")
    return data


# ---------------------------------------------------------------------- behaviour cloning
def behaviour_clone(
    policy: Any,
    data: Dataset,
    *,
    epochs: int = 8,
    batch_size: int = 1024,
    learning_rate: float = 1e-3,
    value_coef: float = 1.0,
    value_scale: float = 1.0,
    seed: int = 0,
    log: Callable[[str], None] | None = None,
) -> list[dict[str, float]]:
    """Fit an sb3 ``MaskableActorCriticPolicy`` (MLP, default features extractor) to ``data`` in place.

    The actor learns the teacher's action by cross-entropy over the legal actions only (illegal logits are
    masked, as in PPO's rollouts); the value network learns the final outcome times ``value_scale`` (the
    training's ``reward_scale``) by squared error, weighted ``value_coef``. A fresh Adam is used, so PPO's
    optimiser starts clean afterwards.

    Args:
        policy: ``model.policy`` of a ``MaskablePPO``.
        data: the decisions.
        epochs: passes over the data.
        batch_size: rows per gradient step.
        learning_rate: Adam's step size.
        value_coef: weight of the value loss (0: the value network is left alone).
        value_scale: multiplies the outcome (PPO's returns are the rewards times ``reward_scale``).
        seed: shuffling order.
        log: called with one line per epoch.

    Returns:
        Per epoch: ``policy_loss``, ``value_loss``, ``accuracy`` (share of rows where the masked argmax is the
        teacher's action), averaged over the epoch's batches.
    """
    import torch

    device = policy.device
    obs = torch.as_tensor(data.obs, device=device)
    legal = torch.as_tensor(data.mask, device=device).bool()

    def forward(idx: Any) -> tuple[Any, Any]:
        logits, values = _forward(policy, obs[idx])
        return logits.masked_fill(~legal[idx], -1e8), values

    policy.set_training_mode(True)
    history = fit_actor_critic(
        list(policy.parameters()), forward, data, epochs=epochs, batch_size=batch_size, learning_rate=learning_rate,
        value_coef=value_coef, value_scale=value_scale, seed=seed, device=device,
        log=None if log is None else (lambda line: log(f"behaviour cloning {line}")),
    )  # fmt: skip
    policy.set_training_mode(False)
    return history


RELABEL_SEED = 2_000_003
"""DAgger round ``r`` of a run with seed ``s`` plays the episodes of seed ``RELABEL_SEED + 1000 * r + s``: other
deals than the teacher's dataset and the evaluations (``1_000_003 + s``)."""

FitFn = Callable[["Dataset", int, int, Callable[[str], None]], list[dict[str, float]]]
"""``fit(data, epochs, seed, log)``: fit the learner to ``data`` in place; one row of figures per epoch."""


def run_dagger(
    data: Dataset,
    recipe: Any,
    seed: int,
    fit: FitFn,
    relabel: Callable[[int, int], Dataset],
    log: Callable[[str], None],
) -> tuple[Dataset, list[dict[str, Any]]]:
    """The warm start's schedule, every trainer's: a first fit of ``recipe.epochs`` on the teacher's ``data``, then
    ``recipe.relabel_rounds`` DAgger rounds, each adding ``relabel(round, its seed)``'s rows (the learner's own
    states labelled by the teacher; seed ``RELABEL_SEED + 1000 * round + seed``) and fitting ``relabel_epochs``
    more over all rows. Fit ``k`` shuffles with seed ``seed + k``.

    Returns:
        All the rows, and the records of ``pretrain.json``: per fit and epoch its stage, the rows and the figures
        ``fit`` gave, and each fit's seconds on its last epoch.
    """
    records: list[dict[str, Any]] = []

    def stage(epochs: int, name: str) -> None:
        t = time.perf_counter()
        rows = fit(data, epochs, seed + len(records), lambda line: log(f"{name}: {line}"))
        records.extend({"stage": name, "epoch": i + 1, "rows": len(data), **row} for i, row in enumerate(rows))
        records[-1]["seconds"] = round(time.perf_counter() - t, 1)

    stage(recipe.epochs, "clone")
    for r in range(recipe.relabel_rounds):
        data = data.extend(relabel(r, RELABEL_SEED + 1000 * r + seed))
        if recipe.relabel_epochs:
            stage(recipe.relabel_epochs, f"dagger {r + 1}")
    return data, records


def fit_actor_critic(
    params: list[Any],
    forward: Callable[[Any], tuple[Any, Any]],
    data: Dataset,
    *,
    epochs: int,
    batch_size: int,
    learning_rate: float,
    value_coef: float,
    value_scale: float,
    seed: int,
    device: Any,
    log: Callable[[str], None] | None = None,
) -> list[dict[str, float]]:
    """The cloning loop of both trainers (:func:`behaviour_clone` for sb3's policy, ``training/ppo/warm_start.py``'s
    ``clone`` for ppo_vec's network): ``forward(idx)`` gives the masked logits and the values of the rows ``idx`` (a
    tensor on ``device``); the loss, optimiser, clipping, order and per-epoch figures are those of
    :func:`behaviour_clone`.
    """
    import torch

    n = len(data)
    if n == 0:
        raise OptionError("the dataset is empty: nothing to clone")
    action = torch.as_tensor(data.action, device=device)
    target = torch.as_tensor(data.outcome * value_scale, device=device, dtype=torch.float32)
    optimiser = torch.optim.Adam(params, lr=learning_rate)
    generator = torch.Generator().manual_seed(seed)
    history: list[dict[str, float]] = []
    for epoch in range(epochs):
        t0 = time.perf_counter()
        order = torch.randperm(n, generator=generator).to(device)
        sums = {"policy_loss": 0.0, "value_loss": 0.0, "accuracy": 0.0}
        for start in range(0, n, batch_size):
            idx = order[start : start + batch_size]
            logits, values = forward(idx)
            policy_loss = torch.nn.functional.cross_entropy(logits, action[idx])
            value_loss = torch.nn.functional.mse_loss(values, target[idx])
            loss = policy_loss + value_coef * value_loss
            optimiser.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            optimiser.step()
            k = len(idx)
            sums["policy_loss"] += float(policy_loss.detach()) * k
            sums["value_loss"] += float(value_loss.detach()) * k
            sums["accuracy"] += float((logits.detach().argmax(1) == action[idx]).sum())
        row = {k: v / n for k, v in sums.items()}
        history.append(row)
        if log is not None:
            rate = n / max(time.perf_counter() - t0, 1e-9)
            log(
                f"epoch {epoch + 1}/{epochs}: policy loss {row['policy_loss']:.3f}, value loss "
                f"{row['value_loss']:.3f}, matches the teacher on {row['accuracy']:.1%} ({rate:,.0f} rows/s)"
            )
    return history


def _forward(policy: Any, obs: Any) -> tuple[Any, Any]:
    """Logits and values of an sb3 actor-critic policy for a batch of flat observations."""
    features = policy.extract_features(obs)
    if policy.share_features_extractor:
        latent_pi, latent_vf = policy.mlp_extractor(features)
    else:
        pi_features, vf_features = features
        latent_pi = policy.mlp_extractor.forward_actor(pi_features)
        latent_vf = policy.mlp_extractor.forward_critic(vf_features)
    return policy.action_net(latent_pi), policy.value_net(latent_vf).squeeze(-1)


def agreement(policy_or_actor: Any, data: Dataset) -> float:
    """Share of ``data``'s rows where the masked argmax of the policy is the teacher's action."""
    import torch

    obs = torch.as_tensor(data.obs)
    with torch.no_grad():
        if hasattr(policy_or_actor, "mlp_extractor"):
            logits, _ = _forward(policy_or_actor, obs.to(policy_or_actor.device))
            logits = logits.cpu()
        else:
            logits = policy_or_actor(obs)
    logits = logits.masked_fill(~torch.as_tensor(data.mask).bool(), -1e8)
    return float((logits.argmax(1) == torch.as_tensor(data.action)).float().mean())
