"""Per-policy metrics of RLlib self-play, logged by the env runners at the end of every episode.

RLlib's own ``episode_return_mean`` sums the returns of every seat, which is 0 in a zero-sum game whatever
the policies do; so for every module this logs its *mean return per seat it played*, how many episodes it
sat in, and, for ``main``, its mean return per seat against each kind of table (``self``: main in every seat,
``snapshot``, or a scripted agent's name). They arrive in the training result under
``env_runners/league/{seat_return,episodes,main_vs}/<key>``.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from whist_env.learning.rllib import require

require("ray.rllib", "whist_env.learning.rllib.callbacks")

from ray.rllib.callbacks.callbacks import RLlibCallback  # noqa: E402

from whist_env.learning.rllib.league import MAIN, module_for_agent, table_kind  # noqa: E402

WINDOW = 200
"""Episodes the running means are taken over."""


class LeagueMetrics(RLlibCallback):
    """Logs each module's mean return per seat, its episodes, and main's return per kind of table."""

    def on_episode_end(self, *, episode: Any, metrics_logger: Any = None, **kwargs: Any) -> None:
        if metrics_logger is None:
            return
        chunks = [*(kwargs.get("prev_episode_chunks") or []), episode]
        if not hasattr(episode, "agent_episodes"):  # engine: batched: a single-agent episode of main's seat
            self._main_alone(chunks, metrics_logger)
            return
        returns: dict[str, float] = defaultdict(float)
        for chunk in chunks:
            for agent, agent_episode in chunk.agent_episodes.items():
                returns[agent] += float(agent_episode.get_return())
        per_module: dict[str, list[float]] = defaultdict(list)
        for agent, value in returns.items():
            per_module[module_for_agent(agent)].append(value)
        for module, values in per_module.items():
            metrics_logger.log_value(("league", "seat_return", module), sum(values) / len(values), window=WINDOW)
            metrics_logger.log_value(("league", "episodes", module), 1, reduce="sum")
        roles = _table(episode)
        if roles and per_module.get(MAIN):
            main = per_module[MAIN]
            metrics_logger.log_value(("league", "main_vs", table_kind(roles)), sum(main) / len(main), window=WINDOW)

    @staticmethod
    def _main_alone(chunks: list[Any], metrics_logger: Any) -> None:
        """The metrics of an episode of the batched league (:mod:`whist_env.learning.rllib.engine_env`): only main's
        seat reaches RLlib, and the env names the table in the last step's infos."""
        try:
            kind = chunks[-1].get_infos(-1).get("table")
        except (IndexError, KeyError, ValueError, AttributeError):
            kind = None
        log_main_episode(metrics_logger, sum(float(chunk.get_return()) for chunk in chunks), kind)


def log_main_episode(metrics_logger: Any, ret: float, table: Any) -> None:
    """Log one finished episode of main's seat in the batched league: its return per seat, the episode, and the
    return against the kind of table (``table``, when known). Shared by this callback (RLlib's own runner) and
    :class:`whist_env.learning.rllib.engine_runner.EngineEnvRunner`, which logs without episode callbacks."""
    metrics_logger.log_value(("league", "seat_return", MAIN), ret, window=WINDOW)
    metrics_logger.log_value(("league", "episodes", MAIN), 1, reduce="sum")
    if table:
        metrics_logger.log_value(("league", "main_vs", str(table)), ret, window=WINDOW)


def _table(episode: Any) -> list[str]:
    """The roles of the episode's table, from the last step's infos (the env puts them there)."""
    try:
        infos = episode.get_infos(-1)
    except (IndexError, KeyError, ValueError):
        return []
    for info in infos.values():
        if isinstance(info, dict) and "table" in info:
            return list(info["table"])
    return []
