"""One object per game: :class:`GameSpec` holds everything the layers above the rules need to know about a game.

Every layer (the PettingZoo face, agents, search, evaluation, play, training) reads a game's facts from its
spec, found by id in :mod:`whist_env.registry`; none of them branches on a game's id. A spec lives beside the
game's rules in ``whist_env/games/<name>.py`` as ``SPEC``.

This module sits at the lowest floor of the package: at import it needs only the standard library and
:mod:`whist_env.errors`, so that the registry (and through it ``import whist_env``) stays cheap; the types it
names are imported for type checking only.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from whist_env.errors import OptionError

if TYPE_CHECKING:
    from whist_env.agents.heuristic import HeuristicAgent
    from whist_env.encoding.trick import TrickEncoder
    from whist_env.rules.core import State, TrickGame

# A spec is generic over its game's rules class and state class, so that a game's own functions in its spec
# (encoder factory, hidden masks, stock) take its own types, with no downcasts.
G = TypeVar("G", bound="TrickGame[Any]")
S = TypeVar("S", bound="State")

# options -> (side of each seat, whether each trick of the deal counts, whether suit must be followed in it)
SearchRules = Callable[[Mapping[str, Any]], tuple[tuple[int, ...], tuple[bool, ...], tuple[bool, ...]]]


def sides_of(num_players: int, partner_offset: int | None) -> tuple[int, ...]:
    """The side of each seat: seats ``partner_offset`` apart play together; without partnerships each seat is
    its own side.

    Args:
        num_players: seats at the table.
        partner_offset: ``seat + partner_offset`` is the partner (classic whist: 2), or None.

    Returns:
        ``sides[seat]``, numbered from 0 in seat order (classic whist: ``(0, 1, 0, 1)``).
    """
    if partner_offset is None:
        return tuple(range(num_players))
    return tuple(seat % partner_offset for seat in range(num_players))


def _no_hidden_masks(state: Any) -> list[int]:
    """The hidden masks of a game whose ``state()`` holds only the hands."""
    return []


@dataclass(frozen=True, kw_only=True)
class SearchSpec(Generic[S]):
    """What the double-dummy solver and PIMC need to search a game's card play.

    Attributes:
        max_tricks: PIMC's default search depth: it searches with at most this many tricks left in the deal
            (chosen so that a decision stays within tens of milliseconds; ``docs/results_search.md``).
        rules: ``options -> (sides, counts, follow)``: the side of each seat, and per trick of the deal
            whether it counts and whether suit must be followed.
        draws: for a game with a stock: ``(stock still on the table, face-up card first, trick number) ->``
            the ``(winner's card, loser's card)`` drawn after each trick of the deal (``(-1, -1)``: none).
        table_stock: for a game with a stock: the stock still on the table in a rules state, in order,
            face-up card first (what ``draws`` takes).
    """

    max_tricks: int
    rules: SearchRules
    draws: Callable[[Sequence[int], int], tuple[tuple[int, int], ...]] | None = None
    table_stock: Callable[[S], tuple[int, ...]] | None = None


@dataclass(frozen=True, kw_only=True)
class GameSpec(Generic[G, S]):
    """Everything a game is, for the layers above its rules.

    Attributes:
        game_id: the environment id (``"german_whist_v0"``); equals ``rules_cls.game_id``.
        rules_cls: the rules class.
        make_encoder: the observation encoder for a rules object (its options can change the layout).
        hidden_pieces: the card sets of ``state()`` beyond the hands (blinds, stock, ...): ``(name, doc)``.
        hidden_masks: the masks of ``hidden_pieces`` for a state, in order.
        heuristic: ``"module:Class"`` of the rule-based agent (imported on first use).
        single_deal: the options that make an episode one deal (the arena's unit of comparison).
        unit: what one arena sample is, in words.
        partner_offset: seats this far apart are partners (classic whist: 2); None: no partnerships.
        search: what the solver and PIMC need; None: the solver does not cover the game.
        option_grid: option sets the conformance tests run (together they should take every value of
            every option).
    """

    game_id: str
    rules_cls: type[G]
    make_encoder: Callable[[G], TrickEncoder]
    hidden_pieces: tuple[tuple[str, str], ...] = ()
    hidden_masks: Callable[[S], list[int]] = _no_hidden_masks
    heuristic: str
    single_deal: Mapping[str, Any]
    unit: str
    partner_offset: int | None = None
    search: SearchSpec[S] | None = None
    option_grid: tuple[Mapping[str, Any], ...] = ({},)

    def __post_init__(self) -> None:
        if self.rules_cls.game_id != self.game_id:
            raise OptionError(
                f"GameSpec {self.game_id!r}: its rules class {self.rules_cls.__name__} has game_id "
                f"{self.rules_cls.game_id!r}; the two must be equal"
            )
        if ":" not in self.heuristic:
            raise OptionError(f"GameSpec {self.game_id!r}: heuristic must be 'module:Class', got {self.heuristic!r}")

    def sides(self, num_players: int) -> tuple[int, ...]:
        """The side index of each seat (partners share one; see :func:`sides_of`)."""
        return sides_of(num_players, self.partner_offset)

    def make_rules(self, **options: Any) -> G:
        """The rules object for ``options``.

        Raises:
            OptionError: for an unknown option or a bad value, naming what is allowed.
        """
        return self.rules_cls(**options)

    def heuristic_cls(self) -> type[HeuristicAgent]:
        """The rule-based agent class (its module is imported now)."""
        module_name, cls_name = self.heuristic.split(":")
        cls: type[HeuristicAgent] = getattr(importlib.import_module(module_name), cls_name)
        return cls
