"""One module per game, each defining ``SPEC``, the game's :class:`~whist_env.spec.GameSpec`.

The registry (:mod:`whist_env.registry`) imports a game's module on first use.
"""
