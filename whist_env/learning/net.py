"""The learner's network on the engine's observations and its kernels: the actor-critic with sparse first layers
(numba gathers of the observation's non-zero columns, forward and backward), its numpy copy (the shipped agents'
format) and the exporter. Needs torch (imported when a function is called).

``training/ppo/trainer.py`` (the trainer), ``training/ppo/warm_start.py`` (its warm start) and the RLlib module of the
batched engine (:class:`whist_env.learning.rllib.module.EngineActorCritic`) all build on it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from whist_env.vector.core import jit_borrow_inline

ILLEGAL_LOGIT = -1e8
"""The logit of an illegal action: its probability is exactly 0 in float32, and no ``inf - inf`` NaN can arise."""


class SparseRows:
    """A batch of observations ``(k, D)`` as the columns of its non-zero entries, padded: ``cols`` ``(k, K)`` (pad:
    ``D``, which indexes an all-zero weight row) and their values ``vals`` ``(k, K)`` (None when every non-zero
    entry is 1, as in the ``uint8`` observations of the five games)."""

    def __init__(self, cols: Any, vals: Any) -> None:
        self.cols = cols
        self.vals = vals

    @classmethod
    def of(cls, obs: Any) -> SparseRows:
        """The sparse rows of a dense observation tensor ``(k, D)`` (any dtype).

        A binary ``float32`` or ``uint8`` batch on the CPU is scanned by a numba kernel (:func:`_scan_columns`, one
        pass over the rows, about 8 times faster than the torch ops below on a learner's minibatch); anything else,
        and a batch with other values than 0 and 1, goes through :meth:`of_torch`, its plain twin (tested equal)."""
        import torch

        if obs.device.type == "cpu" and obs.dtype in (torch.float32, torch.uint8) and obs.dim() == 2:
            k, d = obs.shape
            cols = np.empty((k, max(d, 1)), np.int64)
            counts = np.empty(k, np.int64)
            if _kernel("scan", _scan_columns)(obs.contiguous().numpy(), cols, counts):
                width = max(int(counts.max()) if k else 0, 1)
                return cls(torch.from_numpy(np.ascontiguousarray(cols[:, :width])), None)
        return cls.of_torch(obs)

    @classmethod
    def of_torch(cls, obs: Any) -> SparseRows:
        """:meth:`of` in torch ops alone (any dtype, any device; the plain twin of the numba scan)."""
        import torch

        k, d = obs.shape
        rows, cols = obs.nonzero(as_tuple=True)
        counts = torch.bincount(rows, minlength=k)
        width = max(int(counts.max()) if k else 0, 1)
        starts = counts.cumsum(0) - counts
        pos = torch.arange(len(rows), device=obs.device) - starts.repeat_interleave(counts)
        padded = torch.full((k, width), d, dtype=torch.int64, device=obs.device)
        padded[rows, pos] = cols
        vals = None
        values = obs[rows, cols]
        if obs.dtype.is_floating_point and bool((values != 1).any()):
            vals = torch.zeros((k, width), dtype=torch.float32, device=obs.device)
            vals[rows, pos] = values.float()
        return cls(padded, vals)

    @staticmethod
    def cat(parts: list[SparseRows], d: int) -> SparseRows:
        """The rows of ``parts`` stacked (padded to the widest; ``d``: the observation size, the pad column)."""
        import torch

        width = max(p.cols.shape[1] for p in parts)

        def pad(x: Any, fill: float) -> Any:
            return torch.nn.functional.pad(x, (0, width - x.shape[1]), value=fill)

        cols = torch.cat([pad(p.cols, d) for p in parts])
        if all(p.vals is None for p in parts):
            return SparseRows(cols, None)
        vals = [torch.ones_like(p.cols, dtype=torch.float32) if p.vals is None else p.vals for p in parts]
        return SparseRows(cols, torch.cat([pad(v, 0.0) for v in vals]))

    def to(self, device: Any) -> SparseRows:
        """These rows on ``device`` (themselves when they are there already)."""
        if self.cols.device == device:
            return self
        return SparseRows(self.cols.to(device), None if self.vals is None else self.vals.to(device))

    def __getitem__(self, idx: Any) -> SparseRows:
        return SparseRows(self.cols[idx], None if self.vals is None else self.vals[idx])


@jit_borrow_inline
def _add_rows(acc: np.ndarray, rows: np.ndarray, at: np.ndarray, start: int, stop: int) -> None:
    """``acc += rows[at[i]]`` for ``i`` from ``start`` to ``stop - 1``, in that order, eight rows per pass over
    ``acc`` (``((a + r0) + r1) + ...``: the same additions in the same order as one row at a time, so the same sums to
    the last bit), which loads and stores ``acc`` once per eight rows instead of once per row."""
    h = acc.shape[0]
    i = start
    while i + 8 <= stop:
        r0, r1, r2, r3 = rows[at[i]], rows[at[i + 1]], rows[at[i + 2]], rows[at[i + 3]]
        r4, r5, r6, r7 = rows[at[i + 4]], rows[at[i + 5]], rows[at[i + 6]], rows[at[i + 7]]
        for j in range(h):  # contiguous rows: the compiler vectorises it
            acc[j] = acc[j] + r0[j] + r1[j] + r2[j] + r3[j] + r4[j] + r5[j] + r6[j] + r7[j]
        i += 8
    while i < stop:
        r = rows[at[i]]
        for j in range(h):
            acc[j] += r[j]
        i += 1


def _row_sums(cols: np.ndarray, weight: np.ndarray, out: np.ndarray) -> None:
    """``out[r] = sum of weight[c] over the columns c of row r`` (the pad column, ``len(weight) - 1``, skipped), added
    in the row's order by :func:`_add_rows` (tested bit-equal to one row at a time): 2.6 times faster than one at a
    time on German Whist's minibatches (``docs/results_rllib.md``)."""
    k, width = cols.shape
    pad = weight.shape[0] - 1
    found = np.empty(width, np.int64)
    for r in range(k):
        n = 0
        for i in range(width):
            c = cols[r, i]
            if c != pad:
                found[n] = c
                n += 1
        out[r] = 0.0
        _add_rows(out[r], weight, found, 0, n)


def _row_scatter(cols: np.ndarray, grad_out: np.ndarray, grad_weight: np.ndarray) -> None:
    """``grad_weight[c] += grad_out[r]`` for every column c of every row r, rows in order (the pad column skipped).

    The batch is first grouped by column (a counting sort that keeps the rows' order), then each column's rows are
    added into its gradient row by :func:`_add_rows`, in the same order as row by row (tested bit-equal): 2.1 times
    faster on German Whist's minibatches."""
    k, width = cols.shape
    pad = grad_weight.shape[0] - 1
    start = np.zeros(pad + 2, np.int64)  # column c's rows: at[start[c]:start[c + 1]]
    for r in range(k):
        for i in range(width):
            c = cols[r, i]
            if c != pad:
                start[c + 2] += 1
    for c in range(2, pad + 2):
        start[c] += start[c - 1]
    at = np.empty(start[pad + 1], np.int64)
    for r in range(k):
        for i in range(width):
            c = cols[r, i]
            if c != pad:
                at[start[c + 1]] = r
                start[c + 1] += 1
    for c in range(pad):
        _add_rows(grad_weight[c], grad_out, at, start[c], start[c + 1])


def _scan_columns(obs: np.ndarray, cols: np.ndarray, counts: np.ndarray) -> bool:
    """Write each row's non-zero columns into ``cols`` (``(k, D)``: row ``r``'s first ``counts[r]`` entries, then the
    pad ``D`` up to the widest row, at least one column) and return whether every non-zero entry is 1 (else ``cols``
    is not to be used)."""
    k, d = obs.shape
    binary = True
    width = 0
    for r in range(k):
        n = 0
        for c in range(d):
            v = obs[r, c]
            if v != 0:
                if v != 1:
                    binary = False
                cols[r, n] = c
                n += 1
        counts[r] = n
        width = max(width, n)
    width = max(width, 1)  # as of_torch: at least one column, all pad in an all-zero batch
    for r in range(k):
        for i in range(counts[r], width):
            cols[r, i] = d
    return binary


_kernels: dict[str, Any] = {}


def _kernel(name: str, fn: Any) -> Any:
    """``fn`` compiled by numba (cached on disk, built once per process)."""
    if name not in _kernels:
        from whist_env.vector.core import jit

        _kernels[name] = jit(fn)
    return _kernels[name]


def _bag_function() -> Any:
    """The first layers' sum of weight rows as a torch autograd function on numba kernels (built once).

    torch's ``embedding_bag`` computes the same sums (its plain twin here); on the CPU its backward pass sorts the
    indices of the whole batch to group them by weight row, and that, with its forward pass, was 40% of an update
    (torch profiler). Adding each row's weight rows in order, and scattering the gradient the same way, is about
    2.4 times faster on these batches and gives the same sums (tested).
    """
    if "bag" in _kernels:
        return _kernels["bag"]
    import torch

    row_sums, row_scatter = _kernel("row_sums", _row_sums), _kernel("row_scatter", _row_scatter)

    class RowSums(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, cols: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
            out = torch.empty((cols.shape[0], weight.shape[1]), dtype=weight.dtype)
            row_sums(cols.numpy(), weight.detach().numpy(), out.numpy())
            ctx.save_for_backward(cols)
            ctx.weight_shape = weight.shape
            return out

        @staticmethod
        def backward(ctx: Any, grad_out: torch.Tensor) -> tuple[None, torch.Tensor]:
            (cols,) = ctx.saved_tensors
            grad_weight = torch.zeros(ctx.weight_shape, dtype=grad_out.dtype)
            row_scatter(cols.numpy(), grad_out.contiguous().numpy(), grad_weight.numpy())
            return None, grad_weight

    _kernels["bag"] = RowSums
    return RowSums


def first_layers(rows: SparseRows, weight: Any) -> Any:
    """The first layers' pre-activations of sparse ``rows``: per row, the sum of ``weight``'s rows of its non-zero
    entries (times their values). Binary rows on the CPU go through :func:`_bag_function`'s numba kernels; rows with
    other values, or on another device, through torch's ``embedding_bag``."""
    import torch

    pad = weight.shape[0] - 1
    if rows.vals is None and weight.device.type == "cpu" and weight.dtype == torch.float32:
        return _bag_function().apply(rows.cols.contiguous(), weight)
    return torch.nn.functional.embedding_bag(
        rows.cols, weight, mode="sum", per_sample_weights=rows.vals, padding_idx=pad
    )


def build_actor_critic(obs_size: int, num_actions: int, net_arch: list[int]) -> Any:
    """sb3's ``MlpPolicy`` in plain torch: actor and critic MLPs of ``net_arch`` with ``tanh``, orthogonal init
    (gain sqrt(2) in the hidden layers, 0.01 for the logits, 1 for the value), as ``MaskablePPO`` builds it.

    The two first layers read the same observation and are stored together, transposed, as one ``(D + 1, 2 h)``
    matrix ``first_weight`` (row ``D``: zeros, the padding of :class:`SparseRows`): the fast path
    (:meth:`forward`) sums the rows of an observation's non-zero entries (:func:`first_layers`), whose cost grows with
    the non-zero entries (about 7% of ``D`` in these games) instead of ``D``; the first layers are most of the
    network's arithmetic. :meth:`dense_forward` is its plain twin (a matrix product), the definition it is tested
    against.
    """
    import torch
    from torch import nn

    def linear(n_in: int, n_out: int, gain: float) -> nn.Linear:
        layer = nn.Linear(n_in, n_out)
        nn.init.orthogonal_(layer.weight, gain)
        nn.init.zeros_(layer.bias)
        return layer

    def rest(out: int, gain: float) -> nn.Sequential:
        """The layers after the first one: ``tanh``, then the further hidden layers, then the head."""
        layers: list[nn.Module] = [nn.Tanh()]
        for n_in, n_out in zip(net_arch, net_arch[1:], strict=False):
            layers += [linear(n_in, n_out, float(np.sqrt(2))), nn.Tanh()]
        layers.append(linear(net_arch[-1], out, gain))
        return nn.Sequential(*layers)

    h = net_arch[0]

    class ActorCritic(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            first = [linear(obs_size, h, float(np.sqrt(2))) for _ in range(2)]  # as sb3 initialises each
            weight = torch.cat([f.weight.detach() for f in first]).t()  # (D, 2h)
            self.first_weight = nn.Parameter(torch.cat([weight, torch.zeros(1, 2 * h)]).contiguous())
            self.first_bias = nn.Parameter(torch.zeros(2 * h))
            self.actor_rest = rest(num_actions, 0.01)
            self.critic_rest = rest(1, 1.0)

        def _heads(self, first: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            first = first + self.first_bias
            logits = self.actor_rest(first[:, :h]).masked_fill(~mask, ILLEGAL_LOGIT)
            return logits, self.critic_rest(first[:, h:]).squeeze(-1)

        def forward(self, rows: SparseRows, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            """The masked logits (illegal actions: :data:`ILLEGAL_LOGIT`) and the value of a batch, the fast way."""
            return self._heads(first_layers(rows, self.first_weight), mask)

        def dense_forward(self, obs: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            """:meth:`forward` of dense observations ``(k, D)`` by a matrix product (the plain twin)."""
            return self._heads(obs.float() @ self.first_weight[:obs_size], mask)

        def actor_layers(self) -> list[tuple[torch.Tensor, torch.Tensor]]:
            """The actor's ``(weight (out, in), bias)`` pairs, first layer first, as ``nn.Linear`` stores them."""
            pairs = [(self.first_weight[:obs_size, :h].t(), self.first_bias[:h])]
            pairs += [(m.weight, m.bias) for m in self.actor_rest if isinstance(m, nn.Linear)]
            return pairs

    return ActorCritic()


def numpy_actor(model: Any) -> Any:
    """The actor as the numpy :class:`~whist_env.agents.pretrained.NumpyPolicy` the shipped agents play."""
    from whist_env.agents.pretrained import NumpyPolicy

    arrays = [
        (np.ascontiguousarray(w.detach().cpu().numpy(), np.float32), b.detach().cpu().numpy().astype(np.float32))
        for w, b in model.actor_layers()
    ]
    return NumpyPolicy(arrays[:-1], ["tanh"] * (len(arrays) - 1), arrays[-1])


def export_actor(model: Any, path: Path, game: str, options: dict[str, Any], canonical_suits: bool = False) -> Path:
    """Write the actor as a ``.npz`` in the shipped agents' format, with the game's metadata (the file that
    ``make_agent("pretrained(path=...)", game, **options)`` plays; ``canonical_suits``: it renames the suits as the
    learner did), through the one exporter both trainers use, :func:`whist_env.agents.pretrained.export_policy`."""
    from whist_env.agents.pretrained import export_policy

    return export_policy(numpy_actor(model), path, game, options, canonical_suits=canonical_suits)
