"""Classic partnership whist (RULES.md §2): every part of the game in this folder.

``rules`` (the rulebook section as code), ``encoding`` (the observation) and ``reference`` (its plain twin),
``heuristic`` (the rule-based agent), ``spec`` (``SPEC``: what the other layers read), ``engine`` (the batched
numba engine) and ``engine_heuristic`` (the heuristic on the engine's state), ``pretrained.npz`` with its
``model_card.md``. ``whist_env/classic_whist_v0.py`` is the PettingZoo face.
"""
