"""``whist-play`` (whist_env/cli/play.py): input parsing, whole deals through a pipe, reproducibility, clean exits."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from whist_env.cards import card_str
from whist_env.cli.play import Session, interpret, main, ordered_legal
from whist_env.record import GameRecord
from whist_env.registry import game_ids, get_spec
from whist_env.rules.core import State, TrickGame

# One whole deal of each game (options keep the episode to a single deal).
GAMES = [
    ("classic_whist_v0", ["episode=deal"]),
    ("humbug_v0", []),
    ("oh_hell_v0", ["num_players=3", "episode=deal", "hand_size=4"]),
    ("german_whist_v0", []),
    ("humbug_whist_v0", ["episode=deal"]),
]


def test_every_game_is_played_through_the_pipe() -> None:
    assert {g for g, _ in GAMES} == set(game_ids()), "a new game: add it to GAMES"


def candidate_lines(cycles: int = 60) -> str:
    """Many candidate answers, most of them garbled or illegal: every card name in order (so one of them is
    always legal within one cycle), bids, the exchange words, a number out of range and some noise."""
    lines: list[str] = []
    for _ in range(cycles):
        lines += ["hello there", "99", "", "bid 1", "bid 0", "keep", "10♠", "ts"]
        lines += [card_str(c) for c in range(52)]
    return "\n".join(lines) + "\n"


def run_cli(args: list[str], stdin: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    return subprocess.run(
        [sys.executable, "-m", "whist_env.cli.play", *args],
        input=stdin,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=timeout,
        env=env,
    )


def before_the_end(out: str) -> str:
    return out.split("════ game over ════")[0]


# ---------------------------------------------------------------------- interpret()
def _game(game_id: str, **options: object) -> tuple[TrickGame, State]:
    game = get_spec(game_id).make_rules(**options)
    return game, game.new_episode(np.random.default_rng(5))


def test_card_forms_all_name_the_same_card() -> None:
    game, state = _game("humbug_v0", mode="open_table")
    legal = ordered_legal(game, state)
    card = legal[0]
    short = card_str(card)
    forms = {short, short.lower(), short.replace("T", "10"), f"play {short}"}
    for form in forms:
        assert interpret(form, game, state) == card, form
    pretty = short[:-1].replace("T", "10") + "♣♦♥♠"["CDHS".index(short[-1])]
    assert interpret(pretty, game, state) == card


def test_a_number_picks_from_the_list_in_the_order_shown() -> None:
    game, state = _game("humbug_v0")
    legal = ordered_legal(game, state)
    assert interpret("1", game, state) == legal[0]
    assert interpret(str(len(legal)), game, state) == legal[-1]
    # shown as the hand is: spades first, highest first
    assert legal == sorted(legal, key=lambda c: (-(c // 13), -c))
    message = interpret(str(len(legal) + 1), game, state)
    assert isinstance(message, str) and "no choice" in message


@pytest.mark.parametrize("text", ["", "   ", "xyz", "1S", "ZZ", "bid", "Q♠♠", "bid 3", "keep", "0", "-1"])
def test_garbled_input_gets_a_message(text: str) -> None:
    game, state = _game("classic_whist_v0", episode="deal")
    answer = interpret(text, game, state)
    assert isinstance(answer, str) and answer


def test_a_pasted_page_is_not_said_back() -> None:
    game, state = _game("classic_whist_v0", episode="deal")
    answer = interpret("x" * 100_000, game, state)  # was quoted back whole
    assert isinstance(answer, str) and "cannot read 'xxx" in answer and len(answer) < 400


def test_illegal_card_is_explained() -> None:
    game, state = _game("classic_whist_v0", episode="deal")
    hand = state.hands[state.to_act]
    missing = next(c for c in range(52) if not (hand >> c) & 1)
    message = interpret(card_str(missing), game, state)
    assert isinstance(message, str)
    assert "not allowed" in message and "not in the hand" in message and "legal:" in message


def test_must_follow_is_explained() -> None:
    game, state = _game("classic_whist_v0", episode="deal")
    rng = np.random.default_rng(0)
    for _ in range(200):  # find a follower who holds the led suit and another suit
        if state.trick:
            hand = state.hands[state.to_act]
            led = state.led_suit
            off = [c for c in range(52) if (hand >> c) & 1 and c // 13 != led]
            if off and hand & (0x1FFF << (13 * led)):
                message = interpret(card_str(off[0]), game, state)
                assert isinstance(message, str) and "must follow" in message
                return
        game.step(state, game.legal_actions(state)[0], rng)
        if state.done:
            state = game.new_episode(rng)
    pytest.fail("no position where a follower could revoke")


def test_bids_and_the_hook_rule() -> None:
    game, state = _game("oh_hell_v0", num_players=3, episode="deal", hand_size=4)
    rng = np.random.default_rng(0)
    game.step(state, 52 + 1, rng)  # bid 1
    assert interpret("2", game, state) == 52 + 2
    assert interpret("bid 2", game, state) == 52 + 2
    assert interpret("BID 0", game, state) == 52
    game.step(state, 52 + 1, rng)
    # the dealer may not make the bids add up to 4: 1 + 1 + 2
    message = interpret("2", game, state)
    assert isinstance(message, str) and "hook rule" in message
    message = interpret("9", game, state)
    assert isinstance(message, str) and "no bid 9" in message
    message = interpret("AS", game, state)
    assert isinstance(message, str) and "bidding" in message


def test_keep_and_exchange() -> None:
    game, state = _game("humbug_whist_v0")
    assert interpret("keep", game, state) == 52
    assert interpret("K", game, state) == 52
    assert interpret("Exchange", game, state) == 53
    assert interpret("e", game, state) == 53
    assert interpret("2", game, state) == 53
    message = interpret("AS", game, state)
    assert isinstance(message, str) and "KEEP" in message


# ---------------------------------------------------------------------- whole deals
@pytest.mark.parametrize(("game_id", "options"), GAMES, ids=[g for g, _ in GAMES])
def test_a_whole_deal_through_a_pipe(game_id: str, options: list[str]) -> None:
    args = ["--game", game_id, "--seed", "5", "--show-hands"]
    for opt in options:
        args += ["--option", opt]
    proc = run_cli(args, candidate_lines())
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    out = proc.stdout
    assert "════ game over ════" in out
    assert re.search(r"^result: .*player_0 \(you\)", out, re.M)
    assert re.search(r"^(you win|you lose|a draw)", out, re.M)
    assert "! cannot read 'hello there'" in out  # garbled
    assert "! not allowed:" in out  # illegal
    assert "every hand of deal 1 as dealt:" in out
    # before the end, no other seat's hand is ever shown card by card (only counts and known cards)
    for line in before_the_end(out).splitlines():
        assert not re.match(r"^[▶ ] player_[1-7]: ♠", line), line


def test_same_seed_same_game() -> None:
    lines = candidate_lines()
    args = ["--game", "german_whist_v0", "--seed", "11", "--opponents", "random"]
    first, second = run_cli(args, lines), run_cli(args, lines)
    assert first.returncode == second.returncode == 0
    assert first.stdout == second.stdout
    third = run_cli(["--game", "german_whist_v0", "--seed", "12", "--opponents", "random"], lines)
    assert third.stdout != first.stdout


def test_end_of_input_stops_cleanly() -> None:
    proc = run_cli(["--game", "humbug_v0", "--seed", "1"], "nonsense\n")
    assert proc.returncode == 0, proc.stderr
    assert "game stopped (end of input)" in proc.stdout
    assert "Traceback" not in proc.stderr


def _session(args: dict[str, object], text: str) -> tuple[int, str]:
    out = io.StringIO()
    session = Session(
        str(args.get("game", "humbug_v0")),
        dict(args.get("options", {})),  # type: ignore[call-overload]
        int(args.get("seat", 0)),  # type: ignore[call-overload]
        list(args.get("opponents", ["heuristic"])),  # type: ignore[call-overload]
        int(args.get("seed", 0)),  # type: ignore[call-overload]
        bool(args.get("show_hands", False)),
        stdin=io.StringIO(text),
        stdout=out,
    )
    return session.run(), out.getvalue()


def test_quit_help_and_table() -> None:
    status, out = _session({}, "help\ntable\nquit\n")
    assert status == 0
    assert "how to answer" in out
    assert out.count("──── your turn") == 2  # 'table' shows it again
    assert "game stopped (you quit)" in out


def test_hidden_hand_is_studied_then_hidden() -> None:
    """Humbug hidden-hand: both hands before your first card, afterwards only counts (RULES.md §3.3)."""
    status, out = _session({"seat": 1, "seed": 2}, candidate_lines(30))
    assert status == 0
    turns = before_the_end(out).split("──── your turn")
    assert "known:" in turns[1]  # the study step: the opponent's 26 cards
    assert all("known:" not in turn for turn in turns[2:])


def test_the_seat_and_a_list_of_opponents() -> None:
    status, out = _session(
        {
            "game": "oh_hell_v0",
            "options": {"num_players": 4, "episode": "deal", "hand_size": 2},
            "seat": 2,
            "opponents": ["random", "heuristic", "random"],
        },
        candidate_lines(10),
    )
    assert status == 0
    assert "you are player_2; player_0 heuristic, player_1 random, player_3 random" in out
    assert "player_2 (you)" in out and "════ game over ════" in out


def test_opponents_given_as_agent_specs_with_commas_inside() -> None:
    """``--opponents`` splits between specs, not inside one: a colon spec's commas and bracketed ones stay."""
    from whist_env.search.pimc import PIMCAgent

    session = Session(
        "classic_whist_v0",
        {"episode": "deal"},
        0,
        ["pimc:samples=2,max_tricks=1", "random", "pimc(samples=3, fallback=random)"],
        0,
    )
    first, second, third = (session.agents[s] for s in (1, 2, 3))
    assert isinstance(first, PIMCAgent) and (first.samples, first.max_tricks) == (2, 1)
    assert isinstance(third, PIMCAgent) and third.samples == 3 and type(third.fallback).__name__ == "RandomAgent"
    proc = run_cli(
        ["--game", "humbug_v0", "--seed", "3", "--opponents", "pimc:samples=2,max_tricks=1"], candidate_lines(5)
    )
    assert proc.returncode == 0, proc.stderr
    assert "player_1 pimc:samples=2,max_tricks=1" in proc.stdout


def test_german_whist_draws_reach_only_the_drawer() -> None:
    status, out = _session({"game": "german_whist_v0", "seed": 4}, candidate_lines())
    assert status == 0
    text = before_the_end(out)
    assert "you receive" in text
    assert "drew face down:" not in text  # the omniscient render appears only with --show-hands at the end
    assert "stock below the face-up card" not in text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--game", "humbug_v0", "--seat", "5"], "--seat must be a seat 0..1"),
        (["--game", "humbug_v0", "--opponents", "genius"], "unknown agent 'genius'"),
        (["--game", "humbug_v0", "--option", "mode=closed"], "mode='closed' is not allowed"),
        (["--game", "classic_whist_v0", "--opponents", "random,random"], "give one opponent for all of them or 3"),
        (["--game", "humbug_v0", "--opponents", "model:/nonexistent/model.zip"], "no saved model at /nonexistent"),
        (["--game", "humbug_v0", "--opponents", "pimc(samples=2"], "unbalanced brackets"),
        (["--game", "humbug_v0", "--opponents", "pimc:samples=2,k=1"], "pimc has no parameter 'k'"),
        (["--game", "humbug_v0", "--opponents", "pretrained:/nowhere/p.npz"], "no exported policy at /nowhere/p.npz"),
    ],
)
def test_bad_arguments_exit_2_with_a_message(args: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(args) == 2
    assert message in capsys.readouterr().err


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
def test_on_a_terminal() -> None:
    """Through a pseudo-terminal (no echo of the answers, line editing by the terminal): a card, then quit."""
    import pty
    import select

    leader, follower = pty.openpty()
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "whist_env.cli.play",
            "--game",
            "humbug_v0",
            "--seed",
            "3",
            "--option",
            "mode=open_table",
        ],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        env=env,
    )
    os.close(follower)
    seen = b""

    def read_until(marker: bytes, timeout: float = 30.0) -> None:
        nonlocal seen
        while marker not in seen:
            ready, _, _ = select.select([leader], [], [], timeout)
            if not ready:
                raise AssertionError(f"no {marker!r} within {timeout} s; got {seen.decode(errors='replace')[-500:]}")
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the process closed the terminal
                break
            if not chunk:
                break
            seen += chunk

    try:
        read_until(b"your card> ")
        os.write(leader, b"xyz\n")
        read_until(b"cannot read 'xyz'")
        os.write(leader, b"1\n")
        read_until(b"wins trick 1")
        os.write(leader, b"quit\n")
        read_until(b"bye")
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(leader)


def test_simultaneous_exchange_stays_hidden_from_the_dealer() -> None:
    """RULES.md §1.4 option: the dealer does not learn the non-dealer's decision before making his own."""
    status, out = _session(
        {"game": "humbug_whist_v0", "options": {"exchange_order": "simultaneous"}, "seed": 1}, "keep\nquit\n"
    )
    assert status == 0
    assert "dealer player_0" in out  # the human deals, so the opponent decides first
    assert "player_1 has decided: exchange: player_0 ?, player_1 ?" in out


# ---------------------------------------------------------------------- --record (bug reports)
def test_record_writes_the_whole_game_which_replays_to_its_end(tmp_path: Path) -> None:
    path = tmp_path / "game.json"
    args = ["--game", "oh_hell_v0", "--option", "num_players=3", "--option", "episode=deal", "--option", "hand_size=4"]
    proc = run_cli([*args, "--seed", "3", "--record", str(path)], candidate_lines())
    assert proc.returncode == 0, proc.stderr
    assert f"written to {path}" in proc.stdout
    record = GameRecord.from_json(path.read_text(encoding="utf-8"))
    assert record.game_id == "oh_hell_v0"
    assert record.options == {"num_players": 3, "episode": "deal", "hand_size": 4}
    game, state = record.replay()
    assert state.done and len(record.actions) == 3 + 3 * 4  # the bids, then every card
    result = re.search(r"^result: (.*)$", proc.stdout, re.M)
    assert result is not None
    shown = [float(part.split()[-1]) for part in result.group(1).split(", ")]
    assert shown == [float(r) for r in state.returns]
    # the same seed and answers, played again without --record: the same game
    again = run_cli([*args, "--seed", "3"], candidate_lines())
    assert again.stdout == proc.stdout.replace(f"game record ({len(record.actions)} actions) written to {path}\n", "")


def test_record_keeps_what_was_played_when_the_player_quits(tmp_path: Path) -> None:
    path = tmp_path / "stopped.json"
    out = io.StringIO()
    session = Session("humbug_v0", {}, 1, ["heuristic"], 4, stdin=io.StringIO("1\nquit\n"), stdout=out, record=path)
    assert session.run() == 0
    assert "game stopped (you quit)" in out.getvalue()
    record = GameRecord.from_json(path.read_text(encoding="utf-8"))
    assert 1 <= len(record.actions) < 52
    _, state = record.replay()
    assert not state.done and state.to_act == 1  # the player's turn again, where they quit
    assert sum(h.bit_count() for h in state.hands) == 52 - len(record.actions)


def test_an_unwritable_record_file_gives_status_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "missing-folder" / "game.json"
    session = Session("humbug_v0", {}, 0, ["random"], 1, stdin=io.StringIO("quit\n"), stdout=io.StringIO(), record=path)
    assert session.run() == 2
    err = capsys.readouterr().err
    assert f"cannot write --record {path}" in err
    spare = Path(err.rsplit("written to ", 1)[1].strip())  # the game is not lost: it is where the message says
    try:
        assert GameRecord.from_json(spare.read_text(encoding="utf-8")).game_id == "humbug_v0"
    finally:
        spare.unlink()
