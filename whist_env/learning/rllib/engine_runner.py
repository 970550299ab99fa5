"""An RLlib env runner that samples the batched engine's league in whole batches: :class:`EngineEnvRunner`.

RLlib's ``SingleAgentEnvRunner`` can step :class:`~whist_env.learning.rllib.engine_env.EngineLeagueEnv` as it is (the
env is a
``gymnasium.vector.VectorEnv``), but it then does Python work per table and per step: it unbatches each observation,
appends it to that table's episode, runs its connectors over every episode and calls the callbacks. Measured on this
machine, that was about 0.4 ms per decision, twenty times what the engine and the league take
(``docs/results_rllib.md``). This runner keeps RLlib's module, weights, metrics and episode format, and changes how it
collects:

* one forward pass of the module per step of all tables (``forward_exploration``: actions sampled from the masked
  logits; ``forward_inference``: the argmax), the env's same-step autoreset so that every table decides at every step;
* the step's arrays written into one ``(T, B, ...)`` block;
* at the end, each table's stretch of the block cut into ``SingleAgentEpisode`` chunks at once (numpy'ized, with
  the action log-probabilities and distribution inputs PPO's learner reads), an unfinished episode continued under its
  id by the next ``sample()``, as RLlib's own runner does.

Only ``sample(num_timesteps=...)`` (RLlib's ``truncate_episodes`` batch mode, PPO's) and ``sample(num_episodes=...)``
are served; connectors other than RLlib's defaults are not run (the config builds none). The episode metrics RLlib
logs (return, length) and the league's (:mod:`whist_env.learning.rllib.callbacks`: main's return per seat and per kind
of table) are logged here.
"""

from __future__ import annotations

import gc
from typing import Any

import numpy as np

from whist_env.learning.rllib import require

require("ray.rllib", "whist_env.learning.rllib.engine_runner")

import torch  # noqa: E402
from ray.rllib.core import DEFAULT_MODULE_ID  # noqa: E402
from ray.rllib.core.columns import Columns  # noqa: E402
from ray.rllib.env.single_agent_env_runner import SingleAgentEnvRunner  # noqa: E402
from ray.rllib.env.single_agent_episode import SingleAgentEpisode  # noqa: E402
from ray.rllib.env.utils.infinite_lookback_buffer import InfiniteLookbackBuffer  # noqa: E402
from ray.rllib.utils.metrics import WEIGHTS_SEQ_NO  # noqa: E402

from whist_env.learning.rllib.callbacks import log_main_episode  # noqa: E402
from whist_env.learning.rllib.engine_env import EngineLeagueEnv  # noqa: E402


class EngineEnvRunner(SingleAgentEnvRunner):
    """Samples :class:`~whist_env.learning.rllib.engine_env.EngineLeagueEnv` batched (see the module docstring); built
    by RLlib
    from ``config.env_runners(env_runner_cls=EngineEnvRunner)`` with the env's config as ``env_config``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """RLlib's runner; then what it built (Ray, torch, RLlib, the module, the env: about 450,000 objects, all
        kept until the runner stops) is frozen out of Python's cyclic garbage collector, whose full collections took
        about 0.2 s each (13 ms frozen) and fell in one ``sample()`` of 5 to 10, doubling it."""
        super().__init__(*args, **kwargs)
        gc.collect()
        gc.freeze()

    def make_env(self) -> None:
        """The league env of ``num_envs_per_env_runner`` tables, same-step autoreset (every table decides at every
        step)."""
        cfg = dict(self.config.env_config)
        cfg.update(num_envs=self.config.num_envs_per_env_runner, autoreset_mode="SameStep")
        self.env = EngineLeagueEnv(cfg)  # type: ignore[assignment]
        self.num_envs = self.env.num_envs
        self._needs_initial_reset = True
        self._obs: dict[str, np.ndarray] | None = None
        self._chunk_start = np.zeros(self.num_envs, np.int64)  # each table's episode: its steps before this sample()
        self._returns = np.zeros(self.num_envs, np.float64)  # ... and its return so far
        self._ids = [""] * self.num_envs

    def _sample(  # type: ignore[override]
        self,
        *,
        num_timesteps: int | None = None,
        num_episodes: int | None = None,
        explore: bool,
        random_actions: bool = False,
        force_reset: bool = False,
    ) -> list[SingleAgentEpisode]:
        env = self.env
        assert isinstance(env, EngineLeagueEnv)
        b = self.num_envs
        if force_reset or num_episodes is not None or self._needs_initial_reset or self._obs is None:
            self._obs, _ = env.reset(seed=self._seed if self._needs_initial_reset else None)
            self._needs_initial_reset = False
            self._chunk_start[:] = 0
            self._returns[:] = 0.0
            self._ids = [_new_id() for _ in range(b)]
        obs_size = self._obs["observation"].shape[1]
        a = env.num_actions
        steps = -(-num_timesteps // b) if num_timesteps is not None else None
        cap = steps if steps is not None else 64
        block = _Block(cap, b, obs_size, a)
        block.put_obs(0, self._obs)
        done_total = 0
        t = 0
        while (t < steps) if steps is not None else (done_total < num_episodes):  # type: ignore[operator]
            if t >= block.cap:
                block.grow()
            acts, logp, dist = self._act(self._obs, explore, random_actions)
            obs, reward, terminated, _, infos = env.step(acts)
            block.put_step(t, acts, logp, dist, reward, terminated)
            if terminated.any():
                block.put_final(t, terminated, infos)
                done_total += int(terminated.sum())
            block.put_obs(t + 1, obs)
            self._obs = obs
            t += 1
        episodes = self._episodes(block, t)
        if num_episodes is not None:
            self._needs_initial_reset = True
        self._increase_sampled_metrics(t * b, done_total)
        return episodes

    def _act(
        self, obs: dict[str, np.ndarray], explore: bool, random_actions: bool
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The actions of every table, their log-probabilities and the distribution inputs (masked logits).

        The module's ``_forward_exploration`` / ``_forward_inference`` are called as RLlib's ``forward_exploration``
        calls them, in eval mode (set once here, instead of RLlib's switching every module to eval and back to train
        on every call); actions are drawn from the softmax of the logits with ``torch.multinomial``, as torch's
        ``Categorical`` draws them, without building the distribution object."""
        batch = {Columns.OBS: {k: torch.from_numpy(v) for k, v in obs.items()}}
        module: Any = self.module
        if module.training:
            module.eval()
        with torch.no_grad():
            if random_actions:
                mask = batch[Columns.OBS]["action_mask"]
                out = {Columns.ACTION_DIST_INPUTS: torch.where(mask > 0, 0.0, -1e9)}
            elif explore:
                out = module._forward_exploration(batch)
            else:
                out = module._forward_inference(batch)
            logits = out[Columns.ACTION_DIST_INPUTS].float()
            logp_all = torch.log_softmax(logits, dim=1)
            if explore or random_actions:
                acts = torch.multinomial(logp_all.exp(), 1, True).squeeze(1)
            else:
                acts = logits.argmax(dim=1)
            logp = logp_all.gather(1, acts[:, None]).squeeze(1)
        return acts.numpy(), logp.numpy(), logits.numpy()

    def _episodes(self, block: _Block, steps: int) -> list[SingleAgentEpisode]:
        """Cut each table's stretch of ``block`` (``steps`` steps) into episode chunks; log the finished ones."""
        out: list[SingleAgentEpisode] = []
        for j in range(self.num_envs):
            start = 0
            for end in np.flatnonzero(block.terminated[:steps, j]).tolist():
                out.append(self._chunk(block, j, start, end, True))
                ret = float(self._returns[j] + block.reward[start : end + 1, j].sum())
                self._log_finished(end + 1 - start + int(self._chunk_start[j]), ret, block.table[end][j])
                self._chunk_start[j], self._returns[j], self._ids[j] = 0, 0.0, _new_id()
                start = end + 1
            if start < steps:  # the episode goes on in the next sample(), under the same id
                out.append(self._chunk(block, j, start, steps - 1, False))
                self._returns[j] += float(block.reward[start:steps, j].sum())
                self._chunk_start[j] += steps - start
        return out

    def _chunk(self, block: _Block, j: int, start: int, end: int, finished: bool) -> SingleAgentEpisode:
        """Table ``j``'s steps ``start..end`` as a numpy'ized episode chunk."""
        span = slice(start, end + 1)
        last = block.final_obs[end, j] if finished else block.obs[end + 1, j]
        last_mask = block.final_mask[end, j] if finished else block.mask[end + 1, j]
        observations = {
            "observation": np.concatenate([block.obs[span, j], last[None]]),
            "action_mask": np.concatenate([block.mask[span, j], last_mask[None]]),
        }
        n = end + 1 - start
        space = self.env.single_observation_space  # type: ignore[union-attr]
        return SingleAgentEpisode(
            id_=self._ids[j],
            observations=InfiniteLookbackBuffer(observations, 0),  # type: ignore[arg-type]  # a dict of arrays
            observation_space=space,
            infos=InfiniteLookbackBuffer([{} for _ in range(n + 1)], 0),
            actions=InfiniteLookbackBuffer(block.action[span, j].copy(), 0),
            action_space=self.env.single_action_space,  # type: ignore[union-attr]
            rewards=InfiniteLookbackBuffer(block.reward[span, j].copy(), 0),
            terminated=finished,
            extra_model_outputs={
                Columns.ACTION_LOGP: InfiniteLookbackBuffer(block.logp[span, j].copy(), 0),
                Columns.ACTION_DIST_INPUTS: InfiniteLookbackBuffer(block.dist[span, j].copy(), 0),
                WEIGHTS_SEQ_NO: InfiniteLookbackBuffer(np.full(n, self._weights_seq_no, np.int64), 0),
            },
            t_started=int(self._chunk_start[j]),
            len_lookback_buffer=0,
            module_id=DEFAULT_MODULE_ID,
        )

    def _log_finished(self, length: int, ret: float, table: Any) -> None:
        """RLlib's episode metrics and the league's for a finished episode."""
        self._log_episode_metrics(length, ret, 0.0)
        log_main_episode(self.metrics, ret, table)


class _Block:
    """The arrays of one ``sample()``: per step and table, what the episodes are cut from."""

    def __init__(self, cap: int, b: int, d: int, a: int) -> None:
        self.cap = cap
        self.obs = np.zeros((cap + 1, b, d), np.uint8)
        self.mask = np.zeros((cap + 1, b, a), np.int8)
        self.action = np.zeros((cap, b), np.int64)
        self.logp = np.zeros((cap, b), np.float32)
        self.dist = np.zeros((cap, b, a), np.float32)
        self.reward = np.zeros((cap, b), np.float32)
        self.terminated = np.zeros((cap, b), np.bool_)
        self.final_obs = np.zeros((cap, b, d), np.uint8)
        self.final_mask = np.zeros((cap, b, a), np.int8)
        self.table: list[Any] = [None] * cap

    def grow(self) -> None:
        """Double the steps it holds (``sample(num_episodes=...)`` does not know them in advance)."""
        for name in ("obs", "mask", "action", "logp", "dist", "reward", "terminated", "final_obs", "final_mask"):
            arr = getattr(self, name)
            setattr(self, name, np.concatenate([arr, np.zeros_like(arr[: self.cap])]))
        self.table += [None] * self.cap
        self.cap *= 2

    def put_obs(self, t: int, obs: dict[str, np.ndarray]) -> None:
        self.obs[t] = obs["observation"]
        self.mask[t] = obs["action_mask"]

    def put_step(self, t: int, acts: Any, logp: Any, dist: Any, reward: Any, terminated: Any) -> None:
        self.action[t], self.logp[t], self.dist[t] = acts, logp, dist
        self.reward[t], self.terminated[t] = reward, terminated

    def put_final(self, t: int, terminated: np.ndarray, infos: dict[str, Any]) -> None:
        self.final_obs[t][terminated] = infos["final_obs"][terminated]
        self.table[t] = infos["table"]


def _new_id() -> str:
    import uuid

    return uuid.uuid4().hex
