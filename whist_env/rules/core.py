"""The trick-taking core every game is built on: the state, the phases and the card-play step.

A game is a subclass of :class:`TrickGame` that adds only what is its own (deal layout, extra phases
such as bidding or the exchange, scoring, match progression); following suit, trick winners,
voids, history and the views are written here once.

The state is a small mutable value with cheap :meth:`State.copy` (flat lists of ints and tuples).
Randomness enters only through the generator passed to :meth:`TrickGame.new_episode` and
:meth:`TrickGame.step` at deal time; a game can also start from a given deck (RULES.md test vectors,
notebooks, reproducing a position).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Generic, Self, TypeVar

import numpy as np

from whist_env.cards import (
    FULL_DECK,
    NUM_CARDS,
    bits_of,
    card_pretty,
    card_str,
    format_cards,
    format_hand,
    parse_card,
    suit_str,
)
from whist_env.errors import IllegalActionError, OptionError
from whist_env.options import GameConfig
from whist_env.rules.tricks import NO_SUIT, legal_cards
from whist_env.rules.tricks import trick_winner as standard_trick_winner
from whist_env.view import NO_EXTRAS, PlayerView, ViewExtras

# Where a deal stands: the one spelling of the phase. Plain ints, because ``state.phase`` is compared
# on every step, view and legal mask (on Python 3.11 reading an enum member costs about 0.1 µs, an
# int comparison a fifth of that). ``PHASE_DEAL_END`` is transient: :meth:`TrickGame.step` deals the
# next hand. A game with more phases numbers them from ``len(PHASE_NAMES)`` on and extends its
# class's ``phase_names`` (see :class:`TrickGame`).
_new_instance = object.__new__

PHASE_PLAY, PHASE_BIDDING, PHASE_EXCHANGE, PHASE_DEAL_END, PHASE_OVER = range(5)
# The phase in words (``PlayerView.phase``, infos, renders), indexed by the phase.
PHASE_NAMES: tuple[str, ...] = ("play", "bidding", "exchange", "deal_end", "over")


def _all_slots(cls: type) -> tuple[str, ...]:
    names: list[str] = []
    for klass in reversed(cls.__mro__):
        names.extend(getattr(klass, "__slots__", ()))
    return tuple(names)


class State:
    """The omniscient state of an episode. Seats are absolute. Card sets are int masks.

    Subclasses add their own fields in ``__slots__``; every field must be an int, a bool, None, a
    tuple, or a flat list of those (so that :meth:`copy` is a correct value copy).
    """

    __slots__ = (
        "num_players",  # n
        "dealer",
        "deal_index",  # deals completed before this one in the episode
        "phase",
        "to_act",  # seat to decide, -1 when over
        "hands",  # (n,) masks
        "dealt",  # (n,) masks: hands as dealt (before any exchange or draw)
        "deal_tricks",  # tricks in this deal
        "trump",  # suit 0..3 or None
        "turn_up",  # face-up trump card id, or -1
        "turn_up_public",  # whether the turn-up card is on the table right now
        "leader",  # seat that led / leads the current trick
        "led_suit",  # suit of the current trick, NO_SUIT when empty
        "trick",  # [(seat, card)] in play order
        "last_trick",  # completed trick still visible, () when none
        "last_winner",  # -1 when none
        "trick_number",  # tricks completed this deal
        "tricks_won",  # (n,) this deal
        "played",  # (n,) masks of cards each seat played this deal
        "played_all",  # mask of every card played this deal (the union of ``played``)
        "voids",  # (n,) 4-bit masks of suits each seat showed out of this deal
        "history",  # [(seat, card)] every card played this deal, in order
        "scores",  # (n,) the game's running score per seat
        "returns",  # (n,) rewards paid so far this episode
        "deal_summary",  # tuple of (key, value) pairs for the last finished deal, () when none
    )

    def __init__(self, num_players: int, dealer: int) -> None:
        self.num_players = num_players
        self.dealer = dealer
        self.deal_index = 0
        self.phase = PHASE_PLAY
        self.to_act = -1
        self.hands = [0] * num_players
        self.dealt = tuple([0] * num_players)
        self.deal_tricks = 0
        self.trump: int | None = None
        self.turn_up = -1
        self.turn_up_public = False
        self.leader = 0
        self.led_suit = NO_SUIT
        self.trick: list[tuple[int, int]] = []
        self.last_trick: tuple[tuple[int, int], ...] = ()
        self.last_winner = -1
        self.trick_number = 0
        self.tricks_won = [0] * num_players
        self.played = [0] * num_players
        self.played_all = 0
        self.voids = [0] * num_players
        self.history: list[tuple[int, int]] = []
        self.scores = [0] * num_players
        self.returns = [0.0] * num_players
        self.deal_summary: tuple[tuple[str, Any], ...] = ()

    def copy(self) -> Self:
        """An independent copy (lists are copied; everything inside them is immutable)."""
        new = object.__new__(type(self))
        for name in _all_slots(type(self)):
            value = getattr(self, name)
            if type(value) is list:
                value = value.copy()
            object.__setattr__(new, name, value)
        return new

    @property
    def done(self) -> bool:
        """Whether the episode is over."""
        return self.phase == PHASE_OVER


S = TypeVar("S", bound=State)


def as_action(action: Any, num_actions: int, game_id: str) -> int:
    """``action`` as an int in ``0..num_actions - 1``: an int, a numpy integer, or a one-element integer array.

    Raises:
        ValueError: when ``action`` is not an integer (a bool, a float, a string, None, ...) or is outside
            the action space.
    """
    if isinstance(action, np.ndarray) and action.shape in ((), (1,)) and np.issubdtype(action.dtype, np.integer):
        action = action.reshape(()).item()
    if not isinstance(action, (int, np.integer)) or isinstance(action, bool):
        raise ValueError(f"{game_id}: an action must be an int in 0..{num_actions - 1}, got {action!r}")
    a = int(action)
    if not 0 <= a < num_actions:
        raise ValueError(f"{game_id}: action {a} is outside the action space 0..{num_actions - 1}")
    return a


def check_deck(deck: Any, game_id: str) -> list[int]:
    """Validate a deck given in ``reset(options={"deck": ...})``: an ordered sequence of 52 distinct cards.

    Args:
        deck: a list, tuple, range or 1-D array of card ids 0..51 or names like ``"TS"``; ``deck[0]`` is
            dealt first. Sets, dicts and iterators are refused: their order is not the caller's to give.
        game_id: the game's id, for messages.

    Returns:
        The deck as card ids.

    Raises:
        OptionError: naming what is wrong with the deck.
    """
    if isinstance(deck, np.ndarray) and deck.ndim == 1:
        deck = deck.tolist()
    if isinstance(deck, (str, bytes)) or not isinstance(deck, Sequence):
        raise OptionError(
            f"{game_id}: 'deck' must be an ordered sequence (a list) of 52 cards, ids 0..51 or names like 'TS'; "
            f"got {type(deck).__name__} {deck!r}"
        )
    if len(deck) != NUM_CARDS:
        raise OptionError(f"{game_id}: 'deck' must hold exactly 52 cards, got {len(deck)}")
    cards = []
    for item in deck:
        if isinstance(item, str):
            try:
                cards.append(parse_card(item))
            except ValueError as err:
                raise OptionError(f"{game_id}: 'deck' holds a bad card name: {err}") from None
        elif isinstance(item, (int, np.integer)) and not isinstance(item, bool) and 0 <= int(item) < NUM_CARDS:
            cards.append(int(item))
        else:
            raise OptionError(f"{game_id}: deck entry {item!r} is not a card; use an id 0..51 or a name like 'TS'")
    if len(set(cards)) != NUM_CARDS:
        seen: set[int] = set()
        dup = [card_pretty(c) for c in cards if c in seen or seen.add(c)]  # type: ignore[func-returns-value]
        raise OptionError(f"{game_id}: 'deck' must hold each of the 52 cards once; repeated: {' '.join(dup)}")
    return cards


class TrickGame(Generic[S]):
    """Base of every game's rules. Pure Python: no gymnasium, pettingzoo or torch.

    Generic over the game's state class ``S``: a game with its own state fields subclasses
    ``TrickGame[MyState]`` and sets ``state_cls = MyState``, so that its hooks take a ``MyState``
    (checked by mypy, no downcasts); a game without them subclasses ``TrickGame[State]``.

    Subclasses set ``game_id``, ``config_cls`` (and ``state_cls`` if they add fields) and
    implement :meth:`start_deal` and :meth:`end_deal`. A game with phases beyond card play (a
    bidding, an exchange, ...) declares each in :attr:`phase_rules` with the methods that give its
    legal actions and apply one, so that no hook switches on the phase. A game whose tricks are won
    otherwise than RULES.md §0.5 (a no-trump "low card wins" contract) overrides :meth:`trick_winner`.
    """

    game_id: ClassVar[str] = ""
    config_cls: ClassVar[type[GameConfig]] = GameConfig
    # the class of the states it makes (a class attribute; ClassVar cannot hold the type variable)
    state_cls: type[S]
    num_actions: int = NUM_CARDS
    extra_reset_options: ClassVar[tuple[str, ...]] = ()
    # Whether a visible turn-up card lies where every seat can place it (on the table, on the stock).
    # Humbug shows the turn-up's id all deal long while it sits in the dealer's hand or has been played.
    turn_up_on_table: ClassVar[bool] = True
    # The keys of :meth:`info_now` whose values may differ between seats: the others are the same for every seat (the
    # environment builds one info a trick and sets these keys per seat). None: any key may differ.
    info_seat_keys: ClassVar[tuple[str, ...] | None] = None
    # The phase in words, indexed by ``state.phase``; a game with more phases appends its own names.
    phase_names: ClassVar[tuple[str, ...]] = PHASE_NAMES
    # The phases beyond card play: phase -> (name of the method giving its legal actions as a mask,
    # name of the method applying one). Names, so that a subclass's override of either counts.
    phase_rules: ClassVar[Mapping[int, tuple[str, str]]] = {}
    # Whether tricks are won as RULES.md §0.5 says (the double-dummy solver assumes it). Set for
    # each subclass: False when it overrides :meth:`trick_winner`, unless it sets the flag itself.
    standard_trick_winner: ClassVar[bool] = True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "standard_trick_winner" not in cls.__dict__:
            cls.standard_trick_winner = cls.trick_winner is TrickGame.trick_winner

    @classmethod
    def from_options(cls, options: Mapping[str, Any]) -> Self:
        """``cls(**options)``, the names checked first: a game's ``__init__(self, **options)`` would take an option
        named ``self`` as its own argument (a ``TypeError``), where any other unknown name is an ``OptionError``.

        Raises:
            OptionError: for an unknown option or a bad value, naming what is allowed.
        """
        cls.config_cls.check_names(cls.game_id, options)
        return cls(**options)

    def __init__(self, /, **options: Any) -> None:
        self.config = self.config_cls.from_options(self.game_id, options)
        # step() may call play_card directly unless a game overrides apply() (hot path).
        self._plain_apply = type(self).apply is TrickGame.apply
        self._phase_text = self.phase_names  # read on every view: an instance attribute is the quickest
        # view()'s hooks that this game leaves as they are: view() does their work inline (a call each saved)
        cls = type(self)
        self._plain_out_of_play = cls.known_out_of_play is TrickGame.known_out_of_play
        self._plain_turn_up = cls.turn_up_visible is TrickGame.turn_up_visible
        self._plain_recall = cls.recall_for is TrickGame.recall_for
        self._plain_trump = cls.trump_visible is TrickGame.trump_visible
        self._summary_fields: dict[str, Any] | None = None  # summary_fields() as info keys, on first use
        self._summary_memo: tuple[Any, int, dict[str, Any]] | None = None  # summary_info's last (summary, deal, info)
        # phase_rules as bound methods, looked up once
        self._legal_in = {phase: getattr(self, legal) for phase, (legal, _) in self.phase_rules.items()}
        self._apply_in = {phase: getattr(self, apply) for phase, (_, apply) in self.phase_rules.items()}
        self.num_players = 2
        self.recall = True

    # ----------------------------------------------------------------- episode and deals
    def new_episode(
        self,
        rng: np.random.Generator,
        deck: Sequence[int | str] | None = None,
        dealer: int | None = None,
        **extra: Any,
    ) -> S:
        """Start an episode: choose the first dealer, then deal (RULES.md §0.3 draw order).

        Args:
            rng: the only source of randomness.
            deck: optional deck order for the first deal (52 distinct cards); later deals are drawn.
            dealer: optional first dealer; drawn with ``rng.integers(n)`` when None.
            **extra: a game's own start options (``extra_reset_options``), handled by its override.
        """
        # Everything is checked before the generator is touched: a rejected start draws nothing.
        cards, first = self.check_start(deck, dealer, **extra)
        n = self.num_players
        if first is None:
            first = int(rng.integers(n))
        state = self.state_cls(n, first)
        self.begin_episode(state)
        self.start_deal(state, cards if cards is not None else self.draw_deck(rng, state))
        return state

    def check_start(
        self, deck: Sequence[int | str] | None = None, dealer: int | None = None, **extra: Any
    ) -> tuple[list[int] | None, int | None]:
        """Check the start options of :meth:`new_episode` without touching a generator or a state.

        Games with their own start options (``extra_reset_options``) extend it. ``reset()`` calls it before
        seeding, so that a rejected reset changes nothing.

        Returns:
            The deck as card ids and the first dealer (each None when not given).

        Raises:
            OptionError: naming the option that is wrong and what is allowed.
        """
        if extra:
            known = ", ".join(("deck", "dealer", *self.extra_reset_options))
            raise OptionError(f"{self.game_id}: unknown start option(s) {sorted(extra)}; known: {known}")
        n = self.num_players
        if dealer is not None and not (
            isinstance(dealer, (int, np.integer)) and not isinstance(dealer, bool) and 0 <= dealer < n
        ):
            raise OptionError(f"{self.game_id}: 'dealer' must be a seat 0..{n - 1}, got {dealer!r}")
        return (check_deck(deck, self.game_id) if deck is not None else None), (None if dealer is None else int(dealer))

    def begin_episode(self, state: S) -> None:
        """Hook: initialise the game's own episode-level fields."""

    def draw_deck(self, rng: np.random.Generator, state: S) -> list[int]:
        """Shuffle for the next deal: ``rng.permutation(52)`` (RULES.md §0.3)."""
        return rng.permutation(NUM_CARDS).tolist()

    def next_dealer(self, state: S) -> int:
        """Dealer of the next deal: the deal passes to the left (two players: it alternates)."""
        return (state.dealer + 1) % state.num_players

    def next_deal(self, state: S, rng: np.random.Generator) -> None:
        """Deal the next hand of the episode (after a deal ended with the episode going on)."""
        state.deal_index += 1
        state.dealer = self.next_dealer(state)
        self.start_deal(state, self.draw_deck(rng, state))

    def start_deal(self, state: S, deck: list[int]) -> None:
        """Deal ``deck`` and set the phase, trump and first player. Implemented by each game."""
        raise NotImplementedError

    def reset_deal(self, state: S, hands: list[int], deal_tricks: int) -> None:
        """Reset the per-deal fields for a new deal with ``hands``."""
        n = state.num_players
        state.hands = list(hands)
        state.dealt = tuple(hands)
        state.deal_tricks = deal_tricks
        state.trump = None
        state.turn_up = -1
        state.turn_up_public = False
        state.led_suit = NO_SUIT
        state.trick = []
        state.last_trick = ()
        state.last_winner = -1
        state.trick_number = 0
        state.tricks_won = [0] * n
        state.played = [0] * n
        state.played_all = 0
        state.voids = [0] * n
        state.history = []

    def step(self, state: S, action: int, rng: np.random.Generator) -> list[float] | None:
        """Apply ``action`` for ``state.to_act``; deal the next hand when a deal ends mid-episode.

        Returns:
            The rewards this action produced for every seat, or None when there are none.

        Raises:
            IllegalActionError: when the action is not legal now.
        """
        if state.phase == PHASE_PLAY and self._plain_apply:
            rewards = self.play_card(state, action)
        else:
            rewards = self.apply(state, action)
        if state.phase == PHASE_DEAL_END:
            self.next_deal(state, rng)
        return rewards

    # ----------------------------------------------------------------- actions
    def legal_mask(self, state: S) -> int:
        """Legal actions of ``state.to_act`` as a bit mask over the action space."""
        if state.phase == PHASE_PLAY:
            led = state.led_suit
            if led >= 0 and not self.must_follow(state):
                return state.hands[state.to_act]
            return legal_cards(state.hands[state.to_act], led)
        if state.phase == PHASE_OVER:
            return 0
        rule = self._legal_in.get(state.phase)  # phase_rules, called here directly: one call less per decision
        if rule is not None:
            mask: int = rule(state)
            return mask
        return self.legal_other(state)

    def legal_actions(self, state: S) -> list[int]:
        """Legal actions of ``state.to_act``, ascending."""
        return bits_of(self.legal_mask(state))

    def apply(self, state: S, action: int) -> list[float] | None:
        """Apply ``action`` for ``state.to_act`` (no next deal; see :meth:`step`)."""
        if state.phase == PHASE_PLAY:
            return self.play_card(state, action)
        if state.phase == PHASE_OVER:
            raise IllegalActionError(f"{self.game_id}: the episode is over; call reset()", -1, action)
        rule = self._apply_in.get(state.phase)
        if rule is not None:
            rewards: list[float] | None = rule(state, action)
            return rewards
        return self.apply_other(state, action)

    def must_follow(self, state: S) -> bool:
        """Whether a follower must follow suit now (RULES.md §0.4): always, unless a game lifts it.

        Where it returns False any card may be played, and playing off-suit proves no void.
        """
        return True

    def legal_other(self, state: S) -> int:
        """Legal actions in a phase that has no entry in :attr:`phase_rules` (and is not play or over)."""
        if state.phase == PHASE_DEAL_END:  # between deals (after apply(), before step() deals): nobody acts
            return 0
        raise self._no_phase_rules(state)

    def apply_other(self, state: S, action: int) -> list[float] | None:
        """Apply an action in a phase that has no entry in :attr:`phase_rules` (and is not play or over)."""
        raise self._no_phase_rules(state)

    def _no_phase_rules(self, state: S) -> NotImplementedError:
        phase = self.phase_names[state.phase] if 0 <= state.phase < len(self.phase_names) else str(state.phase)
        known = ", ".join(self.phase_names[p] for p in self.phase_rules) or "none"
        return NotImplementedError(
            f"{self.game_id}: no rules for phase {phase!r}; declare them in {type(self).__name__}.phase_rules "
            f"(phases beyond card play with rules: {known})"
        )

    def trick_winner(self, plays: Sequence[tuple[int, int]], trump: int | None) -> int:
        """Seat that wins a completed trick of ``(seat, card)`` plays (``plays[0]`` led): RULES.md §0.5.

        The rule hook a variant overrides (then :attr:`standard_trick_winner` becomes False and the
        double-dummy solver refuses the game).
        """
        return standard_trick_winner(plays, trump)

    def describe_action(self, action: int) -> str:
        """An action in words, a card in its short form (``"TS"``, ``"bid 3"``, ``"KEEP"``; what ``whist-play``
        reads). Text for people, errors included, uses :meth:`action_text`."""
        return card_str(action) if 0 <= action < NUM_CARDS else f"action {action}"

    def action_text(self, action: int) -> str:
        """An action as people read it, in errors as on the screens: a card as ``10♠`` (what :meth:`render` shows),
        another action in words (``bid 3``, ``KEEP``), a number that is no action as such (``action 200 (outside
        0..65)``, not Oh Hell's "bid 148"). ``parse_card`` reads both ``10♠`` and ``TS``."""
        if 0 <= action < NUM_CARDS:
            return card_pretty(action)
        if not 0 <= action < self.num_actions:
            return f"action {action} (outside 0..{self.num_actions - 1})"
        return self.describe_action(action)

    def illegal(self, state: S, action: int, reason: str) -> IllegalActionError:
        """An :class:`IllegalActionError` naming the seat, the action, why, and the legal actions (cards as the
        screens show them: ``seat 1 cannot play A♥: must follow spades; legal: 2♠``)."""
        legal = tuple(self.legal_actions(state))
        names = " ".join(self.action_text(a) for a in legal)
        return IllegalActionError(
            f"seat {state.to_act} cannot play {self.action_text(action)}: {reason}; legal: {names}",
            state.to_act,
            action,
            legal,
        )

    def play_card(self, state: S, card: int) -> list[float] | None:
        """Play ``card`` for ``state.to_act``: RULES.md §0.4 following suit, §0.5 trick winner."""
        seat = state.to_act
        hand = state.hands[seat]
        if not 0 <= card < NUM_CARDS or not (hand >> card) & 1:
            raise self.illegal(state, card, "that card is not in the hand")
        led = state.led_suit
        card_suit = card // 13
        if led >= 0 and card_suit != led and self.must_follow(state):
            if hand & (0x1FFF << (13 * led)):
                raise self.illegal(state, card, f"must follow {('clubs', 'diamonds', 'hearts', 'spades')[led]}")
            state.voids[seat] |= 1 << led
        bit = 1 << card
        state.hands[seat] = hand ^ bit
        state.played[seat] |= bit
        state.played_all |= bit
        state.history.append((seat, card))
        trick = state.trick
        if not trick:
            state.led_suit = card_suit
            state.leader = seat
            state.last_trick = ()
            state.last_winner = -1
        trick.append((seat, card))
        if state.turn_up_public and seat == state.dealer:
            # RULES.md §1.5 / §2.1: the turn-up is public until the dealer plays his first card.
            state.turn_up_public = False
        n = state.num_players
        if len(trick) < n:
            state.to_act = (seat + 1) % n  # RULES.md §0.2: play goes clockwise
            return None
        winner = self.trick_winner(trick, state.trump)
        state.tricks_won[winner] += 1
        state.last_trick = tuple(trick)
        state.last_winner = winner
        state.trick = []
        state.led_suit = NO_SUIT
        state.trick_number += 1
        state.leader = winner
        state.to_act = winner  # RULES.md §0.5: the winner leads the next trick
        return self.on_trick_complete(state, winner)

    def on_trick_complete(self, state: S, winner: int) -> list[float] | None:
        """Hook after each trick; by default ends the deal after its last trick."""
        if state.trick_number == state.deal_tricks:
            return self.end_deal(state)
        return None

    def end_deal(self, state: S) -> list[float] | None:
        """Score the finished deal, set ``phase`` to ``DEAL_END`` or ``OVER``, return the rewards."""
        raise NotImplementedError

    def finish(self, state: S, rewards: list[float] | None, episode_over: bool) -> list[float] | None:
        """Record rewards and move to ``OVER`` or ``DEAL_END``."""
        if rewards is not None:
            ret = state.returns
            for i, r in enumerate(rewards):
                ret[i] += r
        state.phase = PHASE_OVER if episode_over else PHASE_DEAL_END
        if episode_over:
            state.to_act = -1
        return rewards

    # ----------------------------------------------------------------- what a seat knows
    def known_cards(self, state: S, seat: int) -> list[int]:
        """Per seat, the cards ``seat`` knows to be in that hand now (own entry = own hand).

        The base rule: the turn-up card is known to be in the dealer's hand while it is public, and
        afterwards too with perfect recall until the dealer plays it.
        """
        known = [0] * state.num_players
        known[seat] = state.hands[seat]
        t = state.turn_up
        if t >= 0 and state.phase != PHASE_OVER and (state.turn_up_public or self.recall):
            d = state.dealer
            if (state.hands[d] >> t) & 1 and d != seat:
                known[d] |= 1 << t
        return known

    def known_out_of_play(self, state: S, seat: int) -> int:
        """Cards ``seat`` knows to be out of play this deal (a hand it put away, ...). Default none."""
        return 0

    def recall_for(self, state: S, seat: int) -> bool:
        """Whether ``seat`` remembers the cards played (the game's history setting)."""
        return self.recall

    def view_extra(self, state: S, seat: int) -> ViewExtras:
        """Game-specific knowledge of ``seat`` for :attr:`PlayerView.extra` (the game's own ``ViewExtras``)."""
        return NO_EXTRAS

    def turn_up_visible(self, state: S, seat: int) -> int:
        """The turn-up card if ``seat`` can see it now, else -1."""
        return state.turn_up if state.turn_up_public else -1

    def trump_visible(self, state: S, seat: int) -> int | None:
        """The trump suit as ``seat`` knows it now."""
        return state.trump

    def view(self, state: S, seat: int) -> PlayerView:
        """Everything ``seat`` may know now (see :class:`PlayerView`)."""
        n = state.num_players
        hand = state.hands[seat]
        known = self.known_cards(state, seat)
        # the hooks a game leaves as they are, done inline (the same as calling them: tests/rules/test_view_hooks.py)
        if self._plain_turn_up:
            turn_up = state.turn_up if state.turn_up_public else -1
        else:
            turn_up = self.turn_up_visible(state, seat)
        seen = hand if self._plain_out_of_play else hand | self.known_out_of_play(state, seat)
        for m in known:
            if m:  # most seats know nothing of most hands
                seen |= m
        if turn_up >= 0 and self.turn_up_on_table:
            seen |= 1 << turn_up
        if self.recall if self._plain_recall else self.recall_for(state, seat):
            # every card on the table (current and last trick) has been played this deal
            seen |= state.played_all
            played = tuple(state.played)
            voids = tuple(state.voids)
        else:
            for _, c in state.trick:
                seen |= 1 << c
            for _, c in state.last_trick:
                seen |= 1 << c
            played = voids = (0,) * n
        phase = state.phase
        active = state.to_act == seat and phase != PHASE_OVER
        # every field set by name on a bare instance: this runs on every observation, and a call with more than
        # 15 keywords costs about 1 µs on 3.11 (CPython builds a dict for it); tests/test_view.py checks that
        # every field is set
        view = _new_instance(PlayerView)
        view.game = self.game_id
        view.seat = seat
        view.num_players = n
        view.phase = self._phase_text[phase]
        view.to_act = state.to_act
        view.dealer = state.dealer
        view.leader = state.leader
        view.hand = hand
        view.legal = self.legal_mask(state) if active else 0
        view.trump = state.trump if self._plain_trump else self.trump_visible(state, seat)
        view.turn_up = turn_up
        view.trick = tuple(state.trick)
        view.last_trick = state.last_trick
        view.last_winner = state.last_winner
        view.played = played
        view.known = tuple(known)
        view.voids = voids
        view.unseen = FULL_DECK & ~seen
        view.tricks_won = tuple(state.tricks_won)
        view.scores = tuple(state.scores)
        view.deal_index = state.deal_index
        view.extra = self.view_extra(state, seat)
        return view

    def info(self, state: S, seat: int) -> dict[str, Any]:
        """Public per-seat information for ``infos``, as numbers that libraries can stack into arrays.

        The same keys at every step of an episode, each value an int or a tuple of ints whose length never changes
        (the environments hand the tuples out as numpy arrays): :meth:`info_now` (``deal``, ``phase``, ``tricks``,
        ``scores`` and the game's own keys) and the last finished deal's summary (:meth:`summary_info`). The text
        forms stay with :meth:`render`, the :class:`~whist_env.view.PlayerView` and ``state.deal_summary``.
        """
        return {**self.info_now(state, seat), **self.summary_info(state)}

    def info_now(self, state: S, seat: int) -> dict[str, Any]:
        """The part of :meth:`info` that may change at any trick: ``deal`` (deals completed before this one),
        ``phase`` (an index into :attr:`phase_names`), ``tricks`` and ``scores`` (one entry per seat). Games add their
        own keys here (ints and fixed-length tuples of ints), calling this first."""
        return {
            "deal": state.deal_index,
            "phase": state.phase,
            "tricks": tuple(state.tricks_won),
            "scores": tuple(state.scores),
        }

    def info_seat(self, state: S, seat: int) -> dict[str, Any]:
        """The keys of :attr:`info_seat_keys` in ``seat``'s :meth:`info_now`, which the environment sets per seat on
        the one info it builds a trick: taken from :meth:`info_now` unless a game gives them on their own."""
        now = self.info_now(state, seat)
        return {key: now[key] for key in self.info_seat_keys or ()}

    def summary_fields(self) -> dict[str, int | tuple[int, ...]]:
        """The fields of this game's deal summary (``state.deal_summary``) as they appear in ``info``, each with its
        value before the first deal ends, or in a summary without it: an int, or a tuple of ints of the length the
        field always has. Every key a game puts in ``state.deal_summary`` must be here."""
        return {}

    def summary_number(self, name: str, value: Any) -> int | tuple[int, ...]:
        """The number (or tuple of numbers) that ``info`` shows for the summary field ``name`` holding ``value``; a
        game whose summary holds text (a decision's name) maps it here. ``None`` already became the default."""
        return value  # type: ignore[no-any-return]

    def summary_info(self, state: S) -> dict[str, Any]:
        """The last finished deal's summary as ``info`` keys: ``last_deal`` (the index of that deal; -1 before the first
        deal ends) and ``last_deal_<field>`` for every field of :meth:`summary_fields` (its default until then).

        The dict is kept and handed out again while the summary and ``last_deal`` stay the same (a deal's summary is
        a new tuple when the deal ends): read it or copy it, never modify it.

        Raises:
            KeyError: when ``state.deal_summary`` holds a field that :meth:`summary_fields` does not declare.
        """
        summary = state.deal_summary
        ended = state.phase == PHASE_OVER or state.phase == PHASE_DEAL_END
        last_deal = (state.deal_index if ended else state.deal_index - 1) if summary else -1
        memo = self._summary_memo  # the summary changes once a deal (a new tuple), info asks for it at every trick
        if memo is not None and memo[0] is summary and memo[1] == last_deal:
            return memo[2]
        fields = self._summary_fields
        if fields is None:  # the options are set by now (a subclass's __init__ ran); they never change after
            fields = self._summary_fields = {f"last_deal_{k}": v for k, v in self.summary_fields().items()}
        info: dict[str, Any] = {"last_deal": last_deal, **fields}
        for name, value in summary or ():
            key = f"last_deal_{name}"
            if key not in fields:
                raise KeyError(
                    f"{self.game_id}: the deal summary field {name!r} is not declared in summary_fields() "
                    f"(declared: {', '.join(self.summary_fields()) or 'none'})"
                )
            if value is not None:
                info[key] = self.summary_number(name, value)
        self._summary_memo = (summary, last_deal, info)
        return info

    def deal_unit(self) -> str | None:
        """What one deal's reward is, in words, with this game's options (the unit of an arena comparison
        of single deals); None when the game's fixed description applies."""
        return None

    def deal_return_range(self) -> tuple[float, float] | None:
        """The least and the greatest return one seat can get from one deal with this game's options (the deal of
        :meth:`deal_unit`), derived from the game's scoring rules; None when the game declares none.

        Why: a match that stops when decided (:mod:`whist_env.evaluation.sequential`) needs a bound that holds for
        every deal, whatever the agents do; a per-deal paired difference of two agents then lies within
        ``±(high − low)``. Each game derives its range from its scoring rules and cites the section; a test plays
        random deals of every registered game and checks that each return stays inside it."""
        return None

    # ----------------------------------------------------------------- checks and text
    def check_invariants(self, state: S) -> None:
        """Assert the invariants every game keeps; games extend it. Raises AssertionError."""
        n = state.num_players
        assert len(state.hands) == n and len(state.tricks_won) == n
        for i in range(n):
            for j in range(i + 1, n):
                assert not state.hands[i] & state.hands[j], "a card is in two hands"
        in_trick = 0
        for _, c in state.trick:
            in_trick |= 1 << c
        all_played = 0
        for s in range(n):
            assert not state.hands[s] & state.played[s], "a played card is still in hand"
            all_played |= state.played[s]
        assert len(state.history) == all_played.bit_count(), "history and played cards disagree"
        assert state.played_all == all_played, "played_all is the union of played"
        assert sum(state.tricks_won) == state.trick_number
        assert len(state.history) == state.trick_number * n + len(state.trick)
        if state.phase == PHASE_PLAY:
            assert len(state.trick) < state.num_players
            assert (state.led_suit == NO_SUIT) == (not state.trick)
            assert self.legal_mask(state), "no legal action in play"

    def seat_name(self, seat: int) -> str:
        """How a seat is named in text."""
        return f"player_{seat}"

    def render_header(self, state: S) -> str:
        """First line of the text render."""
        turn = f", turn-up {card_pretty(state.turn_up)}" if state.turn_up_public else ""
        return (
            f"{self.game_id} · deal {state.deal_index + 1} · dealer {self.seat_name(state.dealer)} · "
            f"trump {suit_str(state.trump)}{turn} · phase {self.phase_names[state.phase]}"
        )

    def render(self, state: S, seat: int | None = None) -> str:
        """Text picture of the table: every hand, or only what ``seat`` may see (from its view)."""
        lines = [self.render_header(state)]
        view = self.view(state, seat) if seat is not None else None
        for s in range(state.num_players):
            marker = "▶" if s == state.to_act else " "
            if view is None or s == seat:
                hand = format_hand(state.hands[s])
            elif view.known[s]:
                hand = f"{state.hands[s].bit_count()} cards, known: {format_cards(view.known[s], pretty=True)}"
            else:
                hand = f"{state.hands[s].bit_count()} cards"
            lines.append(f"{marker} {self.seat_name(s)}: {hand}   tricks {state.tricks_won[s]}")
        trick = ", ".join(f"{self.seat_name(s)} {format_cards([c], pretty=True)}" for s, c in state.trick)
        lines.append(f"trick: {trick or '-'}")
        if state.last_trick:
            last = ", ".join(f"{self.seat_name(s)} {format_cards([c], pretty=True)}" for s, c in state.last_trick)
            lines.append(f"last trick: {last} → {self.seat_name(state.last_winner)}")
        lines.append(f"scores: {list(state.scores)}")
        extra = self.render_extra(state, seat)
        if extra:
            lines.append(extra)
        return "\n".join(lines)

    def render_extra(self, state: S, seat: int | None) -> str:
        """Extra game-specific lines for :meth:`render` (must respect ``seat``'s view when given)."""
        return ""
