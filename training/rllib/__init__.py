"""The rllib trainer: multi-agent self-play with Ray RLlib's PPO (``trainer: rllib``)."""
