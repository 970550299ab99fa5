"""Swedish Humbug whist's batched engine beyond the lockstep test: the four hands, the exchange phase in both
orders, the honours and game episodes, bad input, and the export and import of positions (RULES.md §1)."""

from __future__ import annotations

import numpy as np
import pytest

import whist_env.vector as vector
from whist_env import make
from whist_env.errors import IllegalActionError, OptionError
from whist_env.games.humbug_whist.rules import EXCHANGE, KEEP
from whist_env.rules.core import PHASE_EXCHANGE, PHASE_PLAY, State
from whist_env.rules.core import _all_slots as all_slots
from whist_env.testing import follow_twin, random_legal, unchanged

GAME = "humbug_whist_v0"
B = 6


def mask_of(cards: np.ndarray) -> int:
    return sum(1 << int(c) for c in cards)


def test_the_four_hands_and_the_exchange_decisions() -> None:
    """RULES.md §1.3: ``deck[k]`` to ``[L, N, R, D][k % 4]``, L the non-dealer's blind, R the dealer's; §1.4: the
    non-dealer decides first (public at once), then the dealer; an exchange swaps a hand for its blind, and the
    dealer's puts the turn-up away; then the dealer leads (§1.5)."""
    rng = np.random.default_rng(0)
    decks = np.array([rng.permutation(52) for _ in range(B)])
    dealers = np.array([0, 1, 0, 1, 0, 1])
    venv = vector.make(GAME, B, seed=0)
    ts = venv.reset(options={"decks": decks, "dealers": dealers})
    layout = venv.encoder.layout
    n = 1 - dealers
    rows = np.arange(B)
    assert np.array_equal(ts.current_player, n) and (venv.field("phase")[:, 0] == PHASE_EXCHANGE).all()
    assert (ts.action_mask[:, :52] == 0).all() and (ts.action_mask[:, [KEEP, EXCHANGE]] == 1).all()
    for i in range(B):
        assert venv.field("blinds")[i, n[i]] == mask_of(decks[i, 0::4])
        assert venv.field("hands")[i, n[i]] == mask_of(decks[i, 1::4])
        assert venv.field("blinds")[i, dealers[i]] == mask_of(decks[i, 2::4])
        assert venv.field("hands")[i, dealers[i]] == mask_of(decks[i, 3::4])
    old_hands = venv.field("hands")[:, :2].copy()
    old_blinds = venv.field("blinds").copy()
    ts = venv.step(np.array([EXCHANGE, KEEP, EXCHANGE, KEEP, EXCHANGE, KEEP]))  # the non-dealers
    assert np.array_equal(ts.current_player, dealers)
    seen = ts.observation[:, layout.slice("exchange[opponent]")]  # the dealer sees the decision at once
    assert np.array_equal(seen, np.array([[0, 1], [1, 0]] * 3, np.uint8))
    assert np.array_equal(venv.field("hands")[rows, n][::2], old_blinds[rows, n][::2])
    ts = venv.step(np.array([EXCHANGE, EXCHANGE, KEEP, KEEP, EXCHANGE, EXCHANGE]))  # the dealers
    assert np.array_equal(ts.current_player, dealers) and (venv.field("phase")[:, 0] == PHASE_PLAY).all()
    dealer_swapped = np.array([1, 1, 0, 0, 1, 1], bool)
    assert np.array_equal(venv.field("put_away")[rows, dealers] != 0, dealer_swapped)
    assert np.array_equal(
        venv.field("put_away")[rows, dealers][dealer_swapped], old_hands[rows, dealers][dealer_swapped]
    )
    assert np.array_equal(venv.field("turn_up_public")[:, 0] == 0, dealer_swapped)
    status = ts.observation[:, layout.slice("turn_up_status")]  # face up, taken up, discarded
    assert np.array_equal(status.argmax(axis=1), np.where(dealer_swapped, 2, 0))
    discarded = ts.observation[:, layout.slice("discarded_turn_up")]
    assert np.array_equal(discarded.sum(axis=1), dealer_swapped.astype(np.int64))
    assert (ts.action_mask[:, 52:] == 0).all()


def test_the_simultaneous_order_hides_the_first_decision_until_both() -> None:
    venv = vector.make(GAME, B, seed=1, exchange_order="simultaneous")
    venv.reset()
    layout = venv.encoder.layout
    before = venv.field("hands")[:, :2].copy()
    ts = venv.step(np.full(B, EXCHANGE))
    assert np.array_equal(venv.field("hands")[:, :2], before)  # not applied yet
    assert not ts.observation[:, layout.slice("exchange[opponent]")].any()
    ts = venv.step(np.full(B, KEEP))
    assert (venv.field("put_away")[:, :2] != 0).sum(axis=1).tolist() == [1] * B
    assert (ts.observation[:, layout.slice("exchange[opponent]")].argmax(axis=1) == 1).all()


def test_an_exchange_action_in_play_and_a_card_in_the_exchange_are_refused() -> None:
    venv = vector.make(GAME, B, seed=2)
    ts = venv.reset()
    rng = np.random.default_rng(2)
    actions = random_legal(ts.action_mask, rng)
    actions[4] = 0
    with unchanged(venv), pytest.raises(IllegalActionError, match=r"environment\(s\) 4;.* in the exchange phase"):
        venv.step(actions)
    for _ in range(3):
        ts = venv.step(random_legal(ts.action_mask, rng))
    actions = random_legal(ts.action_mask, rng)
    actions[1] = KEEP
    with unchanged(venv), pytest.raises(IllegalActionError, match=r"environment\(s\) 1;.* cannot play KEEP; legal: "):
        venv.step(actions)


@pytest.mark.parametrize("episode", ["deal", "game"])
def test_one_deal_or_one_game_episodes(episode: str) -> None:
    """§1.7: ``episode="deal"`` pays ± the trick difference after one deal; ``"game"`` ± the game's value."""
    venv = vector.make(GAME, B, seed=3, episode=episode)
    ts = venv.reset()
    rng = np.random.default_rng(3)
    done = np.zeros(B, bool)
    paid = np.zeros((B, 2))
    for _ in range(28 * 9):
        ts = venv.step(random_legal(ts.action_mask, rng))
        paid += np.where(done[:, None], 0, ts.rewards)
        done |= ts.terminated
        if done.all():
            break
    assert done.all() and (paid[:, 0] == -paid[:, 1]).all()
    if episode == "deal":
        assert (np.abs(paid[:, 0]) % 2 == 1).all()  # 13 tricks: an odd difference, never a draw
    else:
        assert set(np.abs(paid[:, 0]).tolist()) <= {1, 2, 3}


def test_state_gives_the_blinds_and_the_hands_put_away() -> None:
    venv = vector.make(GAME, B, seed=4)
    venv.reset()
    venv.step(np.full(B, EXCHANGE))
    venv.step(np.full(B, KEEP))
    hidden = venv.state()[:, 2 * 52 : 6 * 52].reshape(B, 4, 52)
    rows = np.arange(B)
    n = 1 - venv.field("dealer")[:, 0]
    assert (hidden[rows, n].sum(axis=1) == 0).all()  # the non-dealer took his blind
    assert (hidden[rows, 1 - n].sum(axis=1) == 13).all()  # the dealer's lies untaken
    assert (hidden[rows, 2 + n].sum(axis=1) == 13).all() and (hidden[rows, 3 - n].sum(axis=1) == 0).all()


@pytest.mark.parametrize("options", [{}, {"include_history": False, "exchange_order": "simultaneous"}], ids=str)
def test_export_and_import_carry_a_position(options: dict[str, object]) -> None:
    """A rules state from the AEC env, imported in play, plays on as the AEC env does (into the next deal)."""
    rng = np.random.default_rng(7)
    twin = make(GAME, raw=True, **options)
    twin.reset(seed=12)
    for _ in range(9):
        twin.step(int(rng.choice(np.flatnonzero(twin.observe(twin.agent_selection)["action_mask"]))))
    venv = vector.make(GAME, B, seed=1, **options)
    venv.reset()
    venv.import_state(2, twin.game_state.copy())
    assert venv.decks()[2].tolist() == [-1] * 52
    follow_twin(venv, 2, twin, 26 - 7, rng)  # to the end of the first deal
    assert venv.field("game_deals")[2, 0] == twin.game_state.game_deals
    venv.import_state(0, venv.export_state(2))
    assert np.array_equal(venv.observe(np.ones(B, np.int64))[0][0], venv.observe(np.ones(B, np.int64))[0][2])


def test_import_refuses_what_is_not_a_humbug_whist_position() -> None:
    """An exchange-phase state imports (and plays on as the rules do); a deal or over state of another game, or an
    inconsistent one, is refused with no environment changed."""
    venv = vector.make(GAME, B, seed=0)
    venv.reset()
    twin = make(GAME, raw=True)
    twin.reset(seed=0)
    venv.import_state(3, twin.game_state.copy())
    for action in (EXCHANGE, KEEP):
        venv.step(np.where(np.arange(B) == 3, action, KEEP))
        twin.step(action)
        assert np.array_equal(venv.observe(np.zeros(B, np.int64))[0][3], twin.observe("player_0")["observation"])
    assert state_equal(venv.export_state(3), twin.game_state)
    with pytest.raises(OptionError, match="takes a HumbugWhistState, got State"):
        venv.import_state(0, State(2, 0))
    state = twin.game_state.copy()
    state.blinds = list(state.blinds)
    state.blinds[0] |= state.hands[0]  # a card in two places
    with unchanged(venv), pytest.raises(OptionError, match="inconsistent state"):
        venv.import_state(0, state)


def state_equal(a: State, b: State) -> bool:
    """Two rules states equal in every slot but the last deal's summary (which the engine does not keep)."""
    return all(getattr(a, k) == getattr(b, k) for k in all_slots(type(b)) if k != "deal_summary")
