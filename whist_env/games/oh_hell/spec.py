"""The spec of Oh Hell (``whist_env/oh_hell_v0.py`` is its PettingZoo face)."""

from __future__ import annotations

from whist_env.encoding.trick import TrickEncoder
from whist_env.games.oh_hell.encoding import OhHellEncoder
from whist_env.games.oh_hell.rules import OhHell, OhHellState
from whist_env.spec import GameSpec


def make_encoder(game: OhHell) -> TrickEncoder:
    """The observation encoder: its size follows the seats, the largest bid, the schedule and the trump mode."""
    return OhHellEncoder(game.num_players, game.max_bid, len(game.schedule), game.drawn)


def hidden_masks(state: OhHellState) -> list[int]:
    """The cards set aside after the deal."""
    return [state.set_aside]


SPEC: GameSpec[OhHell, OhHellState] = GameSpec(
    game_id=OhHell.game_id,
    rules_cls=OhHell,
    make_encoder=make_encoder,
    hidden_pieces=(("set_aside", "cards left over after the deal, face down and out of play (RULES.md §4.2)"),),
    hidden_masks=hidden_masks,
    heuristic="whist_env.games.oh_hell.heuristic:OhHellHeuristic",
    reference="whist_env.games.oh_hell.reference:OhHellReference",
    engine="whist_env.games.oh_hell.engine:OhHellVector",
    engine_heuristic="whist_env.games.oh_hell.engine_heuristic:act_kernel",
    pretrained="whist_env.games.oh_hell:pretrained.npz",
    single_deal={"episode": "deal"},
    unit="one deal of `hand_size` cards (default the largest): the seat's deal score",
    # Every seat plays for itself and the score is exact bidding: the two-sided solver does not apply; ``pimc`` is the
    # game's own playout search.
    search=None,
    search_agent="whist_env.games.oh_hell.search:OhHellSearch",
    # Every n in {2, 3, 4, 5, 8} with every trump mode; matches are kept short with max_cards because the
    # conformance suite plays 2,000 episodes of each entry.
    option_grid=(
        {"max_cards": 3},
        {"num_players": 2, "episode": "deal", "hand_size": 5},
        {"num_players": 2, "trump_mode": "drawn_card", "episode": "deal", "hand_size": 3, "miss_points": "per_trick"},
        {"num_players": 2, "trump_mode": "turn_up", "episode": "deal", "hand_size": 4},
        {"num_players": 3, "episode": "deal", "hand_size": 4, "exact_score_mode": "ten_plus_bid"},
        {"num_players": 3, "trump_mode": "drawn_card", "max_cards": 2, "include_history": False},
        {"num_players": 3, "trump_mode": "turn_up", "episode": "deal", "hand_size": 3},
        {"num_players": 4, "trump_mode": "drawn_card", "episode": "deal", "hand_size": 13},
        {
            "num_players": 4,
            "trump_mode": "turn_up",
            "exact_score_mode": "ten_plus_bid",
            "miss_points": "per_trick",
            "max_cards": 3,
        },
        {"num_players": 5, "episode": "deal", "hand_size": 2, "miss_points": "per_trick"},
        {"num_players": 5, "trump_mode": "drawn_card", "episode": "deal", "hand_size": 3},
        {
            "num_players": 5,
            "trump_mode": "turn_up",
            "episode": "deal",
            "hand_size": 10,
            "exact_score_mode": "ten_plus_bid",
        },
        {"num_players": 8, "max_cards": 2, "exact_score_mode": "ten_plus_bid"},
        {"num_players": 8, "trump_mode": "drawn_card", "episode": "deal", "hand_size": 2},
        {"num_players": 8, "trump_mode": "turn_up", "episode": "deal", "hand_size": 6, "miss_points": "per_trick"},
    ),
)
