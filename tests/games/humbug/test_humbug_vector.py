"""English Humbug's batched engine beyond the lockstep test: the deal, the study step, open table, a series, and
the export and import of positions (RULES.md §3)."""

from __future__ import annotations

import numpy as np
import pytest

import whist_env.vector as vector
from whist_env import make
from whist_env.errors import OptionError
from whist_env.games.classic_whist.rules import ClassicWhistState
from whist_env.testing import follow_twin, random_legal, unchanged

GAME = "humbug_v0"
B = 6


def card_bits(mask: int) -> np.ndarray:
    """A 52-bit card mask as 52 0/1 entries."""
    return np.array([(int(mask) >> c) & 1 for c in range(52)], np.uint8)


def test_the_deal_and_the_study_step() -> None:
    """RULES.md §3.1: alternately from the non-dealer, the dealer's last card sets trump and stays in his hand (not
    public, but its id is in every observation); §3.3: a seat sees both dealt hands until its first card."""
    rng = np.random.default_rng(0)
    decks = np.array([rng.permutation(52) for _ in range(B)])
    dealers = np.array([0, 1, 0, 1, 1, 0])
    venv = vector.make(GAME, B, seed=0)
    ts = venv.reset(options={"decks": decks, "dealers": dealers})
    layout = venv.encoder.layout
    hands = venv.field("hands")
    for i in range(B):
        d, n = int(dealers[i]), 1 - int(dealers[i])
        assert int(hands[i, n]) == sum(1 << int(c) for c in decks[i, 0::2])
        assert int(hands[i, d]) == sum(1 << int(c) for c in decks[i, 1::2])
        assert ts.current_player[i] == n and venv.field("trump")[i, 0] == decks[i, 51] // 13
        assert venv.field("turn_up_public")[i, 0] == 0
    for step in range(4):  # each seat studies until it has played: two tricks
        for seat in range(2):
            obs, _ = venv.observe(np.full(B, seat))
            played = venv.field("played")[:, seat] != 0
            for i in range(B):
                mine = obs[i, layout.slice("initial_layout[me]")]
                theirs = obs[i, layout.slice("initial_layout[opponent]")]
                assert np.array_equal(mine, card_bits(0 if played[i] else venv.field("dealt")[i, seat])), step
                assert np.array_equal(theirs, card_bits(0 if played[i] else venv.field("dealt")[i, 1 - seat])), step
                known = obs[i, layout.slice("known[opponent]")]  # hidden_hand: only while studying
                assert np.array_equal(known, card_bits(0 if played[i] else hands[i, 1 - seat])), step
                assert obs[i, layout.slice("turn_up")][decks[i, 51]] == 1
        ts = venv.step(random_legal(ts.action_mask, rng))


def test_open_table_shows_the_opponent_throughout() -> None:
    venv = vector.make(GAME, B, seed=1, mode="open_table")
    ts = venv.reset()
    rng = np.random.default_rng(1)
    layout = venv.encoder.layout
    for _ in range(30):
        ts = venv.step(random_legal(ts.action_mask, rng))
        opp = 1 - ts.current_player
        for i in range(B):
            want = card_bits(venv.field("hands")[i, opp[i]])
            assert np.array_equal(ts.observation[i, layout.slice("known[opponent]")], want)
    with pytest.raises(OptionError, match="include_history=True is not allowed with mode='hidden_hand'"):
        vector.make(GAME, 2, include_history=True)


def test_a_series_pays_each_deal_and_ends_after_the_last() -> None:
    venv = vector.make(GAME, B, seed=2, num_deals=2)
    ts = venv.reset()
    assert ts.observation.dtype == np.float32  # the series' balance and deals left are scalars
    rng = np.random.default_rng(2)
    paid = np.zeros((B, 2))
    for deal in range(2):
        for _ in range(52):
            assert not ts.terminated.any()
            ts = venv.step(random_legal(ts.action_mask, rng))
            paid += ts.rewards
        assert (ts.rewards[:, 0] == -ts.rewards[:, 1]).all() and (ts.rewards[:, 0] % 2 == 0).all()
        assert (venv.field("deal_index")[:, 0] == min(deal + 1, 1)).all()
    assert ts.terminated.all() and (ts.current_player == -1).all()
    tricks = venv.field("tricks_won")[:, :2]  # the last deal's, kept once the episode is over
    assert np.array_equal(ts.rewards[:, 0], tricks[:, 0] - tricks[:, 1])  # §3.4: ± the trick difference
    assert np.array_equal(paid[:, 0], venv.field("returns")[:, 0])
    assert [venv.export_state(i).scores for i in range(B)] == venv.field("returns")[:, :2].tolist()


@pytest.mark.parametrize("options", [{}, {"mode": "open_table", "num_deals": 2}], ids=str)
def test_export_and_import_carry_a_position(options: dict[str, object]) -> None:
    """A rules state from the AEC env, imported mid-deal, plays on as the AEC env does."""
    rng = np.random.default_rng(7)
    twin = make(GAME, raw=True, **options)
    twin.reset(seed=12)
    for _ in range(15):
        twin.step(int(rng.choice(np.flatnonzero(twin.observe(twin.agent_selection)["action_mask"]))))
    venv = vector.make(GAME, B, seed=1, **options)
    venv.reset()
    venv.import_state(3, twin.game_state.copy())
    assert venv.decks()[3].tolist() == [-1] * 52
    follow_twin(venv, 3, twin, 52 - 15, rng)  # to the end of the first deal
    venv.import_state(0, venv.export_state(3))
    assert np.array_equal(venv.observe(np.ones(B, np.int64))[0][0], venv.observe(np.ones(B, np.int64))[0][3])


def test_import_refuses_what_is_not_a_humbug_position() -> None:
    venv = vector.make(GAME, B, seed=0)
    venv.reset()
    twin = make(GAME, raw=True)
    twin.reset(seed=0)
    with pytest.raises(OptionError, match="takes a State \\(Humbug's own\\), got ClassicWhistState"):
        venv.import_state(0, ClassicWhistState(4, 0))
    state = twin.game_state.copy()
    state.hands[0] |= state.hands[1]
    with unchanged(venv), pytest.raises(OptionError, match="inconsistent state"):
        venv.import_state(0, state)
    state = twin.game_state.copy()
    state.scores = [1, -1]  # a balance the returns do not show
    with unchanged(venv), pytest.raises(OptionError, match="balance \\(scores\\) equal to the returns"):
        venv.import_state(0, state)
