"""``training/config.py``: YAML into a typed dataclass; unknown keys, wrong types and bad values are errors."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

pytest.importorskip("yaml")

from training.config import ConfigError, TrainConfig, from_dict, load_config, parse_set  # noqa: E402
from whist_env.registry import game_ids  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
# configs/rllib_*.yaml are training/rllib/trainer.py's (RLlibConfig), tested in tests/rllib
CONFIGS = sorted(p for p in (REPO / "configs").glob("*.yaml") if not p.name.startswith(("rllib_", "ppo_vec_")))


def write(tmp_path: Path, text: str, name: str = "c.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_one_config_per_game_and_all_load() -> None:
    names = {p.name for p in CONFIGS}
    assert {"german_whist.yaml", "classic_whist.yaml", "humbug.yaml", "oh_hell.yaml", "humbug_whist.yaml"} <= names
    games = set()
    for path in CONFIGS:
        config = load_config(path)
        assert isinstance(config, TrainConfig)
        assert config.run_name == f"{path.stem}_s0"
        games.add(config.game)
    assert games == set(game_ids())


def test_unknown_key_names_the_allowed_keys(tmp_path: Path) -> None:
    path = write(tmp_path, "game: humbug_v0\nlearning_rat: 0.001\n")
    with pytest.raises(ConfigError) as err:
        load_config(path)
    msg = str(err.value)
    assert "'learning_rat'" in msg and "Allowed keys:" in msg
    for field in dataclasses.fields(TrainConfig):
        assert field.name in msg


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("game: humbug_v0\nn_envs: '8'\n", "n_envs must be int"),
        ("game: humbug_v0\nn_envs: 8.0\n", "n_envs must be int"),
        ("game: humbug_v0\nself_play: 1\n", "self_play must be bool"),
        ("game: humbug_v0\nnet_arch: 64\n", "net_arch must be list"),
        ("game: humbug_v0\nnet_arch: [64, x]\n", r"net_arch\[1\] must be int"),
        ("game: humbug_v0\nopponents: {random: high}\n", "opponents"),
        ("n_envs: 4\n", "'game' is required"),
        ("game: bridge_v0\n", "unknown game 'bridge_v0'; available: "),
        ("game: humbug_v0\nvec_env: threads\n", "vec_env must be one of"),
        ("game: humbug_v0\nn_envs: 3\nn_steps: 10\nbatch_size: 64\n", "batch_size"),
        ("game: humbug_v0\ntotal_timesteps: 0\n", "total_timesteps must be positive"),
        ("game: humbug_v0\ngame_options: {mode: blindfolded}\n", "game_options: humbug_v0: mode="),
        ("game: humbug_v0\nopponents: {grandmaster: 1}\n", "opponents: unknown agent 'grandmaster'"),
        ("game: humbug_v0\nopponents: {'pimc(samples=0)': 1}\n", "opponents: pimc parameter samples must be"),
        ("game: humbug_v0\neval_opponents: ['pimc:fallback=pretrained:/nowhere/p.npz']\n", "eval_opponents: .*no exp"),
        ("game: humbug_v0\npartner: self\n", "partnership games"),
        ("game: humbug_v0\nlearner_seat: 2\n", "seat 0..1"),
        ("game: humbug_v0\nlearner_seat: left\n", "learner_seat"),
        ("game: humbug_v0\nself_play_weight: 1.0\n", "self_play_weight"),
        ("- game\n", "expected a mapping"),
        # found by tests/fuzz/test_fuzz_configs.py: these were accepted, or raised another error than ConfigError
        ("game: humbug_v0\nlearning_rate: -0.001\n", "learning_rate must be > 0"),
        ("game: humbug_v0\ngamma: 1.5\n", r"gamma must be in \[0, 1\]"),
        ("game: humbug_v0\nent_coef: -1\n", "ent_coef must be ≥ 0"),
        ("game: humbug_v0\nseed: -1\n", "seed must be in"),
        ("game: humbug_v0\nclip_range: .nan\n", "clip_range must be a finite number"),
        ("game: humbug_v0\npretrain: {learning_rate: .inf}\n", "pretrain.learning_rate must be a finite number"),
        ("game: humbug_v0\nvf_coef: " + "9" * 400 + "\n", "vf_coef must be a finite number, got a 400-digit int"),
        ("game: humbug_v0\nn_envs: " + "9" * 5000 + "\n", "not valid YAML"),
        ("game: humbug_v0\nn_envs: " + "[" * 5000 + "]" * 5000 + "\n", "not valid YAML: it nests values deeper"),
        # found by a hostile-input audit: a key given twice kept the last value, a device torch cannot see was found
        # only after the warm start
        ("game: humbug_v0\nn_envs: 8\ngame: classic_whist_v0\n", "the key 'game' is given twice"),
        ("game: humbug_v0\npretrain: {epochs: 2, epochs: 3}\n", "the key 'epochs' is given twice"),
        ("game: humbug_v0\ndevice: cuda:7\n", "device 'cuda:7': torch sees"),
        ("game: humbug_v0\ndevice: gpu\n", r"device must be 'auto', 'cpu' or 'cuda\[:N\]'"),
    ],
)
def test_bad_values_are_rejected_with_a_reason(tmp_path: Path, text: str, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        load_config(write(tmp_path, text))


def test_ints_are_accepted_for_floats_and_overrides_apply(tmp_path: Path) -> None:
    path = write(tmp_path, "game: humbug_v0\nlearning_rate: 1\nseed: 3\n", "mine.yaml")
    config = load_config(path, {"total_timesteps": 1000, "seed": 5})
    assert config.learning_rate == 1.0 and isinstance(config.learning_rate, float)
    assert (config.total_timesteps, config.seed, config.run_name) == (1000, 5, "mine_s5")
    with pytest.raises(ConfigError, match="unknown key"):
        load_config(path, {"totl_timesteps": 5})


def test_parse_set_reads_yaml_values() -> None:
    assert parse_set(["n_envs=4", "net_arch=[64, 64]", "partner=self", "opponents={random: 1}"]) == {
        "n_envs": 4,
        "net_arch": [64, 64],
        "partner": "self",
        "opponents": {"random": 1},
    }
    with pytest.raises(ConfigError, match="key=value"):
        parse_set(["n_envs"])
    # yaml's own errors were not ConfigErrors; the last raised RecursionError
    for bad in ("net_arch=[64", "game={", "seed=" + "9" * 5000, "seed=" + "[" * 5000):
        with pytest.raises(ConfigError, match="--set .*not valid YAML"):
            parse_set([bad])


def test_saved_config_round_trips(tmp_path: Path) -> None:
    from training.config import save_config

    config = load_config(REPO / "configs" / "classic_whist.yaml")
    save_config(config, tmp_path / "config.yaml")
    assert load_config(tmp_path / "config.yaml") == config
    assert from_dict(config.to_dict()) == config
    assert [p.name for p in tmp_path.iterdir()] == ["config.yaml"]


def test_a_config_write_cut_short_keeps_the_config_before(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every session of a run writes its config.yaml again, --resume included: a kill in the middle of that write
    left half a config, which the next --resume refused."""
    from training.config import save_config

    config = load_config(REPO / "configs" / "classic_whist.yaml")
    save_config(config, tmp_path / "config.yaml")

    def cut_short(self: Path, text: str, *args: object, **kwargs: object) -> int:
        with open(self, "w") as f:
            f.write(text[: len(text) // 2])
        raise KeyboardInterrupt  # stands for the kill

    monkeypatch.setattr(Path, "write_text", cut_short)
    with pytest.raises(KeyboardInterrupt):
        save_config(config, tmp_path / "config.yaml")
    monkeypatch.undo()
    assert load_config(tmp_path / "config.yaml") == config


def test_cli_reports_config_errors_with_status_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("sb3_contrib")
    from training.train import main

    bad = write(tmp_path, "game: humbug_v0\nbatchsize: 64\n")
    assert main(["--config", str(bad), "--runs-dir", str(tmp_path)]) == 2
    assert "unknown key(s) 'batchsize'" in capsys.readouterr().err
    assert main(["--resume", "--run-name", "nothing", "--runs-dir", str(tmp_path)]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert main([]) == 2
    assert "--config" in capsys.readouterr().err
    latin = tmp_path / "latin.yaml"
    latin.write_bytes("game: humbug_v0\n# caf\xe9\n".encode("latin-1"))  # not UTF-8: was a traceback
    assert main(["--config", str(latin), "--runs-dir", str(tmp_path)]) == 2
    assert "cannot be read" in capsys.readouterr().err
    good = write(tmp_path, "game: humbug_v0\n", "good.yaml")
    (tmp_path / "a_file").write_text("")
    assert main(["--config", str(good), "--runs-dir", str(tmp_path / "a_file")]) == 2  # was a traceback
    assert "cannot make the run directory" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------- the one config base
def _trainer_configs() -> list[tuple[type, Path]]:
    from training.config import PPOVecConfig
    from training.rllib.config import RLlibConfig

    return [
        (TrainConfig, REPO / "configs" / "german_whist.yaml"),
        (PPOVecConfig, REPO / "configs" / "ppo_vec_german_whist_warm.yaml"),
        (RLlibConfig, REPO / "configs" / "rllib_german_whist.yaml"),
    ]


def test_every_trainer_config_extends_the_one_base_and_documents_every_key() -> None:
    """sb3, ppo and rllib configs are :class:`RunConfig`s (the two PPO trainers' also :class:`PPOConfig`s): the shared
    keys have one name, one type and one meaning; every key has its doc (``--help``, unknown-key errors)."""
    from training.config import PPOConfig, RunConfig, field_docs

    shared = {f.name: f.type for f in dataclasses.fields(RunConfig)}
    ppo = {f.name: f.type for f in dataclasses.fields(PPOConfig)}
    for cls, _ in _trainer_configs():
        assert issubclass(cls, RunConfig)
        own = {f.name: f.type for f in dataclasses.fields(cls)}
        assert shared.items() <= own.items()
        if cls.__name__ != "RLlibConfig":
            assert issubclass(cls, PPOConfig) and ppo.items() <= own.items()
        docs = field_docs(cls)
        assert set(own) <= set(docs), set(own) - set(docs)
    # a subclass's own doc wins over the base's
    from training.config import PPOVecConfig

    assert field_docs(PPOVecConfig)["n_envs"] == "Environments stepped as one batch."


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("run_name", "a/b", "run_name must be a plain directory name"),
        ("net_arch", [], "net_arch must be a non-empty list of positive layer sizes"),
        ("seed", -1, "seed must be"),
        ("keep_checkpoints", 0, "keep_checkpoints must be positive"),
        ("torch_threads", 0, "torch_threads must be positive"),
        ("learning_rate", 0.0, "learning_rate must be"),
        ("gamma", 1.5, "gamma must be"),
        ("trainer", "jax", "trainer must be one of sb3, ppo, rllib"),
        # the ppo trainer passed these to the batched engine before checking them: ``self`` raised TypeError, and
        # ``seed`` was blamed on eval_opponents
        ("game_options", {"self": 1}, "game_options: german_whist_v0 has no option 'self'"),
        ("game_options", {"seed": 1}, "game_options: german_whist_v0 has no option 'seed'"),
        ("game_options", {"num_envs": 2}, "game_options: german_whist_v0 has no option 'num_envs'"),
    ],
)
def test_the_shared_keys_are_checked_alike_by_every_trainer(key: str, value: object, message: str) -> None:
    from training.config import load_config_as

    for cls, path in _trainer_configs():
        with pytest.raises(ConfigError, match=message):
            load_config_as(cls, path, {key: value})
