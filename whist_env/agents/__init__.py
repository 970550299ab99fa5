"""Agents: each receives only a PlayerView and a generator and returns a legal action."""

from whist_env.agents.base import Agent, RandomAgent

__all__ = ["Agent", "RandomAgent"]
