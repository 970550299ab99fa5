"""The recipe tests. AgileRL pins versions that the project's venv cannot hold beside TorchRL (tensordict 0.13.0), so
``.ci/run`` runs ``test_agilerl.py`` in a venv of its own (``.venv-agilerl``); where AgileRL is not installed the
file is not collected at all, rather than collected and skipped."""

from __future__ import annotations

import importlib.util

collect_ignore = [] if importlib.util.find_spec("agilerl") else ["test_agilerl.py"]
