"""``humbug_whist_v0``: Swedish Humbug whist, two players, two blinds, honours and rubber (RULES.md §1).

| | |
|---|---|
| agents | ``player_0``, ``player_1`` |
| actions | ``Discrete(54)``: play card ``c`` (``13*suit + rank``), ``52`` = KEEP, ``53`` = EXCHANGE |
| observation | ``{"observation": Box(0, 1, (N,), float32), "action_mask": Box(0, 1, (54,), int8)}`` |
| state | ``Box(0, 1, (M,), float32)``: both hands, both blinds, both put-away hands, then the table |

**Deal.** Four hands of 13, dealt singly clockwise from the dealer's left: ``deck[i]`` goes to
``[L, N, R, D][i % 4]`` where ``D`` is the dealer, ``N`` the non-dealer (opposite) and ``L``/``R``
the face-down blinds at the dealer's left and right. ``deck[51]``, the dealer's last card, is
turned up: its suit is trump. ``reset(options={"deck": [...], "dealer": d})`` deals a given deck.

**Exchange.** The non-dealer, then the dealer, says KEEP or EXCHANGE; an exchange swaps the whole
hand unseen for the blind at the player's right (``L`` for the non-dealer, ``R`` for the dealer).
The hand put away is out of play; only its owner remembers it. A dealer who exchanges puts the
turn-up away with his hand and trump stays. By default the non-dealer's decision is public at once;
``exchange_order="simultaneous"`` hides it from the dealer until both have decided.

**Play.** The dealer leads; follow suit if able (no duty to trump); 13 tricks; the winner leads.

**Scoring.** The player with 7+ tricks scores one point per trick over six, first. A game is 5
points; if nobody reached 5 on tricks, trump honours (A K Q J) in the hand each player actually
played score 4 → 4, 3 → 2; a game cannot be won on honours alone (the winner needs a trick point in
the game). Games are worth 3 (loser 0), 2 (loser 1–2) or 1 (loser 3+); the first to two games
wins the rubber and +2. The deal alternates every deal.

**Options.** ``exchange_order`` ``"nondealer_first"`` | ``"simultaneous"``; ``episode``
``"rubber"`` (default) | ``"game"`` | ``"deal"``; ``include_history`` (default True; off, the
observation forgets the cards played, the hand put away and the discarded turn-up).

**Rewards** (zero-sum, at the end of the episode only): rubber ``±(winner's rubber points −
loser's)``, in [1, 8]; game ``±game value``; deal ``±(my tricks − opponent's tricks)``.

**Observation** (relative seats me/opponent): hand, unseen cards, the turn-up while face up, trump,
the dealer's turn-up as a known card, current and last trick, leader, cards played and voids per
seat (history), tricks this deal, dealer, turn, phase (exchange/play), both exchange decisions once
public, the turn-up status (face up / taken up / discarded), my put-away hand, the discarded turn-up,
game points, trick points in the game, games won and rubber points for both. The blinds are never
in an observation, an ``info`` or a seat's render. ``env.describe(obs)`` prints it back in words.

**Version history.** v0: first release.
"""

from __future__ import annotations

from whist_env.envs.aec import WhistAECEnv
from whist_env.games.humbug_whist.spec import SPEC


class raw_env(WhistAECEnv):  # noqa: N801 (PettingZoo naming convention)
    __doc__ = __doc__
    game_spec = SPEC


# env(**options): the wrapped environment (illegal action → game over with a penalty)
env = raw_env.wrapped
