"""Search: a double-dummy solver, a sampler of deals consistent with a view, and the PIMC agent.

* :class:`Solver`, :func:`position_from_state`, :func:`solve`: exact card play with every hand open
  (the games whose spec has a ``search``: :func:`solved_games`).
* :func:`sample_deal`: a complete deal drawn uniformly among those consistent with a
  :class:`~whist_env.view.PlayerView`.
* :class:`PIMCAgent`: samples deals, solves each double-dummy, plays the best card on average.
"""

from whist_env.search.pimc import PIMCAgent, position_from_view
from whist_env.search.sampler import DealSampler, SampledDeal, consistent, hand_sizes, sample_deal, sample_deals
from whist_env.search.solver import Position, Solver, SolveResult, position_from_state, solve, solved_games

__all__ = [
    "DealSampler",
    "PIMCAgent",
    "Position",
    "SampledDeal",
    "SolveResult",
    "Solver",
    "consistent",
    "hand_sizes",
    "position_from_state",
    "position_from_view",
    "sample_deal",
    "sample_deals",
    "solve",
    "solved_games",
]
