"""Fuzzing the training configs (issue #26): the shipped YAML files of each trainer with keys changed to junk,
removed or added, whole files of junk, and junk ``--set`` items, read by each trainer's own loader (``train.py``'s
``resolve_config``, ``ppo_vec.py``'s ``resolve``, ``rllib_selfplay.py``'s ``resolve_config``). No training starts.

What must hold whatever the input: the only error is ``ConfigError`` with a message; a value out of its range (a
rate or coefficient that is negative, zero where it must be positive, a fraction outside [0, 1], a count below 1,
a number that is not finite, a negative seed) is refused, and the message names the key.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from training import run
from training.config import ConfigError, PPOVecConfig, PretrainConfig, TrainConfig
from training.rllib.config import RLlibConfig

REPO = Path(__file__).resolve().parents[2]
FAST = settings(max_examples=40, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])


@dataclasses.dataclass(frozen=True)
class Trainer:
    name: str
    cls: type
    prefix: str  # its configs: configs/<prefix><game>.yaml
    resolve: Callable[[list[str]], Any]


def _resolver(name: str) -> Callable[[list[str]], Any]:
    """The run contract's resolution (:func:`training.run.resolve`) of a command line for trainer ``name``."""
    chosen = run.trainer(name)
    return lambda argv: run.resolve(chosen, run.parse_args(chosen, argv))


_train, _ppo_vec, _rllib = _resolver("sb3"), _resolver("ppo"), _resolver("rllib")


TRAINERS = [
    Trainer("train", TrainConfig, "", _train),
    Trainer("ppo_vec", PPOVecConfig, "ppo_vec_", _ppo_vec),
    Trainer("rllib", RLlibConfig, "rllib_", _rllib),
]


def shipped(trainer: Trainer) -> list[Path]:
    paths = sorted(REPO.glob(f"configs/{trainer.prefix}*.yaml"))
    if not trainer.prefix:
        paths = [p for p in paths if not p.name.startswith(("ppo_vec_", "rllib_"))]
    assert paths
    return paths


# Values each key must refuse (beyond wrong types): (key, predicate of a value in range)
RANGES: dict[str, Callable[[float], bool]] = {
    "seed": lambda v: 0 <= v < 2**32,
    "learning_rate": lambda v: v > 0,
    "gamma": lambda v: 0 <= v <= 1,
    "gae_lambda": lambda v: 0 <= v <= 1,
    "lambda_": lambda v: 0 <= v <= 1,
    "clip_range": lambda v: v > 0,
    "clip_param": lambda v: v > 0,
    "ent_coef": lambda v: v >= 0,
    "entropy_coeff": lambda v: v >= 0,
    "vf_coef": lambda v: v >= 0,
    "vf_loss_coeff": lambda v: v >= 0,
    "max_grad_norm": lambda v: v > 0,
    "grad_clip": lambda v: v > 0,
    "reward_scale": lambda v: v > 0,
    "self_play_weight": lambda v: 0 <= v < 1,
    "pretrain.learning_rate": lambda v: v > 0,
    "pretrain.value_coef": lambda v: v >= 0,
}
NUMBERS = st.sampled_from(
    [-(2**40), -1, 0, 1, 2, 3, 2**32, 2**63, 10**400, -0.5, 0.0, 0.5, 1.0, 1.5, 1e-9, -1e-9, 1e300]
)
NONFINITE = st.sampled_from([math.nan, math.inf, -math.inf])
JUNK = st.one_of(
    NUMBERS,
    NONFINITE,
    st.none(),
    st.booleans(),
    st.sampled_from(["", "x", "random", "heuristic", "rotate", "cuda:7", "a/b", "..", "pimc(samples=0)", "1e3"]),
    st.lists(st.one_of(st.integers(-2, 300), st.sampled_from(["x", "random", None])), max_size=3),
    st.dictionaries(st.sampled_from(["random", "heuristic", "main", "x", "episode", "teacher"]), NUMBERS, max_size=2),
)
JUNK_TEXT = st.one_of(
    st.text(max_size=60),
    st.sampled_from(
        [
            "[1, 2",
            "- a\n- b\n",
            "42",
            "game: [",
            "!!python/object:os.system {}",
            "game: x\n\tn: 1",
            "{game: german_whist_v0, game: humbug_v0}",
            "\x00",
            "---\n...\n---\n",
        ]
    ),  # fmt: skip
    st.just("n_envs: " + "9" * 5000),
)


def _fields(cls: type) -> list[str]:
    names = [f.name for f in dataclasses.fields(cls)]
    if cls is TrainConfig:
        names += [f"pretrain.{f.name}" for f in dataclasses.fields(PretrainConfig)]
    return names


def _float_keys(cls: type) -> set[str]:
    hints = typing.get_type_hints(cls)
    keys = {k for k, h in hints.items() if h is float}
    if cls is TrainConfig:
        keys |= {f"pretrain.{k}" for k, h in typing.get_type_hints(PretrainConfig).items() if h is float}
    return keys


def _set(values: dict[str, Any], key: str, value: Any) -> None:
    if "." in key:
        section, sub = key.split(".", 1)
        if not isinstance(values.get(section), dict):
            values[section] = {}
        values[section][sub] = value
    else:
        values[key] = value


@st.composite
def case(draw: Any, trainer: Trainer) -> tuple[str, list[str], str | None, Any]:
    """``(YAML text, --set items, the one key changed or None, its value)``; ``--resume`` among the items: the
    text is the saved ``config.yaml`` of the run to resume."""
    base = yaml.safe_load(draw(st.sampled_from(shipped(trainer))).read_text())
    keys = _fields(trainer.cls) + ["colour", "pretrain.colour"]
    kind = draw(st.integers(0, 10))
    if kind == 0:
        return draw(JUNK_TEXT), [], None, None
    if kind == 10:  # resume a run whose saved config is damaged
        text = draw(st.one_of(JUNK_TEXT, st.just(yaml.safe_dump({**base, "run_name": "r", "n_envs": "x"}))))
        return text, ["--resume"], None, None
    if kind == 1:  # one key removed
        base.pop(draw(st.sampled_from(sorted(base))))
        return yaml.safe_dump(base), [], None, None
    if kind == 2:  # junk --set items
        bad_yaml = st.sampled_from(["", "[1, 2", "{", "!!python/name:os.system", "9" * 5000, "a: b: c", "'x"])
        item = st.one_of(st.text(max_size=20), st.tuples(st.sampled_from(keys), bad_yaml).map("=".join))
        items = draw(st.lists(item, max_size=3))
        return yaml.safe_dump(base), items, None, None
    key = draw(st.sampled_from(keys))
    value = draw(st.one_of(JUNK, NONFINITE)) if key in _float_keys(trainer.cls) else draw(JUNK)
    if kind <= 5:  # in the file
        _set(base, key, value)
        return yaml.safe_dump(base), [], key, value
    # as --set key=value (the value read as YAML, like the command line)
    return yaml.safe_dump(base), [f"{key}={yaml.safe_dump(value, default_flow_style=True).strip()}"], key, value


def _must_refuse(key: str | None, value: Any, cls: type) -> bool:
    if key is None or isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    if isinstance(value, float) and not math.isfinite(value) and key in _float_keys(cls):
        return True
    check = RANGES.get(key)
    return check is not None and not check(value)


def fuzz(trainer: Trainer, example: tuple[str, list[str], str | None, Any], folder: Path) -> None:
    text, items, key, value = example
    path = folder / "config.yaml"
    path.write_text(text)
    argv = ["--config", str(path), "--runs-dir", str(folder / "runs")]
    if items == ["--resume"]:
        saved = folder / "runs" / "r" / "config.yaml"
        saved.parent.mkdir(parents=True, exist_ok=True)
        saved.write_text(text)
        path.write_text(yaml.safe_dump(yaml.safe_load(shipped(trainer)[0].read_text())))
        argv = ["--resume", "--run-name", "r", "--runs-dir", str(folder / "runs")]
        argv = argv if trainer.name != "ppo_vec" else ["--config", str(path), *argv]  # ppo_vec always needs it
        items = []
    for item in items:  # "--set=<item>": an item that begins with "-" would be read by argparse as an option (it
        argv.append(f"--set={item}")  # then exits 2 with its usage line, before the config sees the item)
    try:
        trainer.resolve(argv)
    except ConfigError as err:
        message = str(err)
        assert message
        if _must_refuse(key, value, trainer.cls):
            assert key is not None and key.split(".")[-1] in message, (key, value, message)
        return
    assert not _must_refuse(key, value, trainer.cls), f"{trainer.name} accepted {key}={value!r}"


@pytest.mark.slow
@pytest.mark.parametrize("trainer", TRAINERS, ids=[t.name for t in TRAINERS])
@FAST
@given(data=st.data())
def test_a_config_loads_or_is_refused_with_a_config_error(
    trainer: Trainer, data: st.DataObject, tmp_path_factory: pytest.TempPathFactory
) -> None:
    fuzz(trainer, data.draw(case(trainer)), tmp_path_factory.mktemp(trainer.name, numbered=True))


@pytest.mark.parametrize("trainer", TRAINERS, ids=[t.name for t in TRAINERS])
def test_every_range_is_refused_by_name(trainer: Trainer, tmp_path: Path) -> None:
    """Each key of :data:`RANGES` the trainer has, just outside its range, and a non-finite value of each float."""
    base = shipped(trainer)[0]
    values = yaml.safe_load(base.read_text())
    floats = _float_keys(trainer.cls)
    keys = [k for k in RANGES if k in _fields(trainer.cls)]
    probes = [(k, next(v for v in (-1e-9, 1.5, 2**32) if not RANGES[k](v))) for k in keys]
    probes += [(k, math.nan) for k in sorted(floats)]
    for key, value in probes:
        changed = copy.deepcopy(values)
        _set(changed, key, value)
        fuzz(trainer, (yaml.safe_dump(changed), [], key, value), tmp_path)
