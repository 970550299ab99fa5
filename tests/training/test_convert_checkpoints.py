"""``training/convert_checkpoints.py``: checkpoints written by c56cd13 (pickles: sb3's ``model.zip`` and
``state.pkl``, ppo's ``state.pt``; small fixtures in ``fixtures/``) become plain data only under ``--trust``, and a
converted run resumes and continues bit for bit: its weights at the next checkpoint equal those c56cd13's own run
reaches there, resumed from the same checkpoint on the same machine.

torch picks its kernels by the CPU, and their float rounding differs: c56cd13 itself, resumed from the same checkpoint,
ends 1e-10 to 1e-8 apart on an Intel Xeon, an AMD EPYC with AVX-512 and one without (ppo's; sb3's is the same on
both EPYCs). So c56cd13's continuation is recorded per kind of CPU met so far (``expected_weights_<cpu>.npz``), and
a converted run must equal one recording to the last bit. On a CPU of another kind the test makes c56cd13's
continuation itself: it takes c56cd13's code from this clone's history (``git archive``), resumes the fixture's run
with it (its ``command.txt`` and ``--resume``) and compares with that (about 40 s a trainer, most of it c56cd13's
numba kernels compiling). To record a new kind, save those weights as ``expected_weights_<cpu>.npz``
(:func:`c56cd13_continuation`)."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from training import convert_checkpoints
from training.train import main

FIXTURES = Path(__file__).parent / "fixtures"
REPO = Path(__file__).resolve().parents[2]


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
    assert len(recorded) >= 2  # the Intel Xeon's and the AMD EPYCs' (sb3's: one for both kinds; ppo's: one each)
    equal_to = []
    for path in recorded:
        with np.load(path) as expected:
            assert sorted(expected.files) == sorted(state)
            if all(torch.equal(state[key], torch.from_numpy(expected[key])) for key in expected.files):
                equal_to.append(path.name)
    if not equal_to:  # a CPU of a kind not recorded: c56cd13's own continuation, made here
        own = c56cd13_continuation(name, tmp_path / "c56cd13")
        assert own is not None, (
            f"the converted run's weights equal none of c56cd13's recorded continuations ({[p.name for p in recorded]})"
            ", and this clone's history has no c56cd13 to make one here (a shallow clone?)"
        )
        assert sorted(own) == sorted(state)
        differ = [key for key in own if not torch.equal(state[key], torch.from_numpy(own[key]))]
        assert not differ, f"the converted run's weights differ from c56cd13's own continuation here in {differ}"
        equal_to.append("c56cd13's own continuation here")
    assert len(equal_to) == 1, equal_to
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


def c56cd13_continuation(name: str, folder: Path) -> dict[str, np.ndarray] | None:
    """The weights c56cd13's own code reaches when it resumes fixture ``name``'s run on this machine (in ``folder``),
    or None where this clone's history has no c56cd13. Its checkpoint is a pickle this test just made: trusted."""
    code, runs = folder / "code", folder / "runs"
    try:
        archive = subprocess.run(["git", "-C", str(REPO), "archive", "c56cd13", "whist_env", "training", "configs"],
                                 capture_output=True, check=True)  # fmt: skip
    except (OSError, subprocess.CalledProcessError):  # no git, or no c56cd13 in this clone's history
        return None
    code.mkdir(parents=True)
    subprocess.run(["tar", "-x", "-C", str(code)], input=archive.stdout, check=True)
    shutil.copytree(FIXTURES / f"{name}_c56cd13", runs / name)
    argv = shlex.split((FIXTURES / f"{name}_c56cd13" / "command.txt").read_text(encoding="utf-8"))
    argv[0] = sys.executable
    argv[argv.index("--runs-dir") + 1] = str(runs)
    done = subprocess.run([*argv, "--resume"], cwd=code, env={**os.environ, "PYTHONPATH": str(code)},
                          capture_output=True, text=True, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    last = max((runs / name / "checkpoints").glob("step_*"))
    if name == "ppo":
        weights = convert_checkpoints._old_ppo_state(last / "state.pt")["model"]
    else:
        from stable_baselines3.common.save_util import load_from_zip_file

        weights = load_from_zip_file(last / "model.zip", device="cpu")[1]["policy"]  # type: ignore[index]
    return {key: value.numpy() for key, value in weights.items()}


def _file(run: Path, name: str) -> Path:
    return next(run.glob(f"checkpoints/*/{name}"))
