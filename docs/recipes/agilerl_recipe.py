"""Recipe: AgileRL's DQN (masked) on whist_env's turn-based AEC German Whist env, then 500 duplicate deals.

    python docs/recipes/agilerl_recipe.py --steps 40000 --deals 500   # the documented run (docs/recipes/agilerl.md)
    python docs/recipes/agilerl_recipe.py --steps 2000 --deals 10     # the test's run (tests/recipes/test_agilerl.py)

AgileRL's pattern for turn-based PettingZoo games (its Connect Four tutorial): a plain loop over the AEC env's
``agent_iter()``, one ``DQN`` agent whose ``get_action(obs, epsilon, action_mask)`` chooses among the legal actions
only, transitions stored as ``Transition`` tensorclasses in a ``ReplayBuffer``, and ``agent.learn`` on sampled
batches. The learner takes a random seat every deal; the other seat plays uniformly among its legal actions. A
transition is (my observation, my action, the reward I earned until my next turn, my next observation): AEC's
``last()`` gives exactly that reward, and after the deal every seat gets a last turn with its final reward. The env
is the raw one (``whist_env.make(GAME, raw=True)``), which raises ``IllegalActionError`` on an illegal action: a run
that finishes sent none.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np
import torch
from agilerl.algorithms import DQN
from agilerl.components.data import Transition
from agilerl.components.replay_buffer import ReplayBuffer

import whist_env
from whist_env.evaluation import evaluate
from whist_env.registry import get_spec
from whist_env.view import PlayerView

GAME = "german_whist_v0"


def train(steps: int, seed: int = 0) -> DQN:
    """DQN for ``steps`` learner decisions against a random player; returns the agent."""
    torch.manual_seed(seed)
    torch.set_num_threads(1)
    rng = np.random.default_rng(seed)
    env = whist_env.make(GAME, raw=True)  # raw: an illegal action raises
    agent = DQN(
        observation_space=env.observation_space("player_0")["observation"],
        action_space=env.action_space("player_0"),
        net_config={"encoder_config": {"hidden_size": [256, 256]}},
        batch_size=64,
        lr=5e-4,
        learn_step=4,
        gamma=1.0,
        tau=0.01,
        double=True,
    )
    memory = ReplayBuffer(max_size=20_000)
    decisions = 0
    while decisions < steps:
        env.reset(seed=int(rng.integers(2**31)))
        learner = env.possible_agents[int(rng.integers(2))]
        seen: list[np.ndarray] = []  # the learner's observations, actions and the rewards after each action
        acted: list[int] = []
        earned: list[float] = []
        for name in env.agent_iter():
            obs, reward, terminated, truncated, _ = env.last()
            done = terminated or truncated
            if name != learner:  # the opponent: uniformly random among its legal actions
                env.step(None if done else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
                continue
            if acted:
                earned.append(float(reward))  # what the learner earned since its last action (AEC's last())
            if done:
                env.step(None)
                continue
            epsilon = max(0.05, 1.0 - decisions / (0.5 * steps))  # linear decay over the first half
            action = int(agent.get_action(obs["observation"][None], epsilon, obs["action_mask"][None])[0])
            seen.append(obs["observation"])
            acted.append(action)
            env.step(action)
            decisions += 1
            if decisions % agent.learn_step == 0 and len(memory) >= agent.batch_size:
                agent.learn(memory.sample(agent.batch_size))
        # Monte Carlo targets: each decision is stored with the reward it led to until the end of the deal and
        # done=True, so DQN's target is that return (a deal is scored at its end; 1-step targets learn it slowly)
        to_go = np.cumsum(earned[::-1])[::-1].astype(np.float32)
        obs_batch = np.stack(seen)
        transition = Transition(
            obs=obs_batch,
            action=np.array(acted),
            reward=to_go,
            next_obs=obs_batch,  # not read: every transition is terminal
            done=np.ones(len(acted), dtype=bool),
            batch_size=[len(acted)],
        )
        memory.add(transition.to_tensordict())
    return agent


class DQNAgent:
    """The trained DQN as an arena agent: its greedy masked action for the encoded view."""

    name = "agilerl"

    def __init__(self, dqn: DQN) -> None:
        spec = get_spec(GAME)
        self.encoder = spec.make_encoder(spec.make_rules())  # the encoding observe() gives
        self.dqn = dqn

    def act(self, view: PlayerView, rng: np.random.Generator) -> int:
        obs, mask = self.encoder.encode_with_mask(view)
        return int(self.dqn.get_action(obs[None], 0.0, mask[None])[0])


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=40_000, help="learner decisions to train for")
    p.add_argument("--deals", type=int, default=500, help="duplicate deals against random (0: skip)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    start = time.perf_counter()
    dqn = train(args.steps, args.seed)
    print(f"trained {args.steps} steps in {time.perf_counter() - start:.0f} s; illegal actions: 0")
    report = None
    if args.deals:
        agent = DQNAgent(dqn)
        report = evaluate(GAME, [lambda: agent, "random"], num_deals=args.deals, seed=1, names=["agilerl", "random"])
        print(report.to_markdown())
    return {"illegal_actions": 0, "steps": args.steps, "report": report}


if __name__ == "__main__":
    main()
