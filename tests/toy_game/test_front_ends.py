"""Every front end names the trick winner the game's rules give: with the toy, the lowest card of the led suit
(the standard rule, highest card wins, would name another seat)."""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

import numpy as np

from whist_env.cards import parse_card, parse_cards
from whist_env.cli.play import Session
from whist_env.rules.tricks import trick_winner
from whist_env.serve.tables import Table
from whist_env.teaching.hidden_information import play_episode

from .rules import lowest_of_led_suit

# deck[i] dealt one at a time from the dealer's left: with dealer 3, seat 0 holds 2C 6C TC AC 5D ..., seat 1
# 3C 7C JC 2D ..., seat 2 4C 8C QC 3D ..., seat 3 5C 9C KC 4D ...
DECK = parse_cards(" ".join(f"{r}{s}" for s in "CDHS" for r in "23456789TJQKA"))
FIRST_TRICK = ("AC", "3C", "4C", "5C")  # seat 0 leads its ace: seat 1's three is the lowest club


def _tricks(history: Sequence[tuple[int, int]], n: int) -> list[list[tuple[int, int]]]:
    return [list(history[i : i + n]) for i in range(0, len(history), n)]


def _check_winners(tricks: Sequence[Sequence[tuple[int, int]]], winners: Sequence[int]) -> None:
    """Each winner is the toy's, and the standard rule would have named another seat at least once."""
    assert len(tricks) == len(winners) == 13
    assert list(winners) == [lowest_of_led_suit(t) for t in tricks]
    assert any(trick_winner(list(t), None) != w for t, w in zip(tricks, winners, strict=True))


def test_the_teaching_transcript_names_the_games_winner(low_whist_spec: Any) -> None:
    episode = play_episode(low_whist_spec, "random", seed=3)
    game, last = episode.game, episode.states[-1]
    tricks = _tricks(last.history, game.num_players)
    lines = [line for line in episode.lines if line.startswith("deal 1 trick ")]
    winners = [next(s for s in range(game.num_players) if line.endswith(f"→ {game.seat_name(s)}")) for line in lines]
    _check_winners(tricks, winners)


def test_whist_play_names_the_games_winner(low_whist_spec: Any) -> None:
    out = io.StringIO()
    session = Session(low_whist_spec, {}, 0, ["random"], seed=0, stdin=io.StringIO(), stdout=out)
    state = session.game.new_episode(np.random.default_rng(0), deck=DECK, dealer=3)
    for card in FIRST_TRICK:
        session.step(state, parse_card(card))
    assert state.last_winner == 1
    assert f"→ {session.name(1)} wins trick 1" in out.getvalue()


def test_the_server_tables_record_of_a_deal_names_the_games_winner(low_whist_spec: Any) -> None:
    table = Table("t1", low_whist_spec.game_id, seats=["random"] * 4, seed=5)
    table.play_agents()
    assert table.over
    deal = table.message(0)["deals"][0]  # public once the deal is over
    tricks = [[(s, c) for s, c in t["cards"]] for t in deal["tricks"]]
    _check_winners(tricks, [t["winner"] for t in deal["tricks"]])


def test_the_server_table_names_the_games_winner_of_a_set_trick(low_whist_spec: Any) -> None:
    table = Table("t2", low_whist_spec.game_id, seats=["human"] * 4, seed=0, deck=DECK, dealer=3)
    for seat, card in enumerate(FIRST_TRICK):
        table.act(seat, parse_card(card))
    assert table.env.game_state.last_winner == 1
    assert table._record.tricks[0]["winner"] == 1  # the deal's record, made public when the deal ends
