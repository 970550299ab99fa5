"""A bot that misbehaves on purpose, for the referee's tests: ``python hostile.py <kind>``.

It plays its lowest legal action for its first ``CALM`` decisions, then (``<kind>``):

- ``sleep``: sleeps an hour before each answer;
- ``loop``: spins the CPU for ever;
- ``crash``: raises an exception;
- ``flood``: writes a 5 MB line to standard output and 5 MB to standard error;
- ``memory``: allocates memory without end;
- ``garbage``: answers (by hand, without the helper) an action the game does not have, JSON nested too deeply
  to write back, a line that is not JSON, a label that names nothing, in turn;
- ``orphan``: starts a grandchild that calls setsid() and sleeps for an hour (it lingers), and plays on normally;
- ``quit``: exits at once, before the hello;
- ``kill_referee``: sends SIGKILL to its parent, the referee's worker (what no referee can stop without a sandbox).
"""

import os
import signal
import sys
import time

KIND = sys.argv[1]
CALM = 5
if KIND == "quit":
    sys.exit(0)

from whist_env.evaluation.bot import run_bot  # noqa: E402 - the quitter leaves before importing anything

decisions = 0


def orphan() -> None:
    if os.fork() == 0:  # the child: a grandchild of the bot that leaves its process group and lingers
        os.setsid()
        if os.fork() == 0:
            time.sleep(3600)
        os._exit(0)


def act(view, rng):  # noqa: ANN001, ANN201
    global decisions
    decisions += 1
    lowest = view.legal_actions()[0]
    if decisions <= CALM:
        if KIND == "orphan" and decisions == 1:
            orphan()
        return lowest
    if KIND == "sleep":
        time.sleep(3600)
    elif KIND == "loop":
        while True:
            pass
    elif KIND == "crash":
        raise RuntimeError("a bug in the bot")
    elif KIND == "flood":
        sys.stderr.write("x" * 5_000_000)
        os.write(1, b"y" * 5_000_000)  # past the helper, which sends print() to stderr: the real standard output
    elif KIND == "kill_referee":
        os.kill(os.getppid(), signal.SIGKILL)
        time.sleep(3600)  # its parent's death signal ends it
    elif KIND == "memory":
        hoard = []
        while True:
            hoard.append(bytearray(1 << 20))
    return lowest


def garbage() -> None:
    """Answers by hand: the hello, calm answers, then an action that is no action of the game, JSON nested too deeply
    to write back, a line that is not JSON, a label that names nothing, in turn."""
    import json

    for line in sys.stdin:
        message = json.loads(line)
        if message["type"] == "hello":
            print(json.dumps({"type": "hello", "protocol": 1, "name": "hostile-garbage"}), flush=True)
        elif message["type"] == "act":
            global decisions
            decisions += 1
            lowest = message["view"]["legal"][0]
            answers = ["92", "[" * 1010 + "]" * 1010, "this is not json", '"no such card"']
            print(lowest if decisions <= CALM else answers[(decisions - CALM - 1) % 4], flush=True)
        elif message["type"] == "goodbye":
            return


if KIND == "garbage":
    garbage()
else:
    run_bot(act, name=f"hostile-{KIND}")
