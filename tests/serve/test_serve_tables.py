"""whist-serve tables: a seat is told only what it may know (hidden twins), tokens, refused actions."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from whist_env.agents.factory import heuristic_for
from whist_env.errors import OptionError
from whist_env.registry import game_ids
from whist_env.serve.tables import Table, TableError, encode

# One deal of each game (the deal-end record is public, so twins are compared until the deal ends).
SINGLE_DEAL: dict[str, dict[str, Any]] = {
    "classic_whist_v0": {"episode": "deal"},
    "humbug_v0": {},
    "oh_hell_v0": {"episode": "deal", "num_players": 3, "hand_size": 7},
    "german_whist_v0": {},
    "humbug_whist_v0": {"episode": "deal"},
}


def test_every_game_has_its_single_deal() -> None:
    assert set(SINGLE_DEAL) == set(game_ids()), "a new game: add its one-deal options to SINGLE_DEAL"


def _play(
    game_id: str, options: dict[str, Any], deck: list[int], seat: int, actions: list[int] | None = None
) -> tuple[list[str], list[int], list[int], Table]:
    """Play one deal at an all-human table: the test's heuristic agents choose (each from its own view), or
    ``actions`` are replayed while they stay legal. Returns seat ``seat``'s message stream (the server's
    bytes after each action), its unseen-card mask at each point, the actions taken and the table."""
    n = Table("probe", game_id, options, None).num_players
    table = Table("twin", game_id, options, ["human"] * n, seed=11, deck=deck, dealer=0)
    chooser = [heuristic_for(game_id, **options) for _ in range(n)]
    rng = np.random.default_rng(5)
    stream = [encode(table.message(seat))]
    unseen = [table.game.view(table.env.game_state, seat).unseen]
    taken: list[int] = []
    while not table.over and not table.deals:
        state = table.env.game_state
        actor = state.to_act
        view = table.game.view(state, actor)
        if actions is None:
            action = chooser[actor].act(view, rng)
        elif len(taken) == len(actions) or not (view.legal >> actions[len(taken)]) & 1:
            break
        else:
            action = actions[len(taken)]
        table.act(actor, action)
        taken.append(action)
        stream.append(encode(table.message(seat)))
        unseen.append(table.game.view(table.env.game_state, seat).unseen)
    return stream, unseen, taken, table


# Option sets that change what a seat sees, beyond SINGLE_DEAL
VARIANTS: list[tuple[str, dict[str, Any]]] = [
    ("classic_whist_v0", {"episode": "deal", "include_history": False}),
    ("oh_hell_v0", {"episode": "deal", "num_players": 5, "hand_size": 5, "trump_mode": "turn_up"}),
    ("oh_hell_v0", {"episode": "deal", "num_players": 4, "hand_size": 6, "trump_mode": "drawn_card"}),
    ("german_whist_v0", {"include_history": False, "phase1_follow_suit": False}),
    ("humbug_whist_v0", {"episode": "deal", "exchange_order": "simultaneous"}),
    ("humbug_whist_v0", {"episode": "deal", "include_history": False}),
]
TWIN_CASES = [(g, o, s, d) for g, o in [*SINGLE_DEAL.items(), *VARIANTS] for s in (0, 1) for d in (0, 1)]


@pytest.mark.parametrize(("game_id", "options", "seat", "deck_seed"), TWIN_CASES)
def test_hidden_twins_get_identical_streams(game_id: str, options: dict[str, Any], seat: int, deck_seed: int) -> None:
    """Two deals that differ only in two cards hidden from ``seat`` (swapped between other hands, a blind, the
    stock or the undealt cards) give ``seat`` byte-identical messages, action by action, until one of the two
    cards becomes visible to it; the other seats play the same actions in both twins."""
    deck = np.random.default_rng(100 + deck_seed).permutation(52).tolist()
    stream_a, unseen_a, actions, table_a = _play(game_id, options, deck, seat)
    hidden = unseen_a[0]
    start_env = Table("start", game_id, options, ["human"] * table_a.num_players, deck=deck, dealer=0).env
    start = start_env.game_state
    # where each card lies: a hand, or one of the game's hidden sets (blinds, stock, undealt); swapping two cards
    # that lie in one place makes the same deal
    places = list(start.hands) + list(start_env.hidden_masks(start))

    def reveal(card: int) -> int:
        return next((k for k, mask in enumerate(unseen_a) if not (mask >> card) & 1), len(unseen_a))

    def same_place(c1: int, c2: int) -> bool:
        return [(m >> c1) & 1 for m in places] == [(m >> c2) & 1 for m in places]

    candidates = [c for c in range(52) if (hidden >> c) & 1]
    pairs = [
        (min(reveal(a), reveal(b)), a, b) for a in candidates for b in candidates if a < b and not same_place(a, b)
    ]
    if game_id == "humbug_v0":
        # Humbug deals every card into the two hands and the study step shows both (RULES.md §3.3): no two deals
        # differ only in hidden cards. What is hidden later (the opponent's unplayed cards) never appears.
        assert pairs == []
        for text, mask in zip(stream_a, unseen_a, strict=True):
            msg = json.loads(text)
            shown = (
                msg["hand"] + [c for k in msg["known"] for c in k] + [c for _, c in msg["trick"] + msg["last_trick"]]
            )
            assert not any((mask >> c) & 1 for c in shown)
        assert any(mask & start.hands[1 - seat] for mask in unseen_a), "the opponent's hand was never hidden"
        return
    horizon, c1, c2 = max(pairs)
    twin = list(deck)
    i, j = twin.index(c1), twin.index(c2)
    twin[i], twin[j] = twin[j], twin[i]
    stream_b, _, _, _ = _play(game_id, options, twin, seat, actions[: horizon - 1])
    compared = min(horizon, len(stream_b))
    assert compared >= 4, f"the twins diverge too early to test anything ({compared} messages)"
    assert stream_a[:compared] == stream_b[:compared]
    # ... and the twins are real: the full states differ from the start.
    twin_start = Table("start", game_id, options, ["human"] * table_a.num_players, deck=twin, dealer=0)
    state_a = Table("start", game_id, options, ["human"] * table_a.num_players, deck=deck, dealer=0).env.state()
    assert not np.array_equal(state_a, twin_start.env.state())


@pytest.mark.parametrize("game_id", game_ids())
def test_agents_hands_and_reasoning_stay_hidden_until_the_deal_ends(game_id: str) -> None:
    """On a table that is not an open study table a human learns an agent's hand and choices only from the
    finished deal's record; on an open study table they are shown (human hands never are)."""
    options = SINGLE_DEAL[game_id]
    n = Table("probe", game_id, options, None).num_players
    kinds = ["human", "heuristic"] + ["random"] * (n - 2)
    closed = Table("closed", game_id, options, kinds, seed=3)
    opened = Table("open", game_id, options, kinds, study=True, seed=3)
    for table in (closed, opened):
        while not table.over and not table.deals:
            table.play_agents()
            if table.over or table.deals:
                break
            msg = table.message(0)
            if table is closed:
                assert "agents" not in msg and msg["deals"] == []
            else:
                assert [a["seat"] for a in msg["agents"]] == list(range(1, n))
                assert msg["agents"][0]["hand"] == table.message(1)["hand"]
            table.act(0, msg["legal"][0]["action"])
    record = closed.message(0)["deals"][0]
    assert sorted(c for hand in record["hands"] for c in hand) == sorted(
        c for t in record["tricks"] for _, c in t["cards"]
    )
    assert {choice["seat"] for choice in record["choices"]} == set(range(1, n))


def test_tokens_and_refused_actions_change_nothing() -> None:
    table = Table("t", "classic_whist_v0", {"episode": "deal"}, ["human"] * 4, seed=2)
    tokens = [seat.token for seat in table.seats]
    assert len(set(tokens)) == 4 and all(len(t) >= 32 for t in tokens)
    assert [table.seat_of(t) for t in tokens] == [0, 1, 2, 3]
    for bad in ("", "x" * 32, None, 17, tokens[0][:-1], "\x80", "é" * 32, "\ud800"):  # non-ASCII: was a TypeError
        with pytest.raises(TableError, match="holds no seat"):
            table.seat_of(bad)
    before = [encode(table.message(s)) for s in range(4)]
    actor = table.env.game_state.to_act
    other = (actor + 1) % 4
    legal = table.message(actor)["legal"][0]["action"]
    illegal = next(c for c in range(52) if c not in {a["action"] for a in table.message(actor)["legal"]})
    for seat, action, match in [
        (other, table.message(other)["hand"][0], "turn"),
        (actor, illegal, "not legal now"),
        (actor, 52 + 3, "not legal now"),
        (actor, -1, "not legal now"),
        (actor, "AS", "integer"),
        (actor, True, "integer"),
        (actor, 1.0, "integer"),
    ]:
        with pytest.raises(TableError, match=match):
            table.act(seat, action)
    assert [encode(table.message(s)) for s in range(4)] == before
    table.act(actor, legal)
    assert json.loads(encode(table.message(actor)))["version"] == 1


def test_bad_tables_are_refused_with_what_is_allowed() -> None:
    with pytest.raises(OptionError, match="available"):
        Table("t", "bridge_v0")
    with pytest.raises(OptionError, match="has 2 seats"):
        Table("t", "german_whist_v0", {}, ["human"] * 3)
    with pytest.raises(OptionError, match="unknown agent"):
        Table("t", "german_whist_v0", {}, ["human", "genius"])
    with pytest.raises(OptionError, match="no option"):
        Table("t", "german_whist_v0", {"colour": "red"}, ["human", "random"])
    with pytest.raises(OptionError, match="depth"):
        Table("t", "german_whist_v0", {}, ["human", "pimc:depth=3"])


def test_a_simultaneous_exchange_stays_hidden_from_the_dealer_until_both_decided() -> None:
    """Humbug whist, exchange_order='simultaneous' (RULES.md §1.4): the dealer's messages are the same whether
    the non-dealer kept or exchanged, until the dealer has decided too."""
    options = {"episode": "deal", "exchange_order": "simultaneous"}
    streams = []
    for decision in ("KEEP", "EXCHANGE"):
        table = Table("t", "humbug_whist_v0", options, ["human", "human"], seed=4, dealer=0)
        nondealer = table.env.game_state.to_act
        assert nondealer == 1
        action = next(a["action"] for a in table.message(1)["legal"] if a["label"] == decision)
        table.act(1, action)
        streams.append(encode(table.message(0)))
        assert table.message(0)["legal"] and table.message(0)["to_act"] == 0
    assert streams[0] == streams[1]


def test_the_table_gives_its_game_record_only_once_the_game_is_over() -> None:
    from whist_env.record import GameRecord

    table = Table("t", "german_whist_v0", {}, ["human", "random"], seed=5)
    with pytest.raises(TableError, match="still running.*every hand"):
        table.game_record()
    while not table.over:
        if table.agent_to_act() is not None:
            table.play_agents()
            continue
        seat = table.env.game_state.to_act
        table.act(seat, table.game.view(table.env.game_state, seat).legal_actions()[0])
    record = GameRecord.from_json(table.game_record().to_json())
    assert record.replay()[1].scores == table.env.game_state.scores
    failed = Table("f", "german_whist_v0", {}, ["human", "human"], seed=5)
    failed.failure = "RuntimeError in seat 1's agent"
    with pytest.raises(TableError, match="stopped unfinished"):
        failed.game_record()


def test_a_finished_table_drops_its_agents_and_still_answers() -> None:
    """A finished table stays open for its record and views until it is idle, so it lets its agents go (PIMC's
    transposition table alone is 16 MB); its seats stay agent seats, and it answers as before."""
    table = Table("t", "humbug_v0", {}, ["human", "pimc:samples=2"], study=True, seed=4)
    while not table.over:
        if table.agent_to_act() is not None:
            table.play_agents()
            continue
        table.act(0, table.message(0)["legal"][0]["action"])
        assert table.seats[1].agent is not None or table.over
    assert [seat.agent for seat in table.seats] == [None, None]
    assert [seat.is_agent for seat in table.seats] == [False, True]
    assert table.message(0)["agents"][0]["seat"] == 1  # the study panel still shows the agent seat
    with pytest.raises(TableError, match="game is over"):
        table.act(1, 0)
    assert table.agent_to_act() is None and table.game_record().actions


@pytest.mark.parametrize(
    ("game_id", "options", "kind"),
    [("german_whist_v0", {}, k) for k in ("pimc:samples=3", "heuristic", "random")]
    + [("oh_hell_v0", {"max_cards": 2}, "pimc(samples=3, bid_samples=3)")],
)
def test_the_study_panel_changes_no_agents_choice(game_id: str, options: dict[str, Any], kind: str) -> None:
    """What an agent explains (a search: the values of its own search, one per legal action; in Oh Hell its bids'
    too) costs it no draw: it plays as it would alone."""
    from whist_env.agents import make_agent
    from whist_env.serve.tables import explain_and_act

    n = Table("probe", game_id, options, None).num_players
    table = Table("t", game_id, options, ["human"] * n, seed=2)
    agent = make_agent(kind, game_id, **options)
    shown, phases = 0, set()
    for step in range(60):
        if table.over:
            break
        seat = table.env.game_state.to_act
        view = table.game.view(table.env.game_state, seat)
        action, details = explain_and_act(agent, view, np.random.default_rng(step))
        assert action == details["action"] == agent.act(view, np.random.default_rng(step))
        if "values" in details:
            assert [a for a, _ in details["values"]] == view.legal_actions()
            shown += 1
            phases.add(view.phase)
        table.act(seat, action)
    assert shown > 0 if kind.startswith("pimc") else shown == 0
    assert "bidding" in phases or game_id != "oh_hell_v0"


def test_the_study_record_names_each_row_as_the_table_does() -> None:
    """The study panel's rows that are not cards (Oh Hell's bids) carry the table's name for them, not their action
    number."""
    options = {"max_cards": 2}
    study = Table("s", "oh_hell_v0", options, ["pimc(samples=3, bid_samples=3)"] * 4, study=True, seed=3)
    study.play_agents()
    named = [c for deal in study.deals for c in deal.choices if "values" in c]
    assert named and all(len(c["labels"]) == len(c["values"]) for c in named)
    bid_rows = [(a, text) for c in named for (a, _), text in zip(c["values"], c["labels"], strict=True) if a >= 52]
    assert bid_rows and all(text == study._label(a) for a, text in bid_rows)


@pytest.mark.parametrize("game_id", game_ids())
def test_message_text_is_the_encoded_message(game_id: str) -> None:
    """What the server sends (``message_text``: the finished deals encoded once, when each ends) is byte for byte
    ``encode(message(seat))``, for every seat at every step of a game of several deals, on an open study table."""
    several = {"oh_hell_v0": {"max_cards": 2}, "humbug_v0": {"num_deals": 2}, "german_whist_v0": {"num_deals": 2}}
    options = several.get(game_id, {})
    n = Table("probe", game_id, options, None).num_players
    table = Table("t", game_id, options, ["human"] + ["heuristic"] * (n - 1), study=True, seed=6)
    rng = np.random.default_rng(6)
    checked = 0
    for _ in range(2000):
        for seat in range(n):
            assert table.message_text(seat) == encode(table.message(seat))
            checked += 1
        if table.over:
            break
        if table.agent_to_act() is not None:
            version, seat, view = table.agent_view()  # type: ignore[misc]
            table.apply_agent(version, seat, *table.think(seat, view))
        else:
            table.act(0, int(rng.choice([legal["action"] for legal in table.message(0)["legal"]])))
    assert table.over and len(table.deals) >= 2 and checked > 50
    table.closed = True
    table.version += 1
    assert all(table.message_text(seat) == encode(table.message(seat)) for seat in range(n))
