"""Exact-bidding whist: Oh Hell, by default with the Swedish Plump rules (RULES.md §4, seed 003).

Two to eight players. The hand sizes run ``S, S-1, …, 1, …, S`` with ``S = floor(52/n)`` (§4.1);
cards are dealt singly from the dealer's left and the rest are set aside unseen (§4.2). Before the
play every player bids, from the dealer's left, how many tricks he will take; the dealer, bidding
last, may not make the bids add up to the number of tricks (the hook rule, §4.4). The dealer's left
(förhand) leads; follow suit. A player who takes exactly his bid scores it with a "1" written in
front (bid 3 → 13, bid 10 → 110); a missed bid scores nothing (§4.6). No trump by default; a card
drawn before the deal, or a card turned up after it, can set trump (§4.3).

The game is general-sum: every seat is paid its own deal score at the end of each deal.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from whist_env.cards import NO_TRUMP, NUM_CARDS, card_pretty, parse_card, suit_str
from whist_env.errors import IllegalActionError, OptionError
from whist_env.options import GameConfig, option
from whist_env.rules.core import PHASE_BIDDING, PHASE_OVER, PHASE_PLAY, State, TrickGame
from whist_env.rules.tricks import deal_round_robin
from whist_env.view import ViewExtras

MIN_PLAYERS = 2
MAX_PLAYERS = 8
BID_BASE = NUM_CARDS  # RULES.md §0.6: bidding b is action 52 + b
TRUMP_MODES = ("none", "drawn_card", "turn_up")


# ----------------------------------------------------------------------------- pure rules
def largest_hand(num_players: int, cap: int | None = None) -> int:
    """``S``: the first (and last) hand size, ``floor(52/n)`` capped by ``cap`` (RULES.md §4.1)."""
    s = NUM_CARDS // num_players
    return s if cap is None else min(s, cap)


def schedule(num_players: int, cap: int | None = None) -> tuple[int, ...]:
    """Hand sizes of a match: ``S, S-1, …, 2, 1, 2, …, S`` (RULES.md §4.1, 2S - 1 deals).

    The one-card deal happens once and the last deal again has ``S`` cards [SEED 003].
    """
    s = largest_hand(num_players, cap)
    return tuple(range(s, 0, -1)) + tuple(range(2, s + 1))


def forbidden_bid(hand_size: int, earlier_total: int) -> int | None:
    """RULES.md §4.4 hook rule: the bid the last bidder may not make, or None when unrestricted.

    The last bidder may not bid ``k - sum(other bids)``; when that lies outside ``0..k`` there is
    no restriction.
    """
    f = hand_size - earlier_total
    return f if 0 <= f <= hand_size else None


def deal_score(bid: int, took: int, exact_score_mode: str = "prefix_one", miss_points: str = "zero") -> int:
    """One seat's score for a deal (RULES.md §4.6).

    An exact bid scores ``int("1" + str(bid))`` (``prefix_one``: 10 + bid for bids 0–9, 100 + bid
    for bids 10–26) or ``10 + bid`` (``ten_plus_bid``). A missed bid scores 0, or one point per trick
    taken with ``miss_points="per_trick"``.
    """
    if took == bid:
        if exact_score_mode == "prefix_one":
            return int("1" + str(bid))  # RULES.md §4.6 "en 1:a framför sina noterade bud"
        return 10 + bid
    return took if miss_points == "per_trick" else 0


# ----------------------------------------------------------------------------- options and state
@dataclass(frozen=True)
class OhHellConfig(GameConfig):
    """Options of ``oh_hell_v0`` (RULES.md §4.1, §4.3, §4.6, §0.8)."""

    num_players: int = option(4, kind=int, minimum=MIN_PLAYERS, maximum=MAX_PLAYERS, doc="players at the table")
    trump_mode: str = option("none", choices=TRUMP_MODES, doc="no trump, a card drawn before the deal, or a turn-up")
    exact_score_mode: str = option("prefix_one", choices=("prefix_one", "ten_plus_bid"), doc="score of an exact bid")
    miss_points: str = option("zero", choices=("zero", "per_trick"), doc="score of a missed bid")
    episode: str = option("match", choices=("match", "deal"), doc="the whole schedule, or one deal of hand_size")
    hand_size: int | None = option(
        None, kind=int, minimum=1, maximum=26, optional=True, doc="cards per seat with episode='deal' (default S)"
    )
    max_cards: int | None = option(
        None, kind=int, minimum=1, maximum=26, optional=True, doc="cap on the largest hand S"
    )
    start_cards: int | None = option(
        None, kind=int, minimum=1, maximum=26, optional=True, doc="SEED 003 variant 'start from 10 cards': caps S"
    )
    include_history: bool = option(True, doc="observations remember every card played (perfect recall)")

    def check(self, game_id: str) -> None:
        n = self.num_players
        most = NUM_CARDS // n
        if self.hand_size is not None:
            if self.episode != "deal":
                raise OptionError(
                    f"{game_id}: hand_size={self.hand_size} needs episode='deal' (a match follows the schedule "
                    "S, S-1, …, 1, …, S); use max_cards or start_cards to shorten a match"
                )
            if self.hand_size > most:
                raise OptionError(
                    f"{game_id}: hand_size={self.hand_size} is more than a 52-card deck allows for {n} players; "
                    f"the largest is floor(52/{n}) = {most}"
                )
            cap = self.cap
            if cap is not None and self.hand_size > cap:
                raise OptionError(
                    f"{game_id}: hand_size={self.hand_size} is larger than the cap {cap} set by max_cards/start_cards"
                )

    @property
    def cap(self) -> int | None:
        """The smaller of ``max_cards`` and ``start_cards`` (None when neither is set)."""
        caps = [c for c in (self.max_cards, self.start_cards) if c is not None]
        return min(caps) if caps else None


@dataclass(frozen=True, kw_only=True, init=False)
class OhHellExtras(ViewExtras):
    """What an Oh Hell seat knows beyond the common view (RULES.md §4.7): all public."""

    bids: tuple[int, ...]  # (n,) each seat's bid this deal, -1 while it has not bid
    hand_size: int  # cards dealt to each seat this deal (= tricks in the deal)
    drawn_card: int  # the card drawn to set trump when it is out of play (§4.3), else -1


class OhHellState(State):
    """Adds the bids, the drawn trump card and the cards set aside."""

    __slots__ = (
        "bids",  # (n,) this deal's bids, -1 = not yet bid
        "num_bids",  # bids made this deal
        "drawn_card",  # RULES.md §4.3 card drawn for trump before this deal, -1 when none
        "set_aside",  # mask of the leftover cards, face down and out of play (§4.2)
    )

    def __init__(self, num_players: int, dealer: int) -> None:
        super().__init__(num_players, dealer)
        self.bids = [-1] * num_players
        self.num_bids = 0
        self.drawn_card = -1
        self.set_aside = 0


# ----------------------------------------------------------------------------- the game
class OhHell(TrickGame[OhHellState]):
    """Rules of ``oh_hell_v0``."""

    game_id = "oh_hell_v0"
    config_cls = OhHellConfig
    state_cls = OhHellState
    phase_rules = {PHASE_BIDDING: ("legal_bids", "apply_bid")}
    extra_reset_options = ("trump_card",)
    info_seat_keys = ()
    config: OhHellConfig

    def __init__(self, /, **options: Any) -> None:
        super().__init__(**options)
        cfg = self.config
        self.num_players = cfg.num_players
        self.recall = cfg.include_history
        full = schedule(cfg.num_players, cfg.cap)
        # the hand size of every deal of an episode
        self.schedule: tuple[int, ...] = full if cfg.episode == "match" else (cfg.hand_size or full[0],)
        self.max_bid = max(self.schedule)
        self.num_actions = BID_BASE + self.max_bid + 1
        self._bid_masks = [((1 << (k + 1)) - 1) << BID_BASE for k in range(self.max_bid + 1)]  # bids 0..k
        self.drawn = cfg.trump_mode == "drawn_card"
        self.turned = cfg.trump_mode == "turn_up"

    # ------------------------------------------------------------------ episode and deals
    def new_episode(
        self,
        rng: np.random.Generator,
        deck: Sequence[int | str] | None = None,
        dealer: int | None = None,
        trump_card: int | str | None = None,
        **extra: Any,
    ) -> OhHellState:
        """Start an episode (RULES.md §0.3 draw order: first dealer, then per deal trump card and deck).

        Args:
            rng: the only source of randomness.
            deck: optional deck order for the first deal.
            dealer: optional first dealer.
            trump_card: ``trump_mode="drawn_card"`` only: the card drawn before the first deal (id or
                name). Without it the card is drawn from ``rng``, also when ``deck`` is given.
        """
        card = self._check_trump_card(trump_card)
        state = super().new_episode(rng, deck, dealer, **extra)
        if self.drawn and (card is not None or deck is not None):
            # A given deck skips draw_deck, so the first deal's card is drawn here; a given card replaces it.
            state.drawn_card = card if card is not None else int(rng.integers(NUM_CARDS))
            state.trump = state.drawn_card // 13
        return state

    def check_start(
        self,
        deck: Sequence[int | str] | None = None,
        dealer: int | None = None,
        trump_card: int | str | None = None,
        **extra: Any,
    ) -> tuple[list[int] | None, int | None]:
        """The base checks plus ``trump_card`` (see :meth:`new_episode`)."""
        self._check_trump_card(trump_card)
        return super().check_start(deck, dealer, **extra)

    def _check_trump_card(self, trump_card: int | str | None) -> int | None:
        if trump_card is None:
            return None
        if not self.drawn:
            raise OptionError(
                f"{self.game_id}: the start option 'trump_card' needs trump_mode='drawn_card' "
                f"(this game has trump_mode={self.config.trump_mode!r})"
            )
        if isinstance(trump_card, str):
            try:
                return parse_card(trump_card)
            except ValueError as err:
                raise OptionError(f"{self.game_id}: 'trump_card' is not a card name: {err}") from None
        if isinstance(trump_card, (int, np.integer)) and not isinstance(trump_card, bool) and 0 <= trump_card < 52:
            return int(trump_card)
        raise OptionError(
            f"{self.game_id}: 'trump_card' must be a card id 0..51 or a name like 'TS', got {trump_card!r}"
        )

    def draw_deck(self, rng: np.random.Generator, state: OhHellState) -> list[int]:
        """RULES.md §0.3: with a drawn trump, ``trump_card = rng.integers(52)`` comes before the shuffle."""
        if self.drawn:
            state.drawn_card = int(rng.integers(NUM_CARDS))  # §4.3 drawn from the full pack, returned
        return rng.permutation(NUM_CARDS).tolist()

    def start_deal(self, state: OhHellState, deck: list[int]) -> None:
        """RULES.md §4.2: ``deck[i]`` to seat ``(dealer+1+i) % n`` for ``i < n*k``; the rest set aside."""
        n = state.num_players
        k = self.schedule[state.deal_index]
        d = state.dealer
        dealt = n * k
        order = [(d + 1 + i) % n for i in range(n)]
        self.reset_deal(state, deal_round_robin(deck[:dealt], order, n), k)
        rest = deck[dealt:]
        if self.turned and rest:
            # §4.3 turn_up: the first undealt card is turned and stays out of play; none when n*k = 52.
            state.turn_up = rest[0]
            state.trump = rest[0] // 13
            rest = rest[1:]
        elif self.drawn and state.drawn_card >= 0:
            state.trump = state.drawn_card // 13
        aside = 0
        for c in rest:
            aside |= 1 << c
        state.set_aside = aside
        state.bids = [-1] * n
        state.num_bids = 0
        state.phase = PHASE_BIDDING
        state.leader = state.to_act = (d + 1) % n  # §4.4 förhand bids first; §4.5 and leads

    # ------------------------------------------------------------------ bidding
    def legal_bids(self, state: OhHellState) -> int:
        """RULES.md §4.4: bids 0..k as actions ``BID_BASE + bid``, less the one the hook rule forbids."""
        k = state.deal_tricks
        mask = self._bid_masks[k]
        if state.num_bids == state.num_players - 1:
            # RULES.md §4.4 hook rule: the last bidder may not make the bids add up to k.
            f = forbidden_bid(k, sum(state.bids) + 1)  # + 1: the last bidder's own -1
            if f is not None:
                mask &= ~(1 << (BID_BASE + f))
        return mask

    def apply_bid(self, state: OhHellState, action: int) -> list[float] | None:
        """RULES.md §4.4: record the bid; after the last one the player left of the dealer leads."""
        if action < 0 or not (self.legal_bids(state) >> action) & 1:  # a negative shift would raise ValueError
            k = state.deal_tricks
            if action < BID_BASE:
                reason = f"this is the bidding phase; bid with actions {BID_BASE}..{BID_BASE + k} (bid 0..{k})"
            elif action - BID_BASE > k:
                reason = f"bids go from 0 to {k} in a deal of {k} cards"
            else:
                reason = (
                    f"hook rule (RULES.md §4.4): the last bidder may not bid {action - BID_BASE}, "
                    f"which would make the bids add up to {k}"
                )
            raise self.illegal(state, action, reason)
        seat = state.to_act
        state.bids[seat] = action - BID_BASE
        state.num_bids += 1
        n = state.num_players
        if state.num_bids == n:
            state.phase = PHASE_PLAY
            state.to_act = (state.dealer + 1) % n  # RULES.md §4.5 förhand leads
        else:
            state.to_act = (seat + 1) % n
        return None

    def illegal(self, state: OhHellState, action: int, reason: str) -> IllegalActionError:
        if action >= BID_BASE and state.phase == PHASE_PLAY:
            reason = "the bidding is over; play a card"  # rather than the card play's "not in the hand"
        return super().illegal(state, action, reason)

    def describe_action(self, action: int) -> str:
        return f"bid {action - BID_BASE}" if action >= BID_BASE else super().describe_action(action)

    # ------------------------------------------------------------------ scoring
    def end_deal(self, state: OhHellState) -> list[float] | None:
        """RULES.md §4.6: exact bids score, misses score 0 (or per trick); paid to each seat per deal."""
        cfg = self.config
        deal = [
            deal_score(b, t, cfg.exact_score_mode, cfg.miss_points)
            for b, t in zip(state.bids, state.tricks_won, strict=True)
        ]
        state.scores = [a + b for a, b in zip(state.scores, deal, strict=True)]
        state.deal_summary = (
            ("hand_size", state.deal_tricks),
            ("trump", state.trump),
            ("bids", tuple(state.bids)),
            ("tricks", tuple(state.tricks_won)),
            ("deal_scores", tuple(deal)),
            ("totals", tuple(state.scores)),
        )
        over = state.deal_index + 1 >= len(self.schedule)
        return self.finish(state, [float(s) for s in deal] if any(deal) else None, over)

    # ------------------------------------------------------------------ what a seat knows
    def known_cards(self, state: OhHellState, seat: int) -> list[int]:
        # §4.7: only the own hand; the turn-up is out of play and the drawn card's place is unknown.
        known = [0] * state.num_players
        known[seat] = state.hands[seat]
        return known

    def turn_up_visible(self, state: OhHellState, seat: int) -> int:
        # §4.3 turn_up: the turned card stays face up, out of play, for the whole deal.
        return state.turn_up

    def view_extra(self, state: OhHellState, seat: int) -> OhHellExtras:
        return OhHellExtras(bids=tuple(state.bids), hand_size=state.deal_tricks, drawn_card=state.drawn_card)

    def summary_fields(self) -> dict[str, int | tuple[int, ...]]:
        """The deal summary in ``info``: ``trump`` 0..3, or 4 (``NO_TRUMP``) for none; bids -1 before a deal ends."""
        n = self.num_players
        zeros = (0,) * n
        return {
            "hand_size": 0,
            "trump": NO_TRUMP,
            "bids": (-1,) * n,
            "tricks": zeros,
            "deal_scores": zeros,
            "totals": zeros,
        }

    def info_now(self, state: OhHellState, seat: int) -> dict[str, Any]:
        """Base info (``scores`` are the running totals) plus ``hand_size`` and ``winners``: 1 for each seat with the
        highest total once the match is over (tied leaders share the win), else all 0."""
        info = super().info_now(state, seat)
        info["hand_size"] = state.deal_tricks
        if state.phase == PHASE_OVER:
            won = winners(state.scores)
            info["winners"] = tuple(int(s in won) for s in range(state.num_players))
        else:
            info["winners"] = (0,) * state.num_players
        return info

    # ------------------------------------------------------------------ checks and text
    def deal_unit(self) -> str:
        """One deal's reward in words, with the number of cards dealt."""
        return f"one deal of {self.schedule[0]} cards: the seat's deal score"

    def deal_return_range(self) -> tuple[float, float]:
        """RULES.md §4.6 (:func:`deal_score`): a seat scores at least 0 (a missed bid), and at most an exact bid
        of every trick of the deal, the largest exact score; a missed bid with ``per_trick`` pays less."""
        k = self.schedule[0]
        return 0.0, float(deal_score(k, k, self.config.exact_score_mode, self.config.miss_points))

    def check_invariants(self, state: OhHellState) -> None:
        super().check_invariants(state)
        n = state.num_players
        k = state.deal_tricks
        bids = state.bids
        assert k == self.schedule[state.deal_index], "hand size off the schedule"
        assert state.num_bids == n - bids.count(-1) and -1 <= min(bids) and max(bids) <= k
        everything = state.set_aside
        count = everything.bit_count()
        for s in range(n):
            everything |= state.hands[s] | state.played[s]
            count += state.hands[s].bit_count() + state.played[s].bit_count()
        if state.turn_up >= 0:
            everything |= 1 << state.turn_up
            count += 1
        assert count == everything.bit_count() == NUM_CARDS, "a card is lost or in two places (§4.2, §4.3)"
        if state.phase == PHASE_BIDDING:
            assert not state.history and state.to_act == (state.dealer + 1 + state.num_bids) % n
            assert self.legal_bids(state), "no legal bid"
        else:
            assert state.num_bids == n
            assert sum(bids) != k, "the hook rule lets the bids add up to k (§4.4)"
        if state.phase == PHASE_PLAY:
            held = [k - state.trick_number] * n
            for s, _ in state.trick:
                held[s] -= 1
            assert [h.bit_count() for h in state.hands] == held
        mode = self.config.trump_mode
        if mode == "none":
            assert state.trump is None and state.turn_up < 0
        elif mode == "drawn_card":
            assert 0 <= state.drawn_card < NUM_CARDS and state.trump == state.drawn_card // 13
        else:
            assert (state.turn_up < 0) == (n * k == NUM_CARDS)
            assert state.trump == (None if state.turn_up < 0 else state.turn_up // 13)
        assert state.returns == state.scores, "returns must equal the totals"

    def render_header(self, state: OhHellState) -> str:
        card = state.drawn_card if state.drawn_card >= 0 else state.turn_up
        shown = f" ({'drawn' if state.drawn_card >= 0 else 'turned'} {card_pretty(card)})" if card >= 0 else ""
        return (
            f"{self.game_id} · deal {state.deal_index + 1}/{len(self.schedule)} · {state.deal_tricks} cards · "
            f"dealer {self.seat_name(state.dealer)} · trump {suit_str(state.trump)}{shown} · "
            f"phase {self.phase_names[state.phase]}"
        )

    def render_extra(self, state: OhHellState, seat: int | None) -> str:
        bids = ", ".join(f"{self.seat_name(s)} {'-' if b < 0 else b}" for s, b in enumerate(state.bids))
        return f"bids: {bids}"


def winners(totals: Sequence[float]) -> tuple[int, ...]:
    """Seats with the highest total; tied leaders share the win (RULES.md §4.6)."""
    best = max(totals)
    return tuple(s for s, t in enumerate(totals) if t == best)
