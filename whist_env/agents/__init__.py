"""Agents: each receives only a PlayerView and a generator and returns a legal action.

    >>> from whist_env.agents import make_agent
    >>> agent = make_agent("heuristic", "classic_whist_v0")
    >>> action = agent.act(view, rng)          # view: a PlayerView, rng: a numpy Generator

* :class:`RandomAgent`: uniform over the legal actions.
* :func:`heuristic_for` / ``make_agent("heuristic", game_id)``: the game's rule-based agent, its rules
  of thumb stated in its docstring.
* :class:`~whist_env.agents.model.ModelAgent` / ``make_agent("model:<path>", game_id)``: a saved
  sb3-contrib MaskablePPO model (torch is imported only when it is used).
* :class:`~whist_env.agents.pretrained.PretrainedAgent` / ``make_agent("pretrained(path=policy.npz)", game_id)``:
  a policy network exported with :func:`~whist_env.agents.pretrained.export_policy`, played with numpy alone.
* :class:`~whist_env.search.pimc.PIMCAgent` / ``make_agent("pimc", game_id)``: determinized search with
  the double-dummy solver (numba is imported only when it is used).
"""

from whist_env.agents.base import Agent, RandomAgent
from whist_env.agents.factory import AGENT_NAMES, heuristic_class, heuristic_for, make_agent
from whist_env.agents.heuristic import HeuristicAgent

__all__ = [
    "AGENT_NAMES",
    "Agent",
    "HeuristicAgent",
    "RandomAgent",
    "heuristic_class",
    "heuristic_for",
    "make_agent",
]


def __getattr__(name: str):  # noqa: ANN202
    # ModelAgent's module imports nothing heavy, but keep it out of the package import anyway.
    if name == "ModelAgent":
        from whist_env.agents.model import ModelAgent

        return ModelAgent
    if name == "PretrainedAgent":
        from whist_env.agents.pretrained import PretrainedAgent

        return PretrainedAgent
    if name == "PIMCAgent":
        from whist_env.search.pimc import PIMCAgent

        return PIMCAgent
    raise AttributeError(f"module 'whist_env.agents' has no attribute {name!r}")
