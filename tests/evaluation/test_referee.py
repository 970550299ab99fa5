"""The referee (whist_env.evaluation.referee): every library agent run as a bot plays the actions it plays in process;
a bot gets the observation and mask ``env.observe()`` gives when it asks, a scrubbed environment and a fresh folder;
a sandbox prefix wraps its command; the limits this platform has are all there on Linux."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import whist_env
from whist_env.agents.factory import make_agent
from whist_env.evaluation.referee import (
    BotCommand,
    BotLedger,
    Limits,
    Referee,
    Seating,
    children,
    is_subreaper,
    platform_limits,
    stand_in,
    subreaper,
)
from whist_env.record import GameRecord
from whist_env.registry import game_ids, get_spec

HELPER = (sys.executable, "-m", "whist_env.evaluation.bot")
CHEAP_SEARCH = {"oh_hell_v0": "pimc(samples=1, bid_samples=1, max_tricks=3)"}  # Oh Hell's playouts, kept short


def library_bot(spec: str) -> BotCommand:
    return BotCommand(spec, (*HELPER, spec))


def play_script(
    folder: Path, name: str, text: str, args: tuple[str, ...] = (), deals: int = 1, **referee: Any
) -> BotLedger:
    """The ledger of the bot script ``text`` (saved in ``folder`` as ``<name>.py``, run with ``args``) after
    ``deals`` deals of German Whist at seat 0 against the random agent as a bot; ``referee``: the Referee's keywords
    (``limits``, ``seed``, ...)."""
    bot = folder / f"{name}.py"
    bot.write_text(text)
    spec = get_spec("german_whist_v0")
    command = BotCommand(name, (sys.executable, bot.name, *args), str(bot))
    ledgers = {name: BotLedger(name), "random": BotLedger("random")}
    Referee(spec, dict(spec.single_deal), **referee).play_half(
        Seating((command, library_bot("random")), (1, 2)), range(deals), ledgers
    )
    return ledgers[name]


def play(game_id: str, specs: tuple[str, str], deals: int, seeds: tuple[int, ...] = (11, 12, 13, 14)) -> list[Any]:
    """One half: ``specs[0]`` at seat 0, ``specs[1]`` at every other seat (one process each): the game records."""
    spec = get_spec(game_id)
    referee = Referee(spec, dict(spec.single_deal), Limits(decision_s=30, start_s=60), seed=3)
    n = referee.game.num_players
    bots = tuple(library_bot(specs[0] if seat == 0 else specs[1]) for seat in range(n))
    ledgers = {name: BotLedger(name) for name in set(specs)}
    result = referee.play_half(Seating(bots, seeds[:n]), range(deals), ledgers)
    assert all(not ledger.faults for ledger in ledgers.values()), {k: v.faults for k, v in ledgers.items()}
    return result.records


def replay_in_process(game_id: str, specs: tuple[str, str], records: list[Any], seeds: tuple[int, ...]) -> None:
    """Every recorded action is what the agent of that seat plays in this process, given the same views and a
    generator seeded as the bot's was (one agent and one generator per seat for the whole half, as in a bot)."""
    spec = get_spec(game_id)
    options = dict(spec.single_deal)
    n = spec.make_rules(**options).num_players
    agents = [make_agent(specs[0] if seat == 0 else specs[1], spec, **options) for seat in range(n)]
    rngs = [np.random.default_rng(seeds[seat]) for seat in range(n)]
    checked = 0
    for data in records:
        record = GameRecord.from_dict(data)
        for step, (game, state) in enumerate(record.states()):
            if state.done:
                break
            seat = state.to_act
            assert agents[seat].act(game.view(state, seat), rngs[seat]) == record.actions[step], (game_id, step)
            checked += 1
    assert checked >= 20 * len(records)


@pytest.mark.slow
@pytest.mark.parametrize("game_id", game_ids())
def test_library_agents_as_bots_play_as_in_process(game_id: str) -> None:
    """random, heuristic, pretrained and pimc (cheap settings) over 200 deals of every game: each action a bot
    answered equals the action the same agent takes in this process."""
    seeds = (11, 12, 13, 14)
    for specs in (("random", "heuristic"), ("pretrained", CHEAP_SEARCH.get(game_id, "pimc(samples=1, max_tricks=3)"))):
        records = play(game_id, specs, 200, seeds)
        assert len(records) == 200
        replay_in_process(game_id, specs, records, seeds)


@pytest.mark.slow
def test_a_saved_model_as_a_bot_plays_as_in_process(tmp_path: Path) -> None:
    """``model:<path>`` (a MaskablePPO .zip with whist_env's metadata) as a bot: the same actions as in process."""
    from sb3_contrib import MaskablePPO

    from whist_env.fingerprint import save_model_metadata

    env = whist_env.make_single_agent("german_whist_v0", opponents="random")
    path = tmp_path / "model.zip"
    MaskablePPO("MlpPolicy", env, n_steps=8, batch_size=8, device="cpu", seed=0).save(path)
    save_model_metadata(path, "german_whist_v0", dict(get_spec("german_whist_v0").single_deal))
    specs = (f"model:{path}", "heuristic")
    records = play("german_whist_v0", specs, 200)
    replay_in_process("german_whist_v0", specs, records, (11, 12))


OBSERVER = """
import json, sys
out = open(sys.argv[1], "w")
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "hello":
        print(json.dumps({"type": "hello", "protocol": 1, "observation": True}), flush=True)
        print(json.dumps(dict(__import__("os").environ)), file=sys.stderr, flush=True)
        print(__import__("os").getcwd(), file=sys.stderr, flush=True)
    elif message["type"] == "act":
        out.write(json.dumps([message["observation"], message["mask"]]) + "\\n")
        print(message["view"]["legal"][-1], flush=True)
    elif message["type"] == "goodbye":
        break
"""


@pytest.mark.parametrize("game_id", ["oh_hell_v0", "humbug_whist_v0"])
def test_a_bot_that_asks_gets_env_observe_bit_for_bit(
    game_id: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bot whose hello asks for the observation gets, in every act, the observation and mask that the AEC env's
    ``observe()`` gives for that seat at that point (the record replayed through the env); it starts in a fresh
    folder with a scrubbed environment: none of the referee's variables but PATH and LANG, and a Java VM told its
    memory limit (a JVM sizes its first heap as 1/64 of the machine's memory, above 1 GiB on a machine of 64 GiB or
    more: by hand, a Java bot then failed to start under the default limit)."""
    monkeypatch.setenv("WHIST_TEST_SECRET", "do not pass me on")
    bot = tmp_path / "observer.py"
    bot.write_text(OBSERVER)
    seen = tmp_path / "seen.jsonl"
    spec = get_spec(game_id)
    options = dict(spec.single_deal)
    logs = tmp_path / "logs"
    referee = Referee(spec, options, Limits(decision_s=10, memory_mb=900), seed=8, logs=logs, workroot=tmp_path)
    n = referee.game.num_players
    observer = BotCommand("observer", (sys.executable, bot.name, str(seen)), str(bot))
    random = library_bot("random")
    ledgers = {"observer": BotLedger("observer"), "random": BotLedger("random")}
    result = referee.play_half(Seating((observer,) + (random,) * (n - 1), tuple(range(n))), range(3), ledgers)
    assert not ledgers["observer"].faults
    received = [json.loads(line) for line in seen.read_text().splitlines()]
    expected = []
    for data in result.records:
        record = GameRecord.from_dict(data)
        env = whist_env.make(game_id, raw=True, **options)
        env.reset(options={"deck": list(record.deck), "dealer": record.dealer})
        for action in record.actions:
            agent = env.agent_selection
            if agent == "player_0":
                obs = env.observe(agent)
                expected.append([obs["observation"].tolist(), obs["action_mask"].tolist()])
            env.step(action)
    assert len(received) == len(expected) > 10
    for (obs, mask), (want_obs, want_mask) in zip(received, expected, strict=True):
        assert np.array_equal(np.asarray(obs, np.float32), np.asarray(want_obs, np.float32)) and mask == want_mask
    log = (logs / "observer.stderr.log").read_text()
    names = json.loads(log.splitlines()[1])
    allowed = {"PATH", "LANG", "LC_ALL", "HOME", "TMPDIR", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
               "PYTHONDONTWRITEBYTECODE", "LC_CTYPE", "JAVA_TOOL_OPTIONS"}  # fmt: skip
    assert "WHIST_TEST_SECRET" not in names and set(names) <= allowed
    assert names["JAVA_TOOL_OPTIONS"] == "-XX:MaxRAM=900m"
    folder = log.splitlines()[2]
    assert folder.startswith(str(tmp_path)) and not Path(folder).exists()  # a fresh folder, removed afterwards


def test_a_sandbox_prefix_wraps_every_bot_command(tmp_path: Path) -> None:
    """``prefix`` runs each bot through another command (a no-op one here: ``env``), ``{workdir}`` filled in."""
    spec = get_spec("german_whist_v0")
    marker = tmp_path / "ran"
    prefix = ("sh", "-c", f'echo "{{workdir}}" >> {marker}; exec "$@"', "sandbox")
    referee = Referee(spec, dict(spec.single_deal), Limits(), seed=1, prefix=prefix)
    ledgers = {"random": BotLedger("random"), "heuristic": BotLedger("heuristic")}
    seating = Seating((library_bot("random"), library_bot("heuristic")), (1, 2))
    result = referee.play_half(seating, range(2), ledgers)
    assert len(result.returns) == 2 and not any(ledger.faults for ledger in ledgers.values())
    folders = marker.read_text().split()
    assert len(folders) == 2 and all("whist-referee-" in folder for folder in folders)


def test_every_limit_is_enforced_on_linux() -> None:
    limits = platform_limits()
    if sys.platform.startswith("linux"):
        assert all(limits.values()), limits
    else:  # pragma: no cover - CI runs on Linux
        assert not all(limits.values())
    with pytest.raises(whist_env.OptionError, match="decision_s"):
        Limits(decision_s=0)
    for bad in (float("nan"), float("inf")):  # a limit no bot could ever reach would let a silent bot hang the match
        with pytest.raises(whist_env.OptionError, match="decision_s must be a positive finite number"):
            Limits(decision_s=bad)
        with pytest.raises(whist_env.OptionError, match="cpu_s"):
            Limits(cpu_s=bad)
    with pytest.raises(whist_env.OptionError, match="memory_mb must be at most"):  # was an error inside the bot's fork
        Limits(memory_mb=99999999999999999)
    assert Limits(match_s=50, start_s=5).cpu == 55


def test_a_subreaper_for_a_block_ends_what_it_adopted_and_is_no_subreaper_after() -> None:
    """The grandchild of a child that left its process group is re-parented to the block's process and ended on
    leaving; after the block the process is no subreaper (one that stayed one would keep the later orphans of every
    child as zombies, alive to ``kill(pid, 0)``: a killed Ray run's idle worker then waited for its raylet for
    ever); a child started before the block is left alone."""
    assert not is_subreaper()
    before = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        with subreaper() as on:
            assert on and is_subreaper()
            # a child that starts a grandchild in a session of its own, says its pid and exits
            grandchild = "s.Popen(['sleep', '60'], stdout=s.DEVNULL, start_new_session=True).pid"
            code = f"import subprocess as s; print({grandchild})"
            orphan = int(subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True).stdout)
            assert orphan in children()  # its parent exited: the grandchild is this process's now
        assert not is_subreaper()
        assert orphan not in children() and not Path(f"/proc/{orphan}").exists()  # killed and reaped
        assert before.poll() is None
    finally:
        before.kill()
        before.wait()


def test_a_bot_that_cannot_start_is_a_start_fault(tmp_path: Path) -> None:
    spec = get_spec("german_whist_v0")
    referee = Referee(spec, dict(spec.single_deal), Limits(), seed=1)
    missing = BotCommand("missing", ("no-such-program-here",))
    ledgers = {"missing": BotLedger("missing"), "random": BotLedger("random")}
    result = referee.play_half(Seating((missing, library_bot("random")), (1, 2)), range(1), ledgers)
    assert [f.kind for f in ledgers["missing"].faults] == ["start"] and "no-such-program-here" in ledgers[
        "missing"
    ].faults[0].message
    assert ledgers["missing"].forfeit is not None and len(result.returns) == 1
    assert os.path.exists(sys.executable)


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (("./bot.sh",), "Exec format error: './bot.sh' (a script needs a first line naming its interpreter, such"),
        (("python2.9", "bot.sh"), "No such file or directory: 'python2.9' (in a bot.toml, {python} names the"),
        (("sh", "bot.sh\0"), "could not start 'sh': embedded null byte"),  # was a ValueError that ended the referee
    ],
)
def test_a_command_that_cannot_start_is_told_what_to_do(argv: tuple[str, ...], says: str, tmp_path: Path) -> None:
    """An executable script without a ``#!`` line ("Exec format error"), or a Python the machine does not have (a
    ``bot.toml`` written on another machine): the start fault says what to do."""
    script = tmp_path / "bot.sh"
    script.write_text("echo hello\n")
    script.chmod(0o755)
    spec = get_spec("german_whist_v0")
    referee = Referee(spec, dict(spec.single_deal), Limits(), seed=1, workroot=tmp_path)
    bot = BotCommand("script", argv, str(script))
    ledgers = {"script": BotLedger("script"), "random": BotLedger("random")}
    referee.play_half(Seating((bot, library_bot("random")), (1, 2)), range(1), ledgers)
    [fault] = ledgers["script"].faults
    assert fault.kind == "start" and says in fault.message, fault.message


def test_a_bot_whose_files_cannot_be_copied_is_a_start_fault(tmp_path: Path) -> None:
    """Found by a hostile-input audit: a bot's file gone when its process was started raised FileNotFoundError out
    of the half (it is a start fault of that bot: the stand-in plays its seats)."""
    spec = get_spec("german_whist_v0")
    referee = Referee(spec, dict(spec.single_deal), Limits(), seed=1, workroot=tmp_path)
    gone = BotCommand("gone", (sys.executable, "bot.py"), str(tmp_path / "bot.py"))
    ledgers = {"gone": BotLedger("gone"), "random": BotLedger("random")}
    result = referee.play_half(Seating((gone, library_bot("random")), (1, 2)), range(1), ledgers)
    assert [f.kind for f in ledgers["gone"].faults] == ["start"]
    assert "its files could not be copied into its working directory" in ledgers["gone"].faults[0].message
    assert ledgers["gone"].forfeit is not None and len(result.returns) == 1 and list(tmp_path.iterdir()) == []


def test_a_bot_that_writes_a_report_and_ends_instead_of_the_hello_is_shown_whole(tmp_path: Path) -> None:
    """Found by trying a Java bot: a JVM that cannot start writes its report on standard output ("#", then "# There
    is insufficient memory for the Java Runtime Environment to continue.") and exits; the fault said only "its answer
    to the hello is not JSON: b'#'". It now says what followed, how the process ended and the end of its stderr."""
    text = (
        "import sys\nprint('#')\nprint('# There is insufficient memory for the runtime to continue.')\n"
        "print('could not commit memory', file=sys.stderr)\nsys.exit(1)\n"
    )
    ledger = play_script(tmp_path, "report", text, limits=Limits(), seed=1, workroot=tmp_path)
    [fault] = ledger.faults
    assert fault.kind == "start" and "insufficient memory for the runtime" in fault.message, fault.message
    assert "exit status 1" in fault.message and "could not commit memory" in fault.message, fault.message


SLOW_ONCE = """
import sys, time
from whist_env.evaluation.bot import run_bot
count = 0

def act(view, rng):
    global count
    count += 1
    if count == 3:
        time.sleep(float(sys.argv[1]))  # one slow decision
    return view.legal_actions()[0]

run_bot(act)
"""


@pytest.mark.parametrize(("think", "timeouts"), [(0.8, 1), (1.3, 2)])
def test_a_slow_decision_costs_a_timeout_per_limit_it_runs_over(think: float, timeouts: int, tmp_path: Path) -> None:
    """With 0.5 s per decision, a bot slow once gets one timeout for 0.8 s (its late answer is dropped, and it
    answers the next request in time) and two for 1.3 s (the next request's time runs out while it still thinks);
    it plays on either way."""
    slow = play_script(tmp_path, "slow", SLOW_ONCE, (str(think),), deals=2, limits=Limits(decision_s=0.5), seed=2)
    assert [f.kind for f in slow.faults] == ["timeout"] * timeouts and slow.forfeit is None
    assert slow.decisions == 52


CLOSES_STDOUT = """
import os, sys, time
from whist_env.evaluation.bot import run_bot
count = 0

def act(view, rng):
    global count
    count += 1
    if count == 3:
        print("closing my standard output", file=sys.stderr, flush=True)
        os.close(1)  # then runs on, or ends: the referee waits for no answer, ends it, and says which happened
        if sys.argv[1] == "exit":
            os._exit(3)
        time.sleep(60)
    return view.legal_actions()[0]

run_bot(act)
"""


@pytest.mark.parametrize(("then", "says"), [("run", "standard output and ran on"), ("exit", "exit status 3")])
def test_a_bot_that_closes_its_standard_output_is_told_whether_it_ran_on(then: str, says: str, tmp_path: Path) -> None:
    """Found by an audit: a bot that closed its standard output and ran on was reported as "the process ended (it
    closed its standard output)", though it had not ended. The fault now says that it ran on (and the referee ends
    it), or how it ended where it did, with the end of its stderr either way; no process is left."""
    before = children()  # an earlier test's pool workers may live on in this process
    closes = play_script(tmp_path, "closes", CLOSES_STDOUT, (then,), limits=Limits(decision_s=2.0), seed=3)
    fault = closes.faults[0]
    assert fault.kind == "crash" and says in fault.message, fault.message
    assert "closing my standard output" in fault.message, fault.message
    assert closes.forfeit is not None and not children() - before


# Found by a mutation audit (small bugs planted one at a time; these are the ones no test caught).
def test_faults_forfeit_at_max_faults_leftovers_aside_and_the_first_reason_stays() -> None:
    """Leftover processes count but forfeit nothing; the third fault that is not one forfeits; the forfeit's reason
    is the first one's, and counts the faults that forfeit (it counted the leftovers too: "5 faults" at a limit of
    3); a spent budget forfeits at once."""
    limits = Limits(max_faults=3)
    ledger = BotLedger("b")
    for kind in ("leftover", "leftover", "timeout", "illegal"):
        ledger.fault(kind, 0, 0, "x", limits)
    assert ledger.forfeit is None
    ledger.fault("timeout", 0, 3, "x", limits)
    assert ledger.forfeit == "3 faults (last: timeout)"
    ledger.fault("crash", 1, 0, "boom", limits)
    assert ledger.forfeit == "3 faults (last: timeout)" and len(ledger.faults) == 6
    spent = BotLedger("c")
    spent.fault("budget", 0, 0, "spent", limits)
    assert spent.forfeit == "budget: spent"


def test_the_stand_in_plays_the_lowest_legal_action() -> None:
    class View:
        legal = 0b10110

    assert stand_in(View()) == 1  # type: ignore[arg-type]


SLOW_EVERY_TIME = """
import time
from whist_env.evaluation.bot import run_bot

def act(view, rng):
    time.sleep(0.15)
    return view.legal_actions()[0]

run_bot(act)
"""


def test_a_bot_that_spends_the_match_budget_forfeits(tmp_path: Path) -> None:
    """0.15 s a decision, each within the second it may take, spends a budget of 0.5 s in four decisions."""
    slow = play_script(tmp_path, "slow", SLOW_EVERY_TIME, limits=Limits(decision_s=1.0, match_s=0.5), seed=1)
    assert [f.kind for f in slow.faults] == ["budget"], slow.faults
    assert slow.forfeit is not None and slow.forfeit.startswith("budget")
