"""Damaged files of every binary format whist_env writes and reads back: an exported policy, a cloning dataset, a
checkpoint and a model's metadata. Whatever the damage, the loader either reads the file (a damage it need not notice:
a zip timestamp, a number in JSON) or refuses it with its own error, naming the file.

Found by this file: numpy and zipfile raise ``MemoryError`` (a damaged array shape), ``NotImplementedError`` (a damaged
compression field) and ``tokenize.TokenError`` (a damaged ``.npy`` header). They reached the user as tracebacks, and a
resume stopped on a damaged checkpoint where it should have skipped it for the one before.
"""

from __future__ import annotations

import re
import warnings
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from training.checkpoint import DamagedCheckpointError, find_state, read_state, write_state
from whist_env.agents.pretrained import NumpyPolicy, export_policy, load_policy
from whist_env.errors import OptionError
from whist_env.fingerprint import MEMBER, ModelMetadata, check_model, save_model_metadata
from whist_env.learning.cloning import Dataset, load_dataset, save_dataset
from whist_env.registry import get_spec

GAME = "humbug_v0"
RANDOM_DAMAGES = 150


def _policy(folder: Path) -> Path:
    game = get_spec(GAME).make_rules()
    size = get_spec(GAME).make_encoder(game).layout.size
    rng = np.random.default_rng(0)
    hidden = [(rng.normal(size=(8, size)).astype(np.float32), np.zeros(8, np.float32))]  # torch's (out, in)
    action = (rng.normal(size=(game.num_actions, 8)).astype(np.float32), np.zeros(game.num_actions, np.float32))
    return export_policy(NumpyPolicy(hidden, ["relu"], action), folder / "policy.npz", GAME)


def _dataset(folder: Path) -> Path:
    game = get_spec(GAME).make_rules()
    size = get_spec(GAME).make_encoder(game).layout.size
    rows = 20
    data = Dataset(
        obs=np.zeros((rows, size), np.float32),
        mask=np.ones((rows, game.num_actions), np.int8),
        action=np.zeros(rows, np.int64),
        outcome=np.zeros(rows, np.float32),
        seat=np.zeros(rows, np.int64),
        metadata=ModelMetadata.for_game(GAME),
        recipe={},
    )
    return save_dataset(data, folder / "data.npz")


def _checkpoint(folder: Path) -> Path:
    step = folder / "checkpoints" / "step_000000000128"
    step.mkdir(parents=True)
    state = {"policy": {"w": np.arange(300, dtype=np.float32).reshape(3, 100)}, "opt": {"lr": 0.1, "m": [np.ones(5)]}}
    write_state(step, "ppo", 128, None, state)
    return step / "arrays.npz"


def _model(folder: Path) -> Path:
    path = folder / "model.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("data", "{}")
    save_model_metadata(path, GAME, {})
    return path


def _load_policy(path: Path) -> None:
    load_policy(path, GAME)


def _load_dataset(path: Path) -> None:
    load_dataset(path, GAME, {})


def _load_checkpoint(path: Path) -> None:
    read_state(path.parent, "ppo")


def _load_model(path: Path) -> None:
    check_model(path, GAME)


# format: (write a good file into a folder, read it back, the error that refuses a damaged one)
FORMATS: dict[str, tuple[Callable[[Path], Path], Callable[[Path], None], type[Exception]]] = {
    "exported policy": (_policy, _load_policy, OptionError),
    "dataset": (_dataset, _load_dataset, OptionError),
    "checkpoint": (_checkpoint, _load_checkpoint, DamagedCheckpointError),
    "model metadata": (_model, _load_model, OptionError),
}


def _edit_first_member(path: Path, edit: Callable[[bytes], bytes], suffix: str = ".npy") -> None:
    """Rewrite the zip at ``path`` with its first member ending in ``suffix`` edited (the same compression)."""
    with zipfile.ZipFile(path) as zf:
        members = [(info, zf.read(info)) for info in zf.infolist()]
    target = next(info.filename for info, _ in members if info.filename.endswith(suffix))
    with zipfile.ZipFile(path, "w") as zf:
        for info, data in members:
            zf.writestr(info, edit(data) if info.filename == target else data)


def _npy_header(edit: Callable[[str], str]) -> Callable[[bytes], bytes]:
    """An edit of a ``.npy`` member's header text, its length kept (the padding absorbs the change)."""

    def apply(data: bytes) -> bytes:
        length = int.from_bytes(data[8:10], "little")
        header = data[10 : 10 + length].decode("latin1")
        changed = edit(header.rstrip("\n").rstrip(" "))
        assert len(changed) < length
        return data[:10] + (changed + " " * (length - len(changed) - 1) + "\n").encode("latin1") + data[10 + length :]

    return apply


def _huge_shape(path: Path) -> None:  # numpy: MemoryError
    _edit_first_member(path, _npy_header(lambda h: re.sub(r"'shape': \([^)]*\)", "'shape': (10000000000000,)", h)))


def _open_header(path: Path) -> None:  # numpy: tokenize.TokenError
    _edit_first_member(path, _npy_header(lambda h: h.replace("}", " ")))


def _unknown_compression(path: Path, member: str = "") -> None:  # zipfile: NotImplementedError
    """The compression method of the zip's first member (or of ``member``) in its central directory set to 99."""
    data = bytearray(path.read_bytes())
    entry = data.find(b"PK\x01\x02")
    while member and data[entry + 46 : entry + 46 + int.from_bytes(data[entry + 28 : entry + 30], "little")] != (
        member.encode()
    ):
        entry = data.find(b"PK\x01\x02", entry + 1)
    data[entry + 10 : entry + 12] = (99).to_bytes(2, "little")  # the method, at +10 of the entry
    path.write_bytes(bytes(data))


CRAFTED = [(fmt, damage) for fmt in FORMATS for damage in (_huge_shape, _open_header, _unknown_compression)]
CRAFTED = [(fmt, damage) for fmt, damage in CRAFTED if fmt != "model metadata" or damage is _unknown_compression]


@pytest.mark.parametrize(("fmt", "damage"), CRAFTED, ids=[f"{f}-{d.__name__}" for f, d in CRAFTED])
def test_a_damage_numpy_or_zipfile_does_not_name_is_refused(tmp_path: Path, fmt: str, damage: Callable) -> None:
    """Each damage reached the user as a traceback; a model's check reads its metadata member alone (JSON: no
    ``.npy`` header to damage), so the model is damaged there."""
    write, load, error = FORMATS[fmt]
    path = write(tmp_path)
    if fmt == "model metadata":
        _unknown_compression(path, MEMBER)
    else:
        damage(path)
    with pytest.raises(error) as err:
        load(path)
    assert path.name in str(err.value), err.value


@pytest.mark.parametrize("damage", [_huge_shape, _open_header, _unknown_compression], ids=lambda d: d.__name__)
def test_a_resume_skips_such_a_damaged_checkpoint_for_the_one_before(tmp_path: Path, damage: Callable) -> None:
    older = _checkpoint(tmp_path)
    newer = older.parent.with_name("step_000000000256")
    newer.mkdir()
    write_state(newer, "ppo", 256, None, {"policy": {"w": np.zeros((3, 100), np.float32)}})
    damage(newer / "arrays.npz")
    warned: list[str] = []
    found = find_state(tmp_path, "ppo", warn=warned.append)
    assert found is not None and found[0] == older.parent and found[1]["step"] == 128
    assert len(warned) == 1 and str(newer) in warned[0]


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_random_damages_are_read_or_refused_with_the_formats_error(tmp_path: Path, fmt: str) -> None:
    write, load, error = FORMATS[fmt]
    path = write(tmp_path)
    good = path.read_bytes()
    rng = np.random.default_rng(list(FORMATS).index(fmt))
    refused = 0
    for _ in range(RANDOM_DAMAGES):
        data = bytearray(good)
        for _ in range(int(rng.integers(1, 4))):
            data[int(rng.integers(len(data)))] = int(rng.integers(256))
        if rng.random() < 0.2:
            data = data[: int(rng.integers(len(data)))]
        path.write_bytes(bytes(data))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                load(path)
        except error:
            refused += 1
    assert refused > RANDOM_DAMAGES // 2  # most damages are seen (the zip's CRCs, the checks of each loader)
