"""A starter bot for whist_env's bot protocol, in Python: the game's rule-based player, ready for your ideas.

Check it:  whist-bot check "python starter.py" --game german_whist_v0
Play it:   whist-arena run tournament.toml   (it is a bot of the tournament's bots folder)

The referee runs this file in a fresh folder and talks to it over standard input and output: print your debugging
to standard error (print(..., file=sys.stderr)), never to standard output.
"""

from whist_env.agents.factory import heuristic_for
from whist_env.evaluation.bot import run_bot


class Starter:
    """``act(view, rng)`` gets what your seat knows now (a whist_env.PlayerView: view.hand, view.legal_actions(),
    view.trick, view.played, view.voids, view.unseen, view.extra, ...) and the generator the referee seeded; it
    returns one of ``view.legal_actions()`` (a card c is action c = 13 * suit + rank, suits C D H S, ranks 2..A)."""

    name = "starter"

    def setup(self, hello: dict) -> None:
        # hello["game"], hello["options"], hello["seat"], hello["limits"]: the match this process plays
        self.rule_of_thumb = heuristic_for(hello["game"], **hello["options"])

    def act(self, view, rng):  # noqa: ANN001, ANN201
        # Your strategy goes here. This one asks the library's rule-based player.
        return self.rule_of_thumb.act(view, rng)


run_bot(Starter())
