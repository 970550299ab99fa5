"""Shared pytest configuration. Reusable helpers (random play, the option grid) live in ``whist_env.testing``."""
