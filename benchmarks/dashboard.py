"""Benchmark the arbiters' live page: from a move's webhook to the move drawn on the page, and from an incident's
request to its new case shown in the queue, with 300 live boards, 600 cameras and 1,000 open cases.

Usage: python benchmarks/dashboard.py [--boards 300] [--cases 1000] [--rate 20] [--case-rate 2] [--seconds 30]
       [--profile page.cpuprofile]

A real ``proctor serve`` runs in its own process on a temporary SQLite file; ``--boards`` live games are created by
signed webhooks (Standard Webhooks, as a platform sends them). Every player gets a camera stream link through the
service's API (``POST /api/v1/players/{player}/stream-token``, as the desk issues it): 600 cameras whose status the
desk polls for the boards on screen; none of them connects (the service reports them issued and not connected: the
desk shows them lost), so no video is decoded here. Then ``--cases`` open cases are raised through the incidents API
an arbiter uses (``POST /api/v1/incidents`` with the chief's bearer token, one per player and kind: another person,
then left the area), each one case. A real headless Chromium (Debian's /usr/bin/chromium, driven by Playwright) logs
in to ``/arbiter?bench=1``; with ``bench`` the page logs every board it renders with a new ply as ``window.__drawn``
``[game, ply, Date.now(), on screen]``, every case card the first time it is in the queue as ``window.__cases``
``[case, its evidence's incident, Date.now()]``, and sums the main thread's long tasks. Then moves are posted at
``--rate`` a second (open loop, spread over the games) and new cases (earphones, one player after another) at
``--case-rate`` a second, for ``--seconds``; for each move, the time from just before its webhook is sent to the
page's render of that ply (the canvas for the boards on screen, the board's text for the others, whose canvas is
drawn when they scroll in); for each new case, from just before its request to its card in the queue. Printed:
p50 / p95 / p99 / max for all boards and for those on screen, for new cases, the requests' own round trips, the
page's main-thread busy share (Chromium's TaskDuration over the run) and its long tasks. Targets (issue 13): move
drawn p95 under 250 ms, new case shown p95 under 1 s, main thread under 25 % busy. Nothing here is a test.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp
from playwright.async_api import async_playwright

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run by hand from anywhere, without installing

from proctor.signatures import signed_headers
from tests.browser.chromium import CHROMIUM, launch

PASSWORD = "bench password 1"
TARGET_MOVE_P95_MS = 250.0
TARGET_CASE_P95_MS = 1000.0
TARGET_BUSY = 0.25
OPEN_KINDS = (("extra-person", "36.4.2", "another person in the camera's view"),
              ("left-area", "36.4", "left the competition area"))  # fmt: skip
NEW_KIND = ("earphones", "36.2", "earphones seen")
PROCTOR = Path(sys.executable).parent / "proctor"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def iso(ms: int) -> str:
    seconds, rest = divmod(ms, 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{rest:03d}Z"


def game_points(moves: int) -> list[str]:
    """Stones in a pattern that never makes five: colour = ((column + 2 row) // 2) % 2, alternating."""
    black = [(c, r) for r in range(15) for c in range(15) if ((c + 2 * r) // 2) % 2 == 0]
    white = [(c, r) for r in range(15) for c in range(15) if ((c + 2 * r) // 2) % 2 == 1]
    order = [p for pair in zip(black, white, strict=False) for p in pair]
    return [f"{'abcdefghijklmno'[c]}{r + 1}" for c, r in order[:moves]]


def cli(*args: str, stdin: str | None = None, env: dict[str, str]) -> str:
    done = subprocess.run([str(PROCTOR), *args], input=stdin, capture_output=True, text=True, env=env, check=True)
    return done.stdout.strip().splitlines()[-1]


def serve(env: dict[str, str], port: int) -> subprocess.Popen[bytes]:
    process = subprocess.Popen([str(PROCTOR), "serve", "--port", str(port)], env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return process
        except OSError:
            if process.poll() is not None:
                raise RuntimeError(f"the server exited with {process.returncode}") from None
            time.sleep(0.1)
    raise RuntimeError("the server did not start")


class Platform:
    """Signed webhooks of the platform ``bench``; seq counted per game."""

    def __init__(self, http: aiohttp.ClientSession, base: str, secret: str) -> None:
        self.http, self.url, self.secret = http, base + "/api/v1/webhooks/bench", secret
        self.seqs: dict[str, int] = {}
        self.count = 0

    async def send(self, kind: str, game: str, data: dict[str, Any], at: int) -> dict[str, Any]:
        seq = self.seqs[game] = self.seqs.get(game, 0) + 1
        body = json.dumps({"type": kind, "game_id": game, "seq": seq, "at": iso(at), "data": data}).encode()
        self.count += 1
        headers = signed_headers(self.secret, f"bench-{self.count}-{time.time_ns()}", int(time.time()), body)
        async with self.http.post(self.url, data=body, headers=headers) as response:
            answer: dict[str, Any] = await response.json()
            if response.status not in (200, 202):
                raise RuntimeError(f"{kind} {game}: {response.status} {answer}")
            return answer


async def create_games(platform: Platform, boards: int) -> dict[str, int]:
    """``boards`` live freestyle games (rapid 15 min), both players present; the platform's id → the service's."""
    start = int(time.time() * 1000) - 10_000
    ids: dict[str, int] = {}
    names = [f"b{index:03d}" for index in range(1, boards + 1)]

    async def one(name: str) -> None:
        data = {
            "black": {"id": f"{name}-b", "name": f"Black {name}"},
            "white": {"id": f"{name}-w", "name": f"White {name}"},
            "rule": "freestyle",
            "time_control": "rapid-15",
            "start_at": iso(start),
        }
        created = await platform.send("game.created", name, data, start - 60_000)
        ids[name] = int(created["game"])
        for side in "bw":
            await platform.send("player.joined", name, {"player": f"{name}-{side}"}, start - 30_000)

    for offset in range(0, boards, 25):
        await asyncio.gather(*(one(name) for name in names[offset : offset + 25]))
    return ids


class Arbiter:
    """The chief arbiter's API calls, with its bearer token (as an API client or the detector's caller would)."""

    def __init__(self, http: aiohttp.ClientSession, base: str, token: str) -> None:
        self.http, self.base = http, base
        self.headers = {"Authorization": f"Bearer {token}"}

    async def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        async with self.http.post(self.base + path, json=body, headers=self.headers) as response:
            answer: dict[str, Any] = await response.json()
            if response.status != 201:
                raise RuntimeError(f"{path}: {response.status} {answer}")
            return answer

    async def raise_incident(self, game: int, player: str, kind: tuple[str, str, str]) -> int:
        name, article, summary = kind
        body = {"game": game, "player": player, "kind": name, "article": article, "summary": f"{player}: {summary}"}
        return int((await self.post("/api/v1/incidents", body))["id"])


def players_of(ids: dict[str, int]) -> list[tuple[int, str]]:
    """Every player with their game: (the service's game id, the player's id on the platform)."""
    return [(ids[name], f"{name}-{side}") for name in sorted(ids) for side in "bw"]


async def in_batches(jobs: list[Any], size: int = 25) -> None:
    for offset in range(0, len(jobs), size):
        await asyncio.gather(*jobs[offset : offset + size])


async def issue_stream_links(arbiter: Arbiter, players: list[tuple[int, str]]) -> None:
    await in_batches([arbiter.post(f"/api/v1/players/{player}/stream-token", {}) for _, player in players])


async def open_cases(arbiter: Arbiter, players: list[tuple[int, str]], count: int) -> None:
    """``count`` open cases: one incident per player and kind, each opening its own case."""
    keys = [(game, player, kind) for kind in OPEN_KINDS for game, player in players][:count]
    if len(keys) < count:
        raise SystemExit(f"--cases {count}: at most {len(keys)} with {len(players)} players")
    await in_batches([arbiter.raise_incident(game, player, kind) for game, player, kind in keys])


def print_profile(profile: dict[str, Any], top: int = 15) -> None:
    """The page's functions that cost the most main-thread time themselves (Chromium's sampling profile)."""
    nodes = {node["id"]: node for node in profile["nodes"]}
    deltas = profile.get("timeDeltas", [])
    self_ms: dict[str, float] = {}
    for sample, delta in zip(profile.get("samples", []), [*deltas[1:], 0], strict=False):
        frame = nodes[sample]["callFrame"]
        where = f"{frame['functionName'] or '(anonymous)'} {Path(frame['url']).name}:{frame['lineNumber'] + 1}"
        self_ms[where] = self_ms.get(where, 0.0) + delta / 1000
    print("\nthe page's costliest functions (self time, Chromium's profiler):")
    for where, ms in sorted(self_ms.items(), key=lambda item: -item[1])[:top]:
        print(f"  {ms:8.0f} ms  {where}")


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * len(ordered)) - 1))]


def figures(values: list[float]) -> str:
    if not values:
        return "no samples"
    return (f"p50 {percentile(values, 0.50):7.1f}  p95 {percentile(values, 0.95):7.1f}  "
            f"p99 {percentile(values, 0.99):7.1f}  max {max(values):7.1f} ms  (n={len(values)})")  # fmt: skip


BUSY_PARTS = (
    ("ScriptDuration", "script"),
    ("RecalcStyleDuration", "style"),
    ("LayoutDuration", "layout"),
    ("ThreadTime", "CPU time (ThreadTime: the same work, without the waits for a busy machine's CPUs)"),
)


async def durations(cdp: Any) -> dict[str, float]:
    """Chromium's main-thread seconds so far: all its tasks (TaskDuration), and the script, style and layout in them."""
    metrics = (await cdp.send("Performance.getMetrics"))["metrics"]
    return {m["name"]: float(m["value"]) for m in metrics if m["name"].endswith(("Duration", "ThreadTime"))}


def busy_parts(before: dict[str, float], after: dict[str, float], wall: float) -> str:
    shares = [f"{label} {(after[name] - before[name]) / wall:.1%}" for name, label in BUSY_PARTS if name in after]
    return ", ".join(shares)


async def run(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as folder:
        env = {**os.environ, "PROCTOR_DATABASE_URL": f"sqlite:///{folder}/proctor.db",
               "PROCTOR_DEADLINE_GRACE_MS": "600000", "PROCTOR_MEDIA_DIR": f"{folder}/media",
               "PROCTOR_MODELS_DIR": f"{folder}/models"}  # fmt: skip
        secret = cli("platform", "add", "bench", env=env)
        token = cli("arbiter", "add", "Bench", "--role", "chief", "--password-stdin", stdin=PASSWORD + "\n", env=env)
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        server = serve(env, port)
        try:
            async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=64)) as http:
                platform_ = Platform(http, base, secret)
                began = time.perf_counter()
                ids = await create_games(platform_, args.boards)
                print(f"{args.boards} live games created by webhooks in {time.perf_counter() - began:.1f} s")
                arbiter = Arbiter(http, base, token)
                players = players_of(ids)
                began = time.perf_counter()
                await issue_stream_links(arbiter, players)
                print(f"{len(players)} camera stream links issued in {time.perf_counter() - began:.1f} s")
                began = time.perf_counter()
                await open_cases(arbiter, players, args.cases)
                print(f"{args.cases} open cases raised by the incidents API in {time.perf_counter() - began:.1f} s")
                await measure(args, base, platform_, arbiter, ids)
        finally:
            server.terminate()
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


class Load:
    """The run's load, open loop: moves at ``--rate`` a second spread over the games, and new cases (one player after
    another, a kind none of them has yet) at ``--case-rate``, each timed from just before its request."""

    def __init__(self, args: argparse.Namespace, platform_: Platform, arbiter: Arbiter, ids: dict[str, int]) -> None:
        self.platform, self.arbiter, self.ids = platform_, arbiter, ids
        names = sorted(ids)
        self.points = game_points(225)
        self.plies = dict.fromkeys(names, 0)
        self.sent: list[tuple[int, int, float]] = []  # (game, ply, ms since 1970 just before the webhook)
        self.round_trips: list[float] = []
        self.raised: list[tuple[int, float]] = []  # (incident, ms since 1970 just before its request)
        self.case_trips: list[float] = []
        self.new_cases = players_of(ids)
        moves, cases = int(args.rate * args.seconds), min(len(self.new_cases), int(args.case_rate * args.seconds))
        self.order = [names[(i * 7) % len(names)] for i in range(moves)]  # spread over the games and the page
        # Both schedules merged in time: (seconds from the start, a move's or a new case's index).
        timed_moves = [(index / args.rate, "move", index) for index in range(moves)]
        timed_cases = [((index + 0.5) / args.case_rate, "case", index) for index in range(cases)]
        self.schedule = sorted(timed_moves + timed_cases)

    async def move(self, name: str, ply: int) -> None:
        at = time.time() * 1000
        self.sent.append((self.ids[name], ply, at))
        posted = time.perf_counter()
        await self.platform.send("move", name, {"point": self.points[ply - 1]}, int(at))
        self.round_trips.append((time.perf_counter() - posted) * 1000)

    async def case(self, game: int, player: str) -> None:
        at, posted = time.time() * 1000, time.perf_counter()
        incident = await self.arbiter.raise_incident(game, player, NEW_KIND)
        self.case_trips.append((time.perf_counter() - posted) * 1000)
        self.raised.append((incident, at))

    async def run(self) -> None:
        started = time.perf_counter()
        pending = []
        for when, what, index in self.schedule:
            delay = started + when - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            if what == "move":
                name = self.order[index]
                self.plies[name] += 1
                pending.append(asyncio.create_task(self.move(name, self.plies[name])))
            else:
                pending.append(asyncio.create_task(self.case(*self.new_cases[index])))
        await asyncio.gather(*pending)


async def measure(args: argparse.Namespace, base: str, platform_: Platform, arbiter: Arbiter,
                  ids: dict[str, int]) -> None:  # fmt: skip
    async with async_playwright() as playwright:
        browser = await launch(playwright)
        try:
            page = await browser.new_page(viewport={"width": 1366, "height": 768})
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            began = time.perf_counter()
            await page.goto(base + "/arbiter?bench=1")
            await page.fill("#login-name", "Bench")
            await page.fill("#login-password", PASSWORD)
            await page.click("#login-submit")
            await page.wait_for_function(
                f"() => document.querySelectorAll('#boards .board[data-seq]').length >= {args.boards}", timeout=60_000
            )
            await page.wait_for_function(
                f"() => Number(document.getElementById('cases-count').dataset.total) >= {args.cases}", timeout=60_000
            )
            print(f"page logged in with {args.boards} boards and {args.cases} open cases loaded in "
                  f"{time.perf_counter() - began:.1f} s")  # fmt: skip
            await page.wait_for_timeout(1_000)
            cdp = await page.context.new_cdp_session(page)
            await cdp.send("Performance.enable")
            if args.profile:
                await cdp.send("Profiler.enable")
                await cdp.send("Profiler.setSamplingInterval", {"interval": 1000})
                await cdp.send("Profiler.start")
            tasks_before = await durations(cdp)
            long_before = await page.evaluate("() => ({...window.__longTasks})")
            await page.evaluate("() => { window.__drawn.length = 0; window.__cases.length = 0; }")

            load = Load(args, platform_, arbiter, ids)
            wall_began = time.time()
            await load.run()
            await page.wait_for_timeout(3_000)  # the last moves' renders
            wall = time.time() - wall_began
            tasks_after = await durations(cdp)
            busy = (tasks_after["TaskDuration"] - tasks_before["TaskDuration"]) / wall
            print(f"the page's main thread: {busy_parts(tasks_before, tasks_after, wall)} of the wall time")
            if args.profile:
                profile = (await cdp.send("Profiler.stop"))["profile"]
                args.profile.write_text(json.dumps(profile))
                print_profile(profile)
            long_after = await page.evaluate("() => ({...window.__longTasks})")
            drawn: list[list[Any]] = await page.evaluate("() => window.__drawn")
            cards: list[list[Any]] = await page.evaluate("() => window.__cases")
            assert errors == [], errors
        finally:
            await browser.close()
    report(args, drawn, load.sent, load.round_trips, wall, busy, long_after["count"] - long_before["count"],
           long_after["ms"] - long_before["ms"])  # fmt: skip
    report_cases(args, cards, load.raised, load.case_trips)


def report_cases(args: argparse.Namespace, cards: list[list[Any]], raised: list[tuple[int, float]],
                 trips: list[float]) -> None:  # fmt: skip
    shown = {int(incident): float(at) for _case, incident, at in cards if incident is not None}
    latencies = [shown[incident] - at for incident, at in raised if incident in shown]
    missing = len(raised) - len(latencies)
    print(f"\n{len(raised)} new cases at {args.case_rate:g}/s, on top of {args.cases} open ones")
    print(f"request → case shown:             {figures(latencies)}")
    print(f"the incident request's round trip:  {figures(trips)}")
    print(f"new cases never shown: {missing}")
    p95 = percentile(latencies, 0.95) if latencies else float("inf")
    verdict = "met" if p95 < TARGET_CASE_P95_MS and missing == 0 else "NOT met"
    print(f"target new case shown p95 < {TARGET_CASE_P95_MS:.0f} ms: {verdict} (p95 {p95:.1f} ms)")


def report(args: argparse.Namespace, drawn: list[list[Any]], sent: list[tuple[int, int, float]],
           round_trips: list[float], wall: float, busy: float, long_count: int, long_ms: float) -> None:  # fmt: skip
    shown: dict[int, list[tuple[int, float, bool]]] = {}
    for game, ply, at, visible in drawn:
        shown.setdefault(int(game), []).append((int(ply), float(at), bool(visible)))
    latencies, on_screen, missing = [], [], 0
    for game, ply, at in sent:
        # The first render of this ply or a later one (two quick moves of one game may be drawn at once).
        first = min(((when, visible) for p, when, visible in shown.get(game, []) if p >= ply), default=None)
        if first is None:
            missing += 1
            continue
        latencies.append(first[0] - at)
        if first[1]:
            on_screen.append(first[0] - at)
    p95 = percentile(latencies, 0.95) if latencies else float("inf")
    print(f"\n{platform.platform()}, Python {platform.python_version()}, Chromium headless, {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.1f} at the end")  # fmt: skip
    print(f"{args.boards} boards, {len(sent)} moves at {args.rate:g}/s over {wall:.1f} s "
          f"(each game about every {args.boards / args.rate:.0f} s)")  # fmt: skip
    print(f"webhook → drawn, all boards:     {figures(latencies)}")
    print(f"webhook → drawn, boards on screen: {figures(on_screen)}")
    print(f"webhook round trip:               {figures(round_trips)}")
    print(f"moves never drawn: {missing}")
    print(f"page main thread busy: {busy:.1%} of the wall time (Chromium TaskDuration); long tasks (>50 ms): "
          f"{long_count}, {long_ms:.0f} ms in all")  # fmt: skip
    verdict = "met" if p95 < TARGET_MOVE_P95_MS and missing == 0 else "NOT met"
    print(f"target move drawn p95 < {TARGET_MOVE_P95_MS:.0f} ms with {args.boards} boards: {verdict} "
          f"(p95 {p95:.1f} ms)")  # fmt: skip
    verdict = "met" if busy < TARGET_BUSY else "NOT met"
    print(f"target main thread < {TARGET_BUSY:.0%} busy: {verdict} ({busy:.1%})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--boards", type=int, default=300)
    parser.add_argument("--cases", type=int, default=1000, help="open cases before the run")
    parser.add_argument("--rate", type=float, default=20.0, help="moves per second, over all the boards")
    parser.add_argument("--case-rate", type=float, default=2.0, help="new cases per second")
    parser.add_argument("--profile", type=Path, help="write the page's CPU profile (.cpuprofile) here, and its top")
    parser.add_argument("--seconds", type=float, default=30.0)
    args = parser.parse_args()
    if not CHROMIUM.exists():
        sys.exit("needs Debian's chromium at /usr/bin/chromium")
    asyncio.run(run(args))


if __name__ == "__main__":
    main()
