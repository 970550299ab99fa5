"""The double-dummy solver against a plain exhaustive minimax, and against the rules engine itself."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from whist_env.games.german_whist.spec import stock_draws as german_draws
from whist_env.registry import get_spec
from whist_env.rules.core import PHASE_PLAY, State, TrickGame
from whist_env.rules.tricks import legal_cards, trick_winner
from whist_env.search.solver import Position, Solver, game_rules, position_from_state, solved_games


def minimax(pos: Position) -> dict[int, int]:
    """Every legal card's value for the side to move, by exhaustive minimax (no pruning, no reductions)."""
    n = pos.num_players
    draws = pos.draws or ((-1, -1),) * len(pos.counts)

    @cache
    def side0(hands: tuple[int, ...], leader: int, trick: tuple[int, ...], t: int) -> int:
        if t == len(pos.counts):
            return 0
        values = children(hands, leader, trick, t).values()
        return max(values) if pos.sides[(leader + len(trick)) % n] == 0 else min(values)

    def children(hands: tuple[int, ...], leader: int, trick: tuple[int, ...], t: int) -> dict[int, int]:
        seat = (leader + len(trick)) % n
        hand = hands[seat]
        legal = legal_cards(hand, trick[0] // 13) if trick and pos.follow[t] else hand
        out = {}
        for c in range(52):
            if not (legal >> c) & 1:
                continue
            nh = list(hands)
            nh[seat] ^= 1 << c
            nt = (*trick, c)
            if len(nt) < n:
                out[c] = side0(tuple(nh), leader, nt, t)
                continue
            w = trick_winner([((leader + i) % n, card) for i, card in enumerate(nt)], pos.trump)
            dw, dl = draws[t]
            if dw >= 0:
                nh[w] |= 1 << dw
            if dl >= 0:
                nh[1 - w] |= 1 << dl
            won = int(pos.counts[t] and pos.sides[w] == 0)
            out[c] = won + side0(tuple(nh), w, (), t + 1)
        return out

    values = children(pos.hands, pos.leader, pos.trick, pos.trick_number)
    left = pos.tricks_left
    return values if pos.sides[pos.to_act] == 0 else {c: left - v for c, v in values.items()}


def random_endgame(rng: np.random.Generator, game_id: str, max_tricks: int = 4) -> Position:
    """A random position with at most ``max_tricks`` tricks left, possibly in the middle of a trick.

    German Whist draws: a short deal whose first tricks draw from a stock (as phase 1 does), with
    random options.
    """
    options = {"count_all_tricks": bool(rng.random() < 0.5), "phase1_follow_suit": bool(rng.random() < 0.5)}
    sides, counts, follow = game_rules(game_id, options)
    n = len(sides)
    k = int(rng.integers(1, max_tricks + 1))
    deck = rng.permutation(52).tolist()
    draws: tuple[tuple[int, int], ...] = ()
    trick_number = len(counts) - k
    if game_id == "german_whist_v0" and rng.random() < 0.6:
        # phase-1 tricks with draws: p tricks drawing from a stock of 2p cards, then the hands play out
        p = int(rng.integers(1, k + 1)) if k > 1 else 1
        hand = max(k - p, 1)
        p = k - hand
        trick_number = 13 - p
        stock, deck = deck[: 2 * p], deck[2 * p :]
        draws = german_draws(stock, trick_number)
        counts = counts[:13] + counts[13 : 13 + hand]
        follow = follow[:13] + follow[13 : 13 + hand]
        k = hand
    leader = int(rng.integers(n))
    played = int(rng.integers(n))
    hands = [0] * n
    for i in range(n):
        seat = (leader + i) % n
        size = k - (1 if i < played else 0)
        for c in deck[:size]:
            hands[seat] |= 1 << c
        deck = deck[size:]
    trump = int(rng.integers(5))
    return Position(
        tuple(hands),
        sides,
        None if trump == 4 else trump,
        leader,
        tuple(deck[:played]),
        trick_number,
        counts,
        follow,
        draws,
    )


GAMES = solved_games()  # the games whose spec has a search


@pytest.mark.parametrize("partition", [True, False])
@pytest.mark.parametrize("game_id", GAMES)
def test_solver_matches_minimax(game_id: str, partition: bool) -> None:
    rng = np.random.default_rng(sum(map(ord, game_id)))
    solver = Solver(tt_bits=14, partition=partition)
    for _ in range(150):
        pos = random_endgame(rng, game_id)
        expected = minimax(pos)
        result = solver.solve(pos)
        assert result.card_values == expected, str(pos)
        assert result.value == max(expected.values())
        assert solver.value(pos) == result.value


@pytest.mark.slow
@pytest.mark.parametrize("game_id", GAMES)
def test_solver_matches_minimax_many(game_id: str) -> None:
    rng = np.random.default_rng(7 + sum(map(ord, game_id)))
    solver = Solver(tt_bits=14)
    for _ in range(600 if game_id == "classic_whist_v0" else 1000):
        pos = random_endgame(rng, game_id)
        assert solver.solve(pos).card_values == minimax(pos), str(pos)


PARTITION_CASES = [
    ("classic_whist_v0", 7, 300),
    ("humbug_v0", 10, 300),
    ("humbug_whist_v0", 10, 300),
    ("german_whist_v0", 10, 300),
]


def test_every_solved_game_has_its_cases() -> None:
    """The tables of this module that hold a game's own numbers cover every game the solver covers."""
    assert {g for g, _, _ in PARTITION_CASES} == set(GAMES), "a new game: add it to PARTITION_CASES"
    assert set(SINGLE_DEAL) == set(GAMES), "a new game: add its one-deal options to SINGLE_DEAL"


@pytest.mark.parametrize(("game_id", "tricks", "count"), PARTITION_CASES)
def test_partition_search_matches_exact_keys(game_id: str, tricks: int, count: int) -> None:
    """Longer positions than minimax can check: partition search against the exact-key table.

    A table entry of the partition search stands for many positions; a bound that depended on more
    cards than it recorded would give a wrong value in one of them (tables are reused across positions).
    """
    rng = np.random.default_rng(11 + sum(map(ord, game_id)))
    partition, exact = Solver(tt_bits=14), Solver(tt_bits=14, partition=False)
    for _ in range(count):
        pos = random_endgame(rng, game_id, max_tricks=tricks)
        assert partition.solve(pos).card_values == exact.solve(pos).card_values, str(pos)


def test_plain_python_kernels_agree_with_numba() -> None:
    """Without numba the same kernels run as plain Python (the solver's promise): same values."""
    script = (
        "import json, numpy as np, numba\n"
        "assert numba.config.DISABLE_JIT\n"
        "from tests.search.test_solver import random_endgame\n"
        "from whist_env.search.solver import Solver\n"
        "rng = np.random.default_rng(5)\n"
        "solver = Solver(tt_bits=10)\n"
        "out = []\n"
        "for game in ('classic_whist_v0', 'humbug_v0', 'german_whist_v0') * 10:\n"
        "    out.append(sorted(solver.solve(random_endgame(rng, game, max_tricks=3)).card_values.items()))\n"
        "print(json.dumps(out))\n"
    )
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1"}
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-c", script], env=env, cwd=root, capture_output=True, text=True, check=True)
    rng = np.random.default_rng(5)
    solver = Solver(tt_bits=10)
    expected = [
        sorted(solver.solve(random_endgame(rng, game, max_tricks=3)).card_values.items())
        for game in ("classic_whist_v0", "humbug_v0", "german_whist_v0") * 10
    ]
    assert json.loads(done.stdout) == [[list(kv) for kv in values] for values in expected]


def test_horizon_is_between_bounds() -> None:
    rng = np.random.default_rng(3)
    for _ in range(50):
        pos = random_endgame(rng, "humbug_v0")
        value = Solver(tt_bits=12, horizon=1).value(pos)
        assert 0 <= value <= pos.tricks_left


# ------------------------------------------------------------------------------ against the rules engine
SINGLE_DEAL = {
    "classic_whist_v0": {"episode": "deal"},
    "humbug_v0": {"mode": "open_table"},
    "humbug_whist_v0": {"episode": "deal"},
    "german_whist_v0": {},
}


def counted(game: TrickGame, state: State) -> list[int]:
    """Counting tricks per seat so far (German Whist: phase 2, or all with count_all_tricks)."""
    won = list(state.tricks_won)
    if game.game_id == "german_whist_v0" and not game.config.count_all_tricks:  # type: ignore[attr-defined]
        won = [w - p for w, p in zip(won, state.phase1_won, strict=True)]  # type: ignore[attr-defined]
    return won


def rules_value(game: TrickGame, state: State, sides: tuple[int, ...]) -> dict[int, int]:
    """Every legal card's value by exhaustive search over the real rules (game.step on copies)."""
    rng = np.random.default_rng(0)
    me = state.to_act
    start = counted(game, state)

    def side_tricks(s: State, side: int) -> int:
        now = counted(game, s)
        return sum(now[i] - start[i] for i in range(len(now)) if sides[i] == side)

    def value(s: State) -> int:  # side 0's tricks from the start to the end of the deal
        if s.done:
            return side_tricks(s, 0)
        vals = []
        for a in game.legal_actions(s):
            child = s.copy()
            game.step(child, a, rng)
            vals.append(value(child))
        return max(vals) if sides[s.to_act] == 0 else min(vals)

    out = {}
    for a in game.legal_actions(state):
        child = state.copy()
        game.step(child, a, rng)
        v0 = value(child)
        out[a] = v0 if sides[me] == 0 else _total_left(game, state) - v0
    return out


def _total_left(game: TrickGame, state: State) -> int:
    _, counts, _ = game_rules(game.game_id, dict(game.config.__dict__))
    return sum(counts[state.trick_number :])


@pytest.mark.parametrize("game_id", GAMES)
def test_position_from_state_matches_rules(game_id: str) -> None:
    game = get_spec(game_id).make_rules(**SINGLE_DEAL[game_id])
    sides = game_rules(game_id)[0]
    rng = np.random.default_rng(11)
    solver = Solver(tt_bits=14)
    checked = 0
    for episode in range(6):
        state = game.new_episode(np.random.default_rng(episode))
        while not state.done:
            if state.phase == PHASE_PLAY:
                left = len(game_rules(game_id, dict(game.config.__dict__))[1]) - state.trick_number
                if left <= (2 if game_id == "classic_whist_v0" else 3):
                    before = state.copy()
                    result = solver.solve(position_from_state(game, state))
                    assert result.card_values == rules_value(game, state, sides)
                    assert state.hands == before.hands and state.trick == before.trick, "the state was changed"
                    checked += 1
            actions = game.legal_actions(state)
            game.step(state, actions[int(rng.integers(len(actions)))], rng)
    assert checked > 0


def test_german_phase1_draws_follow_the_rules() -> None:
    """After each phase-1 trick the solver's draws put the same cards in the same hands as the rules."""
    game = get_spec("german_whist_v0").make_rules()
    rng = np.random.default_rng(5)
    state = game.new_episode(rng)
    while state.trick_number < 13:
        pos = position_from_state(game, state)
        k = state.trick_number
        trick_before = list(state.trick)
        for _ in range(2 - len(trick_before)):
            actions = game.legal_actions(state)
            game.step(state, actions[int(rng.integers(len(actions)))], rng)
        winner = state.last_winner
        dw, dl = pos.draws[k]
        assert (state.hands[winner] >> dw) & 1 and (state.hands[1 - winner] >> dl) & 1
        assert state.prizes[winner] >> dw & 1  # type: ignore[attr-defined]


_CACHE_SCRIPT = (
    "import json, numpy as np\n"
    "from tests.search.test_solver import random_endgame\n"
    "from whist_env.search import solver as s\n"
    "rng = np.random.default_rng(11)\n"
    "solver = s.Solver(tt_bits=10)\n"
    "for game in ('classic_whist_v0', 'humbug_v0', 'german_whist_v0'):\n"
    "    solver.solve(random_endgame(rng, game, max_tricks=3))\n"
    "kernels = {k: v for k, v in vars(s).items() if hasattr(v, 'stats') and hasattr(v, 'py_func')}\n"
    "print(json.dumps({k: [sum(v.stats.cache_hits.values()), sum(v.stats.cache_misses.values())]\n"
    "                  for k, v in kernels.items()}))\n"
)


@pytest.mark.slow
def test_a_second_process_loads_the_kernels_from_the_disk_cache(tmp_path: Path) -> None:
    """The first process compiles and caches every kernel (the recursive search included); the second
    compiles nothing and runs: before the fix the recursive kernel was not cached, and caching it as it
    was crashed the second process (a segfault on reload)."""
    pytest.importorskip("numba")
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_DISABLE_JIT"}
    env["NUMBA_CACHE_DIR"] = str(tmp_path)
    root = Path(__file__).resolve().parents[2]
    runs = []
    for _ in range(2):
        done = subprocess.run(
            [sys.executable, "-c", _CACHE_SCRIPT], env=env, cwd=root, capture_output=True, text=True, check=False
        )
        assert done.returncode == 0, done.stderr[-2000:]
        runs.append(json.loads(done.stdout))
    first, second = runs
    assert first["_search"][1] == 1  # one specialisation of the recursive kernel, compiled once
    assert list(tmp_path.rglob("solver._search-*.nbi")), "no cache index for the recursive kernel"
    for name, (_hits, misses) in second.items():
        assert misses == 0, f"{name} was compiled again in the second process"
    assert second["_search"][0] >= 1  # loaded from the cache, not compiled


def test_numba_cache_dir_falls_back_to_the_user_cache_when_the_package_is_read_only(tmp_path: Path) -> None:
    from whist_env.vector.numba_cache import numba_cache_dir

    writable = tmp_path / "pkg"
    writable.mkdir()
    assert numba_cache_dir(writable, {}) is None  # numba's default: __pycache__ beside the source
    missing = tmp_path / "not_there"  # os.access says False, as for a read-only install
    assert numba_cache_dir(missing, {"XDG_CACHE_HOME": str(tmp_path / "xdg")}) == str(
        tmp_path / "xdg" / "whist_env" / "numba"
    )
    # the user's own setting wins
    assert numba_cache_dir(missing, {"NUMBA_CACHE_DIR": "/mine"}) is None
