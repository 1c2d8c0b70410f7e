"""Benchmark standings: all tie-breaks for a 2,000-player, 9-round Swiss (target: under 1 second).

Usage: python benchmarks/standings.py [--players N] [--rounds R] [--repeat K] [--seed S]

The tournament is generated: each round pairs players within score groups (a simple Swiss: sorted by points, then
adjacent pairs), with draws, decisive games, some forfeits, requested byes, a pairing-allocated bye for an odd field,
and withdrawals.  Timed: ``standings(tournament, "PTS,BH,BH/C1,BH/M1,SB,WIN,WON,DE")`` under both rule sets, and
the TRF write and read of the same event.  Ratios are time / target (below 1 meets it).  Nothing here is a test.
"""

from __future__ import annotations

import argparse
import itertools
import os
import platform
import random
import statistics
import sys
import time
from fractions import Fraction
from pathlib import Path
from typing import Final

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run by hand from anywhere, without installing

from engine.standings import Entrant, ResultKind, RoundEntry, Rules, Scoring, System, Tournament, standings
from engine.trf import read_trf, write_trf

ALL_TIEBREAKS: Final = "PTS,BH,BH/C1,BH/M1,SB,WIN,WON,DE"
TARGET_SECONDS: Final = 1.0


def generate(players: int, rounds: int, rng: random.Random) -> Tournament:
    rows: dict[int, list[RoundEntry]] = {p: [] for p in range(1, players + 1)}
    points = dict.fromkeys(rows, Fraction(0))
    scoring = Scoring()
    withdrawn = {p: rng.randint(2, rounds) for p in rows if rng.random() < 0.02}
    for round_no in range(1, rounds + 1):
        active = [p for p in rows if withdrawn.get(p, rounds + 1) > round_no]
        for p, row in rows.items():
            if p not in active:
                row.append(RoundEntry(None, None, ResultKind.ZPB))
        requested = {p for p in active if rng.random() < 0.01}
        for p in requested:
            rows[p].append(RoundEntry(None, None, rng.choice([ResultKind.HPB, ResultKind.ZPB])))
        pairable = sorted((p for p in active if p not in requested), key=lambda p: (-points[p], p))
        if len(pairable) % 2:
            rows[pairable.pop()].append(RoundEntry(None, None, ResultKind.PAB))
        for a, b in zip(pairable[::2], pairable[1::2], strict=True):
            roll = rng.random()
            if roll < 0.01:
                first, second = ResultKind.FORFEIT_WIN, ResultKind.FORFEIT_LOSS
            elif roll < 0.4:
                first, second = ResultKind.WIN, ResultKind.LOSS
            elif roll < 0.7:
                first, second = ResultKind.DRAW, ResultKind.DRAW
            else:
                first, second = ResultKind.LOSS, ResultKind.WIN
            rows[a].append(RoundEntry(b, "w", first))
            rows[b].append(RoundEntry(a, "b", second))
        for p in rows:
            points[p] += scoring.points(rows[p][-1].kind)
    entrants = tuple(Entrant(p, f"Player {p:04d}", tuple(rows[p]), rating=2600 - p // 2) for p in rows)
    return Tournament("benchmark Swiss", entrants, rounds, System.SWISS)


def timed(repeat: int, work: object) -> list[float]:
    assert callable(work)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--players", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seed", type=int, default=2025)
    args = parser.parse_args()
    tournament = generate(args.players, args.rounds, random.Random(args.seed))
    print(f"Python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} CPUs; seed {args.seed}")
    print(f"{args.players} players, {args.rounds} rounds; tie-breaks {ALL_TIEBREAKS}")
    rows = []
    for rules in Rules:
        times = timed(args.repeat, lambda rules=rules: standings(tournament, ALL_TIEBREAKS, rules))
        rows.append((f"standings, {rules.value}", min(times), statistics.median(times)))
    table = standings(tournament, ALL_TIEBREAKS)
    text = write_trf(tournament, table)
    write_times = timed(args.repeat, lambda: write_trf(tournament, table))
    rows.append(("TRF write", min(write_times), statistics.median(write_times)))
    read_times = timed(args.repeat, lambda: read_trf(text))
    rows.append(("TRF read (with consistency checks)", min(read_times), statistics.median(read_times)))
    tied = sum(1 for a, b in itertools.pairwise(table) if a.rank == b.rank)
    print(f"{'figure':40} {'best s':>9} {'median s':>9} {'ratio':>7}  met?")
    for name, best, median in rows:
        if name.startswith("standings"):
            met = "yes" if median < TARGET_SECONDS else "NO"
            print(f"{name:40} {best:>9.3f} {median:>9.3f} {median / TARGET_SECONDS:>7.2f}  {met}")
        else:
            print(f"{name:40} {best:>9.3f} {median:>9.3f}")
    print(f"players still sharing a place after every tie-break: {tied}")


if __name__ == "__main__":
    main()
