"""A network's opening distilled from the playout search (issue #27, point 4: search as a DAgger teacher for the card
play it searches), for a game whose PIMC takes playouts (classic whist). One DAgger round:

1. the network (``--init``: an exported ``.npz``; default the shipped one) plays one side's cards against the
   heuristic, on ``--deals`` single deals (alternate deals: the other side), in two worker processes;
2. each of its decisions with a choice is recorded: before PIMC's search starts (the opening) labelled by
   ``pimc(playouts=K)`` (the heuristic's playouts there, ``--playouts``), later by the network's own choice (so
   that fitting the opening does not move its play there, where it is not asked to change);
3. the network is fitted from its own weights to those labels (and to the datasets of earlier rounds given with
   ``--aggregate``), masked cross-entropy, Adam, ``--epochs`` passes, in the canonical suits it was trained in;
4. it is exported (``<out>.npz``, the shipped format, the game's metadata) and its dataset kept (``<out>.data.npz``).

    PYTHONPATH=$PWD python -m training.experiments.distill_opening --game <game> --deals 12000 \\
        --epochs 8 --out runs/distill_r1
    PYTHONPATH=$PWD python -m training.experiments.distill_opening --game <game> \\
        --init runs/distill_r1.npz --aggregate runs/distill_r1.data.npz --deals 12000 --epochs 8 --seed 3 \\
        --out runs/distill_r2

The classic whist rounds and their results (the network alone against the heuristic, and the hybrid
``pimc(fallback=pretrained(path=...))`` against ``pimc``) are in docs/results_training.md.
"""

from __future__ import annotations

import argparse
import os
import time
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import numpy as np


def options_of(game_id: str) -> dict[str, Any]:
    """The game's single-deal options (the arena's, and the shipped networks')."""
    from whist_env.registry import get_spec

    return dict(get_spec(game_id).single_deal)


def collect(args: tuple[str, int, int, str | None, int]) -> dict[str, np.ndarray]:
    """One worker's states: ``(game, seed, deals, init, playouts)``; see the module docstring."""
    game_id, seed, deals, init, playouts = args
    os.environ["OMP_NUM_THREADS"] = "1"
    from whist_env.agents import make_agent
    from whist_env.agents.pretrained import PretrainedAgent
    from whist_env.registry import get_spec
    from whist_env.spec import sides_of

    options = options_of(game_id)
    spec = get_spec(game_id)
    game = spec.make_rules(**options)
    sides = sides_of(game.num_players, spec.partner_offset)
    net = PretrainedAgent(game_id, path=init, **options)
    heuristic = make_agent("heuristic", game_id, **options)
    teacher: Any = make_agent(f"pimc(playouts={playouts})", game_id, **options)
    rng = np.random.default_rng([seed, 7])
    out: dict[str, list[Any]] = {"obs": [], "mask": [], "label": [], "opening": []}
    for d in range(deals):
        state = game.new_episode(rng)
        side = d % 2
        while not state.done:
            view = game.view(state, state.to_act)
            ours = sides[state.to_act] == side
            action = (net if ours else heuristic).act(view, rng)
            if ours and view.legal.bit_count() > 1:
                opening = teacher.total_tricks - sum(state.tricks_won) > teacher.max_tricks
                obs, mask = net.encoder.encode_with_mask(view)
                out["obs"].append(obs.astype(np.uint8))
                out["mask"].append(np.asarray(mask, bool))
                out["label"].append(teacher.act(view, rng) if opening else action)
                out["opening"].append(opening)
            game.step(state, action, rng)
    return {k: np.array(v) for k, v in out.items()}


def fit(game_id: str, data: dict[str, np.ndarray], init: str | None, epochs: int, out: Path) -> Path:
    """The network of ``init`` fitted to ``data``'s labels and exported to ``out``."""
    import torch

    from whist_env.agents.pretrained import NumpyPolicy, PretrainedAgent, export_policy

    torch.manual_seed(0)
    options = options_of(game_id)
    agent = PretrainedAgent(game_id, path=init, **options)
    assert agent.policy.activations == ["tanh", "tanh"], "the experiment fits [H, H] tanh networks"
    obs, mask, label = data["obs"], data["mask"], data["label"]
    if agent.canonical is not None:
        obs, mask, perm = agent.canonical.forward(obs, mask)
        label = agent.canonical.action(label, perm)
    arrays = agent.policy.arrays()
    names = ["hidden_0", "hidden_1", "action"]
    layers = [torch.nn.Linear(*arrays[f"{n}_weight"].shape[::-1]) for n in names]
    with torch.no_grad():
        for layer, name in zip(layers, names, strict=True):
            layer.weight.copy_(torch.from_numpy(arrays[f"{name}_weight"]))
            layer.bias.copy_(torch.from_numpy(arrays[f"{name}_bias"]))
    net = torch.nn.Sequential(layers[0], torch.nn.Tanh(), layers[1], torch.nn.Tanh(), layers[2])
    x = torch.from_numpy(np.asarray(obs, np.float32))
    m = torch.from_numpy(np.asarray(mask, bool))
    y = torch.from_numpy(np.asarray(label, np.int64))
    opening = torch.from_numpy(data["opening"])
    optimiser = torch.optim.Adam(net.parameters(), lr=3e-4)

    def agreement() -> str:
        with torch.no_grad():
            hit = net(x).masked_fill(~m, -1e9).argmax(1) == y
        return f"opening {hit[opening].float().mean():.3f}, later {hit[~opening].float().mean():.3f}"

    print(f"agreement with the labels before: {agreement()}", flush=True)
    for epoch in range(epochs):
        for batch in torch.randperm(len(y)).split(512):
            loss = torch.nn.functional.cross_entropy(net(x[batch]).masked_fill(~m[batch], -1e9), y[batch])
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
        print(f"epoch {epoch + 1}: agreement {agreement()}", flush=True)
    weights = [(layer.weight.detach().numpy().copy(), layer.bias.detach().numpy().copy()) for layer in layers]
    canonical = agent.canonical is not None
    policy = NumpyPolicy(weights[:2], ["tanh", "tanh"], weights[2], canonical_suits=canonical)
    return export_policy(policy, out, game_id, options, canonical_suits=canonical)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--game", required=True, help="a game whose PIMC takes playouts (its engine takes a seat's view)"
    )
    parser.add_argument("--init", default=None, help="the exported .npz to start from (default: the shipped one)")
    parser.add_argument("--aggregate", nargs="*", default=[], help="datasets of earlier rounds (<out>.data.npz)")
    parser.add_argument("--deals", type=int, default=12000, help="deals played for this round's states")
    parser.add_argument("--playouts", type=int, default=20, help="the teacher's pimc(playouts=K)")
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--seed", type=int, default=1, help="the workers play from seeds seed and seed + 1")
    parser.add_argument("--out", type=Path, required=True, help="the network is written to <out>.npz")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    init = None if args.init is None else str(args.init)
    jobs = [(args.game, args.seed + i, args.deals // 2, init, args.playouts) for i in range(2)]
    with get_context("spawn").Pool(2) as pool:
        parts = pool.map(collect, jobs)
    data = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(args.out.with_name(args.out.name + ".data.npz"), **data)  # type: ignore[arg-type]
    print(f"{len(data['label'])} states ({int(data['opening'].sum())} in the opening) in "
          f"{time.perf_counter() - start:.0f} s", flush=True)  # fmt: skip
    for path in args.aggregate:
        with np.load(path) as old:
            data = {k: np.concatenate([data[k], old[k]]) for k in data}
    written = fit(args.game, data, init, args.epochs, args.out.with_name(args.out.name + ".npz"))
    print(f"wrote {written} after {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
