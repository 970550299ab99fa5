"""Slow, readable reference encoders, one module per game, to check the fast bit-table encoders against.

Each reference encoder takes the game's rules object (what its fast encoder is built from) and turns a
:class:`~whist_env.view.PlayerView` into the same float32 vector with plain loops over cards and seats,
one named piece at a time (:meth:`ReferenceTrickEncoder.pieces`). They import neither the fast encoders
nor their bit tables, and are meant for tests and for reading, not for training: they are hundreds of
times slower.
"""
