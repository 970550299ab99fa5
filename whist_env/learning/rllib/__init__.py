"""Ray RLlib support: multi-agent self-play on the new API stack, and RLlib checkpoints as agents.

The pieces that a trained policy needs at play time live here (the training script,
``training/rllib/trainer.py``, is not part of the wheel):

* :mod:`whist_env.learning.rllib.league`: who sits where (agent ids, the policy mapping, the league's table draw);
  plain Python, no Ray;
* :mod:`whist_env.learning.rllib.env`: :class:`~whist_env.learning.rllib.env.WhistMultiAgentEnv`, the RLlib
  ``MultiAgentEnv``
  face of a game (the observation wrapper: ``{"observation", "action_mask"}`` per acting seat, scripted
  league members played inside it);
* :mod:`whist_env.learning.rllib.module`: :class:`~whist_env.learning.rllib.module.MaskedActorCritic`, our masked
  RLModule;
* :mod:`whist_env.learning.rllib.learner`: :class:`~whist_env.learning.rllib.learner.WhistPPOLearner`, RLlib's PPO
  learner with a lighter optimizer step and one scan of each batch's observations (what the training script uses);
* :mod:`whist_env.learning.rllib.agent`: :class:`~whist_env.learning.rllib.agent.RLlibAgent`, what
  ``make_agent("rllib:<checkpoint dir>", game)`` returns.

Ray is imported only by ``env``, ``module``, ``learner``, ``engine_runner``, ``callbacks`` and ``agent`` (never by
``import whist_env``, by this package, by ``league`` or by ``engine_env``); without it they raise an ImportError
naming the extra: ``pip install "whist_env[rllib]"``.
"""

from __future__ import annotations

import importlib
from types import ModuleType

INSTALL_HINT = 'pip install "whist_env[rllib]"'
"""How to install what this package needs (Ray RLlib and torch)."""


def require(module: str, what: str) -> ModuleType:
    """Import ``module`` (``ray.rllib``, ``torch``), or fail with an error that says how to install it.

    Args:
        module: the module to import.
        what: what needs it, in words (for the message).

    Raises:
        ImportError: naming the missing module and the extra to install.
    """
    try:
        return importlib.import_module(module)
    except ImportError as err:
        raise ImportError(
            f"{what} needs {module.split('.')[0]} ({module} could not be imported: {err}); "
            f"install the extra: {INSTALL_HINT}"
        ) from err
