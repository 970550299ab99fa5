"""Helpers for testing games and agents: random legal play through the rules, the option grid, and the fast encoder
held to its plain reference twin, a batched engine in lockstep with the AEC env (:func:`lockstep`), a heuristic port
against the Python heuristic (:func:`compare_positions`).

Used by the project's own conformance tests; a new game's tests call them too (``docs/adding_a_game.md``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import numpy as np

from whist_env.agents.base import random_action
from whist_env.encoding.layout import Layout
from whist_env.registry import game_ids, get_spec
from whist_env.rules.core import PHASE_OVER, State, TrickGame
from whist_env.rules.core import _all_slots as all_slots
from whist_env.view import PlayerView


def option_cases() -> list[tuple[str, dict[str, Any]]]:
    """``(game_id, options)`` for every registered game and every entry of its spec's ``option_grid``."""
    return [(game_id, dict(options)) for game_id in game_ids() for options in get_spec(game_id).option_grid]


def same_info(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Whether two infos hold the same keys and values (their numpy arrays compared by value)."""
    return a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)


def case_id(game_id: str, options: dict[str, Any]) -> str:
    """A readable test id: ``classic_whist_v0[episode=deal]``."""
    return f"{game_id}[{','.join(f'{k}={v}' for k, v in options.items()) or 'default'}]"


def play_random_episode(game: TrickGame, rng: np.random.Generator, check: bool = True, **start: Any) -> Iterator[State]:
    """Play one episode with random legal actions, yielding the state at the start and after each action.

    Args:
        game: the rules.
        rng: the generator for deals and choices.
        check: run ``game.check_invariants`` after every action.
        **start: passed to ``game.new_episode`` (``deck``, ``dealer``, ...).
    """
    state = game.new_episode(rng, **start)
    if check:
        game.check_invariants(state)
    yield state
    while not state.done:
        game.step(state, random_action(game.legal_mask(state), rng), rng)
        if check:
            game.check_invariants(state)
        yield state


def mismatch_report(layout: Layout, fast: np.ndarray, ref: np.ndarray, view: PlayerView) -> str:
    """Which pieces differ between two observation vectors, each side in words, and the view."""
    lines = [f"fast encoder != reference for seat {view.seat} (phase {view.phase}, to act {view.to_act}):"]
    for piece in layout.pieces:
        part = layout.slice(piece.name)
        if fast[part].tobytes() != ref[part].tobytes():
            one = Layout([piece])
            lines.append(
                f"  piece {piece.name!r} [{part.start}:{part.stop}]: fast {one.unpack(fast[part])[piece.name]!r}, "
                f"reference {one.unpack(ref[part])[piece.name]!r}"
            )
    lines.append(view.summary())
    return "\n".join(lines)


def reference_mismatches(
    game_id: str, options: dict[str, Any], num_games: int, seed: int, max_views: int | None = None
) -> tuple[int, str | None]:
    """Play random episodes and hold the game's fast encoder to its reference encoder (``GameSpec.reference``) at
    every seat's view after every action, bit for bit (``encode``, ``encode_with_mask`` and ``encode_state``, the
    view-free path, its action mask too).

    Args:
        game_id: a registered game whose spec names a reference encoder.
        options: its options.
        num_games: episodes to play at most.
        seed: seeds the deals and the random choices.
        max_views: stop after the episode in which this many views have been compared (None: no limit).

    Returns:
        ``(views compared, None)``, or at the first difference ``(views compared, a report naming the pieces)``.

    Raises:
        ValueError: for a game whose spec names no reference encoder.
    """
    spec = get_spec(game_id)
    reference_cls = spec.reference_cls()
    if reference_cls is None:
        raise ValueError(f"{game_id}'s spec names no reference encoder (GameSpec.reference)")
    game = spec.make_rules(**options)
    fast = spec.make_encoder(game)
    layout = fast.layout
    reference = reference_cls(game)
    rng = np.random.default_rng(seed)
    checked = 0
    for episode in range(num_games):
        for state in play_random_episode(game, rng, check=False):
            for seat in range(state.num_players):
                view = game.view(state, seat)
                if checked == 0:
                    # the reference declares its pieces on its own: same names, sizes and order as the layout
                    order = reference.order(view)
                    if order != [(p.name, p.size) for p in layout.pieces]:
                        return checked, f"the reference's pieces {order} differ from the layout's {layout.pieces}"
                ref = reference.encode(view)
                plain, plain_mask = fast.encode_with_mask(view)
                obs, mask = fast.encode_state(game, state, seat)
                for got in (fast.encode(view), plain, obs):
                    if got.dtype != np.float32 or got.shape != ref.shape or got.tobytes() != ref.tobytes():
                        return checked, mismatch_report(layout, got, ref, view)
                if mask.dtype != np.int8 or mask.tobytes() != plain_mask.tobytes():
                    return checked, f"encode_state's action mask differs from the view's: {view.summary()}"
                checked += 1
        if not state.done:
            return checked, f"episode {episode} did not end"
        if max_views is not None and checked >= max_views:
            break
    return checked, None


__all__ = [
    "case_id",
    "mismatch_report",
    "option_cases",
    "play_random_episode",
    "random_action",
    "reference_mismatches",
    "same_info",
]


# slots of a rules state the engine does not keep (the last deal's summary feeds only ``infos``)
NOT_KEPT = {"deal_summary"}


def pieces_differing(layout: Any, got: np.ndarray, want: np.ndarray) -> list[str]:
    """Names of the layout pieces where two observations differ (for failure messages)."""
    return [p.name for p in layout.pieces if not np.array_equal(got[layout.slice(p.name)], want[layout.slice(p.name)])]


def state_fields(state: State) -> dict[str, Any]:
    """A rules state's slots (lists stay lists and tuples tuples: an export must give the rules' own types)."""
    return {name: getattr(state, name) for name in all_slots(type(state)) if name not in NOT_KEPT}


def lockstep(
    game_id: str, options: dict[str, Any], num_envs: int, min_deals: int, seed: int, obs_dtype: str | None = None
) -> int:
    """Play ``num_envs`` environments of a game's batched engine in lockstep with their AEC twins until ``min_deals``
    deals are done: the recipe's check of a new engine (docs/adding_a_game.md).

    Each environment's twin is dealt the same decks (the batch's own: the twin's ``draw_deck`` reads the batch's
    current deck) and given the same random legal actions; at every decision :func:`check_lockstep` holds the
    batch to the twins.

    Returns:
        The number of deals played (every one compared at every decision).

    Raises:
        AssertionError: at the first difference, with the environment, the step and the pieces that differ.
    """
    import whist_env.vector as vector  # numba: only when an engine is checked
    from whist_env.envs.registration import make

    rng = np.random.default_rng(seed)
    venv = vector.make(game_id, num_envs, seed=seed, obs_dtype=obs_dtype, **options)
    layout = venv.encoder.layout
    n = venv.num_players
    deck_field, dealer_field = venv.field("deck"), venv.field("dealer")
    twins = [make(game_id, raw=True, **options) for _ in range(num_envs)]
    # Oh Hell's drawn trump card: each env draws it from its own generator; the twin is given the batch's
    drawn = venv.field("drawn_card") if "drawn_card" in venv.game_fields else None

    def batch_deck(i: int, state: State) -> list[int]:
        if drawn is not None and drawn[i, 0] >= 0:
            state.drawn_card = int(drawn[i, 0])  # type: ignore[attr-defined]
        return [int(c) for c in deck_field[i]]

    def start(i: int, deck: list[int], dealer: int) -> dict[str, Any]:
        extra = {"trump_card": int(drawn[i, 0])} if drawn is not None and drawn[i, 0] >= 0 else {}
        return {"deck": deck, "dealer": dealer, **extra}

    for i, twin in enumerate(twins):
        # the twin's later deals are the batch's: the instance attribute shadows the rules' draw_deck
        twin.game.draw_deck = lambda _rng, state, i=i: batch_deck(i, state)  # type: ignore[method-assign]
    decks = np.array([rng.permutation(52) for _ in range(num_envs)])
    dealers = rng.integers(n, size=num_envs)
    ts = venv.reset(options={"decks": decks, "dealers": dealers})
    for i, twin in enumerate(twins):
        twin.reset(options=start(i, decks[i].tolist(), int(dealers[i])))
    deals = 0
    step = 0
    while True:
        check_lockstep(venv, twins, ts, layout, rng, step)
        if deals >= min_deals:
            return deals
        legal = ts.action_mask.astype(bool)
        # a random legal card per env (any number where the episode ended: the action is ignored)
        pick = np.where(legal.any(axis=1), (rng.random(legal.shape) * legal).argmax(axis=1), 7)
        was_over = ts.terminated.copy()
        before = venv.field("deal_index")[:, 0].copy()
        ts = venv.step(pick)
        step += 1
        after = venv.field("deal_index")[:, 0]
        for i, twin in enumerate(twins):
            if was_over[i]:
                twin.reset(options=start(i, [int(c) for c in deck_field[i]], int(dealer_field[i, 0])))
            else:
                twin.step(int(pick[i]))
                deals += int(ts.terminated[i] or after[i] != before[i])


def check_lockstep(venv: Any, twins: list[Any], ts: Any, layout: Any, rng: np.random.Generator, step: int) -> None:
    """Every environment of the batch equals its twin now: the seat to act, the action mask, the observation (bit
    for bit, also of a random other seat), the rewards, the terminations, the full state (``state()``, every 7th
    step) and the exported rules state."""
    n = venv.num_players
    agents = twins[0].possible_agents
    seats = rng.integers(n, size=venv.num_envs)
    other_obs, other_mask = venv.observe(seats)
    assert ts.observation.dtype == venv.obs_dtype and ts.action_mask.dtype == np.int8
    full = venv.state() if step % 7 == 0 else None
    for i, twin in enumerate(twins):
        state = twin.game_state
        where = f"env {i} step {step}"
        over = state.phase == PHASE_OVER
        assert bool(ts.terminated[i]) == all(twin.terminations.values()) == over, where
        assert not ts.truncated[i]
        assert int(ts.current_player[i]) == state.to_act, where
        seat = state.history[-1][0] if over else state.to_act
        want = twin.observe(agents[seat])
        got = ts.observation[i].astype(np.float32)
        assert np.array_equal(got, want["observation"]), (where, pieces_differing(layout, got, want["observation"]))
        assert np.array_equal(ts.action_mask[i], want["action_mask"]), where
        assert ts.rewards[i].tolist() == [float(twin.rewards[a]) for a in agents], where
        other = twin.observe(agents[seats[i]])
        got = other_obs[i].astype(np.float32)
        assert np.array_equal(got, other["observation"]), (
            where,
            seats[i],
            pieces_differing(layout, got, other["observation"]),
        )
        assert np.array_equal(other_mask[i], other["action_mask"]), (where, seats[i])
        if full is not None:
            assert np.array_equal(full[i], twin.state()), where
        assert state_fields(venv.export_state(i)) == state_fields(state), where


def compare_positions(
    game_id: str, options: dict[str, Any], positions: int, seed: int, num_envs: int = 32, heuristic_share: float = 0.6
) -> Counter[int]:
    """Hold a game's batched heuristic port to its Python heuristic, decision by decision: the recipe's check of a
    new port (docs/adding_a_game.md).

    A batch of engine environments is played by a mix of the port (``heuristic_share`` of the decisions) and random
    legal actions. At every decision the port's action (``BatchedHeuristic.act_state``) must equal the Python
    agent's (``make_agent("heuristic", game, **options).act(view, rng)``) for the view the rules give the seat to
    act of the exported state; one Python agent per environment and seat, fed that seat's decisions in order (an
    agent with a memory sees what it would see in a game). Plays until at least ``positions`` decisions were
    compared; returns how often each action was the decision.

    Raises:
        AssertionError: at the first decision where the port and the Python agent differ, with the view.
    """
    import whist_env.vector as vector  # numba: only when a port is checked
    from whist_env.agents import make_agent
    from whist_env.vector.heuristics import BatchedHeuristic
    from whist_env.vector.learner import random_actions

    venv = vector.make(game_id, num_envs, seed=seed, **options)
    game = venv.game
    batched = BatchedHeuristic(game_id, **options)
    agents = [[make_agent("heuristic", game_id, **options) for _ in range(venv.num_players)] for _ in range(num_envs)]
    rng = np.random.default_rng(seed)
    every = np.arange(num_envs)
    ts = venv.reset()
    decided: Counter[int] = Counter()
    while decided.total() < positions:
        got = batched.act_state(venv, every)
        for i in every:
            seat = int(ts.current_player[i])
            if seat < 0:
                assert got[i] == -1
                agents[i] = [make_agent("heuristic", game_id, **options) for _ in range(venv.num_players)]
                continue
            view = game.view(venv.export_state(int(i)), seat)
            want = agents[i][seat].act(view, rng)
            assert got[i] == want, (
                f"{game_id} {options}: env {i} seat {seat}: port plays {got[i]}, Python {want}\n{view.summary()}"
            )
            decided[want] += 1
        acts = got.copy()
        live = np.flatnonzero(ts.current_player >= 0)
        rand = live[rng.random(len(live)) >= heuristic_share]
        if len(rand):
            acts[rand] = random_actions(ts.action_mask[rand] != 0, rng)
        acts[ts.current_player < 0] = 0  # an ended episode ignores its action
        ts = venv.step(acts)
    return decided


# ------------------------------------------------------------------ the batched engine
def random_legal(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A random legal action per row (0 where nothing is legal: an ended episode ignores it)."""
    legal = mask.astype(bool)
    return np.where(legal.any(axis=1), (rng.random(legal.shape) * legal).argmax(axis=1), 0)


@contextmanager
def unchanged(venv: Any) -> Iterator[None]:
    """Asserts that the block runs without changing any environment or generator."""
    state, gens = venv._state.copy(), venv._rng.copy()
    yield
    assert np.array_equal(venv._state, state), "an environment changed"
    assert np.array_equal(venv._rng, gens), "a generator moved"


def follow_twin(venv: Any, env: int, twin: Any, steps: int, rng: np.random.Generator) -> None:
    """Play ``steps`` random legal decisions in every environment of ``venv`` and in ``twin`` (an AEC env whose
    position environment ``env`` holds), checking before each that every seat's observation and mask, and the
    full state, are the twin's, and after each that the rewards are."""
    agents = twin.possible_agents
    for step in range(steps):
        for seat in range(venv.num_players):
            obs, mask = venv.observe(np.full(venv.num_envs, seat))
            want = twin.observe(agents[seat])
            assert np.array_equal(obs[env], want["observation"]), (step, seat)
            assert np.array_equal(mask[env], want["action_mask"]), (step, seat)
        assert np.array_equal(venv.state()[env], twin.state()), step
        actions = random_legal(venv.observe(np.maximum(venv.field("to_act")[:, 0], 0))[1], rng)
        ts = venv.step(actions)
        twin.step(int(actions[env]))
        assert ts.rewards[env].tolist() == [twin.rewards[a] for a in agents], step
