"""The warm start (``whist_env.learning.cloning``, ``training/sb3/warm_start.py``, the config's ``pretrain:`` section):
the teacher's dataset, its cache and the check that refuses a dataset made for another layout or options, behaviour
cloning, DAgger relabelling, and the pretrain -> fine-tune pipeline of ``train.py``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")
pytest.importorskip("yaml")

from training.config import ConfigError, PretrainConfig, load_config  # noqa: E402
from whist_env.agents import make_agent  # noqa: E402
from whist_env.errors import ModelMismatchError  # noqa: E402
from whist_env.fingerprint import ModelMetadata  # noqa: E402
from whist_env.learning.cloning import (  # noqa: E402
    Dataset,
    agreement,
    behaviour_clone,
    dataset_path,
    generate_dataset,
    load_dataset,
    load_or_generate,
    relabel,
    save_dataset,
)
from whist_env.registry import get_spec  # noqa: E402

GAME = "german_whist_v0"


@pytest.fixture(scope="module")
def small() -> Dataset:
    return generate_dataset(GAME, {}, teacher="heuristic", deals=12, seed=3)


def _policy(seed: int = 0, net_arch: tuple[int, ...] = (64,)):  # noqa: ANN202 (an sb3 policy)
    from whist_env.envs.single_agent import make_single_agent
    from whist_env.learning.sb3 import make_ppo

    env = make_single_agent(GAME, opponents="heuristic")
    return make_ppo(env, seed=seed, net_arch=list(net_arch), n_steps=64, batch_size=64).policy


def test_dataset_rows_are_the_teachers_decisions_with_the_seat_outcome(small: Dataset) -> None:
    spec = get_spec(GAME)
    game = spec.make_rules()
    assert len(small) == 12 * 52  # German Whist: 26 tricks of two cards, every decision of both seats
    assert small.obs.shape == (len(small), spec.make_encoder(game).layout.size)
    assert small.mask.shape == (len(small), game.num_actions)
    assert all(small.mask[i, a] == 1 for i, a in enumerate(small.action))  # the teacher plays legal cards
    # The final outcome from each seat's own point of view: one deal of two seats is zero-sum, +-1.
    assert set(np.unique(small.outcome)) <= {-1.0, 1.0}
    for start in range(0, len(small), 52):
        deal = slice(start, start + 52)
        seats, outcomes = small.seat[deal], small.outcome[deal]
        assert set(seats) == {0, 1}
        assert outcomes[seats == 0][0] == -outcomes[seats == 1][0]
        assert len(set(outcomes[seats == 0])) == 1
    assert small.metadata == ModelMetadata.for_game(GAME, {})
    assert small.recipe == {"teacher": "heuristic", "deals": 12, "seed": 3}


def test_the_value_target_is_the_seats_return_from_the_decision_on() -> None:
    # A series of two deals, each paid at its end: a decision of the second deal is worth that deal only, one of
    # the first deal both (PPO's return with gamma = 1), from the deciding seat's point of view.
    options = {"num_deals": 2, "reward": "trick_diff"}
    data = generate_dataset(GAME, options, teacher="heuristic", deals=3, seed=5)
    game = get_spec(GAME).make_rules(**options)
    row = 0
    for index in range(3):
        rng = np.random.default_rng([5, index])
        state = game.new_episode(rng)
        seat_rngs = [np.random.default_rng([5, index, 1, s]) for s in range(2)]
        teachers = [make_agent("heuristic", GAME, **options) for _ in range(2)]
        rows: list[tuple[int, int]] = []  # (seat, deal) of each decision
        paid = [[0.0, 0.0], [0.0, 0.0]]  # paid[deal][seat]
        while not state.done:
            seat, deal = state.to_act, state.deal_index
            rows.append((seat, deal))
            rewards = game.step(state, int(teachers[seat].act(game.view(state, seat), seat_rngs[seat])), rng)
            if rewards is not None:
                for s in range(2):
                    paid[deal][s] += rewards[s]
        assert len(rows) == 104
        assert paid[0][0] != 0 or paid[1][0] != 0  # something was paid (a draw of both deals would test nothing)
        for seat, deal in rows:
            expected = paid[1][seat] + (paid[0][seat] if deal == 0 else 0.0)
            assert data.seat[row] == seat and data.outcome[row] == pytest.approx(expected)
            row += 1
    assert row == len(data)


def test_dataset_does_not_depend_on_the_number_of_workers(small: Dataset) -> None:
    again = generate_dataset(GAME, {}, teacher="heuristic", deals=12, seed=3, workers=2)
    for name in ("obs", "mask", "action", "outcome", "seat"):
        np.testing.assert_array_equal(getattr(small, name), getattr(again, name))


def test_a_cached_dataset_is_reused_and_the_same_after_the_round_trip(tmp_path: Path, small: Dataset) -> None:
    lines: list[str] = []
    first = load_or_generate(tmp_path, GAME, {}, teacher="heuristic", deals=12, seed=3, log=lines.append)
    assert "written to" in lines[-1]
    second = load_or_generate(tmp_path, GAME, {}, teacher="heuristic", deals=12, seed=3, log=lines.append)
    assert "decisions from" in lines[-1]
    for name in ("obs", "mask", "action", "outcome", "seat"):
        np.testing.assert_array_equal(getattr(first, name), getattr(second, name))
        np.testing.assert_array_equal(getattr(small, name), getattr(second, name))
    # A teacher given by a path stays one file name in the cache directory.
    odd = dataset_path(tmp_path, GAME, {}, {"teacher": "model:runs/x/model.zip", "deals": 12, "seed": 3})
    assert odd.parent == tmp_path and odd.name.startswith("german_whist_v0_model-runs-x-model.zip_")
    # Another recipe or other options: another file, never the cached one.
    assert dataset_path(tmp_path, GAME, {}, {"teacher": "heuristic", "deals": 13, "seed": 3}) != dataset_path(
        tmp_path, GAME, {}, {"teacher": "heuristic", "deals": 12, "seed": 3}
    )


def test_a_dataset_for_other_options_is_refused_naming_the_option(tmp_path: Path, small: Dataset) -> None:
    path = save_dataset(small, tmp_path / "d.npz")
    with pytest.raises(ModelMismatchError, match="include_history=True, loading for include_history=False"):
        load_dataset(path, GAME, {"include_history": False})
    with pytest.raises(ModelMismatchError, match="trained for german_whist_v0, not humbug_v0"):
        load_dataset(path, "humbug_v0", {})


def test_a_dataset_whose_layout_fingerprint_differs_is_refused(tmp_path: Path, small: Dataset) -> None:
    import dataclasses

    stale = dataclasses.replace(small, metadata=dataclasses.replace(small.metadata, layout_fingerprint="0" * 16))
    path = save_dataset(stale, tmp_path / "stale.npz")
    with pytest.raises(ModelMismatchError, match="the observation layout differs \\(fingerprint 0000000000000000"):
        load_dataset(path, GAME, {})


def test_a_dataset_of_another_recipe_is_refused(tmp_path: Path, small: Dataset) -> None:
    path = save_dataset(small, tmp_path / "d.npz")
    with pytest.raises(ModelMismatchError, match="teacher: saved 'heuristic', wanted 'random'"):
        load_dataset(path, GAME, {}, {"teacher": "random", "deals": 12, "seed": 3})


def test_a_file_that_is_not_a_dataset_is_refused(tmp_path: Path) -> None:
    from whist_env.errors import OptionError

    bad = tmp_path / "x.npz"
    bad.write_bytes(b"not a zip")
    with pytest.raises(OptionError, match="not a whist_env dataset"):
        load_dataset(bad, GAME, {})
    np.savez(bad, header=np.array("[" * 100_000 + "]" * 100_000))  # raised RecursionError
    with pytest.raises(OptionError, match="not a whist_env dataset .*: it nests values deeper than can be read"):
        load_dataset(bad, GAME, {})
    with pytest.raises(OptionError, match="there is no dataset at"):
        load_dataset(tmp_path / "missing.npz", GAME, {})


def test_behaviour_cloning_reduces_the_loss_and_matches_the_teacher(small: Dataset) -> None:
    policy = _policy(net_arch=(128,))
    before = agreement(policy, small)
    history = behaviour_clone(policy, small, epochs=40, batch_size=128, learning_rate=3e-3)
    assert history[-1]["policy_loss"] < 0.5 * history[0]["policy_loss"]
    assert history[-1]["value_loss"] < history[0]["value_loss"]
    after = agreement(policy, small)
    assert after > 0.9 > before  # a tiny dataset is learnt: the teacher's move on most training decisions


def test_value_coef_zero_leaves_the_value_network_alone(small: Dataset) -> None:
    import torch

    policy = _policy()
    value_before = [p.clone() for p in policy.value_net.parameters()]
    behaviour_clone(policy, small, epochs=2, batch_size=128, value_coef=0.0)
    assert all(torch.equal(a, b) for a, b in zip(value_before, policy.value_net.parameters(), strict=True))


class _Recording:
    """A learner that plays the lowest legal card and remembers every view it acted on."""

    def __init__(self) -> None:
        self.views: list[tuple[int, int, int]] = []

    def act(self, view, rng) -> int:  # noqa: ANN001 (the Agent protocol)
        self.views.append((view.seat, view.hand, view.legal))
        return (view.legal & -view.legal).bit_length() - 1


def test_dagger_labels_the_learners_states_with_the_teachers_action() -> None:
    learner = _Recording()
    data = relabel(GAME, {}, learner, teacher="heuristic", deals=6, seed=11)
    # Only the learner's decisions are rows, one per view it acted on (26 per deal in German Whist).
    assert len(data) == len(learner.views) == 6 * 26
    lowest = np.array([(legal & -legal).bit_length() - 1 for _, _, legal in learner.views])
    assert (data.action != lowest).sum() > len(data) // 4  # the labels are not the learner's own moves
    # Replay the learner's episodes: each row is the learner's view, labelled with the heuristic's card there.
    spec = get_spec(GAME)
    game = spec.make_rules()
    encoder = spec.make_encoder(game)
    row = 0
    for index in range(6):
        rng = np.random.default_rng([11, index])
        state = game.new_episode(rng)
        seat_rngs = [np.random.default_rng([11, index, 1, s]) for s in range(2)]
        learner_seat = int(rng.integers(2))
        teachers = [make_agent("heuristic", GAME) for _ in range(2)]
        while not state.done:
            seat = state.to_act
            view = game.view(state, seat)
            label = int(teachers[seat].act(view, seat_rngs[seat]))
            action = label
            if seat == learner_seat:
                obs, mask = encoder.encode_with_mask(view)
                np.testing.assert_array_equal(data.obs[row], obs)
                np.testing.assert_array_equal(data.mask[row], mask)
                assert data.seat[row] == seat and data.action[row] == label
                action = (view.legal & -view.legal).bit_length() - 1  # what the learner played
                row += 1
            game.step(state, action, rng)
        assert set(data.outcome[row - 26 : row]) == {state.returns[learner_seat]}  # the learner's own outcome
    assert row == len(data)


def test_pretrain_config_section_is_typed_and_checked(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("game: german_whist_v0\npretrain: {deals: 50, relabel_rounds: 0}\n")
    config = load_config(path)
    assert config.pretrain == PretrainConfig(deals=50, relabel_rounds=0)
    assert load_config(path, {"pretrain.epochs": 3}).pretrain == PretrainConfig(deals=50, relabel_rounds=0, epochs=3)
    path.write_text("game: german_whist_v0\n")
    assert load_config(path).pretrain is None
    for text, match in [
        ("pretrain: {dealz: 5}", r"pretrain: unknown key\(s\) 'dealz'. Allowed keys: teacher, deals"),
        ("pretrain: {deals: many}", "pretrain.deals must be int"),
        ("pretrain: {deals: 0}", "pretrain.deals must be positive"),
        ("pretrain: {teacher: grandmaster}", "pretrain.teacher: unknown agent 'grandmaster'"),
        ("pretrain: 3", "pretrain must be a mapping or null"),
    ]:
        path.write_text(f"game: german_whist_v0\n{text}\n")
        with pytest.raises(ConfigError, match=match):
            load_config(path)


@pytest.mark.slow
def test_pretrain_then_fine_tune_runs_end_to_end(tmp_path: Path) -> None:
    from training.train import main

    config = tmp_path / "tiny.yaml"
    config.write_text(
        "game: german_whist_v0\ntotal_timesteps: 512\nn_envs: 2\nn_steps: 128\nbatch_size: 128\nn_epochs: 1\n"
        "net_arch: [32]\nopponents: {heuristic: 1.0}\neval_freq: 100000\neval_deals: 4\nfinal_eval_deals: 4\n"
        "eval_opponents: [heuristic]\ncheckpoint_freq: 100000\n"
        f"pretrain: {{deals: 8, epochs: 2, relabel_rounds: 1, relabel_deals: 4, relabel_epochs: 1, workers: 1, "
        f"cache_dir: {tmp_path / 'cache'}}}\n"
    )
    assert main(["--config", str(config), "--runs-dir", str(tmp_path / "runs")]) == 0
    run = tmp_path / "runs" / "tiny_s0"
    record = json.loads((run / "pretrain.json").read_text())
    stages = [r["stage"] for r in record["records"]]
    assert stages == ["clone", "clone", "dagger 1"]
    assert record["records"][-1]["rows"] == 8 * 52 + 4 * 26  # the teacher's rows, then the learner's
    assert (run / "model.zip").is_file() and (run / "report.md").is_file()
    # The report states every phase's time, the warm start's included (it once left it out).
    phases = json.loads((run / "phases.json").read_text())
    assert list(phases) == ["set-up", "warm start", "PPO", "final evaluation"]
    assert all(seconds > 0 for seconds in phases.values())
    assert "warm start" in (run / "report.md").read_text().split("wall time:", 1)[1].split("\n", 1)[0]
    assert list((tmp_path / "cache").glob("german_whist_v0_heuristic_*.npz"))
    # The saved config round-trips with its pretrain section.
    assert load_config(run / "config.yaml").pretrain == PretrainConfig(
        deals=8,
        epochs=2,
        relabel_rounds=1,
        relabel_deals=4,
        relabel_epochs=1,
        workers=1,
        cache_dir=str(tmp_path / "cache"),
    )
