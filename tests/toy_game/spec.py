"""The toy's :class:`~whist_env.spec.GameSpec`: everything the package needs to know about Low Whist.

Registered in ``conftest.py`` with ``whist_env.register(SPEC)`` (``env_entry_point=...`` would name a PettingZoo
face of its own); a game of the package is instead one line of ``whist_env/registry.py`` pointing at
``whist_env.games.<name>.spec:SPEC``.
"""

from __future__ import annotations

from whist_env.encoding.trick import TrickEncoder
from whist_env.rules.core import State
from whist_env.spec import GameSpec

from .encoder import LowWhistEncoder
from .rules import LowWhist


def make_encoder(game: LowWhist) -> TrickEncoder:
    """The observation encoder for a Low Whist rules object (its size depends on ``num_deals``)."""
    return LowWhistEncoder(game.config.num_deals)


def hidden_masks(state: State) -> list[int]:
    """No cards lie outside the hands: every card is dealt."""
    return []


SPEC: GameSpec[LowWhist, State] = GameSpec(
    game_id="low_whist_v0",
    rules_cls=LowWhist,
    make_encoder=make_encoder,
    hidden_pieces=(),
    hidden_masks=hidden_masks,
    heuristic="toy_game.heuristic:LowWhistHeuristic",
    reference="toy_game.reference:LowWhistReference",
    engine="toy_game.engine:LowWhistVector",
    engine_heuristic="toy_game.engine_heuristic:act_kernel",
    single_deal={"num_deals": 1},
    unit="one deal",
    partner_offset=None,  # each for himself
    search=None,  # the solver assumes high cards win; LowWhist.standard_trick_winner is False
    option_grid=({}, {"include_history": False}, {"num_deals": 2}),
)
