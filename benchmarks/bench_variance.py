"""The variance study of issue #43 (item 4): do control variates narrow a duplicate match's interval here?

AIVAT-style corrections (Burch et al., AAAI-18) on the arena's own duplicate deals, two-player games only. A fixed
value function ``V`` (seat 0's view of a position, linear in what it sees) is fitted on deals of its own seed
*before* any evaluation deal is played (``fit``), saved, and named in the report by the sha256 of its file. Each
table's return is then corrected by

* at every decision of an agent whose action probabilities are known (``random``: uniform over the legal actions;
  ``pretrained(deterministic=False)``: the softmax of its legal logits), ``g(a_taken) - sum_a p(a) g(a)``, where
  ``g(a)`` is ``V`` of the position after action ``a`` (a card moved to the table; a completed trick scored; an
  exchange of a hand for the expected blind);
* at every chance event during play, ``V(outcome) - E[V]`` over the outcomes possible: German Whist's hidden draw
  and next face-up card after each trick of phase 1 (uniform over the face-down stock), Swedish Humbug whist's blind
  taken by an exchange (13 of the 26 cards in neither hand, or the blind left once the other seat took its own).

Both terms have mean 0 whatever ``V`` is, as long as ``V`` reads only what is dealt or revealed up to the event: both
hands (allowed), the table, the face-up card, never the face-down stock or the blinds. Deterministic agents
(``heuristic``, ``pretrained``) give decision terms of exactly 0, and Humbug (no chance after the deal) chance terms
of exactly 0: the report says so.

``V``: per stage (German Whist and Humbug: the trick number; Swedish Humbug whist: 0 for the exchange, then 1 + the
trick number), a ridge fit of seat 0's final return on 82 features: per card type (its rank, and whether it is a
trump) the count in seat 0's hand less seat 1's, on the table (signed by who played it) and face up (signed by the
leader); the trick differences (German Whist: phase 1 and phase 2 apart); who leads; a constant.

Reported per game and pairing, on the same deals: the variance of the corrected per-deal difference over the plain
duplicate one (with a 95% bootstrap interval), and the CPU time per deal of each (the corrected one adds the time of
its terms): the corrected method pays when ``variance ratio * time ratio <= 1/2`` (the issue's bar: the same interval
in at most half the time).

    python benchmarks/bench_variance.py fit --out /tmp/value.npz
    python benchmarks/bench_variance.py measure --value /tmp/value.npz --deals 1000
"""

from __future__ import annotations

import argparse
import hashlib
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from whist_env.agents.pretrained import PretrainedAgent, choose
from whist_env.cards import bits_of
from whist_env.evaluation.arena import Arena, ArenaConfig
from whist_env.games.german_whist.rules import PHASE1_TRICKS
from whist_env.games.humbug_whist.rules import EXCHANGE
from whist_env.rules.core import PHASE_EXCHANGE

GAMES = ("german_whist_v0", "humbug_whist_v0", "humbug_v0")
STAGES = 27  # German Whist: tricks 0..25; Swedish Humbug whist: exchange + 13 tricks; Humbug: 0..25
HAND, TABLE, FACE, TRICKS1, TRICKS2, LEADS, BIAS = 0, 26, 52, 78, 79, 80, 81
NUM_FEATURES = 82
SAMPLED = "pretrained(deterministic=False)"
PAIRINGS = ((SAMPLED, "heuristic"), ("random", "heuristic"), ("pretrained", "heuristic"))
FIT_SEED, BETA_SEED, EVAL_SEED = 20261206, 20261208, 20261207  # V's deals, the coefficients', the evaluation's


def card_types(trump: int | None) -> list[int]:
    """The type of every card: its rank (0..12), plus 13 for a trump."""
    return [c % 13 + (13 if c // 13 == trump else 0) for c in range(52)]


def sign(seat: int) -> int:
    return 1 if seat == 0 else -1


def stage(game_id: str, state: Any) -> int:
    if game_id == "humbug_whist_v0":
        return 0 if state.phase == PHASE_EXCHANGE else 1 + state.trick_number
    return state.trick_number


def features(game_id: str, state: Any, types: list[int]) -> np.ndarray:
    """Seat 0's features of ``state`` (only what both hands, the table and the face-up card show)."""
    x = np.zeros(NUM_FEATURES)
    for c in bits_of(state.hands[0]):
        x[HAND + types[c]] += 1
    for c in bits_of(state.hands[1]):
        x[HAND + types[c]] -= 1
    for s, c in state.trick:
        x[TABLE + types[c]] += sign(s)
    if game_id == "german_whist_v0" and state.trick_number < PHASE1_TRICKS and state.turn_up >= 0:
        x[FACE + types[state.turn_up]] += sign(state.leader)
    t = state.tricks_won
    if game_id == "german_whist_v0":
        p1 = state.phase1_won
        x[TRICKS1] = p1[0] - p1[1]
        x[TRICKS2] = (t[0] - p1[0]) - (t[1] - p1[1])
    else:
        x[TRICKS1] = t[0] - t[1]
    x[LEADS] = sign(state.leader)
    x[BIAS] = 1.0
    return x


def play_delta(game: Any, game_id: str, state: Any, card: int, w: np.ndarray, types: list[int]) -> float:
    """``V`` after ``card`` is played for the seat to act, less ``V`` now (the weights ``w`` of the stage now)."""
    s = state.to_act
    delta = -sign(s) * w[HAND + types[card]]
    if len(state.trick) + 1 < 2:
        return float(delta + sign(s) * w[TABLE + types[card]])
    plays = [*state.trick, (s, card)]
    winner = game.trick_winner(plays, state.trump)
    for seat, c in state.trick:
        delta -= sign(seat) * w[TABLE + types[c]]
    phase1 = game_id == "german_whist_v0" and state.trick_number < PHASE1_TRICKS
    delta += sign(winner) * w[TRICKS1 if phase1 or game_id != "german_whist_v0" else TRICKS2]
    delta += (sign(winner) - sign(state.leader)) * w[LEADS]
    if phase1 and state.turn_up >= 0:  # the face-up prize goes to the winner's hand
        delta += sign(winner) * w[HAND + types[state.turn_up]] - sign(state.leader) * w[FACE + types[state.turn_up]]
    return float(delta)


def exchange_delta(state: Any, seat: int, w: np.ndarray, types: list[int]) -> float:
    """Swedish Humbug whist: ``E[V]`` after ``seat`` exchanges, less ``V`` now (the blind drawn from the cards in
    neither hand nor put away)."""
    unknown = bits_of(((1 << 52) - 1) ^ state.hands[0] ^ state.hands[1] ^ state.put_away[0] ^ state.put_away[1])
    blind = 13 / len(unknown) * sum(w[HAND + types[c]] for c in unknown)
    own = sum(w[HAND + types[c]] for c in bits_of(state.hands[seat]))
    return float(sign(seat) * (blind - own))


class Value:
    """The fitted ``V``: weights per stage, and the sha256 of the file they came from."""

    def __init__(self, path: Path) -> None:
        data = np.load(path, allow_pickle=False)
        self.weights = {g: data[g] for g in GAMES}
        self.betas = {k: data[k] for k in data.files if k.startswith("beta/")}
        self.sha256 = hashlib.sha256(path.read_bytes()).hexdigest()


Probs = Callable[[], dict[int, float]]


def act_with_probs(agent: Any, view: Any, rng: np.random.Generator) -> tuple[int, Probs | None]:
    """The agent's action at ``view`` (the same as ``agent.act(view, rng)``, drawn the same way), and, when its
    action probabilities are known and not a point mass, a function that gives them (else None). A sampled network
    runs once for both; the probabilities are worked out when asked for (the estimator's time, not the play's)."""
    if agent.name == "random":
        legal = view.legal
        return int(agent.act(view, rng)), lambda: dict.fromkeys(bits_of(legal), 1 / legal.bit_count())
    if not isinstance(agent, PretrainedAgent) or agent.deterministic:
        return int(agent.act(view, rng)), None
    obs, mask = agent.encoder.encode_with_mask(view)  # play_policy's steps, the logits kept
    canonical = agent.canonical
    back: Callable[[int], int] = int
    if canonical is not None:
        obs, mask, perm = canonical.forward(obs, mask)
        back = lambda a: int(canonical.action_back(a, perm))  # noqa: E731
    logits = agent.policy.logits(obs)
    action = choose(logits, mask, False, rng)

    def probs() -> dict[int, float]:
        on = [int(a) for a in np.flatnonzero(mask)]
        z = logits[on].astype(np.float64)
        p = np.exp(z - z.max())
        return {back(a): float(q) for a, q in zip(on, p / p.sum(), strict=True)}

    return back(action), probs


def play_table(
    arena: Arena, index: int, replay: int, assignment: tuple[int, ...], value: Value | None, record: list[Any] | None
) -> tuple[list[float], float, float, float]:
    """One table of deal ``index`` as the arena plays it: the returns, seat 0's decision and chance terms, and the
    seconds spent on them. With ``record``, appends ``(stage, features, None)`` at every decision (fitting)."""
    game, game_id = arena.game, arena.config.game_id
    seed = arena.config.seed
    dealer, deck = arena.deal(index)
    game_rng = np.random.default_rng([seed, index, 1])
    state = game.new_episode(game_rng, deck=deck, dealer=dealer)
    rngs = [np.random.default_rng([seed, index, 2, replay, s]) for s in range(2)]
    agents = [arena.agent(j, s) for s, j in enumerate(assignment)]
    types = card_types(state.trump)
    weights = None if value is None else value.weights[game_id]
    decision = chance = spent = 0.0
    while not state.done:
        seat = state.to_act
        view = game.view(state, seat)
        action, probs = act_with_probs(agents[seat], view, rngs[seat])
        t0 = time.process_time()
        if record is not None:
            record.append((stage(game_id, state), features(game_id, state, types)))
        w = None if weights is None else weights[stage(game_id, state)]
        if w is not None:
            if probs is not None:
                p = probs()
                g = {a: exchange_step(state, seat, a, w, types) if a >= 52 else play_delta(game, game_id, state, a, w,
                     types) for a in p}  # fmt: skip
                decision += g[action] - sum(q * g[a] for a, q in p.items())
            before = (state.trick_number, list(state.hands))
        spent += time.process_time() - t0
        game.step(state, action, game_rng)
        t0 = time.process_time()
        if w is not None:
            chance += chance_term(game_id, state, seat, action, before, w, types)
        spent += time.process_time() - t0
    return [float(r) for r in state.returns], decision, chance, spent


def exchange_step(state: Any, seat: int, action: int, w: np.ndarray, types: list[int]) -> float:
    return exchange_delta(state, seat, w, types) if action == EXCHANGE else 0.0


def chance_term(
    game_id: str, state: Any, seat: int, action: int, before: tuple[int, list[int]], w: np.ndarray, types: list[int]
) -> float:
    """Seat 0's ``V(outcome) - E[V]`` of the chance the step just taken revealed (the weights of the decision's
    stage), 0 when it revealed none."""
    k_before, hands_before = before
    if game_id == "german_whist_v0" and state.trick_number > k_before and k_before < PHASE1_TRICKS:
        k = state.trick_number  # the trick just won: the loser drew stock[2k - 1], stock[2k] is face up
        winner = state.last_winner
        hidden, pool = state.stock[2 * k - 1], state.stock[2 * k - 1 :]
        term = sign(1 - winner) * (w[HAND + types[hidden]] - np.mean([w[HAND + types[c]] for c in pool]))
        if k < PHASE1_TRICKS:
            face, pool = state.stock[2 * k], state.stock[2 * k :]
            term += sign(winner) * (w[FACE + types[face]] - np.mean([w[FACE + types[c]] for c in pool]))
        return float(term)
    if game_id == "humbug_whist_v0" and action == EXCHANGE and state.put_away[seat]:
        # the blind now in the seat's hand, against the expectation over the cards it was drawn from
        unknown = bits_of(((1 << 52) - 1) ^ hands_before[0] ^ hands_before[1] ^ _put_away_before(state, seat))
        got = sum(w[HAND + types[c]] for c in bits_of(state.hands[seat]))
        expected = 13 / len(unknown) * sum(w[HAND + types[c]] for c in unknown)
        return float(sign(seat) * (got - expected))
    return 0.0


def _put_away_before(state: Any, seat: int) -> int:
    """The hands put away before ``seat``'s exchange (the other seat's, if it exchanged first)."""
    return state.put_away[1 - seat] if state.decisions[1 - seat] == 1 else 0


def arena_of(game_id: str, pairing: tuple[str, str], deals: int, seed: int) -> Arena:
    return Arena(ArenaConfig(game_id, pairing, deals, seed))  # type: ignore[arg-type]


def play_deals(arena: Arena, deals: int, value: Value | None) -> np.ndarray:
    """Every deal of ``arena`` (agent a against agent b, each table as the arena plays it): per deal, the plain
    duplicate difference a − b, the decision and the chance terms (in the same unit: what they take off it), the CPU
    seconds of the play and of the terms."""
    out = np.zeros((deals, 5))
    tables = len(arena.assignments)
    for index in range(deals):
        for replay, assignment in enumerate(arena.assignments):
            t0 = time.process_time()
            returns, decision, chance, spent = play_table(arena, index, replay, tuple(assignment), value, None)
            a_seat = list(assignment).index(0)
            flip = 2 if a_seat == 0 else -2  # seat 0's terms, as they move a − b (zero-sum: seat 1's are the negative)
            diff = returns[a_seat] - returns[1 - a_seat]
            out[index] += (diff / tables, flip * decision / tables, flip * chance / tables, 0.0, spent)
            out[index, 3] += time.process_time() - t0 - spent
    return out


def fit(out: Path, deals: int, ridge: float) -> None:
    """Fit ``V`` on ``deals`` deals of every pairing (seed :data:`FIT_SEED`), one ridge fit per stage; then, on
    ``deals`` more (seed :data:`BETA_SEED`), each pairing's coefficients of the two terms (the least-squares ones)."""
    arrays: dict[str, np.ndarray] = {}
    for game_id in GAMES:
        xs: list[list[np.ndarray]] = [[] for _ in range(STAGES)]
        ys: list[list[float]] = [[] for _ in range(STAGES)]
        for pairing in PAIRINGS:
            arena = arena_of(game_id, pairing, deals, FIT_SEED)
            for index in range(deals):
                for replay, assignment in enumerate(arena.assignments):
                    record: list[Any] = []
                    returns, *_ = play_table(arena, index, replay, tuple(assignment), None, record)
                    for t, x in record:
                        xs[t].append(x)
                        ys[t].append(returns[0])
        w = np.zeros((STAGES, NUM_FEATURES))
        for t in range(STAGES):
            if xs[t]:
                a, b = np.array(xs[t]), np.array(ys[t])
                w[t] = np.linalg.solve(a.T @ a + ridge * np.eye(NUM_FEATURES), a.T @ b)
        arrays[game_id] = w
        print(f"{game_id}: V fitted on {sum(len(x) for x in xs):,} positions", flush=True)
    np.savez(out, **arrays)  # type: ignore[arg-type]
    value = Value(out)
    for game_id in GAMES:
        for k, pairing in enumerate(PAIRINGS):
            rows = play_deals(arena_of(game_id, pairing, deals, BETA_SEED), deals, value)
            arrays[f"beta/{game_id}/{k}"] = coefficients(rows)
            print(f"{game_id} {pairing[0]} − {pairing[1]}: coefficients {arrays[f'beta/{game_id}/{k}']}", flush=True)
    np.savez(out, **arrays)  # type: ignore[arg-type]
    print(f"V written to {out}: sha256 {hashlib.sha256(out.read_bytes()).hexdigest()}")


def coefficients(rows: np.ndarray) -> np.ndarray:
    """The coefficients of the decision and the chance terms that leave the least variance (0 for a term that is
    always 0)."""
    terms = rows[:, 1:3] - rows[:, 1:3].mean(axis=0)
    used = np.abs(terms).sum(axis=0) > 0
    beta = np.zeros(2)
    if used.any():
        target = rows[:, 0] - rows[:, 0].mean()
        beta[used] = np.linalg.lstsq(terms[:, used], target, rcond=None)[0]
    return beta


def measure(value: Value, deals: int, resamples: int) -> None:
    """Plain duplicate against the two corrected estimates on the same ``deals`` deals (seed :data:`EVAL_SEED`)."""
    print(f"V: sha256 {value.sha256}; {deals} deals per pairing, seed {EVAL_SEED}, {resamples} bootstrap resamples")
    print("| game | a − b | plain mean ± 95% | AIVAT: variance ratio | fitted coefficients | variance ratio (95%) | "
          "CPU ms/deal plain, corrected | cost ratio | terms |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|")
    rng = np.random.default_rng(0)
    for game_id in GAMES:
        for k, pairing in enumerate(PAIRINGS):
            rows = play_deals(arena_of(game_id, pairing, deals, EVAL_SEED), deals, value)
            report(game_id, pairing, rows, value.betas[f"beta/{game_id}/{k}"], rng, resamples)


def report(
    game_id: str, pairing: tuple[str, str], rows: np.ndarray, beta: np.ndarray, rng: np.random.Generator, n: int
) -> None:
    plain, decision, chance, play_s, terms_s = rows.T
    deals = len(plain)
    aivat = plain - decision - chance
    fitted = plain - beta[0] * decision - beta[1] * chance
    idx = rng.integers(deals, size=(n, deals))
    var_plain = plain[idx].var(axis=1, ddof=1)
    keep = var_plain > 0
    ratios = fitted[idx].var(axis=1, ddof=1)[keep] / var_plain[keep]
    low, high = np.quantile(ratios, [0.025, 0.975]) if keep.any() else (np.nan, np.nan)
    v = plain.var(ddof=1)
    ratio_aivat, ratio = aivat.var(ddof=1) / v, fitted.var(ddof=1) / v
    t_plain, t_corr = 1e3 * play_s.mean(), 1e3 * (play_s + terms_s).mean()
    zero = [name for name, t in (("decision", decision), ("chance", chance)) if not t.any()]
    terms = ", ".join(f"{z} terms exactly 0" for z in zero) or "both"
    half = 1.96 * plain.std(ddof=1) / deals**0.5
    cells = [
        game_id,
        f"{pairing[0]} − {pairing[1]}",
        f"{plain.mean():+.3f} ± {half:.3f}",
        f"{ratio_aivat:.3f}",
        f"{beta[0]:.2f}, {beta[1]:.2f}",
        f"{ratio:.3f} [{low:.3f}, {high:.3f}]",
        f"{t_plain:.1f}, {t_corr:.1f}",
        f"{ratio * t_corr / t_plain:.3f}",
        terms,
    ]
    print("| " + " | ".join(cells) + " |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p_fit = sub.add_parser("fit", help="fit V on deals of its own seed")
    p_fit.add_argument("--out", type=Path, required=True)
    p_fit.add_argument("--deals", type=int, default=400, help="deals per pairing")
    p_fit.add_argument("--ridge", type=float, default=1.0)
    p_measure = sub.add_parser("measure", help="plain duplicate against the corrected estimate")
    p_measure.add_argument("--value", type=Path, required=True)
    p_measure.add_argument("--deals", type=int, default=1000)
    p_measure.add_argument("--resamples", type=int, default=2000)
    args = parser.parse_args()
    run: Callable[[], None]
    if args.command == "fit":
        run = lambda: fit(args.out, args.deals, args.ridge)  # noqa: E731
    else:
        run = lambda: measure(Value(args.value), args.deals, args.resamples)  # noqa: E731
    run()


if __name__ == "__main__":
    main()
