"""The card-fact pieces of every trick layout (``master``, ``winning_now``, ``out[♣]`` ... ``out[♠]``, issue #13).

``test_reference_encoders.py`` holds the whole fast vector to the reference, which builds these pieces card by card
with ``whist_env.encoding.features.card_facts_reference``. Here: that those comparisons reach the positions where the
facts matter (tricks in progress with a winning card, with and without trump, without recall), and a position by hand.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from typing import Any

import numpy as np
import pytest

from whist_env import make
from whist_env.cards import NUM_CARDS, NUM_RANKS, mask_of, parse_card, parse_cards
from whist_env.encoding.features import card_facts_reference
from whist_env.encoding.layout import SUIT_LABELS, Layout
from whist_env.registry import game_ids, get_spec
from whist_env.testing import play_random_episode
from whist_env.view import PlayerView

GAMES_WITH_NO_TRUMP_DEALS = {"classic_whist_v0", "oh_hell_v0"}  # trump rotation, Oh Hell's no-trump rounds


def fact_pieces(layout: Layout, obs: np.ndarray) -> np.ndarray:
    """The card-fact pieces of one observation in ``card_facts_reference``'s columns (out as fractions of 13)."""
    out = [float(np.argmax(obs[layout.slice(f"out[{s}]")])) / NUM_RANKS for s in SUIT_LABELS]
    return np.concatenate([obs[layout.slice("master")], obs[layout.slice("winning_now")], np.float32(out)])


@pytest.mark.parametrize("game_id", game_ids())
def test_the_fact_pieces_equal_the_reference_where_they_matter(game_id: str) -> None:
    seen: Counter[str] = Counter()
    for options in get_spec(game_id).option_grid:
        env = make(game_id, raw=True, **dict(options))
        game, layout = env.game, env.encoder.layout
        recall = dict(options).get("include_history", True)
        rng = np.random.default_rng(7)
        for _ in range(3):
            for state in play_random_episode(game, rng, check=False):
                for seat in range(state.num_players):
                    view = game.view(state, seat)
                    facts = fact_pieces(layout, env.encoder.encode(view))
                    np.testing.assert_array_equal(facts, card_facts_reference(view), err_msg=view.summary())
                    seen["no trump"] += view.trump is None
                    if facts[NUM_CARDS : 2 * NUM_CARDS].any():
                        seen["winning, trump" if view.trump is not None else "winning, no trump"] += 1
                        seen["winning" if recall else "winning, no recall"] += 1
    # a game that deals without trump is listed (then a winning card must be seen there too)
    assert (seen["no trump"] > 0) == (game_id in GAMES_WITH_NO_TRUMP_DEALS), seen
    wanted = ["winning, trump", "winning", "winning, no recall"]
    if game_id in GAMES_WITH_NO_TRUMP_DEALS:
        wanted.append("winning, no trump")
    assert all(seen[k] > 0 for k in wanted), seen


def test_the_fact_pieces_by_hand() -> None:
    """German Whist, trump hearts, the opponent led Q♣; A♣ went earlier; I hold K♣ 4♣ 2♥ A♠."""
    env = make("german_whist_v0", raw=True)
    view = env.game.view(env.game.new_episode(np.random.default_rng(0)), 0)

    def mask(*names: str) -> int:
        return mask_of(parse_cards(names))

    position: PlayerView = dataclasses.replace(
        view,
        hand=mask("KC", "4C", "2H", "AS"),
        trump=2,
        trick=((1, parse_card("QC")),),
        played=(mask("AC"), mask("QC")),
    )
    described: dict[str, Any] = env.encoder.layout.unpack(env.encoder.encode(position))
    assert described["master"] == sorted(parse_cards("KC AD AH AS"))  # K♣ now tops clubs
    assert described["winning_now"] == sorted(parse_cards("KC 2H"))  # beats Q♣; any trump
    assert [described[f"out[{s}]"] for s in SUIT_LABELS] == [13 - 2 - 2, 13, 12, 12]
    # without trump the 2♥ no longer wins
    no_trump = env.encoder.layout.unpack(env.encoder.encode(dataclasses.replace(position, trump=None)))
    assert no_trump["winning_now"] == [parse_card("KC")]
