"""Experiments whose results are recorded in docs/ (not part of the training pipeline)."""
