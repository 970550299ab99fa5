"""The RLlib learner with a lighter optimizer step (:class:`whist_env.learning.rllib.learner.WhistPPOLearner`) against
its plain
twin, RLlib's own ``PPOTorchLearner``: the same parameters after the same gradients, ``nan`` and ``inf`` ones
included."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from gymnasium import spaces

pytestmark = [pytest.mark.rllib]

REPO = Path(__file__).resolve().parents[2]

OBS = spaces.Dict({"observation": spaces.Box(0, 1, (40,), np.uint8), "action_mask": spaces.Box(0, 1, (9,), np.int8)})
ACT = spaces.Discrete(9)


def learner(cls: Any, skip_nan: bool = False) -> Any:
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core import DEFAULT_MODULE_ID
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from whist_env.learning.rllib.module import EngineActorCritic

    spec = RLModuleSpec(module_class=EngineActorCritic, observation_space=OBS, action_space=ACT,
                        model_config={"hidden": [16, 8]})  # fmt: skip
    config = (
        PPOConfig()
        .api_stack(enable_rl_module_and_learner=True, enable_env_runner_and_connector_v2=True)
        .framework("torch")
        .rl_module(rl_module_spec=spec)
        .training(lr=3e-3, grad_clip=0.5, grad_clip_by="global_norm")
        .learners(num_learners=0, learner_class=cls)
    )
    config.torch_skip_nan_gradients = skip_nan
    return config.build_learner(spaces={DEFAULT_MODULE_ID: (OBS, ACT)})


def twins(skip_nan: bool = False) -> tuple[Any, Any]:
    from ray.rllib.algorithms.ppo.torch.ppo_torch_learner import PPOTorchLearner

    from whist_env.learning.rllib.learner import WhistPPOLearner

    plain, fast = learner(PPOTorchLearner, skip_nan), learner(WhistPPOLearner, skip_nan)
    for p, q in zip(plain._params.values(), fast._params.values(), strict=True):
        with torch.no_grad():
            q.copy_(p)
    return plain, fast


def step(lrn: Any, grads: list[torch.Tensor]) -> None:
    """One optimizer step of ``lrn`` on ``grads`` (one per parameter, in order), clipped as RLlib clips them."""
    lrn.apply_gradients(lrn.postprocess_gradients(dict(zip(lrn._params, [g.clone() for g in grads], strict=True))))


def params(lrn: Any) -> list[torch.Tensor]:
    return [p.detach().clone() for p in lrn._params.values()]


def assert_same(plain: Any, fast: Any) -> None:
    for p, q in zip(params(plain), params(fast), strict=True):
        torch.testing.assert_close(q, p, rtol=1e-5, atol=1e-6, equal_nan=True)


def random_grads(lrn: Any, gen: torch.Generator) -> list[torch.Tensor]:
    return [torch.randn(p.shape, generator=gen) for p in lrn._params.values()]


def test_the_fast_learner_steps_as_rllibs_own_on_finite_gradients() -> None:
    plain, fast = twins()
    assert all(o.defaults["fused"] for o in fast._named_optimizers.values())  # the fused Adam is the one in use
    gen = torch.Generator().manual_seed(0)
    before = params(plain)
    for _ in range(20):
        grads = random_grads(plain, gen)
        step(plain, grads)
        step(fast, grads)
    assert_same(plain, fast)
    assert any(not torch.equal(a, b) for a, b in zip(before, params(fast), strict=True))  # it did train


@pytest.mark.parametrize("skip_nan", [False, True])
@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_nan_and_inf_gradients_are_handled_as_rllib_handles_them(skip_nan: bool, bad: float) -> None:
    plain, fast = twins(skip_nan)
    gen = torch.Generator().manual_seed(1)
    for i in range(6):
        grads = random_grads(plain, gen)
        if i in (2, 4):
            grads[i % len(grads)].view(-1)[3] = bad  # one entry of one parameter's gradient
        step(plain, grads)
        step(fast, grads)
        assert_same(plain, fast)
    finite = all(bool(torch.isfinite(p).all()) for p in params(fast))
    assert finite != skip_nan  # RLlib zeroes the bad entries by default; with skip_nan it lets them through


@pytest.mark.slow
def test_a_ppo_update_is_rllibs_own_with_the_columns_and_the_lighter_step(tmp_path: Any) -> None:
    """The whole learner against RLlib's ``PPOTorchLearner`` on the same sampled episodes of the batched engine: the
    connector hands the module the columns (once per batch, before the advantages), and two epochs of minibatch
    updates leave the same parameters (to float rounding: fused Adam adds in another order)."""
    import copy
    import logging
    import sys

    import ray
    from ray.rllib.algorithms.ppo.torch.ppo_torch_learner import PPOTorchLearner
    from ray.rllib.core import DEFAULT_MODULE_ID

    from whist_env.learning.rllib.learner import SparseColumns

    sys.path.insert(0, str(REPO))
    from training.rllib.config import rllib_config_from_dict
    from training.rllib.trainer import build_algorithm

    config = rllib_config_from_dict(
        {"game": "german_whist_v0", "engine": "batched", "num_env_runners": 0, "num_envs_per_env_runner": 16,
         "train_batch_size": 400, "minibatch_size": 128, "num_epochs": 2, "net_arch": [32],
         "opponents": {"heuristic": 1.0}, "snapshot_pool": 0, "runs_dir": str(tmp_path), "torch_threads": 1}
    )  # fmt: skip
    ray.init(address="local", num_cpus=1, include_dashboard=False, logging_level=logging.WARNING)
    try:
        algo = build_algorithm(config)
        episodes = algo.env_runner_group.local_env_runner.sample(num_timesteps=400, explore=True)
        fast = algo.learner_group._learner
        plain = algo.config.copy(copy_frozen=False).learners(learner_class=PPOTorchLearner).build_learner(
            spaces={DEFAULT_MODULE_ID: (fast.module[DEFAULT_MODULE_ID].observation_space,
                                        fast.module[DEFAULT_MODULE_ID].action_space)}
        )  # fmt: skip
        plain.module[DEFAULT_MODULE_ID].load_state_dict(fast.module[DEFAULT_MODULE_ID].state_dict())
        assert any(isinstance(c, SparseColumns) for c in fast._learner_connector.connectors)
        assert not any(isinstance(c, SparseColumns) for c in plain._learner_connector.connectors)
        before = params(fast)
        for lrn in (fast, plain):
            np.random.seed(0)
            torch.manual_seed(0)
            lrn.update(episodes=copy.deepcopy(episodes), timesteps={}, num_epochs=2, minibatch_size=128,
                       shuffle_batch_per_epoch=True)  # fmt: skip
        algo.stop()
    finally:
        ray.shutdown()
    assert any(not torch.equal(a, b) for a, b in zip(before, params(fast), strict=True))
    for p, q in zip(params(plain), params(fast), strict=True):
        torch.testing.assert_close(q, p, rtol=1e-4, atol=1e-5)
