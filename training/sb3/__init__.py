"""The sb3 trainer: sb3-contrib's MaskablePPO on the AEC env's single-agent wrapper (``trainer: sb3``)."""
