"""Observation of ``oh_hell_v0``: the common trick pieces plus the bids, the schedule and the standings."""

from __future__ import annotations

from whist_env.encoding import layout as L
from whist_env.encoding.trick import TrickEncoder
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
        super().__init__(num_players, max_bid, phases=("bidding", "play"))
        off = self.layout.offsets
        lab = self.seat_labels
        n = num_players
        self._o_k = off["hand_size"]
        self._o_after = off.get("deals_after", -1)
        self._o_drawn = off.get("drawn_card", -1)
        self._o_lost = off["lost"]
        # One seat's pieces form a block of ``stride`` bits, blocks in relative seat order: the blocks
        # of all seats are built once in absolute order (memoised: they change once per trick) and
        # rotated for the observer in a few int operations.
        self._o_blocks = off[f"bid[{lab[0]}]"]
        self._need_at = off[f"need[{lab[0]}]"] - self._o_blocks
        self._behind_at = off[f"behind[{lab[0]}]"] - self._o_blocks if self.match else -1
        self._stride = off[f"bid[{lab[1]}]"] - self._o_blocks
        assert all(off[f"bid[{lab[r]}]"] == self._o_blocks + r * self._stride for r in range(n))
        self._memo: tuple[object, int, int] = (None, 0, 0)  # key -> (absolute blocks, lost flags)

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

    def _blocks(
        self, bids: tuple[int, ...], tricks: tuple[int, ...], k: int, scores: tuple[float, ...]
    ) -> tuple[int, int]:
        """The blocks and the lost flags of every seat, in absolute seat order."""
        stride, need_at, behind_at = self._stride, self._need_at, self._behind_at
        left = k - sum(tricks)
        lead = max(scores)
        blocks = lost = 0
        for s, b in enumerate(bids):
            at = s * stride
            if behind_at >= 0:
                gap = -int(-(lead - scores[s]) // SCORE_UNIT)  # rounded up
                blocks |= 1 << (at + behind_at + (gap if gap < BEHIND_MAX else BEHIND_MAX))
            if b < 0:
                blocks |= 1 << at  # not yet bid
                continue
            blocks |= 1 << (at + 1 + b)
            t = tricks[s]
            if t <= b:
                blocks |= 1 << (at + need_at + b - t)
                if b - t > left:
                    lost |= 1 << s
            else:
                lost |= 1 << s
        return blocks, lost

    def encode_game(self, view: PlayerView) -> tuple[int, list[float]]:
        extra = view.extra
        bids = extra["bids"]
        k = extra["hand_size"]
        key = (bids, view.tricks_won, k, view.scores)
        memo = self._memo
        if memo[0] == key:
            blocks, lost = memo[1], memo[2]
        else:
            blocks, lost = self._blocks(*key)
            self._memo = (key, blocks, lost)
        me = view.seat
        if me:
            n = self.n
            cut = me * self._stride
            blocks = (blocks >> cut) | ((blocks & ((1 << cut) - 1)) << (n * self._stride - cut))
            lost = (lost >> me) | ((lost & ((1 << me) - 1)) << (n - me))
        bits = (1 << (self._o_k + k)) | (blocks << self._o_blocks) | (lost << self._o_lost)
        if self._o_after >= 0:
            bits |= 1 << (self._o_after + self.num_deals - 1 - view.deal_index)
        drawn = extra["drawn_card"]
        if drawn >= 0 and self._o_drawn >= 0:
            bits |= 1 << (self._o_drawn + drawn)
        return bits, []
