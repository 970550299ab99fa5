"""The rule-based agents of :mod:`whist_env.agents` as numba code on the batched engine's state block.

:mod:`whist_env.vector.heuristics.table` holds the shared reasoning (the Table and the building blocks); each
game's port reads the view quantities of the seat to act from its state row and calls it.
"""

from __future__ import annotations
