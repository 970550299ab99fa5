"""Observation encodings: declared layouts, and one encoder per game."""
