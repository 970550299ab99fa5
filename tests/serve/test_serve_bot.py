"""whist-serve's bot seats (whist_env.serve.botseat): a bot plays a whole game of every game over the bot protocol's
messages (each one checked against the protocol's JSON Schema, the acts against the game's record), reconnects and
plays on, a second connection takes the seat, refused answers change nothing and bring the act again, and a bot
seat is told nothing its seat may not see (hidden twins)."""

from __future__ import annotations

import faulthandler
import json
import time
import warnings
from collections.abc import Iterator
from typing import Any

import jsonschema
import numpy as np
import pytest

with warnings.catch_warnings():  # Starlette >= 1.x suggests httpx2 for its TestClient; httpx still works
    warnings.filterwarnings("ignore", message=".*httpx2.*")
    from starlette.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from whist_env.agents.factory import heuristic_for
from whist_env.evaluation import protocol
from whist_env.evaluation.protocol import ViewCodec
from whist_env.record import GameRecord
from whist_env.registry import game_ids
from whist_env.serve import botseat
from whist_env.serve.app import MAX_UNANSWERED, ServerConfig, create_app
from whist_env.serve.guard import POLICY_VIOLATION
from whist_env.serve.tables import Table

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

SCHEMA = protocol.schema()
TO_BOT = jsonschema.Draft202012Validator(SCHEMA)
ANSWER = jsonschema.Draft202012Validator({"$ref": "#/$defs/answer", "$defs": SCHEMA["$defs"]})
HELLO_ANSWER = jsonschema.Draft202012Validator({"$ref": "#/$defs/hello_answer", "$defs": SCHEMA["$defs"]})
ERROR = jsonschema.Draft202012Validator({"$ref": "#/$defs/error", "$defs": SCHEMA["$defs"]})
# A game of each game; Oh Hell's is three deals (2, 1 and 2 cards), so that a bot hears several deal_end.
GAMES: dict[str, dict[str, Any]] = {
    "classic_whist_v0": {"episode": "deal"},
    "humbug_v0": {},
    "oh_hell_v0": {"num_players": 3, "max_cards": 2},
    "german_whist_v0": {},
    "humbug_whist_v0": {"episode": "deal"},
}
HELLO = {"type": "hello", "protocol": 1, "name": "test bot"}


@pytest.fixture(autouse=True)
def _watchdog() -> Iterator[None]:
    """A TestClient WebSocket read has no timeout: a test that waits for a message that never comes is stopped
    (with every thread's traceback) instead of hanging the run."""
    faulthandler.dump_traceback_later(240, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


def test_every_game_is_played() -> None:
    assert sorted(GAMES) == sorted(game_ids()), "a new game: add a game of it to GAMES"


def _client(**config: Any) -> TestClient:
    return TestClient(create_app(ServerConfig(agent_delay=0.0, **config)))


def _open(client: TestClient, game: str, seats: list[str], seed: int = 3) -> tuple[str, list[str], Table]:
    response = client.post("/api/tables", json={"game": game, "options": GAMES[game], "seats": seats, "seed": seed})
    assert response.status_code == 200, response.text
    made = response.json()
    table = client.app.state.lobby.tables[made["table_id"]]  # type: ignore[attr-defined]
    return made["table_id"], [s["url"].split("token=")[1] for s in made["seats"]], table


class Bot:
    """A bot on the far end of a bot seat's WebSocket: every line it reads is one protocol message (or an error),
    checked against the protocol's JSON Schema; every line it writes is a protocol answer, checked too."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.lines: list[str] = []

    def read(self) -> dict[str, Any]:
        text = self.ws.receive_text()
        assert text.endswith("\n") and text.count("\n") == 1, "one line per message"
        message = json.loads(text)
        (ERROR if message.get("type") == "error" else TO_BOT).validate(message)
        self.lines.append(text)
        return message  # type: ignore[no-any-return]

    def hello(self, **extra: Any) -> None:
        answer = {**HELLO, **extra}
        HELLO_ANSWER.validate(answer)
        self.ws.send_text(json.dumps(answer))

    def answer(self, value: Any) -> None:
        ANSWER.validate(value)
        self.ws.send_text(json.dumps(value))


def _settle(table: Table, version: int) -> None:
    """Wait until the table took an action after ``version`` (the server thread takes a bot's answer)."""
    deadline = time.monotonic() + 60
    while table.version <= version:
        assert time.monotonic() < deadline, "the bot's answer was not taken"
        time.sleep(0.002)


def _play_out(
    client: TestClient, table_id: str, table: Table, bot: Bot, humans: dict[int, str]
) -> list[dict[str, Any]]:
    """Play to the end of the game: the human seats ``humans`` (seat -> token) by HTTP, each its first legal action;
    the bot its last legal action. Returns what the bot read, up to the goodbye."""
    got: list[dict[str, Any]] = []
    while True:
        state = table.env.game_state
        if not state.done and state.to_act in humans:
            first = table.game.view(state, state.to_act).legal_actions()[0]
            response = client.post(
                f"/api/tables/{table_id}/action", json={"token": humans[state.to_act], "action": first}
            )
            assert response.status_code == 200, response.text
            continue
        message = bot.read()
        got.append(message)
        if message["type"] == "act":
            version = table.version
            bot.answer(message["legal"][-1]["id"])
            _settle(table, version)
        elif message["type"] == "goodbye":
            return got


def _as_sent(value: Any) -> Any:
    """``value`` as a bot reads it (tuples become lists)."""
    return json.loads(json.dumps(value))


def _expected_acts(record: GameRecord, seat: int, codec: ViewCodec) -> list[tuple[int, int, dict[str, Any]]]:
    """``(deal, decision, view)`` of each decision of ``seat`` in a game, as its record replays them."""
    out, deal, decision = [], 0, 0
    for game, state in record.states():
        if state.done:
            break
        if state.deal_index != deal:
            deal, decision = state.deal_index, 0
        if state.to_act == seat:
            out.append((deal, decision, _as_sent(codec.to_json(game.view(state, seat)))))
        decision += 1
    return out


# ----------------------------------------------------------------------------- whole games
@pytest.mark.parametrize("game_id", game_ids())
def test_a_bot_plays_a_whole_game_of_every_game(game_id: str) -> None:
    """The bot (seat 1) plays with the game's heuristic from the views it is sent, answering in each of the three
    forms; its acts are the seat's decisions as the game's record replays them, its deal_end one per deal, and the
    returns add up to the match_end's."""
    options = GAMES[game_id]
    n = Table("probe", game_id, options).num_players
    with _client() as client:
        table_id, tokens, table = _open(client, game_id, ["heuristic", "bot"] + ["random"] * (n - 2))
        with client.websocket_connect(f"/api/tables/{table_id}/bot?token={tokens[1]}") as ws:
            bot = Bot(ws)
            hello = bot.read()
            assert hello["type"] == "hello" and hello["protocol"] == protocol.PROTOCOL
            assert (hello["game"], hello["seat"], hello["num_players"], hello["options"]) == (game_id, 1, n, options)
            assert hello["seed"] == table.seats[1].seed and hello["deals"] == (None if game_id == "oh_hell_v0" else 1)
            assert hello["limits"] == {"max_message": 65536, "max_unanswered": MAX_UNANSWERED, "max_refused": 20}
            assert hello["layout"] == protocol.layout_of(table.env.encoder)
            bot.hello(observation=True)
            codec = ViewCodec(table.game)
            agent, rng = heuristic_for(game_id, **options), np.random.default_rng(hello["seed"])
            acts: list[dict[str, Any]] = []
            while (message := bot.read())["type"] != "goodbye":
                if message["type"] != "act":
                    continue
                view = codec.from_json(message["view"])
                assert [a["id"] for a in message["legal"]] == view.legal_actions()
                obs, mask = table.env.encoder.encode_with_mask(view)
                assert message["observation"] == obs.tolist() and message["mask"] == mask.tolist()
                action = int(agent.act(view, rng))
                label = codec.labels[action]
                bot.answer([action, label, {"action": action}][len(acts) % 3])
                acts.append(message)
            with pytest.raises(WebSocketDisconnect) as closed:
                ws.receive_text()
            assert closed.value.code == botseat.NORMAL
        kinds = [json.loads(line)["type"] for line in bot.lines]
        deals = len(table.deals)
        assert kinds[0] == "hello" and kinds[-3:] == ["deal_end", "match_end", "goodbye"]
        assert set(kinds[1:-3]) <= {"act", "deal_end"}
        deal_ends = [json.loads(line) for line in bot.lines if '"type":"deal_end"' in line]
        assert [m["deal"] for m in deal_ends] == list(range(deals)) and deals == (3 if game_id == "oh_hell_v0" else 1)
        match_end = json.loads(bot.lines[-2])
        assert match_end["deals"] == deals and match_end["faults"] == 0 and match_end["forfeit"] is False
        assert match_end["returns"] == [float(r) for r in table.env.game_state.returns]
        assert np.allclose(np.sum([m["returns"] for m in deal_ends], axis=0), match_end["returns"])
        for end in deal_ends:  # the seat's view when the deal ended: every card played, nothing to decide
            assert end["view"]["deal_index"] == end["deal"] and end["view"]["hand"] == end["view"]["legal"] == []
        record = GameRecord.from_json(client.get(f"/api/tables/{table_id}/record", params={"token": tokens[1]}).text)
        assert [(m["deal"], m["decision"], m["view"]) for m in acts] == _expected_acts(record, 1, codec)
        if deals == 1:
            game, final = record.replay()
            assert deal_ends[0]["view"] == _as_sent(codec.to_json(game.view(final, 1)))
        assert not table.seats[1].connected


# ----------------------------------------------------------------------------- connections
def test_a_dropped_bot_reconnects_gets_the_current_act_and_plays_on() -> None:
    """Mid-deal, with an act unanswered, the bot's connection drops: the table waits, the human's page shows the
    bot as gone, and a new connection with the token gets the same hello, then the very act again, and finishes."""
    with _client() as client:
        table_id, tokens, table = _open(client, "german_whist_v0", ["human", "bot"], seed=4)
        with client.websocket_connect(f"/api/tables/{table_id}/ws?token={tokens[0]}") as human:
            assert human.receive_json()["table"]["connected"] == [None, False]
            with client.websocket_connect(f"/api/tables/{table_id}/bot?token={tokens[1]}") as ws:
                bot = Bot(ws)
                hello = bot.read()
                bot.hello()
                while not human.receive_json()["table"]["connected"][1]:  # the human's page hears the bot came
                    pass
                answered = 0
                while True:
                    state = table.env.game_state
                    if state.to_act == 0:
                        legal = table.game.view(state, 0).legal_actions()
                        client.post(f"/api/tables/{table_id}/action", json={"token": tokens[0], "action": legal[0]})
                        continue
                    pending = bot.read()
                    assert pending["type"] == "act"
                    if answered == 5:
                        break  # the connection drops with this act unanswered
                    version = table.version
                    bot.answer(pending["legal"][0]["id"])
                    _settle(table, version)
                    answered += 1
                stuck = table.version
            while human.receive_json()["table"]["connected"][1]:
                pass
            assert table.version == stuck and table.bot_decision(1) == (pending["deal"], pending["decision"])
            with client.websocket_connect(f"/api/tables/{table_id}/bot?token={tokens[1]}") as ws:
                again = Bot(ws)
                assert again.read() == hello
                again.hello()
                assert again.read() == pending and again.lines[-1] == bot.lines[-1]  # the same act, byte for byte
                version = table.version
                again.answer(pending["legal"][0]["id"])
                _settle(table, version)
                rest = _play_out(client, table_id, table, again, {0: tokens[0]})
            assert [m["type"] for m in rest[-3:]] == ["deal_end", "match_end", "goodbye"] and table.over
            assert not any(m["type"] == "hello" for m in rest)


def test_a_second_connection_takes_the_seat_and_the_first_is_closed() -> None:
    with _client() as client:
        table_id, tokens, table = _open(client, "german_whist_v0", ["human", "bot"], seed=6)
        url = f"/api/tables/{table_id}/bot?token={tokens[1]}"
        if table.env.game_state.to_act == 0:
            legal = table.game.view(table.env.game_state, 0).legal_actions()
            client.post(f"/api/tables/{table_id}/action", json={"token": tokens[0], "action": legal[0]})
        with client.websocket_connect(url) as first_ws:
            first = Bot(first_ws)
            first.read()
            first.hello()
            act = first.read()
            with client.websocket_connect(url) as second_ws:
                second = Bot(second_ws)
                assert second.read()["type"] == "hello"
                told = first.read()
                assert told["type"] == "error" and "another connection" in told["message"]
                with pytest.raises(WebSocketDisconnect) as closed:
                    first_ws.receive_text()
                assert closed.value.code == botseat.REPLACED
                second.hello()
                assert second.read() == act  # the seat's decision, asked again on the new connection
                assert table.seats[1].connected and len(client.app.state.lobby.bot_links) == 1  # type: ignore[attr-defined]
                version = table.version
                second.answer(act["legal"][0]["id"])
                _settle(table, version)
                rest = _play_out(client, table_id, table, second, {0: tokens[0]})
        assert rest[-1]["type"] == "goodbye" and table.over


def test_refused_answers_change_nothing_and_bring_the_act_again() -> None:
    """Each refused answer gets an error and then the same act, byte for byte, with every seat's message as before;
    a line when no act waits gets an error alone; the refused answers are the match_end's faults."""
    with _client(max_message=3000) as client:
        table_id, tokens, table = _open(client, "german_whist_v0", ["human", "bot"], seed=9)  # the human leads
        with client.websocket_connect(f"/api/tables/{table_id}/bot?token={tokens[1]}") as ws:
            bot = Bot(ws)
            bot.read()
            ws.send_text("hello?")  # not a hello answer: an error, and the hello may still be answered
            refused = bot.read()
            assert refused["type"] == "error" and '"type": "hello"' in refused["message"]
            bot.hello()
            assert table.env.game_state.to_act == 0  # the human leads: a line now answers no act
            ws.send_text("12")
            assert "no act waits" in bot.read()["message"]
            legal = table.game.view(table.env.game_state, 0).legal_actions()
            client.post(f"/api/tables/{table_id}/action", json={"token": tokens[0], "action": legal[0]})
            act = bot.read()
            line = bot.lines[-1]
            before = ([table.message_text(s) for s in (0, 1)], table.version)
            legal = [a["id"] for a in act["legal"]]
            not_legal = next(c for c in range(52) if c not in legal)
            bad: list[tuple[Any, str]] = [
                ("not json", "not JSON"),
                ("[1, 2]", "names no action"),
                ('"ZZ"', "names no action"),
                ('{"action": true}', "names no action"),
                ('{"act": 3}', "names no action"),
                ("[" * 1010 + "]" * 1010, "nested too deeply"),  # JSON that Python reads but cannot write back
                (str(not_legal), "not legal now"),
                ("999", "not legal now"),
                ("-1", "not legal now"),
                (json.dumps({"action": legal[0], "pad": "x" * 3000}), "--max-message"),
                (json.dumps(legal[0]).encode(), "binary"),
            ]
            for answer, why in bad:
                ws.send_bytes(answer) if isinstance(answer, bytes) else ws.send_text(answer)
                error = bot.read()
                assert error["type"] == "error" and why in error["message"], (answer, error)
                assert "x" * 200 not in error["message"]
                assert bot.read() == act and bot.lines[-1] == line
                assert ([table.message_text(s) for s in (0, 1)], table.version) == before
            version = table.version
            bot.answer(act["legal"][0]["label"])  # a label is an answer too
            _settle(table, version)
            rest = _play_out(client, table_id, table, bot, {0: tokens[0]})
        assert rest[-2]["type"] == "match_end" and rest[-2]["faults"] == len(bad) + 1  # and "12", not the hello


def test_a_bot_that_answers_one_act_wrongly_again_and_again_is_closed() -> None:
    with _client() as client:
        table_id, tokens, table = _open(client, "humbug_v0", ["bot", "bot"], seed=2)
        seat = table.env.game_state.to_act
        with client.websocket_connect(f"/api/tables/{table_id}/bot?token={tokens[seat]}") as ws:
            bot = Bot(ws)
            bot.read()
            bot.hello()
            act = bot.read()
            for _ in range(botseat.MAX_REFUSED - 1):
                bot.answer(99)
                assert bot.read()["type"] == "error" and bot.read() == act
            bot.answer(99)
            last = bot.read()
            assert last["type"] == "error" and f"{botseat.MAX_REFUSED} refused answers" in last["message"]
            with pytest.raises(WebSocketDisconnect) as closed:
                ws.receive_text()
            assert closed.value.code == POLICY_VIOLATION
        assert table.version == 0


@pytest.mark.parametrize(
    ("answer", "theirs"),
    [
        ({"type": "hello", "protocol": 2}, "protocol 2"),
        ({"type": "hello"}, "protocol none"),
        ({"type": "hello", "protocol": True}, "protocol true"),
    ],
)
def test_another_protocol_version_gets_one_line_naming_both_and_a_close(answer: dict[str, Any], theirs: str) -> None:
    with _client() as client:
        table_id, tokens, _ = _open(client, "german_whist_v0", ["human", "bot"])
        with client.websocket_connect(f"/api/tables/{table_id}/bot?token={tokens[1]}") as ws:
            bot = Bot(ws)
            bot.read()
            ws.send_text(json.dumps(answer))
            error = bot.read()
            assert error["type"] == "error" and "\n" not in error["message"]
            assert theirs in error["message"] and "protocol 1" in error["message"]
            with pytest.raises(WebSocketDisconnect) as closed:
                ws.receive_text()
            assert closed.value.code == botseat.VERSION


def test_a_token_that_holds_no_bot_seat_is_refused() -> None:
    with _client() as client:
        table_id, tokens, table = _open(client, "german_whist_v0", ["human", "bot"])
        for token, code, words in [
            (tokens[0], botseat.NOT_A_BOT, "seat 0 is a human seat, not a bot seat"),
            ("junk", botseat.NO_SEAT, "holds no seat"),
            ("", botseat.NO_SEAT, "holds no seat"),
        ]:
            with client.websocket_connect(f"/api/tables/{table_id}/bot?token={token}") as ws:
                refused = json.loads(ws.receive_text())
                assert refused["type"] == "error" and words in refused["message"]
                with pytest.raises(WebSocketDisconnect) as closed:
                    ws.receive_text()
                assert closed.value.code == code
        assert not table.seats[1].connected and table.version == 0
        # a human seat's actions are refused for a bot seat: its program plays it
        response = client.post(f"/api/tables/{table_id}/action", json={"token": tokens[1], "action": 0})
        assert response.status_code == 400 and "bot seat" in response.json()["error"]


def test_a_closed_table_says_goodbye_to_its_bot() -> None:
    with _client() as client:
        table_id, tokens, _ = _open(client, "german_whist_v0", ["human", "bot"])
        with client.websocket_connect(f"/api/tables/{table_id}/bot?token={tokens[1]}") as ws:
            bot = Bot(ws)
            bot.read()
            bot.hello()
            client.portal.call(client.app.state.lobby.close, table_id)  # type: ignore[attr-defined,union-attr]
            while (message := bot.read())["type"] == "act":
                pass
            assert message["type"] == "goodbye" and "closed" in message["reason"]
            with pytest.raises(WebSocketDisconnect) as closed:
                ws.receive_text()
            assert closed.value.code == botseat.GONE


# ----------------------------------------------------------------------------- no card leaks (hidden twins)
def _twin(game: str, seat: int, deck: list[int]) -> tuple[Table, Table, int, int] | None:
    """Two all-but-one-human tables (``seat`` a bot) whose decks differ in two cards hidden from ``seat`` that lie in
    different places, or None (Humbug shows every card)."""
    options = GAMES[game] if game != "oh_hell_v0" else {"episode": "deal", "num_players": 3, "hand_size": 7}
    n = Table("probe", game, options).num_players
    kinds = ["human"] * n
    kinds[seat] = "bot"
    a = Table("twin", game, options, kinds, seed=11, deck=deck, dealer=0)
    start = a.env.game_state
    places = list(start.hands) + list(a.env.hidden_masks(start))
    cards = [c for c in range(52) if (a.game.view(start, seat).unseen >> c) & 1]
    pairs = [
        (x, y)
        for i, x in enumerate(cards)
        for y in cards[i + 1 :]
        if [(m >> x) & 1 for m in places] != [(m >> y) & 1 for m in places]
    ]
    if not pairs:
        return None
    x, y = pairs[len(pairs) // 2]
    twin = list(deck)
    i, j = twin.index(x), twin.index(y)
    twin[i], twin[j] = twin[j], twin[i]
    return a, Table("twin", game, options, kinds, seed=11, deck=twin, dealer=0), x, y


@pytest.mark.parametrize("game_id", game_ids())
def test_hidden_twins_send_a_bot_seat_identical_lines(game_id: str) -> None:
    """Two deals that differ only in two cards hidden from the bot's seat send it byte-identical lines (hello, acts
    with the observation and mask, errors with the legal actions), action by action, until one card is shown."""
    seat = 1
    made = _twin(game_id, seat, np.random.default_rng(7).permutation(52).tolist())
    if made is None:
        assert game_id == "humbug_v0"  # RULES.md §3.3: the study step shows both hands
        return
    *tables, c1, c2 = made
    with _client() as client_a, _client() as client_b:
        clients = (client_a, client_b)
        for client, table in zip(clients, tables, strict=True):
            lobby = client.app.state.lobby  # type: ignore[attr-defined]
            lobby.tables["twin"], lobby.listeners["twin"] = table, set()

        def hidden() -> bool:
            return all(
                (t.game.view(t.env.game_state, seat).unseen >> c) & 1 and not t.deals for t in tables for c in (c1, c2)
            )

        with (
            client_a.websocket_connect(f"/api/tables/twin/bot?token={tables[0].seats[seat].token}") as ws_a,
            client_b.websocket_connect(f"/api/tables/twin/bot?token={tables[1].seats[seat].token}") as ws_b,
        ):
            bots = (Bot(ws_a), Bot(ws_b))
            for bot in bots:
                bot.read()
                bot.hello(observation=True)
            steps = 0
            while hidden():
                state = tables[0].env.game_state
                actor = state.to_act
                legal_b = set(tables[1].game.view(tables[1].env.game_state, actor).legal_actions())
                legal = [a for a in tables[0].game.view(state, actor).legal_actions() if a in legal_b]
                choices = [a for a in legal if a not in (c1, c2)] or legal
                if not choices:
                    break  # no action legal in both: the other seats' cards differ here
                action = choices[steps % len(choices)]
                versions = [t.version for t in tables]
                if actor == seat:
                    for bot, table, version in zip(bots, tables, versions, strict=True):
                        bot.read()
                        bot.answer(99)  # refused: the error names the legal actions, then the act again
                        bot.read(), bot.read()
                        bot.answer(action)
                        _settle(table, version)
                else:
                    for k in range(2):
                        response = clients[k].post(
                            "/api/tables/twin/action", json={"token": tables[k].seats[actor].token, "action": action}
                        )
                        assert response.status_code == 200, response.text
                steps += 1
                assert bots[0].lines == bots[1].lines, f"seat {seat} can tell {c1} and {c2} apart"
    assert sum('"type":"act"' in line for line in bots[0].lines) >= 3, "the twins part too early to test anything"
