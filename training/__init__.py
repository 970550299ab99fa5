"""Training scripts and their reusable pieces (config, callbacks, checkpoints, evaluation, reports)."""
