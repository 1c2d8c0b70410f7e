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
import sys
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any

import aiohttp

from engine.actions import Pass, Stone
from engine.board import SIZE, column_of, format_point, point_at, row_of
from engine.game import Game
from engine.rules import find_rule_set
from proctor.scripted_games import Pace, Seat, Twist, script_game
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


# --- An event's pairings ---------------------------------------------------------------------------------------------
#
# ``proctor simulate --event SLUG[/SECTION] --token T`` plays the pairings the service holds for a round: it reads the
# section's settings (GET /api/v1/events), the round's pairings (GET …/standings) and the players' platform ids (GET
# …/camera-roster) with an arbiter's bearer token, plays each pairing's game(s) with the section's rule, opening and
# time control (proctor.scripted_games), and sends them through signed webhooks whose game.created names the event
# ("slug/section"), round, board and match_game, so that the service links each game to its pairing.


class SimulationError(Exception):
    """The service refused a read the simulator needs, or holds nothing to play."""


@dataclass(frozen=True, slots=True)
class SectionPlay:
    """A section as the simulated platform plays it."""

    event: str
    section: str
    rule: str
    opening: str
    time_control: str
    system: str
    max_candidates: int | None = None
    adjudication: str = "automatic"
    """Who acts on Black's forbidden moves (19.1.2): the service's ``automatic`` ruling, or White's ``claim``."""

    @property
    def place(self) -> str:
        return f"{self.event}/{self.section}"


@dataclass(frozen=True, slots=True)
class PairedGame:
    """One game of a round's pairing (a match of several games is one per game)."""

    round_no: int
    board: int
    match_game: int
    black: Seat
    white: Seat
    time_control: str = ""
    """The game's own time control (a knockout's play-off game); empty: the section's."""
    label: str = ""
    """A game of no pairing (a play-off the service does not pair): its platform game id; game.created names no
    event, round or board."""

    def external_id(self, section: SectionPlay, games_per_match: int) -> str:
        if self.label:
            return self.label[:100]
        game = f"-g{self.match_game}" if games_per_match > 1 or self.match_game > 1 else ""
        return f"{section.event}-{section.section}-r{self.round_no}-b{self.board}{game}"[:100]


class ServiceClient:
    """The service's read API (and an arbiter's few writes) as the simulator and the demo use it, with an arbiter's
    bearer token."""

    def __init__(self, session: aiohttp.ClientSession, base: str, token: str) -> None:
        self.session = session
        self.base = base.rstrip("/")
        self.headers = {"Authorization": f"Bearer {token}"} if token else {}

    async def request(self, method: str, path: str, body: Any = None, ok: tuple[int, ...] = (200, 201)) -> Any:
        async with self.session.request(method, self.base + path, json=body, headers=self.headers) as response:
            answer = await response.json(content_type=None)
            if response.status not in ok:
                message = answer.get("message") if isinstance(answer, dict) else None
                raise SimulationError(f"{method} {path}: {response.status} {message or answer}")
            return answer

    async def sections(self, event: str) -> list[SectionPlay]:
        events = await self.request("GET", "/api/v1/events")
        for item in events:
            if item["slug"] == event:
                return [SectionPlay(event, s["slug"], s["rule"], s["opening"], s["time_control"], s["system"])
                        for s in item["sections"]]  # fmt: skip
        raise SimulationError(f"the service has no event {event!r}")

    async def standings(self, section: SectionPlay) -> dict[str, Any]:
        path = f"/api/v1/events/{section.event}/sections/{section.section}/standings"
        return dict(await self.request("GET", path))

    async def seats(self, section: SectionPlay) -> dict[int, Seat]:
        """The section's players by start number, with their platform ids (the camera roster has them)."""
        roster = await self.request("GET", f"/api/v1/events/{section.event}/sections/{section.section}/camera-roster")
        return {p["start_no"]: Seat(p["player"], p["name"]) for p in roster["players"] if p.get("player")}


def unplayed_games(standings: dict[str, Any], seats: dict[int, Seat], round_no: int) -> list[PairedGame]:
    """The round's games that have no result and no linked game yet (byes left out)."""
    games = []
    for pairing in standings["pairings"]:
        if pairing["round"] != round_no or pairing["white"] is None or pairing["result"] or pairing["linked"]:
            continue
        black, white = seats.get(pairing["black"]["start_no"]), seats.get(pairing["white"]["start_no"])
        if black is None or white is None:
            raise SimulationError(f"round {round_no} board {pairing['board']}: a player has no platform id")
        games.append(PairedGame(round_no, pairing["board"], pairing["match_game"], black, white))
    return games


def first_open_round(standings: dict[str, Any]) -> int | None:
    """The first round with a pairing that has no result and no game yet."""
    rounds = [p["round"] for p in standings["pairings"] if p["white"] and not p["result"] and not p["linked"]]
    return min(rounds) if rounds else None


def twists_for(section: SectionPlay, round_no: int, count: int, offset: int = 0) -> list[Twist]:
    """Which game of the round shows what: every twist in turn (a forbidden move only where Black has forbidden
    moves), starting at a different one each round and section, the other games played plainly."""
    forbidden = find_rule_set(section.rule).forbidden_moves
    kinds = [t for t in Twist if t is not Twist.NONE and (t is not Twist.FORBIDDEN or forbidden)]
    start = (round_no + offset) % len(kinds)
    rotated = kinds[start:] + kinds[:start]
    return [rotated[i] if i < len(rotated) else Twist.NONE for i in range(count)]


@dataclass
class PlayReport:
    """What a run of an event's pairings did."""

    games: int = 0
    results: dict[str, str] = field(default_factory=dict)
    """Each game's result (black, white or draw) by its platform game id."""
    endings: Counter[str] = field(default_factory=Counter)
    twists: Counter[str] = field(default_factory=Counter)
    deliveries: Report = field(default_factory=Report)
    disagreed: list[str] = field(default_factory=list)


async def play_pairings(session: aiohttp.ClientSession, url: str, platform: str, secret: str, section: SectionPlay,
                        games: list[PairedGame], *, seed: int, real_time: bool, pace: Pace, games_per_match: int = 1,
                        report: PlayReport | None = None, offset: int = 0,
                        concurrency: int = 16) -> PlayReport:  # fmt: skip
    """Play the games through signed webhooks (real time, or as fast as the service answers) and check each
    result against the engine's."""
    report = report if report is not None else PlayReport()
    base = url.rstrip("/")
    webhook_url = f"{base}/api/v1/webhooks/{platform}"
    rounds = sorted({g.round_no for g in games})
    twists: dict[PairedGame, Twist] = {}
    for round_no in rounds:
        of_round = [g for g in games if g.round_no == round_no]
        for game, twist in zip(of_round, twists_for(section, round_no, len(of_round), offset), strict=True):
            twists[game] = twist
    start = int(time.time() * 1000) + 4_000
    limit = asyncio.Semaphore(concurrency if not real_time else len(games) or 1)

    async def one(game: PairedGame) -> None:
        rng = random.Random(f"{seed}/{section.place}/{game.round_no}/{game.board}/{game.match_game}")
        # A game of no pairing has no section's lateness tolerance (14.3: none): nobody is late in it.
        paced = replace(pace, late_ms=0) if game.label else pace
        script = await asyncio.to_thread(script_game, rng, game.black, game.white, section.rule, section.opening,
                                         twists[game], paced, section.max_candidates,
                                         section.adjudication)  # fmt: skip
        external = game.external_id(section, games_per_match)
        setup: dict[str, Any] = {
            "black": {"id": game.black.ref, "name": game.black.name},
            "white": {"id": game.white.ref, "name": game.white.name},
            "rule": section.rule, "opening": section.opening, "adjudication": section.adjudication,
            "time_control": game.time_control or section.time_control, "start_at": iso(start),
        }  # fmt: skip
        if not game.label:
            setup |= {"event": section.place, "round": game.round_no, "board": game.board,
                      "match_game": game.match_game}  # fmt: skip
        events = [("game.created", -5_000, setup)] + [(e.type, e.offset_ms, e.data) for e in script.events]
        async with limit:
            for seq, (kind, offset_ms, data) in enumerate(events, start=1):
                if real_time:
                    delay = start + offset_ms - time.time() * 1000
                    if delay > 0:
                        await asyncio.sleep(delay / 1000)
                body = json.dumps({"type": kind, "game_id": external, "seq": seq, "at": iso(start + offset_ms),
                                   "data": data}).encode()  # fmt: skip
                await deliver(session, webhook_url, secret, body, f"{external}-{seq}", report.deliveries)
        async with session.get(f"{base}/api/v1/platforms/{platform}/games/{external}") as response:
            state = await response.json()
        ours = state.get("result") or {}
        report.games += 1
        report.results[external] = _winner(ours) or ""
        report.twists[script.twist.value] += 1
        report.endings[script.reason or "none"] += 1
        if (ours.get("reason"), _winner(ours)) != (script.reason, script.result):
            report.disagreed.append(f"{external}: engine {script.result}/{script.reason}, service {ours}")

    await asyncio.gather(*(one(game) for game in games))
    return report


async def play_event(url: str, platform: str, secret: str, token: str, target: str, round_no: int | None, seed: int,
                     real_time: bool, late_s: float, adjudication: str = "automatic") -> PlayReport:  # fmt: skip
    """``proctor simulate --event``: one round (the first open one by default) of each section named."""
    event, _, only = target.partition("/")
    report = PlayReport()
    async with aiohttp.ClientSession() as session:
        client = ServiceClient(session, url, token)
        sections = [replace(s, adjudication=adjudication) for s in await client.sections(event)
                    if not only or s.section == only]  # fmt: skip
        if not sections:
            raise SimulationError(f"event {event!r} has no section {only!r}")
        for index, section in enumerate(sections):
            if section.system == "knockout":
                print(f"{section.place}: a knockout, whose games follow its bracket (GET …/bracket): not played here")
                continue
            standings = await client.standings(section)
            chosen = round_no if round_no is not None else first_open_round(standings)
            if chosen is None:
                print(f"{section.place}: every pairing has a result or a game")
                continue
            games = unplayed_games(standings, await client.seats(section), chosen)
            print(f"{section.place}: round {chosen}, {len(games)} game(s)", flush=True)
            await play_pairings(session, url, platform, secret, section, games, seed=seed, real_time=real_time,
                                pace=Pace(late_ms=int(late_s * 1000)), games_per_match=standings["games_per_match"],
                                report=report, offset=index)  # fmt: skip
    return report


def main_event(url: str, platform: str, secret: str, token: str, target: str, round_no: int | None, seed: int,
               real_time: bool, late_s: float, adjudication: str = "automatic") -> int:  # fmt: skip
    started = time.perf_counter()
    try:
        report = asyncio.run(play_event(url, platform, secret, token, target, round_no, seed, real_time, late_s,
                                        adjudication))  # fmt: skip
    except SimulationError as error:
        print(f"proctor simulate: {error}", file=sys.stderr)
        return 1
    print_play_report(report, time.perf_counter() - started)
    return 0 if not report.disagreed and not report.deliveries.statuses.get("gave up") else 1


def print_play_report(report: PlayReport, elapsed: float) -> None:
    deliveries = sum(report.deliveries.statuses.values())
    print(f"{report.games} game(s), {deliveries} deliveries in {elapsed:.1f} s")
    print("endings: " + ", ".join(f"{reason} {count}" for reason, count in report.endings.most_common()))
    shown = [f"{twist} {count}" for twist, count in report.twists.most_common() if twist != Twist.NONE.value]
    print("situations: " + (", ".join(shown) or "none"))
    print(f"results: {report.games - len(report.disagreed)} agree with the engine, {len(report.disagreed)} differ")
    for line in report.disagreed:
        print("  " + line)
