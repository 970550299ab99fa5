"""One object per game: :class:`GameSpec` holds everything the layers above the rules need to know about a game.

Every layer (the PettingZoo face, agents, search, evaluation, play, training) reads a game's facts from its
spec, found by id in :mod:`whist_env.registry`; none of them branches on a game's id. A spec lives in the game's
own folder, ``whist_env/games/<name>/spec.py``, as ``SPEC``, and names every other part of the game there (the
batched engine, its heuristic port, the reference encoder, the shipped weights) as ``"module:name"`` strings that
are imported on first use: nothing finds a part of a game by its file name.

This module sits at the lowest floor of the package: at import it needs only the standard library and
:mod:`whist_env.errors`, so that the registry (and through it ``import whist_env``) stays cheap; the types it
names are imported for type checking only.
"""

from __future__ import annotations

import importlib
import importlib.resources
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from whist_env.errors import OptionError

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

    import numpy as np

    from whist_env.agents.heuristic import HeuristicAgent
    from whist_env.encoding.reference.common import ReferenceTrickEncoder
    from whist_env.encoding.trick import TrickEncoder
    from whist_env.rules.core import State, TrickGame

# The batched heuristic's kernel: (state block, config array, environment indices, out) -> None.
ActKernel = Callable[["np.ndarray", "np.ndarray", "np.ndarray", "np.ndarray"], None]

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


MODEL_CARD = "model_card.md"  # the model card's name beside a game's shipped weights


def load(ref: str) -> Any:
    """The object a ``"module:name"`` string names (its module is imported now)."""
    module_name, attr = ref.split(":")
    return getattr(importlib.import_module(module_name), attr)


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
        open_from: the trick number (from 0) from which a seat with perfect recall knows where every card is
            (German Whist: 13, the stock is gone), so that the solver's value is the deal's exact value under best
            play (what training's ``search_reward: phase1_dd`` pays); None: the hands stay hidden to the end.
    """

    max_tricks: int
    rules: SearchRules
    draws: Callable[[Sequence[int], int], tuple[tuple[int, int], ...]] | None = None
    table_stock: Callable[[S], tuple[int, ...]] | None = None
    open_from: int | None = None


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
        reference: ``"module:Class"`` of the plain reference encoder (a
            :class:`~whist_env.encoding.reference.common.ReferenceTrickEncoder`) that the tests hold the fast
            encoder to; None: the game has none.
        engine: ``"module:Class"`` of the batched numba engine (a :class:`~whist_env.vector.core.RawVectorEnv`
            subclass, loaded by :func:`whist_env.vector.make`: the vector layer builds on the spec, so the spec does
            not name its types); None: the game has no batched engine.
        engine_heuristic: ``"module:function"`` of the heuristic's batched port, ``act_kernel(state, cfg, envs,
            out)`` on the engine's state block; None: not ported.
        pretrained: ``"package:file"`` of the shipped network (an ``.npz`` of
            :func:`~whist_env.agents.pretrained.export_policy`); its model card is ``model_card.md`` in the same
            package. None: no weights are shipped.
        single_deal: the options that make an episode one deal (the arena's unit of comparison).
        unit: what one arena sample is, in words.
        partner_offset: seats this far apart are partners (classic whist: 2); None: no partnerships.
        search: what the solver and PIMC need; None: the solver does not cover the game.
        search_agent: ``"module:Class"`` of the game's own search agent, which the ``pimc`` agent spec builds where the
            solver does not cover the game (Oh Hell's playout search); None: ``pimc`` is the solver's PIMC, or none.
        option_grid: option sets the conformance tests run (together they should take every value of
            every option).
    """

    game_id: str
    rules_cls: type[G]
    make_encoder: Callable[[G], TrickEncoder]
    hidden_pieces: tuple[tuple[str, str], ...] = ()
    hidden_masks: Callable[[S], list[int]] = _no_hidden_masks
    heuristic: str
    reference: str | None = None
    engine: str | None = None
    engine_heuristic: str | None = None
    pretrained: str | None = None
    single_deal: Mapping[str, Any]
    unit: str
    partner_offset: int | None = None
    search: SearchSpec[S] | None = None
    search_agent: str | None = None
    option_grid: tuple[Mapping[str, Any], ...] = ({},)

    def __post_init__(self) -> None:
        if self.rules_cls.game_id != self.game_id:
            raise OptionError(
                f"GameSpec {self.game_id!r}: its rules class {self.rules_cls.__name__} has game_id "
                f"{self.rules_cls.game_id!r}; the two must be equal"
            )
        for name in ("heuristic", "reference", "engine", "engine_heuristic", "pretrained", "search_agent"):
            ref = getattr(self, name)
            if ref is not None and (not isinstance(ref, str) or ref.count(":") != 1):
                raise OptionError(f"GameSpec {self.game_id!r}: {name} must be 'module:name', got {ref!r}")

    @property
    def searchable(self) -> bool:
        """Whether the ``pimc`` agent spec plays this game: the solver covers it, or it has a search of its own."""
        return self.search is not None or self.search_agent is not None

    def sides(self, num_players: int) -> tuple[int, ...]:
        """The side index of each seat (partners share one; see :func:`sides_of`)."""
        return sides_of(num_players, self.partner_offset)

    def make_rules(self, /, **options: Any) -> G:
        """The rules object for ``options``.

        Raises:
            OptionError: for an unknown option or a bad value, naming what is allowed.
        """
        return self.rules_cls.from_options(options)

    def heuristic_cls(self) -> type[HeuristicAgent]:
        """The rule-based agent class (its module is imported now)."""
        cls: type[HeuristicAgent] = load(self.heuristic)
        return cls

    def reference_cls(self) -> Callable[[G], ReferenceTrickEncoder] | None:
        """The reference encoder class, or None (its module is imported now)."""
        return None if self.reference is None else load(self.reference)  # type: ignore[no-any-return]

    def engine_heuristic_kernel(self) -> ActKernel | None:
        """The heuristic's batched ``act_kernel``, or None (its module, and numba with it, is imported now)."""
        return None if self.engine_heuristic is None else load(self.engine_heuristic)  # type: ignore[no-any-return]

    def pretrained_file(self) -> Traversable | None:
        """The shipped weights (read them with :func:`importlib.resources.as_file`), or None."""
        if self.pretrained is None:
            return None
        package, name = self.pretrained.split(":")
        return importlib.resources.files(package).joinpath(name)

    def model_card_file(self) -> Traversable | None:
        """The model card beside the shipped weights, or None."""
        if self.pretrained is None:
            return None
        return importlib.resources.files(self.pretrained.split(":")[0]).joinpath(MODEL_CARD)
