"""training/ppo/trainer.py: masked PPO on the batched engine (a tiny run end to end, --resume, config errors,
masking)."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import torch
from fault_helpers import Runs, fault_chain
from gymnasium.vector import AutoresetMode
from train_helpers import REPO

from training import train  # noqa: E402
from training.config import ConfigError, PPOVecConfig, load_config_as, parse_set
from training.ppo import loop as ppo_trainer
from training.ppo import rollout as ppo_rollout
from training.report import read_eval_csv
from whist_env.agents import make_agent
from whist_env.learning import net
from whist_env.vector import make_learner_env

CONFIG = Path(__file__).resolve().parents[2] / "configs" / "ppo_vec_german_whist.yaml"
TINY = [
    "--set",
    "n_envs=32",
    "--set",
    "n_steps=8",
    "--set",
    "batch_size=64",
    "--set",
    "n_epochs=2",
    "--set",
    "net_arch=[32]",
    "--set",
    "checkpoint_freq=512",
    "--set",
    "keep_checkpoints=10",
]


def run(tmp_path: Path, *extra: str) -> int:
    return train.main(["--config", str(CONFIG), "--runs-dir", str(tmp_path), *TINY, *extra])


def final_state(run_dir: Path) -> dict:
    found = ppo_trainer.find_checkpoint(run_dir)
    assert found is not None
    return found[1]


def test_tiny_run_end_to_end(tmp_path: Path) -> None:
    """Train, checkpoint, export and evaluate through the arena; the exported agent plays as the torch actor."""
    assert run(tmp_path, "--total-timesteps", "512", "--set", "final_eval_deals=6", "--run-name", "a") == 0
    run_dir = tmp_path / "a"
    summary = json.loads((run_dir / "eval.json").read_text())
    assert summary["timesteps"] == 512
    (row,) = summary["eval"]
    assert row["opponent"] == "random" and row["deals"] == 6 and row["illegal_actions"] == 0
    assert set(summary["timers_wall_s"]) == {"env", "forward", "update"}
    state = final_state(run_dir)
    assert state["num_timesteps"] == 512
    assert (run_dir / "command.txt").read_text().startswith("python training/train.py --config")
    # the artefacts train.py writes too: every evaluation in eval.csv, the curve, the report with every phase's time
    (final,) = read_eval_csv(run_dir / "eval.csv")
    assert final["kind"] == "final" and final["timesteps"] == 512
    assert final["diff"] == pytest.approx(row["diff"], abs=1e-4)
    assert (run_dir / "learning_curve.png").stat().st_size > 0
    report = (run_dir / "report.md").read_text()
    assert "masked PPO on the batched engine" in report and "set-up" in report and "PPO" in report
    assert list((run_dir / "tb").rglob("events.out.tfevents.*"))
    # the exported actor computes the torch actor's logits
    config = load_config_as(PPOVecConfig, run_dir / "config.yaml")
    model = net.build_actor_critic(1024, 52, config.net_arch)
    model.load_state_dict(state["model"])
    agent = make_agent(f"pretrained(path={run_dir / 'policy.npz'})", "german_whist_v0")
    obs = np.random.default_rng(0).integers(0, 2, (5, 1024)).astype(np.float32)
    with torch.no_grad():
        want = model.dense_forward(torch.as_tensor(obs), torch.ones((5, 52), dtype=torch.bool))[0].numpy()
    np.testing.assert_allclose(agent.policy.logits(obs), want, rtol=1e-5, atol=1e-5)


def test_resume_continues_identically(tmp_path: Path) -> None:
    """512 steps, then --resume to 1024, ends with the very weights and optimizer state of one 1024-step run."""
    assert run(tmp_path, "--total-timesteps", "1024", "--set", "final_eval_deals=0", "--run-name", "straight") == 0
    assert run(tmp_path, "--total-timesteps", "512", "--set", "final_eval_deals=0", "--run-name", "split") == 0
    assert final_state(tmp_path / "split")["num_timesteps"] == 512
    assert (
        run(tmp_path, "--total-timesteps", "1024", "--set", "final_eval_deals=0", "--run-name", "split", "--resume")
        == 0
    )
    a, b = final_state(tmp_path / "straight"), final_state(tmp_path / "split")
    assert a["num_timesteps"] == b["num_timesteps"] == 1024
    for key, value in a["model"].items():
        assert torch.equal(value, b["model"][key]), key
    assert a["trainer_rng"] == b["trainer_rng"]
    np.testing.assert_array_equal(a["env"]["engine"]["_state"], b["env"]["engine"]["_state"])
    # a finished run resumed: nothing to train, the same newest checkpoint
    assert run(tmp_path, "--set", "final_eval_deals=0", "--run-name", "straight", "--resume") == 0
    assert final_state(tmp_path / "straight")["num_timesteps"] == 1024


def test_periodic_evaluations_at_the_start_and_every_eval_freq_survive_a_resume(tmp_path: Path) -> None:
    """``eval_freq``: the policy of the moment is evaluated at step 0 and then at the first rollout end past every
    ``eval_freq`` steps, on the same deals; a run stopped and resumed writes the same rows as one that was not."""
    every = ["--set", "eval_freq=400", "--set", "eval_deals=6", "--set", "final_eval_deals=6"]
    assert run(tmp_path, "--total-timesteps", "1024", "--run-name", "straight", *every) == 0
    assert run(tmp_path, "--total-timesteps", "512", "--run-name", "split", *every) == 0
    assert run(tmp_path, "--total-timesteps", "1024", "--run-name", "split", "--resume", *every) == 0
    rows = {r: read_eval_csv(tmp_path / r / "eval.csv") for r in ("straight", "split")}
    assert [(x["timesteps"], x["kind"]) for x in rows["straight"]] == [
        (0, "periodic"), (512, "periodic"), (1024, "periodic"), (1024, "final")
    ]  # fmt: skip
    assert all(x["deals"] == 6 and x["opponent"] == "random" and x["illegal_actions"] == 0 for x in rows["straight"])
    # the last periodic row and the final one: the same policy on the same deals
    assert rows["straight"][2]["diff"] == rows["straight"][3]["diff"]
    drop = lambda x: {k: v for k, v in x.items() if k != "wall_s"}  # noqa: E731
    assert [drop(x) for x in rows["straight"]] == [drop(x) for x in rows["split"]]
    assert final_state(tmp_path / "split")["next_eval"] == 1200


PPO_TOTAL, PPO_FREQ = 2048, 256
FAULT_TINY = [
    "--set", "n_envs=32", "--set", "n_steps=8",  # a rollout of 256 decisions: a checkpoint after every one
    "--set", "batch_size=64", "--set", "n_epochs=2", "--set", "net_arch=[32]", "--set", f"checkpoint_freq={PPO_FREQ}",
    "--set", "self_play=true", "--set", "self_play_refresh=512", "--set", "self_play_pool=2",
    "--set", "final_eval_deals=4", "--total-timesteps", str(PPO_TOTAL),
]  # fmt: skip


@pytest.fixture
def start(tmp_path: Path) -> Iterator[Runs]:
    runs = Runs(tmp_path / "logs")
    yield runs
    runs.kill_all()


@pytest.mark.slow
def test_killed_during_and_between_checkpoint_writes_and_on_a_full_disk_resumes_exactly(
    tmp_path: Path, start: Runs
) -> None:
    """ppo_vec resumes exactly (every generator and the engine's state are in the checkpoint): the run killed twice
    and stopped by a full disk (``fault_helpers.fault_chain``) ends bit for bit as one uninterrupted run (here in this
    process), weights, Adam's moments, generators, engine, self-play pool and final evaluation alike."""
    common = ["--config", str(CONFIG), "--runs-dir", str(tmp_path), *FAULT_TINY]
    assert train.main([*common, "--run-name", "straight"]) == 0
    faults = [sys.executable, str(REPO / "training" / "train.py"), *common, "--run-name", "faults"]
    where = fault_chain(start, lambda *more: [*faults, *more], tmp_path / "faults", PPO_TOTAL, PPO_FREQ)

    a, b = final_state(tmp_path / "straight"), final_state(tmp_path / "faults")
    assert a["num_timesteps"] == b["num_timesteps"] == PPO_TOTAL
    for key, value in a["model"].items():
        assert torch.equal(value, b["model"][key]), (key, where)
    for k, moments in a["optimizer"]["state"].items():
        assert all(torch.equal(moments[m], b["optimizer"]["state"][k][m]) for m in ("exp_avg", "exp_avg_sq")), where
    assert a["trainer_rng"] == b["trainer_rng"] and a["rng"]["torch"].equal(b["rng"]["torch"]), where
    np.testing.assert_array_equal(a["env"]["engine"]["_state"], b["env"]["engine"]["_state"], err_msg=where)
    assert [s["step"] for s in a["snapshots"]] == [s["step"] for s in b["snapshots"]] == [1536, 2048], where
    evals = [json.loads((tmp_path / r / "eval.json").read_text())["eval"] for r in ("straight", "faults")]
    assert evals[0] == evals[1], where


def test_resume_refuses_another_config(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(tmp_path, "--total-timesteps", "256", "--set", "final_eval_deals=0", "--run-name", "r") == 0
    capsys.readouterr()
    assert run(tmp_path, "--set", "learning_rate=0.1", "--run-name", "r", "--resume") == 2
    err = capsys.readouterr().err
    assert "differs from the run's saved" in err and "learning_rate: saved 0.0003, now 0.1" in err
    assert run(tmp_path, "--run-name", "r") == 2  # a fresh start over an existing run
    assert "already exists: pass --resume" in capsys.readouterr().err
    assert run(tmp_path, "--run-name", "nothing", "--resume") == 2
    assert "does not exist; start the run without --resume" in capsys.readouterr().err


def test_resume_overwrite_resumes_a_run_with_a_checkpoint_and_restarts_one_without(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--resume --overwrite`` (the run contract's rule, the same for every trainer): a run with a valid checkpoint
    resumes from it; a run without one starts again from zero, keeping the command that started it."""
    assert run(tmp_path, "--total-timesteps", "256", "--set", "final_eval_deals=0", "--run-name", "r") == 0
    assert run(tmp_path, "--total-timesteps", "512", "--set", "final_eval_deals=0", "--run-name", "r",
               "--resume", "--overwrite") == 0  # fmt: skip
    assert "resuming from step_000000000256" in capsys.readouterr().out
    assert final_state(tmp_path / "r")["num_timesteps"] == 512
    command = (tmp_path / "r" / "command.txt").read_text()
    for checkpoint in (tmp_path / "r" / "checkpoints").glob("step_*"):
        shutil.rmtree(checkpoint)
    assert run(tmp_path, "--total-timesteps", "512", "--set", "final_eval_deals=0", "--run-name", "r",
               "--resume") == 2  # fmt: skip
    assert "no valid checkpoint to resume from; pass --overwrite" in capsys.readouterr().err
    assert run(tmp_path, "--total-timesteps", "256", "--set", "final_eval_deals=0", "--run-name", "r",
               "--resume", "--overwrite") == 0  # fmt: skip
    assert "starting again from zero" in capsys.readouterr().out
    assert final_state(tmp_path / "r")["num_timesteps"] == 256
    assert (tmp_path / "r" / "command.txt").read_text() == command


def test_train_py_hands_a_ppo_config_to_ppo_vec(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """One command for every trainer: ``training/train.py`` runs a config whose ``trainer`` is ``ppo`` through
    the ppo trainer with the same command line, and resumes it by its name alone."""

    common = ["--config", str(CONFIG), "--runs-dir", str(tmp_path), *TINY, "--set", "final_eval_deals=0"]
    assert train.main([*common, "--total-timesteps", "256", "--run-name", "t"]) == 0
    assert (tmp_path / "t" / "policy.npz").is_file() and (tmp_path / "t" / "phases.json").is_file()
    assert "trainer: ppo" in (tmp_path / "t" / "config.yaml").read_text()
    assert (tmp_path / "t" / "command.txt").read_text().startswith("python training/train.py --config")
    assert train.trainer_of(["--resume", "--run-name", "t", "--runs-dir", str(tmp_path)]) == "ppo"
    assert train.main(["--resume", "--run-name", "t", "--runs-dir", str(tmp_path), "--total-timesteps", "512"]) == 0
    assert final_state(tmp_path / "t")["num_timesteps"] == 512
    capsys.readouterr()
    assert train.main([*common, "--set", "trainer=jax"]) == 2
    assert "trainer must be one of sb3, ppo, rllib" in capsys.readouterr().err
    assert train.trainer_of(["--config", str(REPO / "configs" / "german_whist.yaml")]) == "sb3"
    assert train.trainer_of(["--config", str(REPO / "configs" / "rllib_german_whist.yaml")]) == "rllib"
    with pytest.raises(ConfigError, match="'sb3' configs are run by training/sb3/"):
        load_config_as(PPOVecConfig, CONFIG, {"trainer": "sb3"})


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("colour=red", "unknown key(s) 'colour'"),
        ("batch_size=100", "batch_size (100) must divide n_steps * n_envs"),
        ("game=chess_v0", "game: unknown game 'chess_v0'; games with a batched engine:"),
        ("opponents={nobody: 1.0}", "opponents 'nobody'"),
        ("device=tpu", "device must be 'auto', 'cpu' or 'cuda[:N]', got 'tpu'"),
        ("n_envs=two", "n_envs must be int, got str 'two'"),
        ("partner=self", "partner applies to partnership games (classic_whist_v0), not german_whist_v0"),
        *([("device=cuda", "torch sees no CUDA device here")] if not torch.cuda.is_available() else []),
    ],
)
def test_config_errors_are_clear(tmp_path: Path, override: str, message: str) -> None:
    with pytest.raises(ConfigError) as err:
        load_config_as(PPOVecConfig, CONFIG, parse_set([override]))
    assert message in str(err.value)
    assert not any(tmp_path.iterdir())


def test_masked_sampling_is_always_legal() -> None:
    """Even where the network prefers an illegal action by far, the masked policy never samples one."""
    model = net.build_actor_critic(8, 6, [16])
    with torch.no_grad():
        model.actor_rest[-1].bias.copy_(torch.tensor([50.0, 0, 0, 0, 0, 50.0]))
    gen = torch.Generator().manual_seed(0)
    mask = torch.rand((4000, 6), generator=gen) < 0.3
    mask[:, 0] = False
    mask[~mask.any(1), 2] = True
    obs = (torch.rand((4000, 8), generator=gen) < 0.5).to(torch.uint8)
    logp = torch.log_softmax(model(net.SparseRows.of(obs), mask)[0], -1)
    actions = torch.multinomial(logp.exp(), 1, generator=gen).squeeze(1)
    assert mask[torch.arange(4000), actions].all()
    assert torch.isfinite(-(logp.exp() * logp).sum(-1)).all()  # the masked entropy has no NaN


@pytest.mark.parametrize("kind", ["binary", "scalars"])
def test_sparse_forward_matches_the_dense_twin(kind: str) -> None:
    """The fast path (sums of weight rows of the non-zero entries) equals the matrix product, values and gradients,
    on many random batches of sparse observations (0/1 ``uint8``, or ``float32`` with other values too)."""
    gen = torch.Generator().manual_seed(4)
    model = net.build_actor_critic(300, 20, [64, 32])
    for trial in range(30):
        k = int(torch.randint(1, 200, (1,), generator=gen))
        dense = (torch.rand((k, 300), generator=gen) < 0.02 + 0.1 * (trial % 3)).to(torch.uint8)
        if kind == "scalars":
            dense = dense.float() * torch.rand((k, 300), generator=gen) * 3
        dense[0] = 0  # a row with no non-zero entry at all
        mask = torch.rand((k, 20), generator=gen) < 0.5
        mask[:, 3] = True
        grads = []
        for fast in (True, False):
            model.zero_grad()
            out = model(net.SparseRows.of(dense), mask) if fast else model.dense_forward(dense, mask)
            (torch.log_softmax(out[0], -1)[mask].sum() + out[1].square().sum()).backward()
            grads.append([p.grad.clone() for p in model.parameters()] + [out[0].detach(), out[1].detach()])
        for fast_value, dense_value in zip(*grads, strict=True):
            torch.testing.assert_close(fast_value, dense_value, rtol=1e-4, atol=1e-4)
    # a rollout's steps stacked (each padded to its own width) give the same rows
    parts = [net.SparseRows.of(dense[:1]), net.SparseRows.of(dense[1:])]
    with torch.no_grad():
        whole = model(net.SparseRows.cat(parts, 300), mask)
        torch.testing.assert_close(whole, model.dense_forward(dense, mask), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype", ["uint8", "float32"])
def test_numba_column_scan_equals_its_torch_twin(dtype: str) -> None:
    """``SparseRows.of``'s numba scan of binary CPU batches against ``SparseRows.of_torch`` (the plain twin): the same
    padded columns on many random batches (empty rows, all-zero batches, one row); a batch with another value than
    0 and 1 takes the twin's path and keeps its values."""
    gen = torch.Generator().manual_seed(11)
    for trial in range(60):
        k, d = int(torch.randint(1, 120, (1,), generator=gen)), int(torch.randint(1, 400, (1,), generator=gen))
        dense = (torch.rand((k, d), generator=gen) < [0.0, 0.01, 0.07, 0.5][trial % 4]).to(getattr(torch, dtype))
        fast, plain = net.SparseRows.of(dense), net.SparseRows.of_torch(dense)
        assert fast.vals is None and plain.vals is None
        assert torch.equal(fast.cols, plain.cols), trial
    scaled = torch.zeros((3, 10))
    scaled[1, 4] = 2.5
    rows = net.SparseRows.of(scaled)
    assert rows.vals is not None and rows.cols[1, 0] == 4 and float(rows.vals[1, 0]) == 2.5


def test_numba_row_sums_equal_torch_embedding_bag() -> None:
    """The first layers' numba kernels (binary rows on the CPU) against their plain twin, torch's ``embedding_bag``:
    the same sums and the same weight gradient (the pad row's gradient zero), on random padded batches."""
    gen = torch.Generator().manual_seed(9)
    for trial in range(40):
        k, d, h = int(torch.randint(1, 300, (1,), generator=gen)), 257, 48
        dense = (torch.rand((k, d), generator=gen) < 0.01 + 0.05 * (trial % 4)).to(torch.uint8)
        dense[0] = 0
        rows = net.SparseRows.of(dense)
        weight = torch.randn((d + 1, h), generator=gen)
        weight[d] = 0
        grad_out = torch.randn((k, h), generator=gen)
        results = []
        for fast in (True, False):
            w = weight.clone().requires_grad_(True)
            if fast:
                out = net.first_layers(rows, w)
            else:
                out = torch.nn.functional.embedding_bag(rows.cols, w, mode="sum", padding_idx=d)
            out.backward(grad_out)
            results.append((out.detach(), w.grad))
        torch.testing.assert_close(results[0][0], results[1][0], rtol=1e-6, atol=1e-5)
        torch.testing.assert_close(results[0][1], results[1][1], rtol=1e-6, atol=1e-5)
        assert not results[0][1][d].any()


def _plain_row_sums(cols: np.ndarray, weight: np.ndarray, out: np.ndarray) -> None:
    """The first layers' sums one weight row at a time, in the row's order (the pad column skipped)."""
    pad = weight.shape[0] - 1
    for r in range(cols.shape[0]):
        out[r] = 0.0
        for c in cols[r]:
            if c != pad:
                out[r] += weight[c]


def _plain_row_scatter(cols: np.ndarray, grad_out: np.ndarray, grad_weight: np.ndarray) -> None:
    """Their gradient one row at a time, in the batch's order (the pad column skipped)."""
    pad = grad_weight.shape[0] - 1
    for r in range(cols.shape[0]):
        for c in cols[r]:
            if c != pad:
                grad_weight[c] += grad_out[r]


def test_numba_row_kernels_add_in_the_plain_loops_order() -> None:
    """The first layers' numba kernels (eight weight rows per pass; the gradient grouped by column first) against
    the plain loops that add one row at a time: equal to the last bit, so that a run trains the same network as
    before they were made faster; on random batches with the pad column anywhere, repeated columns, empty rows and
    rows of fewer than eight columns."""
    sums, scatter = net._kernel("row_sums", net._row_sums), net._kernel("row_scatter", net._row_scatter)
    rng = np.random.default_rng(12)
    for trial in range(200):
        k, d, h, width = (int(x) for x in rng.integers(1, (150, 300, 70, 40)))
        cols = rng.integers(0, d + 1, (k, width))
        cols[0] = d
        weight = rng.standard_normal((d + 1, h)).astype(np.float32)
        grad_out = rng.standard_normal((k, h)).astype(np.float32)
        fast, plain = np.empty((k, h), np.float32), np.empty((k, h), np.float32)
        sums(cols, weight, fast)
        _plain_row_sums(cols, weight, plain)
        assert np.array_equal(fast.view(np.int32), plain.view(np.int32)), trial
        fast_g, plain_g = np.zeros((d + 1, h), np.float32), np.zeros((d + 1, h), np.float32)
        scatter(cols, grad_out, fast_g)
        _plain_row_scatter(cols, grad_out, plain_g)
        assert np.array_equal(fast_g.view(np.int32), plain_g.view(np.int32)), trial
        assert not fast_g[d].any()


@pytest.mark.parametrize("canonical", [True, False])
@pytest.mark.parametrize("game", ["german_whist_v0", "classic_whist_v0", "humbug_v0", "humbug_whist_v0", "oh_hell_v0"])
def test_the_learners_sparse_view_is_the_dense_view_scanned(game: str, canonical: bool) -> None:
    """What the rollout feeds the network (:meth:`LearnerView.sparse`: the env's rows scanned once, the columns
    renamed and sorted) against its plain twin (the dense rows renamed, then scanned): the same columns in the same
    order in every row, the same masks and renamings, and the network's logits and values equal to the last bit; on
    engine positions of every phase."""
    options = {"trump_mode": "turn_up", "episode": "deal", "hand_size": 5} if game == "oh_hell_v0" else {}
    env = make_learner_env(game, 96, seed=2, autoreset_mode=AutoresetMode.SAME_STEP, **options)
    view = ppo_rollout.LearnerView(game, options, canonical)
    model = net.build_actor_critic(env.venv.observation_size, env.venv.num_actions, [32])
    rng = np.random.default_rng(4)
    obs, _ = env.reset(seed=2)
    renamed = 0
    for _ in range(30):
        mask = env.action_masks()
        rows, legal, perm = view.sparse(obs, mask, torch.device("cpu"))
        dense, legal_d, perm_d = view.forward(obs, mask)
        plain = net.SparseRows.of(torch.as_tensor(dense))
        np.testing.assert_array_equal(legal, legal_d)
        assert (perm is None) == (perm_d is None) == (not canonical)
        if perm is not None:
            np.testing.assert_array_equal(perm, perm_d)
            renamed += int((perm != perm[0]).any())
        assert torch.equal(rows.cols, plain.cols) and rows.vals is None and plain.vals is None
        with torch.no_grad():
            m = torch.as_tensor(legal)
            for got, want in zip(model(rows, m), model(plain, m), strict=True):
                assert torch.equal(got, want)  # the same sums in the same order: bit for bit
        obs, *_ = env.step(np.array([rng.choice(np.flatnonzero(m)) for m in mask]))
    assert renamed > 0 or not canonical


def test_training_plays_only_legal_actions() -> None:
    """A rollout on the engine: the env raises IllegalActionError on any illegal learner action, so a rollout that
    completes was legal everywhere; the stored actions also agree with the stored masks."""
    config = load_config_as(PPOVecConfig, CONFIG, parse_set(TINY[1::2]))
    trainer = ppo_trainer.PPOVec(config)
    trainer._obs, _ = trainer.env.reset(seed=3)
    batch = trainer.collect()
    assert batch["mask"][torch.arange(len(batch["act"])), batch["act"]].all()
    assert trainer.num_timesteps == 256


def test_snapshot_opponent_plays_legal_cards() -> None:
    model = net.build_actor_critic(1024, 52, [16])
    snap = ppo_rollout.Snapshot(net.numpy_actor(model), 0)
    played: list[tuple[np.ndarray, np.ndarray]] = []

    def opponent(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        actions = snap(obs, mask)
        played.append((mask.copy(), actions))
        return actions

    # the env refuses an illegal opponent action (IllegalActionError); the snapshot's are checked here too
    env = make_learner_env("german_whist_v0", 64, opponents=opponent, seed=1, autoreset_mode=AutoresetMode.SAME_STEP)
    obs, _ = env.reset()
    rng = np.random.default_rng(0)
    for _ in range(40):
        mask = env.action_masks()
        obs, *_ = env.step(np.array([rng.choice(np.flatnonzero(m)) for m in mask]))
    decisions = sum(len(actions) for _, actions in played)
    assert decisions >= 64 * 40 // 2  # the opponent seat decides about as often as the learner's
    for mask, actions in played:
        assert mask[np.arange(len(actions)), actions].all()


def test_gae_matches_the_plain_sum() -> None:
    """The backward recursion equals the definition: sum over l of (gamma lambda)^l delta_{t+l}, within an episode."""
    rng = np.random.default_rng(1)
    t_steps, b, gamma, lam = 12, 7, 0.9, 0.8
    for _ in range(20):
        rewards = rng.normal(size=(t_steps, b)).astype(np.float32)
        values = rng.normal(size=(t_steps + 1, b)).astype(np.float32)
        dones = (rng.random((t_steps, b)) < 0.25).astype(np.float32)
        got = ppo_rollout.gae(rewards, values, dones, gamma, lam)
        for e in range(b):
            for t in range(t_steps):
                want, scale = 0.0, 1.0
                for u in range(t, t_steps):
                    live = 1.0 - dones[u, e]
                    want += scale * (rewards[u, e] + gamma * values[u + 1, e] * live - values[u, e])
                    if not live:
                        break
                    scale *= gamma * lam
                assert got[t, e] == pytest.approx(want, abs=1e-4)


def test_env_state_round_trip() -> None:
    """After set_env_state the env replays exactly what followed the captured state (deals, seats, opponents)."""
    env = make_learner_env(
        "classic_whist_v0",
        16,
        opponents="random",
        learner_seat="random",
        seed=5,
        autoreset_mode=AutoresetMode.SAME_STEP,
    )
    env.reset()
    rng = np.random.default_rng(2)

    def play(steps: int, seed: int) -> list[np.ndarray]:
        pick = np.random.default_rng(seed)
        out = []
        for _ in range(steps):
            mask = env.action_masks()
            obs, reward, *_ = env.step(np.array([pick.choice(np.flatnonzero(m)) for m in mask]))
            out += [obs, reward]
        return out

    play(int(rng.integers(5, 20)), 0)
    saved = ppo_rollout.env_state(env)
    first = play(30, 1)
    ppo_rollout.set_env_state(env, saved)
    again = play(30, 1)
    for x, y in zip(first, again, strict=True):
        np.testing.assert_array_equal(x, y)


def test_self_play_draws_frozen_snapshots() -> None:
    """With self_play, snapshots of the learner are taken every self_play_refresh steps (at most self_play_pool of
    them) and then play opponent seats; the snapshots are copies, untouched by later updates."""
    overrides = parse_set([*TINY[1::2], "self_play=true", "self_play_refresh=256", "self_play_pool=2",
                                   "self_play_weight=0.9", "total_timesteps=1024"])  # fmt: skip
    trainer = ppo_trainer.PPOVec(load_config_as(PPOVecConfig, CONFIG, overrides))
    assert trainer.draw_opponents() == ["random"]  # no snapshot yet
    trainer.train()
    assert [s.step for s in trainer.snapshots] == [768, 1024]
    draws = [d for _ in range(200) for d in trainer.draw_opponents()]
    share = sum(isinstance(d, ppo_rollout.Snapshot) for d in draws) / len(draws)
    assert 0.8 < share < 0.97
    current = net.numpy_actor(trainer.model).arrays()
    first = trainer.snapshots[0].policy.arrays()
    assert any(not np.array_equal(current[k], first[k]) for k in current if k != "activations")


def test_partner_self_plays_the_partner_seat_with_the_learners_weights_of_the_moment() -> None:
    """``partner: self`` in classic whist: before every rollout the partner's seat (relative seat 2) gets a frozen
    copy of the learner as it is then, the opponents are drawn as before, and a rollout plays only legal cards."""
    config = CONFIG.parent / "ppo_vec_classic_whist.yaml"
    overrides = parse_set([*TINY[1::2], "partner=self", "opponents={heuristic: 1.0}", "total_timesteps=512"])
    trainer = ppo_trainer.PPOVec(load_config_as(PPOVecConfig, config, overrides))
    left, partner, right = trainer.draw_opponents()
    assert left == right == "heuristic" and isinstance(partner, ppo_rollout.Snapshot) and partner.step == 0
    trainer.train()  # the env raises on an illegal card, the partner's included
    left, partner, right = trainer.draw_opponents()
    assert left == right == "heuristic" and partner.step == 512
    current = net.numpy_actor(trainer.model).arrays()
    assert all(np.array_equal(current[k], v) for k, v in partner.policy.arrays().items())
    with pytest.raises(ConfigError, match="partner must be 'self', 'random', 'heuristic' or empty"):
        load_config_as(PPOVecConfig, config, parse_set([*TINY[1::2], "partner=pimc"]))
    fixed = load_config_as(PPOVecConfig, config, parse_set([*TINY[1::2], "partner=random"]))
    assert ppo_trainer.PPOVec(fixed).draw_opponents()[1] == "random"


def test_one_config_per_game_and_all_load() -> None:
    from whist_env.vector import vector_game_ids

    paths = sorted(CONFIG.parent.glob("ppo_vec_*.yaml"))
    configs = {p.stem: load_config_as(PPOVecConfig, p) for p in paths}  # every one loads
    # one plain config per game (from random weights); ``_warm``: a game's warm-start recipe besides it
    plain = [c.game for name, c in configs.items() if not name.endswith("_warm")]
    assert set(plain) == set(vector_game_ids()) and len(plain) == len(set(plain))
    warm = [c for name, c in configs.items() if name.endswith("_warm")]
    assert sorted(c.game for c in warm) == sorted(vector_game_ids())  # the shipped recipe for every game
    assert all(c.pretrain is not None and c.opponents == {"heuristic": 1.0} for c in warm)


def test_the_main_jobs_learning_curve_has_five_points_per_opponent_and_a_legend(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """README command 1 (configs/ppo_vec_german_whist_warm.yaml) evaluates at the start and every eval_freq steps:
    at least five points per opponent before the final evaluation, and the curve's legend names each line."""
    import matplotlib.axes

    from training.report import plot_learning_curve

    config = load_config_as(PPOVecConfig, CONFIG.with_name("ppo_vec_german_whist_warm.yaml"))
    assert config.eval_freq > 0 and config.total_timesteps // config.eval_freq + 1 >= 5
    rows = [
        {"timesteps": t, "opponent": o, "kind": kind, "diff": 0.1, "diff_ci95": 0.05, "deals": deals}
        for t, kind, deals in [
            *((k * config.eval_freq, "periodic", config.eval_deals) for k in range(6)),
            (config.total_timesteps, "final", config.final_eval_deals),
        ]  # fmt: skip
        for o in config.eval_opponents
    ]
    labels: list[str] = []
    legend = matplotlib.axes.Axes.legend

    def record(ax: matplotlib.axes.Axes, *args: object, **kwargs: object) -> object:
        labels.extend(ax.get_legend_handles_labels()[1])
        return legend(ax, *args, **kwargs)

    monkeypatch.setattr(matplotlib.axes.Axes, "legend", record)
    plot_learning_curve(tmp_path / "curve.png", rows, "main job")
    assert labels == ["vs random (500 deals)", "final evaluation (2,000 deals)", "vs heuristic (500 deals)"]
    assert (tmp_path / "curve.png").stat().st_size > 0


def test_heuristic_opponents_train_and_evaluate(tmp_path: Path) -> None:
    """``opponents: {heuristic: 1}`` trains against the numba heuristic inside the engine, and the final evaluation
    plays it on the batched arena; both ends report every decision legal."""
    extra = [
        "--set",
        "opponents={heuristic: 1.0}",
        "--set",
        "eval_opponents=[heuristic]",
        "--set",
        "final_eval_deals=4",
    ]
    assert run(tmp_path, "--total-timesteps", "512", "--run-name", "h", *extra) == 0
    summary = json.loads((tmp_path / "h" / "eval.json").read_text())
    assert summary["timesteps"] == 512
    (row,) = summary["eval"]
    assert row["opponent"] == "heuristic" and row["deals"] == 4 and row["illegal_actions"] == 0
    assert final_state(tmp_path / "h")["config"]["opponents"] == {"heuristic": 1.0}


def test_resume_refuses_a_checkpoint_of_another_observation_layout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The checkpoint keeps the game's metadata (layout fingerprint, sizes); one written under another layout is
    refused with an error naming it. A checkpoint from before the metadata was kept still resumes."""
    assert run(tmp_path, "--total-timesteps", "256", "--set", "final_eval_deals=0", "--run-name", "r") == 0
    (path,) = (tmp_path / "r" / "checkpoints").glob("step_*")
    header = json.loads((path / "checkpoint.json").read_text())
    assert header["metadata"]["layout_fingerprint"] and header["metadata"]["obs_size"] == 1024
    stored = header["metadata"]
    (path / "checkpoint.json").write_text(
        json.dumps({**header, "metadata": {**stored, "layout_fingerprint": "0" * 16}})
    )
    capsys.readouterr()
    assert run(tmp_path, "--total-timesteps", "512", "--set", "final_eval_deals=0", "--run-name", "r", "--resume") == 2
    err = capsys.readouterr().err
    assert "layout" in err and "0" * 16 in err and "--overwrite" in err
    (path / "checkpoint.json").write_text(json.dumps({**header, "metadata": None}))  # a checkpoint without it
    assert run(tmp_path, "--total-timesteps", "512", "--set", "final_eval_deals=0", "--run-name", "r", "--resume") == 0
