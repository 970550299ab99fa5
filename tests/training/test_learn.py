"""The package's training loop (``whist_env.learning.sb3``): tasks between rollouts, evaluations that play the current
weights, progress of the long evaluations, single-threaded evaluation workers, and both front ends on it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

from train_helpers import REPO, ThreadCheckAgent, tiny_args  # noqa: E402

from whist_env.envs.single_agent import make_single_agent  # noqa: E402
from whist_env.learning import sb3 as learn  # noqa: E402

GAME, OPTIONS = "oh_hell_v0", {"num_players": 2, "episode": "deal", "hand_size": 2}


def tiny_model() -> Any:
    env = make_single_agent(GAME, opponents="random", **OPTIONS)
    return learn.make_ppo(env, seed=0, net_arch=[16], n_steps=32, batch_size=32, n_epochs=1, gamma=1.0)


def test_import_does_not_import_torch() -> None:
    code = (
        "import sys, whist_env, whist_env.learning.sb3, whist_env.teaching\n"
        "heavy = [m for m in ('torch', 'stable_baselines3', 'sb3_contrib') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO)


def test_tasks_run_between_rollouts_and_episodes_are_reported() -> None:
    model = tiny_model()
    seen: list[int] = []
    returns: list[float] = []
    learn.run_ppo(model, 96, [learn.Periodic("t", 64, seen.append)], on_episode=returns.append)
    assert seen == [0, 64] and model.num_timesteps == 96
    assert returns and all(isinstance(r, float) for r in returns)
    task = learn.Periodic("t", 64, seen.append, next=128)
    learn.run_ppo(model, 192, [task], resume=True)  # the counter goes on from 96
    assert seen == [0, 64, 128] and task.next == 192 and model.num_timesteps == 192


def test_the_training_envs_report_episodes_through_sb3s_monitor() -> None:
    """The envs write no ``info["episode"]`` of their own (Gymnasium's ``RecordEpisodeStatistics`` owns the key):
    ``training/train.py``'s envs are in SB3's ``Monitor``, so that SB3 logs ``ep_rew_mean``, in the game's units."""
    import numpy as np
    from stable_baselines3.common.monitor import Monitor

    from training.config import load_config
    from training.sb3.envs import build_vec_env

    config = load_config(
        REPO / "configs" / "oh_hell.yaml", {"n_envs": 2, "batch_size": 64, "game_options": OPTIONS, "reward_scale": 0.5}
    )
    venv = build_vec_env(config)
    assert venv.env_is_wrapped(Monitor) == [True, True]
    venv.seed(0)
    venv.reset()
    totals, ended = np.zeros(2), 0
    while ended < 4:
        masks = np.stack(venv.env_method("action_masks"))
        _, rewards, dones, infos = venv.step(np.array([int(np.flatnonzero(m)[0]) for m in masks]))
        totals += rewards
        for i in np.flatnonzero(dones):
            assert infos[i]["episode"]["r"] == pytest.approx(totals[i] / 0.5)  # before the reward scaling
            totals[i], ended = 0.0, ended + 1
    # --resume: a new process's envs take the checkpoint's states and step on without a reset
    states = venv.env_method("get_state")
    venv.close()
    resumed = build_vec_env(config)
    for i, snapshot in enumerate(states):
        resumed.env_method("set_state", snapshot, indices=[i])
    masks = np.stack(resumed.env_method("action_masks"))
    resumed.step(np.array([int(np.flatnonzero(m)[0]) for m in masks]))
    resumed.close()


def test_each_evaluation_plays_the_current_weights(monkeypatch: pytest.MonkeyPatch) -> None:
    from training import evaluation
    from training.config import load_config
    from training.sb3.trainer import make_evaluate

    played: list[tuple[int, dict[str, Any]]] = []

    def fake(game: str, options: dict, learner: Any, name: str, deals: int, seed: int, *a: Any, **k: Any) -> dict:
        played.append((id(learner), {n: t.clone() for n, t in learner.actor.state_dict().items()}))
        return {"mean": 0.0, "diff": 0.0}

    monkeypatch.setattr(evaluation, "evaluate_learner", fake)
    config = load_config(REPO / "configs" / "oh_hell.yaml", {"eval_opponents": ["random"], "game_options": OPTIONS})
    model = tiny_model()
    evaluate = make_evaluate(config, model.get_env().envs[0].unwrapped.encoder)
    evaluate(model, 0, 2, "periodic")
    with torch.no_grad():
        for p in model.policy.parameters():
            p.add_(0.25)  # what a PPO update does: new weights in the same model
    evaluate(model, 128, 2, "periodic")
    current = learn.actor_of(model.policy).state_dict()
    (_, before), (_, after) = played
    assert after.keys() == current.keys() and all(torch.equal(after[k], current[k]) for k in current)
    assert not all(torch.equal(before[k], after[k]) for k in current)


def test_policy_agent_sync_copies_the_weights() -> None:
    model = tiny_model()
    agent = learn.PolicyAgent.from_policy(model.policy, model.get_env().envs[0].unwrapped.encoder)
    with torch.no_grad():
        for p in model.policy.action_net.parameters():
            p.mul_(-1.0)
    weights = agent.actor[2].weight
    assert not torch.equal(weights, model.policy.action_net.weight)
    assert agent.sync(model.policy) is agent
    assert torch.equal(agent.actor[2].weight, model.policy.action_net.weight)


def test_start_up_and_final_evaluations_show_progress(capsys: pytest.CaptureFixture[str]) -> None:
    from training.config import load_config
    from training.sb3.trainer import make_evaluate

    config = load_config(REPO / "configs" / "oh_hell.yaml", {"eval_opponents": ["random"], "game_options": OPTIONS})
    model = tiny_model()
    evaluate = make_evaluate(config, model.get_env().envs[0].unwrapped.encoder)
    for timesteps, kind in ((0, "periodic"), (64, "periodic"), (64, "final")):
        evaluate(model, timesteps, 3, kind)
        err = capsys.readouterr().err
        if timesteps == 64 and kind == "periodic":
            assert err == ""  # the short periodic evaluations stay quiet
        else:
            what = "final" if kind == "final" else "start-up"
            assert f"{what} evaluation vs random: 3 duplicate deals" in err
            assert "3/3 [" in err and " deals/s]" in err  # the progress bar


@pytest.mark.slow
def test_evaluation_workers_run_torch_on_one_thread() -> None:
    from whist_env.evaluation import evaluate

    report = evaluate(GAME, [ThreadCheckAgent(), "random"], 4, seed=0, options=OPTIONS, workers=2)
    assert report.agents[0].decisions > 0 and report.illegal_actions == 0


@pytest.mark.slow
def test_notebooks_and_train_py_run_the_package_loop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from training.train import main
    from whist_env import teaching

    calls: list[int] = []
    real = learn.run_ppo

    def counted(model: Any, total: int, *args: Any, **kwargs: Any) -> Any:
        calls.append(total)
        return real(model, total, *args, **kwargs)

    monkeypatch.setattr(learn, "run_ppo", counted)
    run = teaching.train_ppo(GAME, OPTIONS, total_timesteps=64, eval_every=64, eval_deals=2, n_steps=32)
    assert calls == [64] and [r["timesteps"] for r in run.curve] == [0, 64]
    assert main(tiny_args(REPO / "configs" / "oh_hell.yaml", tmp_path, "loop", 128)) == 0
    assert calls == [64, 128]


def test_single_deal_unit_only_where_the_layout_stays() -> None:
    """The arena's one-deal unit is used for a learner only where the training options allow it and leave the
    observation layout unchanged: Oh Hell's default match observes more than one deal does."""
    from training.evaluation import single_deal_ok

    assert single_deal_ok("german_whist_v0", {})
    assert single_deal_ok("oh_hell_v0", {"episode": "deal"})
    assert not single_deal_ok("oh_hell_v0", {})  # the default match: another layout
    assert not single_deal_ok("humbug_v0", {"num_deals": 3})  # an option set against the one-deal unit


@pytest.mark.parametrize("canonical", [False, True])
def test_evaluations_on_the_batched_arena_equal_the_aec_arenas(tmp_path: Path, canonical: bool) -> None:
    """With a run directory, train.py exports the policy of the moment (``policy.npz``) and plays it on the batched
    arena: the same deals and the same greedy decisions as the torch agent on the AEC arena, so against a
    deterministic opponent the same rows (random players draw differently on the two arenas)."""
    from training.config import load_config
    from training.sb3.trainer import make_evaluate

    overrides = {"eval_opponents": ["heuristic"], "game_options": OPTIONS, "canonical_suits": canonical}
    config = load_config(REPO / "configs" / "oh_hell.yaml", overrides)
    model = tiny_model()
    encoder = model.get_env().envs[0].unwrapped.encoder
    aec = make_evaluate(config, encoder)(model, 0, 40, "periodic")
    batched = make_evaluate(config, encoder, tmp_path)(model, 0, 40, "periodic")
    assert [r["engine"] for r in aec] == ["aec"] and [r["engine"] for r in batched] == ["batched"]
    drop = lambda r: {k: v for k, v in r.items() if k != "engine"}  # noqa: E731
    assert [drop(r) for r in batched] == [drop(r) for r in aec]
    assert (tmp_path / "policy.npz").exists()
