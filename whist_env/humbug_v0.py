"""``humbug_v0``: English Humbug, two players with 26 cards each (RULES.md §3).

| | |
|---|---|
| agents | ``player_0``, ``player_1`` |
| actions | ``Discrete(52)``: play card ``c`` |
| observation | ``{"observation": Box(0, 1, (N,), float32), "action_mask": Box(0, 1, (52,), int8)}`` |
| state | ``Box(0, 1, (M,), float32)``: both hands, then the table |

**Rules.** All 52 cards are dealt alternately starting with the non-dealer; the dealer's last card
is turned up for trump and is an ordinary card of his hand. The non-dealer leads; follow suit if
able; 26 tricks. The player with more tricks wins by the difference (13–13 is a draw).

**Modes.** ``mode="hidden_hand"`` (default): before his first card of a deal each player studies
both original hands (``initial_layout``); afterwards the observation holds only his hand, the
trump and turn-up card, the current trick, the just-completed trick (until the next lead), trick
counts, dealer and turn: no opponent hand and no history. ``mode="open_table"``: the opponent's
current hand is always visible, and history is kept (``include_history``, default True there).

**Episodes.** One deal by default, reward ``±(my tricks − opponent's tricks)``. ``num_deals=k``
plays a series with the dealer alternating; each deal's difference is paid at its end and the
running balance is in ``info["balance"]``.

**Version history.** v0: first release.
"""

from __future__ import annotations

from whist_env.envs.aec import WhistAECEnv
from whist_env.games.humbug.spec import SPEC


class raw_env(WhistAECEnv):  # noqa: N801 (PettingZoo naming convention)
    __doc__ = __doc__
    game_spec = SPEC


# env(**options): the wrapped environment (illegal action → game over with a penalty)
env = raw_env.wrapped
