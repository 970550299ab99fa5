"""The notebook helpers in whist_env/teaching/ (one module per notebook, re-exported by the package)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import whist_env
from whist_env import teaching
from whist_env.registry import game_ids


def test_import_stays_light() -> None:
    code = (
        "import sys, whist_env.teaching; "
        "heavy = [m for m in ('torch', 'stable_baselines3', 'sb3_contrib', 'matplotlib') if m in sys.modules]; "
        "assert not heavy, heavy"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_games_overview_has_every_game() -> None:
    text = teaching.games_overview()
    for game_id in game_ids():
        assert f"`{game_id}`" in text
    assert "`num_players`" in text


def test_action_names_from_masks_and_lists() -> None:
    env = whist_env.make("humbug_whist_v0")
    env.reset(seed=0)
    mask = env.observe(env.agent_selection)["action_mask"]
    assert teaching.action_names(env, mask) == ["KEEP", "EXCHANGE"]
    assert teaching.action_names(env.raw.game, (1 << 52) | 1) == ["2♣", "KEEP"]
    assert teaching.action_names(env, [47, 53]) == ["10♠", "EXCHANGE"]


def test_legal_text_leaves_out_the_hooked_bid() -> None:
    env = whist_env.make("oh_hell_v0", num_players=3, episode="deal", hand_size=5)
    env.reset(seed=1)
    teaching.advance(env, 2)
    text = teaching.legal_text(env)
    view = env.raw.view(env.agent_selection)
    earlier = sum(b for s, b in enumerate(view.extra.bids) if s != view.seat)
    assert f"bid {5 - earlier} (" not in text
    assert "(phase bidding)" in text


def test_advance_stops_at_the_end() -> None:
    env = whist_env.make("humbug_v0")
    env.reset(seed=0)
    teaching.advance(env, 10_000)
    assert all(env.terminations.values())


def test_compare_views_shows_each_seat_its_own_hand_only() -> None:
    env = whist_env.make("german_whist_v0")
    env.reset(seed=3)
    teaching.advance(env, 2)
    text = teaching.compare_views(env, ["player_0", "player_1"], show_same=False)
    draws = {s: env.raw.game_state.draws[s] for s in (0, 1)}  # type: ignore[attr-defined]
    row = next(line for line in text.splitlines() if line.startswith("| `my_draws`"))
    cells = [c.strip() for c in row.split("|")[2:4]]
    for seat in (0, 1):
        expected = whist_env.cards.format_cards(draws[seat], pretty=True) or "-"
        assert cells[seat] == expected
    assert "≠" in row


def test_sizes() -> None:
    env = whist_env.make("german_whist_v0")
    sizes = teaching.sizes(env)
    assert sizes["observation"] == env.observation_space("player_0")["observation"].shape[0]
    assert sizes["state"] == env.state_space.shape[0]


def test_play_episode_is_seeded_and_complete() -> None:
    a = teaching.play_episode("classic_whist_v0", "heuristic", seed=42, options={"episode": "deal"})
    b = teaching.play_episode("classic_whist_v0", "heuristic", seed=42, options={"episode": "deal"})
    assert a.lines == b.lines and a.returns == b.returns
    assert len(a.lines) == 13 and len(a.states) == 14
    assert a.states[-1].done
    assert "trick 13" in a.transcript() and "more lines" in a.transcript(3)
    assert "player_0" in a.render(0, seat=0)


def test_play_episode_matches_the_aec_env() -> None:
    """The same seed deals the same cards through the rules and through the env (what the tour shows)."""
    env = whist_env.make("classic_whist_v0", episode="deal")
    env.reset(seed=42)
    episode = teaching.play_episode("classic_whist_v0", "heuristic", seed=42, options={"episode": "deal"})
    assert env.raw.game_state.dealt == episode.states[0].dealt


def test_play_episode_records_bids_and_exchanges() -> None:
    episode = teaching.play_episode("oh_hell_v0", "random", seed=0, options={"num_players": 3, "episode": "deal"})
    assert sum(line.startswith("player_") and ": bid " in line for line in episode.lines) == 3
    episode = teaching.play_episode("humbug_whist_v0", ["heuristic", "random"], seed=0, options={"episode": "deal"})
    assert sum(line.endswith(("KEEP", "EXCHANGE")) for line in episode.lines) == 2
    with pytest.raises(ValueError, match="2 seats"):
        teaching.play_episode("humbug_v0", ["random"] * 3)


def test_knowledge_timeline_humbug_modes() -> None:
    pieces = ["known[opponent]", "initial_layout[opponent]"]
    hidden = teaching.knowledge_timeline(teaching.play_episode("humbug_v0", seed=4), 0, pieces)
    opened = teaching.knowledge_timeline(
        teaching.play_episode("humbug_v0", seed=4, options={"mode": "open_table"}), 0, pieces
    )
    assert hidden[0]["placed"] == 52 and hidden[0]["initial_layout[opponent]"] == 26
    assert all(r["known[opponent]"] == 0 and r["placed"] < 52 for r in hidden[1:])
    assert all(r["placed"] == 52 for r in opened)
    assert [r["known[opponent]"] for r in opened[:-1]] == [26 - k for k in range(26)]
    assert "| trick |" in teaching.table(hidden, every=5)


def test_knowledge_timeline_german_whist_known_cards_grow() -> None:
    rows = teaching.knowledge_timeline(teaching.play_episode("german_whist_v0", seed=3), 0)
    assert rows[0]["my_draws"] == 0
    assert rows[13]["placed"] == 52  # stock empty: with recall the opponent's hand is known
    assert rows[13]["my_draws"] + rows[13]["prizes[me]"] == 13


def test_forgetful_keeps_no_memory() -> None:
    forgetful = teaching.Forgetful("heuristic", "humbug_v0")
    assert forgetful.name == "forgetful heuristic"
    game = whist_env.make("humbug_v0", raw=True).game
    state = game.new_episode(np.random.default_rng(0))
    rng = np.random.default_rng(0)
    while not state.done:
        seat = state.to_act
        game.step(state, forgetful.act(game.view(state, seat), rng), rng)
    assert forgetful.template._memory == {}  # type: ignore[attr-defined]


def test_forgetful_equals_the_heuristic_when_everything_is_visible() -> None:
    report = whist_env.evaluation.evaluate(
        "humbug_v0",
        ["heuristic", teaching.Forgetful("heuristic", "humbug_v0", mode="open_table")],
        num_deals=10,
        options={"mode": "open_table"},
    )
    assert report.pairs[0].diff.mean == 0 and report.pairs[0].diff.half_width == 0


def test_duplicate_vs_single() -> None:
    c = teaching.duplicate_vs_single("humbug_v0", ["heuristic", "random"], num_deals=20, seed=1)
    assert c.tables == 40 and c.duplicate.n == 20 and c.single.n == 40
    assert c.agents == ("heuristic", "random")
    assert c.width_ratio > 0 and c.deals_factor == pytest.approx(c.width_ratio**2)
    assert "`humbug_v0`" in teaching.variance_table([c])
    with pytest.raises(ValueError, match="exactly two"):
        teaching.duplicate_vs_single("humbug_v0", ["heuristic"], num_deals=2)


def test_plot_series_returns_a_figure() -> None:
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    rows = teaching.knowledge_timeline(teaching.play_episode("humbug_v0", seed=1), 0, ["known[opponent]"])
    fig = teaching.plot_series({"a": rows}, ["placed", "known[opponent]"], title="t")
    assert len(fig.axes[0].lines) == 2


def test_train_ppo_tiny_run(tmp_path: object) -> None:
    pytest.importorskip("sb3_contrib")
    import matplotlib

    matplotlib.use("Agg")
    options = {"num_players": 2, "episode": "deal", "hand_size": 2}
    run = teaching.train_ppo(
        "oh_hell_v0", options, total_timesteps=128, eval_every=64, eval_deals=3, n_steps=64, out_dir=str(tmp_path)
    )
    assert [r["timesteps"] for r in run.curve] == [0, 64, 128]
    assert run.episode_returns
    agent = run.agent()
    assert agent.name.startswith("model:")
    reference = teaching.baselines("oh_hell_v0", ["random"], "heuristic", num_deals=3, seed=0, options=options)
    fig = teaching.plot_learning_curve(run, reference)
    assert len(fig.axes) == 2
