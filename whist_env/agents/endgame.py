"""An exact solver for small two-player endings with both hands known (double dummy).

Used by the heuristics of the two-player games once a seat knows the opponent's whole hand (Humbug
in open-table mode, German Whist's second phase with recall) and few cards are left: it finds the
card that takes the most tricks from here against the best defence. Cards that lie next to each other
in a suit among the cards still in play are interchangeable, so only one of each run is tried; the
values of positions at trick boundaries are memoised.

Two implementations give the same answers: :func:`solve`, plain Python and the reference, and
:func:`solve_fast`, which the heuristics call: the same search compiled with numba
(:mod:`whist_env.agents.endgame_jit`) when numba is installed (the ``search`` extra), else :func:`solve`
itself. Which one is decided once, at the first ending solved; numba is never imported before that.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

from whist_env.cards import NUM_RANKS, SUIT_MASKS, cards_of
from whist_env.rules.tricks import beats, legal_cards

# Solve exactly once each hand holds at most this many cards (a few milliseconds at most).
ENDGAME_CARDS = 7
# The compiled solve memoises 2 << m values for m cards in play: endings larger than this go to the plain one.
FAST_MAX_CARDS = 20


def representatives(choice: int, in_play: int) -> list[int]:
    """One card of each run of ``choice`` whose members no other card of ``in_play`` separates."""
    out = []
    for c in cards_of(choice):
        if c % NUM_RANKS:
            lower = in_play & SUIT_MASKS[c // NUM_RANKS] & ((1 << c) - 1)
            if lower and (choice >> (lower.bit_length() - 1)) & 1:
                continue  # the next lower card in play is ours too: the same card for the play
        out.append(c)
    return out


@lru_cache(maxsize=1 << 18)
def lead_value(leader: int, follower: int, trump: int) -> int:
    """Tricks the leader takes from here with best play by both (``trump`` = -1 for none)."""
    remaining = leader.bit_count()
    if remaining == 0:
        return 0
    t = None if trump < 0 else trump
    in_play = leader | follower
    best = -1
    for c in representatives(leader, in_play):
        worst = remaining
        rest_l = leader & ~(1 << c)
        for d in representatives(legal_cards(follower, c // NUM_RANKS), in_play):
            rest_f = follower & ~(1 << d)
            if beats(d, c, t):
                v = remaining - 1 - lead_value(rest_f, rest_l, trump)
            else:
                v = 1 + lead_value(rest_l, rest_f, trump)
            if v < worst:
                worst = v
                if worst <= best:
                    break
        if worst > best:
            best = worst
            if best == remaining:
                break
    return best


def solve(mine: int, theirs: int, trump: int | None, led: int = -1) -> tuple[int, int]:
    """The best card for me and the tricks it takes from here (this trick included).

    Args:
        mine: my hand.
        theirs: the opponent's hand (after its lead, when it led).
        trump: trump suit or None.
        led: the card the opponent led to this trick, or -1 when I lead.
    """
    t = -1 if trump is None else trump
    in_play = mine | theirs | (1 << led if led >= 0 else 0)
    if led < 0:
        best_card, best = -1, -1
        for c in representatives(mine, in_play):
            rest = mine & ~(1 << c)
            worst = mine.bit_count()
            for d in representatives(legal_cards(theirs, c // NUM_RANKS), in_play):
                after = theirs & ~(1 << d)
                if beats(d, c, trump):
                    v = mine.bit_count() - 1 - lead_value(after, rest, t)
                else:
                    v = 1 + lead_value(rest, after, t)
                worst = min(worst, v)
            if worst > best:
                best_card, best = c, worst
        return best_card, best
    best_card, best = -1, -1
    remaining = mine.bit_count() - 1
    for d in representatives(legal_cards(mine, led // NUM_RANKS), in_play):
        rest = mine & ~(1 << d)
        if beats(d, led, trump):
            v = 1 + lead_value(rest, theirs, t)
        else:
            v = remaining - lead_value(theirs, rest, t)
        if v > best:
            best_card, best = d, v
    return best_card, best


# The compiled solve once looked up (None: not yet); ``solve`` itself where numba is missing or disabled.
_kernel: Callable[[int, int, int, int], tuple[int, int]] | None = None


def _find_kernel() -> Callable[[int, int, int, int], tuple[int, int]]:
    """The compiled solve when numba is installed and its JIT is on, else a wrapper of :func:`solve`."""
    global _kernel
    _kernel = _plain_kernel
    try:
        import numba
    except ImportError:  # the ``search`` extra is not installed
        return _kernel
    # With NUMBA_DISABLE_JIT the kernel would run as Python, slower than the memoised plain solve.
    if not numba.config.DISABLE_JIT:  # type: ignore[attr-defined]
        from whist_env.agents import endgame_jit

        _kernel = endgame_jit.solve
    return _kernel


def prefer_plain() -> None:
    """Solve endings with the plain :func:`solve` in this process from now on: the same cards, no numba.

    For a short-lived process (a bot of the classroom arena plays a hundred deals or so), importing numba and loading
    the compiled kernel from its cache costs about 0.6 s of CPU, more than a hundred deals of plain solves (0.14 s for
    one seat of German Whist on the 2-core dev machine).
    """
    global _kernel
    _kernel = _plain_kernel


def _plain_kernel(mine: int, theirs: int, trump: int, led: int) -> tuple[int, int]:
    return solve(mine, theirs, None if trump < 0 else trump, led)


def solve_fast(mine: int, theirs: int, trump: int | None, led: int = -1) -> tuple[int, int]:
    """Exactly :func:`solve` (the same card, the same value), compiled when numba is installed.

    The heuristics call it as ``endgame.solve_fast``, so a test or a benchmark can swap in the plain
    :func:`solve` by setting that attribute. Endings with more than :data:`FAST_MAX_CARDS` cards in
    play (none that the heuristics solve) go to :func:`solve`.
    """
    kernel = _kernel or _find_kernel()
    if (mine | theirs).bit_count() + (led >= 0) > FAST_MAX_CARDS:
        return solve(mine, theirs, trump, led)
    return kernel(mine, theirs, -1 if trump is None else trump, led)
