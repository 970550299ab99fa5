"""Every error of the command-line tools is one line on stderr and exit status 2, never a traceback."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from whist_env.cli.demo import demo_main
from whist_env.cli.eval import main as eval_main
from whist_env.cli.play import main as play_main
from whist_env.fingerprint import save_model_metadata

ROOT = Path(__file__).resolve().parents[2]


def _fails(main: Callable[[list[str]], int], argv: list[str], capsys: Any) -> str:
    """Run a CLI that must fail; return its stderr after checking it is one line and the status is 2."""
    try:
        status = main(argv)
    except SystemExit as stop:  # argparse errors
        status = stop.code  # type: ignore[assignment]
    err = capsys.readouterr().err
    assert status == 2, err
    assert err.endswith("\n") and err.count("\n") == 1, f"not one line: {err!r}"
    assert "Traceback" not in err
    return err


def _model_for(tmp_path: Path, game_id: str, name: str = "m.zip") -> Path:
    path = tmp_path / name
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("data", "{}")
    save_model_metadata(path, game_id, {})
    return path


def test_eval_with_a_missing_model(capsys: Any) -> None:
    err = _fails(eval_main, ["german_whist_v0", "--agents", "model:/x.zip", "random", "--quiet"], capsys)
    assert err.startswith("whist-eval: error:") and "no saved model at /x.zip" in err and ".zip.zip" not in err


def test_eval_with_a_file_that_is_not_a_model(tmp_path: Path, capsys: Any) -> None:
    bad = tmp_path / "notes.zip"
    bad.write_text("hello")
    err = _fails(eval_main, ["german_whist_v0", "--agents", f"model:{bad}", "random", "--quiet"], capsys)
    assert "is not a saved model" in err


def test_eval_with_a_model_of_another_game(tmp_path: Path, capsys: Any) -> None:
    path = _model_for(tmp_path, "humbug_v0")
    err = _fails(eval_main, ["german_whist_v0", "--agents", f"model:{path}", "random", "--quiet"], capsys)
    assert "trained for humbug_v0, not german_whist_v0" in err


@pytest.mark.parametrize("args", [["--seed", "-1"], ["--deals", "0"], ["--option", "noequals"], ["--option", "=3"]])
def test_eval_with_a_bad_argument(args: list[str], capsys: Any) -> None:
    err = _fails(eval_main, ["humbug_v0", "--quiet", *args], capsys)
    assert err.startswith("whist-eval: error:") and "--help" in err


def test_eval_refuses_workers_with_batched(capsys: Any) -> None:
    err = _fails(eval_main, ["german_whist_v0", "--batched", "--workers", "2", "--deals", "2", "--quiet"], capsys)
    assert "--workers 2 applies to the AEC arena only: drop --workers (or --batched)" in err


def test_eval_with_an_unknown_game_or_option(capsys: Any) -> None:
    assert "unknown game" in _fails(eval_main, ["no_such_game", "--deals", "1", "--quiet"], capsys)
    assert "(did you mean 'german_whist_v0'?)" in _fails(eval_main, ["german_wist", "--deals", "1", "--quiet"], capsys)
    assert "num_deals" in _fails(eval_main, ["humbug_v0", "--deals", "1", "--quiet", "--option", "num_deals=x"], capsys)
    # found by a hostile-input audit: a value Python's parser cannot take (MemoryError, RecursionError) stopped
    # whist-eval with "MemoryError:"; it is now a string, which the game's options refuse by name
    for value in ("-" * 100_000 + "1", "~" * 5000 + "1"):
        assert "num_deals=" in _fails(
            eval_main, ["humbug_v0", "--deals", "1", "--quiet", "--option", f"num_deals={value}"], capsys
        )


def test_eval_checks_every_game_and_the_plot_before_it_plays(tmp_path: Path, capsys: Any) -> None:
    assert eval_main(["humbug_v0", "no_such_game", "--deals", "1", "--quiet"]) == 2
    out, err = capsys.readouterr()
    assert "unknown game 'no_such_game'" in err and out == ""  # humbug_v0 was not played first
    assert "give it alone" in _fails(eval_main, ["all", "humbug_v0", "--deals", "1", "--quiet"], capsys)
    ladder = ["humbug_v0", "--ladder", "--deals", "1", "--quiet", "--no-cache"]
    assert "does not exist" in _fails(eval_main, [*ladder, "--plot", str(tmp_path / "no" / "p.png")], capsys)
    assert "give a file ending in one of" in _fails(eval_main, [*ladder, "--plot", str(tmp_path / "p.npz")], capsys)
    (tmp_path / "a_file").write_text("")
    records = ["humbug_v0", "--deals", "1", "--quiet", "--records", str(tmp_path / "a_file")]
    assert "--records" in _fails(eval_main, records, capsys) and (tmp_path / "a_file").read_text() == ""


def test_eval_keeps_the_games_played_before_an_error(tmp_path: Path, capsys: Any) -> None:
    """A game's options refused after another game was played: the played one is still written."""
    target = tmp_path / "r.json"
    argv = ["oh_hell_v0", "german_whist_v0", "--option", "num_players=3", "--deals", "2", "--quiet"]
    status = eval_main([*argv, "--json", str(target)])
    err = capsys.readouterr().err
    assert status == 2 and "german_whist_v0" in err and "the 1 game(s) played before it" in err
    assert json.loads(target.read_text())["game"] == "oh_hell_v0"


def test_eval_with_an_unwritable_json_keeps_the_report(tmp_path: Path, capsys: Any) -> None:
    target = tmp_path / "no_such_dir" / "r.json"
    status = eval_main(["humbug_v0", "--deals", "2", "--quiet", "--json", str(target)])
    out, err = capsys.readouterr()
    assert status == 2 and "| heuristic |" in out  # the report was printed
    assert err.count("\n") == 1 and f"cannot write --json {target}" in err
    spare = Path(err.rsplit("written to ", 1)[1].strip())
    try:
        assert json.loads(spare.read_text())["game"] == "humbug_v0"  # and saved where the message says
    finally:
        spare.unlink()


def test_eval_debug_shows_the_traceback() -> None:
    with pytest.raises(Exception, match="no saved model"):
        eval_main(["german_whist_v0", "--agents", "model:/x.zip", "random", "--quiet", "--debug"])


def test_demo_with_a_bad_option_value(capsys: Any) -> None:
    err = _fails(demo_main, ["--game", "german_whist_v0", "--option", "num_deals=x", "--quiet"], capsys)
    assert err.startswith("whist-demo: error:") and "num_deals" in err
    for name in ("render_mode", "game_id", "raw"):  # make()'s own keywords: a TypeError, an AttributeError
        err = _fails(demo_main, ["--game", "german_whist_v0", "--option", f"{name}=1", "--quiet"], capsys)
        assert err.startswith(f"whist-demo: error: german_whist_v0 has no option '{name}'. Allowed options: "), err
    assert "--seed" in _fails(demo_main, ["--seed", "-1"], capsys)
    assert "--help" in _fails(demo_main, ["--game", "chess"], capsys)
    for command in (demo_main, play_main):  # a misspelt game gets the closest id, as in whist-eval
        err = _fails(command, ["--game", "german_whist"], capsys)
        assert "unknown game 'german_whist' (did you mean 'german_whist_v0'?)" in err and "\n" not in err.strip()


def test_play_with_a_bad_option_or_model(tmp_path: Path, capsys: Any) -> None:
    err = _fails(play_main, ["--game", "humbug_v0", "--option", "mode=upside_down", "--seed", "1"], capsys)
    assert err.startswith("whist-play: error:") and "mode" in err
    path = _model_for(tmp_path, "german_whist_v0")
    err = _fails(play_main, ["--game", "german_whist_v0", "--option", "include_history=False",
                             "--opponents", f"model:{path}", "--seed", "1"], capsys)  # fmt: skip
    assert "trained with include_history=True, loading for include_history=False" in err
    assert "--seed" in _fails(play_main, ["--seed", "-3"], capsys)


@pytest.mark.parametrize(
    "argv",
    [
        ["whist_env.cli.eval", "german_whist_v0", "--agents", "model:/x.zip", "random", "--quiet"],
        ["whist_env.cli.demo", "--game", "german_whist_v0", "--option", "num_deals=x"],
    ],
)
def test_the_installed_commands_exit_2_with_one_line(argv: list[str]) -> None:
    done = subprocess.run([sys.executable, "-m", *argv], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr


def test_ctrl_c_stops_whist_eval_and_its_workers_in_one_line() -> None:
    """One SIGINT to the process group (what a terminal's Ctrl-C sends): one line, exit 130, no traceback."""
    import os
    import signal
    import subprocess
    import sys
    import time

    code = "import sys; from whist_env.cli.eval import main; sys.exit(main(sys.argv[1:]))"
    args = ["german_whist_v0", "--agents", "heuristic", "random", "--deals", "200000", "--workers", "2"]
    proc = subprocess.Popen(
        [sys.executable, "-c", code, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # a background shell ignores it
    )
    try:
        deadline = time.monotonic() + 120
        assert proc.stderr is not None
        while "deals" not in proc.stderr.readline():  # the progress bar: the workers are playing
            assert time.monotonic() < deadline and proc.poll() is None, "whist-eval did not start"
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    assert "whist-eval: interrupted" in err
