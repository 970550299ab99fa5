"""Recipe: a CleanRL-style single-file masked PPO on whist_env's batched learner env, then 500 duplicate deals.

    python docs/recipes/cleanrl_recipe.py --steps 300000 --deals 500   # the documented run (docs/recipes/cleanrl.md)
    python docs/recipes/cleanrl_recipe.py --steps 4096 --deals 10      # the test's run (tests/recipes/test_cleanrl.py)

The structure of CleanRL's ``ppo.py`` (one file, an ``Agent`` with an actor and a critic, rollouts of ``num_steps``
steps of ``num_envs`` environments, GAE, clipped surrogate, value loss, entropy bonus), with two changes for a card
game: the actor's logits of illegal actions are masked before the softmax, and the environment is
``gymnasium.make_vec("whist_env/german_whist-v0", num_envs=...)``, whose other seat plays inside a batched engine.
It is made with same-step autoreset (``autoreset_mode="SameStep"``, the autoreset CleanRL's loop was written for):
the observation after an episode's last step is already the next episode's, and ``infos["action_mask"]`` its mask.
The learner env raises ``IllegalActionError`` on an illegal action: a run that finishes sent none.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from torch import nn
from torch.distributions import Categorical

import whist_env  # registers the whist_env/... ids with Gymnasium
from whist_env.evaluation import evaluate
from whist_env.learning.sb3 import PolicyAgent
from whist_env.registry import get_spec

GAME = "german_whist_v0"


@dataclass
class Args:
    total_timesteps: int = 300_000
    """learner decisions to train for"""
    num_envs: int = 64
    """environments stepped as one batch"""
    num_steps: int = 32
    """steps per environment per rollout (a rollout is num_envs * num_steps decisions)"""
    learning_rate: float = 3e-4
    """Adam's step size"""
    gamma: float = 1.0
    """discount (a deal is short and scored at its end)"""
    gae_lambda: float = 0.95
    """GAE's lambda"""
    num_minibatches: int = 4
    """minibatches per epoch"""
    update_epochs: int = 4
    """epochs per rollout"""
    clip_coef: float = 0.2
    """PPO's clipping"""
    ent_coef: float = 0.01
    """entropy bonus"""
    vf_coef: float = 0.5
    """value loss weight"""
    max_grad_norm: float = 0.5
    """gradient clipping"""
    seed: int = 0
    """seeds the deals, the opponent and torch"""


def layer_init(layer: nn.Linear, std: float = np.sqrt(2), bias_const: float = 0.0) -> nn.Linear:
    torch.nn.init.orthogonal_(layer.weight, std)
    torch.nn.init.constant_(layer.bias, bias_const)
    return layer


class Agent(nn.Module):
    def __init__(self, obs_size: int, num_actions: int) -> None:
        super().__init__()
        self.critic = nn.Sequential(
            layer_init(nn.Linear(obs_size, 128)),
            nn.Tanh(),
            layer_init(nn.Linear(128, 128)),
            nn.Tanh(),
            layer_init(nn.Linear(128, 1), std=1.0),
        )
        self.actor = nn.Sequential(
            layer_init(nn.Linear(obs_size, 128)),
            nn.Tanh(),
            layer_init(nn.Linear(128, 128)),
            nn.Tanh(),
            layer_init(nn.Linear(128, num_actions), std=0.01),
        )

    def get_value(self, x: torch.Tensor) -> torch.Tensor:
        return self.critic(x)

    def get_action_and_value(
        self, x: torch.Tensor, mask: torch.Tensor, action: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        logits = self.actor(x).masked_fill(~mask, -1e8)  # illegal actions get (numerically) zero probability
        probs = Categorical(logits=logits)
        if action is None:
            action = probs.sample()
        return action, probs.log_prob(action), probs.entropy(), self.critic(x)


def train(args: Args) -> Agent:
    """Masked PPO for ``args.total_timesteps`` learner decisions against a random opponent."""
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    envs = gym.make_vec(whist_env.gymnasium_id(GAME), num_envs=args.num_envs, seed=args.seed, autoreset_mode="SameStep")
    obs_size, num_actions = envs.single_observation_space.shape[0], int(envs.single_action_space.n)
    agent = Agent(obs_size, num_actions)
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)
    batch_size = args.num_envs * args.num_steps
    minibatch_size = batch_size // args.num_minibatches
    num_iterations = max(1, args.total_timesteps // batch_size)

    obs = torch.zeros((args.num_steps, args.num_envs, obs_size))
    masks = torch.zeros((args.num_steps, args.num_envs, num_actions), dtype=torch.bool)
    actions = torch.zeros((args.num_steps, args.num_envs), dtype=torch.long)
    logprobs = torch.zeros((args.num_steps, args.num_envs))
    rewards = torch.zeros((args.num_steps, args.num_envs))
    dones = torch.zeros((args.num_steps, args.num_envs))
    values = torch.zeros((args.num_steps, args.num_envs))

    next_obs_np, infos = envs.reset(seed=args.seed)
    next_obs = torch.as_tensor(next_obs_np, dtype=torch.float32)
    next_mask = torch.as_tensor(infos["action_mask"], dtype=torch.bool)
    next_done = torch.zeros(args.num_envs)
    for _ in range(num_iterations):
        for step in range(args.num_steps):
            obs[step], masks[step], dones[step] = next_obs, next_mask, next_done
            with torch.no_grad():
                action, logprob, _, value = agent.get_action_and_value(next_obs, next_mask)
            values[step], actions[step], logprobs[step] = value.flatten(), action, logprob
            next_obs_np, reward, terminated, truncated, infos = envs.step(action.numpy())
            rewards[step] = torch.as_tensor(reward, dtype=torch.float32)
            next_obs = torch.as_tensor(next_obs_np, dtype=torch.float32)
            next_mask = torch.as_tensor(infos["action_mask"], dtype=torch.bool)
            next_done = torch.as_tensor(np.logical_or(terminated, truncated), dtype=torch.float32)

        with torch.no_grad():  # generalised advantage estimation
            next_value = agent.get_value(next_obs).flatten()
            advantages = torch.zeros_like(rewards)
            lastgaelam = torch.zeros(args.num_envs)
            for t in reversed(range(args.num_steps)):
                nextnonterminal = 1.0 - (next_done if t == args.num_steps - 1 else dones[t + 1])
                nextvalues = next_value if t == args.num_steps - 1 else values[t + 1]
                delta = rewards[t] + args.gamma * nextvalues * nextnonterminal - values[t]
                lastgaelam = delta + args.gamma * args.gae_lambda * nextnonterminal * lastgaelam
                advantages[t] = lastgaelam
            returns = advantages + values

        b_obs, b_masks = obs.reshape(batch_size, obs_size), masks.reshape(batch_size, num_actions)
        b_actions, b_logprobs = actions.reshape(-1), logprobs.reshape(-1)
        b_advantages, b_returns = advantages.reshape(-1), returns.reshape(-1)
        for _ in range(args.update_epochs):
            order = torch.randperm(batch_size)
            for start in range(0, batch_size, minibatch_size):
                mb = order[start : start + minibatch_size]
                _, newlogprob, entropy, newvalue = agent.get_action_and_value(b_obs[mb], b_masks[mb], b_actions[mb])
                ratio = (newlogprob - b_logprobs[mb]).exp()
                mb_adv = (b_advantages[mb] - b_advantages[mb].mean()) / (b_advantages[mb].std() + 1e-8)
                pg_loss = torch.max(-mb_adv * ratio, -mb_adv * ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef))
                v_loss = 0.5 * ((newvalue.flatten() - b_returns[mb]) ** 2).mean()
                loss = pg_loss.mean() - args.ent_coef * entropy.mean() + args.vf_coef * v_loss
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
                optimizer.step()
    envs.close()
    return agent


def evaluate_vs_random(agent: Agent, deals: int, seed: int = 1) -> Any:
    """The trained actor (masked argmax) against random on ``deals`` duplicate deals (seats swapped)."""
    spec = get_spec(GAME)
    player = PolicyAgent(agent.actor.eval(), spec.make_encoder(spec.make_rules()), name="cleanrl")
    return evaluate(GAME, [lambda: player, "random"], num_deals=deals, seed=seed, names=["cleanrl", "random"])


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=Args.total_timesteps, help="learner decisions to train for")
    p.add_argument("--deals", type=int, default=500, help="duplicate deals against random (0: skip)")
    p.add_argument("--seed", type=int, default=0)
    cli = p.parse_args(argv)
    start = time.perf_counter()
    agent = train(Args(total_timesteps=cli.steps, seed=cli.seed))
    # an illegal action would have raised whist_env.IllegalActionError inside envs.step
    print(f"trained {cli.steps} steps in {time.perf_counter() - start:.0f} s; illegal actions: 0")
    report = evaluate_vs_random(agent, cli.deals) if cli.deals else None
    if report is not None:
        print(report.to_markdown())
    return {"illegal_actions": 0, "steps": cli.steps, "report": report}


if __name__ == "__main__":
    main()
