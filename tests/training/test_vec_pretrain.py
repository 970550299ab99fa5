"""The warm start of ``ppo_vec`` on the batched engine (``training/ppo/warm_start.py``): the engine teacher's labels
against the Python heuristic, the cached dataset and its fingerprint check, behaviour cloning of ppo_vec's network,
and a tiny run of ``ppo_vec.py`` with ``pretrain:``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("yaml")

from training import train  # noqa: E402
from training.config import ConfigError, PPOVecConfig, load_config_as  # noqa: E402
from training.ppo import loop as ppo_trainer  # noqa: E402
from training.ppo import rollout as ppo_rollout  # noqa: E402
from training.ppo import warm_start as vec_pretrain  # noqa: E402
from whist_env.agents import make_agent  # noqa: E402
from whist_env.errors import ModelMismatchError  # noqa: E402
from whist_env.learning import net  # noqa: E402
from whist_env.learning.cloning import dataset_path, load_dataset, save_dataset  # noqa: E402

GAME = "german_whist_v0"
WARM = Path(__file__).resolve().parents[2] / "configs" / "ppo_vec_german_whist_warm.yaml"


def test_engine_teacher_labels_are_the_python_heuristic() -> None:
    """The plain twin: in 312 positions (12 deals, the learner seat's 26 decisions each, reached by random moves as
    a DAgger learner's would be), every label is what the Python heuristic decides from the same state's view."""
    env = vec_pretrain.teacher_env(GAME, {}, deals=12, seed=5)
    python = make_agent("heuristic", GAME)
    rng = np.random.default_rng(0)
    wanted: list[list[int]] = []

    def learner(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        game = env.venv.game
        step = []
        for e in range(env.num_envs):
            state = env.venv.export_state(e)
            step.append(int(python.act(game.view(state, state.to_act), np.random.default_rng(e))))
        wanted.append(step)
        return np.array([rng.choice(np.flatnonzero(m)) for m in mask], np.int64)

    obs, mask, action, outcome, seat = vec_pretrain.play_teacher(env, 12, learner)
    assert len(action) == 12 * 26  # German Whist: 26 decisions per seat and deal, every one recorded
    np.testing.assert_array_equal(action, np.concatenate(wanted))
    assert mask[np.arange(len(action)), action].all()
    assert set(np.unique(outcome)) <= {-1.0, 1.0} and set(np.unique(seat)) == {0, 1}
    assert obs.dtype == np.uint8 and obs.shape == (len(action), env.venv.observation_size)


def test_teacher_outcome_is_the_seats_deal_result() -> None:
    """Self-play: each row's value target is the deal's result for the deciding seat, the same along its episode."""
    env = vec_pretrain.teacher_env(GAME, {}, deals=8, seed=1)
    _, _, _, outcome, seat = vec_pretrain.play_teacher(env, 8)
    per_step = outcome.reshape(26, 8)  # step-major: 26 decisions of each of the 8 environments' one deal
    assert (per_step == per_step[0]).all() and (seat.reshape(26, 8) == seat[:8]).all()


def test_teacher_deals_are_not_the_evaluation_deals() -> None:
    """The teacher's engine stream (``TEACHER_SEED + seed``) deals other cards than the final evaluation's deals
    (the arena's seed ``1_000_003 + seed``)."""
    from whist_env.evaluation.arena import Arena, ArenaConfig

    env = vec_pretrain.teacher_env(GAME, {}, deals=64, seed=vec_pretrain.TEACHER_SEED)
    env.reset()
    teacher = {tuple(d) for d in env.venv.decks().tolist()}
    arena = Arena(ArenaConfig(GAME, ("random", "random"), 2000, 1_000_003))
    assert not teacher & {tuple(arena.deal(i)[1]) for i in range(2000)}


def test_dataset_is_cached_and_refused_on_a_fingerprint_mismatch(tmp_path: Path) -> None:
    import dataclasses

    lines: list[str] = []
    data = vec_pretrain.teacher_dataset(GAME, {}, 6, 3, str(tmp_path), log=lines.append)
    assert "written to" in lines[-1] and data.recipe["source"] == "engine"
    again = vec_pretrain.teacher_dataset(GAME, {}, 6, 3, str(tmp_path), log=lines.append)
    assert "from" in lines[-1]
    np.testing.assert_array_equal(again.obs, data.obs)
    np.testing.assert_array_equal(again.action, data.action)
    (path,) = tmp_path.glob("*.npz")
    assert path == dataset_path(tmp_path, GAME, {}, data.recipe)
    assert load_dataset(path, GAME, {}).obs.dtype == np.uint8
    stale = dataclasses.replace(data, metadata=dataclasses.replace(data.metadata, layout_fingerprint="0" * 16))
    save_dataset(stale, path)
    with pytest.raises(ModelMismatchError, match="fingerprint 0000000000000000"):
        vec_pretrain.teacher_dataset(GAME, {}, 6, 3, str(tmp_path), log=lines.append)


def test_cloning_raises_agreement_with_the_teacher() -> None:
    import torch

    torch.set_num_threads(1)  # as ppo_vec runs it (torch_threads); more threads on a shared machine only spin
    torch.manual_seed(0)
    data = vec_pretrain.renamed(vec_pretrain.teacher_dataset(GAME, {}, 120, 7))
    model = net.build_actor_critic(data.obs.shape[1], data.mask.shape[1], [64])
    before = vec_pretrain.agreement(model, data)
    history = vec_pretrain.clone(model, data, epochs=4, batch_size=256, learning_rate=3e-3, value_coef=0.5,
                                 value_scale=1.0, seed=0)  # fmt: skip
    after = vec_pretrain.agreement(model, data)
    assert after > before + 0.2 and after > 0.6, (before, after)
    assert history[-1]["policy_loss"] < history[0]["policy_loss"]
    assert history[-1]["value_loss"] < history[0]["value_loss"]


def test_dagger_learner_plays_legal_renamed_moves() -> None:
    """DAgger's sampling learner sees the renamed game and sends the real game's actions back: all legal."""
    env = vec_pretrain.teacher_env(GAME, {}, deals=16, seed=2)
    view = ppo_rollout.LearnerView(GAME, {}, canonical_suits=True)
    model = net.build_actor_critic(env.venv.observation_size, env.venv.num_actions, [16])
    learner = vec_pretrain.SamplingLearner(model, view, seed=0)
    obs, _ = env.reset()
    for _ in range(26):
        mask = env.action_masks()
        actions = learner(obs, mask)
        assert mask[np.arange(len(actions)), actions].all()
        obs, *_ = env.step(actions)


def test_a_teacher_without_a_batched_form_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="pretrain.teacher: ppo_vec plays the teacher batched"):
        load_config_as(PPOVecConfig, WARM, {"pretrain.teacher": "random"})


TINY = [
    "--total-timesteps", "512", "--set", "n_envs=32", "--set", "n_steps=8", "--set", "batch_size=64",
    "--set", "net_arch=[32]", "--set", "final_eval_deals=6", "--set", "eval_deals=6", "--set", "pretrain.deals=40",
    "--set", "pretrain.relabel_deals=20", "--set", "pretrain.epochs=2", "--set", "pretrain.relabel_epochs=1",
]  # fmt: skip


def test_tiny_warm_run_writes_its_artefacts_and_phases(tmp_path: Path) -> None:
    """ppo_vec with the shipped recipe's config, tiny: warm start, PPO against the heuristic, the batched arena's final
    evaluation; every artefact and phase is written, and the exported policy renames its suits."""
    assert train.main(["--config", str(WARM), "--runs-dir", str(tmp_path), "--run-name", "w", *TINY]) == 0
    run = tmp_path / "w"
    phases = json.loads((run / "phases.json").read_text())
    assert list(phases) == ["set-up", "warm start", "PPO", "final evaluation"]
    assert all(v > 0 for v in phases.values())
    record = json.loads((run / "pretrain.json").read_text())
    assert [r["stage"] for r in record["records"]] == ["clone", "clone", "dagger 1", "dagger 2"]
    assert record["rows"] == (40 + 20 + 20) * 26
    summary = json.loads((run / "eval.json").read_text())
    assert summary["phases_s"] == phases
    assert list(summary["phases_cpu_s"]) == list(phases)
    assert [r["opponent"] for r in summary["eval"]] == ["random", "heuristic"]
    assert all(r["engine"] == "batched" and r["deals"] == 6 and r["illegal_actions"] == 0 for r in summary["eval"])
    agent = make_agent(f"pretrained(path={run / 'policy.npz'})", GAME)
    assert agent.canonical is not None
    state = ppo_trainer.find_checkpoint(run)
    assert state is not None and state[1]["ppo_wall_s"] > 0
