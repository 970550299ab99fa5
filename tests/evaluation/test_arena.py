"""The arena: duplicate pairing, seat rotation, intervals, determinism, illegal actions, the CLI."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from whist_env.agents import RandomAgent, heuristic_for
from whist_env.errors import OptionError
from whist_env.evaluation import (
    Arena,
    ArenaConfig,
    DealResult,
    TableResult,
    evaluate,
    seat_assignments,
    summarise,
)
from whist_env.evaluation.arena import progress_bar
from whist_env.registry import game_ids
from whist_env.view import PlayerView


def test_seat_assignments() -> None:
    assert seat_assignments(2, 2) == [(0, 1), (1, 0)]
    assert seat_assignments(4, 2) == [(0, 1, 0, 1), (1, 0, 1, 0)]
    assert seat_assignments(3, 2) == [(0, 1, 0), (0, 0, 1), (1, 0, 0)]
    rest = seat_assignments(4, 2, "one_vs_rest")
    assert len(rest) == 4 and sorted(a.index(0) for a in rest) == [0, 1, 2, 3]
    for n, m in [(2, 2), (3, 2), (4, 2), (5, 3), (6, 2)]:
        lineups = seat_assignments(n, m)
        for agent in range(m):
            assert {s for a in lineups for s in range(n) if a[s] == agent} == set(range(n))
    with pytest.raises(OptionError):
        seat_assignments(2, 3)
    with pytest.raises(OptionError):
        seat_assignments(4, 2, "everyone")


class Recorder:
    """Random play; records every hand as dealt that it held (own hand plus the cards it played)."""

    name = "recorder"

    def __init__(self, label: str, log: list[tuple[str, int, int]]) -> None:
        self.label, self.log, self.inner = label, log, RandomAgent()

    def act(self, view: PlayerView, rng: np.random.Generator) -> int:
        assert isinstance(view, PlayerView)  # agents only ever receive a view
        self.log.append((self.label, view.seat, view.hand | view.played[view.seat]))
        return self.inner.act(view, rng)


@pytest.mark.parametrize("game_id", ["classic_whist_v0", "humbug_v0"])
def test_duplicate_deals_give_every_agent_every_hand(game_id: str) -> None:
    log: list[tuple[str, int, int]] = []
    config = ArenaConfig(game_id, (lambda: Recorder("A", log), lambda: Recorder("B", log)), num_deals=3, seed=5)
    arena = Arena(config)
    n = arena.game.num_players
    results = [arena.play_deal(i) for i in range(3)]
    full = 52 // n
    held: dict[str, set[int]] = {"A": set(), "B": set()}
    seats: dict[str, set[int]] = {"A": set(), "B": set()}
    for label, seat, hand in log:
        if hand.bit_count() == full:
            held[label].add(hand)
            seats[label].add(seat)
    assert held["A"] == held["B"] and len(held["A"]) == 3 * n  # 3 deals × n hands, each held by both
    assert seats["A"] == seats["B"] == set(range(n))
    for r in results:
        assert len(r.tables) == 2
        assert r.tables[0].assignment != r.tables[1].assignment
    if game_id == "classic_whist_v0":
        assert all(t.assignment in [(0, 1, 0, 1), (1, 0, 1, 0)] for r in results for t in r.tables)


def test_identical_deterministic_agents_tie_exactly() -> None:
    report = evaluate("classic_whist_v0", ["heuristic", "heuristic"], num_deals=30, seed=2)
    diff = report.pairs[0].diff
    assert diff.mean == 0.0 and diff.half_width == 0.0
    assert report.agents[0].win == report.agents[1].win


def test_identical_random_agents_interval_contains_zero() -> None:
    report = evaluate("humbug_v0", ["random", "random"], num_deals=150, seed=3)
    assert report.pairs[0].diff.contains(0.0)
    assert report.illegal_actions == 0


def synthetic(advantage: float, deals: int, seed: int) -> list[DealResult]:
    """Two-seat zero-sum deals where agent 0 gains ``advantage`` over the deal's luck (sd 10)."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(deals):
        luck = rng.normal(0, 10)
        e1, e2 = rng.normal(0, 1, 2)
        r1 = luck + advantage + e1  # agent 0 at seat 0
        r2 = luck - advantage + e2  # agent 1 at seat 0
        tables = [TableResult((0, 1), (r1, -r1)), TableResult((1, 0), (r2, -r2))]
        out.append(DealResult(i, tables, [1, 1], [0, 0], [0.0, 0.0]))
    return out


def test_a_known_advantage_is_recovered() -> None:
    config = ArenaConfig("humbug_v0", ("a", "b"), num_deals=2000)
    report = summarise(config, synthetic(0.5, 2000, 0), wall_s=1.0)
    diff = report.pairs[0].diff
    # A's per-deal score is 0.5 + noise and B's the negative: A − B = 1.
    assert diff.contains(1.0) and diff.excludes_zero()
    assert diff.half_width < 0.1  # the luck (sd 10) cancels in the duplicate pair
    assert report.agents[0].mean.contains(0.5)
    no_edge = summarise(config, synthetic(0.0, 2000, 1), wall_s=1.0)
    assert no_edge.pairs[0].diff.contains(0.0)


def test_heuristic_beats_random_quickly() -> None:
    report = evaluate("humbug_whist_v0", ["heuristic", "random"], num_deals=60, seed=0)
    assert report.pairs[0].diff.low > 0 and report.illegal_actions == 0


def test_same_seed_same_report() -> None:
    a = evaluate("german_whist_v0", ["heuristic", "random"], num_deals=20, seed=9)
    b = evaluate("german_whist_v0", ["heuristic", "random"], num_deals=20, seed=9)
    c = evaluate("german_whist_v0", ["heuristic", "random"], num_deals=20, seed=10)
    assert a.to_dict(timing=False) == b.to_dict(timing=False)
    assert a.to_dict(timing=False) != c.to_dict(timing=False)
    json.loads(a.to_json())
    assert "| heuristic |" in a.to_markdown()


@pytest.mark.slow
def test_workers_do_not_change_the_report() -> None:
    one = evaluate("humbug_v0", ["heuristic", "random"], num_deals=24, seed=4)
    two = evaluate("humbug_v0", ["heuristic", "random"], num_deals=24, seed=4, workers=2)
    assert one.to_dict(timing=False) == two.to_dict(timing=False)
    assert two.timing["workers"] == 2


class Cheater:
    """Plays a card it does not hold whenever it can."""

    name = "illegal"

    def act(self, view: PlayerView, rng: np.random.Generator) -> int:
        for c in range(52):
            if not (view.legal >> c) & 1:
                return c
        return view.legal_actions()[0]


def test_illegal_actions_are_counted() -> None:
    report = evaluate("humbug_v0", [Cheater(), RandomAgent()], num_deals=2, seed=0)
    assert report.agent("illegal").illegal > 0
    assert report.agent("random").illegal == 0
    assert report.illegal_actions == report.agent("illegal").illegal


def test_bad_configurations_are_rejected() -> None:
    with pytest.raises(OptionError, match="single-deal"):
        evaluate("classic_whist_v0", ["random", "random"], 1, options={"episode": "game"})
    with pytest.raises(OptionError, match="at least two"):
        evaluate("humbug_v0", ["random"], 1)
    with pytest.raises(OptionError, match="partnerships"):
        evaluate("classic_whist_v0", ["random", "random"], 1, lineup="one_vs_rest")
    with pytest.raises(OptionError, match="unknown agent"):
        evaluate("humbug_v0", ["random", "genius"], 1)


def test_full_episodes_and_one_vs_rest() -> None:
    report = evaluate("oh_hell_v0", ["heuristic", "random"], 3, options={"max_cards": 2}, single_deal=False)
    assert report.unit == "one whole episode" and report.illegal_actions == 0
    report = evaluate("oh_hell_v0", ["heuristic", "random"], 3, options={"hand_size": 3}, lineup="one_vs_rest")
    assert report.tables_per_deal == 4


def test_agent_objects_are_copied_per_seat() -> None:
    agent = heuristic_for("humbug_v0")
    evaluate("humbug_v0", [agent, "random"], 2, seed=0)
    assert agent._memory == {}  # the arena played copies


def test_progress_bar() -> None:
    out = io.StringIO()
    with progress_bar(100, "humbug_v0", stream=out) as bar:
        for _ in range(10):
            bar.update(10)
    text = out.getvalue()
    assert text.startswith("\rhumbug_v0:") and "100/100" in text and " deals/s]" in text and text.endswith("\n")
    quiet = io.StringIO()
    with progress_bar(100, "humbug_v0", enabled=False, stream=quiet) as bar:
        bar.update(100)
    assert quiet.getvalue() == ""


def test_cli(tmp_path: Path, capsys: Any) -> None:
    from whist_env.cli.eval import main

    path = tmp_path / "r.json"
    md = tmp_path / "r.md"
    status = main(["humbug_v0", "classic_whist_v0", "--deals", "4", "--quiet", "--json", str(path),
                   "--markdown", str(md)])  # fmt: skip
    assert status == 0
    data = json.loads(path.read_text())
    assert [d["game"] for d in data] == ["humbug_v0", "classic_whist_v0"]
    assert data[0]["illegal_actions"] == 0 and "timing" in data[0]
    assert "A − B" in md.read_text()
    assert main(["no_such_game", "--deals", "1", "--quiet"]) == 2  # one line on stderr, status 2
    assert main(["oh_hell_v0", "--deals", "2", "--quiet", "--option", "hand_size=3", "--option", "num_players=3"]) == 0
    assert "| heuristic |" in capsys.readouterr().out


def test_cli_takes_agent_specs(capsys: Any) -> None:
    from whist_env.cli.eval import main

    nested = "pimc(samples=2, max_tricks=1, fallback=random)"
    assert main(["humbug_v0", "--agents", nested, "pimc:samples=2,max_tricks=1", "--deals", "1", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert f"| {nested} |" in out and "| pimc:samples=2,max_tricks=1 |" in out
    assert main(["humbug_v0", "--agents", "heuristic", "pimc(fallback=random", "--deals", "1", "--quiet"]) == 2
    assert "unbalanced brackets" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.parametrize("game_id", game_ids())
def test_heuristic_beats_random_in_every_game(game_id: str) -> None:
    report = evaluate(game_id, ["heuristic", "random"], num_deals=150, seed=0)
    assert report.pairs[0].diff.low > 0, report.to_markdown()
    assert report.illegal_actions == 0


def test_the_unit_names_the_reward_the_run_used() -> None:
    win = evaluate("german_whist_v0", ["heuristic", "random"], num_deals=1, seed=0, progress=False)
    diff = evaluate("german_whist_v0", ["heuristic", "random"], num_deals=1, seed=0, options={"reward": "trick_diff"})
    assert win.unit == "one deal: ±1 for the majority of the 13 scoring tricks"
    assert diff.unit == "one deal: ±(trick difference) over the 13 scoring tricks"
    hand = evaluate("oh_hell_v0", ["heuristic", "random"], num_deals=1, seed=0, options={"hand_size": 3})
    assert hand.unit.startswith("one deal of 3 cards")
    honours = evaluate("classic_whist_v0", ["heuristic", "random"], num_deals=1, seed=0, options={"honours": True})
    assert honours.unit.endswith("+ honours") and "when on" not in honours.unit


def test_cli_writes_the_records_of_the_worst_deals_for_the_first_agent(tmp_path: Path, capsys: Any) -> None:
    from whist_env.cli.eval import main
    from whist_env.evaluation.arena import play_deals, worst_deals
    from whist_env.record import GameRecord

    folder = tmp_path / "worst"
    argv = ["humbug_v0", "--agents", "random", "heuristic", "--deals", "6", "--seed", "3", "--quiet"]
    assert main([*argv, "--records", str(folder), "--worst", "2"]) == 0
    assert "the records of the 2 worst deals for random" in capsys.readouterr().out
    config = ArenaConfig("humbug_v0", ("random", "heuristic"), 6, seed=3)
    results, _ = play_deals(config)
    worst = worst_deals(results, 2, 2)
    margins = sorted(s[0] - s[1] for s in (r.scores(2) for r in results))
    assert [m for _, m in worst] == margins[:2]  # the first agent's two lowest margins, worst first
    files = sorted(folder.iterdir())
    assert [f.name for f in files] == sorted(f"humbug_v0-deal{i}-table{k}.json" for i, _ in worst for k in range(2))
    for index, _ in worst:
        for k, table in enumerate(results[index].tables):
            record = GameRecord.from_json((folder / f"humbug_v0-deal{index}-table{k}.json").read_text())
            _, state = record.replay()
            assert state.done and tuple(float(r) for r in state.returns) == table.returns  # the deal as it was played
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    assert main([*argv, "--records", str(blocked / "sub")]) == 2
    assert "cannot write --records" in capsys.readouterr().err
