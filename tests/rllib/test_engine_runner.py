"""The RLlib pieces of the batched engine: :class:`whist_env.learning.rllib.engine_runner.EngineEnvRunner`'s episodes
against
the games it stepped, and :class:`whist_env.learning.rllib.module.EngineActorCritic` against ppo_vec's network and its
numpy copy."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytestmark = [pytest.mark.rllib]

torch = pytest.importorskip("torch")

REPO = Path(__file__).resolve().parents[2]


def engine_module(obs_size: int = 120, num_actions: int = 20, hidden: list[int] | None = None) -> Any:
    from gymnasium import spaces

    from whist_env.learning.rllib.module import EngineActorCritic

    space = spaces.Dict(
        {
            "observation": spaces.Box(0, 1, (obs_size,), np.uint8),
            "action_mask": spaces.Box(0, 1, (num_actions,), np.int8),
        }
    )
    return EngineActorCritic(
        observation_space=space, action_space=spaces.Discrete(num_actions), model_config={"hidden": hidden or [32, 16]}
    )


def batch(k: int, obs_size: int, num_actions: int, seed: int) -> tuple[Any, Any]:
    gen = torch.Generator().manual_seed(seed)
    obs = (torch.rand((k, obs_size), generator=gen) < 0.1).to(torch.uint8)
    mask = (torch.rand((k, num_actions), generator=gen) < 0.4).to(torch.int8)
    mask[:, 0] = 1
    return obs, mask


def test_the_module_is_ppo_vecs_network_and_its_numpy_copy_plays_the_same() -> None:
    """Loaded with a :func:`build_actor_critic` network's weights, the module's logits and values are that network's
    (its plain dense twin); the values read from the policy pass's embeddings equal those computed anew; the numpy
    policy (what the league and the shipped file play) gives the same logits."""
    from ray.rllib.core.columns import Columns

    from whist_env.learning.net import build_actor_critic

    module = engine_module()
    model = build_actor_critic(120, 20, [32, 16])
    module.net.load_state_dict(model.state_dict())
    numpy_policy = module.numpy_policy()
    for seed in range(20):
        obs, mask = batch(1 + 7 * seed, 120, 20, seed)
        with torch.no_grad():
            out = module._forward({Columns.OBS: {"observation": obs, "action_mask": mask}})
            logits, values = model.dense_forward(obs, mask > 0)
            torch.testing.assert_close(out[Columns.ACTION_DIST_INPUTS], logits)
            fresh = module.compute_values({Columns.OBS: {"observation": obs, "action_mask": mask}})
            torch.testing.assert_close(module.compute_values({}, out[Columns.EMBEDDINGS]), fresh)
            torch.testing.assert_close(fresh, values)
            torch.testing.assert_close(module.masked_logits(obs.float(), mask), logits)
        legal = mask.numpy() > 0
        np.testing.assert_allclose(
            np.where(legal, numpy_policy.logits(obs.numpy()), 0),
            np.where(legal, logits.numpy(), 0),
            rtol=1e-4,
            atol=1e-4,
        )


@pytest.mark.slow
def test_the_runners_episodes_are_the_games_it_stepped(tmp_path: Path) -> None:
    """Two ``sample(num_timesteps=...)`` calls on a local runner, the env's steps recorded: every table's chunks, in
    order, hold exactly its observations, legal actions, rewards and ends; an episode cut at the end of a sample goes
    on in the next under the same id; log-probabilities are those of the distribution inputs; the league's metrics
    count the finished episodes."""
    import logging

    import ray

    sys.path.insert(0, str(REPO))
    from training.rllib.config import rllib_config_from_dict
    from training.rllib.trainer import build_algorithm

    config = rllib_config_from_dict(
        {
            "game": "humbug_v0",
            "engine": "batched",
            "num_env_runners": 0,
            "num_envs_per_env_runner": 8,
            "train_batch_size": 200,
            "minibatch_size": 100,
            "net_arch": [16],
            "opponents": {"heuristic": 1.0},
            "snapshot_pool": 0,
            "runs_dir": str(tmp_path),
            "torch_threads": 1,
        }  # fmt: skip
    )
    ray.init(address="local", num_cpus=1, include_dashboard=False, logging_level=logging.WARNING)
    try:
        algo = build_algorithm(config)
        runner = algo.env_runner_group.local_env_runner
        env = runner.env
        seen: list[tuple[Any, ...]] = []
        step = env.step

        def recording(actions: Any) -> Any:
            out = step(actions)
            seen.append((np.asarray(actions).copy(), out[1].copy(), out[2].copy()))
            return out

        env.step = recording
        first = runner.sample(num_timesteps=100, explore=True)
        cut = len(seen)
        second = runner.sample(num_timesteps=100, explore=True)
        assert cut == 13 and len(seen) == 26  # ceil(100 / 8) steps of all 8 tables per sample
        assert sum(len(e) for e in first) == sum(len(e) for e in second) == 104
        metrics = runner.get_metrics()
        algo.stop()
    finally:
        ray.shutdown()

    actions = np.stack([s[0] for s in seen])  # (T, B)
    rewards = np.stack([s[1] for s in seen])
    ends = np.stack([s[2] for s in seen])
    for part, steps in ((first, range(0, cut)), (second, range(cut, 2 * cut))):
        chunks = iter(part)
        for j in range(8):
            t = steps.start
            while t < steps.stop:
                chunk = next(chunks)
                n = len(chunk)
                span = slice(t, t + n)
                np.testing.assert_array_equal(chunk.get_actions(), actions[span, j])
                np.testing.assert_allclose(chunk.get_rewards(), rewards[span, j])
                assert chunk.is_terminated == bool(ends[t + n - 1, j])
                assert not ends[t : t + n - 1, j].any()  # an episode ends only at its chunk's end
                masks = chunk.get_observations()["action_mask"]
                assert masks[np.arange(n), chunk.get_actions()].all()  # every action legal
                dist = torch.from_numpy(np.asarray(chunk.get_extra_model_outputs("action_dist_inputs")))
                logp = torch.log_softmax(dist, -1)[torch.arange(n), torch.from_numpy(chunk.get_actions())]
                np.testing.assert_allclose(chunk.get_extra_model_outputs("action_logp"), logp.numpy(), atol=1e-5)
                t += n
        assert next(chunks, None) is None
    # the unfinished episodes of the first sample continue in the second, under their ids
    going_on = {e.id_: e for e in first if not e.is_terminated}
    continued = [e for e in second if e.id_ in going_on]
    assert len(going_on) == 8 and len(continued) == 8
    assert all(e.t_started == going_on[e.id_].t for e in continued)
    finished = int(ends.sum())
    assert finished > 0 and metrics["league"]["episodes"]["main"] == finished
