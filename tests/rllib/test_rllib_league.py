"""The league's rules (``whist_env.learning.rllib.league``): plain Python, no Ray needed."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from whist_env.errors import OptionError
from whist_env.learning.rllib.league import (
    MAIN,
    agent_id,
    check_opponents,
    draw_table,
    is_module,
    module_for_agent,
    module_ids,
    seat_of,
    snapshot_id,
)
from whist_env.registry import game_ids, get_spec

LEAGUE = {"main": 1.0, "snapshot": 1.0, "heuristic": 1.0, "random": 1.0}


def test_agent_ids_carry_seat_and_module() -> None:
    for seat in range(8):
        for module in module_ids(3):
            aid = agent_id(seat, module)
            assert seat_of(aid) == seat and module_for_agent(aid) == module
    assert module_ids(2) == ["main", "snapshot_0", "snapshot_1"]


def test_mapping_rejects_an_id_without_a_module() -> None:
    with pytest.raises(ValueError, match="names no module"):
        module_for_agent("player_0")


@pytest.mark.parametrize("num_players", range(2, 9))
def test_every_oh_hell_seat_count_gets_a_main_seat_and_valid_roles(num_players: int) -> None:
    sides = get_spec("oh_hell_v0").sides(num_players)
    rng = np.random.default_rng(num_players)
    seen: Counter[str] = Counter()
    for _ in range(300):
        roles = draw_table(sides, LEAGUE, snapshots=2, rng=rng)
        assert len(roles) == num_players and MAIN in roles
        assert all(r in ("main", "snapshot_0", "snapshot_1", "heuristic", "random") for r in roles)
        seen.update(roles)
    # every league member sits at some table; the learner's seat moves around
    assert set(seen) == {"main", "snapshot_0", "snapshot_1", "heuristic", "random"}


def test_partners_share_a_role() -> None:
    spec = get_spec("classic_whist_v0")
    sides = spec.sides(4)
    assert spec.partner_offset == 2
    rng = np.random.default_rng(0)
    mains = Counter()
    for _ in range(300):
        roles = draw_table(sides, LEAGUE, snapshots=3, rng=rng)
        assert roles[0] == roles[2] and roles[1] == roles[3]
        mains[roles.index(MAIN) % 2] += 1
    assert set(mains) == {0, 1}  # main plays either partnership


def test_snapshot_is_main_until_the_first_one_exists() -> None:
    rng = np.random.default_rng(1)
    for _ in range(100):
        assert draw_table((0, 1, 2), {"snapshot": 1.0}, snapshots=0, rng=rng) == ["main"] * 3
    roles = {r for _ in range(100) for r in draw_table((0, 1), {"snapshot": 1.0}, snapshots=2, rng=rng)}
    assert roles == {"main", snapshot_id(0), snapshot_id(1)}


def test_is_module_tells_modules_from_scripted_agents() -> None:
    assert is_module("main") and is_module("snapshot_3")
    assert not is_module("heuristic") and not is_module("random") and not is_module("pimc(samples=2)")


@pytest.mark.parametrize("bad", [{}, {"main": -1.0}, {"main": 0.0}, {"random": True}])
def test_bad_league_weights_are_refused(bad: dict) -> None:
    with pytest.raises(OptionError, match="non-negative weights with a positive sum"):
        check_opponents(bad)


def test_every_game_has_sides() -> None:
    for game_id in game_ids():
        spec = get_spec(game_id)
        n = spec.make_rules().num_players
        roles = draw_table(spec.sides(n), LEAGUE, 1, np.random.default_rng(0))
        assert MAIN in roles
