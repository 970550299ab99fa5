"""``classic_whist_v0``: classic partnership Whist, the short game to 5 (RULES.md §2).

| | |
|---|---|
| agents | ``player_0 … player_3``; partners opposite: {0, 2} vs {1, 3} |
| actions | ``Discrete(52)``: play card ``c`` (``13*suit + rank``, suits C D H S, ranks 2..A) |
| observation | ``{"observation": Box(0, 1, (N,), float32), "action_mask": Box(0, 1, (52,), int8)}`` |
| state | ``Box(0, 1, (M,), float32)``: all four hands, then the table (``env.describe_state``) |

**Rules.** Deal singly from the dealer's left; the dealer's last card is turned up for trump and
stays on the table until the dealer plays to trick 1. The dealer's left leads; follow suit if able
(no duty to trump); the highest trump, else the highest card of the led suit, wins; the winner
leads. The side with 7+ tricks scores one point per trick over six; first side to the target wins.
The deal passes to the left.

**Options** (all validated): ``target_points`` 5 | 7 | 10; ``honours`` (A K Q J of trumps held
by a side: 4 → 4 points, 3 → 2; tricks score first; a side at 4 cannot score them);
``rubber`` (the episode is a best-of-three rubber, games worth 3/2/1, +2 for the rubber);
``trump_rotation`` (no turn-up; trump cycles NT, ♠, ♥, ♦, ♣); ``episode`` ``"game"`` (default) or
``"deal"``; ``reward`` ``"win"`` (±1 to both partners at the end of the game, or rubber) or
``"points"`` (each deal's points as scored, zero-sum between the sides; with ``rubber`` the game
values and the rubber bonus as they are won); ``include_history`` (default True).

**Rewards.** ``episode="deal"``: ``±(tricks − 6)`` (plus honours) to the two sides, zero-sum.

**Observation** (relative seats me/left/partner/right): hand, unseen cards, the turn-up while
public, trump, known cards of other seats (the dealer's turn-up), current and last trick by seat,
leader, last winner, cards played and voids per seat, tricks per seat, dealer, turn, team points
and games won. ``env.describe(obs)`` prints it back in words.

**Version history.** v0: first release.
"""

from __future__ import annotations

from whist_env.envs.aec import WhistAECEnv
from whist_env.games.classic_whist.spec import SPEC


class raw_env(WhistAECEnv):  # noqa: N801 (PettingZoo naming convention)
    __doc__ = __doc__
    game_spec = SPEC


# env(**options): the wrapped environment (illegal action → game over with a penalty)
env = raw_env.wrapped
