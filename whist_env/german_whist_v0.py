"""``german_whist_v0``: German Whist, two players, a drawing stock, then 13 scoring tricks (RULES.md §5).

| | |
|---|---|
| agents | ``player_0``, ``player_1`` |
| actions | ``Discrete(52)``: play card ``c`` (``13*suit + rank``, suits C D H S, ranks 2..A) |
| observation | ``{"observation": Box(0, 1, (N,), float32), "action_mask": Box(0, 1, (52,), int8)}`` |
| state | ``Box(0, 1, (M,), float32)``: hands, stock, next face-down card, face-down draws, then the table |

**Rules.** 13 cards each, dealt singly from the non-dealer (``non_dealer = deck[0:26:2]``,
``dealer = deck[1:26:2]``); the other 26 are the stock (``deck[26]`` on top), whose top card is
turned face up: its suit is trump for the whole deal. The non-dealer leads; follow suit if able (no
duty to trump); the highest trump, else the highest card of the led suit, wins; the winner leads.
**Phase 1** (tricks 1–13): after each trick the winner takes the face-up card (both see it), the
loser the next card face down (only he sees it), and the next card is turned. **Phase 2** (tricks
14–26): no drawing; the winner of trick 13 leads. Only phase-2 tricks count: 7 or more win the
deal. The dealer alternates.

**Options** (all validated): ``phase1_follow_suit`` (default True; False: any card may be played
in tricks 1–13, and an off-suit card still cannot win unless it is a trump); ``count_all_tricks``
(default False; True: all 26 tricks count, 14+ wins, 13–13 is a draw); ``reward`` ``"win"``
(default: +1 / −1 per deal, 0 for a draw) or ``"trick_diff"`` (my counted tricks − the
opponent's); ``num_deals`` (default 1: a series with the dealer alternating, each deal's reward
paid at its end, the running balance in ``info["balance"]``); ``include_history`` (default True:
perfect recall of cards played, prizes taken and one's own face-down draws; False: only what is on
the table now, including the last trick and the draw it produced while that trick is visible).

**Observation** (relative seats me/opponent): hand; unseen cards; ``turn_up`` = the face-up stock
card (the prize of the current trick) while the stock lasts; trump; ``known[opponent]`` = its prize
cards not yet played, and with recall its whole hand once the stock is empty; current and last
trick, leader, last winner; cards played and proven voids per seat (a hidden draw clears the
drawer's voids); all tricks per seat; dealer; turn; stage (phase 1 / phase 2); stock size; tricks
per stage per seat; prizes taken per seat; my own face-down draws; how many cards the opponent drew
face down (never which); the opponent's hand size; series balance and deals left.
``env.describe(obs)`` prints it back in words. The loser's face-down draw never reaches the other
player's observation, ``info`` or ``render`` (``render_seat``).

**state()** adds to the hands: ``stock`` (the cards left in the stock as a set, the face-up card
included), ``next_draw`` (the card under the face-up one, which the loser of the current trick will
draw) and ``draws[player_i]`` (each player's face-down draws). The order of the stock below the
next draw is not in ``state()``; ``env.game_state.stock`` holds it.

**Rewards.** Zero-sum, paid at the end of each deal: ``reward="win"``: ±1 (0 for 13–13 with
``count_all_tricks``); ``reward="trick_diff"``: ±(counted tricks won − lost).

**Version history.** v0: first release.
"""

from __future__ import annotations

from whist_env.envs.aec import WhistAECEnv
from whist_env.games.german_whist.spec import SPEC


class raw_env(WhistAECEnv):  # noqa: N801 (PettingZoo naming convention)
    __doc__ = __doc__
    game_spec = SPEC


# env(**options): the wrapped environment (illegal action → game over with a penalty)
env = raw_env.wrapped
