"""Milliseconds per decision of the network agents: ``ModelAgent`` through torch, ``ModelAgent`` with the numpy
forward, and ``PretrainedAgent`` (numpy only), plus the heuristic and random agents for scale.

An untrained ``MaskablePPO`` ``MlpPolicy`` with the network of ``training/configs`` (``[256, 256]``, Tanh)
is saved and exported to a temporary folder (the weights do not change the cost); every agent then
decides on the same views, collected from random play (every seat, every phase). Each decision includes
encoding the view. Medians of ``--repeats`` runs; one torch thread (``ModelAgent``'s default); pin to one
core for comparable figures:

    taskset -c 0 python benchmarks/bench_agents.py --game german_whist_v0 --views 500 --repeats 3

Needs the ``train`` extra (torch, sb3-contrib) to build the model.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from whist_env.registry import game_ids, get_spec


def collect_views(game_id: str, count: int, seed: int) -> list[Any]:
    """``count`` views of the seat to act, from random legal play."""
    game = get_spec(game_id).make_rules()
    rng = np.random.default_rng(seed)
    views: list[Any] = []
    while len(views) < count:
        state = game.new_episode(rng)
        while not state.done and len(views) < count:
            view = game.view(state, state.to_act)
            views.append(view)
            legal = [a for a in range(game.num_actions) if (view.legal >> a) & 1]
            game.step(state, int(rng.choice(legal)), rng)
    return views


def build_files(game_id: str, folder: Path, net_arch: list[int]) -> tuple[Path, Path]:
    """An untrained model ``.zip`` (with its metadata) and its exported ``.npz``."""
    import gymnasium as gym
    from gymnasium import spaces
    from sb3_contrib import MaskablePPO

    from whist_env.agents.pretrained import export_policy
    from whist_env.fingerprint import save_model_metadata

    spec = get_spec(game_id)
    game = spec.make_rules()
    size = spec.make_encoder(game).size

    class Shapes(gym.Env):
        observation_space = spaces.Box(0.0, 1.0, (size,), np.float32)
        action_space = spaces.Discrete(game.num_actions)

    model = MaskablePPO("MlpPolicy", Shapes(), n_steps=8, batch_size=8, device="cpu", seed=0,
                        policy_kwargs={"net_arch": net_arch})  # fmt: skip
    zipped = folder / "model.zip"
    model.save(zipped)
    save_model_metadata(zipped, game_id)
    return zipped, export_policy(model, folder / "policy.npz", game_id)


def ms_per_decision(agent: Any, views: list[Any], repeats: int) -> float:
    """Median over ``repeats`` passes of the mean milliseconds ``agent.act`` takes on ``views``."""
    rng = np.random.default_rng(0)
    agent.act(views[0], rng)  # loads the model, warms caches
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for view in views:
            agent.act(view, rng)
        times.append((time.perf_counter() - t0) * 1000 / len(views))
    return statistics.median(times)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", default="german_whist_v0", choices=game_ids())
    parser.add_argument("--views", type=int, default=500, help="decisions per pass")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--net-arch", type=int, nargs="*", default=[256, 256])
    args = parser.parse_args(argv)

    from whist_env.agents import RandomAgent, heuristic_for
    from whist_env.agents.model import ModelAgent
    from whist_env.agents.pretrained import PretrainedAgent

    views = collect_views(args.game, args.views, seed=1)
    with tempfile.TemporaryDirectory() as tmp:
        zipped, npz = build_files(args.game, Path(tmp), args.net_arch)
        agents = {
            "model (torch predict)": ModelAgent(zipped, args.game, numpy_forward=False),
            "model (numpy forward)": ModelAgent(zipped, args.game),
            "pretrained (numpy)": PretrainedAgent(args.game, path=npz),
            "heuristic": heuristic_for(args.game),
            "random": RandomAgent(),
        }
        print(f"{args.game}, net {args.net_arch}, {len(views)} views, median of {args.repeats}")
        for label, agent in agents.items():
            print(f"  {label:<24} {ms_per_decision(agent, views, args.repeats):8.3f} ms per decision")


if __name__ == "__main__":
    main()
