"""Recipe: TorchRL's PPO (masked) on whist_env's batched learner env, its PettingZooWrapper on the AEC env, then 500
duplicate deals.

    python docs/recipes/torchrl_recipe.py --steps 100000 --deals 500   # the documented run (docs/recipes/torchrl.md)
    python docs/recipes/torchrl_recipe.py --steps 4096 --deals 10      # the test's run (tests/recipes/test_torchrl.py)

Training follows TorchRL's PPO tutorial: ``GymWrapper`` around ``gymnasium.make_vec("whist_env/german_whist-v0",
num_envs=16, ...)``, the batched learner env (the other seat plays inside it, on the numba engine; TorchRL wants
same-step autoreset, and reads ``info["action_mask"]`` into the tensordict), a ``ProbabilisticActor`` with a
``MaskedCategorical`` distribution over the legal actions, a ``ValueOperator``, a ``Collector``, ``GAE`` and
``ClipPPOLoss``. ``GymWrapper`` sends one unmasked random action while it is built, so the env is made with
``illegal_reward=-1.0``: an illegal action ends its episode and is counted in ``info["illegal_actions"]`` (without it
the learner env raises). The training returns the count of the collected batches.

Then the trained actor plays both seats of the AEC env through ``PettingZooWrapper(env, use_mask=True)``: the
wrapper's ``mask`` says which seat is to act, its ``action_mask`` which cards it may play. The env is the raw one
(``whist_env.make(GAME, raw=True)``), which raises on an illegal action. Last, ``whist_env.evaluation.evaluate`` plays
the actor against random on duplicate deals.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import gymnasium as gym
import torch
from tensordict.nn import TensorDictModule, TensorDictSequential
from torch import nn
from torchrl.collectors import Collector
from torchrl.data import LazyTensorStorage, ReplayBuffer
from torchrl.data.replay_buffers.samplers import SamplerWithoutReplacement
from torchrl.envs import GymWrapper, PettingZooWrapper
from torchrl.modules import MaskedCategorical, ProbabilisticActor, ValueOperator
from torchrl.objectives import ClipPPOLoss
from torchrl.objectives.value import GAE

import whist_env
from whist_env.evaluation import evaluate
from whist_env.learning.sb3 import PolicyAgent
from whist_env.registry import get_spec

GAME = "german_whist_v0"


def mlp(obs_size: int, out: int) -> nn.Sequential:
    return nn.Sequential(nn.Linear(obs_size, 128), nn.Tanh(), nn.Linear(128, 128), nn.Tanh(), nn.Linear(128, out))


def train(steps: int, seed: int = 0, num_envs: int = 16) -> tuple[nn.Sequential, int]:
    """Masked PPO for ``steps`` learner decisions against a random opponent; returns the actor network and the
    illegal actions the env saw in training."""
    torch.manual_seed(seed)
    torch.set_num_threads(1)
    # the batched learner env; TorchRL needs same-step autoreset, and its GymWrapper steps once unmasked when built
    vec = gym.make_vec(
        whist_env.gymnasium_id(GAME),
        num_envs=num_envs,
        autoreset_mode=gym.vector.AutoresetMode.SAME_STEP,
        illegal_reward=-1.0,  # an illegal action ends its episode (counted in the infos) instead of raising
        learner_seat="random",  # both seats' decisions
        obs_dtype="float32",  # the engine's default for German Whist is uint8 bits
        seed=seed,
    )
    # actions as indices; GymWrapper reads the infos (action_mask, illegal_actions, ...) into the tensordict
    env = GymWrapper(vec, categorical_action_encoding=True)
    obs_size, num_actions = vec.single_observation_space.shape[0], int(vec.single_action_space.n)
    actor_net, critic_net = mlp(obs_size, num_actions), mlp(obs_size, 1)
    actor = ProbabilisticActor(
        TensorDictSequential(
            TensorDictModule(actor_net, in_keys=["observation"], out_keys=["logits"]),
            TensorDictModule(lambda mask: mask.bool(), in_keys=["action_mask"], out_keys=["legal"]),  # int8 -> bool
        ),
        in_keys={"logits": "logits", "mask": "legal"},
        distribution_class=MaskedCategorical,
        spec=env.action_spec,
        return_log_prob=True,
    )
    critic = ValueOperator(critic_net, in_keys=["observation"])
    frames_per_batch = 128 * num_envs
    # the policy keeps no memory between steps: its env needs no InitTracker, which TorchRL 0.14 asks for with a
    # FutureWarning (and 0.15 would add) unless told so
    collector = Collector(
        env,
        actor,
        frames_per_batch=frames_per_batch,
        total_frames=max(steps, frames_per_batch),
        auto_register_policy_transforms=False,
    )
    buffer = ReplayBuffer(storage=LazyTensorStorage(frames_per_batch), sampler=SamplerWithoutReplacement())
    advantage = GAE(gamma=1.0, lmbda=0.95, value_network=critic)
    loss_module = ClipPPOLoss(actor, critic, clip_epsilon=0.2, entropy_coeff=0.01)
    optimizer = torch.optim.Adam(loss_module.parameters(), lr=3e-4)
    illegal = 0
    for data in collector:
        illegal += int(data["next", "illegal_actions"].sum())  # the learner env counts them in its infos
        with torch.no_grad():
            advantage(data)
        buffer.extend(data.reshape(-1))
        for _ in range(4):  # epochs
            for _ in range(frames_per_batch // 512):
                losses = loss_module(buffer.sample(512))
                loss = losses["loss_objective"] + losses["loss_critic"] + losses["loss_entropy"]
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(loss_module.parameters(), 0.5)
                optimizer.step()
    collector.shutdown()
    return actor_net, illegal


def play_aec(actor_net: nn.Sequential, deals: int, seed: int = 2) -> float:
    """The actor greedy at player_0 of the AEC env through ``PettingZooWrapper``, player_1 uniformly random among its
    legal actions; returns player_0's mean reward per deal."""
    env = PettingZooWrapper(whist_env.make(GAME, raw=True), use_mask=True, seed=seed)  # one group per seat
    total = 0.0
    for _ in range(deals):
        td = env.reset()
        while not td["done"].item():
            legal = td["player_0", "action_mask"]  # (1, 52) bool
            logits = actor_net(td["player_0", "observation", "observation"]).masked_fill(~legal, -torch.inf)
            td["player_0", "action"] = logits.argmax(-1)
            td["player_1", "action"] = torch.multinomial(td["player_1", "action_mask"].float(), 1)[:, 0]
            td = env.step(td)["next"]  # only the seat to act (its "mask" is True) plays its action
            total += float(td["player_0", "reward"].sum())
    return total / max(deals, 1)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=100_000, help="learner decisions to train for")
    p.add_argument("--deals", type=int, default=500, help="duplicate deals against random (0: skip)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    start = time.perf_counter()
    actor_net, illegal = train(args.steps, args.seed)
    print(f"trained {args.steps} steps in {time.perf_counter() - start:.0f} s; illegal actions: {illegal}")
    aec = play_aec(actor_net, deals=20)
    print(f"PettingZooWrapper: 20 deals of the actor at player_0 against random, its mean reward {aec:+.2f}")
    report = None
    if args.deals:
        spec = get_spec(GAME)
        agent = PolicyAgent(actor_net.eval(), spec.make_encoder(spec.make_rules()), name="torchrl")
        report = evaluate(GAME, [lambda: agent, "random"], num_deals=args.deals, seed=1, names=["torchrl", "random"])
        print(report.to_markdown())
    return {"illegal_actions": illegal, "steps": args.steps, "report": report}


if __name__ == "__main__":
    main()
