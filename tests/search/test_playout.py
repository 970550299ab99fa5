"""Playouts on the batched engine (PIMC's ``playouts``): the engine's playouts against the same deals played through
the rules with the Python agents (the plain twin), the row a view gives against the engine's own import, and the
option's errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from whist_env.agents import make_agent
from whist_env.agents.factory import heuristic_for
from whist_env.cards import bits_of
from whist_env.errors import OptionError
from whist_env.games.classic_whist.engine import GAME_VALUES
from whist_env.games.classic_whist.rules import ClassicWhist, ClassicWhistState
from whist_env.search.pimc import PIMCAgent
from whist_env.search.playout import Playouts
from whist_env.vector.core import DEAL_INDEX, HIST, RET, TURN_UP
from whist_env.vector.engines import make

GAME = "classic_whist_v0"
OPTIONS: list[dict[str, Any]] = [
    {"episode": "deal"},
    {},  # whole games (the shipped network's options): the playouts still end with the deal
]


def positions(options: dict[str, Any], count: int, seed: int) -> list[ClassicWhistState]:
    """``count`` card-play positions of random classic whist games (random cards, some deals into the episode)."""
    game = ClassicWhist(**options)
    rng = np.random.default_rng(seed)
    out: list[ClassicWhistState] = []
    while len(out) < count:
        state = game.new_episode(rng)
        for _ in range(int(rng.integers(0, 80))):
            if state.done:
                break
            game.step(state, int(rng.choice(game.legal_actions(state))), rng)
        if not state.done:
            out.append(state)
    return out


def _dealer_holds_a_hidden_turn_up(state: ClassicWhistState) -> bool:
    """Whether the dealer is to act holding the turn-up after it stopped being public: the others know it is there,
    but the dealer's view does not name it, so a row from that view cannot give it (``import_view``); the
    positions are left out of the exact comparisons (the last trick too: nothing to play out)."""
    d = state.dealer
    return (
        state.to_act == d
        and not state.turn_up_public
        and state.turn_up >= 0
        and bool(state.hands[d] >> state.turn_up & 1)
    )


def rules_values(options: dict[str, Any], state: ClassicWhistState, who: str) -> list[int]:
    """The twin: for each legal card, the tricks of the mover's side from now to the deal's end when the card is
    played and the agent ``who`` then plays every seat, through the rules of one deal (as the playouts play)."""
    one_deal = {**options, "episode": "deal"}
    game = ClassicWhist(**one_deal)
    agent = make_agent(who, GAME, **one_deal)
    me = state.to_act
    seats = (me, (me + 2) % 4)
    out = []
    for card in game.legal_actions(state):
        s = state.copy()
        before = sum(s.tricks_won[x] for x in seats)
        rng = np.random.default_rng(0)
        game.step(s, card, rng)
        while not s.done:
            game.step(s, agent.act(game.view(s, s.to_act), rng), rng)
        out.append(sum(s.tricks_won[x] for x in seats) - before)
    return out


@pytest.mark.filterwarnings("ignore:.*only the episode length differs")
@pytest.mark.parametrize("options", OPTIONS)
@pytest.mark.parametrize("who", ["heuristic", "pretrained"])
def test_playouts_equal_the_rules_played_by_the_same_agent(options: dict[str, Any], who: str) -> None:
    """On 40 random positions per case, with every hand as it really is, each legal card's playout on the engine
    gives the tricks the same agent makes of it through the rules: the row a view gives is the game as the agent
    sees it (nothing a decision reads is missing from it)."""
    game = ClassicWhist(**options)
    agent = make_agent(who, GAME, **options)
    playouts = Playouts(GAME, agent, **options)
    for state in positions(options, 40, seed=len(options) + len(who)):
        if sum(state.tricks_won) == 12 or _dealer_holds_a_hidden_turn_up(state):
            continue
        view = game.view(state, state.to_act)
        cards = game.legal_actions(state)
        got = playouts.values(view, np.array([state.hands]), cards)[0]
        want = rules_values(options, state, who)
        assert got.tolist() == want, (state.trick_number, cards)


def test_a_view_gives_the_row_the_engine_imports_from_the_state() -> None:
    """``import_view`` with the true hands writes the row ``import_state`` writes from the whole state, except what a
    view cannot give and no kernel reads within the deal (the order of the cards played, the returns so far, the
    values of games won before, the deal's index, a turn-up already played)."""
    options = {"target_points": 7, "honours": True}
    game = ClassicWhist(**options)
    venv = make(GAME, 2, seed=0, **options)
    unknown = np.zeros(venv._state.shape[1], bool)
    unknown[HIST : HIST + 52] = True
    unknown[RET : RET + 4] = True
    unknown[GAME_VALUES : GAME_VALUES + 6] = True
    unknown[DEAL_INDEX] = True  # which deal of the episode: read only when the next deal starts
    for state in positions(options, 60, seed=3):
        if _dealer_holds_a_hidden_turn_up(state):
            continue
        venv.import_state(0, state)
        venv.import_view(np.array([1]), game.view(state, state.to_act), np.array([state.hands]))
        a, b = venv._state[0], venv._state[1]
        gone = state.turn_up >= 0 and not state.hands[state.dealer] >> state.turn_up & 1
        diff = np.flatnonzero((a != b) & ~unknown)
        if gone:  # a turn-up the dealer played: no kernel reads it again, and a view need not name it
            diff = diff[diff != TURN_UP]
        assert not len(diff), (diff, a[diff], b[diff])


def test_pimc_with_playouts_plays_legal_cards_and_repeats() -> None:
    """The hybrid with playouts in the opening: legal cards, the same card from the same generator, and a card the
    plain fallback would not always play (the playouts decide)."""
    options = {"episode": "deal"}
    game = ClassicWhist(**options)
    agent = PIMCAgent(GAME, playouts=4, fallback=heuristic_for(GAME, **options), **options)
    heuristic = heuristic_for(GAME, **options)
    differ = 0
    for state in positions(options, 30, seed=7):
        view = game.view(state, state.to_act)
        card = agent.act(view, np.random.default_rng(1))
        assert view.legal >> card & 1
        assert agent.act(view, np.random.default_rng(1)) == card
        differ += card != heuristic.act(view, np.random.default_rng(1))
    assert differ > 0


def test_playout_errors_name_what_is_allowed() -> None:
    with pytest.raises(OptionError, match="playouts must be None or an int >= 1"):
        PIMCAgent(GAME, playouts=0)
    with pytest.raises(OptionError, match="batched form"):
        PIMCAgent(GAME, playouts=4, fallback=make_agent("random", GAME))
    with pytest.raises(OptionError, match="does not take a seat's view"):
        PIMCAgent("humbug_v0", playouts=4, max_tricks=12)
    with pytest.raises(OptionError, match="does not take a seat's view"):
        make(GAME.replace("classic_whist", "humbug"), 1, seed=0).import_view(np.array([0]), *_humbug_view())
    with pytest.raises(OptionError, match="include_history=True"):
        PIMCAgent(GAME, playouts=4, episode="deal", include_history=False)
    venv = make(GAME, 1, seed=0)
    state = positions({}, 1, seed=0)[0]
    view = ClassicWhist().view(state, state.to_act)
    wrong = list(state.hands)
    wrong[view.seat] = 0
    with pytest.raises(OptionError, match="another hand than its view"):
        venv.import_view(np.array([0]), view, np.array([wrong]))
    twice = list(state.hands)
    other = (view.seat + 1) % 4
    twice[other] |= state.hands[(view.seat + 2) % 4]
    with pytest.raises(OptionError, match="a card twice"):
        venv.import_view(np.array([0]), view, np.array([twice]))


def _humbug_view() -> tuple[Any, np.ndarray]:
    from whist_env.games.humbug.rules import Humbug

    game = Humbug()
    rng = np.random.default_rng(0)
    state = game.new_episode(rng)
    while len(bits_of(game.legal_mask(state))) < 2:
        game.step(state, game.legal_actions(state)[0], rng)
    return game.view(state, state.to_act), np.array([state.hands])
