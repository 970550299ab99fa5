"""``training/convert_checkpoints.py``: checkpoints written by c56cd13 (pickles: sb3's ``model.zip`` and
``state.pkl``, ppo's ``state.pt``; small fixtures in ``fixtures/``) become plain data only under ``--trust``, and a
converted run resumes and continues bit for bit: its weights at the next checkpoint equal those c56cd13's own run
reached there.

c56cd13's own continuation is recorded per kind of CPU (``expected_weights_<cpu>.npz``): torch picks its kernels by
the CPU, and their float rounding differs, so c56cd13 itself, resumed from the same checkpoint, ends 1e-9 to 1e-8 away
from the Intel Xeon's recording on an AMD EPYC. A converted run must equal one recording to the last bit. On a CPU of
a new kind, record c56cd13's continuation there: ``git worktree add /tmp/c56 c56cd13``, copy the fixture's folder,
run its ``command.txt`` in the worktree with ``--resume`` (``PYTHONPATH=/tmp/c56``) and save the weights at the next
checkpoint as ``expected_weights_<cpu>.npz``."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
import torch

from training import convert_checkpoints
from training.train import main

FIXTURES = Path(__file__).parent / "fixtures"


def copy_of(name: str, tmp_path: Path) -> Path:
    run = tmp_path / name
    shutil.copytree(FIXTURES / f"{name}_c56cd13", run)
    return run


def test_nothing_is_read_without_trust(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = copy_of("ppo", tmp_path)
    before = sorted(p.name for p in run.rglob("*"))
    assert convert_checkpoints.main([str(run)]) == 2
    assert "pass --trust" in capsys.readouterr().err
    assert sorted(p.name for p in run.rglob("*")) == before
    assert main(["--resume", "--run-name", "ppo", "--runs-dir", str(tmp_path)]) == 2  # refused, naming the fix
    assert "convert_checkpoints.py" in capsys.readouterr().err


@pytest.mark.parametrize(("name", "total", "weights"), [("ppo", 192, "model"), ("sb3", 256, "policy")])
def test_a_converted_run_resumes_bit_for_bit(tmp_path: Path, name: str, total: int, weights: str) -> None:
    run = copy_of(name, tmp_path)
    assert convert_checkpoints.main([str(run), "--trust"]) == 0
    (folder,) = (run / "checkpoints").glob("step_*")
    assert sorted(p.name for p in folder.iterdir()) == ["arrays.npz", "checkpoint.json"]
    assert main(["--resume", "--run-name", name, "--runs-dir", str(tmp_path), "--total-timesteps", str(total)]) == 0
    from training.checkpoint import find_state

    found = find_state(run, name)
    assert found is not None and found[1]["step"] == total
    state = found[1]["state"][weights]
    recorded = sorted(run.glob("expected_weights_*.npz"))
    assert len(recorded) >= 2  # the Intel Xeon's and the AMD EPYC's
    equal_to = []
    for path in recorded:
        with np.load(path) as expected:
            assert sorted(expected.files) == sorted(state)
            if all(torch.equal(state[key], torch.from_numpy(expected[key])) for key in expected.files):
                equal_to.append(path.name)
    assert len(equal_to) == 1, (
        f"the converted run's weights equal none of c56cd13's recorded continuations ({[p.name for p in recorded]}); "
        "on a CPU of a kind not recorded yet, record c56cd13's own continuation there (this module's docstring)"
    )
    assert convert_checkpoints.main([str(run), "--trust"]) == 0  # converted already: nothing to do


@pytest.mark.parametrize(
    ("name", "damage", "says"),
    [
        ("ppo", lambda run: _file(run, "state.pt").write_bytes(b""), "cannot read its old checkpoints (EOFError"),
        ("ppo", lambda run: _file(run, "state.pt").write_bytes(b"not a pickle"), "cannot read its old checkpoints"),
        ("sb3", lambda run: _file(run, "model.zip").write_bytes(b""), "model.zip"),
        ("sb3", lambda run: _file(run, "state.pkl").write_bytes(b"\x80\x04junk"), "cannot read its old checkpoints"),
        ("sb3", lambda run: (run / "config.yaml").write_text("- a list\n"), "is not a run's config"),
        ("sb3", lambda run: _file(run, "model.zip").unlink(), "has no model.zip"),  # was: ...model.zip.zip
        ("sb3", lambda run: (run / "config.yaml").write_text("a: [\n"), "is not a run's config (ParserError)"),
        ("sb3", lambda run: (run / "config.yaml").write_text("[" * 5000), "is not a run's config (RecursionError)"),
    ],
)
def test_a_damaged_old_run_is_named_and_left_as_it_was(
    tmp_path: Path, name: str, damage: object, says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    run = copy_of(name, tmp_path)
    damage(run)  # type: ignore[operator]
    before = {p: p.read_bytes() for p in run.rglob("*") if p.is_file()}
    assert convert_checkpoints.main([str(run), "--trust"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {run}: ") and err.count("\n") == 1 and says in err, err
    assert {p: p.read_bytes() for p in run.rglob("*") if p.is_file()} == before


def _file(run: Path, name: str) -> Path:
    return next(run.glob(f"checkpoints/*/{name}"))
