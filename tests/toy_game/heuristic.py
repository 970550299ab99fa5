"""A rule-based player for the toy ``low_whist_v0``."""

from __future__ import annotations

from whist_env.agents.heuristic import HeuristicAgent
from whist_env.cards import NUM_RANKS, SUIT_MASKS
from whist_env.view import PlayerView


def _lowest(mask: int) -> int:
    """The card of ``mask`` with the lowest rank (the lowest suit among equal ranks)."""
    return min((c for c in range(52) if mask >> c & 1), key=lambda c: (c % NUM_RANKS, c))


def _highest(mask: int) -> int:
    """The card of ``mask`` with the highest rank."""
    return max((c for c in range(52) if mask >> c & 1), key=lambda c: (c % NUM_RANKS, c))


class LowWhistHeuristic(HeuristicAgent):
    """Low cards win, so: lead the lowest card. Following, play the lowest card of the led suit when
    it is below the card winning so far (it wins unless a later seat goes lower), else the highest
    one (the trick is lost: keep the low cards). When void, throw the highest card."""

    game_id = "low_whist_v0"

    def play(self, view: PlayerView) -> int:
        legal = view.legal
        led = view.led_suit
        if led < 0:
            return _lowest(legal)
        if not legal & SUIT_MASKS[led]:
            return _highest(legal)
        winning = min(c for _, c in view.trick if c // NUM_RANKS == led)
        low = _lowest(legal)
        return low if low < winning else _highest(legal)
