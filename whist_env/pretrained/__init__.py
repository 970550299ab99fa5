"""Pretrained weights shipped with the package: ``<game_id>.npz`` beside its model card ``<game_id>.md``.

Read by :mod:`whist_env.agents.pretrained` (``make_agent("pretrained", game_id)``) with
:mod:`importlib.resources`; the format is described there, the model card in ``docs/model_card_template.md``.
Every game ships one (``training/ship.py`` wrote them from each config's seed-0 run).
"""
