"""The whist-serve JSON API and WebSocket (Starlette's TestClient), and 30 concurrent clients on a live server."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import threading
import time
import warnings
from pathlib import Path
from typing import Any

import pytest

with warnings.catch_warnings():  # Starlette >= 1.x suggests httpx2 for its TestClient; httpx still works
    warnings.filterwarnings("ignore", message=".*httpx2.*")
    from starlette.testclient import TestClient

from whist_env.registry import game_ids, get_spec
from whist_env.serve import tables as tables_module
from whist_env.serve.app import ServerConfig, create_app, main, url_host
from whist_env.serve.tables import PACKAGE_DIR

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _client(**config: Any) -> TestClient:
    return TestClient(create_app(ServerConfig(agent_delay=0.0, **config)))


def _token(url: str) -> str:
    return url.split("token=")[1]


def _create(client: TestClient, **body: Any) -> dict[str, Any]:
    response = client.post("/api/tables", json=body)
    assert response.status_code == 200, response.text
    return response.json()


def test_create_a_table_and_open_it_as_seat_zero() -> None:
    with _client() as client:
        games = client.get("/api/games").json()
        assert {g["game"] for g in games} == set(game_ids())
        assert "num_players" in next(g for g in games if g["game"] == "oh_hell_v0")["options"]
        agents = client.get("/api/agents").json()
        assert "heuristic" in agents["seats"] and "random" in agents["agent_names"]
        made = _create(client, game="oh_hell_v0", options={"num_players": 3, "episode": "deal"}, seats=["human"] * 3)
        assert made["url"] == made["seats"][0]["url"] and made["url"].startswith(f"/table/{made['table_id']}?token=")
        assert len({s["url"] for s in made["seats"]}) == 3
        page = client.get(made["url"])
        assert page.status_code == 200 and "data-phase" in page.text
        for asset in ("table.js", "cards.js", "style.css", "lobby.js"):
            assert client.get(f"/static/{asset}").status_code == 200
        assert "data-lobby" in client.get("/").text
        views = [
            client.get(f"/api/tables/{made['table_id']}/view", params={"token": _token(s["url"])})
            for s in made["seats"]
        ]
        assert [v.json()["you"] for v in views] == [0, 1, 2]
        assert all(v.json()["phase"] == "bidding" for v in views)
        # each seat sees its own hand only
        hands = [set(v.json()["hand"]) for v in views]
        assert not (hands[0] & hands[1]) and not (hands[1] & hands[2])


def test_the_catalogue_gives_the_lobby_form_every_option_and_seat_choice() -> None:
    with _client() as client:
        games = {g["game"]: g for g in client.get("/api/games").json()}
        agents = client.get("/api/agents").json()
    assert set(games) == set(game_ids())
    for game_id, entry in games.items():
        spec = get_spec(game_id)
        config = spec.make_rules().config_cls
        assert set(entry["options"]) == set(config.allowed())  # the older key stays
        info = {o["name"]: o for o in entry["option_info"]}
        assert list(info) == [f.name for f in dataclasses.fields(config)]
        for name, o in info.items():
            assert {"kind", "default", "doc", "choices", "minimum", "maximum", "optional"} <= set(o)
            assert o["doc"], f"{game_id}.{name} has no description"
            if o["kind"] == "choice":
                assert o["default"] in o["choices"]
            elif o["kind"] == "int" and o["default"] is not None:
                assert o["minimum"] <= o["default"] <= o["maximum"]
            else:
                assert o["kind"] in ("bool", "int") and o["choices"] is None
            assert o["default"] is not None or o["optional"]
        assert entry["single_deal"] == dict(spec.single_deal)
        assert entry["seat_choices"][:3] == ["human", "random", "heuristic"]
        assert ("pimc" in entry["seat_choices"]) == spec.searchable
        assert "pretrained" in entry["seat_choices"] and entry["pretrained_options"] is not None
        # the options a pretrained seat needs are the one-deal options, the others at their defaults
        defaults = {name: o["default"] for name, o in info.items()}
        assert entry["pretrained_options"] == {**defaults, **spec.single_deal}
    oh_hell = games["oh_hell_v0"]
    assert oh_hell["players_option"] == "num_players" and games["german_whist_v0"]["players_option"] is None
    assert next(o for o in oh_hell["option_info"] if o["name"] == "num_players") == {
        "name": "num_players",
        "kind": "int",
        "default": 4,
        "doc": "players at the table",
        "choices": None,
        "minimum": 2,
        "maximum": 8,
        "optional": False,
    }
    trump = next(o for o in oh_hell["option_info"] if o["name"] == "trump_mode")
    assert trump["kind"] == "choice" and trump["choices"] == ["none", "drawn_card", "turn_up"]
    assert "pretrained" in agents["seats"] and "heuristic" in agents["agent_names"]  # the older keys stay
    offered = {a["name"]: a for a in agents["agents"]}
    assert list(offered) == ["human", "random", "heuristic", "pimc", "pretrained", "bot"]
    assert all(a["doc"] for a in offered.values())
    assert offered["bot"]["games"] == game_ids() and "whist-bot connect" in offered["bot"]["doc"]
    assert "oh_hell_v0" in offered["pimc"]["games"] and "german_whist_v0" in offered["pimc"]["games"]


@pytest.mark.parametrize("game", game_ids())
def test_a_pretrained_seat_plays_with_the_options_the_catalogue_gives(game: str) -> None:
    with _client() as client:
        entry = next(g for g in client.get("/api/games").json() if g["game"] == game)
        options = entry["pretrained_options"]
        players = options.get(entry["players_option"], entry["num_players"])
        seats = ["pretrained"] * players
        made = _create(client, game=game, options=options, seats=seats, seed=3)
        assert [s["kind"] for s in made["seats"]] == seats
        view = client.get(f"/api/tables/{made['table_id']}/view", params={"token": _token(made["url"])}).json()
        for _ in range(500):
            if view["phase"] == "over":
                break
            time.sleep(0.01)
            view = client.get(f"/api/tables/{made['table_id']}/view", params={"token": _token(made["url"])}).json()
        assert view["phase"] == "over" and len(view["deals"]) == 1


def test_a_pretrained_seat_with_other_options_is_refused_naming_the_options_it_needs() -> None:
    with _client() as client:
        body = {"game": "oh_hell_v0", "options": {"num_players": 3}, "seats": ["human", "pretrained", "heuristic"]}
        response = client.post("/api/tables", json=body)
        error = response.json()["error"]
        assert response.status_code == 400 and error.startswith("seat 1: 'pretrained' plays oh_hell_v0 only with")
        assert '{"episode": "deal"}' in error and "num_players=4" in error
        # The shipped weights are named from the package, not by where this server installed it.
        assert "whist_env/games/oh_hell/pretrained.npz" in error and str(PACKAGE_DIR.parent) not in error
        body = {"game": "humbug_v0", "options": {"num_deals": 3}, "seats": ["human", "pimc(fallback=pretrained)"]}
        error = client.post("/api/tables", json=body).json()["error"]
        assert error.startswith("seat 1: 'pretrained' plays humbug_v0 only with")
        assert "open the table with the default options" in error  # num_deals=1 is the default


@pytest.mark.parametrize(
    ("body", "match"),
    [
        ({"game": "bridge_v0"}, "available"),
        ({"seats": ["human"]}, "name the game"),
        ({"game": "german_whist_v0", "seats": ["human"]}, "has 2 seats"),
        ({"game": "german_whist_v0", "seats": ["human", "wizard"]}, "unknown agent"),
        ({"game": "german_whist_v0", "options": {"decks": 2}}, "no option"),
        # make()'s own keywords, which it took for its own (raw: TypeError, a 500; render_mode: accepted)
        ({"game": "german_whist_v0", "seats": ["human", "human"], "options": {"raw": False}}, "no option 'raw'"),
        ({"game": "german_whist_v0", "seats": ["human", "human"], "options": {"render_mode": "ansi"}}, "no option"),
        ({"game": "german_whist_v0", "options": [1]}, "options"),
        ({"game": "german_whist_v0", "colour": "red"}, "unknown field"),
        ({"game": "german_whist_v0", "seed": -1}, "seed"),
        (["german_whist_v0"], "JSON object"),
    ],
)
def test_bad_tables_are_refused(body: Any, match: str) -> None:
    with _client() as client:
        response = client.post("/api/tables", json=body)
        assert response.status_code == 400 and match in response.json()["error"]
        response = client.post("/api/tables", content=b"{not json")
        assert response.status_code == 400 and "not JSON" in response.json()["error"]


def test_forged_and_bad_actions_get_an_error_and_change_nothing() -> None:
    with _client() as client:
        made = _create(client, game="classic_whist_v0", options={"episode": "deal"}, seats=["human"] * 4, seed=4)
        tid, tokens = made["table_id"], [_token(s["url"]) for s in made["seats"]]
        url = f"/api/tables/{tid}/action"

        def views() -> list[str]:
            return [client.get(f"/api/tables/{tid}/view", params={"token": t}).text for t in tokens]

        before = views()
        first = json.loads(before[0])
        actor = first["to_act"]
        legal = json.loads(before[actor])["legal"]
        waiting = (actor + 1) % 4
        bad: list[tuple[Any, int, str]] = [
            ({"token": tokens[waiting], "action": json.loads(before[waiting])["hand"][0]}, 400, "turn"),
            ({"token": tokens[actor], "action": 60}, 400, "not legal"),
            ({"token": tokens[actor], "action": "AS"}, 400, "integer"),
            ({"token": tokens[actor], "action": legal[0]["action"], "seat": waiting}, 400, "not yours"),
            ({"token": tokens[actor], "action": legal[0]["action"], "seat": float(actor)}, 400, "not yours"),
            ({"token": "forged-token", "action": legal[0]["action"]}, 404, "holds no seat"),
            ({"action": legal[0]["action"]}, 404, "holds no seat"),
            ([1, 2], 400, "JSON object"),
        ]
        for body, status, match in bad:
            response = client.post(url, json=body)
            assert response.status_code == status and match in response.json()["error"], (body, response.text)
        assert client.post(url, content=b"\xff{").status_code == 400
        assert client.post("/api/tables/nope/action", json={"token": tokens[0], "action": 0}).status_code == 404
        assert client.get(f"/api/tables/{tid}/view", params={"token": "x"}).status_code == 404
        assert views() == before
        ok = client.post(url, json={"token": tokens[actor], "action": legal[0]["action"], "seat": actor})
        assert ok.status_code == 200 and ok.json()["version"] == 1
        assert [c for _, c in ok.json()["trick"]] == [legal[0]["action"]]


def test_websocket_pushes_every_change_and_answers_bad_messages() -> None:
    with _client() as client:
        made = _create(
            client, game="humbug_whist_v0", options={"episode": "deal"}, seats=["human", "heuristic"], seed=8
        )
        tid, token = made["table_id"], _token(made["url"])
        with client.websocket_connect(f"/api/tables/{tid}/ws?token={token}") as ws:
            msg = ws.receive_json()
            while msg["to_act"] != 0:  # the agent may act first: its move is pushed
                msg = ws.receive_json()
            for text, match in [
                ("not json", "not JSON"),
                (json.dumps([1]), "act"),
                (json.dumps({"type": "act", "action": 99}), "not legal"),
                (json.dumps({"type": "act", "action": msg["legal"][0]["action"], "seat": 1}), "not yours"),
            ]:
                ws.send_text(text)
                answer = ws.receive_json()
                assert answer["type"] == "error" and match in answer["message"]
            steps = 0
            while msg["phase"] != "over":
                if msg["to_act"] == 0 and msg["legal"]:
                    ws.send_json({"type": "act", "action": msg["legal"][-1]["action"]})
                    steps += 1
                msg = ws.receive_json()
                assert msg["type"] == "state"
            assert steps >= 13 and len(msg["deals"]) == 1 and sum(msg["tricks_won"]) == 13
        with client.websocket_connect(f"/api/tables/{tid}/ws?token=forged") as ws:
            assert "holds no seat" in ws.receive_json()["message"]


def test_tables_are_bounded_and_idle_ones_closed() -> None:
    with _client(max_tables=2) as client:
        for _ in range(2):
            _create(client, game="german_whist_v0", seats=["human", "human"])
        response = client.post("/api/tables", json={"game": "german_whist_v0"})
        assert response.status_code == 503 and "--max-tables" in response.json()["error"]
    with _client(idle_timeout=0.2) as client:
        made = _create(client, game="german_whist_v0", seats=["human", "human"])
        lobby = client.app.state.lobby  # type: ignore[attr-defined]
        with client.websocket_connect(f"/api/tables/{made['table_id']}/ws?token={_token(made['url'])}") as ws:
            assert ws.receive_json()["table"]["closed"] is False
            closed = ws.receive_json()  # the sweeper closes the idle table and tells its clients
            assert closed["table"]["closed"] is True
        assert made["table_id"] not in lobby.tables
        view = client.get(f"/api/tables/{made['table_id']}/view", params={"token": _token(made["url"])})
        assert view.status_code == 404 and "closed" in view.json()["error"]


def test_an_agent_that_thinks_long_does_not_hold_up_other_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    release = threading.Event()
    real = tables_module.explain_and_act

    def slow_in_german_whist(agent: Any, view: Any, rng: Any) -> Any:
        if view.game == "german_whist_v0":
            assert release.wait(30), "the test never released the slow agent"
        return real(agent, view, rng)

    monkeypatch.setattr(tables_module, "explain_and_act", slow_in_german_whist)
    with _client() as client:
        slow = _create(client, game="german_whist_v0", seats=["heuristic", "heuristic"])
        fast = _create(client, game="classic_whist_v0", options={"episode": "deal"}, seats=["human"] * 4, seed=1)
        tokens = [_token(s["url"]) for s in fast["seats"]]
        for _ in range(20):  # while the German Whist agent is stuck in thought
            view = client.get(f"/api/tables/{fast['table_id']}/view", params={"token": tokens[0]}).json()
            actor = view["to_act"]
            legal = client.get(f"/api/tables/{fast['table_id']}/view", params={"token": tokens[actor]}).json()["legal"]
            response = client.post(
                f"/api/tables/{fast['table_id']}/action", json={"token": tokens[actor], "action": legal[0]["action"]}
            )
            assert response.status_code == 200
        slow_token = _token(slow["url"])
        assert client.get(f"/api/tables/{slow['table_id']}/view", params={"token": slow_token}).json()["version"] == 0
        release.set()
        for _ in range(500):
            if (
                client.get(f"/api/tables/{slow['table_id']}/view", params={"token": slow_token}).json()["phase"]
                == "over"
            ):
                break
            time.sleep(0.02)
        else:
            raise AssertionError("the agents' table did not finish after the agent was released")


def test_thirty_concurrent_clients_play_their_games(live_server: tuple[str, Any]) -> None:
    """30 clients, each at its own German Whist table against a random agent, play whole games at once."""
    import httpx
    import websockets

    base, _ = live_server

    async def one(i: int, client: httpx.AsyncClient) -> dict[str, Any]:
        made = (
            await client.post("/api/tables", json={"game": "german_whist_v0", "seats": ["human", "random"], "seed": i})
        ).json()
        ws_url = base.replace("http", "ws") + f"/api/tables/{made['table_id']}/ws?token={_token(made['url'])}"
        async with websockets.connect(ws_url) as ws:
            while True:
                msg = json.loads(await ws.recv())
                if msg["phase"] == "over":
                    return msg
                if msg["to_act"] == msg["you"] and msg["legal"]:
                    await ws.send(json.dumps({"type": "act", "action": msg["legal"][0]["action"]}))

    async def run() -> list[dict[str, Any]]:
        async with httpx.AsyncClient(base_url=base, timeout=60) as client:
            return await asyncio.wait_for(asyncio.gather(*(one(i, client) for i in range(30))), 120)

    finals = asyncio.run(run())
    assert len(finals) == 30
    assert all(sum(m["tricks_won"]) == 26 and len(m["deals"]) == 1 for m in finals)
    assert len({m["table"]["id"] for m in finals}) == 30


def test_the_console_script_binds_this_machine_unless_told(console_server: list[dict[str, Any]]) -> None:
    main([])
    main(["--host", "0.0.0.0", "--port", "8123", "--max-tables", "3", "--idle-timeout", "60"])
    assert [(run["host"], run["port"]) for run in console_server] == [("127.0.0.1", 8000), ("0.0.0.0", 8123)]
    assert [run["bound"][0][0] for run in console_server] == ["127.0.0.1", "0.0.0.0"]
    with pytest.raises(SystemExit):
        main(["--max-tables", "0"])


def test_the_console_script_prints_the_port_it_bound(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--port 0`` takes a free port and names it, in the "open" line and to uvicorn; a port in use and an address
    of no interface of this machine are one line and exit 2, before any "open" line (they were exit 3 after it); Ctrl-C
    ends the script without a traceback."""
    import socket

    import uvicorn

    served: list[tuple[int, int]] = []

    def record(server: Any, sockets: list[socket.socket]) -> None:
        served.append((server.config.port, sockets[0].getsockname()[1]))
        sockets[0].close()

    monkeypatch.setattr(uvicorn.Server, "run", record)
    main(["--port", "0"])
    port = served[0][0]
    assert port > 0 and served == [(port, port)]
    assert f"open http://127.0.0.1:{port}/ in a browser" in capsys.readouterr().out
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        taken = busy.getsockname()[1]
        for flags, says in (
            (["--port", str(taken)], f"cannot listen on 127.0.0.1 port {taken}"),
            (["--host", "192.0.2.1"], "cannot listen on 192.0.2.1 port 8000"),  # TEST-NET-1: no machine's own
        ):
            with pytest.raises(SystemExit) as stop:
                main(flags)
            out = capsys.readouterr()
            assert stop.value.code == 2 and says in out.err and "open http" not in out.out
    assert len(served) == 1

    def interrupted(server: Any, sockets: list[socket.socket]) -> None:
        sockets[0].close()
        raise KeyboardInterrupt  # what uvicorn raises again once Ctrl-C has shut the server down

    monkeypatch.setattr(uvicorn.Server, "run", interrupted)
    main(["--port", "0"])  # returns: no traceback on Ctrl-C


def test_every_address_of_the_host_is_bound_on_one_port(monkeypatch: pytest.MonkeyPatch) -> None:
    """A host with several addresses (``localhost``: 127.0.0.1 and ::1 on many machines) is bound on each, as uvicorn
    binds it, each address once, and ``--port 0`` gives them one free port."""
    import argparse
    import socket

    from whist_env.serve import app as app_module

    two = [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, 0)) for address in ("127.0.0.1", "127.0.0.2")]
    monkeypatch.setattr(socket, "getaddrinfo", lambda host, port, **kw: [*two, two[0]])
    sockets = app_module.listen_sockets(argparse.ArgumentParser(), "two-addresses", 0)
    try:
        names = [sock.getsockname() for sock in sockets]
        assert [name[0] for name in names] == ["127.0.0.1", "127.0.0.2"]
        assert names[0][1] > 0 and names[0][1] == names[1][1]
    finally:
        for sock in sockets:
            sock.close()


def test_the_open_line_writes_an_ipv6_host_in_brackets() -> None:
    """As a URL writes it: the line said ``http://::1:8000/``."""
    hosts = ("::1", "fe80::1", "127.0.0.1", "my-laptop")
    assert [url_host(h) for h in hosts] == ["[::1]", "[fe80::1]", "127.0.0.1", "my-laptop"]


@pytest.mark.parametrize(
    ("flags", "says"),
    [
        (["--port", "99999"], "--port must be 0 to 65535"),
        (["--port", "-1"], "--port must be 0 to 65535"),
        (["--idle-timeout", "nan"], "--idle-timeout must be"),  # NaN: no table would ever be closed
        (["--agent-delay", "nan"], "--agent-delay must be"),
        (["--max-body", "0"], "--max-body must be ≥ 1"),
        (["--models", "/no/such/folder"], "--models /no/such/folder: no such folder"),
        (["--host", "bad!"], "--host 'bad!' names no address"),  # said before the "open http://bad!:8000/" line
        (["--host", "a" * 70 + ".com"], "names no address"),  # a label too long for the resolver
    ],
)
def test_the_console_script_names_the_bad_flag(
    flags: list[str], says: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import uvicorn

    monkeypatch.setattr(uvicorn.Server, "run", lambda server, sockets: pytest.fail("the server started"))
    with pytest.raises(SystemExit) as stop:
        main(flags)
    assert stop.value.code == 2 and says in capsys.readouterr().err


def _tiny_model(path: Path, game_id: str) -> None:
    """An untrained MaskablePPO for ``game_id``'s observations, saved at ``path`` (only its shapes matter)."""
    import gymnasium as gym
    import numpy as np
    from gymnasium import spaces
    from sb3_contrib import MaskablePPO

    from whist_env.agents.model import ModelAgent
    from whist_env.fingerprint import save_model_metadata

    probe = ModelAgent("unused.zip", game_id)

    class Shapes(gym.Env):  # type: ignore[type-arg]
        observation_space: Any = spaces.Box(0.0, 1.0, (probe.encoder.size,), np.float32)
        action_space: Any = spaces.Discrete(probe.num_actions)

    MaskablePPO("MlpPolicy", Shapes(), n_steps=8, batch_size=8, device="cpu").save(path)
    save_model_metadata(path, game_id)  # as training does: the table checks it when the seat loads


@pytest.mark.slow
def test_model_seats_load_only_from_allowed_folders_and_show_their_probabilities(tmp_path: Path) -> None:
    models = tmp_path / "models"
    models.mkdir()
    path = models / "gw.zip"
    _tiny_model(path, "german_whist_v0")
    body = {"game": "german_whist_v0", "seats": ["human", f"model:{path}"], "study": True, "seed": 1}
    with _client() as client:
        refused = client.post("/api/tables", json=body)
        assert refused.status_code == 400 and "--models" in refused.json()["error"]
    with _client(model_dirs=(str(tmp_path / "elsewhere"),)) as client:
        refused = client.post("/api/tables", json=body)
        assert refused.status_code == 400 and "outside the model folders" in refused.json()["error"]
    with _client(model_dirs=(str(models),)) as client:
        made = _create(client, **body)
        with client.websocket_connect(f"/api/tables/{made['table_id']}/ws?token={_token(made['url'])}") as ws:
            msg = ws.receive_json()
            while msg["agents"][0]["choice"] is None:  # play until the model has chosen once
                if msg["to_act"] == 0 and msg["legal"]:
                    ws.send_json({"type": "act", "action": msg["legal"][0]["action"]})
                msg = ws.receive_json()
        choice = msg["agents"][0]["choice"]
        probabilities = dict(choice["probabilities"])
        assert choice["action"] in probabilities and abs(sum(probabilities.values()) - 1.0) < 1e-3


def test_a_failing_agent_stops_its_table_with_a_message_that_shows_no_cards(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(agent: Any, view: Any, rng: Any) -> Any:
        raise RuntimeError(f"secret hand {view.hand}")

    monkeypatch.setattr(tables_module, "explain_and_act", broken)
    with _client() as client:
        made = _create(client, game="german_whist_v0", seats=["heuristic", "heuristic"], seed=2)
        with client.websocket_connect(f"/api/tables/{made['table_id']}/ws?token={_token(made['url'])}") as ws:
            msg = ws.receive_json()
            while not msg["table"]["failure"]:
                msg = ws.receive_json()
        assert "RuntimeError" in msg["table"]["failure"] and "secret" not in msg["table"]["failure"]
        made_again = _create(client, game="german_whist_v0", seats=["human", "human"])
        assert made_again["table_id"] != made["table_id"]  # the server goes on


def test_the_game_record_is_refused_while_the_game_runs_and_replays_the_game_at_its_end() -> None:
    from whist_env.record import GameRecord
    from whist_env.rules.core import _all_slots

    with _client() as client:
        made = _create(client, game="classic_whist_v0", options={"episode": "deal"}, seats=["human"] * 4, seed=9)
        tid, tokens = made["table_id"], [_token(s["url"]) for s in made["seats"]]
        url = f"/api/tables/{tid}/record"
        running = client.get(url, params={"token": tokens[2]})
        assert running.status_code == 409 and "still running" in running.json()["error"]
        assert "hand" in running.json()["error"] and "deck" not in running.json()
        assert client.get(url, params={"token": "forged"}).status_code == 404
        assert client.get("/api/tables/nope/record", params={"token": tokens[0]}).status_code == 404
        msg = client.get(f"/api/tables/{tid}/view", params={"token": tokens[0]}).json()
        played = 0
        while msg["phase"] != "over":
            actor = msg["to_act"]
            legal = client.get(f"/api/tables/{tid}/view", params={"token": tokens[actor]}).json()["legal"]
            response = client.post(
                f"/api/tables/{tid}/action", json={"token": tokens[actor], "action": legal[-1]["action"]}
            )
            assert response.status_code == 200, response.text
            msg, played = response.json(), played + 1
            if played == 30:  # mid-game: still refused
                assert client.get(url, params={"token": tokens[actor]}).status_code == 409
        answers = [client.get(url, params={"token": t}) for t in tokens]
        assert all(a.status_code == 200 for a in answers)
        assert len({a.text for a in answers}) == 1  # the same record for every seat
        assert "attachment" in answers[0].headers["content-disposition"]
        record = GameRecord.from_json(answers[0].text)
        assert record.game_id == "classic_whist_v0" and record.options == {"episode": "deal"}
        assert len(record.actions) == played == 52
        _, state = record.replay()
        final = client.app.state.lobby.get(tid).env.game_state  # type: ignore[attr-defined]
        assert state.done and list(state.scores) == msg["scores"]
        assert all(getattr(state, n) == getattr(final, n) for n in _all_slots(type(state)))


@pytest.mark.parametrize(
    "kind",
    [
        "model(path=elsewhere/m.zip)",
        "model(elsewhere/m.zip)",
        "pimc(fallback=model(path=elsewhere/m.zip))",
        "pimc:samples=2,fallback=model:elsewhere/m.zip",
        "pretrained(path=elsewhere/p.npz)",
        "rllib:elsewhere/checkpoint",
    ],
)
def test_every_file_an_agent_spec_names_must_lie_in_the_model_folders(kind: str, tmp_path: Path) -> None:
    """Not only ``model:<path>``: the bracket form, a PIMC fallback, an exported policy and an RLlib checkpoint
    name files too (a saved model or checkpoint is a pickle: loading one runs code from the file)."""
    body = {"game": "german_whist_v0", "seats": ["human", kind]}
    with _client() as client:
        refused = client.post("/api/tables", json=body)
        assert refused.status_code == 400 and "--models" in refused.json()["error"], refused.text
    with _client(model_dirs=(str(tmp_path),)) as client:
        refused = client.post("/api/tables", json=body)
        assert refused.status_code == 400 and "outside the model folders" in refused.json()["error"]
        assert client.app.state.lobby.tables == {}  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("content", "match"),
    [
        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),  # json.loads raised RecursionError (a 500)
        (b'{"game": "german_whist_v0", "seed": ' + b"1" * 5000 + b"}", "not JSON"),  # int digit limit: ValueError
        (b'{"game": 5}', "game id"),
        (b'{"game": "german_whist_v0", "options": ""}', "options"),
        (b'{"game": "german_whist_v0", "study": "no"}', "study"),
        (b'{"game": "german_whist_v0", "seats": "hh"}', "seats"),
        (b'{"game": "german_whist_v0", "seats": ["human", 3]}', "seats"),
        (b'{"game": "german_whist_v0", "seats": ["human", "pimc(samples=0)"]}', "samples"),
        (b'{"game": "oh_hell_v0", "seats": ["human", "pimc:bid_samples=0", "random", "random"]}', "bid_samples"),
    ],
)
def test_malformed_bodies_get_a_json_error_naming_what_is_wrong(content: bytes, match: str) -> None:
    with _client(max_body=1_000_000) as client:
        response = client.post("/api/tables", content=content)
        assert response.status_code == 400 and match in response.json()["error"], response.text
        assert client.app.state.lobby.tables == {}  # type: ignore[attr-defined]
        response = client.post("/api/tables/x/action", content=content)
        assert response.status_code in (400, 404) and response.json()["error"]


def test_unknown_pages_and_methods_get_a_json_error() -> None:
    with _client() as client:
        for response, status in [
            (client.get("/api/nope"), 404),
            (client.get("/static/nope.js"), 404),
            (client.delete("/api/tables"), 405),
            (client.get("/api/tables/x/action"), 405),
        ]:
            assert response.status_code == status and response.json()["error"], response.text
