"""Evaluation of the learner during and after training, through the arena (``whist_env.evaluation``).

The learner plays duplicate deals against one opponent: every deal is replayed with the seats
rotated, so both sides hold the same cards. The unit is one deal (the arena's single-deal options),
unless the training options conflict with them (then whole episodes are compared). Two numbers come
back per opponent: the learner's mean reward per deal, and the paired difference learner − opponent
(what "beats" means, also in general-sum Oh Hell), each with its 95% interval.
"""

from __future__ import annotations

from typing import Any

from whist_env.agents.base import Agent
from whist_env.evaluation import evaluate as arena_evaluate
from whist_env.registry import get_spec

LEARNER = "learner"


def single_deal_ok(game_id: str, game_options: dict[str, Any]) -> bool:
    """Whether the training options allow the arena's one-deal unit: no option set to another value, and the
    one-deal options leave the observation layout as it is (Oh Hell's default match observes more pieces than one
    deal: a network trained on it cannot play single deals)."""
    from whist_env.fingerprint import ModelMetadata

    fixed = get_spec(game_id).single_deal
    if not all(game_options.get(k, v) == v for k, v in fixed.items()):
        return False
    one_deal = {**game_options, **fixed}
    layout = ModelMetadata.for_game(game_id, game_options).layout_fingerprint
    return ModelMetadata.for_game(game_id, one_deal).layout_fingerprint == layout


def lineup_for(game_id: str, game_options: dict[str, Any]) -> str:
    """``one_vs_rest`` (the learner alone against the opponent in every other seat, as in training) for
    games of more than two seats without partnerships, else ``alternate``."""
    spec = get_spec(game_id)
    n = spec.make_rules(**game_options).num_players
    return "one_vs_rest" if n > 2 and spec.partner_offset is None else "alternate"


def evaluate_learner(
    game_id: str,
    game_options: dict[str, Any],
    learner: Agent | str,
    opponent: str,
    num_deals: int,
    seed: int,
    workers: int = 1,
    progress: bool = False,
    batched: bool = False,
) -> dict[str, Any]:
    """The learner against ``opponent`` (a name) over ``num_deals`` duplicate deals (``progress``: a progress
    bar with an ETA on stderr).

    ``batched``: on the batched engine's arena (:func:`whist_env.evaluation.batched.evaluate_batched`: the same deals,
    and for deterministic agents the same results; :func:`batched_ok` says when it can), in one process.

    Returns:
        ``mean``/``ci95`` (the learner's reward per deal), ``diff``/``diff_ci95`` (learner − opponent,
        paired), ``win_rate`` (share of tables won), ``illegal_actions``, ``deals``, ``unit`` and ``engine``
        (``aec`` or ``batched``).
    """
    common: dict[str, Any] = {
        "single_deal": single_deal_ok(game_id, game_options),
        "lineup": lineup_for(game_id, game_options),
        "names": (LEARNER, opponent),
        "progress": progress,
    }
    if batched:
        from whist_env.evaluation.batched import evaluate_batched

        report = evaluate_batched(game_id, [learner, opponent], num_deals, seed, game_options, **common)
    else:
        report = arena_evaluate(game_id, [learner, opponent], num_deals, seed, game_options, workers=workers, **common)
    me = report.agent(LEARNER)
    diff = report.pairs[0].diff
    return {
        "mean": me.mean.mean,
        "ci95": me.mean.half_width,
        "diff": diff.mean,
        "diff_ci95": diff.half_width,
        "win_rate": me.win,
        "illegal_actions": me.illegal,
        "deals": report.num_deals,
        "unit": report.unit,
        "engine": "batched" if batched else "aec",
    }


def batched_ok(game_id: str, game_options: dict[str, Any], agents: list[str]) -> bool:
    """Whether the batched arena can play these evaluations: one-deal units (:func:`single_deal_ok`), a game with a
    batched engine, and agents that all have a batched form (``random``, ``pretrained``, ``heuristic`` where its port
    exists)."""
    from whist_env.agents.agent_spec import parse_agent_spec
    from whist_env.evaluation.batched import BATCHED_NAMES
    from whist_env.vector import vector_game_ids
    from whist_env.vector.heuristics import ported_games

    if game_id not in vector_game_ids() or not single_deal_ok(game_id, game_options):
        return False
    names = [parse_agent_spec(a).name for a in agents]
    return all(n in BATCHED_NAMES and (n != "heuristic" or game_id in ported_games()) for n in names)
