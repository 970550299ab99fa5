"""Helpers for teaching with whist_env: the notebooks in ``notebooks/`` call these and hold no logic of their own.

    >>> from whist_env import teaching
    >>> print(teaching.games_overview())                        # one row per game
    >>> episode = teaching.play_episode("german_whist_v0", "heuristic", seed=3)
    >>> print(episode.transcript())                             # trick by trick
    >>> rows = teaching.knowledge_timeline(episode, seat=0)     # what seat 0's observation holds, trick by trick

One module per notebook, every public name re-exported here:

* :mod:`~whist_env.teaching.tour` (``01_tour``): :func:`games_overview`, :func:`action_names`,
  :func:`legal_text`, :func:`advance`, :func:`compare_views`, :func:`sizes`;
* :mod:`~whist_env.teaching.train_and_evaluate` (``02_train_and_evaluate``): :func:`train_ppo` (a short
  MaskablePPO run with a learning curve), :func:`baselines`, :func:`plot_learning_curve`;
* :mod:`~whist_env.teaching.hidden_information` (``03_hidden_information``): :func:`play_episode`,
  :func:`knowledge_timeline`, :func:`plot_series`, :class:`Forgetful` (an agent without memory between
  decisions), :func:`duplicate_vs_single` and :func:`variance_table` (how much duplicate deals narrow a
  confidence interval);
* :mod:`~whist_env.teaching.common`: :func:`table` (rows of dicts as markdown), used by several notebooks.

torch, stable-baselines3 and matplotlib are imported only inside the functions that need them.
"""

from __future__ import annotations

from whist_env.teaching.common import table
from whist_env.teaching.hidden_information import (
    Episode,
    Forgetful,
    VarianceComparison,
    duplicate_vs_single,
    knowledge_timeline,
    play_episode,
    plot_series,
    variance_table,
)
from whist_env.teaching.tour import action_names, advance, compare_views, games_overview, legal_text, sizes
from whist_env.teaching.train_and_evaluate import TrainingRun, baselines, plot_learning_curve, train_ppo

__all__ = [
    "Episode",
    "Forgetful",
    "TrainingRun",
    "VarianceComparison",
    "action_names",
    "advance",
    "baselines",
    "compare_views",
    "duplicate_vs_single",
    "games_overview",
    "knowledge_timeline",
    "legal_text",
    "play_episode",
    "plot_learning_curve",
    "plot_series",
    "sizes",
    "table",
    "train_ppo",
    "variance_table",
]
