"""``whist_env/record.py``: a game record round-trips through JSON and rebuilds every position exactly."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from whist_env.errors import RecordError
from whist_env.record import FORMAT, GameRecord, record_of
from whist_env.registry import get_spec
from whist_env.rules.core import State, TrickGame, _all_slots
from whist_env.testing import case_id, option_cases, play_random_episode, random_action

CASES = option_cases()


def rules(game_id: str, **options: Any) -> TrickGame:
    game: TrickGame = get_spec(game_id).make_rules(**options)
    return game


def snapshot(state: State) -> tuple[tuple[str, Any], ...]:
    """Every field of the state (lists as tuples), for exact comparison."""
    return tuple((name, _frozen(getattr(state, name))) for name in _all_slots(type(state)))


def _frozen(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


def encoder_for(game_id: str, game: TrickGame) -> Any:
    return get_spec(game_id).make_encoder(game)


def observations(encoder: Any, game: TrickGame, state: State) -> list[bytes]:
    """Every seat's encoded observation and action mask, as bytes."""
    out = []
    for seat in range(game.num_players):
        obs, mask = encoder.encode_with_mask(game.view(state, seat))
        out += [obs.tobytes(), mask.tobytes()]
    return out


def record_random_game(game: TrickGame, seed: int, **start: Any) -> GameRecord:
    rng = np.random.default_rng(seed)
    recorder = record_of(game, rng, **start)
    while not recorder.state.done:
        recorder.step(random_action(game.legal_mask(recorder.state), rng))
    return recorder.record()


@pytest.mark.parametrize(("game_id", "options"), CASES, ids=[case_id(g, o) for g, o in CASES])
def test_replay_rebuilds_every_state_and_observation_of_a_random_game(game_id: str, options: dict[str, Any]) -> None:
    game = rules(game_id, **options)
    encoder = encoder_for(game_id, game)
    for seed in range(2):
        # the reference: the same game played without a recorder (the generator shared by deals and choices)
        played = []
        for state in play_random_episode(game, np.random.default_rng(seed), check=False):
            played.append((snapshot(state), observations(encoder, game, state)))
        record = record_random_game(game, seed)
        assert len(record.actions) == len(played) - 1
        assert len(record.later_decks) == state.deal_index  # one deck per later deal
        restored = GameRecord.from_json(record.to_json())
        assert restored == record
        replayed = []
        for replay_game, replay_state in restored.states():
            if not replayed:
                replay_encoder = encoder_for(game_id, replay_game)  # the replay builds its own rules
            replayed.append((snapshot(replay_state), observations(replay_encoder, replay_game, replay_state)))
        assert len(replayed) == len(played)
        for step, (got, want) in enumerate(zip(replayed, played, strict=True)):
            assert got[0] == want[0], f"state differs after {step} actions"
            assert got[1] == want[1], f"observations differ after {step} actions"
        middle = len(record.actions) // 2
        _, state = record.replay(upto=middle)
        assert snapshot(state) == played[middle][0]
        assert snapshot(record.replay()[1]) == played[-1][0]


def test_json_is_versioned_plain_data() -> None:
    record = record_random_game(rules("oh_hell_v0", num_players=3, trump_mode="drawn_card", max_cards=2), 4)
    data = json.loads(record.to_json(indent=1))
    assert data["format"] == FORMAT
    assert list(data) == ["format", "game_id", "options", "dealer", "deck", "start", "draws", "later_decks", "actions"]
    assert data["options"] == {"num_players": 3, "trump_mode": "drawn_card", "max_cards": 2}
    assert sorted(data["deck"]) == list(range(52))
    assert len(data["draws"]) == len(data["later_decks"]) + 1  # a drawn trump card per deal
    assert GameRecord.from_dict(data) == record


def test_a_given_deck_dealer_and_start_option_are_recorded() -> None:
    game = rules("oh_hell_v0", num_players=2, trump_mode="drawn_card", episode="deal", hand_size=3)
    deck = list(range(51, -1, -1))
    record = record_random_game(game, 1, deck=deck, dealer=1, trump_card="QH")
    assert record.deck == tuple(deck) and record.dealer == 1
    assert record.start == {"trump_card": "QH"} and record.draws == ()
    game2, state = GameRecord.from_json(record.to_json()).replay(upto=0)
    assert state.trump == 2 and state.dealer == 1  # hearts, from the given card
    # a deck given by card names is recorded as ids
    names = [f"{r}{s}" for s in "CDHS" for r in "23456789TJQKA"]
    record = record_random_game(rules("humbug_v0"), 2, deck=names)
    assert record.deck == tuple(range(52))


def test_the_arena_gives_the_record_of_each_table() -> None:
    from whist_env.evaluation.arena import Arena, ArenaConfig

    arena = Arena(ArenaConfig("german_whist_v0", ("heuristic", "random"), 3, seed=7))
    records = arena.records(2)
    result = arena.play_deal(2)
    assert len(records) == len(result.tables) == 2
    dealer, deck = arena.deal(2)
    for record, table in zip(records, result.tables, strict=True):
        assert record.deck == tuple(deck) and record.dealer == dealer
        _, state = GameRecord.from_json(record.to_json()).replay()
        assert state.done and tuple(state.returns) == table.returns


# ----------------------------------------------------------------------------- bad records
def _humbug_record() -> GameRecord:
    return record_random_game(rules("humbug_v0"), 3)


def test_an_illegal_action_names_the_step() -> None:
    record = _humbug_record()
    game, state = record.replay(upto=5)
    illegal = next(a for a in range(52) if not game.legal_mask(state) >> a & 1)
    bad = replace(record, actions=(*record.actions[:5], illegal, *record.actions[6:]))
    with pytest.raises(RecordError, match=r"humbug_v0 record, step 5 \(deal 1, trick 3, seat \d\): seat \d cannot"):
        bad.replay()
    assert bad.replay(upto=5)[1].trick_number == state.trick_number  # the positions before it still rebuild


def test_a_wrong_deck_is_refused() -> None:
    record = _humbug_record()
    twice = replace(record, deck=(0, *record.deck[:-1]))
    with pytest.raises(RecordError, match="first deal cannot start.*52 cards once; repeated"):
        twice.replay()
    short = replace(record, deck=record.deck[:51])
    with pytest.raises(RecordError, match="exactly 52 cards"):
        short.replay(upto=0)


def test_a_missing_or_bad_later_deal_names_the_step() -> None:
    record = record_random_game(rules("humbug_v0", num_deals=2), 5)
    assert len(record.later_decks) == 1
    missing = replace(record, later_decks=())
    with pytest.raises(RecordError, match=r"step \d+: a new deal starts but the record has no more decks"):
        missing.replay()
    bad = replace(record, later_decks=((1,) * 52,))
    with pytest.raises(RecordError, match=r"step \d+: a later deck is not valid"):
        bad.replay()
    extra = replace(record, later_decks=(*record.later_decks, tuple(range(52))))
    with pytest.raises(RecordError, match="1 deck.* the rules never used"):
        extra.replay()
    over = replace(record, actions=(*record.actions, 0))
    with pytest.raises(RecordError, match=f"step {len(record.actions)}: the episode is over"):
        over.replay()


def test_an_option_named_self_is_an_unknown_option() -> None:
    """It raised TypeError (got multiple values for argument 'self') from the replay."""
    record = replace(_humbug_record(), options={"self": 1})
    with pytest.raises(RecordError, match="options: humbug_v0 has no option 'self'"):
        record.replay()


@pytest.mark.parametrize("start", [{"deck": 0}, {"dealer": 1}, {"trump_card": "AS"}, {"rng": 1}])
def test_a_start_option_the_game_does_not_have_is_refused_by_name(start: dict[str, Any]) -> None:
    """Found by the record fuzzer (``--hypothesis-seed=11``): ``"start": {"deck": 0}`` clashed with the record's own
    deck and raised ``TypeError`` (got multiple values for argument 'deck') from the replay."""
    record = replace(_humbug_record(), start=start)
    with pytest.raises(
        RecordError, match=rf"humbug_v0 record: start: unknown start option\(s\) \['{next(iter(start))}'\]; known: none"
    ):
        record.replay()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"format": 99}, "format 99 is not readable; this version reads 1"),
        ({"deal": 1}, r"unknown key\(s\) \['deal'\]"),
        ({"deck": "AS KS"}, "deck must be a list of integers"),
        ({"actions": [1, "AS"]}, r"actions\[1\] must be an integer"),
        ({"dealer": True}, "dealer must be an integer"),
        ({"options": [1]}, "options must be an object"),
    ],
)
def test_bad_json_is_refused_with_a_reason(change: dict[str, Any], message: str) -> None:
    data = {**_humbug_record().to_dict(), **change}
    with pytest.raises(RecordError, match=message):
        GameRecord.from_dict(data)


def test_other_mistakes_are_refused() -> None:
    record = _humbug_record()
    with pytest.raises(RecordError, match="must be JSON"):
        GameRecord.from_json("{not json")
    # found by a hostile-input audit: these raised RecursionError and a bare ValueError
    with pytest.raises(RecordError, match="must be JSON: it nests values deeper than can be read"):
        GameRecord.from_json("[" * 100_000 + "]" * 100_000)
    with pytest.raises(RecordError, match="must be JSON: Exceeds the limit"):
        GameRecord.from_json('{"dealer": ' + "9" * 5000 + "}")
    with pytest.raises(RecordError, match="a game record needs deck, dealer"):
        GameRecord.from_dict({"format": FORMAT, "game_id": "humbug_v0", "options": {}})
    with pytest.raises(RecordError, match=f"upto must be 0..{len(record)}"):
        record.replay(upto=len(record) + 1)
    with pytest.raises(RecordError, match="options: .*mode="):
        replace(record, options={"mode": "blindfolded"}).replay()
    with pytest.raises(RecordError, match="game_id: unknown game"):
        replace(record, game_id="bridge_v0").replay()
