"""Benchmark Black's forbidden-move detection: full-board scans and single-move adjudication, against PyPI ``renju``.

Usage: python benchmarks/forbidden.py [--positions N] [--repeat R] [--renju-positions K] [--pairs P]
                                      [--renju-pairs Q] [--seed S]

Positions come from tests/data/forbidden/vectors_subset.jsonl.  Figures:

* full-board scan: ``engine.forbidden.forbidden_points`` over every position, in empty points per second (target
  >= 200,000) and µs per scan: a cold first pass (both of the engine's memos emptied: ``line_shape``, per 11-cell
  window, and ``_line_candidates``, per whole line), the best of R passes with the line memo emptied before each
  ("fresh lines": boards never seen, windows warm, as in a service that has been running) and the best of R plain
  repeats ("warm": the same boards again, which the 16,384-entry line memo serves only if they fit in it);
* the same scan with ``renju.check_forbid.get_foul_type`` (a port of the Gomocup judge) asked about every empty point
  of a seeded sample of K positions, ours timed on the same sample (fresh lines), and a check that both find the same
  points with the same kinds;
* single-move adjudication: ``Renju().judge(position, point, BLACK, FiveEye.ENGINE)`` timed call by call after a
  warm-up on P (position, point) pairs per category: "five" (Black makes an exact five), "forbidden" (labelled),
  "legal" (other empty points next to a stone); median and p99 (target: median <= 50 µs), the median with both memos
  emptied before each call ("cold") and ``get_foul_type`` on the first Q pairs of each category.  Every verdict is
  checked against the labels.

"ratio" is always how many times faster ours is (ours/renju for throughput, renju/ours for latency).  The garbage
collector is off while timing.  Nothing here is a test: it prints figures, it does not fail.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Final

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run by hand from anywhere, without installing

from renju.check_forbid import get_foul_type

import engine.forbidden
from engine.board import POINTS, SIZE, Color, Position, column_of, format_point, on_board, parse_point, point_at, row_of
from engine.forbidden import FiveEye, forbidden_points, makes_five
from engine.rules import Renju, StoneEffect, StoneVerdict

DATA: Final = Path(__file__).parent.parent / "tests" / "data" / "forbidden" / "vectors_subset.jsonl"
TARGET_POINTS_PER_SECOND: Final = 200_000
TARGET_MEDIAN_US: Final = 50.0
#: get_foul_type's answers, as our ForbiddenKind values.
RENJU_KINDS: Final = {1: "33", 2: "44", 3: "overline"}
CATEGORIES: Final = ("five", "forbidden", "legal")

Board = list[list[int]]
Pair = tuple[int, int]
"""(index of a position, point)."""


@dataclass(frozen=True, slots=True)
class Case:
    source: str
    position: Position
    labels: dict[int, str]
    """The labelled forbidden points (FiveEye.ENGINE) and their kinds."""

    @property
    def empty(self) -> int:
        return POINTS - self.position.stones


def load(limit: int | None) -> list[Case]:
    """The first ``limit`` positions of the data file (all of them if None)."""
    cases = []
    for line in DATA.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            labels = {parse_point(point): kind for point, kind in row["forbidden"].items()}
            cases.append(Case(row.get("source", "?"), Position.from_notation(row["black"], row["white"]), labels))
    return cases[:limit]


def renju_board(position: Position) -> Board:
    """renju's board: ``board[x][y]`` with x the column (a = 0) and y the row (1 = 0); 0 empty, 1 black, 2 white."""
    board = [[0] * SIZE for _ in range(SIZE)]
    for point in range(POINTS):
        color = position.color_at(point)
        if color is not None:
            board[column_of(point)][row_of(point)] = 1 if color is Color.BLACK else 2
    return board


def renju_scan(position: Position, board: Board) -> dict[int, str]:
    """Every forbidden point according to renju, asking about each empty point in turn."""
    found = {}
    for point in position.empty_points():
        code = get_foul_type(board, column_of(point), row_of(point))
        if code:
            found[point] = RENJU_KINDS.get(code, f"code {code}")
    return found


def ours_scan(position: Position) -> dict[int, str]:
    return {point: kind.value for point, kind in forbidden_points(position).items()}


@contextmanager
def no_gc() -> Iterator[None]:
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def clear_caches(lines: bool = True, windows: bool = True) -> None:
    """Empty the engine's memo of whole lines (``_line_candidates``) and/or of 11-cell windows (``line_shape``)."""
    if lines:
        engine.forbidden._line_candidates.cache_clear()
    if windows:
        engine.forbidden.line_shape.cache_clear()


def timed_pass(cases: Sequence[Case], fresh_lines: bool = False) -> tuple[float, list[dict[int, str]]]:
    """Seconds for one full-board scan of every position, and the scans.

    ``fresh_lines`` empties the whole-line memo first (outside the timing), so that positions scanned before do not
    come back from it: the window memo stays warm, as in a service that has been running for a while.
    """
    if fresh_lines:
        clear_caches(lines=True, windows=False)
    with no_gc():
        start = time.perf_counter()
        results = [forbidden_points(case.position) for case in cases]
        seconds = time.perf_counter() - start
    return seconds, [{point: kind.value for point, kind in result.items()} for result in results]


def passes(cases: Sequence[Case], repeat: int, fresh_lines: bool) -> list[float]:
    return [timed_pass(cases, fresh_lines)[0] for _ in range(repeat)]


def per_call_ns(pairs: Sequence[Pair], call: Callable[[int, int], object], cold: bool = False) -> list[int]:
    """perf_counter_ns around each call, one call per pair; ``cold`` empties the engine's memos before each call."""
    timings = []
    clock = time.perf_counter_ns
    with no_gc():
        for index, point in pairs:
            if cold:
                clear_caches()
            start = clock()
            call(index, point)
            timings.append(clock() - start)
    return timings


def p99(values: Sequence[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.99 * len(ordered)) - 1)]


def near_stone(position: Position, point: int) -> bool:
    column, row = column_of(point), row_of(point)
    return any(
        on_board(column + dc, row + dr) and not position.is_empty(point_at(column + dc, row + dr))
        for dc in (-1, 0, 1)
        for dr in (-1, 0, 1)
        if dc or dr
    )


def build_pairs(cases: Sequence[Case], per_category: int, rng: random.Random) -> dict[str, list[Pair]]:
    found: dict[str, list[Pair]] = {category: [] for category in CATEGORIES}
    for index, case in enumerate(cases):
        for point in case.position.empty_points():
            if makes_five(case.position, point):
                found["five"].append((index, point))
            elif point in case.labels:
                found["forbidden"].append((index, point))
            elif near_stone(case.position, point):
                found["legal"].append((index, point))
    return {
        category: rng.sample(pairs, per_category) if len(pairs) > per_category else pairs
        for category, pairs in found.items()
    }


def machine() -> str:
    cpu = platform.processor()
    if not cpu:
        try:
            for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
        except OSError:
            pass
    return f"{platform.machine()} {cpu or '?'}, {os.cpu_count()} CPUs, {platform.system()} {platform.release()}"


@dataclass(frozen=True, slots=True)
class Row:
    """One line of the summary table."""

    figure: str
    ours: str
    renju: str = "-"
    ratio: str = "-"
    target: str = "-"
    met: bool | None = None


def scan_line(label: str, seconds: float, points: int, scans: int) -> str:
    return f"  {label:<26}{seconds:7.3f} s {points / seconds:>11,.0f} empty pts/s {seconds / scans * 1e6:9.1f} µs/scan"


def full_scans(cases: Sequence[Case], repeat: int) -> list[Row]:
    """forbidden_points over every position: a cold first pass, then ``repeat`` warm passes of two kinds."""
    empty, n = sum(case.empty for case in cases), len(cases)
    clear_caches()
    cold, scans = timed_pass(cases)
    fresh = min(passes(cases, repeat, fresh_lines=True))
    again = passes(cases, repeat, fresh_lines=False)
    agree = sum(scan == case.labels for scan, case in zip(scans, cases, strict=True))
    print(f"full-board scan, forbidden_points, {n} positions (agree with the labels: {agree}/{n}):")
    print(scan_line("cold first pass", cold, empty, n) + " (both memos emptied)")
    print(scan_line(f"fresh lines, best/{repeat}", fresh, empty, n) + " (line memo emptied per pass)")
    print(scan_line(f"warm, best of {repeat}", min(again), empty, n) + " (same boards again)")
    target = f">= {TARGET_POINTS_PER_SECOND:,}"
    return [
        Row(
            f"full scan pts/s, {label}",
            f"{empty / seconds:,.0f}",
            target=target,
            met=empty / seconds >= TARGET_POINTS_PER_SECOND,
        )
        for label, seconds in (("cold pass", cold), ("fresh lines", fresh), ("warm best", min(again)))
    ] + [Row("µs per full scan, fresh lines", f"{fresh / n * 1e6:,.1f}")]


def renju_scans(cases: Sequence[Case], boards: dict[int, Board], indices: Sequence[int], repeat: int) -> list[Row]:
    """The same scan with renju on a sample, ours timed on the same sample, and whether both find the same."""
    sample = [cases[i] for i in indices]
    empty = sum(case.empty for case in sample)
    ours_seconds = min(passes(sample, repeat, fresh_lines=True))
    with no_gc():
        start = time.perf_counter()
        theirs = [renju_scan(cases[i].position, boards[i]) for i in indices]
        renju_seconds = time.perf_counter() - start
    ratio = renju_seconds / ours_seconds
    print(f"same scan, renju get_foul_type on each empty point, sample of {len(sample)} positions ({empty:,} points):")
    print(scan_line("renju, one pass", renju_seconds, empty, len(sample)))
    print(scan_line(f"ours, fresh lines, best/{repeat}", ours_seconds, empty, len(sample)) + f" ratio ×{ratio:,.0f}")
    disagreements = [
        (i, ours, found)
        for i, found in zip(indices, theirs, strict=True)
        if (ours := ours_scan(cases[i].position)) != found
    ]
    print(f"  same forbidden points and kinds as renju: {len(sample) - len(disagreements)}/{len(sample)} positions")
    for i, ours, found in disagreements[:5]:
        diff = sorted({p for p, _ in set(ours.items()) ^ set(found.items())})
        shown = ", ".join(f"{format_point(p)} ours={ours.get(p, '-')} renju={found.get(p, '-')}" for p in diff)
        print(f"    #{i} {cases[i].source}: {shown}")
    return [
        Row(
            "scan pts/s, renju sample",
            f"{empty / ours_seconds:,.0f}",
            f"{empty / renju_seconds:,.0f}",
            f"×{ratio:,.0f}",
        ),
        Row(
            "µs per full scan, renju sample",
            f"{ours_seconds / len(sample) * 1e6:,.1f}",
            f"{renju_seconds / len(sample) * 1e6:,.0f}",
            f"×{ratio:,.0f}",
        ),
    ]


EXPECTED: Final = {"five": StoneEffect.FIVE, "forbidden": StoneEffect.FORBIDDEN, "legal": StoneEffect.NOTHING}


def adjudication(
    cases: Sequence[Case], boards: dict[int, Board], pairs: dict[str, list[Pair]], renju_pairs: int
) -> list[Row]:
    """Per-call latency of the service's verdict on one Black move, and of renju's on the first pairs."""
    rules = Renju()

    def judge(index: int, point: int) -> StoneVerdict:
        return rules.judge(cases[index].position, point, Color.BLACK, FiveEye.ENGINE)

    def foul(index: int, point: int) -> int:
        return int(get_foul_type(boards[index], column_of(point), row_of(point)))

    print("one Black move: Renju().judge(..., BLACK, FiveEye.ENGINE) vs renju get_foul_type, µs per call:")
    print(
        f"  {'category':<10}{'calls':>6}{'median':>8}{'p99':>7}{'cold':>7}  |"
        f" renju{'calls':>6}{'median':>7}{'p99':>7}  | ratio"
    )
    rows = []
    wrong: list[str] = []
    checked = {"ours": 0, "renju": 0}
    for category in CATEGORIES:
        chosen, few = pairs[category], pairs[category][:renju_pairs]
        if not chosen:
            print(f"  {category:<10}     0  (no such points in the data)")
            continue
        per_call_ns(chosen, judge)  # warm-up
        ours_us = [ns / 1000 for ns in per_call_ns(chosen, judge)]
        cold = statistics.median(ns / 1000 for ns in per_call_ns(few, judge, cold=True)) if few else math.nan
        renju_us = [ns / 1000 for ns in per_call_ns(few, foul)] or [math.nan]
        median, theirs = statistics.median(ours_us), statistics.median(renju_us)
        print(
            f"  {category:<10}{len(chosen):>6}{median:>8.1f}{p99(ours_us):>7.1f}{cold:>7.1f}  |"
            f"      {len(few):>6}{theirs:>7.0f}{p99(renju_us):>7.0f}  | ×{theirs / median:,.0f}"
        )
        rows.append(
            Row(
                f"judge median µs, {category}",
                f"{median:.1f}",
                f"{theirs:,.0f}",
                f"×{theirs / median:,.0f}",
                f"<= {TARGET_MEDIAN_US:g}",
                median <= TARGET_MEDIAN_US,
            )
        )
        for index, point in chosen:
            checked["ours"] += 1
            verdict, label = judge(index, point), cases[index].labels.get(point)
            if verdict.effect is not EXPECTED[category] or (verdict.forbidden and verdict.forbidden.value) != label:
                wrong.append(f"ours {category} #{index} {format_point(point)}: {verdict}")
        for index, point in few:
            checked["renju"] += 1
            if RENJU_KINDS.get(code := foul(index, point)) != cases[index].labels.get(point):
                wrong.append(f"renju {category} #{index} {format_point(point)}: get_foul_type = {code}")
    counts = ", ".join(
        f"{who} {checked[who] - sum(line.startswith(who) for line in wrong)}/{checked[who]}" for who in checked
    )
    print(f"  verdicts as labelled: {counts}")
    for line in wrong[:5]:
        print(f"    {line}")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--positions", type=int, default=None, help="use the first N positions (default: all)")
    parser.add_argument("--repeat", type=int, default=5, help="warm full-board passes; the best counts (default 5)")
    parser.add_argument("--renju-positions", type=int, default=40, help="positions scanned with renju (default 40)")
    parser.add_argument("--pairs", type=int, default=3000, help="timed judge calls per category (default 3000)")
    parser.add_argument("--renju-pairs", type=int, default=500, help="renju calls per category (default 500)")
    parser.add_argument("--seed", type=int, default=2025, help="seed of the samples (default 2025)")
    args = parser.parse_args()
    if args.positions is not None and args.positions < 1:
        parser.error("--positions must be at least 1")
    rng = random.Random(args.seed)
    repeat = max(1, args.repeat)

    cases = load(args.positions)
    print(
        f"Python {platform.python_version()} ({platform.python_implementation()}), renju {version('renju')}"
        f" on {machine()}"
    )
    print(
        f"data: {len(cases)} positions of {DATA.name}, {sum(case.empty for case in cases):,} empty points, "
        f"{sum(len(case.labels) for case in cases):,} labelled forbidden points; seed {args.seed}"
    )
    rows = full_scans(cases, repeat)
    boards = {i: renju_board(case.position) for i, case in enumerate(cases)}
    sample = sorted(rng.sample(range(len(cases)), max(1, min(args.renju_positions, len(cases)))))
    rows += renju_scans(cases, boards, sample, repeat)
    rows += adjudication(cases, boards, build_pairs(cases, args.pairs, rng), args.renju_pairs)

    print("summary (ratio = how many times faster ours is):")
    print(f"  {'figure':<32}{'ours':>11}{'renju':>9}{'ratio':>7}  {'target':<11}met?")
    for row in rows:
        met = "-" if row.met is None else "yes" if row.met else "NO"
        print(f"  {row.figure:<32}{row.ours:>11}{row.renju:>9}{row.ratio:>7}  {row.target:<11}{met}")


if __name__ == "__main__":
    main()
