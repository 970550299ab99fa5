"""Checkpoints: ``--resume`` finds the newest valid one by scanning, skips damaged ones with a warning, and
pruning never deletes a checkpoint newer than the one being written; a write that fails (disk full) says so in
one line and leaves the previous checkpoint intact; what a killed write left behind is tidied on resume."""

from __future__ import annotations

import errno
import os
import pickle
import zipfile
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")

from training.checkpoint import (  # noqa: E402
    FAULT_ENV,
    LATEST,
    CheckpointWriteError,
    clean_leftovers,
    find_checkpoint,
    latest_checkpoint,
    save_checkpoint,
    write_checkpoint_dir,
)


class FakeModel:
    """What :func:`save_checkpoint` needs of a model: a timestep counter and ``save`` (an sb3-like zip)."""

    def __init__(self, num_timesteps: int) -> None:
        self.num_timesteps = num_timesteps

    def save(self, path: Path) -> None:
        with zipfile.ZipFile(path, "w") as z:
            z.writestr("data", f'{{"num_timesteps": {self.num_timesteps}}}')
            z.writestr("policy.pth", b"\x00" * 4000)


def extra(step: int) -> dict[str, Any]:
    return {"schedule": {}, "model_state": {}, "env_states": [], "rng": {}, "num_timesteps": step}


def save(run: Path, step: int, keep: int = 10) -> Path:
    return save_checkpoint(run, FakeModel(step), extra(step), keep)


def names(run: Path) -> list[str]:
    return sorted(p.name for p in (run / "checkpoints").iterdir() if p.is_dir())


def test_written_through_a_temporary_directory_and_renamed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    renames: list[tuple[str, str]] = []
    real = os.replace
    monkeypatch.setattr(os, "replace", lambda a, b: (renames.append((Path(a).name, Path(b).name)), real(a, b))[1])
    save(tmp_path, 128)
    assert (".step_000000000128.tmp", "step_000000000128") in renames  # hidden: no listing of checkpoints sees it
    assert names(tmp_path) == ["step_000000000128"]


def test_a_half_written_checkpoint_is_never_resumed_from(tmp_path: Path) -> None:
    save(tmp_path, 128)

    class Crashing(FakeModel):
        def save(self, path: Path) -> None:
            path.write_bytes(b"PK\x03\x04 half")
            raise OSError("disk full")

    with pytest.raises(CheckpointWriteError, match="disk full"):
        save_checkpoint(tmp_path, Crashing(256), extra(256), 10)
    assert latest_checkpoint(tmp_path) == tmp_path / "checkpoints" / "step_000000000128"
    assert names(tmp_path) == ["step_000000000128"]  # the temporary directory is gone too


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux), a device that is always full")
def test_a_full_disk_is_one_line_naming_the_checkpoint_and_the_intact_previous_one(tmp_path: Path) -> None:
    save(tmp_path, 128)

    class OnAFullDisk(FakeModel):
        def save(self, path: Path) -> None:
            with open("/dev/full", "wb") as f:  # a real ENOSPC from a real write
                f.write(b"\x00" * 100_000)
                f.flush()

    with pytest.raises(CheckpointWriteError) as caught:
        save_checkpoint(tmp_path, OnAFullDisk(256), extra(256), 10)
    message = str(caught.value)
    root = tmp_path / "checkpoints"
    assert "\n" not in message and isinstance(caught.value.__cause__, OSError)
    assert caught.value.__cause__.errno == errno.ENOSPC
    assert message == (
        f"could not write checkpoint {root / 'step_000000000256'}: No space left on device; the previous checkpoint "
        f"{root / 'step_000000000128'} is intact (--resume continues from it)"
    )
    assert names(tmp_path) == ["step_000000000128"] and latest_checkpoint(tmp_path) == root / "step_000000000128"


def test_a_failed_first_write_says_there_is_no_earlier_checkpoint(tmp_path: Path) -> None:
    def write(tmp: Path) -> None:
        raise PermissionError(errno.EACCES, "Permission denied", str(tmp / "state.pt"))

    with pytest.raises(CheckpointWriteError, match=r"step_000000000128: Permission denied; there is no earlier"):
        write_checkpoint_dir(tmp_path / "checkpoints" / "step_000000000128", write)
    assert list((tmp_path / "checkpoints").iterdir()) == []


def test_the_fault_injection_for_tests(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``WHIST_TEST_CHECKPOINT_FAULT=enospc@<name>`` fails that checkpoint's write as a full disk would; another
    name is untouched; a malformed value is an error, not silently nothing (``pause@`` is tested on real runs)."""
    monkeypatch.setenv(FAULT_ENV, "enospc@step_000000000256")
    save(tmp_path, 128)
    with pytest.raises(CheckpointWriteError, match="000256: No space left on device; the previous checkpoint .*128"):
        save(tmp_path, 256)
    assert names(tmp_path) == ["step_000000000128"]
    monkeypatch.setenv(FAULT_ENV, "full@step_000000000256")
    with pytest.raises(ValueError, match="expected pause@<checkpoint name> or enospc@<checkpoint name>"):
        save(tmp_path, 256)


def test_leftovers_of_a_killed_write_are_tidied_with_a_warning(tmp_path: Path) -> None:
    for step in (128, 256, 384):
        save(tmp_path, step)
    root = tmp_path / "checkpoints"
    (root / ".step_000000000512.tmp").mkdir()  # killed while writing 512
    (root / ".step_000000000512.tmp" / "model.zip").write_bytes(b"PK half")
    os.replace(root / "step_000000000384", root / ".step_000000000384.old")  # killed between the two renames
    (root / "step_000000000256").rename(root / ".step_000000000256.old")  # killed after both renames: 256 is back
    save(tmp_path, 256)
    warnings: list[str] = []
    clean_leftovers(root, warnings.append)
    assert sorted(p.name for p in root.iterdir() if p.is_dir()) == [
        "step_000000000128",
        "step_000000000256",
        "step_000000000384",
    ]
    assert len(warnings) == 2 and all("\n" not in w for w in warnings)
    assert "removed the incomplete checkpoint" in warnings[1] and ".step_000000000512.tmp" in warnings[1]
    assert "put" in warnings[0] and "step_000000000384 back in place" in warnings[0]
    assert find_checkpoint(tmp_path) is not None and latest_checkpoint(tmp_path) == root / "step_000000000384"


def test_what_else_goes_into_the_checkpoint_is_written_before_the_move(tmp_path: Path) -> None:
    seen: list[str] = []
    path = save_checkpoint(
        tmp_path, FakeModel(128), extra(128), 10, also=lambda tmp: seen.extend(p.name for p in tmp.parent.iterdir())
    )
    assert seen == [".step_000000000128.tmp"] and path.name == "step_000000000128"


@pytest.mark.parametrize("pointer", ["missing", "empty", "older", "nowhere"])
def test_the_newest_valid_checkpoint_whatever_latest_says(tmp_path: Path, pointer: str) -> None:
    save(tmp_path, 128)
    save(tmp_path, 256)
    latest = tmp_path / "checkpoints" / LATEST
    if pointer == "missing":
        latest.unlink()
    else:
        latest.write_text({"empty": "", "older": "step_000000000128\n", "nowhere": "step_000000999999\n"}[pointer])
    found = find_checkpoint(tmp_path)
    assert found is not None
    path, state = found
    assert path.name == "step_000000000256" and state["num_timesteps"] == 256


def _truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


DAMAGE = {
    "state.pkl truncated": lambda c: _truncate(c / "state.pkl"),
    "state.pkl empty": lambda c: (c / "state.pkl").write_bytes(b""),
    "state.pkl garbage": lambda c: (c / "state.pkl").write_bytes(b"\x80\x05garbage" * 50),
    "state.pkl incomplete": lambda c: (c / "state.pkl").write_bytes(pickle.dumps({"num_timesteps": 256})),
    "state.pkl missing": lambda c: (c / "state.pkl").unlink(),
    "model.zip truncated": lambda c: _truncate(c / "model.zip"),
    "model.zip missing": lambda c: (c / "model.zip").unlink(),
    "model.zip not a model": lambda c: zipfile.ZipFile(c / "model.zip", "w").close(),
}


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_a_damaged_checkpoint_is_skipped_with_a_one_line_warning(tmp_path: Path, damage: str) -> None:
    save(tmp_path, 128)
    newest = save(tmp_path, 256)
    DAMAGE[damage](newest)
    warnings: list[str] = []
    found = find_checkpoint(tmp_path, warn=warnings.append)
    assert found is not None and found[0].name == "step_000000000128"
    assert len(warnings) == 1 and "\n" not in warnings[0]
    assert str(newest) in warnings[0] and damage.split()[0] in warnings[0]


def test_no_valid_checkpoint_at_all(tmp_path: Path) -> None:
    assert find_checkpoint(tmp_path) is None
    DAMAGE["state.pkl garbage"](save(tmp_path, 128))
    warnings: list[str] = []
    assert find_checkpoint(tmp_path, warn=warnings.append) is None
    assert len(warnings) == 1


def test_pruning_keeps_the_newest_and_never_deletes_a_higher_step(tmp_path: Path) -> None:
    for step in (128, 256, 384):
        save(tmp_path, step, keep=2)
    assert names(tmp_path) == ["step_000000000256", "step_000000000384"]
    # A restart from 256 (384 damaged and skipped): the run's new checkpoints sort before 384, which stays.
    DAMAGE["state.pkl truncated"](tmp_path / "checkpoints" / "step_000000000384")
    save(tmp_path, 300, keep=2)
    save(tmp_path, 350, keep=2)
    assert names(tmp_path) == ["step_000000000300", "step_000000000350", "step_000000000384"]
    assert latest_checkpoint(tmp_path) == tmp_path / "checkpoints" / "step_000000000350"


def test_the_same_step_again_replaces_it(tmp_path: Path) -> None:
    save(tmp_path, 128)
    save(tmp_path, 128)
    assert names(tmp_path) == ["step_000000000128"]
    assert latest_checkpoint(tmp_path) is not None
