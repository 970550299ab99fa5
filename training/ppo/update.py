"""PPO's update in ``ppo_vec`` (``training/ppo/loop.py``'s loop): ``n_epochs`` passes of minibatch PPO over one
rollout, with sb3's loss (the clipped objective on advantages normalised per minibatch, the value's mean squared
error, an entropy bonus, gradient clipping) and its linear learning-rate schedule."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from training.config import PPOVecConfig


def ppo_update(
    config: PPOVecConfig,
    model: Any,
    optimizer: Any,
    batch: dict[str, Any],
    rng: np.random.Generator,
    num_timesteps: int,
) -> dict[str, float]:
    """``n_epochs`` passes of minibatch PPO over one rollout (:func:`training.ppo.rollout.collect_rollout`'s
    ``batch``), the minibatches drawn with ``rng``; with ``lr_schedule: linear`` the learning rate first set for
    ``num_timesteps`` of ``total_timesteps``. Returns the mean losses, entropy, approximate KL and clip fraction."""
    import torch

    c = config
    if c.lr_schedule == "linear":
        frac = max(1.0 - num_timesteps / c.total_timesteps, 0.0)
        for group in optimizer.param_groups:
            group["lr"] = c.learning_rate * frac
    n = batch["act"].shape[0]
    device = batch["act"].device
    stats: dict[str, list[float]] = {k: [] for k in ("policy_loss", "value_loss", "entropy", "approx_kl", "clip")}
    for _ in range(c.n_epochs):
        order = torch.as_tensor(rng.permutation(n), device=device)
        for start in range(0, n, c.batch_size):
            idx = order[start : start + c.batch_size]
            logits, values = model(batch["obs"][idx], batch["mask"][idx])
            log_probs = torch.log_softmax(logits, -1)
            logp = log_probs.gather(1, batch["act"][idx][:, None]).squeeze(1)
            ratio = torch.exp(logp - batch["logp"][idx])
            adv = batch["adv"][idx]
            adv = (adv - adv.mean()) / (adv.std() + 1e-8)
            policy_loss = -torch.min(adv * ratio, adv * ratio.clamp(1 - c.clip_range, 1 + c.clip_range)).mean()
            value_loss = torch.nn.functional.mse_loss(values, batch["ret"][idx])
            # masked entropy: an illegal action's probability underflows to exactly 0, so it adds 0 * finite
            entropy = -(log_probs.exp() * log_probs).sum(-1).mean()
            loss = policy_loss - c.ent_coef * entropy + c.vf_coef * value_loss
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), c.max_grad_norm)
            optimizer.step()
            with torch.no_grad():
                log_ratio = logp - batch["logp"][idx]
                stats["approx_kl"].append(float(((ratio - 1) - log_ratio).mean()))
                stats["clip"].append(float(((ratio - 1).abs() > c.clip_range).float().mean()))
            stats["policy_loss"].append(policy_loss.item())
            stats["value_loss"].append(value_loss.item())
            stats["entropy"].append(entropy.item())
    return {k: float(np.mean(v)) for k, v in stats.items()}
