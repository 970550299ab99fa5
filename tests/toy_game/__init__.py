"""A toy variant added by following docs/adding_a_game.md: Low Whist, four players, no trump, the
lowest card of the led suit wins the trick (a rule hook: :meth:`TrickGame.trick_winner`).

Not part of the package: it checks that a game can be added with a rules module, an encoder, a
heuristic, a spec and a registry line, and nothing else.
"""
