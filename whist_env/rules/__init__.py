"""Pure game logic: the trick core and one module per game. No gymnasium, pettingzoo or torch."""
