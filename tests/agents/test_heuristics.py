"""The rules of thumb the heuristics' docstrings state, on constructed positions."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from whist_env.agents import heuristic_for
from whist_env.agents.cardplay import Table
from whist_env.agents.endgame import solve
from whist_env.cards import FULL_DECK, SUIT_MASKS, card_str, mask_of, parse_card, parse_cards
from whist_env.games.german_whist.rules import GermanWhistExtras
from whist_env.games.humbug.rules import HumbugExtras
from whist_env.games.humbug_whist.heuristic import EXCHANGE, KEEP
from whist_env.games.oh_hell.heuristic import BID_BASE, choose_bid
from whist_env.games.oh_hell.rules import OhHellExtras
from whist_env.registry import get_spec
from whist_env.rules.tricks import beats, legal_cards, trick_winner
from whist_env.view import NO_EXTRAS, PlayerView, ViewExtras

RNG = np.random.default_rng(0)


def view_of(
    game: str,
    seat: int,
    hand: str,
    trick: list[tuple[int, str]] | None = None,
    trump: int | None = None,
    n: int = 4,
    known: dict[int, str] | None = None,
    gone: str = "",
    phase: str = "play",
    legal: int | None = None,
    tricks_won: tuple[int, ...] | None = None,
    turn_up: int = -1,
    extra: ViewExtras = NO_EXTRAS,
) -> PlayerView:
    """A view built by hand: ``gone`` = cards already played (visible with recall)."""
    h = mask_of(parse_cards(hand))
    plays = tuple((s, parse_card(c)) for s, c in (trick or []))
    known_masks = [0] * n
    known_masks[seat] = h
    for s, cs in (known or {}).items():
        known_masks[s] = mask_of(parse_cards(cs))
    seen = h | mask_of(c for _, c in plays) | mask_of(parse_cards(gone)) | (1 << turn_up if turn_up >= 0 else 0)
    for m in known_masks:
        seen |= m
    led = plays[0][1] // 13 if plays else -1
    if legal is None:
        legal = legal_cards(h, led) if phase == "play" else 0
    return PlayerView(
        game=game,
        seat=seat,
        num_players=n,
        phase=phase,
        to_act=seat,
        dealer=0,
        leader=plays[0][0] if plays else seat,
        hand=h,
        legal=legal,
        trump=trump,
        turn_up=turn_up,
        trick=plays,
        last_trick=(),
        last_winner=-1,
        played=(mask_of(parse_cards(gone)),) + (0,) * (n - 1),
        known=tuple(known_masks),
        voids=(0,) * n,
        unseen=FULL_DECK & ~seen,
        tricks_won=tricks_won or (0,) * n,
        scores=(0.0,) * n,
        deal_index=0,
        extra=extra,
    )


def act(game: str, view: PlayerView, **options: Any) -> str:
    action = heuristic_for(game, **options).act(view, RNG)
    assert (view.legal >> action) & 1
    return card_str(action) if action < 52 else str(action)


# ---------------------------------------------------------------------- classic whist
CW = "classic_whist_v0"
HEARTS, SPADES = 2, 3


def test_second_hand_low() -> None:
    v = view_of(CW, 1, "AD 9D 3D 5C 7C 2S 4S 6S 8H TH QH KC AC", [(0, "6D")], trump=HEARTS)
    assert act(CW, v) == "3D"


def test_cover_an_honour_with_an_honour() -> None:
    v = view_of(CW, 1, "KD 9D 3D 5C 7C 2S 4S 6S 8H TH QH KC AC", [(0, "QD")], trump=HEARTS)
    assert act(CW, v) == "KD"


def test_third_hand_high() -> None:
    # Partner (seat 0) led 4D, seat 1 played 9D: play the highest diamond that beats it (K from K Q).
    v = view_of(CW, 2, "KD QD 3D 5C 7C 2S 4S 6S 8H TH QH KC AC", [(0, "4D"), (1, "9D")], trump=HEARTS)
    assert act(CW, v) == "QD"  # the lowest of the equal K Q


def test_do_not_overtake_partners_winning_card() -> None:
    # Partner (seat 1) is winning with AD as fourth hand comes to play: play low.
    v = view_of(CW, 3, "KD 3D 5C 7C 2S 4S 6S 8H TH QH KC AC 9C", [(0, "4D"), (1, "AD"), (2, "9D")], trump=HEARTS)
    assert act(CW, v) == "3D"


def test_fourth_hand_wins_cheaply() -> None:
    v = view_of(CW, 3, "KD QD 3D 5C 7C 2S 4S 6S 8H TH QH KC AC", [(0, "4D"), (1, "9D"), (2, "JD")], trump=HEARTS)
    assert act(CW, v) == "QD"


def test_lead_sure_winner_then_from_long_suit() -> None:
    # No trumps left outside (all played): the master AC is a sure trick.
    gone = "2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH"
    v = view_of(CW, 0, "AC 9D 7D 5D 3D 4S", trump=HEARTS, gone=gone, n=4)
    assert act(CW, v) == "AC"
    # Without a sure winner: the longest suit, low (no sequence at its head).
    v = view_of(CW, 0, "JC 9D 7D 5D 3D 4S KH", trump=HEARTS, n=4)
    assert act(CW, v) == "3D"


def test_count_trumps_and_draw_them() -> None:
    v = view_of(CW, 0, "AS KS QS 7S 5S 9D 7D 5D 3D 4C 6C 8H 2H", trump=SPADES)
    assert act(CW, v) == "AS"


# ---------------------------------------------------------------------- two-player endings
def test_endgame_solver_matches_brute_force() -> None:
    rng = np.random.default_rng(3)

    def brute(lead: int, follow: int, trump: int | None) -> int:
        if not lead:
            return 0
        best = -1
        for c in [c for c in range(52) if lead >> c & 1]:
            worst = 99
            for d in [d for d in range(52) if legal_cards(follow, c // 13) >> d & 1]:
                if trick_winner([(0, c), (1, d)], trump) == 1:
                    v = lead.bit_count() - 1 - brute(follow & ~(1 << d), lead & ~(1 << c), trump)
                else:
                    v = 1 + brute(lead & ~(1 << c), follow & ~(1 << d), trump)
                worst = min(worst, v)
            best = max(best, worst)
        return best

    for _ in range(40):
        deck = rng.permutation(52).tolist()
        k = int(rng.integers(1, 5))
        a, b = mask_of(deck[:k]), mask_of(deck[k : 2 * k])
        trump = None if rng.random() < 0.3 else int(rng.integers(4))
        card, value = solve(a, b, trump)
        assert value == brute(a, b, trump)
        assert a >> card & 1


def test_humbug_open_table_takes_a_sure_ending() -> None:
    # Spades trump. The opponent is out of hearts: cashing AH first lets it ruff (3 tricks);
    # drawing its trumps first takes all 4.
    v = view_of(
        "humbug_v0",
        0,
        "AS KS AH KH",
        n=2,
        trump=SPADES,
        known={1: "QS JS 2D 3D"},
        extra=HumbugExtras(mode="open_table", deals_left=1),
    )
    v = _with_unseen(v, 0)
    assert act("humbug_v0", v) in ("AS", "KS")


def _with_unseen(v: PlayerView, unseen: int) -> PlayerView:
    import dataclasses

    return dataclasses.replace(v, unseen=unseen)


def test_humbug_hidden_hand_remembers_the_layout() -> None:
    agent = heuristic_for("humbug_v0")
    game = get_spec("humbug_v0").make_rules()
    rng = np.random.default_rng(4)
    state = game.new_episode(rng)
    seat = state.to_act
    first = game.view(state, seat)
    assert first.extra.initial_layout is not None
    agent.act(first, rng)
    mem = agent._memory[seat][-1]  # the deal just studied (one memory per game, most recent last)
    assert mem.theirs == state.dealt[1 - seat]
    # A fresh agent without the memory still plays legally.
    while state.to_act != seat or not state.played[seat]:
        game.step(state, game.legal_actions(state)[0], rng)
    later = game.view(state, seat)
    assert later.extra.initial_layout is None
    assert (later.legal >> heuristic_for("humbug_v0").act(later, rng)) & 1
    assert (later.legal >> agent.act(later, rng)) & 1


# ---------------------------------------------------------------------- German Whist
GW = "german_whist_v0"


# German Whist's first trick: what the heuristic reads is the stage
GW_STAGE_1 = GermanWhistExtras(
    stage=1,
    stock_size=26,
    phase1_tricks=(0, 0),
    prizes=(0, 0),
    my_draws=0,
    opponent_draws=0,
    opponent_hand_size=13,
    deals_left=1,
)


def gw_view(hand: str, prize: str, trick: list[tuple[int, str]] | None = None) -> PlayerView:
    v = view_of(GW, 0, hand, trick, trump=HEARTS, n=2, turn_up=parse_card(prize), extra=GW_STAGE_1)
    return v


def test_german_whist_wins_a_high_trump_prize_cheaply() -> None:
    v = gw_view("QC 3C 9D 4S", "AH", [(1, "2C")])
    assert act(GW, v) == "3C"  # the cheapest card that wins buys the ace of trumps


def test_german_whist_loses_cheaply_for_a_poor_prize() -> None:
    v = gw_view("QC 3C 9D 4S", "2D", [(1, "2C")])
    assert act(GW, v) == "3C"  # forced to win it: with the cheapest card
    # A card that loses is preferred when there is one.
    v = gw_view("QC 3C 9D 4S", "2D", [(1, "5C")])
    assert act(GW, v) == "3C"


# ---------------------------------------------------------------------- Oh Hell
OH = "oh_hell_v0"


def test_hook_rule_bid_is_legal_and_nearest() -> None:
    assert choose_bid(2.9, [0, 1, 2, 4, 5]) == 2
    assert choose_bid(3.2, [0, 1, 2, 4, 5]) == 4 or choose_bid(3.2, [0, 1, 2, 4, 5]) == 2
    # The last bidder's view: bids 4, 1, 5 in a 13-card deal forbid 3.
    legal = sum(1 << (BID_BASE + b) for b in range(14) if b != 3)
    v = view_of(
        OH,
        3,
        "AS KS QS AH KH QH AD KD QD AC KC QC JC",
        n=4,
        phase="bidding",
        legal=legal,
        extra=OhHellExtras(bids=(4, 1, 5, -1), hand_size=13, drawn_card=-1),
    )
    bid = heuristic_for(OH).act(v, RNG) - BID_BASE
    assert bid != 3 and bid >= 8


def test_oh_hell_ducks_once_the_bid_is_made() -> None:
    extra = OhHellExtras(bids=(1, 0, 0, 0), hand_size=4, drawn_card=-1)
    v = view_of(OH, 0, "KD 3D 9C", [(3, "QD")], n=4, tricks_won=(1, 0, 0, 0), extra=extra)
    assert act(OH, v) == "3D"  # made: play under the queen
    extra = OhHellExtras(bids=(2, 0, 0, 0), hand_size=4, drawn_card=-1)
    v = view_of(OH, 0, "KD 3D 9C", [(1, "QD"), (2, "2D"), (3, "4D")], n=4, tricks_won=(1, 0, 0, 0), extra=extra)
    assert act(OH, v) == "KD"  # still one short, last to play: win it


# ---------------------------------------------------------------------- Swedish Humbug whist
HW = "humbug_whist_v0"


@pytest.mark.parametrize(("hand", "expected"), [("2C 3C 4C 5C 6C 7C 2D 3D 4D 5D 6D 7D 8D", EXCHANGE),
                                                ("AS KS QS JS TS AH AD AC KH KD KC 9S 8S", KEEP)])  # fmt: skip
def test_exchange_a_weak_hand_keep_a_strong_one(hand: str, expected: int) -> None:
    legal = (1 << KEEP) | (1 << EXCHANGE)
    v = view_of(HW, 1, hand, n=2, phase="exchange", legal=legal, trump=SPADES)
    assert heuristic_for(HW).act(v, RNG) == expected


# ---------------------------------------------------------------------- the card-play table
def test_table_reads_who_wins_and_who_may_beat() -> None:
    v = view_of(CW, 2, "KD 3D 5C", [(0, "4D"), (1, "9D")], trump=HEARTS, gone="AD")
    t = Table(v, partner=0)
    assert t.winner == 1 and card_str(t.best) == "9D"
    assert t.after == [3]
    assert t.is_master(parse_card("KD"))  # AD is gone
    assert t.holds(parse_card("KD")) is not None
    assert beats(parse_card("2H"), parse_card("AD"), HEARTS)
    assert not beats(parse_card("2C"), parse_card("3D"), HEARTS)
    assert all(t.possible[s] & ~FULL_DECK == 0 for s in range(4))
    assert not t.possible[3] & SUIT_MASKS[1] & (1 << parse_card("AD"))


def test_table_winning_is_wins_now_card_by_card() -> None:
    # Table.winning (one mask) against its plain twin, wins_now per card: every best card, trump and card set
    rng = np.random.default_rng(0)
    t = object.__new__(Table)
    for best in range(-1, 52):
        for trump in (None, 0, 1, 2, 3):
            t.best, t.trump = best, trump
            for cards in (FULL_DECK, *(int(rng.integers(0, 1 << 52)) for _ in range(20))):
                plain = sum(1 << c for c in range(52) if cards >> c & 1 and t.wins_now(c))
                assert t.winning(cards) == plain, (best, trump, cards)


def test_every_heuristic_is_deterministic() -> None:
    from whist_env.registry import game_ids

    for game_id in game_ids():  # every decision of whole deals: two agents, each with generators of its own
        game = get_spec(game_id).make_rules()
        first, second = heuristic_for(game_id), heuristic_for(game_id)
        rng_a, rng_b, deal_rng = np.random.default_rng(1), np.random.default_rng(2), np.random.default_rng(3)
        decisions = 0
        for _ in range(3):
            state = game.new_episode(deal_rng)
            while not state.done:
                view = game.view(state, state.to_act)
                pick = first.act(view, rng_a)
                assert second.act(view, rng_b) == pick, (game_id, decisions)
                game.step(state, pick, deal_rng)
                decisions += 1
        assert decisions >= 3 * 26, game_id
