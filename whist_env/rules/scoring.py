"""Scoring arithmetic shared by several games: game values and rubbers (RULES.md §1.7, §2.3, §2.4)."""

from __future__ import annotations

from collections.abc import Sequence

from whist_env.cards import NUM_RANKS, SUIT_MASKS

HONOUR_RANKS = 0b1111 << 9  # J Q K A within a suit's 13 rank bits


def trick_points(tricks: int, book: int = 6) -> int:
    """Points for taking ``tricks``: one per trick over the book of six, never negative (§1.6, §2.3)."""
    return tricks - book if tricks > book else 0


def game_value(loser_points: int) -> int:
    """Rubber points of a won game, set by the loser's game points when the game ends (§1.7).

    Loser 0 → 3 (treble), 1–2 → 2 (double), 3 or more → 1 (single). "3 or more" covers a loser
    that reached the target on honours alone (§1.7 edge case, [DESIGN]).
    """
    if loser_points <= 0:
        return 3
    if loser_points <= 2:
        return 2
    return 1


RUBBER_BONUS = 2
GAMES_TO_WIN_RUBBER = 2


def rubber_margin(game_values_won: Sequence[int], game_values_lost: Sequence[int]) -> int:
    """Rubber result for the winner: its game values plus the rubber bonus minus the loser's (§1.7).

    Always in [1, 8] for a rubber won 2–0 or 2–1.
    """
    return sum(game_values_won) + RUBBER_BONUS - sum(game_values_lost)


def honours_in(hand: int, trump: int) -> int:
    """Trump honours (A K Q J) in a hand (a card mask) (§1.6, §2.4)."""
    return ((hand & SUIT_MASKS[trump]) >> (NUM_RANKS * trump) & HONOUR_RANKS).bit_count()


def honour_points(num_honours: int) -> int:
    """Points for trump honours (A K Q J) held: four → 4, three → 2, otherwise 0 (§1.6, §2.4)."""
    if num_honours >= 4:
        return 4
    if num_honours == 3:
        return 2
    return 0
