"""Recipe: Tianshou's multi-agent DQN (masked) on whist_env's AEC German Whist env, then 500 duplicate deals.

    python docs/recipes/tianshou_recipe.py --steps 20000 --deals 500   # the documented run (docs/recipes/tianshou.md)
    python docs/recipes/tianshou_recipe.py --steps 1000 --deals 10     # the test's run (tests/recipes/test_tianshou.py)

Tianshou's own multi-agent pattern (its tic-tac-toe example): the PettingZoo AEC env in ``tianshou.env.PettingZooEnv``
(which turns ``observe()``'s ``{"observation", "action_mask"}`` into ``obs`` and ``mask``), one algorithm per seat in
``MultiAgentOffPolicyAlgorithm``: a DQN learner at ``player_0`` and Tianshou's masked random player at ``player_1``.
The DQN policy masks its Q-values and its epsilon-greedy exploration with ``mask``. The env is the raw one
(``whist_env.make(GAME, raw=True)``), which raises ``IllegalActionError`` on an illegal action: a run that finishes
sent none. The learner's Q-network then plays the arena (both seats, duplicate deals) through the agent protocol
``act(view, rng)``.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np
import torch
from tianshou.algorithm import DQN, MARLRandomDiscreteMaskedOffPolicyAlgorithm, MultiAgentOffPolicyAlgorithm
from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
from tianshou.algorithm.optim import AdamOptimizerFactory
from tianshou.data import Collector, CollectStats, VectorReplayBuffer
from tianshou.env import DummyVectorEnv
from tianshou.env.pettingzoo_env import PettingZooEnv
from tianshou.trainer import OffPolicyTrainerParams
from tianshou.utils.net.common import Net

import whist_env
from whist_env.evaluation import evaluate
from whist_env.registry import get_spec
from whist_env.view import PlayerView

GAME = "german_whist_v0"


def get_env() -> PettingZooEnv:
    return PettingZooEnv(whist_env.make(GAME, raw=True))  # raw: an illegal action raises


def train(steps: int, seed: int = 0) -> Net:
    """DQN at player_0 against a masked random player_1 for about ``steps`` env steps (both seats' moves); returns
    the Q-network."""
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.set_num_threads(1)
    env = get_env()
    obs_size = env.observation_space["observation"].shape[0]
    net = Net(state_shape=obs_size, action_shape=int(env.action_space.n), hidden_sizes=[256, 256])
    learner = DQN(
        policy=DiscreteQLearningPolicy(model=net, action_space=env.action_space, eps_training=0.1),
        optim=AdamOptimizerFactory(lr=5e-4),
        gamma=1.0,
        # Monte Carlo targets: a deal is 52 moves, so every return reaches the deal's end. With 1-step targets the
        # learner would bootstrap from the next observation in the buffer, which is its opponent's (AEC turns)
        n_step_return_horizon=60,
        target_update_freq=200,
    )
    opponent = MARLRandomDiscreteMaskedOffPolicyAlgorithm(action_space=env.action_space)
    algorithm = MultiAgentOffPolicyAlgorithm(algorithms=[learner, opponent], env=env)

    train_envs = DummyVectorEnv([get_env for _ in range(8)])
    train_envs.seed(seed)
    collector = Collector[CollectStats](
        algorithm, train_envs, VectorReplayBuffer(20_000, len(train_envs)), exploration_noise=True
    )
    collector.reset()
    epoch_steps = min(steps, 5_000)
    algorithm.run_training(
        OffPolicyTrainerParams(
            training_collector=collector,
            max_epochs=max(1, steps // epoch_steps),
            epoch_num_steps=epoch_steps,
            collection_step_num_env_steps=64,
            batch_size=64,
            update_step_num_gradient_steps_per_sample=0.25,
            test_in_training=False,
            multi_agent_return_reduction=lambda rews: rews[:, 0],  # player_0's return: the learner's
            verbose=False,
            show_progress=False,
        )
    )
    return net


class QNetAgent:
    """The trained Q-network as an arena agent: the legal action of highest Q-value for the encoded view."""

    name = "tianshou"

    def __init__(self, net: Net) -> None:
        spec = get_spec(GAME)
        self.encoder = spec.make_encoder(spec.make_rules())  # the encoding observe() gives
        self.net = net.eval()

    def act(self, view: PlayerView, rng: np.random.Generator) -> int:
        obs, mask = self.encoder.encode_with_mask(view)
        with torch.no_grad():
            q_values, _ = self.net(obs[None])
        return int(np.argmax(np.where(mask.astype(bool), q_values[0].numpy(), -np.inf)))


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=20_000, help="env steps (both seats' moves) to train for")
    p.add_argument("--deals", type=int, default=500, help="duplicate deals against random (0: skip)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    start = time.perf_counter()
    net = train(args.steps, args.seed)
    print(f"trained {args.steps} steps in {time.perf_counter() - start:.0f} s; illegal actions: 0")
    report = None
    if args.deals:
        agent = QNetAgent(net)
        report = evaluate(GAME, [lambda: agent, "random"], num_deals=args.deals, seed=1, names=["tianshou", "random"])
        print(report.to_markdown())
    return {"illegal_actions": 0, "steps": args.steps, "report": report}


if __name__ == "__main__":
    main()
