"""The bot protocol's messages (whist_env.evaluation.protocol): a view goes to JSON and back exactly in every game and
option set, orjson writes the json module's bytes, every message fits the shipped JSON Schema (which is what the code
builds), answers are read as documented, and a seat is never sent what it may not see (hidden twins)."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import numpy as np
import pytest

from whist_env.agents.factory import heuristic_for
from whist_env.evaluation import protocol
from whist_env.evaluation.protocol import AnswerError, ViewCodec, decode_line, encode_line
from whist_env.evaluation.referee import Limits
from whist_env.registry import BUILT_IN, game_ids, get_spec

VALIDATOR = jsonschema.Draft202012Validator(protocol.schema())
LONGEST_LINE_SENT = 16 * 1024  # docs/guide/protocol.md: the longest line a referee sends (about 7 KB today)
GRID = [(game_id, options) for game_id in game_ids() for options in get_spec(game_id).option_grid]


def random_views(game_id: str, options: dict[str, Any], episodes: int, seed: int) -> Any:
    """Every seat's view at every step of ``episodes`` random games (the acting seat's first)."""
    game = get_spec(game_id).make_rules(**options)
    rng = np.random.default_rng(seed)
    for _ in range(episodes):
        state = game.new_episode(rng)
        while True:
            seats = [state.to_act] + [s for s in range(game.num_players) if s != state.to_act] if not state.done else []
            for seat in seats or range(game.num_players):
                yield game, game.view(state, seat)
            if state.done:
                break
            game.step(state, int(rng.choice(game.view(state, state.to_act).legal_actions())), rng)


def act_message(codec: ViewCodec, view: Any, decision: int) -> dict[str, Any]:
    return {"type": "act", "deal": 0, "decision": decision, "view": codec.to_json(view), "legal": codec.legal(view)}


@pytest.mark.parametrize(("game_id", "options"), GRID)
def test_a_view_goes_to_json_and_back_exactly(game_id: str, options: dict[str, Any]) -> None:
    """Every view of random games, every seat, sent as a line and read back, is the view (extras' class and card sets
    included); orjson's line is the json module's, byte for byte; the message fits the schema; every line, with the
    observation too, is at most the 16 KiB that docs/guide/protocol.md promises a bot (a C bot may read into a
    buffer of that size)."""
    codec = encoder = None
    for n, (game, view) in enumerate(random_views(game_id, options, episodes=3, seed=11)):
        if codec is None:
            codec, encoder = ViewCodec(game), get_spec(game_id).make_encoder(game)
            greeting = protocol.hello(game, options, 0, 1, Limits().for_bot(), protocol.layout_of(encoder), 10)
            assert len(encode_line(greeting)) <= LONGEST_LINE_SENT
        message = act_message(codec, view, n) if view.legal else {"type": "deal_end", "deal": 0,
                                                                   "returns": [0.0] * view.num_players,
                                                                   "view": codec.to_json(view)}  # fmt: skip
        line = encode_line(message)
        assert line == encode_line(message, fast=False)
        assert line.endswith(b"\n") and line.count(b"\n") == 1
        read = decode_line(line)
        assert read == decode_line(line, fast=False)
        back = codec.from_json(read["view"])
        assert back == view
        assert type(back.extra) is type(view.extra) and back.extra.items() == view.extra.items()
        if n % 7 == 0:
            VALIDATOR.validate(read)
        if view.legal:
            observation, mask = encoder.encode_with_mask(view)  # type: ignore[union-attr]
            message["observation"], message["mask"] = observation.tolist(), mask.tolist()
        assert len(encode_line(message)) <= LONGEST_LINE_SENT
    assert codec is not None


def test_card_sets_in_the_extras_are_card_lists() -> None:
    """A :data:`CardSet` field of the extras is sent as the sorted card ids of its mask; a plain int as the int."""
    game = get_spec("german_whist_v0").make_rules()
    codec = ViewCodec(game)
    rng = np.random.default_rng(3)
    state = game.new_episode(rng)
    for _ in range(6):
        game.step(state, int(game.view(state, state.to_act).legal_actions()[0]), rng)
    view = game.view(state, 0)
    extra = codec.to_json(view)["extra"]
    assert extra["prizes"] == [sorted(c for c in range(52) if (m >> c) & 1) for m in view.extra.prizes]
    assert extra["my_draws"] == sorted(c for c in range(52) if (view.extra.my_draws >> c) & 1)
    assert extra["opponent_draws"] == view.extra.opponent_draws and isinstance(extra["opponent_draws"], int)


def test_the_shipped_schema_is_what_the_code_builds() -> None:
    """protocol.schema.json is build_schema() of the built-in games: run ``python -m whist_env.evaluation.protocol``
    after changing a message or a game's extras."""
    built = protocol.build_schema([get_spec(g).rules_cls for g in BUILT_IN])
    assert protocol.schema() == json.loads(json.dumps(built))
    jsonschema.Draft202012Validator.check_schema(protocol.schema())


def test_every_kind_of_message_fits_the_schema_and_a_wrong_one_does_not() -> None:
    spec = get_spec("oh_hell_v0")
    game = spec.make_rules(**spec.single_deal)
    encoder = spec.make_encoder(game)
    greeting = protocol.hello(game, spec.single_deal, 1, 7, {"decision_s": 1.0}, protocol.layout_of(encoder), 5)
    codec = ViewCodec(game)
    state = game.new_episode(np.random.default_rng(0))
    view = game.view(state, state.to_act)
    act = act_message(codec, view, 0)
    obs, mask = encoder.encode_with_mask(view)
    with_obs = {**act, "observation": obs.tolist(), "mask": mask.tolist()}
    ending = {"type": "match_end", "deals": 5, "returns": [1.0, -2.0, 0.0, 3.0], "faults": 0, "forfeit": False}
    for message in (greeting, act, with_obs, ending, {"type": "goodbye", "reason": "the match is over"}):
        VALIDATOR.validate(decode_line(encode_line(message)))
    bad = json.loads(json.dumps(act))
    bad["view"]["hand"] = [52]
    assert not VALIDATOR.is_valid(bad)
    bad = json.loads(json.dumps(act))
    del bad["view"]["extra"]["bids"]
    assert not VALIDATOR.is_valid(bad), "a game's extras are checked by its own schema"
    answers = jsonschema.Draft202012Validator({**protocol.schema(), "$ref": "#/$defs/answer"})
    for answer in (47, "TS", {"action": 47}, {"action": "bid 2"}):
        answers.validate(answer)
    hello_answers = jsonschema.Draft202012Validator({**protocol.schema(), "$ref": "#/$defs/hello_answer"})
    hello_answers.validate({"type": "hello", "protocol": protocol.PROTOCOL, "name": "x", "observation": True})
    assert not hello_answers.is_valid({"type": "hello", "protocol": protocol.PROTOCOL + 1})


def test_answers_are_read_as_documented() -> None:
    spec = get_spec("oh_hell_v0")
    game = spec.make_rules(**spec.single_deal)
    codec = ViewCodec(game)
    state = game.new_episode(np.random.default_rng(2))
    legal = game.view(state, state.to_act).legal
    bids = [a for a in range(game.num_actions) if (legal >> a) & 1]
    first = bids[0]
    label = game.describe_action(first)
    for line in (f"{first}", f"{first}\n", json.dumps(label), json.dumps(label.upper()), json.dumps({"action": first}),
                 json.dumps({"action": label}), f" {first} ", f"{first}.0", f"{first}e0",
                 json.dumps({"action": float(first)})):  # fmt: skip
        assert codec.read_answer(line.encode(), legal) == first
    with pytest.raises(AnswerError) as err:
        codec.read_answer(b"bid please", legal)
    assert err.value.kind == "malformed" and "print debugging to stderr" in str(err.value)
    for bad in (b'"nonsense"', b"true", b"1.5", b"[1]", b'{"act": 3}', b"\xff\xfe", b"123456789012345678901234567890"):
        with pytest.raises(AnswerError) as err:
            codec.read_answer(bad, legal)
        assert err.value.kind == "malformed"
    with pytest.raises(AnswerError) as err:
        codec.read_answer(b"0", legal)  # a card, while it is a bid's turn
    assert err.value.kind == "illegal" and err.value.action == 0 and label in str(err.value)
    with pytest.raises(AnswerError) as err:
        codec.read_answer(b"-1", legal)
    assert err.value.kind == "illegal"
    # card names: "TS", "10S", "10♠", "ts" are 10♠ (47) where it is legal
    game = get_spec("german_whist_v0").make_rules()
    codec = ViewCodec(game)
    for text in ("TS", "10S", "10♠", "ts"):
        assert codec.read_answer(json.dumps(text, ensure_ascii=False).encode(), 1 << 47) == 47


def test_a_legal_entry_sent_back_whole_is_malformed_and_named() -> None:
    """A bot that answers the entry of ``legal`` it picked, ``{"id": 47, "label": "TS"}``, was told only that the
    value names no action; it is told to answer the id alone. The protocol does not change: it stays malformed."""
    codec = ViewCodec(get_spec("german_whist_v0").make_rules())
    for line, example in ((b'{"id": 47, "label": "TS"}', "(the line 47)"), (b'{"id": true}', "(the line 47)")):
        with pytest.raises(AnswerError) as err:
            codec.read_answer(line, 1 << 47)
        assert err.value.kind == "malformed" and "sent back whole: answer its id alone " + example in str(err.value)
    with pytest.raises(AnswerError) as err:
        codec.read_answer(b'{"id": 3}', 1 << 47)
    assert '(the line 3) or {"action": 3}' in str(err.value)


# JSON that orjson (up to 1,024 levels) and json (up to about 1,000) read, but that Python cannot write back: an
# answer's message quoted it with json.dumps, whose RecursionError stopped the referee (and `whist-bot check`)
DEEP = [b"[" * depth + b"]" * depth for depth in (999, 1010, 1023)]


def test_a_number_answer_is_an_action_exactly_when_the_schema_calls_it_an_integer() -> None:
    """``47.0`` (Lua 5.3 writes an integral float so) is an integer to JSON Schema but was a malformed answer."""
    answers = jsonschema.Draft202012Validator({**protocol.schema(), "$ref": "#/$defs/answer"})
    codec = ViewCodec(get_spec("german_whist_v0").make_rules())
    kinds = {}
    for line in ("47", "47.0", "4.7e1", "470e-1", '{"action": 47.0}', "47.5", "1e-3", '{"action": 0.5}'):
        try:
            kinds[line] = codec.read_answer(line.encode(), 1 << 47)
        except AnswerError as err:
            kinds[line] = err.kind
        assert (kinds[line] == 47) == answers.is_valid(decode_line(line.encode())), line
    assert list(kinds.values()) == [47] * 5 + ["malformed"] * 3
    with pytest.raises(AnswerError) as err:
        codec.read_answer(b"-1.0", 1 << 47)
    assert err.value.kind == "illegal" and err.value.action == -1


def test_an_answer_nested_too_deeply_to_write_back_is_malformed_and_stops_nothing() -> None:
    codec = ViewCodec(get_spec("german_whist_v0").make_rules())
    for deep in DEEP:
        for line in (deep, b'{"x": ' + deep + b"}", b'{"action": ' + deep + b"}"):
            with pytest.raises(AnswerError) as err:
                codec.read_answer(line, 0b111)
            assert err.value.kind == "malformed" and "nested too deeply" in str(err.value)


def test_a_hello_answer_nested_too_deeply_to_write_back_is_refused_by_name() -> None:
    for deep in DEEP:
        kinds = {}
        for name, line in (("bare", deep), ("type", b'{"type": ' + deep + b"}"),
                           ("version", b'{"type": "hello", "protocol": ' + deep + b"}")):  # fmt: skip
            with pytest.raises(AnswerError) as err:
                protocol.check_hello_answer(protocol.decode_line(line))
            assert "nested too deeply" in str(err.value) and "\n" not in str(err.value)
            kinds[name] = err.value.kind
        assert kinds == {"bare": "malformed", "type": "malformed", "version": "version"}


def test_a_byte_order_mark_before_a_line_is_ignored_by_both_readings() -> None:
    """RFC 8259 lets a reader ignore a UTF-8 byte order mark, and a .NET bot that sets Console.OutputEncoding to UTF-8
    writes one before its hello answer: orjson refused that line, and the json module read it."""
    hello = b'{"type": "hello", "protocol": 1}'
    for fast in (True, False):
        assert decode_line(b"\xef\xbb\xbf" + hello, fast=fast) == decode_line(hello, fast=fast)
        assert decode_line("\ufeff" + hello.decode(), fast=fast) == decode_line(hello, fast=fast)
        with pytest.raises(ValueError):
            decode_line(b"\xef\xbb\xbf\xef\xbb\xbf" + hello, fast=fast)  # one mark, not two


AGREED = [b"1", b"-0", b"1e-400", b"1.7976931348623157e308", b'"\\u00e9"', b'"\xc3\xa9"', b"[1, 2]",
          b'{"a": 1, "a": 2}', b" 1 ", b"\r\n1", b"18446744073709551615", b"-9223372036854775808"]  # fmt: skip
REFUSED = [b"NaN", b"Infinity", b"-Infinity", b"[NaN]", b'{"a": -Infinity}', b"1e400", b"2e308", b"-2e308",
           b"\x001", b"1\x00", b'"\xed\xa0\x80"', b"\xff", b"\xc3", b"[1,]", b"01", b"1.", b".5", b"1 2", b"9" * 5000,
           b'"\t"', b"\x0c1"]  # fmt: skip


def test_the_json_modules_reading_takes_and_refuses_what_orjsons_does() -> None:
    """The plain twin (``fast=False``, the json module) read UTF-16 and UTF-32, NaN, Infinity and 1e400 (as inf),
    all of which orjson refuses; what still differs is said in ``decode_line``'s docstring, and held here."""
    for line in AGREED:
        assert decode_line(line) == decode_line(line, fast=False), line
    for line in REFUSED:
        for fast in (True, False):
            with pytest.raises(ValueError):
                decode_line(line, fast=fast)
    assert decode_line(b"18446744073709551616") == 2.0**64 and decode_line(b"18446744073709551616", fast=False) == 2**64
    with pytest.raises(ValueError):
        decode_line(b'"\\ud800"')
    assert decode_line(b'"\\ud800"', fast=False) == "\ud800"


def test_a_hello_of_another_version_is_one_line_naming_both() -> None:
    answer = protocol.check_hello_answer({"type": "hello", "protocol": protocol.PROTOCOL})
    assert answer["protocol"] == protocol.PROTOCOL
    with pytest.raises(AnswerError) as err:
        protocol.check_hello_answer({"type": "hello", "protocol": 7})
    text = str(err.value)
    assert err.value.kind == "version" and "\n" not in text and "7" in text and str(protocol.PROTOCOL) in text
    with pytest.raises(AnswerError) as err:
        protocol.check_hello_answer(3)
    assert err.value.kind == "malformed"
    line = protocol.version_error(9)
    assert "\n" not in line and "9" in line and str(protocol.PROTOCOL) in line


def test_the_referee_takes_a_hello_answer_exactly_when_the_schema_does() -> None:
    """``"protocol": true`` was taken as version 1 (``True == 1`` in Python), which the schema refuses."""
    schema = jsonschema.Draft202012Validator({**protocol.schema(), "$ref": "#/$defs/hello_answer"})
    for version in (1, 1.0, True, False, 0, 2, "1", None, [1]):
        answer = json.loads(json.dumps({"type": "hello", "protocol": version}))
        try:
            protocol.check_hello_answer(answer)
            taken = True
        except AnswerError as err:
            assert err.kind == "version"
            taken = False
        assert taken == schema.is_valid(answer), version


# Option sets of one deal whose seats see different things (as tests/serve's twins)
TWINS = [(g, dict(get_spec(g).single_deal)) for g in BUILT_IN] + [
    ("oh_hell_v0", {"episode": "deal", "num_players": 4, "hand_size": 6, "trump_mode": "drawn_card"}),
    ("german_whist_v0", {"include_history": False, "phase1_follow_suit": False}),
    ("humbug_whist_v0", {"episode": "deal", "exchange_order": "simultaneous"}),
]


@pytest.mark.parametrize(("game_id", "options"), TWINS)
@pytest.mark.parametrize("seat", [0, 1])
def test_hidden_twins_send_a_seat_identical_lines(game_id: str, options: dict[str, Any], seat: int) -> None:
    """Two deals that differ only in two cards hidden from ``seat`` (swapped between two places it cannot see) give
    it byte-identical ``act`` and ``deal``-state lines, observation and mask included, action by action, until one
    of the two cards becomes visible to it."""
    spec = get_spec(game_id)
    game = spec.make_rules(**options)
    codec, encoder = ViewCodec(game), spec.make_encoder(game)
    deck = np.random.default_rng(100 + seat).permutation(52).tolist()

    def play(cards: list[int], actions: list[int] | None) -> tuple[list[bytes], list[int], list[int]]:
        """The seat's line at every step (observation and mask included), its unseen cards, the actions taken."""
        state = game.new_episode(np.random.default_rng(0), deck=cards, dealer=0)
        chooser = [heuristic_for(spec, **options) for _ in range(game.num_players)]
        rng, out, unseen, taken = np.random.default_rng(5), [], [], []
        while not state.done:
            view = game.view(state, seat)
            obs, mask = encoder.encode_with_mask(view)
            out.append(encode_line({**act_message(codec, view, len(taken)), "observation": obs.tolist(),
                                    "mask": mask.tolist()}))  # fmt: skip
            unseen.append(view.unseen)
            actor = game.view(state, state.to_act)
            if actions is not None and len(taken) == len(actions):
                break
            action = actions[len(taken)] if actions is not None else chooser[state.to_act].act(actor, rng)
            if not (actor.legal >> action) & 1:
                break
            game.step(state, action, rng)
            taken.append(action)
        return out, unseen, taken

    first, unseen, actions = play(deck, None)
    start = game.new_episode(np.random.default_rng(0), deck=deck, dealer=0)
    places = list(start.hands) + list(spec.hidden_masks(start))

    def reveal(card: int) -> int:  # the first step at which the seat sees the card
        return next((k for k, mask in enumerate(unseen) if not (mask >> card) & 1), len(unseen))

    hidden = [c for c in range(52) if (unseen[0] >> c) & 1]
    pairs = [(min(reveal(x), reveal(y)), x, y) for x in hidden for y in hidden
             if x < y and [(m >> x) & 1 for m in places] != [(m >> y) & 1 for m in places]]  # fmt: skip
    if not pairs:
        assert game_id == "humbug_v0", "only Humbug shows a seat every card at its study step (RULES.md §3.3)"
        return
    horizon, a, b = max(pairs)
    twin = list(deck)
    i, j = twin.index(a), twin.index(b)
    twin[i], twin[j] = twin[j], twin[i]
    second, _, _ = play(twin, actions[: horizon - 1])
    compared = min(horizon, len(second))
    assert compared >= 4, f"the twins diverge too early to test anything ({compared} lines)"
    assert first[:compared] == second[:compared]
    assert not np.array_equal(start.hands, game.new_episode(np.random.default_rng(0), deck=twin, dealer=0).hands) or (
        spec.hidden_masks(start) != spec.hidden_masks(game.new_episode(np.random.default_rng(0), deck=twin, dealer=0))
    ), "the twins are the same deal"
