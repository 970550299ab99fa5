"""Helpers of the training notebook (``notebooks/02_train_and_evaluate.ipynb``): a short MaskablePPO run with a
learning curve evaluated on duplicate deals.

:func:`train_ppo` (returns a :class:`TrainingRun`), :func:`baselines`, :func:`plot_learning_curve`.

torch, stable-baselines3 and matplotlib are imported only inside the functions that need them.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from whist_env.agents.base import Agent
from whist_env.agents.factory import make_agent
from whist_env.fingerprint import save_model_metadata
from whist_env.teaching.common import AgentLike


# ---------------------------------------------------------------------- a short training run
@dataclass
class TrainingRun:
    """The result of :func:`train_ppo`.

    Attributes:
        game_id: the game.
        options: the game's options.
        model: the trained ``MaskablePPO`` model.
        model_path: where the final model was saved (``make_agent(f"model:{model_path}", game_id, **options)``).
        curve: one row per evaluation: ``timesteps``, ``mean``/``ci95`` (the learner's reward per deal against
            ``eval_opponent``) and ``diff``/``diff_ci95`` (learner − opponent, paired over duplicate deals).
        episode_returns: the learner's return of every training episode, in order.
        eval_opponent: who the evaluations were played against.
        seconds: wall time of the run, evaluations included.
    """

    game_id: str
    options: dict[str, Any]
    model: Any
    model_path: str
    curve: list[dict[str, Any]]
    episode_returns: list[float] = field(default_factory=list)
    eval_opponent: str = "heuristic"
    seconds: float = 0.0

    def agent(self) -> Agent:
        """The trained policy as an agent (a :class:`~whist_env.agents.model.ModelAgent` on the saved file)."""
        return make_agent(f"model:{self.model_path}", self.game_id, **self.options)


def _eval_row(
    game_id: str, options: dict[str, Any], learner: AgentLike, opponent: str, deals: int, seed: int
) -> dict[str, float]:
    from whist_env.evaluation import evaluate

    report = evaluate(game_id, [learner, opponent], deals, seed, options, names=("learner", opponent))
    me = report.agent("learner")
    diff = report.pairs[0].diff
    return {"mean": me.mean.mean, "ci95": me.mean.half_width, "diff": diff.mean, "diff_ci95": diff.half_width}


def train_ppo(
    game_id: str,
    options: Mapping[str, Any] | None = None,
    opponents: Any = "heuristic",
    total_timesteps: int = 4000,
    eval_every: int = 1000,
    eval_deals: int = 100,
    eval_opponent: str = "heuristic",
    seed: int = 0,
    n_steps: int = 128,
    batch_size: int = 64,
    n_epochs: int = 10,
    learning_rate: float = 1e-3,
    net_arch: Sequence[int] = (128, 128),
    torch_threads: int = 1,
    out_dir: str | Path | None = None,
) -> TrainingRun:
    """A short ``MaskablePPO`` run in the single-agent env, evaluated on duplicate deals as it goes.

    The learner holds a random seat each episode; ``opponents`` play the others inside the env
    (:func:`whist_env.envs.single_agent.make_single_agent`). Before training and every ``eval_every`` steps the
    current policy (its weights copied into one greedy evaluation agent) is played against ``eval_opponent`` over
    ``eval_deals`` duplicate deals (the same deals every time, so the points of the curve differ by the policy
    only); evaluations run between rollouts (:func:`whist_env.learning.sb3.run_ppo`, the loop ``training/train.py``
    runs too), so with ``eval_every`` not a multiple of ``n_steps`` they fall on the first rollout boundary
    after it. For real runs use ``training/train.py`` with a config from ``configs/``.

    Args:
        game_id: the environment id.
        options: the game's options.
        opponents: what :func:`~whist_env.envs.single_agent.make_single_agent` accepts (a name, an agent, ...).
        total_timesteps: learner decisions to train for.
        eval_every: steps between evaluations.
        eval_deals: duplicate deals per evaluation.
        eval_opponent: the agent name evaluations are played against.
        seed: seeds the env, the network and the evaluation deals.
        n_steps: rollout length per update.
        batch_size: minibatch size.
        n_epochs: passes over each rollout.
        learning_rate: Adam's step size.
        net_arch: hidden layer sizes of the policy and value networks.
        torch_threads: ``torch.set_num_threads`` for the run (the previous setting is restored after it).
        out_dir: where to save models (default a new temporary directory).

    Returns:
        A :class:`TrainingRun` with the model, its saved path and the learning curve.

    Note:
        Stable-Baselines3 seeds Python's, NumPy's and torch's global generators with ``seed`` when it builds the
        model; the env and the evaluations use their own generators.
    """
    import time

    import torch

    start = time.perf_counter()
    opts = dict(options or {})
    out = Path(out_dir) if out_dir is not None else Path(tempfile.mkdtemp(prefix=f"whist_{game_id}_"))
    out.mkdir(parents=True, exist_ok=True)
    threads = torch.get_num_threads()
    torch.set_num_threads(torch_threads)
    try:
        ppo_kwargs = {
            "n_steps": n_steps,
            "batch_size": batch_size,
            "n_epochs": n_epochs,
            "learning_rate": learning_rate,
            "net_arch": list(net_arch),
        }
        evaluation = (eval_every, eval_deals, eval_opponent)
        return _train(game_id, opts, opponents, total_timesteps, evaluation, seed, out, ppo_kwargs, start)
    finally:
        torch.set_num_threads(threads)


def _train(
    game_id: str,
    opts: dict[str, Any],
    opponents: Any,
    total_timesteps: int,
    evaluation: tuple[int, int, str],
    seed: int,
    out: Path,
    ppo_kwargs: dict[str, Any],
    start: float,
) -> TrainingRun:
    import time

    from whist_env.envs.single_agent import make_single_agent
    from whist_env.learning.sb3 import Periodic, PolicyAgent, make_ppo, run_ppo

    eval_every, eval_deals, eval_opponent = evaluation
    env = make_single_agent(game_id, opponents=opponents, **opts)
    # The package's training loop (the one training/train.py runs), with one task: evaluate between rollouts.
    model = make_ppo(env, seed=seed, gamma=1.0, **ppo_kwargs)
    eval_seed = 1_000_003 + seed
    curve: list[dict[str, Any]] = []
    returns: list[float] = []
    # One greedy evaluation agent; each evaluation first copies the model's current weights into it.
    learner = PolicyAgent.from_policy(model.policy, env.encoder, deterministic=True)

    def evaluate_now(timesteps: int) -> None:
        learner.sync(model.policy)
        row = _eval_row(game_id, opts, learner, eval_opponent, eval_deals, eval_seed)
        curve.append({"timesteps": timesteps, **row})

    run_ppo(model, total_timesteps, [Periodic("evaluate", eval_every, evaluate_now)], on_episode=returns.append)
    evaluate_now(int(model.num_timesteps))
    final = out / "model.zip"
    model.save(final)
    save_model_metadata(final, game_id, opts)
    return TrainingRun(
        game_id, opts, model, str(final), curve, returns, eval_opponent, round(time.perf_counter() - start, 1)
    )


def baselines(
    game_id: str,
    agents: Sequence[str],
    opponent: str,
    num_deals: int,
    seed: int,
    options: Mapping[str, Any] | None = None,
) -> dict[str, float]:
    """Each of ``agents``' mean reward per deal against ``opponent`` on the same duplicate deals that
    :func:`train_ppo` evaluates on (pass its ``seed``): the reference lines of a learning curve."""
    opts = dict(options or {})
    return {a: _eval_row(game_id, opts, a, opponent, num_deals, 1_000_003 + seed)["mean"] for a in agents}


def plot_learning_curve(run: TrainingRun, baseline: Mapping[str, float] | None = None, window: int = 100) -> Any:
    """Two panels: the evaluation curve (the greedy policy's mean reward per deal against the opponent, with its
    95% interval, and ``baseline`` agents' means as dashed lines), and the training episodes' returns under the
    sampled policy (moving average over ``window`` episodes). Returns the matplotlib Figure."""
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 3.8))
    x = [r["timesteps"] for r in run.curve]
    mean = np.array([r["mean"] for r in run.curve])
    ci = np.array([r["ci95"] for r in run.curve])
    ax1.plot(x, mean, marker="o", label="PPO learner")
    ax1.fill_between(x, mean - ci, mean + ci, alpha=0.25, label="95% interval")
    for i, (name, value) in enumerate((baseline or {}).items()):
        ax1.axhline(value, linestyle="--", color=f"C{i + 2}", label=f"{name} (same deals)")
    ax1.set_xlabel("training steps (learner decisions)")
    ax1.set_ylabel("mean reward per deal")
    ax1.set_title(f"{run.game_id} against {run.eval_opponent}: duplicate deals")
    ax1.grid(alpha=0.3)
    ax1.legend(fontsize="small")
    r = np.asarray(run.episode_returns, dtype=float)
    if len(r):
        w = max(1, min(window, len(r)))
        smooth = np.convolve(r, np.ones(w) / w, mode="valid")
        ax2.plot(np.arange(w - 1, len(r)), smooth)
    ax2.set_xlabel("training episode")
    ax2.set_ylabel(f"return, moving average over {window} episodes")
    ax2.set_title("training episodes (the sampled, exploring policy)")
    ax2.grid(alpha=0.3)
    fig.tight_layout()
    plt.close(fig)  # shown once, as the cell's value
    return fig


__all__ = ["TrainingRun", "baselines", "plot_learning_curve", "train_ppo"]
