"""Environment layer: PettingZoo AEC environments over the rules (and, later, single-agent wrappers)."""
