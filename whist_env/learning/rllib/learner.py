"""RLlib's PPO learner with a lighter optimizer step and one scan of the batch: :class:`WhistPPOLearner`.

Profiled on German Whist (``docs/results_rllib.md``), RLlib's torch learner spent about a sixth of an iteration on
two things around the optimizer step, not on the step itself: it checks every gradient for ``nan``/``inf`` twice per
minibatch, one ``torch.isfinite(grad).all()`` per parameter each time, and runs Adam's per-parameter loop; and the
batched engine's module scanned every minibatch's observations for their non-zero columns again. This learner
changes these three:

* one check of all gradients at once (their total norm, one fused pass); when it is finite every gradient is, and the
  optimizer steps on them as RLlib's would; when it is not, RLlib's own :meth:`apply_gradients` runs, so ``nan``/``inf``
  gradients are handled exactly as RLlib handles them (by default: set to finite numbers, with a warning);
* Adam's fused implementation (``fused=True``: the same update in one kernel), where torch has it for the parameters;
* for :class:`~whist_env.learning.rllib.module.EngineActorCritic`, the batch's observations scanned for their non-zero
  columns once (:class:`SparseColumns`, a learner connector piece before the advantages are computed), so that the
  value pass and every minibatch's forward pass read them instead of scanning their rows again.

The PPO loss, the learning rate and its schedule, gradient clipping and the connectors are RLlib's. The plain twin is
RLlib's ``PPOTorchLearner`` itself: ``tests/rllib/test_rllib_learner.py`` checks that both give the same parameters
after the same updates, ``nan`` gradients included.
"""

from __future__ import annotations

from typing import Any

from whist_env.learning.rllib import require

require("ray.rllib", "whist_env.learning.rllib.learner")

import torch  # noqa: E402
from ray.rllib.algorithms.ppo.torch.ppo_torch_learner import PPOTorchLearner  # noqa: E402
from ray.rllib.connectors.connector_v2 import ConnectorV2  # noqa: E402
from ray.rllib.connectors.learner import GeneralAdvantageEstimation  # noqa: E402
from ray.rllib.core.columns import Columns  # noqa: E402

from whist_env.learning.rllib.module import COLUMNS, EngineActorCritic  # noqa: E402


class WhistPPOLearner(PPOTorchLearner):
    """RLlib's ``PPOTorchLearner`` with one finiteness check per step, fused Adam and one scan of the batch's
    observations (see the module docstring); set by ``config.learners(learner_class=WhistPPOLearner)``."""

    def build(self) -> None:
        """RLlib's build, then :class:`SparseColumns` into the learner connector, just before the advantages."""
        super().build()
        if self._learner_connector is not None and any(
            isinstance(c, GeneralAdvantageEstimation) for c in self._learner_connector.connectors
        ):
            self._learner_connector.insert_before(GeneralAdvantageEstimation, SparseColumns())

    def configure_optimizers_for_module(self, module_id: Any, config: Any = None) -> None:
        """Adam, as RLlib's default (its hyperparameters; the learning rate from ``config.lr``), fused where torch has
        a fused Adam for every parameter's device and dtype."""
        params = self.get_parameters(self.module[module_id])
        fused = all(p.is_floating_point() and p.device.type in ("cpu", "cuda") for p in params)
        optimizer = torch.optim.Adam(params, fused=fused or None)
        self.register_optimizer(module_id=module_id, optimizer=optimizer, params=params, lr_or_lr_schedule=config.lr)

    def apply_gradients(self, gradients_dict: Any) -> None:
        """Step every optimizer on ``gradients_dict``; RLlib's own method wherever a gradient may not be finite, or a
        gradient scaler or torch learning-rate scheduler is configured."""
        grads = [g for g in gradients_dict.values() if g is not None]
        if self._grad_scalers is not None or self._lr_scheduler_classes is not None or not grads:
            super().apply_gradients(gradients_dict)
            return
        total = torch.nn.utils.get_total_norm(grads, foreach=True)
        if not bool(torch.isfinite(total)):
            super().apply_gradients(gradients_dict)
            return
        for pid, grad in gradients_dict.items():
            self._params[pid].grad = grad
        for module_id, names in self._module_optimizers.items():
            for name in names:
                self.get_optimizer(module_id, name).step()


class SparseColumns(ConnectorV2):
    """A learner connector piece: for every :class:`~whist_env.learning.rllib.module.EngineActorCritic` module, the
    batch's observations as the padded columns of their non-zero entries (``obs["columns"]``,
    :meth:`whist_env.learning.net.SparseRows.of`; observations with other values than 0 and 1 get none). RLlib's
    minibatches slice it with the rest of the batch, and the module reads it instead of scanning its rows."""

    def __call__(self, *, rl_module: Any, batch: dict[str, Any], episodes: Any, **kwargs: Any) -> Any:
        from whist_env.learning.net import SparseRows

        for module_id, module_batch in batch.items():
            obs = module_batch.get(Columns.OBS) if isinstance(module_batch, dict) else None
            if not isinstance(obs, dict) or not isinstance(rl_module[module_id], EngineActorCritic):
                continue
            observation = obs["observation"]
            rows = SparseRows.of(observation if isinstance(observation, torch.Tensor) else torch.as_tensor(observation))
            if rows.vals is None:
                obs[COLUMNS] = rows.cols
        return batch
