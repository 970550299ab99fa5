"""The ppo trainer: masked PPO on the batched engine (``trainer: ppo``; the main job's)."""
