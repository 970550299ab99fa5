"""A class tournament end to end: how long a round robin of a class's bots takes, and where the time goes.

The class: 30 starter bots (the Python starter, the game's heuristic behind the helper, each with its own seed),
6 random bots, 4 hostile bots (one that sleeps, one that crashes, one that answers garbage, one that allocates memory
without end), and the reference bots (random, heuristic, pimc, pretrained) as gates; German Whist; a full round robin
with 100 duplicate deals per pairing, fresh processes per match half, 2 workers; the default limits.

    python benchmarks/bench_class.py --out /tmp/class          # about 25 minutes on 2 idle cores
    python benchmarks/bench_class.py --starters 4 --random 1 --hostile 1 --deals 10   # a quick look

It prints the wall time, the time split (decisions, process starts, search), a formula in bots, deals and
milliseconds per decision, a bot process's start time, and the memory of the referee (this process and its workers)
after the first tenth of the matches and at the end; and it checks that no bot process is left. Results are in
docs/results_arena.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from whist_env.evaluation.tournament import load_tournament, run_tournament

HERE = Path(__file__).resolve().parent
STARTER = HERE.parent / "whist_env" / "evaluation" / "starters" / "starter.py"
HOSTILE = HERE.parent / "tests" / "evaluation" / "bots" / "hostile.py"
RANDOM_BOT = "from whist_env.evaluation.bot import run_bot\nrun_bot('random')\n"
HOSTILE_KINDS = ("sleep", "crash", "garbage", "memory")


def rss_kib(pid: int) -> int:
    """The resident memory of a process in KiB (0 when it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def children_of(pid: int) -> list[int]:
    """The process ids whose parent is ``pid``."""
    out = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                stat = Path(entry.path, "stat").read_bytes()
            except OSError:
                continue
            if int(stat[stat.rindex(b")") + 2 :].split()[1]) == pid:
                out.append(int(entry.name))
    return out


def referee_memory() -> dict[str, int]:
    """This process's resident memory and its pool workers' (its children started by multiprocessing's spawn; the
    resource tracker, a child too, is left out)."""
    workers = [pid for pid in children_of(os.getpid()) if b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes()]
    return {
        "main_kib": rss_kib(os.getpid()),
        "workers_kib": sum(rss_kib(pid) for pid in workers),
        "workers": len(workers),
    }


def make_class(folder: Path, starters: int, randoms: int, hostile: int, deals: int, workers: int) -> Path:
    bots = folder / "bots"
    bots.mkdir(parents=True)
    for i in range(1, starters + 1):
        shutil.copy(STARTER, bots / f"starter{i:02d}.py")
    for i in range(1, randoms + 1):
        (bots / f"random{i}.py").write_text(RANDOM_BOT)
    for kind in HOSTILE_KINDS[:hostile]:
        bot = bots / f"hostile_{kind}"
        bot.mkdir()
        shutil.copy(HOSTILE, bot)
        (bot / "bot.toml").write_text(f'command = ["{{python}}", "hostile.py", "{kind}"]\n')
    gates = "".join(
        f'[[gates]]\nname = "gate_{g}"\nagent = "{g}"\n' for g in ("random", "heuristic", "pimc", "pretrained")
    )
    file = folder / "tournament.toml"
    file.write_text(
        f'game = "german_whist_v0"\ndeals = {deals}\nseed = 2026\nworkers = {workers}\nbots = ["bots/*"]\n{gates}'
    )
    return file


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", help="the class folder (default: a temporary one)")
    parser.add_argument("--starters", type=int, default=30)
    parser.add_argument("--random", type=int, default=6)
    parser.add_argument("--hostile", type=int, default=4)
    parser.add_argument("--deals", type=int, default=100)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    folder = Path(args.out or tempfile.mkdtemp(prefix="whist-class-"))
    if folder.exists() and any(folder.iterdir()):
        sys.exit(f"{folder} is not empty: give an empty or new folder (a cache there would make this a resume)")
    file = make_class(folder, args.starters, args.random, args.hostile, args.deals, args.workers)
    tournament = load_tournament(file, workroot=str(folder))
    matches = len(tournament.pairs())
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=HERE).stdout
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.machine())  # fmt: skip
    print(f"# {len(tournament.entrants)} entrants, {matches} matches of {args.deals} duplicate deals, {args.workers} "
          f"workers; {cpu}, {os.cpu_count()} cores, load {' '.join(f'{x:.2f}' for x in os.getloadavg())}; "
          f"commit {commit.strip()}", flush=True)  # fmt: skip
    memory: dict[str, Any] = {}
    done = [0]

    def progress(line: str) -> None:
        done[0] += 1
        if done[0] == max(1, matches // 10):
            memory["first_tenth"] = referee_memory()
        if done[0] % 50 == 0 or done[0] == matches:
            print(line, flush=True)
        if done[0] == matches:
            memory["end"] = referee_memory()

    start = time.perf_counter()
    report = run_tournament(tournament, folder / "results", progress)
    wall = time.perf_counter() - start
    left = [pid for pid in (int(e.name) for e in os.scandir("/proc") if e.name.isdigit())
            if _cwd(pid).startswith(str(folder))]  # fmt: skip
    standings = report.standings
    decisions = sum(s.decisions for s in standings)
    answer = sum(s.answer_s for s in standings)
    search = sum(s.answer_s for s in standings if s.name == "gate_pimc")
    faulty = [s for s in standings if s.faults]  # their answer time is mostly waiting for timeouts
    waited = sum(s.answer_s for s in faulty)
    plain = [s for s in standings if not s.faults and s.name != "gate_pimc"]
    starts = [x for m in report.matches for ledger in m["ledgers"].values() for x in ledger["start_s"]]
    processes = sum(s.processes for s in standings)
    cpu_bots = sum(s.cpu_s for s in standings)
    ms = 1000 * sum(s.answer_s for s in plain) / max(1, sum(s.decisions for s in plain))
    summary = {
        "wall_s": round(wall, 1),
        "matches": matches,
        "entrants": len(standings),
        "decisions": decisions,
        "answer_s": round(answer, 1),
        "search_answer_s": round(search, 1),
        "faulty_bots_answer_s": round(waited, 1),
        "processes": processes,
        "start_s_median": round(statistics.median(starts), 3),
        "start_s_sum": round(sum(starts), 1),
        "bots_cpu_s": round(cpu_bots, 1),
        "ms_per_decision_of_the_others": round(ms, 4),
        "records_mb": round(sum(m["records"]["bytes"] for m in report.matches) / 1e6, 2),
        "memory_kib": memory,
        "left_processes": left,
        "faults": {s.name: s.faults for s in standings if s.faults},
        "forfeits": {s.name: s.forfeits for s in standings if s.forfeits},
    }
    print(json.dumps(summary, indent=1))
    k, n = len(standings), args.deals
    print(f"wall {wall / 60:.1f} min; formula: matches = k(k-1)/2 = {matches} (k = {k}); decisions = matches x 2 "
          f"halves x {n} deals x 52 = {matches * 2 * n * 52}; time ~ (decisions x {ms:.3f} ms + starts "
          f"{sum(starts):.0f} s + search {search:.0f} s + hostile bots' timeouts {waited:.0f} s) / {args.workers} "
          "workers")  # fmt: skip


def _cwd(pid: int) -> str:
    try:
        return os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        return ""


if __name__ == "__main__":
    main()
