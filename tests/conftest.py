"""Shared pytest configuration. Reusable helpers (random play, the option grid) live in ``whist_env.testing``.

* ``WHIST_REQUIRE_EXTRAS=1`` (CI sets it): every ``pytest.importorskip`` becomes a plain import, so a library that
  fails to import fails its tests instead of skipping them, and a run that skips any test fails. Without it (a
  partial install on a laptop), the tests of a missing extra skip as usual.
* Timeouts: ``timeout`` in ``[tool.pytest.ini_options]`` (pytest-timeout) for every test; tests marked ``rllib``
  (a Ray cluster starts and stops in each) get :data:`RLLIB_TIMEOUT` unless they set their own.
* Ray's files: each pytest process points ``RAY_TMPDIR`` (unless set already) at a folder of its own, which the
  Ray clusters of its tests, and of the runs they start, write their sessions to. A passing run removes it; a
  failing one keeps it and names it, for Ray's logs (Ray itself keeps every session under ``/tmp/ray``).
"""

from __future__ import annotations

import importlib
import os
import shutil
import tempfile
from typing import Any

import pytest

REQUIRE_EXTRAS = os.environ.get("WHIST_REQUIRE_EXTRAS") == "1"
RLLIB_TIMEOUT = 900  # seconds
# this process's folder for Ray's files (None: RAY_TMPDIR was set already); short, as Ray's socket paths are
# limited to 107 bytes
RAY_TMPDIR: str | None = None


def _import_or_fail(modname: str, minversion: str | None = None, reason: str | None = None, **_: Any) -> Any:
    """``pytest.importorskip`` under ``WHIST_REQUIRE_EXTRAS=1``: the import, whose error fails the test."""
    module = importlib.import_module(modname)
    if minversion is not None:
        from packaging.version import Version

        version = getattr(module, "__version__", None)
        if version is None or Version(version) < Version(minversion):
            raise ImportError(f"{modname} {version} is older than the {minversion} these tests need")
    return module


if REQUIRE_EXTRAS:
    pytest.importorskip = _import_or_fail  # type: ignore[assignment]


def pytest_configure(config: pytest.Config) -> None:
    global RAY_TMPDIR
    if "RAY_TMPDIR" not in os.environ:
        RAY_TMPDIR = os.environ["RAY_TMPDIR"] = tempfile.mkdtemp(prefix="whist-ray-", dir="/tmp")


def pytest_unconfigure(config: pytest.Config) -> None:
    if RAY_TMPDIR is None or os.environ.get("RAY_TMPDIR") != RAY_TMPDIR:
        return
    ray_files = os.path.join(RAY_TMPDIR, "ray")
    session = getattr(config, "_whist_session", None)
    if (session is not None and session.exitstatus == 0) or not os.path.isdir(ray_files):
        shutil.rmtree(RAY_TMPDIR, ignore_errors=True)
    else:
        print(f"\nRay's files of this pytest process (its logs under session_*/logs): {ray_files}")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("rllib") is not None and item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(RLLIB_TIMEOUT))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    session.config._whist_session = session  # type: ignore[attr-defined]  # its final status, for pytest_unconfigure
    if not REQUIRE_EXTRAS or hasattr(session.config, "workerinput"):  # the controller counts (pytest-xdist)
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None or exitstatus != 0:
        return
    for outcome in ("skipped", "xfailed", "xpassed"):  # an expected failure would turn a run green as a skip does
        reports = reporter.stats.get(outcome, [])
        if reports:
            names = ", ".join(sorted({getattr(r, "nodeid", "?") for r in reports})[:10])
            message = f"WHIST_REQUIRE_EXTRAS=1: {len(reports)} tests {outcome} ({names}); CI runs them all"
            reporter.write_line(message, red=True)
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
