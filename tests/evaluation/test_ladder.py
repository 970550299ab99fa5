"""The rating ladder (whist_env.evaluation.ladder, ``whist-eval --ladder``): the fit recovers known strengths, its
intervals cover them as often as they say, the results do not depend on the order agents are given, the matches are
the arena's, and the cache plays only what it has not seen."""

from __future__ import annotations

import io
import json
import shutil
import zipfile
from pathlib import Path

import numpy as np
import pytest

from whist_env.cli.eval import main
from whist_env.errors import OptionError
from whist_env.evaluation import evaluate
from whist_env.evaluation.ladder import fit_ratings, ladder
from whist_env.evaluation.stats import mean_ci


def halve_first_array(path: Path) -> None:
    """Rewrite the ``.npz`` at ``path`` with its first array halved, every other member (the metadata) as it was."""
    with zipfile.ZipFile(path) as zf:
        members = {name: zf.read(name) for name in zf.namelist()}
    name = sorted(n for n in members if n.endswith(".npy"))[0]
    buffer = io.BytesIO()
    np.save(buffer, np.load(io.BytesIO(members[name])) * 0.5)
    members[name] = buffer.getvalue()
    with zipfile.ZipFile(path, "w") as zf:
        for member, data in members.items():
            zf.writestr(member, data)


def round_robin(k: int) -> list[tuple[int, int]]:
    return [(a, b) for a in range(k) for b in range(a + 1, k)]


def synthetic(strengths: np.ndarray, deals: int, rng: np.random.Generator) -> np.ndarray:
    """Per-deal differences of a round robin: true gap + what each agent made of the deal + the match's own noise."""
    pairs = round_robin(len(strengths))
    form = rng.normal(0.0, 0.8, size=(len(strengths), deals))  # an agent's luck on a deal, shared by its matches
    return np.stack([strengths[a] - strengths[b] + form[a] - form[b] + rng.normal(0, 0.5, deals) for a, b in pairs])


def test_the_fit_recovers_known_strengths() -> None:
    truth = np.array([0.0, 0.4, 1.1, -0.3, 2.0])
    pairs = round_robin(5)
    exact = np.array([[truth[a] - truth[b]] * 3 for a, b in pairs])  # no noise: the fit is the truth
    ratings, low, high = fit_ratings(5, pairs, exact, anchor=0, bootstrap=200)
    np.testing.assert_allclose(ratings, truth, atol=1e-12)
    np.testing.assert_allclose(low, truth, atol=1e-12)
    np.testing.assert_allclose(high, truth, atol=1e-12)
    ratings, low, high = fit_ratings(5, pairs, synthetic(truth, 4000, np.random.default_rng(1)), anchor=0)
    assert np.abs(ratings - truth).max() < 0.08 and (low <= truth).all() and (truth <= high).all()
    assert low[0] == high[0] == ratings[0] == 0.0  # the anchor
    shifted, _, _ = fit_ratings(5, pairs, exact, anchor=3, bootstrap=0)  # another anchor: the same gaps
    np.testing.assert_allclose(shifted, truth - truth[3], atol=1e-12)


@pytest.mark.parametrize("deals", [300, 5])
def test_the_intervals_cover_the_truth_about_95_percent_of_the_time(deals: int) -> None:
    """At 5 deals a match the bootstrap's 2.5 and 97.5 percentiles held the truth 82% of the time (90% at 10): for a
    mean of few deals they are too narrow. Student's t on the bootstrap's standard error holds it about 95%."""
    truth = np.array([0.0, 0.5, -0.2, 0.9])
    rng = np.random.default_rng(7)
    covered = total = 0
    for trial in range(300):
        _, low, high = fit_ratings(4, round_robin(4), synthetic(truth, deals, rng), bootstrap=400, seed=trial)
        covered += int(((low[1:] <= truth[1:]) & (truth[1:] <= high[1:])).sum())
        total += 3
    assert 0.92 <= covered / total <= 0.98, covered / total  # 900 intervals: the binomial sd is 0.007


def test_two_agents_rating_interval_is_their_matchs_paired_interval() -> None:
    """With two agents the rating is the match's mean, and its interval is the arena's paired t interval, up to the
    bootstrap's own noise (2,000 resamples: about 1.6% of the standard error)."""
    diffs = np.random.default_rng(3).choice([-2.0, 0.0, 2.0], size=(1, 8), p=[0.3, 0.3, 0.4])
    ratings, low, high = fit_ratings(2, [(1, 0)], diffs, anchor=0, bootstrap=2000)
    paired = mean_ci(list(diffs[0]))
    assert ratings[1] == pytest.approx(paired.mean, abs=1e-12)
    assert (high[1] - low[1]) / 2 == pytest.approx(paired.half_width, rel=0.05)  # the percentiles: about 18% short
    assert low[1] == pytest.approx(ratings[1] - (high[1] - ratings[1]), abs=1e-12)  # symmetric about the rating


def test_one_deal_a_match_gives_no_interval() -> None:
    """One deal a match used to give intervals of zero width about each rating."""
    report = ladder("german_whist_v0", ["random", "heuristic"], num_deals=1, seed=4, bootstrap=100)
    assert np.isnan(report.rating("heuristic").low) and np.isnan(report.rating("heuristic").high)
    assert "| heuristic | " in report.to_markdown() and "[none: one deal a match]" in report.to_markdown()
    assert json.loads(json.dumps(report.to_dict()))["ratings"][0]["low"] is None


def test_matches_that_leave_an_agent_out_are_refused() -> None:
    with pytest.raises(ValueError, match="not on one scale"):
        fit_ratings(3, [(0, 1)], np.zeros((1, 5)))
    with pytest.raises(ValueError, match="diffs must be"):
        fit_ratings(3, round_robin(3), np.zeros((2, 5)))


def test_a_ladder_is_the_arenas_matches_in_any_order(tmp_path: Path) -> None:
    """Each match is the arena's duplicate comparison (the same deals, seats rotated): its mean is
    ``evaluate``'s paired difference; batched agents play on the engine, the others in the AEC arena; and the
    ratings do not depend on the order the agents are given."""
    agents = ["heuristic", "pimc:samples=2", "random"]
    first = ladder("humbug_v0", agents, num_deals=12, seed=3, bootstrap=300)
    again = ladder("humbug_v0", list(reversed(agents)), num_deals=12, seed=3, bootstrap=300)
    assert [(r.name, r.rating, r.low, r.high) for r in first.ratings] == [
        (r.name, r.rating, r.low, r.high) for r in again.ratings
    ]
    assert first.anchor == "random" and first.rating("random").rating == 0.0
    assert {(m.a, m.b): m.engine for m in first.matches} == {
        ("heuristic", "pimc:samples=2"): "aec",
        ("heuristic", "random"): "batched",
        ("pimc:samples=2", "random"): "aec",
    }
    arena = evaluate("humbug_v0", ["heuristic", "pimc:samples=2"], num_deals=12, seed=3)
    assert first.match("heuristic", "pimc:samples=2").observed.mean == pytest.approx(arena.pairs[0].diff.mean)
    assert first.match("pimc:samples=2", "heuristic").observed.mean == pytest.approx(-arena.pairs[0].diff.mean)
    assert first.illegal_actions == 0
    gaps = {(m.a, m.b): m.observed.mean - m.residual for m in first.matches}  # the fit's r_a - r_b
    assert gaps[("heuristic", "random")] == pytest.approx(
        gaps[("heuristic", "pimc:samples=2")] + gaps[("pimc:samples=2", "random")]
    )


def test_the_cache_plays_only_new_matches(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    model = tmp_path / "net.npz"
    shutil.copyfile(Path(__file__).parents[2] / "whist_env" / "games" / "german_whist" / "pretrained.npz", model)
    agents = ["random", "heuristic", f"pretrained(path={model})"]
    first = ladder("german_whist_v0", agents, num_deals=30, seed=1, cache_dir=cache, bootstrap=100)
    assert [m.cached for m in first.matches] == [False] * 3
    assert len(list((cache / "german_whist_v0").glob("*.json"))) == 3
    again = ladder("german_whist_v0", agents, num_deals=30, seed=1, cache_dir=cache, bootstrap=100)
    assert [m.cached for m in again.matches] == [True] * 3 and again.ratings == first.ratings
    more = ladder("german_whist_v0", [*agents, "pimc:samples=2"], num_deals=30, seed=1, cache_dir=cache, bootstrap=100)
    played = {(m.a, m.b) for m in more.matches if not m.cached}
    assert len(played) == 3 and all("pimc:samples=2" in pair for pair in played)  # only the new agent's matches
    other_seed = ladder("german_whist_v0", agents[:2], num_deals=30, seed=2, cache_dir=cache, bootstrap=100)
    assert not other_seed.matches[0].cached
    halve_first_array(model)  # the same path, other weights: a new match
    changed = ladder("german_whist_v0", agents, num_deals=30, seed=1, cache_dir=cache, bootstrap=100)
    assert {(m.a, m.b) for m in changed.matches if not m.cached} == {
        (a, b) for a, b in ((m.a, m.b) for m in changed.matches) if "pretrained" in a + b
    }
    for i, entry in enumerate(sorted((cache / "german_whist_v0").glob("*.json"))):
        # a damaged entry is played again (one nested too deeply raised RecursionError)
        entry.write_text("[" * 100_000 if i else "{not json", encoding="utf-8")
    damaged = ladder("german_whist_v0", agents, num_deals=30, seed=1, cache_dir=cache, bootstrap=100)
    assert [m.cached for m in damaged.matches] == [False] * 3 and damaged.ratings == changed.ratings


def test_a_re_shipped_network_is_a_new_match_for_pretrained(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``pretrained`` names the game's shipped file, not a path: when the package ships other weights under the same
    name, the matches of ``pretrained`` and of a hybrid falling back to it are played again, the rest come from the
    cache."""
    from whist_env.spec import GameSpec

    cache, shipped = tmp_path / "cache", tmp_path / "pretrained.npz"
    shutil.copyfile(Path(__file__).parents[2] / "whist_env" / "games" / "german_whist" / "pretrained.npz", shipped)
    monkeypatch.setattr(GameSpec, "pretrained_file", lambda self: shipped)
    agents = ["random", "heuristic", "pretrained", "pimc(samples=2, fallback=pretrained)"]
    first = ladder("german_whist_v0", agents, num_deals=6, seed=1, cache_dir=cache, bootstrap=100)
    assert not any(m.cached for m in first.matches)
    halve_first_array(shipped)  # re-shipped: the same name, other weights
    again = ladder("german_whist_v0", agents, num_deals=6, seed=1, cache_dir=cache, bootstrap=100)
    assert {(m.a, m.b) for m in again.matches if not m.cached} == {
        (m.a, m.b) for m in again.matches if "pretrained" in m.a + m.b
    }
    assert [{m.a, m.b} for m in again.matches if m.cached] == [{"random", "heuristic"}]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"agents": ["random"]}, "two or more agents"),
        ({"agents": ["random", "random"]}, "each agent once"),
        ({"anchor": "pimc"}, "anchor 'pimc' is not one of"),
        ({"engine": "gpu"}, "engine must be"),
        ({"num_deals": 0}, "num_deals must be"),
        ({"agents": ["random", "pimc:samples=2"], "engine": "batched"}, "no batched form"),
        ({"agents": ["random", "wizard"]}, "unknown agent 'wizard'"),
    ],
)
def test_bad_ladders_are_refused(kwargs: dict, message: str) -> None:
    args = {"agents": ["random", "heuristic"], "num_deals": 4, **kwargs}
    with pytest.raises(OptionError, match=message):
        ladder("german_whist_v0", **args)


def test_whist_eval_ladder_prints_writes_and_plots(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plot, out = tmp_path / "l.png", tmp_path / "l.json"
    argv = ["german_whist_v0", "--ladder", "--agents", "random", "heuristic", "--deals", "20", "--quiet"]
    assert main([*argv, "--cache", str(tmp_path / "c"), "--plot", str(plot), "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "| 1 | heuristic |" in text and "| 2 | random | +0.000 anchor |" in text and f"plot: {plot}" in text
    assert plot.stat().st_size > 5_000
    data = json.loads(out.read_text())
    assert data["anchor"] == "random" and [r["name"] for r in data["ratings"]] == ["heuristic", "random"]
    assert main([*argv, "--no-cache", "--no-plot"]) == 0 and "plot:" not in capsys.readouterr().out
    assert main(["german_whist_v0", "--agents", "random", "heuristic", "--no-plot"]) == 2
    assert "--no-plot apply to --ladder only" in capsys.readouterr().err
    assert main([*argv, "--batched", "--no-plot", "--no-cache"]) == 2
    assert "drop --batched" in capsys.readouterr().err


def test_the_plot_draws_an_interval_that_misses_its_rating_as_it_is(tmp_path: Path) -> None:
    """With one deal per match a rating's percentile interval is the rating give or take a rounding (2.000000000000001
    in [2.0, 2.0]), and the plot's error bar below 0 stopped a class's tournament at its very end."""
    from matplotlib.image import imread

    from whist_env.evaluation.ladder import Rating, plot_ratings

    ratings = [Rating("a", 2.000000000000001, 2.0, 2.0), Rating("b", 0.5, 0.7, 1.1), Rating("anchor", 0.0, 0.0, 0.0),
               Rating("c", -1.0, float("nan"), float("nan"))]  # fmt: skip
    image = imread(plot_ratings(ratings, tmp_path / "r.png", "t", "x"))
    assert image.shape[0] > 100 and image.std() > 0


# Found by a mutation audit (small bugs planted one at a time; these are the ones no test caught).
def test_two_agents_are_fitted_exactly_so_their_residual_is_zero() -> None:
    report = ladder("german_whist_v0", ["random", "heuristic"], 10, bootstrap=0, engine="aec")
    assert report.matches[0].residual == pytest.approx(0.0, abs=1e-12)


def test_bonferroni_divides_alpha_by_the_pairs_not_the_agents() -> None:
    report = ladder("german_whist_v0", ["random", "heuristic"], 20, bootstrap=0, engine="aec",
                    stop_when_decided=True, look_every=10, bonferroni=True, alpha=0.05)  # fmt: skip
    assert report.stop is not None and report.stop["alpha"] == pytest.approx(0.05)  # one pair


def test_look_every_is_in_the_cache_key(tmp_path: Path) -> None:
    """A stopping match looked at every 25 deals is another match than one looked at every 50: it is played again."""
    options = {"bootstrap": 0, "engine": "aec", "stop_when_decided": True, "cache_dir": tmp_path}
    ladder("german_whist_v0", ["random", "heuristic"], 100, look_every=25, **options)
    again = ladder("german_whist_v0", ["random", "heuristic"], 100, look_every=50, **options)
    assert not any(m.cached for m in again.matches)


def test_a_cached_match_cut_short_is_played_again(tmp_path: Path) -> None:
    ladder("german_whist_v0", ["random", "heuristic"], 20, bootstrap=0, engine="aec", cache_dir=tmp_path)
    [entry] = (tmp_path / "german_whist_v0").glob("*.json")
    data = json.loads(entry.read_text())
    data["diffs"] = data["diffs"][:5]
    entry.write_text(json.dumps(data))
    again = ladder("german_whist_v0", ["random", "heuristic"], 20, bootstrap=0, engine="aec", cache_dir=tmp_path)
    assert not again.matches[0].cached and len(again.matches[0].diffs) == 20
