"""Observation of ``oh_hell_v0``: the common trick pieces plus the bids, the schedule and the standings."""

from __future__ import annotations

from typing import Any

from whist_env.encoding import layout as L
from whist_env.encoding.trick import TrickEncoder, seat_rotation, to_relative
from whist_env.games.oh_hell.rules import BID_BASE, OhHellExtras
from whist_env.rules.core import State, TrickGame
from whist_env.view import PlayerView

NOT_YET = "not yet"
SCORE_UNIT = 10  # points per step of ``behind``: about one made bid (RULES.md §4.6: 10 + bid)
BEHIND_MAX = 31  # ``behind`` clips at 310 points


class OhHellEncoder(TrickEncoder):
    """Common pieces (relative seats me, +1, +2, … clockwise) + the game's own, all binary:

    * ``hand_size``: k of this deal; in a match ``deals_after``: deals still to come after this one.
    * ``drawn_card`` (drawn-trump mode only): public identity, unknown place, so it stays in ``unseen``.
    * per seat ``bid[r]`` (``not yet`` or 0..max), ``need[r]`` (tricks still needed to make the bid,
      while not already over it) and, in a match, ``behind[r]`` (how far r trails the leading total,
      in tens of points rounded up: 0 = leading, clipped at 31).
    * ``lost``: seats whose bid can no longer be made.

    Scores are shown as the standings because they are unbounded (a made bid of 10 or more is
    worth 110+); the exact totals are in ``info["scores"]``.

    Args:
        num_players: seats at the table.
        max_bid: the largest hand size of the episode (sizes bids and trick counts).
        num_deals: deals in the episode.
        drawn_card: whether the game draws a trump card before each deal.
    """

    def __init__(self, num_players: int, max_bid: int, num_deals: int, drawn_card: bool) -> None:
        self.max_bid = max_bid
        self.num_deals = num_deals
        self.drawn_card = drawn_card
        self.match = num_deals > 1
        # RULES.md §0.6: the 52 cards, then bids 0..max_bid (the same count as OhHell.num_actions)
        super().__init__(num_players, max_bid, phases=("bidding", "play"), num_actions=BID_BASE + max_bid + 1)
        off = self.layout.offsets
        lab = self.seat_labels
        n = num_players
        self._o_k = off["hand_size"]
        self._o_after = off.get("deals_after", -1)
        self._o_drawn = off.get("drawn_card", -1)
        self._o_lost = off["lost"]
        # One seat's pieces form a block of ``stride`` bits, blocks in relative seat order: the blocks
        # of all seats are built once in absolute order (memoised: they change once per bid or trick)
        # and turned for the observer in a few int operations.
        self._o_blocks = off[f"bid[{lab[0]}]"]
        stride = off[f"bid[{lab[1]}]"] - self._o_blocks
        assert all(off[f"bid[{lab[r]}]"] == self._o_blocks + r * stride for r in range(n))
        need_at = off[f"need[{lab[0]}]"] - self._o_blocks
        # per seat, in absolute order: the bit of each bid (index 0: not yet) and of each ``need``
        self._bid_bits = [[1 << (s * stride + i) for i in range(max_bid + 2)] for s in range(n)]
        self._need_bits = [[1 << (s * stride + need_at + i) for i in range(max_bid + 1)] for s in range(n)]
        behind_at = off[f"behind[{lab[0]}]"] - self._o_blocks if self.match else -1
        self._behind_at = [s * stride + behind_at for s in range(n)]
        # per observer: how to turn the seat blocks and the lost flags to relative seat order
        self._turn_blocks = [seat_rotation(n, me, stride) for me in range(n)]
        self._turn_lost = [seat_rotation(n, me, 1) for me in range(n)]
        # (bids, tricks, scores, k, deal index, drawn card) -> (that key, blocks, lost flags, the other
        # bits, and per observer the game's bits once asked for)
        self._memo: tuple[object, int, int, int, list[int | None]] = (None, 0, 0, 0, [])
        self._standings_memo: tuple[object, int] = (None, 0)  # scores -> the ``behind`` bits

    def game_pieces(self) -> list[L.Piece]:
        lab = self.seat_labels
        b = self.max_bid
        pieces = [L.count("hand_size", b, "cards each seat was dealt this deal (k)")]
        if self.match:
            pieces.append(L.count("deals_after", self.num_deals - 1, "deals still to come after this one"))
        if self.drawn_card:
            pieces.append(L.cards("drawn_card", "the card drawn for trump before this deal (its place is unknown)"))
        bid_labels = (NOT_YET, *(str(i) for i in range(b + 1)))
        for r in range(self.n):
            pieces.append(L.onehot(f"bid[{lab[r]}]", bid_labels, f"{lab[r]}'s bid this deal"))
            pieces.append(L.count(f"need[{lab[r]}]", b, f"tricks {lab[r]} still needs for the bid (none once over)"))
            if self.match:
                pieces.append(
                    L.count(f"behind[{lab[r]}]", BEHIND_MAX, f"how far {lab[r]} trails the leader, in tens of points")
                )
        pieces.append(L.flags("lost", lab, "seats whose bid can no longer be made"))
        return pieces

    def _deal_bits(
        self,
        bids: tuple[int, ...],
        tricks: tuple[int, ...],
        scores: tuple[float, ...],
        k: int,
        deal_index: int,
        drawn: int,
    ) -> tuple[int, int, int]:
        """The seat blocks and lost flags in absolute seat order, and the bits no seat owns."""
        left = k - sum(tricks)
        blocks = self._standings(scores)
        lost = 0
        for s, b in enumerate(bids):
            blocks |= self._bid_bits[s][b + 1]  # index 0: not yet bid
            if b < 0:
                continue
            t = tricks[s]
            if t <= b:
                blocks |= self._need_bits[s][b - t]
                if b - t > left:
                    lost |= 1 << s
            else:
                lost |= 1 << s
        other = 1 << (self._o_k + k)
        if self._o_after >= 0:
            other |= 1 << (self._o_after + self.num_deals - 1 - deal_index)
        if drawn >= 0 and self._o_drawn >= 0:
            other |= 1 << (self._o_drawn + drawn)
        return blocks, lost, other

    def _standings(self, scores: tuple[float, ...]) -> int:
        """The ``behind`` bits of every seat in absolute seat order (none outside a match); memoised."""
        memo = self._standings_memo
        if memo[0] == scores:
            return memo[1]
        bits = 0
        if self.match:
            lead = max(scores)
            for at, score in zip(self._behind_at, scores, strict=True):
                gap = -int(-(lead - score) // SCORE_UNIT)  # rounded up
                bits |= 1 << (at + (gap if gap < BEHIND_MAX else BEHIND_MAX))
        self._standings_memo = (scores, bits)
        return bits

    def encode_game(self, view: PlayerView) -> tuple[int, list[float]]:
        # only this game's views come here: an annotation, as cast() is a call on every observation
        extra: OhHellExtras = view.extra  # type: ignore[assignment]
        return self._game_bits(extra, view.seat, view.tricks_won, view.scores, view.deal_index)

    def encode_game_state(self, game: TrickGame[Any], state: State, seat: int) -> tuple[int, list[float]]:
        """:meth:`encode_game` of this seat's view, read from the state (``encode_state``'s path)."""
        extra: OhHellExtras = game.view_extra(state, seat)  # type: ignore[assignment]
        return self._game_bits(extra, seat, tuple(state.tricks_won), tuple(state.scores), state.deal_index)

    def _game_bits(
        self, extra: OhHellExtras, me: int, tricks: tuple[int, ...], scores: tuple[float, ...], deal_index: int
    ) -> tuple[int, list[float]]:
        key = (extra.bids, tricks, scores, extra.hand_size, deal_index, extra.drawn_card)
        memo = self._memo
        if memo[0] != key:
            memo = self._memo = (key, *self._deal_bits(*key), [None] * self.n)
        bits = memo[4][me]
        if bits is None:
            bits = memo[4][me] = self._observer_bits(memo[1], memo[2], memo[3], me)
        return bits, []

    def _observer_bits(self, blocks: int, lost: int, other: int, me: int) -> int:
        """The game's bits for observer ``me`` from the seat blocks and lost flags in absolute order."""
        if me:
            blocks = to_relative(blocks, self._turn_blocks[me])
            lost = to_relative(lost, self._turn_lost[me])
        return other | (blocks << self._o_blocks) | (lost << self._o_lost)
