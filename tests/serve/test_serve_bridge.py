"""``whist-bot connect`` (whist_env.serve.bridge): the Python starter bot plays a whole game through it against a live
server, and again through a connection that drops mid-game; the URLs it takes; how it ends when the server or the
bot says no; and it leaves no process behind."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from whist_env.serve import bridge

ROOT = Path(__file__).resolve().parents[2]
STARTER = ROOT / "whist_env" / "evaluation" / "starters" / "starter.py"


def _open(base: str, game: str, options: dict[str, Any], seats: list[str], seed: int) -> dict[str, Any]:
    response = httpx.post(
        base + "/api/tables", json={"game": game, "options": options, "seats": seats, "seed": seed}, timeout=30
    )
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


def _view(base: str, made: dict[str, Any], seat: int) -> dict[str, Any]:
    token = made["seats"][seat]["url"].split("token=")[1]
    view = httpx.get(f"{base}/api/tables/{made['table_id']}/view", params={"token": token}, timeout=30)
    return view.json()  # type: ignore[no-any-return]


def _children() -> list[int]:
    """The processes whose parent is this one (Linux: read from /proc)."""
    me, found = os.getpid(), []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == me:
                found.append(int(entry))
    return found


def _starter(tmp_path: Path) -> list[str]:
    """The Python starter bot, copied where its command line names this test alone."""
    copy = tmp_path / "mybot.py"
    copy.write_text(STARTER.read_text(encoding="utf-8"), encoding="utf-8")
    return [sys.executable, str(copy)]


def test_the_python_starter_plays_a_whole_game_through_the_bridge(
    live_server: tuple[str, Any], tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """Three deals of Oh Hell (hands of 2, 1 and 2 cards), the starter bot at seat 0 connected with the table page's
    link and --token, as the lobby shows it; the bridge returns 0 once the game is over, and the bot has exited."""
    base, _ = live_server
    made = _open(base, "oh_hell_v0", {"num_players": 3, "max_cards": 2}, ["bot", "heuristic", "random"], seed=5)
    page, token = (base + made["seats"][0]["url"]).split("?token=")
    before = _children()
    assert bridge.main([page, "--token", token, "--", *_starter(tmp_path)]) == 0
    assert _children() == before, "the bot process outlived the bridge"
    view = _view(base, made, 1)
    assert view["phase"] == "over" and len(view["deals"]) == 3 and view["table"]["connected"] == [False, None, None]
    said = capfd.readouterr().err
    assert "plays seat 0 of oh_hell_v0" in said and "the game is over" in said and token not in said


class Proxy:
    """A TCP relay to the server that cuts every connection through it once, after ``cut_after`` bytes came from
    the server: to the bridge, the network failed (no close frame)."""

    def __init__(self, port: int, cut_after: int) -> None:
        self.port, self.cut_after = port, cut_after
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.address = self.listener.getsockname()[1]
        self.accepted, self.relayed, self.cut = 0, 0, False
        self.lock = threading.Lock()
        self.sockets: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.port))
            with self.lock:
                self.accepted += 1
                self.sockets += [client, upstream]
            threading.Thread(target=self._pump, args=(client, upstream, False), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client, True), daemon=True).start()

    def _pump(self, source: socket.socket, target: socket.socket, from_server: bool) -> None:
        try:
            while data := source.recv(65536):
                target.sendall(data)
                if from_server:
                    with self.lock:
                        self.relayed += len(data)
                        cut = not self.cut and self.relayed > self.cut_after
                        self.cut = self.cut or cut
                    if cut:
                        for s in (source, target):
                            s.shutdown(socket.SHUT_RDWR)
                        return
        except OSError:
            pass
        finally:
            for s in (source, target):
                try:
                    s.close()
                except OSError:
                    pass

    def cut_now(self) -> None:
        """Cut every connection through the relay now."""
        with self.lock:
            self.cut = True
            for s in self.sockets:
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def close(self) -> None:
        self.listener.close()
        with self.lock:
            for s in self.sockets:
                try:
                    s.close()
                except OSError:
                    pass


def test_the_bridge_survives_a_dropped_connection(
    live_server: tuple[str, Any], tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """The connection is cut once in the middle of a German Whist deal: the bridge connects again (answering the new
    hello itself), the bot plays on as if nothing happened, and the game ends."""
    base, _ = live_server
    made = _open(base, "german_whist_v0", {}, ["heuristic", "bot"], seed=2)
    proxy = Proxy(int(base.rsplit(":", 1)[1]), cut_after=1_500)  # a few acts into the deal (the frames are compressed)
    try:
        url = f"ws://127.0.0.1:{proxy.address}/api/tables/{made['table_id']}/bot"
        token = made["seats"][1]["url"].split("token=")[1]
        assert bridge.main([f"{url}?token={token}", "--", *_starter(tmp_path)]) == 0
    finally:
        proxy.close()
    assert proxy.cut and proxy.accepted == 2, (proxy.cut, proxy.accepted, proxy.relayed)
    view = _view(base, made, 0)
    assert view["phase"] == "over" and len(view["deals"]) == 1
    said = capfd.readouterr().err
    assert "the connection dropped" in said and "connected again" in said and "the game is over" in said
    assert said.count("plays seat 1") == 1  # the bot saw one hello
    assert "refused" not in said  # no act went to the bot twice, no answer was lost or sent twice


# A bot that says on stderr when it is sent an act twice, and thinks on two decisions: long on its 5th (the
# connection is cut as it begins, so the server asks again while it thinks) and briefly on its 10th (the connection is
# cut as it begins, and its answer comes while there is no connection).
SLOW_BOT = """
import json, pathlib, sys, time
marks, seen = pathlib.Path(sys.argv[1]), set()
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "hello":
        print(json.dumps({"type": "hello", "protocol": 1, "name": "slow"}), flush=True)
    elif message["type"] == "act":
        key = (message["deal"], message["decision"])
        if key in seen:
            print("DUPLICATE act", key, file=sys.stderr, flush=True)
        seen.add(key)
        if len(seen) in (5, 10):
            (marks / str(len(seen))).write_text("thinking")
            time.sleep(1.0 if len(seen) == 5 else 0.05)
        print(message["legal"][0]["id"], flush=True)
    elif message["type"] == "goodbye":
        break
"""


def test_a_bot_is_never_asked_twice_nor_its_answer_lost_across_reconnections(
    live_server: tuple[str, Any], tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """The connection is cut while the bot thinks (the server's act again is not passed on) and again just before it
    answers (its answer, made while no connection is open, is sent when the server asks again): the bot sees each act
    once, the server refuses nothing, and the game ends."""
    base, _ = live_server
    made = _open(base, "german_whist_v0", {}, ["heuristic", "bot"], seed=2)
    proxy = Proxy(int(base.rsplit(":", 1)[1]), cut_after=10**9)
    marks = tmp_path / "marks"
    marks.mkdir()
    (tmp_path / "slow.py").write_text(SLOW_BOT, encoding="utf-8")

    def cut_when_thinking() -> None:
        for mark in ("5", "10"):
            deadline = time.monotonic() + 60
            while not (marks / mark).exists() and time.monotonic() < deadline:
                time.sleep(0.005)
            proxy.cut_now()

    watcher = threading.Thread(target=cut_when_thinking, daemon=True)
    watcher.start()
    try:
        url = f"ws://127.0.0.1:{proxy.address}/api/tables/{made['table_id']}/bot"
        command = [sys.executable, str(tmp_path / "slow.py"), str(marks)]
        assert bridge.main([url, "--token", made["seats"][1]["url"].split("token=")[1], "--", *command]) == 0
    finally:
        watcher.join(timeout=60)
        proxy.close()
    assert proxy.accepted == 3 and _view(base, made, 0)["phase"] == "over"
    said = capfd.readouterr().err
    assert said.count("connected again") == 2 and "the game is over" in said
    assert "DUPLICATE" not in said and "refused" not in said


def test_the_bridge_stops_when_the_bot_speaks_another_version_or_exits(
    live_server: tuple[str, Any], capfd: pytest.CaptureFixture[str]
) -> None:
    base, _ = live_server
    made = _open(base, "german_whist_v0", {}, ["bot", "bot"], seed=1)
    tokens = [s["url"].split("token=")[1] for s in made["seats"]]
    old = 'import sys; sys.stdin.readline(); print(\'{"type": "hello", "protocol": 0}\', flush=True); sys.stdin.read()'
    page = base + f"/table/{made['table_id']}"
    assert bridge.main([page, "--token", tokens[0], "--", sys.executable, "-c", old]) == 1
    said = capfd.readouterr().err
    assert "another protocol version" in said
    quits = "import sys; sys.stdin.readline(); sys.exit(3)"  # exits instead of answering the hello
    assert bridge.main([page, "--token", tokens[1], "--", sys.executable, "-c", quits]) == 1
    assert "the bot exited (status 3) before the game was over" in capfd.readouterr().err
    waits = "import sys; sys.stdin.read()"
    assert bridge.main([page, "--token", "not-a-token", "--", sys.executable, "-c", waits]) == 1
    assert "no open table holds this token" in capfd.readouterr().err
    assert _view(base, made, 0)["version"] == 0


def _running(text: str) -> list[int]:
    """The processes whose command line holds ``text`` (Linux: read from /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if text.encode() in Path(f"/proc/{entry}/cmdline").read_bytes():
                    found.append(int(entry))
            except OSError:
                continue
    return found


def test_ctrl_c_ends_the_bridge_and_its_bot(live_server: tuple[str, Any], tmp_path: Path) -> None:
    """``python -m whist_env.serve.bridge`` waits with its bot for a human who does not play; Ctrl-C (SIGINT to the
    bridge alone: the bot runs in a session of its own) ends both, with status 130."""
    base, _ = live_server
    made = _open(base, "german_whist_v0", {}, ["human", "bot"], seed=9)  # the human leads, and never plays
    bot = _starter(tmp_path)
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    command = [sys.executable, "-m", "whist_env.serve.bridge", base + made["seats"][1]["url"], "--", *bot]
    process = subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not _view(base, made, 0)["table"]["connected"][1]:  # the bot answered its hello
            assert process.poll() is None and time.monotonic() < deadline, "the bridge did not connect"
            time.sleep(0.05)
        assert [pid for pid in _running(bot[1]) if pid != process.pid], "the bot does not run"
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=30) == 130
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)
    assert "interrupted" in (process.stderr.read() if process.stderr else "")
    assert _running(bot[1]) == [], "the bot outlived the bridge"
    deadline = time.monotonic() + 30
    while _view(base, made, 0)["table"]["connected"][1]:  # the server heard the bot go
        assert time.monotonic() < deadline
        time.sleep(0.05)


def test_the_bridge_takes_a_table_link_or_the_websocket_url() -> None:
    want = "ws://h:8/api/tables/T1/bot?token=a%2Bb"
    assert bridge.bot_url("http://h:8/table/T1?token=a+b") == "ws://h:8/api/tables/T1/bot?token=a%20b"
    assert bridge.bot_url("http://h:8/table/T1", "a+b") == want
    assert bridge.bot_url("ws://h:8/api/tables/T1/bot", "a+b") == want
    assert bridge.bot_url("http://h:8/api/tables/T1/ws?token=a%2Bb") == want  # the human seat's URL, by mistake
    assert bridge.bot_url("https://class.example/whist/table/T1/", "t") == (
        "wss://class.example/whist/api/tables/T1/bot?token=t"
    )
    for url, token, why in [
        ("http://h:8/table/T1", None, "no token"),
        ("http://h:8/table/T1?token=x", "y", "differ"),
        ("http://h:8/lobby", "t", "names no table"),
        ("ftp://h/table/T1", "t", "not a table's address"),
        ("h:8/table/T1", "t", "not a table's address"),
        ("http://h:99999/table/T1", "t", "no valid port"),  # the connection would fail later, without a word
    ]:
        with pytest.raises(ValueError, match=why):
            bridge.bot_url(url, token)


def test_the_command_line_needs_a_url_and_a_bot_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert bridge.main(["http://h:8/table/T1", "--token", "t"]) == 2
    assert "after --" in capsys.readouterr().err
    assert bridge.main(["--", "python", "mybot.py"]) == 2  # no URL
    assert bridge.main(["http://h:8/lobby", "--token", "t", "--", "python", "mybot.py"]) == 2
    assert "names no table" in capsys.readouterr().err
    for token in (["--token", "-x1"], ["--token=-x1"]):  # a token may begin with "-": it is still the token
        assert bridge.main(["http://h:8/lobby", *token, "--", "python", "mybot.py"]) == 2
        assert "names no table" in capsys.readouterr().err
    for seconds in ("nan", "-1"):  # NaN: the bridge would never give up
        assert bridge.main(["http://h:8/table/T1", "--token", "t", "--reconnect-for", seconds, "--", "python"]) == 2
        assert "--reconnect-for must be" in capsys.readouterr().err
    assert bridge.main(["--help"]) == 0 and "--reconnect-for" in capsys.readouterr().out
