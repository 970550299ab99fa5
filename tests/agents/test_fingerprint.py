"""Model metadata: the layout fingerprint, the options recorded, and the check every loader makes."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from whist_env import make
from whist_env.agents import make_agent
from whist_env.encoding.layout import Layout, Piece, cards, count, flags, onehot, scalar
from whist_env.errors import ModelMismatchError, OptionError
from whist_env.fingerprint import (
    MEMBER,
    ModelMetadata,
    check,
    check_model,
    layout_fingerprint,
    read_metadata,
    save_model_metadata,
    write_metadata,
)
from whist_env.registry import game_ids


def _layout(*pieces: Piece) -> Layout:
    return Layout(list(pieces))


def test_the_fingerprint_is_the_structure_not_the_doc_text() -> None:
    base = _layout(cards("hand", "my cards"), onehot("trump", ["C", "D"]), scalar("score", 10.0))
    same = _layout(cards("hand", "other words"), onehot("trump", ["C", "D"], "doc"), scalar("score", 10.0, "x"))
    assert layout_fingerprint(base) == layout_fingerprint(same)
    assert len(layout_fingerprint(base)) == 16
    variants = [
        _layout(cards("hand2"), onehot("trump", ["C", "D"]), scalar("score", 10.0)),  # a name
        _layout(cards("hand"), flags("trump", ["C", "D"]), scalar("score", 10.0)),  # a kind
        _layout(cards("hand"), onehot("trump", ["C", "D", "H"]), scalar("score", 10.0)),  # a size
        _layout(cards("hand"), onehot("trump", ["D", "C"]), scalar("score", 10.0)),  # labels
        _layout(cards("hand"), onehot("trump", ["C", "D"]), scalar("score", 20.0)),  # a scale
        _layout(onehot("trump", ["C", "D"]), cards("hand"), scalar("score", 10.0)),  # the order
        _layout(cards("hand"), count("trump", 1), scalar("score", 10.0)),  # same size, another kind
    ]
    prints = {layout_fingerprint(v) for v in variants}
    assert layout_fingerprint(base) not in prints and len(prints) == len(variants)


def test_the_fingerprint_is_the_same_in_another_process() -> None:
    code = "from whist_env.fingerprint import ModelMetadata as M; print(M.for_game('oh_hell_v0').layout_fingerprint)"
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ModelMetadata.for_game("oh_hell_v0").layout_fingerprint


@pytest.mark.parametrize("game_id", game_ids())
def test_metadata_records_every_option_with_its_default(game_id: str) -> None:
    meta = ModelMetadata.for_game(game_id)
    game = make(game_id, raw=True).game
    assert dict(meta.options) == game.config.as_dict()
    assert meta.game_id == game_id and meta.num_actions == game.num_actions and meta.obs_size > 0
    assert ModelMetadata.from_dict(json.loads(json.dumps(meta.to_dict()))) == meta


# (game, options it was trained with, options it is loaded for, the difference the message must name):
# each pair has the same observation size, so only the metadata can tell them apart
SAME_SIZE_OTHER_MEANING = [
    ("german_whist_v0", {}, {"include_history": False}, "with include_history=True, loading for include_history=False"),
    ("german_whist_v0", {}, {"phase1_follow_suit": False}, "phase1_follow_suit=True, loading for phase1_follow_suit="),
    ("humbug_v0", {"mode": "hidden_hand"}, {"mode": "open_table"}, "mode='hidden_hand', loading for mode='open_table'"),
    ("oh_hell_v0", {"include_history": False}, {"trump_mode": "turn_up"}, "trained with include_history=False"),
]  # fmt: skip


@pytest.mark.parametrize(("game_id", "trained", "loading", "message"), SAME_SIZE_OTHER_MEANING)
def test_a_model_for_other_options_is_refused_saying_what_differs(
    game_id: str, trained: dict[str, Any], loading: dict[str, Any], message: str
) -> None:
    meta = ModelMetadata.for_game(game_id, trained)
    assert meta.obs_size == ModelMetadata.for_game(game_id, loading).obs_size
    with pytest.raises(ModelMismatchError, match=message.replace("(", r"\(")):
        check(meta, game_id, loading)
    check(meta, game_id, trained)  # the options it was trained with fit


def test_a_model_of_another_game_is_refused() -> None:
    with pytest.raises(ModelMismatchError, match="trained for german_whist_v0, not humbug_v0"):
        check(ModelMetadata.for_game("german_whist_v0"), "humbug_v0", {})


def test_a_changed_layout_is_refused_even_with_the_same_options() -> None:
    meta = ModelMetadata.for_game("classic_whist_v0")
    old = ModelMetadata(**{**meta.to_dict(), "layout_fingerprint": "0123456789abcdef", "library_version": "0.0.1"})
    with pytest.raises(ModelMismatchError, match="observation layout differs .*0.0.1"):
        check(old, "classic_whist_v0", {})


def test_an_episode_length_option_may_differ_with_a_warning() -> None:
    meta = ModelMetadata.for_game("classic_whist_v0")  # trained on whole games, evaluated on single deals
    with pytest.warns(UserWarning, match="episode='game', loading for episode='deal'"):
        check(meta, "classic_whist_v0", {"episode": "deal"})
    # but not when it changes the layout (a German Whist series adds the balance pieces)
    with pytest.raises(ModelMismatchError, match="num_deals=3, loading for num_deals=1"):
        check(ModelMetadata.for_game("german_whist_v0", {"num_deals": 3}), "german_whist_v0", {})


def _fake_model(path: Path) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("data", "{}")
    return path


def test_metadata_is_stored_inside_the_zip_and_read_back(tmp_path: Path) -> None:
    path = _fake_model(tmp_path / "model.zip")
    assert read_metadata(path) is None
    meta = save_model_metadata(path, "humbug_v0", {"num_deals": 2})
    assert read_metadata(path) == meta
    write_metadata(path, ModelMetadata.for_game("humbug_v0"))  # replaced, not added twice
    with zipfile.ZipFile(path) as zf:
        assert sorted(zf.namelist()) == ["data", MEMBER]
    assert dict(read_metadata(path).options)["num_deals"] == 1  # type: ignore[union-attr]


def test_a_model_without_metadata_loads_with_a_warning(tmp_path: Path) -> None:
    path = _fake_model(tmp_path / "old.zip")
    with pytest.warns(UserWarning, match="carries no whist_env metadata"):
        assert check_model(path, "humbug_v0", {}) is None


def test_missing_and_non_zip_models_are_option_errors(tmp_path: Path) -> None:
    with pytest.raises(OptionError, match="there is no saved model at"):
        check_model(tmp_path / "x.zip", "humbug_v0")
    bad = tmp_path / "notes.zip"
    bad.write_text("not a zip")
    with pytest.raises(OptionError, match="is not a saved model"):
        check_model(bad, "humbug_v0")
    broken = tmp_path / "broken.zip"
    with zipfile.ZipFile(broken, "w") as zf:
        zf.writestr(MEMBER, "{not json")
    with pytest.raises(ModelMismatchError, match="damaged"):
        check_model(broken, "humbug_v0")
    # found by a hostile-input audit: these raised RecursionError and a bare ValueError
    for text, says in (("[" * 100_000 + "]" * 100_000, "it nests values deeper"), ("9" * 5000, "Exceeds the limit")):
        with zipfile.ZipFile(broken, "w") as zf:
            zf.writestr(MEMBER, text)
        with pytest.raises(ModelMismatchError, match=f"damaged: {says}"):
            check_model(broken, "humbug_v0")


def _first_view(game_id: str, **options: Any) -> Any:
    game = make(game_id, raw=True, **options).game
    state = game.new_episode(np.random.default_rng(0))
    return game.view(state, state.to_act)


def test_a_model_agent_checks_the_model_on_first_use(tmp_path: Path) -> None:
    path = _fake_model(tmp_path / "gw.zip")
    save_model_metadata(path, "german_whist_v0", {})
    rng = np.random.default_rng(0)
    agent = make_agent(f"model:{path}", "german_whist_v0", include_history=False)  # built, not read
    with pytest.raises(ModelMismatchError, match="include_history=True, loading for include_history=False"):
        agent.act(_first_view("german_whist_v0", include_history=False), rng)
    with pytest.raises(ModelMismatchError, match="not humbug_v0"):
        make_agent(f"model:{path}", "humbug_v0").act(_first_view("humbug_v0"), rng)
    with pytest.raises(OptionError, match="no saved model"):
        make_agent(f"model:{tmp_path / 'missing.zip'}", "german_whist_v0").check()  # type: ignore[attr-defined]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        agent = make_agent(f"model:{tmp_path / 'gw'}", "german_whist_v0")  # ".zip" may be left off
        assert agent.check() is not None  # type: ignore[attr-defined]
    assert agent.path == str(path)  # type: ignore[attr-defined]


def test_the_check_needs_no_torch(tmp_path: Path) -> None:
    path = _fake_model(tmp_path / "gw.zip")
    save_model_metadata(path, "german_whist_v0", {})
    code = (
        "import sys\n"
        "from whist_env.agents import make_agent\n"
        "from whist_env.errors import ModelMismatchError\n"
        "agent = make_agent('model:' + sys.argv[1], 'german_whist_v0', reward='trick_diff')\n"
        "try:\n"
        "    agent.load()\n"
        "except ModelMismatchError as err:\n"
        "    assert 'reward' in str(err), err\n"
        "else:\n"
        "    raise AssertionError('no mismatch')\n"
        "assert 'torch' not in sys.modules\n"
    )
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-c", code, str(path)], cwd=root, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]


@pytest.mark.slow
def test_sb3_loads_a_model_with_metadata_and_the_agent_uses_one_thread(tmp_path: Path) -> None:
    pytest.importorskip("sb3_contrib")
    code = (
        "import sys, warnings, numpy as np, torch\n"
        "import gymnasium as gym\n"
        "from gymnasium import spaces\n"
        "from sb3_contrib import MaskablePPO\n"
        "from whist_env.agents.model import ModelAgent\n"
        "from whist_env.fingerprint import save_model_metadata\n"
        "probe = ModelAgent('unused.zip', 'humbug_v0')\n"
        "class S(gym.Env):\n"
        "    observation_space = spaces.Box(0.0, 1.0, (probe.encoder.size,), np.float32)\n"
        "    action_space = spaces.Discrete(probe.num_actions)\n"
        "path = sys.argv[1]\n"
        "MaskablePPO('MlpPolicy', S(), n_steps=8, batch_size=8, device='cpu').save(path)\n"
        "save_model_metadata(path, 'humbug_v0', {})\n"
        "torch.set_num_threads(2)\n"
        "with warnings.catch_warnings():\n"
        "    warnings.simplefilter('error')\n"
        "    ModelAgent(path, 'humbug_v0').load()\n"
        "assert torch.get_num_threads() == 1, torch.get_num_threads()\n"
        "ModelAgent(path, 'humbug_v0', threads=2).load()\n"
        "assert torch.get_num_threads() == 2, torch.get_num_threads()\n"
    )
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "m.zip")], cwd=root, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-3000:]


def test_a_damaged_or_newer_record_is_refused() -> None:
    good = ModelMetadata.for_game("humbug_v0").to_dict()
    with pytest.raises(ModelMismatchError, match="damaged .*KeyError"):
        ModelMetadata.from_dict({k: v for k, v in good.items() if k != "options"})
    with pytest.raises(ModelMismatchError, match="newer than this whist_env reads"):
        ModelMetadata.from_dict({**good, "format": 99})
