"""What keeps CI honest, shown on small throwaway test suites run in a pytest of their own with our conftest:

* under ``WHIST_REQUIRE_EXTRAS=1`` (set by ``.ci/run``) a library that fails to import fails its tests instead of
  skipping them, and a run with any skipped, xfailed or xpassed test fails;
* a test that hangs fails after the ini's ``timeout`` (pytest-timeout), with its name.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

CONFTEST = Path(__file__).with_name("conftest.py")

BROKEN = """
import pytest


def test_passes():
    pass


def test_uses_the_extra():
    assert pytest.importorskip("whist_env_no_such_extra")
"""


def run_suite(tmp_path: Path, tests: dict[str, str], *, require: bool, ini: str = "") -> subprocess.CompletedProcess:
    (tmp_path / "conftest.py").write_text(CONFTEST.read_text())
    (tmp_path / "pytest.ini").write_text(f"[pytest]\n{ini}")
    for name, text in tests.items():
        (tmp_path / name).write_text(text)
    env = {k: v for k, v in os.environ.items() if k != "WHIST_REQUIRE_EXTRAS"}
    if require:
        env["WHIST_REQUIRE_EXTRAS"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", str(tmp_path)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def test_a_broken_import_skips_on_a_laptop_and_fails_in_ci(tmp_path: Path) -> None:
    laptop = run_suite(tmp_path, {"test_broken.py": BROKEN}, require=False)
    assert laptop.returncode == 0 and "1 passed, 1 skipped" in laptop.stdout, laptop.stdout
    ci = run_suite(tmp_path, {"test_broken.py": BROKEN}, require=True)
    assert ci.returncode != 0, ci.stdout
    assert "ModuleNotFoundError" in ci.stdout and "whist_env_no_such_extra" in ci.stdout


def test_any_skipped_test_fails_a_ci_run(tmp_path: Path) -> None:
    tests = {"test_skips.py": "import pytest\n\ndef test_one():\n    pytest.skip('not here')\n"}
    assert run_suite(tmp_path, tests, require=False).returncode == 0
    ci = run_suite(tmp_path, tests, require=True)
    assert ci.returncode == 1 and "1 tests skipped (test_skips.py::test_one)" in ci.stdout, ci.stdout


def test_an_expected_failure_fails_a_ci_run(tmp_path: Path) -> None:
    tests = {
        "test_xfails.py": "import pytest\n\n@pytest.mark.xfail\ndef test_one():\n    assert False\n\n"
        "@pytest.mark.xfail\ndef test_two():\n    pass\n"
    }
    assert run_suite(tmp_path, tests, require=False).returncode == 0
    ci = run_suite(tmp_path, tests, require=True)
    assert ci.returncode == 1, ci.stdout
    assert "1 tests xfailed (test_xfails.py::test_one)" in ci.stdout, ci.stdout
    assert "1 tests xpassed (test_xfails.py::test_two)" in ci.stdout, ci.stdout


def test_a_hanging_test_fails_with_its_name(tmp_path: Path) -> None:
    tests = {"test_hangs.py": "import time\n\ndef test_waits_forever():\n    time.sleep(60)\n"}
    out = run_suite(tmp_path, tests, require=False, ini="timeout = 2\n")
    assert out.returncode == 1, out.stdout
    assert "Timeout" in out.stdout and "test_waits_forever" in out.stdout


def test_tests_marked_rllib_keep_their_longer_limit(tmp_path: Path) -> None:
    tests = {
        "test_marks.py": "import time\nimport pytest\n\n"
        "@pytest.mark.rllib\ndef test_a_ray_cluster_starts():\n    time.sleep(3)\n\n"
        "def test_anything_else():\n    time.sleep(3)\n"
    }
    out = run_suite(tmp_path, tests, require=False, ini="timeout = 1\nmarkers =\n    rllib: needs Ray\n")
    assert out.returncode == 1 and "1 failed, 1 passed" in out.stdout, out.stdout
    assert "FAILED test_marks.py::test_anything_else" in out.stdout
