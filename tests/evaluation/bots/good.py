"""A well-behaved bot: the game's heuristic through the Python helper."""

from whist_env.evaluation.bot import run_bot

run_bot("heuristic", name="good")
