"""Learner-side features computed from observations: the card facts a heuristic reads off the table, and suit
permutations of observations and actions.

Nothing here changes an environment's observation: these functions take batches of observation vectors that an
encoder made (``(n, layout.size)`` float arrays) and return extra inputs, or the same observations with the suits
renamed. They served the experiments on what a network needs to see (docs/results_features.md). Since issue #13's
layout change every trick layout declares the card facts as pieces (``master``, ``winning_now``, ``out[♣]`` ...
``out[♠]``, see ``whist_env.encoding.trick``), so a learner reads them from the observation; :class:`CardFacts`
stays for old observations and the experiment scripts, and agrees with those pieces. The suit permutations stay on
the learner's side because they rename actions.

* :class:`CardFacts`: per card, is it the master of its suit (the highest card of the suit not yet played), would it
  win the current trick if I played it now; per suit, how many of its cards are still out (neither in my hand nor
  played). Read from the common pieces ``hand``, ``trump``, ``leader``, ``trick[...]`` and ``played[...]``: without
  recall (``played`` empty) the facts only know the current trick.
* :class:`SuitPermuter`: any of the 24 renamings of the suits applied to observations (card-set pieces, the trump
  one-hot, the per-suit flags, the per-suit families such as ``out[...]``), action masks and actions;
  :meth:`SuitPermuter.canonical` names the one that makes trump spades and keeps the order of the other suits.

    >>> facts = CardFacts(encoder.layout)
    >>> extra = facts(obs_batch)                    # (n, facts.size) float32
    >>> perm = SuitPermuter(encoder.layout)
    >>> p = perm.canonical(obs_batch)               # (n,) permutation ids
    >>> canon_obs, canon_mask = perm.obs(obs_batch, p), perm.mask(mask_batch, p)
    >>> action = perm.action_back(canon_action, p)  # what to play in the real game

numpy only (no torch).
"""

from __future__ import annotations

import itertools

import numpy as np

from whist_env.cards import NUM_CARDS, NUM_RANKS, NUM_SUITS
from whist_env.encoding.layout import SUIT_LABELS, TRUMP_LABELS, Layout, Piece, cards, scalar
from whist_env.errors import OptionError
from whist_env.view import PlayerView

__all__ = ["PERMUTATIONS", "CardFacts", "SuitPermuter", "card_facts_reference", "suit_families"]

# Every renaming of the four suits: ``PERMUTATIONS[p][s]`` is the new index of suit ``s``. Index 0 is the identity.
PERMUTATIONS: tuple[tuple[int, ...], ...] = tuple(itertools.permutations(range(NUM_SUITS)))


def _require(layout: Layout, names: list[str]) -> None:
    missing = [n for n in names if n not in layout.offsets]
    if missing:
        raise OptionError(
            f"the layout lacks the pieces {missing}; the card facts need the common trick pieces of "
            f"whist_env.encoding.trick.TrickEncoder (hand, trump, leader, trick[...], played[...])"
        )


class CardFacts:
    """The per-card facts of a batch of observations of one layout.

    Every trick layout now declares the same facts as pieces (``master``, ``winning_now``, and ``out[s]`` as a
    0..13 count rather than a fraction); this class computes them from the other pieces, for layouts and saved
    observations from before that change and for the feature experiments, and agrees with the pieces where both
    exist.

    Output columns (:attr:`pieces` names them, in the layout's own piece vocabulary):

    * ``master`` (52): for each suit, its highest card that is neither played this deal nor on the table (it may
      be in my hand; none for a suit whose cards are all gone).
    * ``winning_now`` (52): cards of my hand that, played now, would be the best card of the current trick
      (a higher card of the suit led, or a trump over no higher trump); empty while the trick is empty.
    * ``out[s]`` (4 scalars): cards of suit ``s`` neither in my hand nor played, divided by 13.

    Args:
        layout: the observation layout (any game whose encoder is a ``TrickEncoder``).
    """

    def __init__(self, layout: Layout) -> None:
        labels = [p.name[len("trick[") : -1] for p in layout.pieces if p.name.startswith("trick[")]
        _require(
            layout, ["hand", "trump", "leader"] + [f"trick[{r}]" for r in labels] + [f"played[{r}]" for r in labels]
        )
        off = layout.offsets
        self.layout = layout
        self._hand = off["hand"]
        self._trump = off["trump"]
        self._leader = off["leader"]
        self._trick = [off[f"trick[{r}]"] for r in labels]
        self._played = [off[f"played[{r}]"] for r in labels]
        self.pieces: list[Piece] = [
            cards("master", "the highest card of each suit not yet played (it may be mine)"),
            cards("winning_now", "cards of my hand that would win the current trick if played now"),
        ] + [scalar(f"out[{s}]", NUM_RANKS, f"cards of {s} neither in my hand nor played") for s in SUIT_LABELS]
        self.size = sum(p.size for p in self.pieces)

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        """The facts of ``obs`` (``(n, layout.size)`` or one vector) as float32 ``(n, size)`` (or ``(size,)``)."""
        single = obs.ndim == 1
        x = np.atleast_2d(obs) > 0.5
        n = len(x)

        def piece(at: int) -> np.ndarray:
            return x[:, at : at + NUM_CARDS]

        hand = piece(self._hand)
        on_table = np.zeros((n, NUM_CARDS), bool)
        for at in self._trick:
            on_table |= piece(at)
        gone = on_table.copy()
        for at in self._played:
            gone |= piece(at)
        alive = ~gone.reshape(n, NUM_SUITS, NUM_RANKS)
        # the highest alive rank of each suit: the first True from the top
        top = NUM_RANKS - 1 - np.argmax(alive[:, :, ::-1], axis=2)
        master = np.zeros((n, NUM_SUITS, NUM_RANKS), bool)
        has = alive.any(axis=2)
        rows, suits = np.nonzero(has)
        master[rows, suits, top[rows, suits]] = True
        out = (alive & ~hand.reshape(n, NUM_SUITS, NUM_RANKS)).sum(axis=2).astype(np.float32) / NUM_RANKS

        # the trick: the suit led is the suit of the leader's card; the best card so far
        trump_onehot = x[:, self._trump : self._trump + NUM_SUITS]
        has_trump = trump_onehot.any(axis=1)
        trump = np.where(has_trump, np.argmax(trump_onehot, axis=1), -1)
        n_seats = len(self._trick)
        leader = np.argmax(x[:, self._leader : self._leader + n_seats], axis=1)
        trick_cards = np.stack([piece(at) for at in self._trick], axis=1)  # (n, seats, 52)
        led_card = np.argmax(trick_cards[np.arange(n), leader], axis=1)
        started = np.asarray(on_table.any(axis=1))
        led = np.where(started, led_card // NUM_RANKS, -1)
        table = on_table.reshape(n, NUM_SUITS, NUM_RANKS)
        ranks = np.arange(NUM_RANKS)

        def best_rank(suit: np.ndarray) -> np.ndarray:
            """Highest rank on the table in ``suit`` per row (-1 for none or suit -1)."""
            s = np.clip(suit, 0, NUM_SUITS - 1)
            in_suit = table[np.arange(n), s] & (suit >= 0)[:, None]
            return np.where(in_suit.any(axis=1), NUM_RANKS - 1 - np.argmax(in_suit[:, ::-1], axis=1), -1)

        best_trump = best_rank(np.where(led == trump, -1, trump))  # trumps other than the suit led
        best_led = best_rank(led)
        card_suit = np.repeat(np.arange(NUM_SUITS), NUM_RANKS)[None, :]
        card_rank = np.tile(ranks, NUM_SUITS)[None, :]
        trumped = (best_trump >= 0)[:, None]
        is_trump = (card_suit == trump[:, None]) & (trump[:, None] != led[:, None])
        beats_trump = is_trump & (card_rank > best_trump[:, None])
        beats_led = (card_suit == led[:, None]) & (card_rank > best_led[:, None])
        wins = np.where(trumped, beats_trump, beats_led | is_trump) & hand & started[:, None]

        result = np.concatenate([master.reshape(n, NUM_CARDS), wins, out], axis=1).astype(np.float32)
        return result[0] if single else result


def card_facts_reference(view: PlayerView) -> np.ndarray:
    """:class:`CardFacts` of one view, computed card by card from the view itself (the plain reference the tests
    compare the batched version with)."""
    gone = 0
    for p in view.played:
        gone |= p
    for _, c in view.trick:
        gone |= 1 << c
    out = np.zeros(2 * NUM_CARDS + NUM_SUITS, np.float32)
    for s in range(NUM_SUITS):
        alive = [r for r in range(NUM_RANKS) if not gone >> (s * NUM_RANKS + r) & 1]
        if alive:
            out[s * NUM_RANKS + max(alive)] = 1.0
        out[2 * NUM_CARDS + s] = sum(1 for r in alive if not view.hand >> (s * NUM_RANKS + r) & 1) / NUM_RANKS
    if view.trick:
        for c in range(NUM_CARDS):
            if view.hand >> c & 1:
                # play c now and see whether it is the best card of the trick
                trick = [card for _, card in view.trick] + [c]
                led = trick[0] // NUM_RANKS
                trumps = [t for t in trick if view.trump is not None and t // NUM_RANKS == view.trump]
                best = max(trumps) if trumps else max(t for t in trick if t // NUM_RANKS == led)
                out[NUM_CARDS + c] = float(best == c)
    return out


def suit_families(layout: Layout) -> list[tuple[str, ...]]:
    """The per-suit families of ``layout``: pieces named ``<base>[<suit symbol>]`` for all four suit symbols (such
    as ``out[♣]`` ... ``out[♠]``), each as its four piece names in suit order.

    Raises:
        OptionError: the four pieces of a family differ in kind or size (a renaming could not swap them).
    """
    by_base: dict[str, dict[str, Piece]] = {}
    for piece in layout.pieces:
        base, bracket, inner = piece.name[:-1].partition("[")
        if piece.name.endswith("]") and bracket and inner in SUIT_LABELS:
            by_base.setdefault(base, {})[inner] = piece
    families = []
    for base, members in by_base.items():
        if len(members) < NUM_SUITS:
            continue  # not named for every suit: not a family, its pieces stay where they are
        shapes = {(p.kind, p.size, p.labels, p.scale) for p in members.values()}
        if len(shapes) > 1:
            raise OptionError(
                f"the pieces {base}[{']/['.join(SUIT_LABELS)}] differ in kind or size ({sorted(shapes)}); a "
                f"per-suit family must have four pieces of one shape so that renaming suits can swap them"
            )
        families.append(tuple(members[s].name for s in SUIT_LABELS))
    return families


class SuitPermuter:
    """Renames the suits of observations, masks and actions of one layout.

    A permutation id ``p`` indexes :data:`PERMUTATIONS`: suit ``s`` becomes ``PERMUTATIONS[p][s]``, card
    ``13 s + r`` becomes ``13 PERMUTATIONS[p][s] + r``. Card-set pieces, the 4 suit entries of the ``trump``
    one-hot and every per-suit flags piece are permuted; a per-suit family of pieces (:func:`suit_families`, such
    as ``out[♣]`` ... ``out[♠]``) moves as whole pieces: the piece of suit ``s`` goes to that of suit
    ``PERMUTATIONS[p][s]``. Other pieces (counts, seats, scalars) do not name suits.
    Actions below 52 are cards and are renamed; other actions (bids, exchange choices) are kept.

    Args:
        layout: the observation layout.
    """

    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        if "trump" not in layout.offsets:
            raise OptionError("the layout has no 'trump' piece: nothing to canonicalise suits by")
        self._trump = layout.offsets["trump"]
        num_actions = layout.num_actions
        families = suit_families(layout)
        obs_src = np.tile(np.arange(layout.size), (len(PERMUTATIONS), 1))
        act_src = np.tile(np.arange(num_actions), (len(PERMUTATIONS), 1))
        for p, sigma in enumerate(PERMUTATIONS):
            card_src = np.empty(NUM_CARDS, np.int64)  # new card slot -> old card slot
            for s in range(NUM_SUITS):
                card_src[sigma[s] * NUM_RANKS : (sigma[s] + 1) * NUM_RANKS] = np.arange(NUM_RANKS) + s * NUM_RANKS
            suit_src = np.argsort(sigma)  # new suit -> old suit
            for piece in layout.pieces:
                at = layout.offsets[piece.name]
                if piece.kind == "cards":
                    obs_src[p, at : at + NUM_CARDS] = at + card_src
                elif piece.labels in (SUIT_LABELS, TRUMP_LABELS):
                    obs_src[p, at : at + NUM_SUITS] = at + suit_src
            within = obs_src[p].copy()  # each piece renamed inside; a suit family then moves whole pieces
            for family in families:
                for s in range(NUM_SUITS):
                    obs_src[p, layout.slice(family[sigma[s]])] = within[layout.slice(family[s])]
            act_src[p, : min(NUM_CARDS, num_actions)] = card_src[: min(NUM_CARDS, num_actions)]
        self._obs_src = obs_src
        self._act_src = act_src
        self._act_dst = np.argsort(act_src, axis=1)  # old action -> new action
        # old column -> new column, flat (the row of permutation p starts at p * (size + 1)); the last entry of each
        # row keeps the pad column ``size`` of sparse rows (obs_columns)
        obs_dst = np.concatenate([np.argsort(obs_src, axis=1), np.full((len(PERMUTATIONS), 1), layout.size)], axis=1)
        self._obs_dst = obs_dst.ravel()
        by_perm = {sigma: i for i, sigma in enumerate(PERMUTATIONS)}
        # canonical renaming per trump suit (4: no trump): trump -> spades, the others keep their order
        self._canonical = np.zeros(NUM_SUITS + 1, np.int64)
        for t in range(NUM_SUITS):
            others = [s for s in range(NUM_SUITS) if s != t]
            rename = [0] * NUM_SUITS
            rename[t] = NUM_SUITS - 1
            for new, s in enumerate(others):
                rename[s] = new
            self._canonical[t] = by_perm[tuple(rename)]

    def trump(self, obs: np.ndarray) -> np.ndarray:
        """Trump suit per row of ``(n, size)`` observations (4 for no trump or none shown)."""
        onehot = np.atleast_2d(obs)[:, self._trump : self._trump + NUM_SUITS] > 0.5
        return np.where(onehot.any(axis=1), np.argmax(onehot, axis=1), NUM_SUITS)

    def canonical(self, obs: np.ndarray) -> np.ndarray:
        """Per row, the permutation id that makes trump spades (the identity without trump)."""
        return self._canonical[self.trump(obs)]

    @staticmethod
    def compose(first: np.ndarray, then: np.ndarray) -> np.ndarray:
        """Permutation ids of applying ``first`` and then ``then`` (elementwise over rows)."""
        table = {sigma: i for i, sigma in enumerate(PERMUTATIONS)}
        pairs = zip(first, then, strict=True)
        return np.array([table[tuple(PERMUTATIONS[b][PERMUTATIONS[a][s]] for s in range(NUM_SUITS))] for a, b in pairs])

    def obs(self, obs: np.ndarray, perm: np.ndarray) -> np.ndarray:
        """``obs`` (``(n, size)``) with the suits of row ``i`` renamed by ``perm[i]``."""
        return np.take_along_axis(obs, self._obs_src[perm], axis=1)

    def obs_columns(self, cols: np.ndarray, perm: np.ndarray) -> np.ndarray:
        """Column indices ``cols`` (``(n, k)`` int64: the columns of row ``i``'s non-zero entries, padded with
        ``size``) renamed by ``perm[i]``: the columns where :meth:`obs` puts those entries (the pad stays ``size``).
        The sparse twin of :meth:`obs`, for a learner that reads only the non-zero entries: it touches ``n * k``
        entries, not ``n * size``."""
        return self._obs_dst[np.asarray(perm, np.int64)[:, None] * (self.layout.size + 1) + cols]

    def mask(self, mask: np.ndarray, perm: np.ndarray) -> np.ndarray:
        """Action masks (``(n, num_actions)``) renamed like :meth:`obs`."""
        return np.take_along_axis(mask, self._act_src[perm], axis=1)

    def action(self, action: np.ndarray, perm: np.ndarray) -> np.ndarray:
        """Actions of the real game renamed into the permuted game (the label of a permuted row)."""
        return self._act_dst[perm, action]

    def action_back(self, action: np.ndarray, perm: np.ndarray) -> np.ndarray:
        """Actions chosen in the permuted game, as the real game's actions."""
        return self._act_src[perm, action]
