"""Write a bot in Python: a function or an agent, and one line that plays it over the bot protocol.

    from whist_env.evaluation.bot import run_bot

    def act(view, rng):                  # view: whist_env.PlayerView, rng: numpy.random.Generator
        return view.legal_actions()[0]   # an action id (a card c is action c)

    run_bot(act)

:func:`run_bot` reads the referee's messages on standard input (:mod:`whist_env.evaluation.protocol`), rebuilds
each decision's :class:`~whist_env.view.PlayerView` exactly as an in-process agent receives it, calls your function
with the generator the referee seeded, and writes the action on standard output. Standard output carries the
answers only: once ``run_bot`` runs, ``print()`` writes to standard error (where the referee keeps a log of it).
Every agent of the library plays the same way: ``run_bot("heuristic")``, ``run_bot("pimc(samples=20)")``,
``run_bot("pretrained")``, ``run_bot("model:m.zip")`` (or from a shell: ``whist-bot run heuristic``,
``python -m whist_env.evaluation.bot heuristic``); it plays the same actions as it does in the arena's process, given
the same view and generator.

An object bot may have ``setup(hello)`` (called once with the hello message, before any decision), and
``deal_end(message)`` / ``match_end(message)`` to hear how each deal and the match ended.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import IO, Any

import numpy as np

from whist_env.errors import OptionError
from whist_env.evaluation.protocol import PROTOCOL, ViewCodec, decode_line, encode_line, version_error
from whist_env.rules.core import as_action
from whist_env.view import PlayerView

ActFunction = Callable[[PlayerView, np.random.Generator], int]
PLAIN_ENDGAME_DEALS = 1000
"""Up to this many deals in the process, the heuristics solve their endings in plain Python
(:func:`whist_env.agents.endgame.prefer_plain`): the same cards, and cheaper than loading the compiled solver."""


class _FunctionAgent:
    """A plain ``act(view, rng)`` function as an agent."""

    def __init__(self, act: ActFunction, name: str) -> None:
        self.act = act
        self.name = name


def _agent(bot: Any, hello: dict[str, Any], name: str) -> Any:
    """The agent that plays: built from an agent spec for the hello's game, or the given object or function."""
    if isinstance(bot, str):
        from whist_env.agents.factory import make_agent
        from whist_env.registry import get_spec

        return make_agent(bot, get_spec(hello["game"]), **hello["options"])
    if callable(getattr(bot, "act", None)):
        return bot
    if callable(bot):
        return _FunctionAgent(bot, name)
    raise OptionError(
        f"run_bot plays a function act(view, rng), an object with act(view, rng) or an agent spec; got {bot!r}"
    )


def _warm_up(spec: str, hello: dict[str, Any], game: Any) -> None:
    """Play one deal with a second copy of a library agent before answering the hello: whatever it loads or compiles
    on its first decisions (numba's kernels for a search) is loaded within the start's time, not a decision's. The
    copy is thrown away, so the agent that plays remembers nothing of it."""
    from whist_env.agents.factory import make_agent
    from whist_env.registry import get_spec

    warm = make_agent(spec, get_spec(hello["game"]), **hello["options"])
    rng = np.random.default_rng(0)
    state = game.new_episode(rng)
    while not state.done:
        game.step(state, int(warm.act(game.view(state, state.to_act), rng)), rng)


def run_bot(
    bot: ActFunction | Any | str,
    *,
    name: str | None = None,
    stdin: IO[bytes] | None = None,
    stdout: IO[bytes] | None = None,
) -> None:
    """Play as a bot until the referee says goodbye or closes the input.

    Args:
        bot: a function ``act(view, rng) -> action``, an object with such an ``act`` method (any agent of the
            library), or an agent spec (``"heuristic"``, ``"pimc(samples=20)"``, ``"model:<path>"``: built for the
            game the hello names).
        name: the name the bot gives in its hello (default: the spec, the agent's ``name`` or the function's).
        stdin: where the messages come from (default: standard input).
        stdout: where the answers go (default: standard output).

    Raises:
        SystemExit: with status 2 when the referee speaks another protocol version (one line on stderr names both)
            or names a game this process does not know.
    """
    reader = stdin if stdin is not None else sys.stdin.buffer
    writer = stdout if stdout is not None else sys.stdout.buffer
    if stdout is None:
        # print() from the bot goes to standard error: on standard output it would be read as an answer (and only
        # once Python's buffer filled, deals later, so that a short check would not see it)
        sys.stdout.flush()
        sys.stdout = sys.stderr
    first = reader.readline()
    if not first:
        return
    hello = decode_line(first)
    if not isinstance(hello, dict) or hello.get("type") != "hello":
        _exit(f"expected the referee's hello, got {first[:200]!r}")
    if hello.get("protocol") != PROTOCOL:
        _exit(version_error(hello.get("protocol")))
    from whist_env.registry import get_spec

    try:
        game = get_spec(hello["game"]).make_rules(**hello["options"])
    except OptionError as err:
        _exit(f"this bot cannot play the referee's game: {err} (a game of your own: whist_env.register it first)")
    deals = hello.get("deals")
    if isinstance(deals, int) and deals <= PLAIN_ENDGAME_DEALS:
        from whist_env.agents import endgame

        endgame.prefer_plain()  # the same cards, without 0.6 s of numba at the first ending
    label = name or (bot if isinstance(bot, str) else getattr(bot, "name", getattr(bot, "__name__", "bot")))
    agent = _agent(bot, hello, str(label))
    if isinstance(bot, str):
        _warm_up(bot, hello, game)
    if callable(getattr(agent, "setup", None)):
        agent.setup(hello)
    codec = ViewCodec(game)
    rng = np.random.default_rng(hello["seed"])
    act, from_json = agent.act, codec.from_json
    writer.write(encode_line({"type": "hello", "protocol": PROTOCOL, "name": str(label)}))
    writer.flush()
    for line in reader:
        message = decode_line(line)
        kind = message.get("type") if isinstance(message, dict) else None
        if kind == "act":
            writer.write(answer_line(act(from_json(message["view"]), rng), game.num_actions, hello["game"]))
            writer.flush()
        elif kind == "goodbye":
            return
        elif kind in ("deal_end", "match_end") and callable(hook := getattr(agent, kind, None)):
            hook(message)


def answer_line(action: Any, num_actions: int, game_id: str) -> bytes:
    """The answer line for what ``act`` returned: an action as the AEC env takes one (an int, a numpy integer, a
    one-element integer array) as its id, a string (a label such as ``"TS"``) as JSON. Anything else is no action (a
    bool, which ``"%d"`` would have sent as action 0 or 1, a float, None, a list, a tensor): a line on stderr says so,
    and it is sent as JSON (its ``repr`` where JSON cannot hold it), which the referee counts as malformed."""
    if isinstance(action, str):
        return encode_line(action)
    try:
        return b"%d\n" % as_action(action, num_actions, game_id)
    except ValueError as err:
        if isinstance(action, (int, np.integer)) and not isinstance(action, bool):
            return b"%d\n" % action  # an int outside the action space: the referee counts it as illegal
        print(f"whist-bot: {err}: act must return an action id of view.legal_actions() or a label such as 'TS'",
              file=sys.stderr, flush=True)  # fmt: skip
    try:
        return encode_line(action)
    except TypeError:  # not JSON (a tensor, a set)
        return encode_line(repr(action))


def _exit(message: str) -> None:
    print(f"whist-bot: {message}", file=sys.stderr, flush=True)
    raise SystemExit(2)


if __name__ == "__main__":  # python -m whist_env.evaluation.bot <agent spec>: a library agent as a bot
    if len(sys.argv) != 2 or sys.argv[1].startswith("-"):
        print(
            "usage: python -m whist_env.evaluation.bot <agent spec>   (e.g. heuristic, pimc, pretrained)",
            file=sys.stderr,
        )
        raise SystemExit(2)
    run_bot(sys.argv[1])
