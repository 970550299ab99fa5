"""What the learner needs to see (issue #13, deliverable 3): behaviour cloning of the heuristic with equal budgets
for several input variants, then the cloned network alone (masked argmax) against the heuristic in the arena.

    PYTHONPATH=$PWD python -m training.experiments.features_bc --game german_whist_v0 \\
        --variants flat flat+facts --seeds 0 1 --deals 2000 --epochs 6 --arena-deals 500 --out runs/features

Variants (names joined by ``+``):

* ``flat``: the observation into an MLP [256, 256] (tanh), as the training pipeline's policy.
* ``embed``: a card-embedding network: every card slot gets the bits of all card-set pieces at that card (and its
  rank and suit), a shared per-card MLP (64, 64), per-suit sum pooling, an MLP [256, 256] over the pooled cards and
  the non-card pieces; a card's logit is its embedding dotted with a projection of that context (plus a bias per
  card from the context); other actions (bids) from the context.
* ``facts``: :class:`whist_env.features.CardFacts` appended (with ``embed``: as two more card channels).
* ``canon``: suits renamed so that trump is spades (:class:`whist_env.features.SuitPermuter`), observation,
  mask and label on the learner's side; the agent renames its action back.
* ``aug``: every training row gets a random renaming of the suits each time it is drawn: of the three non-trump
  suits with ``canon`` (trump stays spades), of all four suits without ``canon`` or without trump.

The dataset is the warm-start pipeline's (:func:`whist_env.pretrain.load_or_generate`: the heuristic's self-play,
cached); the held-out decisions are another seed's self-play. Each run appends one JSON line to
``<out>/results.jsonl``. torch runs on one thread; CPU times are process times.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from whist_env.cards import NUM_CARDS, NUM_RANKS, NUM_SUITS
from whist_env.features import PERMUTATIONS, CardFacts, SuitPermuter
from whist_env.pretrain import Dataset, load_or_generate
from whist_env.registry import get_spec
from whist_env.view import PlayerView

# Renamings that keep spades (the canonical trump) in place: the augmentations of a canonical observation.
KEEP_SPADES = np.array([i for i, s in enumerate(PERMUTATIONS) if s[NUM_SUITS - 1] == NUM_SUITS - 1])


class Inputs:
    """Turns observations (and masks, actions) into a variant's network input, on the learner's side."""

    def __init__(self, layout: Any, variant: set[str]) -> None:
        self.layout = layout
        self.facts = CardFacts(layout) if "facts" in variant else None
        self.permuter = SuitPermuter(layout) if {"canon", "aug"} & variant else None
        self.canon = "canon" in variant
        self.aug = "aug" in variant
        self.size = layout.size + (self.facts.size if self.facts else 0)

    def perm(self, obs: np.ndarray, rng: np.random.Generator | None) -> np.ndarray:
        """Permutation id per row: canonical trump, then (training only) a random renaming of the other suits."""
        n = len(obs)
        if self.permuter is None:
            return np.zeros(n, np.int64)
        p = self.permuter.canonical(obs) if self.canon else np.zeros(n, np.int64)
        if self.aug and rng is not None:
            # with a canonical trump, rename only the other three suits; without trump, any of the 24 renamings
            keep = KEEP_SPADES[rng.integers(len(KEEP_SPADES), size=n)]
            fixed = self.permuter.trump(obs) < NUM_SUITS if self.canon else np.zeros(n, bool)
            if not fixed.all():  # (German Whist always has trump: no extra draw, its runs reproduce bit for bit)
                keep = np.where(fixed, keep, rng.integers(len(PERMUTATIONS), size=n))
            p = self.permuter.compose(p, keep)
        return p

    def __call__(
        self, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Network input, mask and permutation ids of a batch."""
        p = self.perm(obs, rng)
        if self.permuter is not None:
            obs = self.permuter.obs(obs, p)
            mask = self.permuter.mask(mask, p)
        x = np.concatenate([obs, self.facts(obs)], axis=1) if self.facts is not None else obs
        return x.astype(np.float32), mask, p

    def label(self, action: np.ndarray, p: np.ndarray) -> np.ndarray:
        return action if self.permuter is None else self.permuter.action(action, p)

    def back(self, action: np.ndarray, p: np.ndarray) -> np.ndarray:
        return action if self.permuter is None else self.permuter.action_back(action, p)


def build_net(kind: str, inputs: Inputs, num_actions: int) -> Any:
    import torch
    from torch import nn

    if kind == "flat":
        return nn.Sequential(
            nn.Linear(inputs.size, 256), nn.Tanh(), nn.Linear(256, 256), nn.Tanh(), nn.Linear(256, num_actions)
        )

    layout = inputs.layout
    card_at = [layout.offsets[p.name] for p in layout.pieces if p.kind == "cards"]
    other = np.concatenate(
        [np.arange(layout.offsets[p.name], layout.offsets[p.name] + p.size) for p in layout.pieces if p.kind != "cards"]
    )
    if inputs.facts is not None:  # master and winning_now are two more card channels; out[s] joins the context
        card_at += [layout.size, layout.size + NUM_CARDS]
        other = np.concatenate([other, np.arange(layout.size + 2 * NUM_CARDS, inputs.size)])
    card_index = torch.as_tensor(np.array(card_at)[None, :] + np.arange(NUM_CARDS)[:, None])  # (52, K)
    other_index = torch.as_tensor(other)
    identity = torch.zeros(NUM_CARDS, NUM_RANKS + NUM_SUITS)
    for c in range(NUM_CARDS):
        identity[c, c % NUM_RANKS] = 1
        identity[c, NUM_RANKS + c // NUM_RANKS] = 1

    class CardNet(nn.Module):
        card_index: torch.Tensor  # buffers (registered below): move with the module, saved in its state
        other_index: torch.Tensor
        identity: torch.Tensor

        def __init__(self) -> None:
            super().__init__()
            k = len(card_at) + NUM_RANKS + NUM_SUITS
            self.card = nn.Sequential(nn.Linear(k, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU())
            self.context = nn.Sequential(
                nn.Linear(NUM_SUITS * 64 + len(other), 256), nn.Tanh(), nn.Linear(256, 256), nn.Tanh()
            )
            self.query = nn.Linear(256, 64)
            self.card_bias = nn.Linear(256, NUM_CARDS)
            self.rest = nn.Linear(256, num_actions - NUM_CARDS) if num_actions > NUM_CARDS else None
            self.register_buffer("card_index", card_index)
            self.register_buffer("other_index", other_index)
            self.register_buffer("identity", identity)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            b = x.shape[0]
            per_card = x[:, self.card_index]  # (b, 52, K)
            per_card = torch.cat([per_card, self.identity.expand(b, -1, -1)], dim=2)
            h = self.card(per_card)  # (b, 52, 64)
            pooled = h.view(b, NUM_SUITS, NUM_RANKS, 64).sum(dim=2).reshape(b, -1)
            g = self.context(torch.cat([pooled, x[:, self.other_index]], dim=1))
            cards = torch.einsum("bcd,bd->bc", h, self.query(g)) + self.card_bias(g)
            if self.rest is None:
                return cards
            return torch.cat([cards, self.rest(g)], dim=1)

    return CardNet()


def phases(layout: Any, obs: np.ndarray, action: np.ndarray) -> dict[str, np.ndarray]:
    """Row selections to report the cloning accuracy on: German Whist's two phases, Oh Hell's bids and play."""
    stage = next((p for p in layout.pieces if p.name == "stage"), None)  # German Whist's phase 1 / phase 2
    if stage is not None:
        at = layout.offsets["stage"]
        return {label: obs[:, at + i] > 0.5 for i, label in enumerate(stage.labels)}
    if layout.num_actions > NUM_CARDS:
        return {"cards": action < NUM_CARDS, "other": action >= NUM_CARDS}
    return {}


class FeatureAgent:
    """The cloned network alone: masked argmax over its logits, suits renamed back for the real game."""

    def __init__(self, net: Any, encoder: Any, inputs: Inputs, name: str) -> None:
        self.net = net
        self.encoder = encoder
        self.inputs = inputs
        self.name = name

    def act(self, view: PlayerView, rng: np.random.Generator) -> int:
        import torch

        obs, mask = self.encoder.encode_with_mask(view)
        x, m, p = self.inputs(obs[None, :], mask[None, :])
        with torch.no_grad():
            logits = self.net(torch.from_numpy(x))[0].numpy()
        logits[m[0] == 0] = -np.inf
        return int(self.inputs.back(np.array([int(np.argmax(logits))]), p)[0])


def clone(net: Any, inputs: Inputs, data: Dataset, epochs: int, batch_size: int, lr: float, seed: int) -> list[float]:
    """Masked cross-entropy on the teacher's actions; returns the training accuracy per epoch."""
    import torch

    rng = np.random.default_rng(seed)
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    n = len(data)
    accs = []
    for _ in range(epochs):
        order = rng.permutation(n)
        hits = 0
        for start in range(0, n, batch_size):
            idx = order[start : start + batch_size]
            x, m, p = inputs(data.obs[idx], data.mask[idx], rng)
            y = torch.as_tensor(inputs.label(data.action[idx], p))
            logits = net(torch.from_numpy(x)).masked_fill(torch.from_numpy(m == 0), -1e8)
            loss = torch.nn.functional.cross_entropy(logits, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            hits += int((logits.argmax(1) == y).sum())
        accs.append(hits / n)
    return accs


def accuracy(net: Any, inputs: Inputs, data: Dataset, rows: np.ndarray | None = None) -> float:
    import torch

    sel = np.arange(len(data)) if rows is None else np.flatnonzero(rows)
    hits = 0
    with torch.no_grad():
        for start in range(0, len(sel), 4096):
            idx = sel[start : start + 4096]
            x, m, p = inputs(data.obs[idx], data.mask[idx])
            logits = net(torch.from_numpy(x)).masked_fill(torch.from_numpy(m == 0), -1e8)
            hits += int((inputs.back(logits.argmax(1).numpy(), p) == data.action[idx]).sum())
    return hits / max(1, len(sel))


def run(args: argparse.Namespace, variant_name: str, seed: int, train: Dataset, held: Dataset) -> dict[str, Any]:
    import torch

    from whist_env.evaluation import evaluate

    spec = get_spec(args.game)
    options = dict(spec.single_deal)
    encoder = spec.make_encoder(spec.make_rules(**options))
    variant = set(variant_name.split("+"))
    inputs = Inputs(encoder.layout, variant)
    torch.manual_seed(seed)
    net = build_net("embed" if "embed" in variant else "flat", inputs, encoder.layout.num_actions)
    params = sum(p.numel() for p in net.parameters())
    t0 = time.process_time()
    train_acc = clone(net, inputs, train, args.epochs, args.batch_size, args.lr, seed)
    bc_cpu = time.process_time() - t0
    net.eval()
    held_acc = {"all": accuracy(net, inputs, held)}
    for k, rows in phases(encoder.layout, held.obs, held.action).items():
        held_acc[k] = accuracy(net, inputs, held, rows)
    t0 = time.process_time()
    agent = FeatureAgent(net, encoder, inputs, variant_name)
    report = evaluate(args.game, [agent, "heuristic"], num_deals=args.arena_deals, seed=args.arena_seed)
    arena_cpu = time.process_time() - t0
    mine = report.agents[0]
    diff = report.pairs[0].diff
    row = {
        "game": args.game,
        "variant": variant_name,
        "seed": seed,
        "params": params,
        "train_decisions": len(train),
        "train_deals": args.deals,
        "held_decisions": len(held),
        "epochs": args.epochs,
        "batch_size": args.batch_size,
        "lr": args.lr,
        "bc_cpu_s": round(bc_cpu, 1),
        "train_acc": [round(a, 4) for a in train_acc],
        "held_acc": {k: round(v, 4) for k, v in held_acc.items()},
        "arena_deals": args.arena_deals,
        "arena_seed": args.arena_seed,
        "arena_cpu_s": round(arena_cpu, 1),
        "mean": round(mine.mean.mean, 4),
        "mean_hw": round(mine.mean.half_width, 4),
        "diff": f"{report.pairs[0].a} - {report.pairs[0].b}",
        "diff_mean": round(diff.mean, 4),
        "diff_hw": round(diff.half_width, 4),
        "illegal": report.illegal_actions,
        "unit": report.unit,
    }
    return row


def table(path: Path) -> str:
    """The runs of ``results.jsonl`` as a markdown table, and the mean per variant over its seeds."""
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    lines = [
        "| game | variant | seed | params | decisions (deals) | epochs | BC CPU s | held-out acc | by phase "
        "| arena CPU s | learner reward | learner − heuristic | illegal |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        acc = r["held_acc"]
        by = ", ".join(f"{k} {v:.1%}" for k, v in acc.items() if k != "all")
        lines.append(
            f"| {r['game']} | {r['variant']} | {r['seed']} | {r['params']:,} | {r['train_decisions']:,} "
            f"({r['train_deals']}) | {r['epochs']} | {r['bc_cpu_s']:.0f} | {acc['all']:.1%} | {by} "
            f"| {r['arena_cpu_s']:.0f} | {r['mean']:+.3f} ± {r['mean_hw']:.3f} "
            f"| {r['diff_mean']:+.3f} ± {r['diff_hw']:.3f} | {r['illegal']} |"
        )
    lines += [
        "",
        "| game | variant | seeds | held-out acc (mean) | by phase (mean) | learner − heuristic (mean of seeds) |",
    ]
    lines.append("|---|---|---|---|---|---|")
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault((r["game"], r["variant"]), []).append(r)
    for (game, variant), rs in groups.items():
        keys = [k for k in rs[0]["held_acc"] if k != "all"]
        by = ", ".join(f"{k} {np.mean([r['held_acc'][k] for r in rs]):.1%}" for k in keys)
        acc = np.mean([r["held_acc"]["all"] for r in rs])
        diff = np.mean([r["diff_mean"] for r in rs])
        lines.append(f"| {game} | {variant} | {len(rs)} | {acc:.1%} | {by} | {diff:+.3f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    import torch

    torch.set_num_threads(1)
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--game", required=True, help="the game id, e.g. German Whist's")
    ap.add_argument("--variants", nargs="+", default=["flat"])
    ap.add_argument("--seeds", nargs="+", type=int, default=[0, 1])
    ap.add_argument("--deals", type=int, default=2000, help="teacher self-play deals for training")
    ap.add_argument("--held-deals", type=int, default=400, help="teacher self-play deals for held-out accuracy")
    ap.add_argument("--epochs", type=int, default=6)
    ap.add_argument("--batch-size", type=int, default=512)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--arena-deals", type=int, default=500)
    ap.add_argument("--arena-seed", type=int, default=1000)
    ap.add_argument("--out", default="runs/features")
    ap.add_argument("--table", action="store_true", help="print <out>/results.jsonl as markdown and exit")
    args = ap.parse_args(argv)
    out = Path(args.out)
    if args.table:
        print(table(out / "results.jsonl"))
        return
    out.mkdir(parents=True, exist_ok=True)
    options = dict(get_spec(args.game).single_deal)
    cache = out / "data"
    train = load_or_generate(cache, args.game, options, deals=args.deals, seed=0, workers=1)
    held = load_or_generate(cache, args.game, options, deals=args.held_deals, seed=99, workers=1)
    for variant in args.variants:
        for seed in args.seeds:
            row = run(args, variant, seed, train, held)
            print(json.dumps(row), flush=True)
            with open(out / "results.jsonl", "a") as f:
                f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
