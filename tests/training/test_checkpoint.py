"""Checkpoints: plain data that loads without unpickling anything (a planted payload is never run); ``--resume``
finds the newest valid one by scanning, skips damaged ones with a warning, and pruning never deletes a checkpoint
newer than the one being written; a write that fails (disk full) says so in one line and leaves the previous
checkpoint intact; what a killed write left behind is tidied on resume."""

from __future__ import annotations

import errno
import json
import math
import os
import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from training import checkpoint
from training.checkpoint import (
    FAULT_ENV,
    LATEST,
    CheckpointWriteError,
    clean_leftovers,
    find_state,
    from_plain,
    save_checkpoint,
    to_plain,
    write_checkpoint_dir,
)

REQUIRED = ("policy", "schedule")


def state(step: int) -> dict[str, Any]:
    return {"policy": {"w": torch.full((1000,), float(step))}, "schedule": {"next": step + 128}}


def save(run: Path, step: int, keep: int = 10) -> Path:
    return save_checkpoint(run, "sb3", step, state(step), None, keep)


def find_checkpoint(run: Path, warn: Any = None) -> tuple[Path, dict[str, Any]] | None:
    return find_state(run, "sb3", REQUIRED, warn=warn)


def latest_checkpoint(run: Path) -> Path | None:
    found = find_checkpoint(run)
    return None if found is None else found[0]


def names(run: Path) -> list[str]:
    return sorted(p.name for p in (run / "checkpoints").iterdir() if p.is_dir())


class Payload:
    """What a planted file would run when unpickled: it creates ``marker``."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, ...]:
        return (open, (str(self.marker), "w"))


def test_the_tree_goes_to_plain_data_and_back() -> None:
    tree = {
        "weights": torch.arange(6, dtype=torch.float32).reshape(2, 3),
        "engine": np.arange(5, dtype=np.int8),
        "optimizer": {"state": {0: {"step": torch.tensor(3.0)}}, "param_groups": [{"betas": (0.9, 0.999)}]},
        "rng": ("MT19937", np.arange(3, dtype=np.uint32), 2, 0, 0.0),
        "pcg": {"state": {"state": 2**127 + 5, "inc": 7}},
        "nan": math.nan,
        "scalar": np.float32(0.5),
        "history": [{"opponent": "random", "mean": 0.25}],
        "__tuple__": "a key that looks like a tag",
    }
    arrays: dict[str, np.ndarray] = {}
    plain = to_plain(tree, arrays)
    back = from_plain(json.loads(json.dumps(plain)), arrays)
    assert torch.equal(back["weights"], tree["weights"]) and back["weights"].dtype == torch.float32
    assert back["engine"].dtype == np.int8 and back["engine"].tolist() == [0, 1, 2, 3, 4]
    assert back["optimizer"]["state"][0]["step"].item() == 3.0 and back["optimizer"]["param_groups"][0]["betas"] == (
        0.9,
        0.999,
    )
    assert back["rng"][0] == "MT19937" and isinstance(back["rng"], tuple) and back["rng"][1].dtype == np.uint32
    assert back["pcg"]["state"]["state"] == 2**127 + 5 and math.isnan(back["nan"]) and back["scalar"] == 0.5
    assert back["history"] == tree["history"] and back["__tuple__"] == tree["__tuple__"]


@pytest.mark.parametrize("value", [Payload(Path("x")), object(), np.array([None], dtype=object), {1: len}])
def test_anything_but_plain_data_is_refused_by_name(value: Any) -> None:
    with pytest.raises(TypeError, match=r"state\.inner"):
        to_plain({"inner": value}, {})


def test_a_planted_object_array_is_never_unpickled(tmp_path: Path) -> None:
    """An ``arrays.npz`` whose array holds a pickled object: refused as damaged, and its payload never runs."""
    save(tmp_path, 128)
    newest = save(tmp_path, 256)
    marker = tmp_path / "ran"
    np.savez(newest / "arrays.npz", a0=np.array([Payload(marker)], dtype=object), allow_pickle=True)
    warnings: list[str] = []
    found = find_checkpoint(tmp_path, warn=warnings.append)
    assert found is not None and found[0].name == "step_000000000128"
    assert not marker.exists()
    assert len(warnings) == 1 and "Object arrays cannot be loaded" in warnings[0]


@pytest.mark.parametrize("name", ["state.pkl", "state.pt"])
def test_a_checkpoint_of_the_old_format_is_never_unpickled(tmp_path: Path, name: str) -> None:
    """A directory of the pickled format (sb3's ``state.pkl``, ppo's ``state.pt``), planted or old: skipped with the
    command that converts it, and its payload never runs."""
    old = tmp_path / "checkpoints" / "step_000000000128"
    old.mkdir(parents=True)
    marker = tmp_path / "ran"
    (old / name).write_bytes(pickle.dumps({"num_timesteps": 128, "payload": Payload(marker)}))
    warnings: list[str] = []
    assert find_checkpoint(tmp_path, warn=warnings.append) is None
    assert not marker.exists()
    assert len(warnings) == 1 and f"python training/convert_checkpoints.py {tmp_path} --trust" in warnings[0]


def test_written_through_a_temporary_directory_and_renamed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    renames: list[tuple[str, str]] = []
    real = os.replace
    monkeypatch.setattr(os, "replace", lambda a, b: (renames.append((Path(a).name, Path(b).name)), real(a, b))[1])
    save(tmp_path, 128)
    assert (".step_000000000128.tmp", "step_000000000128") in renames  # hidden: no listing of checkpoints sees it
    assert names(tmp_path) == ["step_000000000128"]


def test_a_half_written_checkpoint_is_never_resumed_from(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    save(tmp_path, 128)

    def crashing(folder: Path, *args: Any) -> None:
        (folder / "arrays.npz").write_bytes(b"PK\x03\x04 half")
        raise OSError("disk full")

    monkeypatch.setattr(checkpoint, "write_state", crashing)
    with pytest.raises(CheckpointWriteError, match="disk full"):
        save(tmp_path, 256)
    assert latest_checkpoint(tmp_path) == tmp_path / "checkpoints" / "step_000000000128"
    assert names(tmp_path) == ["step_000000000128"]  # the temporary directory is gone too


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux), a device that is always full")
def test_a_full_disk_is_one_line_naming_the_checkpoint_and_the_intact_previous_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    save(tmp_path, 128)

    def on_a_full_disk(folder: Path, *args: Any) -> None:
        with open("/dev/full", "wb") as f:  # a real ENOSPC from a real write
            f.write(b"\x00" * 100_000)
            f.flush()

    monkeypatch.setattr(checkpoint, "write_state", on_a_full_disk)
    with pytest.raises(CheckpointWriteError) as caught:
        save(tmp_path, 256)
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
    (root / ".step_000000000512.tmp" / "arrays.npz").write_bytes(b"PK half")
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
    path, header = found
    assert path.name == "step_000000000256" and header["step"] == 256
    assert torch.equal(header["state"]["policy"]["w"], state(256)["policy"]["w"])


def _truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _rewrite(path: Path, **change: Any) -> None:
    header = json.loads(path.read_text())
    path.write_text(json.dumps({**header, **change}))


DAMAGE = {
    "checkpoint.json truncated": lambda c: _truncate(c / "checkpoint.json"),
    "checkpoint.json empty": lambda c: (c / "checkpoint.json").write_bytes(b""),
    "checkpoint.json garbage": lambda c: (c / "checkpoint.json").write_bytes(b"\x80\x05garbage" * 50),
    "checkpoint.json nested too deeply": lambda c: (c / "checkpoint.json").write_text("[" * 100_000),
    "checkpoint.json missing": lambda c: (c / "checkpoint.json").unlink(),
    "its state is incomplete": lambda c: _rewrite(c / "checkpoint.json", state={"policy": {}}),
    "another trainer's": lambda c: _rewrite(c / "checkpoint.json", trainer="ppo"),
    "another step's": lambda c: _rewrite(c / "checkpoint.json", step=128),
    "a newer format": lambda c: _rewrite(c / "checkpoint.json", version=99),
    "arrays.npz truncated": lambda c: _truncate(c / "arrays.npz"),
    "arrays.npz missing": lambda c: (c / "arrays.npz").unlink(),
    "arrays.npz without the arrays": lambda c: np.savez(c / "arrays.npz"),
}
"""Each damage and a word its warning must hold."""
SAID = {"another trainer's": "ppo trainer", "another step's": "step 128", "a newer format": "version 99",
        "its state is incomplete": "incomplete", "checkpoint.json nested too deeply": "RecursionError",
        "arrays.npz without the arrays": "arrays that are not there"}  # fmt: skip


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_a_damaged_checkpoint_is_skipped_with_a_one_line_warning(tmp_path: Path, damage: str) -> None:
    save(tmp_path, 128)
    newest = save(tmp_path, 256)
    DAMAGE[damage](newest)
    warnings: list[str] = []
    found = find_checkpoint(tmp_path, warn=warnings.append)
    assert found is not None and found[0].name == "step_000000000128"
    assert len(warnings) == 1 and "\n" not in warnings[0]
    assert str(newest) in warnings[0] and SAID.get(damage, damage.split()[0]) in warnings[0], warnings[0]


def test_no_valid_checkpoint_at_all(tmp_path: Path) -> None:
    assert find_checkpoint(tmp_path) is None
    DAMAGE["checkpoint.json garbage"](save(tmp_path, 128))
    warnings: list[str] = []
    assert find_checkpoint(tmp_path, warn=warnings.append) is None
    assert len(warnings) == 1


def test_pruning_keeps_the_newest_and_never_deletes_a_higher_step(tmp_path: Path) -> None:
    for step in (128, 256, 384):
        save(tmp_path, step, keep=2)
    assert names(tmp_path) == ["step_000000000256", "step_000000000384"]
    # A restart from 256 (384 damaged and skipped): the run's new checkpoints sort before 384, which stays.
    DAMAGE["arrays.npz truncated"](tmp_path / "checkpoints" / "step_000000000384")
    save(tmp_path, 300, keep=2)
    save(tmp_path, 350, keep=2)
    assert names(tmp_path) == ["step_000000000300", "step_000000000350", "step_000000000384"]
    assert latest_checkpoint(tmp_path) == tmp_path / "checkpoints" / "step_000000000350"


def test_the_same_step_again_replaces_it(tmp_path: Path) -> None:
    save(tmp_path, 128)
    save(tmp_path, 128)
    assert names(tmp_path) == ["step_000000000128"]
    assert latest_checkpoint(tmp_path) is not None
