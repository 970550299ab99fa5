"""``training/rllib/trainer.py`` end to end on a local Ray: iterations, the league, checkpoints, resume, clusters.

Every run is tiny (a few hundred env steps per iteration, one epoch, a 32-unit network): these tests check
that the pieces work together, not that the policy learns (docs/results_rllib.md's run shows that).
"""

from __future__ import annotations

import json
import math
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from training.report import read_eval_csv

pytestmark = [pytest.mark.rllib, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "training" / "train.py"
TINY = [
    "--set", "train_batch_size=400",
    "--set", "minibatch_size=200",
    "--set", "num_epochs=1",
    "--set", "net_arch=[32]",
    "--set", "eval_deals=10",
    "--set", "checkpoint_every=1",
    "--set", "num_envs_per_env_runner=4",
]  # fmt: skip


def run(args: list[str], timeout: float = 400) -> subprocess.CompletedProcess[str]:
    # PYTHONFAULTHANDLER: a crash of the script (a native library's, in Ray's or torch's teardown) prints where it was
    path = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p)
    env = dict(os.environ, PYTHONPATH=path, PYTHONFAULTHANDLER="1")
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=timeout, env=env, check=False
    )


def rows(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run_dir / "progress.jsonl").read_text().splitlines()]


def check_ok(out: subprocess.CompletedProcess[str]) -> None:
    assert out.returncode == 0, f"exit {out.returncode}\n{out.stdout[-3000:]}\n{out.stderr[-5000:]}"


def test_german_whist_two_iterations_two_runners_league_checkpoint_agent_and_resume(tmp_path: Path) -> None:
    """``engine: aec``: the multi-agent league, whose snapshots are RLlib modules."""
    from whist_env.agents import make_agent
    from whist_env.errors import OptionError
    from whist_env.evaluation import evaluate
    from whist_env.registry import get_spec

    run_dir = tmp_path / "gw"
    league = ["--set", "opponents={snapshot: 1.0}", "--set", "snapshot_every=1", "--set", "snapshot_pool=2"]
    common = ["--config", str(REPO / "configs" / "rllib_german_whist.yaml"), "--runs-dir", str(tmp_path)]
    common += ["--run-name", "gw", *TINY, *league, "--set", "engine=aec", "--set", "num_envs_per_env_runner=1"]
    out = run([*common, "--iterations", "2", "--num-env-runners", "2"])
    check_ok(out)
    assert "local Ray" in out.stdout and "2 env runners" in out.stdout
    assert "iter 1:" in out.stdout and "iter 2:" in out.stdout  # progress every iteration
    first = rows(run_dir)
    assert [r["iteration"] for r in first] == [1, 2]
    # iteration 1 has no snapshot yet: main sits in both seats of a zero-sum game, so its mean return per seat is 0
    assert first[0]["seat_return"]["main"] == pytest.approx(0.0, abs=1e-6)
    assert set(first[0]["main_vs"]) == {"self"} and first[0]["main_vs"]["self"] == pytest.approx(0.0, abs=1e-6)
    assert "snapshot" in first[1]["main_vs"]  # iteration 2 plays the snapshot of iteration 1
    for r in first:
        assert r["iteration_env_steps"] >= 400 and math.isfinite(r["seat_return"]["main"])
        assert set(r["eval"]) == {"random", "heuristic"}
        assert all(e["illegal_actions"] == 0 and e["deals"] == 10 for e in r["eval"].values())
    assert first[1]["module_steps"]["snapshot_0"] > 0  # the snapshot taken after iteration 1 plays in iteration 2

    # a snapshot is a frozen copy of main: the one taken after iteration 2 holds main's weights of then
    import torch
    from ray.rllib.core.rl_module.rl_module import RLModule

    modules = run_dir / "checkpoints" / "iter_000002" / "learner_group" / "learner" / "rl_module"
    main, newest, older = (RLModule.from_checkpoint(str(modules / m)) for m in ("main", "snapshot_1", "snapshot_0"))

    def same(a: Any, b: Any) -> bool:
        left, right = a.state_dict(), b.state_dict()
        return left.keys() == right.keys() and all(torch.equal(left[k], right[k]) for k in left)

    assert same(main, newest) and not same(main, older)  # policy and value networks alike

    # the checkpoint plays as an agent, legal moves only, through the arena
    assert sorted(p.name for p in (run_dir / "checkpoints").iterdir()) == ["iter_000001", "iter_000002"]
    for spec in (f"rllib:{run_dir}", f"rllib:{run_dir / 'checkpoints' / 'iter_000002'}", f"rllib:{modules / 'main'}"):
        report = evaluate("german_whist_v0", [spec, "heuristic"], num_deals=6, seed=0)
        assert report.illegal_actions == 0 and report.agent(spec).decisions > 0
    agent = make_agent(f"rllib:{run_dir}", "german_whist_v0")
    game = get_spec("german_whist_v0").make_rules()
    state = game.new_episode(np.random.default_rng(0))
    for _ in range(6):  # it answers every decision with a legal card
        view = game.view(state, state.to_act)
        action = agent.act(view, np.random.default_rng(0))
        assert (view.legal >> action) & 1
        game.step(state, action, np.random.default_rng(0))
    with pytest.raises(OptionError, match="trained on german_whist_v0, not humbug_v0"):
        make_agent(f"rllib:{run_dir}", "humbug_v0")
    # ... in whist-eval and whist-play too
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p))
    evaluated = subprocess.run(
        [sys.executable, "-m", "whist_env.cli.eval", "german_whist_v0", "--agents", f"rllib:{run_dir}", "random"]
        + ["--deals", "4", "--quiet"],
        capture_output=True, text=True, timeout=120, env=env, check=False,
    )  # fmt: skip
    assert evaluated.returncode == 0 and "| 0 |" in evaluated.stdout, evaluated.stderr[-2000:]
    played = subprocess.run(
        [sys.executable, "-m", "whist_env.cli.play", "--game", "german_whist_v0", "--opponents", f"rllib:{run_dir}"],
        input="quit\n", capture_output=True, text=True, timeout=120, env=env, check=False,
    )  # fmt: skip
    assert played.returncode == 0 and "you quit" in played.stdout, played.stderr[-2000:]

    # resume: the league (two snapshots now) and the iteration count carry on
    out = run([*common, "--iterations", "3", "--num-env-runners", "2", "--resume"])
    check_ok(out)
    assert "resuming from iter_000002 (iteration 2)" in out.stdout and "iter 3:" in out.stdout
    third = rows(run_dir)[-1]
    assert third["iteration"] == 3 and third["env_steps"] == sum(r["iteration_env_steps"] for r in rows(run_dir))
    sampled = {m for m, steps in third["module_steps"].items() if m.startswith("snapshot_") and steps > 0}
    assert sampled == {"snapshot_0", "snapshot_1"}  # the league samples at least two snapshots
    assert sorted(p.name for p in (run_dir / "checkpoints").iterdir()) == ["iter_000002", "iter_000003"]

    # a finished run is not started over by accident
    again = run([*common, "--iterations", "3"])
    assert again.returncode == 2 and "already exists: pass --resume" in again.stderr  # the run contract's rule


def test_batched_engine_warm_start_league_checkpoint_agent_and_resume(tmp_path: Path) -> None:
    """``engine: batched`` end to end: the warm start (its clone exported and played), two iterations on two env
    runners stepping the engine, snapshots as numpy policies in the leagues and the checkpoint, the checkpoint as an
    agent that plays like the exported file, and a resume that brings the snapshots back."""
    from whist_env.agents.pretrained import load_policy
    from whist_env.evaluation import evaluate

    run_dir = tmp_path / "gwb"
    common = ["--config", str(REPO / "configs" / "rllib_german_whist.yaml"), "--runs-dir", str(tmp_path)]
    common += ["--run-name", "gwb", *TINY, "--set", "opponents={snapshot: 1.0, heuristic: 1.0}"]
    common += ["--set", "snapshot_every=1", "--set", "snapshot_pool=2", "--set", "canonical_suits=true"]
    common += ["--set", "pretrain={deals: 40, epochs: 1, relabel_rounds: 1, relabel_deals: 20, relabel_epochs: 1}"]
    out = run([*common, "--iterations", "2", "--num-env-runners", "2"])
    check_ok(out)
    assert "pretraining done" in out.stderr and (run_dir / "pretrain.json").is_file()
    first = rows(run_dir)
    assert [r["iteration"] for r in first] == [1, 2]
    for r in first:
        assert r["iteration_env_steps"] >= 400 and r["module_steps"] == {"main": r["iteration_env_steps"]}
        assert r["episodes"]["main"] > 0 and r["eval"]["heuristic"]["illegal_actions"] == 0
    assert "snapshot" in " ".join(first[1]["main_vs"])  # the snapshot taken after iteration 1 plays in iteration 2
    checkpoint = run_dir / "checkpoints" / "iter_000002"
    assert json.loads((checkpoint / "league.json").read_text())["snapshots"] == 2
    newest = load_policy(checkpoint / "league_policies" / "snapshot_1.npz", "german_whist_v0")
    final = load_policy(run_dir / "eval_policy.npz", "german_whist_v0")  # main after iteration 2
    assert _same_arrays(newest, final)
    # the checkpoint is an agent that plays as the exported copy of main (suits renamed as it learnt)
    report = evaluate("german_whist_v0", [f"rllib:{run_dir}", f"pretrained(path={run_dir / 'eval_policy.npz'})"],
                      num_deals=20, seed=3)  # fmt: skip
    assert report.illegal_actions == 0 and report.pairs[0].diff.mean == 0.0
    warm = evaluate("german_whist_v0", [f"pretrained(path={run_dir / 'warm_start.npz'})", "random"], num_deals=4)
    assert warm.illegal_actions == 0
    # the warm start depends on the run's seed alone (its first weights once came from what RLlib left of torch's
    # generator, so two runs of one command cloned two networks): the same clone made here, outside RLlib
    assert _same_arrays(load_policy(run_dir / "warm_start.npz", "german_whist_v0"), _warm_start_alone(run_dir))
    # the artefacts every trainer writes: the model (policy.npz: main at the end), eval.csv, the curve, the report
    shipped = load_policy(run_dir / "policy.npz", "german_whist_v0")
    assert _same_arrays(shipped, final)
    history = read_eval_csv(run_dir / "eval.csv")
    assert [(r["timesteps"], r["opponent"], r["kind"]) for r in history] == [
        (r["env_steps"], opponent, "final" if r["iteration"] == 2 else "periodic")
        for r in first for opponent in ("random", "heuristic")
    ]  # fmt: skip
    assert history[3]["diff"] == round(first[1]["eval"]["heuristic"]["diff"], 5) and history[3]["deals"] == 10
    assert (run_dir / "learning_curve.png").stat().st_size > 0
    phases = json.loads((run_dir / "phases.json").read_text())
    assert list(phases) == ["set-up", "warm start", "PPO"] and all(s > 0 for s in phases.values())
    report = (run_dir / "report.md").read_text()
    assert "RLlib's PPO" in report and "warm start" in report and "train.py --config" in report
    assert " env runners × " in report  # the envs line the rllib session hands to write_report

    out = run([*common, "--iterations", "3", "--num-env-runners", "2", "--resume"])
    check_ok(out)
    assert "resuming from iter_000002 (iteration 2)" in out.stdout and "pretraining" not in out.stderr
    third = rows(run_dir)[-1]
    assert third["iteration"] == 3 and "snapshot" in " ".join(third["main_vs"])
    kinds = [r["kind"] for r in read_eval_csv(run_dir / "eval.csv")]  # the history kept, iteration 3 the final one
    assert kinds == ["periodic"] * 4 + ["final"] * 2
    assert json.loads((run_dir / "phases.json").read_text())["PPO"] > phases["PPO"]


def _same_arrays(a: Any, b: Any) -> bool:
    """Whether two numpy policies hold the same arrays, to the last bit."""
    return all(np.array_equal(x, y) for x, y in zip(a.arrays().values(), b.arrays().values(), strict=True))


def _warm_start_alone(run_dir: Path) -> Any:
    """The warm start of ``run_dir``'s config cloned in this process, without Ray (``warm_start_main`` clones it in
    the driver, after RLlib has drawn from torch's generator; both on one thread, which it sets itself)."""
    from training.rllib.config import load_rllib_config
    from training.rllib.trainer import clone_warm_start
    from whist_env.learning.net import numpy_actor
    from whist_env.vector import make_learner_env

    config = load_rllib_config(run_dir / "config.yaml", {})
    env = make_learner_env(config.game, 1, **config.game_options)
    (run_dir.parent / "alone").mkdir()
    model = clone_warm_start(config, env.venv.observation_size, env.venv.num_actions, run_dir.parent / "alone")
    return numpy_actor(model)


def test_four_player_partnership_game_two_iterations_two_runners(tmp_path: Path) -> None:
    out = run(
        [
            "--config", str(REPO / "configs" / "rllib_classic_whist.yaml"),
            "--runs-dir", str(tmp_path), "--run-name", "cw",
            "--iterations", "2", "--num-env-runners", "2", *TINY,
            "--set", "snapshot_every=1", "--set", "eval_opponents=[random]",
        ]
    )  # fmt: skip
    check_ok(out)
    done = rows(tmp_path / "cw")
    assert [r["iteration"] for r in done] == [1, 2]
    assert done[-1]["module_steps"]["main"] > 0 and done[-1]["eval"]["random"]["illegal_actions"] == 0
    # main's seats: in classic whist partners share a role, so main plays two seats at every table
    assert done[-1]["episodes"]["main"] > 0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_joins_a_cluster_started_with_ray_start(tmp_path: Path) -> None:
    port = _free_port()
    ray_cli = Path(sys.executable).with_name("ray")
    head = subprocess.Popen(
        [str(ray_cli), "start", "--head", f"--port={port}", "--num-cpus=2", "--include-dashboard=false",
         "--disable-usage-stats", "--block"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # the head is up once its port accepts connections
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert head.poll() is None, "ray start --head exited"
            time.sleep(0.5)
        out = run(
            [
                "--config", str(REPO / "configs" / "rllib_german_whist.yaml"),
                "--runs-dir", str(tmp_path), "--run-name", "cluster",
                "--iterations", "1", "--num-env-runners", "1", "--address", f"127.0.0.1:{port}", *TINY,
            ],
            timeout=300,
        )  # fmt: skip
        check_ok(out)
        assert f"cluster at 127.0.0.1:{port}" in out.stdout and "iter 1:" in out.stdout
        assert (tmp_path / "cluster" / "checkpoints" / "iter_000001").is_dir()
    finally:
        head.send_signal(signal.SIGTERM)  # `ray start --block` stops the processes it started
        head.wait(timeout=60)


def _alive_in_session(sid: int) -> list[str]:
    """The processes still alive (not zombies) in session ``sid``: the run and whatever it started, Ray's included."""
    ps = subprocess.run(["ps", "-eo", "pid=,sid=,stat=,args="], capture_output=True, text=True, check=True).stdout
    return [line for line in ps.splitlines() if line.split()[1] == str(sid) and not line.split()[2].startswith("Z")]


def _wait_until_gone(sid: int, limit: float = 60.0) -> list[str]:
    """Wait for session ``sid`` to end (Ray's workers follow their raylet down); what is still alive after
    ``limit`` seconds is killed and returned.

    A Ray worker checks every second whether its raylet's pid is alive (``kill(pid, 0)``) and exits when it is not:
    about 3 s after the kill here. A zombie passes that check, so the killed raylet must be reaped: by init, unless
    this process is a child subreaper, which adopts it and never reaps it. That is what left ``ray::IDLE`` behind in
    CI until the test process that ran ``whist-bot check`` in process stopped staying a subreaper
    (:func:`whist_env.evaluation.referee.subreaper`); hence the assertion that names that cause."""
    from whist_env.evaluation.referee import is_subreaper

    deadline = time.monotonic() + limit
    while (left := _alive_in_session(sid)) and time.monotonic() < deadline:
        time.sleep(0.5)
    for line in left:
        os.kill(int(line.split()[0]), signal.SIGKILL)
    cause = "this test process is a child subreaper, and a killed raylet stays its zombie, alive to its workers"
    assert not (left and is_subreaper()), f"{left} left: {cause}"
    return left


def fault_run_args(tmp_path: Path, name: str, iterations: int) -> list[str]:
    """A tiny seeded league run on the AEC engine with one remote env runner (a Ray actor of its own, so that a
    fault must end Ray's processes as well as the driver), a checkpoint every iteration."""
    args = ["--config", str(REPO / "configs" / "rllib_german_whist.yaml"), "--runs-dir", str(tmp_path)]
    args += ["--run-name", name, "--iterations", str(iterations), "--num-env-runners", "1", *TINY]
    args += ["--set", "engine=aec", "--set", "num_envs_per_env_runner=1"]
    args += ["--set", "train_batch_size=200", "--set", "minibatch_size=100", "--set", "net_arch=[16]"]
    args += ["--set", "eval_every=100", "--set", "eval_deals=2", "--set", "eval_opponents=[random]"]
    args += ["--set", "opponents={snapshot: 1.0}", "--set", "snapshot_every=1", "--set", "snapshot_pool=2"]
    return args


def test_a_full_disk_during_a_real_checkpoint_write_is_one_line_and_leaves_nothing_running(tmp_path: Path) -> None:
    """Real PPO with a remote env runner; the driver's write of the second checkpoint fails with ENOSPC (injected
    into its file write by ``WHIST_TEST_CHECKPOINT_FAULT=enospc@iter_000002``): exit status 2, one line naming the
    checkpoint and the intact previous one, the first checkpoint whole and the second's temporary directory gone, no
    process of the run's session left (Ray's workers and the env runner's actor included), and ``--resume`` goes on
    from the first checkpoint to the end. (Without Ray, a write to ``/dev/full``: ``test_rllib_checkpoint.py``.)"""
    args = fault_run_args(tmp_path, "d", 3)
    run_dir, root = tmp_path / "d", tmp_path / "d" / "checkpoints"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p))
    proc = subprocess.Popen(
        [sys.executable, str(SCRIPT), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**env, "WHIST_TEST_CHECKPOINT_FAULT": "enospc@iter_000002"}, start_new_session=True,
    )  # fmt: skip
    try:
        out, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=60)
    left = _wait_until_gone(proc.pid)
    assert proc.returncode == 2, f"exit {proc.returncode}\n{out[-2000:]}\n{err[-3000:]}"
    assert left == [], f"the failed run left processes behind: {left}"
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert errors == [
        f"error: could not write checkpoint {root / 'iter_000002'}: No space left on device; the previous "
        f"checkpoint {root / 'iter_000001'} is intact (--resume continues from it)"
    ], err[-3000:]
    assert "Traceback" not in err
    assert sorted(p.name for p in root.iterdir()) == ["iter_000001"]
    assert {"rllib_checkpoint.json", "whist_env.json", "league.json"} <= {
        p.name for p in (root / "iter_000001").iterdir()
    }
    assert [r["iteration"] for r in rows(run_dir)] == [1]  # an iteration's row follows its checkpoint

    resumed = run([*args, "--resume"])
    check_ok(resumed)
    assert "resuming from iter_000001 (iteration 1)" in resumed.stdout
    assert [r["iteration"] for r in rows(run_dir)] == [1, 2, 3]  # iteration 2 trained again, each row once
    assert sorted(p.name for p in root.iterdir()) == ["iter_000002", "iter_000003"]


def test_killed_during_a_checkpoint_write_resumes_from_the_newest_whole_checkpoint(tmp_path: Path) -> None:
    """SIGKILL (to the whole process group) while the checkpoint of a seeded iteration is written (held between its
    complete temporary directory and the move into place by ``WHIST_TEST_CHECKPOINT_FAULT=pause@<name>``), then
    ``--resume``: the half-written checkpoint is removed with a warning and never used, the run continues from the
    newest whole one (the iteration counter, the env steps and the league's snapshots carry on) and finishes.

    Bit-identity with an uninterrupted run is not asserted: RLlib's checkpoint holds the modules, the optimizer and
    the algorithm's counters, but not the env runners' generators nor the games in progress, so a resumed run samples
    other deals than an uninterrupted one would. The env runner is a remote actor: the kill must end Ray's processes
    too. (A full disk: the test above, and ``test_rllib_checkpoint.py`` without Ray.)
    """
    import random

    k = random.Random(int(os.environ.get("WHIST_FAULT_SEED", "26"))).choice([2, 3])
    run_dir = tmp_path / "k"
    common = fault_run_args(tmp_path, "k", 4)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p))
    root = run_dir / "checkpoints"
    with open(tmp_path / "stderr", "w") as err:
        proc = subprocess.Popen(
            [sys.executable, str(SCRIPT), *common],
            stdout=subprocess.DEVNULL,
            stderr=err,
            env={**env, "WHIST_TEST_CHECKPOINT_FAULT": f"pause@iter_{k:06d}"},
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 300
        while "paused before moving" not in (tmp_path / "stderr").read_text():
            assert proc.poll() is None, (tmp_path / "stderr").read_text()[-5000:]
            assert time.monotonic() < deadline, "no checkpoint write within 300 s"
            time.sleep(0.05)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
    left = _wait_until_gone(proc.pid)
    assert left == [], f"the kill left processes behind: {left}"
    kept = [f"iter_{i:06d}" for i in range(max(k - 2, 1), k)]  # keep_checkpoints: 2
    assert sorted(p.name for p in root.iterdir()) == [f".iter_{k:06d}.tmp", *kept]
    assert (root / f".iter_{k:06d}.tmp" / "league.json").is_file()  # complete but never moved: still not used
    assert [r["iteration"] for r in rows(run_dir)] == list(range(1, k))
    saved = json.loads((root / f"iter_{k - 1:06d}" / "league.json").read_text())

    out = run([*common, "--resume"])
    check_ok(out)
    assert f"resuming from iter_{k - 1:06d} (iteration {k - 1})" in out.stdout
    assert f"warning: removed the incomplete checkpoint {root / f'.iter_{k:06d}.tmp'}" in out.stderr
    done = rows(run_dir)
    assert [r["iteration"] for r in done] == [1, 2, 3, 4]  # each once: the counter carried on from k - 1
    assert done[-1]["env_steps"] == sum(r["iteration_env_steps"] for r in done)
    first = done[k - 1]  # the resumed run's first iteration played the snapshots the checkpoint held
    assert saved["snapshots"] == min(k - 1, 2) and first["module_steps"].get("snapshot_0", 0) > 0
    assert [r["snapshots"] for r in done] == [1, 2, 2, 2]
    assert sorted(p.name for p in root.iterdir()) == ["iter_000003", "iter_000004"]
    last = json.loads((root / "iter_000004" / "league.json").read_text())
    assert last["iteration"] == 4 and last["snapshots"] == 2 and last["env_steps"] == done[-1]["env_steps"]


def test_ctrl_c_ends_the_run_and_ray_with_the_hint(tmp_path: Path) -> None:
    """One Ctrl-C (SIGINT to the run's process group, as a terminal sends it) during real PPO with a remote env
    runner: exit status 130, no traceback, the run contract's line naming the newest checkpoint that ``--resume``
    continues from (whole: its league, RLlib's and the game's files), and no process of the run's session left."""
    from training.rllib.trainer import LEAGUE_FILE, latest_checkpoint

    args = fault_run_args(tmp_path, "c", 1000)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p))
    with open(tmp_path / "stderr", "w") as err:
        proc = subprocess.Popen(
            [sys.executable, str(SCRIPT), *args], stdout=subprocess.DEVNULL, stderr=err, env=env,
            start_new_session=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 300
        while latest_checkpoint(tmp_path / "c") is None:
            assert proc.poll() is None, (tmp_path / "stderr").read_text()[-5000:]
            assert time.monotonic() < deadline, "no checkpoint within 300 s"
            time.sleep(0.1)
        os.killpg(proc.pid, signal.SIGINT)
        code = proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=60)
    left = _wait_until_gone(proc.pid)
    text = (tmp_path / "stderr").read_text()
    assert code == 130, text[-5000:]
    assert left == [], f"Ctrl-C left processes behind: {left}"
    assert "Traceback" not in text, text[-5000:]
    newest = latest_checkpoint(tmp_path / "c")
    assert newest is not None
    assert {"rllib_checkpoint.json", "whist_env.json", LEAGUE_FILE} <= {p.name for p in newest.iterdir()}
    hint = [line for line in text.splitlines() if line.startswith("interrupted:")]
    assert len(hint) == 1 and f"--resume will continue from {newest}" in hint[0], text[-3000:]


def _ray_start(args: list[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
    """``ray start ... --block`` in a session of its own (SIGTERM to it stops the node it started, as ``ray stop``
    would on that machine, without touching other Ray instances of this machine)."""
    ray_cli = Path(sys.executable).with_name("ray")
    return subprocess.Popen(
        [str(ray_cli), "start", *args, "--disable-usage-stats", "--block"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, start_new_session=True,
    )  # fmt: skip


def _nodes_up(address: str, env: dict[str, str], count: int, limit: float = 90.0) -> None:
    """Wait until the cluster at ``address`` has ``count`` live nodes."""
    probe = "import ray, sys; ray.init(address=sys.argv[1]); print(sum(n['Alive'] for n in ray.nodes()))"
    deadline = time.monotonic() + limit
    seen = ""
    while time.monotonic() < deadline:
        out = subprocess.run([sys.executable, "-c", probe, address], capture_output=True, text=True, env=env,
                             timeout=60, check=False)  # fmt: skip
        seen = out.stdout.strip().splitlines()[-1] if out.stdout.strip() else out.stderr[-500:]
        if seen == str(count):
            return
        time.sleep(1.0)
    raise AssertionError(f"the cluster at {address} did not reach {count} nodes: {seen}")


def test_env_runners_spread_over_two_ray_nodes(tmp_path: Path) -> None:
    """A real two-node cluster on this machine, made with the commands docs/guide/rllib.md gives: a head
    (``ray start --head``, 1 CPU) and a second node joining it (``ray start --address``, 1 CPU); a short run with two
    env runners of one CPU each, which Ray can only place one per node; the run's ``placement.json`` (each runner's
    node, as Ray reports it from inside the runner) shows both nodes, and the run trains and checkpoints. Both nodes
    are stopped whatever happens (the test's stand-in for ``ray stop``, which would stop every Ray of the machine)."""
    port, client = _free_port(), _free_port()
    address = f"127.0.0.1:{port}"
    env = dict(os.environ)
    nodes: list[subprocess.Popen[bytes]] = []
    try:
        nodes.append(_ray_start(["--head", f"--port={port}", f"--ray-client-server-port={client}", "--num-cpus=1",
                                 "--include-dashboard=false"], env))  # fmt: skip
        deadline = time.monotonic() + 60
        while not (Path.home() / ".ray" / "auth_token").is_file() and time.monotonic() < deadline:
            time.sleep(0.2)
        if (Path.home() / ".ray" / "auth_token").is_file():  # Ray 2.5x: joining needs the head's token
            env["RAY_AUTH_MODE"] = "token"
        _nodes_up(address, env, 1)
        nodes.append(_ray_start([f"--address={address}", "--num-cpus=1"], env))
        _nodes_up(address, env, 2)
        out = run(
            [
                "--config", str(REPO / "configs" / "rllib_german_whist.yaml"),
                "--runs-dir", str(tmp_path), "--run-name", "two_nodes",
                "--iterations", "1", "--num-env-runners", "2", "--address", address, *TINY,
                "--set", "num_envs_per_env_runner=8", "--set", "eval_opponents=[random]",
            ],
            timeout=300,
        )  # fmt: skip
        check_ok(out)
        placement = json.loads((tmp_path / "two_nodes" / "placement.json").read_text())
        assert len(placement["runners"]) == 2 and placement["cluster_nodes"] == 2
        assert placement["nodes"] == 2, placement  # one runner on each node
        assert "2 env runner(s) on 2 of the cluster's 2 node(s)" in out.stdout
        assert (tmp_path / "two_nodes" / "checkpoints" / "iter_000001").is_dir()
        assert rows(tmp_path / "two_nodes")[0]["iteration_env_steps"] >= 400
    finally:
        for node in reversed(nodes):
            node.send_signal(signal.SIGTERM)
        for node in nodes:
            try:
                node.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(node.pid, signal.SIGKILL)
                node.wait(timeout=30)
