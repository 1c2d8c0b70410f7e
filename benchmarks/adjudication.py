"""Benchmark live adjudication: events per second through the game state machine, and whole-game replays.

Usage: python benchmarks/adjudication.py [--games N] [--repeat R] [--seed S]

Figures (targets from issue 3):

* events per second: 200-move games with clocks (a move every 0.5–3 s, 10 min + 5 s), folded event by event with
  ``Adjudication.apply``, for the ``freestyle`` and ``renju`` rules (renju checks every black move for forbidden
  shapes); target >= 50,000 events/s;
* a 200-move replay with clocks and a few incidents (a disconnection and reconnection, an arbiter's pause and resume,
  a time adjustment, a declined draw offer, a warning): median and 99th percentile over the repeats; target < 5 ms;
* snapshot and restore of the finished state through JSON (what a crash recovery costs), for scale.

Ratios are figure / target (above 1 is better for throughput, below 1 for times).  Nothing here is a test.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Final

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run by hand from anywhere, without installing

from engine.actions import Stone
from engine.adjudication import (
    Adjudication,
    AdjudicationSettings,
    ClockPaused,
    ClockResumed,
    DrawDeclined,
    DrawOffered,
    Event,
    PenaltyImposed,
    Played,
    PlayerDisconnected,
    PlayerJoined,
    PlayerReconnected,
    TimeAdjusted,
    replay,
    restore,
)
from engine.clock import increment
from engine.game import Game, GameSettings
from engine.openings import Player
from engine.penalties import Role

T0: Final = 1_767_225_600_000
MOVES: Final = 200
TARGET_EVENTS_PER_SECOND: Final = 50_000
TARGET_REPLAY_MS: Final = 5.0


def random_game(rule: str, rng: random.Random) -> list[int]:
    """200 points of a legal game under ``rule`` that has not ended (moves that would end it are skipped)."""
    while True:
        game = Game.new(rule=rule, opening="free")
        points: list[int] = []
        candidates = list(range(225))
        rng.shuffle(candidates)
        for point in candidates:
            try:
                after = game.apply(Stone(point))
            except ValueError:
                continue
            if after.outcome is None:
                game = after
                points.append(point)
                if len(points) == MOVES:
                    return points
        # ran out of candidates before 200 moves (rare): try another shuffle


def move_events(points: list[int], rng: random.Random) -> list[Event]:
    events: list[Event] = [PlayerJoined(T0 - 5_000, Player.FIRST), PlayerJoined(T0 - 3_000, Player.SECOND)]
    at = T0
    for point in points:
        at += rng.randint(500, 3_000)
        events.append(Played(at, Stone(point)))
    return events


def with_incidents(events: list[Event]) -> list[Event]:
    """The same game with a disconnection, a pause, a time adjustment, a declined draw offer and a warning."""
    out: list[Event] = []
    for index, event in enumerate(events):
        out.append(event)
        at = event.at
        if index == 40:
            out.append(PlayerDisconnected(at + 1, Player.SECOND))
            out.append(PlayerReconnected(at + 200, Player.SECOND))
        elif index == 80:
            out.append(ClockPaused(at + 1, "arb", Role.ARBITER, "arbiter call"))
            out.append(ClockResumed(at + 300, "arb", Role.ARBITER, "call handled"))
            out.append(TimeAdjusted(at + 301, "arb", Role.ARBITER, "time of the call", Player.FIRST, 2_000))
        elif index == 120:
            mover = Player.FIRST if index % 2 == 0 else Player.SECOND
            out.append(DrawOffered(at, mover))
            out.append(DrawDeclined(at + 100, mover.other))
        elif index == 160:
            out.append(PenaltyImposed(at + 1, "arb", Role.ARBITER, "camera", Player.SECOND, "36.2", ("incident-9",)))
    return out


def fold(settings: AdjudicationSettings, events: list[Event]) -> Adjudication:
    state = Adjudication.new(settings)
    for event in events:
        state = state.apply(event)
    return state


def events_per_second(settings: AdjudicationSettings, games: list[list[Event]], repeat: int) -> float:
    total = sum(len(events) for events in games)
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for events in games:
            fold(settings, events)
        best = min(best, time.perf_counter() - start)
    return total / best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--seed", type=int, default=2025)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    print(f"Python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} CPUs; seed {args.seed}")
    control = increment(10, 5)
    rows: list[tuple[str, float, float, str]] = []
    gc.disable()
    for rule in ("freestyle", "renju"):
        settings = AdjudicationSettings(time_control=control, start_at=T0, game=GameSettings(rule=rule))
        games = [move_events(random_game(rule, rng), rng) for _ in range(args.games)]
        for events in games:
            state = fold(settings, events)
            assert state.outcome is None and state.game.ply == MOVES
        eps = events_per_second(settings, games, max(3, args.repeat // 20))
        rows.append((f"events/s, {rule}, moves with clocks", eps, TARGET_EVENTS_PER_SECOND, "events/s"))
    settings = AdjudicationSettings(
        time_control=control, start_at=T0, game=GameSettings(rule="renju"), reconnect_window_ms=60_000
    )
    incident_game = with_incidents(move_events(random_game("renju", rng), rng))
    final = replay(settings, incident_game)
    assert final.outcome is None and len(final.penalties.penalties) == 1
    times = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        replay(settings, incident_game)
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    p99 = times[min(len(times) - 1, int(len(times) * 0.99))]
    rows.append((f"replay ms, {len(incident_game)} events, median", statistics.median(times), TARGET_REPLAY_MS, "ms"))
    rows.append(("replay ms, 99th percentile", p99, TARGET_REPLAY_MS, "ms"))
    snapshots = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        restored = restore(json.loads(json.dumps(final.to_dict())))
        snapshots.append((time.perf_counter() - start) * 1000)
    assert restored == final
    gc.enable()
    print(f"{'figure':44} {'value':>12} {'target':>10} {'ratio':>7}  met?")
    for name, value, target, unit in rows:
        throughput = unit == "events/s"
        ratio = value / target
        met = value >= target if throughput else value < target
        print(f"{name:44} {value:>12,.2f} {target:>10,} {ratio:>7.2f}  {'yes' if met else 'NO'}")
    print(f"{'snapshot + JSON + restore ms, median':44} {statistics.median(snapshots):>12,.2f}")


if __name__ == "__main__":
    main()
