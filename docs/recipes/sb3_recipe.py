"""Recipe: sb3-contrib's MaskablePPO on whist_env's single-agent German Whist env, then 500 duplicate deals.

    python docs/recipes/sb3_recipe.py --steps 100000 --deals 500   # the documented run (docs/recipes/sb3.md)
    python docs/recipes/sb3_recipe.py --steps 2048 --deals 10      # the test's run (tests/recipes/test_sb3.py)

Only Stable-Baselines3's and sb3-contrib's documented API and whist_env's public one: ``gymnasium.make`` builds the
single-agent env (the other seat plays inside it), ``MaskablePPO`` reads the legal actions from the env's
``action_masks()``, a callback counts the illegal actions the env saw (``info["illegal_actions"]``: an illegal action
would end the episode, not be replaced), and ``whist_env.evaluation.evaluate`` plays the trained policy against
random on duplicate deals.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.env_util import make_vec_env

import whist_env  # registers the whist_env/... ids with Gymnasium
from whist_env.evaluation import evaluate
from whist_env.learning.sb3 import PolicyAgent
from whist_env.registry import get_spec

GAME = "german_whist_v0"


class CountIllegal(BaseCallback):
    """Sums ``info["illegal_actions"]`` over every step of training (it must stay 0)."""

    def __init__(self) -> None:
        super().__init__()
        self.illegal = 0

    def _on_step(self) -> bool:
        self.illegal += sum(int(info["illegal_actions"]) for info in self.locals["infos"])
        return True


def train(steps: int, seed: int = 0) -> tuple[MaskablePPO, int]:
    """MaskablePPO for ``steps`` learner decisions against a random opponent; returns the model and the illegal
    actions the env saw."""
    torch.set_num_threads(1)
    # make_vec_env asks for render_mode="rgb_array" unless told otherwise; the whist envs render text only
    envs = make_vec_env(whist_env.gymnasium_id(GAME), n_envs=8, seed=seed, env_kwargs={"render_mode": None})
    model = MaskablePPO(
        "MlpPolicy", envs, n_steps=256, batch_size=256, n_epochs=4, gamma=1.0, ent_coef=0.01, seed=seed, verbose=0
    )
    counter = CountIllegal()
    model.learn(total_timesteps=steps, callback=counter)
    return model, counter.illegal


def evaluate_vs_random(model: MaskablePPO, deals: int, seed: int = 1) -> Any:
    """The trained policy (masked argmax) against random on ``deals`` duplicate deals (seats swapped)."""
    spec = get_spec(GAME)
    agent = PolicyAgent.from_policy(model.policy, spec.make_encoder(spec.make_rules()), name="sb3")
    return evaluate(GAME, [lambda: agent, "random"], num_deals=deals, seed=seed, names=["sb3", "random"])


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=100_000, help="learner decisions to train for")
    p.add_argument("--deals", type=int, default=500, help="duplicate deals against random (0: skip)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    start = time.perf_counter()
    model, illegal = train(args.steps, args.seed)
    print(f"trained {model.num_timesteps} steps in {time.perf_counter() - start:.0f} s; illegal actions: {illegal}")
    report = evaluate_vs_random(model, args.deals) if args.deals else None
    if report is not None:
        print(report.to_markdown())
    return {"illegal_actions": illegal, "steps": model.num_timesteps, "report": report}


if __name__ == "__main__":
    main()
