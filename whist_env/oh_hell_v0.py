"""``oh_hell_v0``: exact-bidding whist for 2–8 players, Swedish Plump rules by default (RULES.md §4).

| | |
|---|---|
| agents | ``player_0 … player_{n-1}`` (``num_players`` 2..8, default 4) |
| actions | ``Discrete(52 + B + 1)``: card ``c`` is action ``c``, bid ``b`` is ``52 + b`` (``B``: largest hand) |
| observation | ``{"observation": Box(0, 1, (N,), float32), "action_mask": Box(0, 1, (52 + B + 1,), int8)}`` |
| state | ``Box(0, 1, (M,), float32)``: every hand and the cards set aside, then the table (``env.describe_state``) |

**Rules.** A match is ``2S - 1`` deals of ``S, S-1, …, 1, …, S`` cards, ``S = floor(52/n)``
(n = 4: 13 … 1 … 13, 25 deals). Cards are dealt singly from the dealer's left; the ones left over
are set aside face down, unseen. Each player bids once, from the dealer's left, how many tricks
he will take (0..k); the dealer bids last and may not make the bids add up to k (the hook rule).
The dealer's left leads; follow suit if able; with no trump an off-suit card never wins. An exact
bid scores the bid with a "1" written in front (3 → 13, 0 → 10, 10 → 110); a missed bid scores 0.
The deal passes to the left. The highest total wins; tied leaders share the win.

**Options** (all validated):

* ``num_players`` 2..8 (default 4); ``max_cards`` caps ``S``; ``start_cards`` (the seed's "start
  from 10 cards" variant, ``start_cards=10``) caps it the same way.
* ``trump_mode``: ``"none"`` (default, the seed's base game); ``"drawn_card"`` (before each deal
  a card is drawn from the full pack and shown, its suit is trump, and it goes back before the
  shuffle: its identity is public, its place is not); ``"turn_up"`` (the first undealt card,
  ``deck[n*k]``, is turned for trump and stays out of play; no trump when all 52 cards are dealt).
  A void player *may* trump, never must.
* ``exact_score_mode``: ``"prefix_one"`` (default; 10 + bid for bids 0–9, 100 + bid from 10) or
  ``"ten_plus_bid"`` (always 10 + bid). ``miss_points``: ``"zero"`` (default) or ``"per_trick"``
  (a missed bid scores one point per trick taken).
* ``episode``: ``"match"`` (default, the whole schedule) or ``"deal"`` with ``hand_size=k`` (one
  deal of k cards, default ``S``). ``include_history`` (default True).

``trump_mode="turn_up", exact_score_mode="ten_plus_bid", miss_points="per_trick"`` are the rules
of OpenSpiel's ``oh_hell``.

**Reset options.** ``env.reset(options={"deck": [...], "dealer": d, "trump_card": c})``: the first
deal from a given deck order (``deck[i]`` to seat ``(d+1+i) % n``), dealer, and (drawn-card mode)
drawn card.

**Rewards.** General-sum: at the end of every deal each seat receives its own deal score as
scored, so the return of a match is the final total. ``info["scores"]`` holds the running totals,
``info["last_deal_bids"]``, ``info["last_deal_tricks"]``, ``info["last_deal_deal_scores"]`` (...) the last deal's
bids, tricks and scores (``info["last_deal_trump"]``: 0..3, or 4 for no trump), and ``info["winners"]`` a 1 for
each seat with the highest total once the match is over (all 0 before). Scores reach 126 per deal with
``prefix_one``: scale rewards in your training code if your algorithm needs it.

**Observation** (relative seats me, +1, +2, … clockwise): hand, unseen cards (other hands, the
cards set aside, the drawn card unless seen), the turn-up, trump, current and last trick by seat,
leader, last winner, cards played and proven voids per seat, tricks per seat, dealer, turn, phase
(bidding or play), this deal's hand size, the drawn card, every bid (``not yet`` until made),
tricks each seat still needs, whose bid is already lost, and in a match the deals still to come and
the standings: how far each seat trails the leading total, in tens of points (rounded up, 0 =
leading, clipped at 310). All pieces are binary, which keeps an observation cheap; the exact totals
are in ``info``. ``env.describe(obs)`` prints it back in words.

**Version history.** v0: first release.
"""

from __future__ import annotations

from whist_env.envs.aec import WhistAECEnv
from whist_env.games.oh_hell.spec import SPEC


class raw_env(WhistAECEnv):  # noqa: N801 (PettingZoo naming convention)
    __doc__ = __doc__
    game_spec = SPEC


# env(**options): the wrapped environment (illegal action → game over with a penalty)
env = raw_env.wrapped
