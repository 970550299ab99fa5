"""The learner as an agent: :class:`whist_env.learn.PolicyAgent` (it lives in the package, where the shared
training loop runs; this module keeps the old import path working)."""

from __future__ import annotations

from whist_env.learn import PolicyAgent, actor_of

__all__ = ["PolicyAgent", "actor_of"]
