"""``proctor simulate``: a simulated platform that plays real games through signed webhooks.

Each game is played by the engine itself (legal moves near the stones already on the board, until a five, a
forbidden move or the move limit), then delivered as a platform would: ``game.created``, both players joining before
the start, the moves at a thinking pace, now and then a player dropping off the platform and coming back, and the
platform's own ``game.ended``.  Now and then a delivery goes wrong on purpose: sent twice, two events swapped, a
signature broken (the service must refuse it with a 401, and the simulator then sends it properly).  At the end it
reads every game back and checks that the service reached the result the engine did.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import aiohttp

from engine.actions import Pass, Stone
from engine.board import SIZE, column_of, format_point, point_at, row_of
from engine.game import Game
from proctor.signatures import signed_headers


@dataclass
class SimulatedGame:
    external_id: str
    rule: str
    points: list[str]
    result: str | None
    reason: str | None
    events: list[dict[str, Any]] = field(default_factory=list)


def play_game(rng: random.Random, rule: str, max_moves: int) -> tuple[list[str], str | None, str | None]:
    """Legal moves chosen near the stones on the board; ends with the engine's verdict or the move limit."""
    game = Game.new(rule=rule, opening="free")
    moves: list[str] = []
    for _ in range(max_moves):
        occupied = [p for p in range(SIZE * SIZE) if not game.position.is_empty(p)]
        if not occupied:
            candidates = [point_at(7, 7)]
        else:
            near = set()
            for p in occupied:
                for dc in (-2, -1, 0, 1, 2):
                    for dr in (-2, -1, 0, 1, 2):
                        c, r = column_of(p) + dc, row_of(p) + dr
                        if 0 <= c < SIZE and 0 <= r < SIZE and game.position.is_empty(point_at(c, r)):
                            near.add(point_at(c, r))
            candidates = sorted(near)
        if not candidates:
            game = game.apply(Pass())
            moves.append("pass")
        else:
            point = rng.choice(candidates)
            game = game.apply(Stone(point))
            moves.append(format_point(point))
        if game.outcome is not None:
            return moves, game.outcome.result, game.outcome.termination.value
    return moves, None, None


def iso(ms: int) -> str:
    seconds, rest = divmod(ms, 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{rest:03d}Z"


def build_games(count: int, rng: random.Random, start_ms: int, think_ms: float, prefix: str) -> list[SimulatedGame]:
    games = []
    for index in range(count):
        rule = rng.choice(["renju", "renju", "renju", "freestyle", "swap2"])
        points, result, reason = play_game(rng, rule, max_moves=rng.randint(30, 120))
        external = f"{prefix}-{index + 1}"
        black, white = f"{external}-black", f"{external}-white"
        game = SimulatedGame(external, rule, points, result, reason)
        at = start_ms
        setup = {
            "black": {"id": black, "name": f"Black {index + 1}"},
            "white": {"id": white, "name": f"White {index + 1}"},
            "rule": rule,
            "time_control": "rapid-15",
            "start_at": iso(start_ms),
            "round": 1,
            "board": index + 1,
        }
        game.events.append({"type": "game.created", "at": at - 3_000, "data": setup})
        game.events.append({"type": "player.joined", "at": at - 2_000, "data": {"player": black}})
        game.events.append({"type": "player.joined", "at": at - 1_000, "data": {"player": white}})
        for ply, point in enumerate(points):
            at += max(200, int(rng.expovariate(1 / think_ms)))
            mover = black if ply % 2 == 0 else white
            if rng.random() < 0.02:  # a dropped connection and a return
                game.events.append({"type": "player.disconnected", "at": at, "data": {"player": mover}})
                at += rng.randint(1_000, 20_000)
                game.events.append({"type": "player.reconnected", "at": at, "data": {"player": mover}})
            data: dict[str, Any] = {"pass": True} if point == "pass" else {"point": point}
            game.events.append({"type": "move", "at": at, "data": data})
        if result is not None:
            game.events.append({"type": "game.ended", "at": at + 500, "data": {"result": result, "reason": reason}})
        for seq, event in enumerate(game.events, start=1):
            event["seq"] = seq
            event["game_id"] = external
        games.append(game)
    return games


@dataclass
class Report:
    statuses: Counter[str] = field(default_factory=Counter)
    refused_on_purpose: int = 0
    latencies_ms: list[float] = field(default_factory=list)
    agreed: int = 0
    disagreed: list[str] = field(default_factory=list)


async def deliver(session: aiohttp.ClientSession, url: str, secret: str, body: bytes, webhook_id: str,
                  report: Report, *, break_signature: bool = False) -> int:  # fmt: skip
    headers = signed_headers(secret, webhook_id, int(time.time()), body)
    if break_signature:
        headers["webhook-signature"] = "v1," + "A" * 43 + "="
    for attempt in range(5):
        started = time.perf_counter()
        try:
            async with session.post(url, data=body, headers=headers) as response:
                answer = await response.json(content_type=None)
                report.latencies_ms.append((time.perf_counter() - started) * 1000)
                if response.status < 500 and response.status != 429:
                    status = answer.get("status") or answer.get("error") or str(response.status)
                    report.statuses[status] += 1
                    return response.status
        except aiohttp.ClientError:
            pass
        await asyncio.sleep(0.2 * (attempt + 1))
    report.statuses["gave up"] += 1
    return 0


async def run_game(session: aiohttp.ClientSession, url: str, secret: str, game: SimulatedGame, real_time: bool,
                   rng: random.Random, report: Report) -> None:  # fmt: skip
    events = list(game.events)
    if rng.random() < 0.3 and len(events) > 6:  # two events swapped: the service holds the later one
        i = rng.randint(3, len(events) - 2)
        events[i], events[i + 1] = events[i + 1], events[i]
    begin = time.time() * 1000
    first_at = events[0]["at"]
    for event in events:
        if real_time:
            delay = (event["at"] - first_at) - (time.time() * 1000 - begin)
            if delay > 0:
                await asyncio.sleep(min(delay, 60_000) / 1000)
        fields = ("type", "game_id", "seq", "at", "data")
        body = json.dumps({k: iso(event[k]) if k == "at" else event[k] for k in fields}).encode()
        webhook_id = f"{game.external_id}-{event['seq']}"
        if rng.random() < 0.02:
            status = await deliver(session, url, secret, body, webhook_id, report, break_signature=True)
            if status == 401:
                report.refused_on_purpose += 1
        await deliver(session, url, secret, body, webhook_id, report)
        if rng.random() < 0.03:  # sent twice: acknowledged, applied once
            await deliver(session, url, secret, body, webhook_id, report)


async def simulate(url: str, platform: str, secret: str, games: int, rate: float, seed: int, real_time: bool) -> Report:
    rng = random.Random(seed)
    now = int(time.time() * 1000)
    think_ms = 1000 * games / rate if real_time and rate > 0 else 3_000
    prefix = f"sim{seed}-{now // 1000}"
    simulated = build_games(games, rng, now + 3_000, think_ms, prefix)
    report = Report()
    base = url.rstrip("/")
    webhook_url = f"{base}/api/v1/webhooks/{platform}"
    async with aiohttp.ClientSession() as session:
        await asyncio.gather(*(run_game(session, webhook_url, secret, game, real_time, random.Random(rng.random()),
                                        report) for game in simulated))  # fmt: skip
        await asyncio.sleep(1)
        for game in simulated:
            async with session.get(f"{base}/api/v1/platforms/{platform}/games/{game.external_id}") as response:
                state = await response.json()
            ours = state.get("result") or {}
            if game.result is None or (ours.get("reason"), _winner(ours)) == (game.reason, game.result):
                report.agreed += 1
            else:
                report.disagreed.append(f"{game.external_id}: engine {game.result}/{game.reason}, service {ours}")
    return report


def _winner(result: dict[str, Any]) -> str | None:
    if not result:
        return None
    return result.get("winner") or "draw"


def main(url: str, platform: str, secret: str, games: int, rate: float, seed: int, real_time: bool) -> int:
    started = time.perf_counter()
    report = asyncio.run(simulate(url, platform, secret, games, rate, seed, real_time))
    elapsed = time.perf_counter() - started
    latencies = sorted(report.latencies_ms)
    deliveries = sum(report.statuses.values())
    print(f"{games} game(s), {deliveries} deliveries in {elapsed:.1f} s")
    print("answers: " + ", ".join(f"{status} {count}" for status, count in report.statuses.most_common()))
    if latencies:
        p50, p99 = latencies[len(latencies) // 2], latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
        print(f"latency: p50 {p50:.1f} ms, p99 {p99:.1f} ms; broken signatures refused: {report.refused_on_purpose}")
    print(f"results: {report.agreed} agree with the engine, {len(report.disagreed)} differ")
    for line in report.disagreed:
        print("  " + line)
    return 0 if not report.disagreed and not report.statuses.get("gave up") else 1
