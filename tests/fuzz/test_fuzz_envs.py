"""Property-based fuzzing of every environment (issue 16): random constructor options, random resets
with random options, and random call sequences mixing legal, illegal and malformed actions.

What must hold whatever the input:

- only documented errors occur: ``OptionError`` (bad options, seeds), ``IllegalActionError`` (raw env),
  ``CallOrderError`` (calls before ``reset()`` or after the episode), and the documented ``ValueError`` of
  an action outside the action space (or of a non-None action for a done agent, PettingZoo's rule);
- an option that is known to be bad is rejected, one known to be good is accepted;
- a rejected call changes nothing: the rules state, the generator (so the next deal), the agents, the
  infos, rewards and terminations, and the observation are as before;
- every game ends when played on with legal actions.

The fast part draws a few dozen examples per game; the slow part many more.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from whist_env import make
from whist_env.cards import card_str
from whist_env.envs.single_agent import make_single_agent
from whist_env.errors import CallOrderError, IllegalActionError, OptionError
from whist_env.registry import game_ids
from whist_env.rules.core import PHASE_DEAL_END, State
from whist_env.testing import option_cases

GAME_IDS = game_ids()
GRID: dict[str, list[dict[str, Any]]] = {}
for _game, _options in option_cases():
    GRID.setdefault(_game, []).append(_options)

FAST = settings(
    max_examples=30,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
SLOW = settings(FAST, max_examples=400)

MAX_DECISIONS = 20_000  # far above the longest episode the drawn options allow (an Oh Hell match of 3 players)
ACTION_VALUE_ERRORS = ("an action must be an int", "outside the action space", "the only valid action is None")


# ---------------------------------------------------------------------- drawing options
Draw = Callable[[st.SearchStrategy[Any]], Any]


def draw_field_value(draw: Draw, field: dataclasses.Field) -> tuple[Any, bool]:
    """A value for one game option and whether it is valid on its own (cross-option checks aside)."""
    m = field.metadata
    invalid: list[Any] = ["bogus", 1.5, np.array([1, 2]), [field.default]]
    if not m.get("optional"):
        invalid.append(None)
    choices = m.get("choices")
    kinds = m["kind"] if isinstance(m["kind"], tuple) else (m["kind"],)
    if choices is not None:
        valid = list(choices)
    elif bool in kinds:
        valid = [True, False]
        invalid += [1, "True"]
    else:
        lo = m.get("minimum") or 0
        hi = m.get("maximum") if m.get("maximum") is not None else lo + 3
        valid = list(range(lo, min(hi, lo + 3) + 1))
        invalid += [lo - 1, hi + 1, True, np.int64(lo)]
    if m.get("optional"):
        valid.append(None)
    if draw(st.integers(0, 3)) == 0:
        return draw(st.sampled_from(invalid)), False
    return draw(st.sampled_from(valid)), True


@st.composite
def constructor_options(
    draw: Draw, game_id: str, config_cls: type, env_level: tuple[str, ...]
) -> tuple[dict, bool, bool]:
    """A grid entry with a few random changes: ``(options, valid, sure)``; ``valid`` False means it must be rejected,
    True that each value is valid on its own (the game's cross-option checks may still reject it); ``sure``: valid,
    and the grid entry's game options unchanged, so it must be accepted."""
    options = dict(draw(st.sampled_from(GRID[game_id])))
    valid = True
    fields = {f.name: f for f in dataclasses.fields(config_cls)}
    changed = draw(st.lists(st.sampled_from(sorted(fields)), max_size=2, unique=True))
    for name in changed:
        options[name], ok = draw_field_value(draw, fields[name])
        valid &= ok
    for name in draw(st.lists(st.sampled_from(env_level), max_size=2, unique=True)):
        if name == "render_mode":
            options[name], ok = draw(st.sampled_from([(None, True), ("ansi", True), ("rgb_array", False)]))
        elif name == "render_seat":
            options[name], ok = draw(st.sampled_from([(None, True), (0, True), (99, False), (True, False)]))
        elif name == "illegal_reward":
            options[name], ok = draw(
                st.sampled_from([(-1, True), (-0.5, True), ("x", False), (math.nan, False), (None, False)])
            )
        else:  # learner_seat
            options[name], ok = draw(st.sampled_from([("random", True), ("rotate", True), (0, True), (-1, False)]))
        valid &= ok
    if draw(st.integers(0, 9)) == 0:
        options["colour"] = "red"
        valid = False
    return options, valid, valid and not changed


PERMUTATION = st.permutations(list(range(52)))


@st.composite
def deck_option(draw: Draw) -> tuple[Any, bool]:
    order = draw(PERMUTATION)
    kind = draw(st.integers(0, 11))
    if kind == 0:
        return order, True
    if kind == 1:
        return tuple(order), True
    if kind == 2:
        return [card_str(c) for c in order], True
    if kind == 3:
        return np.array(order), True
    if kind == 4:
        return None, True  # not given: the deck is shuffled
    if kind == 5:
        return set(order), False
    if kind == 6:
        return dict.fromkeys(order), False
    if kind == 7:
        return order[:51], False
    if kind == 8:
        return [order[1], *order[1:]], False  # a repeated card
    if kind == 9:
        return ["XX", *order[1:]], False
    if kind == 10:
        return [float(order[0]), *order[1:]], False
    return " ".join(card_str(c) for c in order), False


@st.composite
def reset_call(draw: Draw, num_players: int, extra: tuple[str, ...], drawn_trump: bool, single: bool) -> tuple:
    """``(seed, options, valid)`` for one ``reset()``."""
    seed, valid = draw(st.sampled_from([(None, True), (0, True), (7, True), (2**40, True), (-1, False), ("x", False)]))
    kind = draw(st.integers(0, 14))
    if kind == 0:
        return seed, draw(st.sampled_from([["deck"], "dealer", 3])), False
    if kind == 1:
        return seed, None, valid
    options: dict[Any, Any] = {}
    if draw(st.booleans()):
        options["deck"], ok = draw(deck_option())
        valid &= ok
    if draw(st.booleans()):
        options["dealer"], ok = draw(
            st.sampled_from(
                [(None, True), (0, True), (num_players - 1, True), (num_players, False), ("0", False), (True, False)]
            )
        )
        valid &= ok
    if "trump_card" in extra and draw(st.booleans()):
        options["trump_card"], ok = draw(
            st.sampled_from([(None, True), (5, drawn_trump), ("AS", drawn_trump), ("XX", False), (52, False)])
        )
        valid &= ok
    if single and draw(st.booleans()):
        options["learner_seat"], ok = draw(
            st.sampled_from([("random", True), ("rotate", True), (num_players - 1, True), (num_players, False)])
        )
        valid &= ok
    if draw(st.integers(0, 9)) == 0:
        options[draw(st.sampled_from(["decks", "seed", 1]))] = 0
        valid = False
    return seed, options, valid


BAD_ACTIONS = [-1, 10_000, 1.5, "3", True, np.array([1, 2]), np.float64(2.0)]
# (index into the legal actions, an action anywhere in the space, a malformed action)
ACTION_DRAWS = st.tuples(st.integers(0, 51), st.integers(0, 10_000), st.sampled_from(BAD_ACTIONS))


# ---------------------------------------------------------------------- snapshots
def state_value(state: State | None) -> tuple | None:
    """Every field of the rules state, as plain values (State has no equality of its own)."""
    if state is None:
        return None
    names = [n for klass in type(state).__mro__ for n in getattr(klass, "__slots__", ())]
    return tuple((n, tuple(v) if isinstance(v, list) else v) for n, v in ((n, getattr(state, n)) for n in names))


def aec_snapshot(env: Any) -> tuple:
    raw = env.unwrapped
    obs = None
    if raw.agents:
        obs = raw.observe(raw.agent_selection)["observation"].tobytes()
    return (
        state_value(raw._state),
        None if raw._rng is None else raw._rng.bit_generator.state,
        list(raw.agents),
        getattr(raw, "agent_selection", None),
        repr(raw.infos),
        repr(raw.rewards),
        repr(raw._cumulative_rewards),
        repr(raw.terminations),
        repr(raw.truncations),
        obs,
    )


def single_snapshot(env: Any) -> tuple:
    snap = env.get_state()
    snap["state"] = state_value(snap["state"])
    snap.pop("agent_memory")
    return (repr(snap), env.action_masks().tobytes())


def check_rejected(call: Callable[[], Any], snapshot: Callable[[], tuple], allowed: tuple[type, ...]) -> bool:
    """Run ``call``; if it raises, the error must be one of ``allowed`` and nothing may have changed.

    Returns:
        Whether the call was accepted.
    """
    before = snapshot()
    try:
        call()
    except allowed as err:
        if type(err) is ValueError:  # a plain ValueError only for a malformed action
            assert any(m in str(err) for m in ACTION_VALUE_ERRORS), f"undocumented ValueError: {err}"
        assert snapshot() == before, f"a rejected call changed the env: {err!r}"
        return False
    return True


# ---------------------------------------------------------------------- the AEC env
def fuzz_aec(data: st.DataObject, game_id: str) -> None:
    raw_flag = data.draw(st.booleans(), label="raw")
    config_cls = make(game_id, raw=True).game.config_cls
    env_level = ("render_mode", "render_seat") if raw_flag else ("render_mode", "render_seat", "illegal_reward")
    options, valid, sure = data.draw(constructor_options(game_id, config_cls, env_level), label="constructor options")
    try:
        env = make(game_id, raw=raw_flag, **options)
    except OptionError as err:  # bad options, or good ones that the game's cross-option checks refuse together
        assert not sure, f"refused a grid entry's options {options}: {err}"
        return
    assert valid, f"accepted bad constructor options {options}"
    raw = env.unwrapped
    game = raw.game
    n = game.num_players
    drawn = getattr(game, "drawn", False)
    # IllegalActionError is a ValueError: the wrapped env must never let it through, the raw env raises it
    allowed_errors: tuple[type[Exception], ...] = (CallOrderError, IllegalActionError if raw_flag else CallOrderError)
    snapshot = lambda: aec_snapshot(env)  # noqa: E731

    if data.draw(st.booleans(), label="reset first"):
        assert check_rejected(lambda: env.reset(seed=0), snapshot, ())
    for _ in range(data.draw(st.integers(0, 40), label="calls")):
        op = data.draw(st.sampled_from(["legal", "legal", "legal", "any", "bad", "none", "reset", "last", "observe"]))
        live = bool(raw.agents)
        if op == "reset":
            seed, opts, ok = data.draw(reset_call(n, game.extra_reset_options, drawn, single=False))
            accepted = check_rejected(partial(env.reset, seed=seed, options=opts), snapshot, (OptionError,))
            assert accepted == ok, f"reset(seed={seed!r}, options={opts!r}) accepted={accepted}"
        elif op in ("last", "observe"):
            agent = data.draw(st.sampled_from(raw.possible_agents))
            call = env.last if op == "last" else partial(env.observe, agent)
            # observe() gives the final observation after the episode too (PettingZoo's convention)
            expected = live if op == "last" else raw._state is not None
            assert check_rejected(call, snapshot, (CallOrderError,)) == expected
        else:
            # The draws never depend on the env (an unseeded reset deals at random), so that Hypothesis can
            # replay an example: the action is picked from them according to the env's state.
            index, any_action, bad = data.draw(ACTION_DRAWS)
            done = live and raw.terminations[raw.agent_selection]
            if done:
                action: Any = None if op != "any" else 0
            elif op == "legal" and live:
                legal = np.flatnonzero(env.observe(raw.agent_selection)["action_mask"])
                action = int(legal[index % len(legal)])
            elif op in ("any", "legal"):
                action = any_action % game.num_actions
            elif op == "none":
                action = None
            else:
                action = bad
            accepted = check_rejected(partial(env.step, action), snapshot, (*allowed_errors, ValueError))
            if not raw_flag and live and not done and type(action) is int and 0 <= action < game.num_actions:
                assert accepted, "the wrapped env rejected an action in the action space"
            if not live:
                assert not accepted, "step() before reset() or after the episode was accepted"
        if raw._state is not None and raw._state.phase != PHASE_DEAL_END:
            game.check_invariants(raw._state)

    # every game ends
    seed = data.draw(st.integers(0, 2**32 - 1))
    if not raw.agents:
        env.reset(seed=seed)
    for decisions, agent in enumerate(env.agent_iter()):
        assert decisions < MAX_DECISIONS, "the game did not end"
        _, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else int(np.flatnonzero(env.observe(agent)["action_mask"])[0]))
    assert raw.agents == []


@pytest.mark.parametrize("game_id", GAME_IDS)
@FAST
@given(data=st.data())
def test_fuzz_aec_env(game_id: str, data: st.DataObject) -> None:
    fuzz_aec(data, game_id)


@pytest.mark.slow
@pytest.mark.parametrize("game_id", GAME_IDS)
@SLOW
@given(data=st.data())
def test_fuzz_aec_env_long(game_id: str, data: st.DataObject) -> None:
    fuzz_aec(data, game_id)


# ---------------------------------------------------------------------- the single-agent env
def fuzz_single(data: st.DataObject, game_id: str) -> None:
    config_cls = make(game_id, raw=True).game.config_cls
    options, valid, sure = data.draw(
        constructor_options(game_id, config_cls, ("render_mode", "illegal_reward", "learner_seat")),
        label="constructor options",
    )
    try:
        env = make_single_agent(game_id, **options)
    except OptionError as err:
        assert not sure, f"refused a grid entry's options {options}: {err}"
        return
    assert valid, f"accepted bad constructor options {options}"
    game = env.game
    n = game.num_players
    snapshot = lambda: single_snapshot(env)  # noqa: E731
    for _ in range(data.draw(st.integers(0, 25), label="calls")):
        op = data.draw(st.sampled_from(["legal", "legal", "legal", "any", "bad", "reset"]))
        over = env._state is None or env._state.done or env._illegal > 0
        if op == "reset":
            seed, opts, ok = data.draw(reset_call(n, game.extra_reset_options, getattr(game, "drawn", False), True))
            accepted = check_rejected(partial(env.reset, seed=seed, options=opts), snapshot, (OptionError,))
            assert accepted == ok, f"reset(seed={seed!r}, options={opts!r}) accepted={accepted}"
            continue
        index, any_action, bad = data.draw(ACTION_DRAWS)  # never dependent on the env (see fuzz_aec)
        if op == "legal" and not over:
            legal = np.flatnonzero(env.action_masks())
            action: Any = int(legal[index % len(legal)])
        elif op == "bad":
            action = bad
        else:
            action = any_action % game.num_actions
        accepted = check_rejected(partial(env.step, action), snapshot, (CallOrderError, ValueError))
        if over:
            assert not accepted, "step() before reset() or after the episode was accepted"
    seed = data.draw(st.integers(0, 2**32 - 1))
    if env._state is None or env._state.done or env._illegal:
        env.reset(seed=seed)
    for _ in range(MAX_DECISIONS):
        _, _, terminated, _, _ = env.step(int(np.flatnonzero(env.action_masks())[0]))
        if terminated:
            break
    assert env.game_state.done, "the game did not end"


@pytest.mark.parametrize("game_id", GAME_IDS)
@settings(FAST, max_examples=15)
@given(data=st.data())
def test_fuzz_single_agent_env(game_id: str, data: st.DataObject) -> None:
    fuzz_single(data, game_id)


@pytest.mark.slow
@pytest.mark.parametrize("game_id", GAME_IDS)
@settings(SLOW, max_examples=150)
@given(data=st.data())
def test_fuzz_single_agent_env_long(game_id: str, data: st.DataObject) -> None:
    fuzz_single(data, game_id)
