"""The learner env's frozen network opponents (``whist_env.vector.make_learner_env(opponents="pretrained")`` and
``"pretrained(path=<exported .npz>)"``): every opponent action is the AEC :class:`PretrainedAgent`'s for that seat's
view, suits renamed as the agent renames them (every shipped network is a ``canonical_suits`` one)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import whist_env
from whist_env.agents.pretrained import PretrainedAgent
from whist_env.errors import ModelMismatchError, OptionError
from whist_env.vector import make_learner_env
from whist_env.vector.learner import random_actions

B = 8
SHIPPED = Path(whist_env.__file__).parent / "games"

CASES = [
    ("german_whist_v0", {}, "pretrained", None),
    ("classic_whist_v0", {"episode": "deal"}, "pretrained(path={})", "classic_whist"),
    ("humbug_whist_v0", {"episode": "deal"}, "pretrained:{}", "humbug_whist"),
]


@pytest.mark.parametrize(("game_id", "options", "spec", "folder"), CASES, ids=[c[0] for c in CASES])
def test_pretrained_opponents_play_the_aec_agents_cards(
    game_id: str, options: dict[str, Any], spec: str, folder: str | None
) -> None:
    """At every opponent decision of random learner play, the engine is given the action the AEC agent (the same
    network, shipped or from its file) takes for that seat's view; and on some of those positions the network
    read without the suit renaming would have played another card, so the comparison sees the renaming."""
    path = None if folder is None else SHIPPED / folder / "pretrained.npz"
    spec = spec.format(path)
    env = make_learner_env(
        game_id, B, opponents=spec, learner_seat="random", seed=5, autoreset_mode=AutoresetMode.SAME_STEP, **options
    )
    venv = env.venv
    agent = PretrainedAgent(game_id, path=path, **options)
    assert agent.canonical is not None  # a canonical-suits network: the renaming is exercised
    step_envs = venv.step_envs
    compared, unrenamed_differs = [], 0

    def check(envs: np.ndarray, actions: np.ndarray) -> Any:
        nonlocal unrenamed_differs
        for i, a in zip(envs, actions, strict=True):
            seat = int(venv.field("to_act")[i, 0])
            if seat < 0 or seat == env.learner_seats[i]:
                continue
            view = venv.game.view(venv.export_state(int(i)), seat)
            assert a == agent.act(view, np.random.default_rng(0)), (int(i), seat)
            obs, mask = agent.encoder.encode_with_mask(view)
            plain = np.where(np.asarray(mask, bool), agent.policy.logits(obs), -np.inf).argmax()
            unrenamed_differs += int(plain != a)
            compared.append(i)
        return step_envs(envs, actions)

    venv.step_envs = check  # type: ignore[method-assign]
    env.reset()
    rng = np.random.default_rng(1)
    for _ in range(40):
        env.step(random_actions(env.action_masks(), rng))
    assert len(compared) > 100
    assert unrenamed_differs > 0


def test_a_named_network_is_built_once_and_kept() -> None:
    """A trainer hands the names again before every rollout: the network is loaded once per env and name."""
    env = make_learner_env("german_whist_v0", 2, opponents="pretrained", seed=0)
    first = env._policies[0]
    env.set_opponents(["pretrained"])
    assert env._policies[0] is first
    env.set_opponents("random")
    env.set_opponents("pretrained")
    assert env._policies[0] is first


def test_a_network_for_other_options_a_missing_file_or_another_name_is_refused(tmp_path: Path) -> None:
    with pytest.raises(OptionError, match="no exported policy at"):
        make_learner_env("german_whist_v0", 2, opponents=f"pretrained(path={tmp_path / 'none.npz'})")
    with pytest.raises(ModelMismatchError, match="count_all_tricks"):
        make_learner_env("german_whist_v0", 2, opponents="pretrained", count_all_tricks=True)
    with pytest.raises(OptionError, match="pimc"):
        make_learner_env("german_whist_v0", 2, opponents="pimc")
