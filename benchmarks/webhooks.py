"""Benchmark platform webhooks: signed move deliveries per second over loopback, from a separate process.

Usage: python benchmarks/webhooks.py [--games 50] [--moves 100] [--concurrency 32] [--rate 200] [--seconds 10]
(run through ``scripts/with-postgres`` to add the PostgreSQL figures).

For each database (SQLite file; PostgreSQL when PROCTOR_TEST_POSTGRES_URL is set) a real ``proctor serve`` runs in its
own process, and a load process (this script with ``--load``) posts pre-signed Standard Webhooks deliveries:

* throughput: ``--games`` games of ``--moves`` moves each, ``--concurrency`` requests in flight: moves per second and
  p50 / p99 latency;
* paced: ``--rate`` moves per second (open loop) for ``--seconds``: p50 / p99 latency;
* the same throughput run against a bare aiohttp handler that answers 200 without any work, in the same run: the
  service's throughput as a share of it.

Targets (issue 5): at least 1,000 moves/s on SQLite; p99 under 50 ms at 200 moves/s; at least 30 % of the bare
handler's throughput.  Nothing here is a test.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run by hand from anywhere, without installing

from proctor.signatures import signed_headers

BARE_APP = """
import sys
from aiohttp import web
async def ok(request):
    await request.read()
    return web.json_response({"status": "ok"})
app = web.Application()
app.router.add_post("/api/v1/webhooks/{platform}", ok)
web.run_app(app, host="127.0.0.1", port=int(sys.argv[1]), print=None, access_log=None)
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_for(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            if process.poll() is not None:
                raise RuntimeError(f"the server exited with {process.returncode}") from None
            time.sleep(0.1)
    raise RuntimeError("the server did not start")


def iso(ms: int) -> str:
    seconds, rest = divmod(ms, 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{rest:03d}Z"


def game_points(moves: int) -> list[str]:
    """A long freestyle game with no five: colour = ((column + 2 row) // 2) % 2, alternating."""
    black = [(c, r) for r in range(15) for c in range(15) if ((c + 2 * r) // 2) % 2 == 0]
    white = [(c, r) for r in range(15) for c in range(15) if ((c + 2 * r) // 2) % 2 == 1]
    order = [p for pair in zip(black, white, strict=False) for p in pair]
    return [f"{'abcdefghijklmno'[c]}{r + 1}" for c, r in order[:moves]]


def deliveries(prefix: str, games: int, moves: int, start_ms: int) -> tuple[list[bytes], list[bytes]]:
    """(set-up bodies, move bodies); the moves interleaved across games, in seq order within each game."""
    setup, per_game = [], []
    points = game_points(moves)
    for g in range(games):
        game = f"{prefix}-{g}"
        data = {"black": {"id": f"{game}-b"}, "white": {"id": f"{game}-w"}, "rule": "freestyle",
                "time_control": "rapid-15", "start_at": iso(start_ms)}  # fmt: skip
        setup.append({"type": "game.created", "game_id": game, "seq": 1, "at": iso(start_ms - 5000), "data": data})
        setup.append({"type": "player.joined", "game_id": game, "seq": 2, "at": iso(start_ms - 4000),
                      "data": {"player": f"{game}-b"}})  # fmt: skip
        setup.append({"type": "player.joined", "game_id": game, "seq": 3, "at": iso(start_ms - 3000),
                      "data": {"player": f"{game}-w"}})  # fmt: skip
        per_game.append([
            {"type": "move", "game_id": game, "seq": 4 + i, "at": iso(start_ms + i * 200), "data": {"point": point}}
            for i, point in enumerate(points)
        ])  # fmt: skip
    moves_interleaved = [game_moves[i] for i in range(moves) for game_moves in per_game]
    return [json.dumps(b).encode() for b in setup], [json.dumps(b).encode() for b in moves_interleaved]


# --- The load process ------------------------------------------------------------------------------------------------


async def _post_all(url: str, secret: str, bodies: list[bytes], concurrency: int, rate: float | None,
                    ordered_per_game: bool) -> tuple[float, list[float], int]:  # fmt: skip
    """Post ``bodies``; returns (seconds, latencies in ms, non-2xx count)."""
    now = int(time.time())
    signed = [(body, signed_headers(secret, f"bench-{time.time_ns()}-{i}", now, body)) for i, body in enumerate(bodies)]
    latencies: list[float] = []
    failures = 0
    queue: asyncio.Queue[tuple[bytes, dict[str, str]]] = asyncio.Queue()
    for item in signed:
        queue.put_nowait(item)
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def send(body: bytes, headers: dict[str, str]) -> None:
            nonlocal failures
            started = time.perf_counter()
            async with session.post(url, data=body, headers=headers) as response:
                await response.read()
                if not 200 <= response.status < 300:
                    failures += 1
            latencies.append((time.perf_counter() - started) * 1000)

        async def worker() -> None:
            while not queue.empty():
                body, headers = queue.get_nowait()
                await send(body, headers)

        begin = time.perf_counter()
        if rate is None:
            await asyncio.gather(*(worker() for _ in range(concurrency)))
        else:
            tasks = []
            for index, (body, headers) in enumerate(signed):
                delay = begin + index / rate - time.perf_counter()
                if delay > 0:
                    await asyncio.sleep(delay)
                tasks.append(asyncio.create_task(send(body, headers)))
            await asyncio.gather(*tasks)
        elapsed = time.perf_counter() - begin
    del ordered_per_game
    return elapsed, latencies, failures


def load_main(args: argparse.Namespace) -> None:
    """Runs in its own process: posts and prints a JSON line of results."""
    spec = json.loads(Path(args.load).read_text())
    setup = [b.encode() for b in spec["setup"]]
    moves = [b.encode() for b in spec["moves"]]
    if setup:
        asyncio.run(_post_all(spec["url"], spec["secret"], setup, 4, None, True))
    elapsed, latencies, failures = asyncio.run(
        _post_all(spec["url"], spec["secret"], moves, spec["concurrency"], spec["rate"], True)
    )
    latencies.sort()
    print(json.dumps({
        "count": len(moves), "seconds": elapsed, "failures": failures,
        "p50": latencies[len(latencies) // 2] if latencies else 0.0,
        "p99": latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] if latencies else 0.0,
    }))  # fmt: skip


def run_load(url: str, secret: str, setup: list[bytes], moves: list[bytes], concurrency: int,
             rate: float | None) -> dict[str, Any]:  # fmt: skip
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as spec:
        json.dump({"url": url, "secret": secret, "setup": [b.decode() for b in setup],
                   "moves": [b.decode() for b in moves], "concurrency": concurrency, "rate": rate}, spec)  # fmt: skip
    done = subprocess.run([sys.executable, __file__, "--load", spec.name], capture_output=True, text=True, check=False)
    os.unlink(spec.name)
    if done.returncode != 0:
        raise RuntimeError(done.stderr)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


# --- The driver ------------------------------------------------------------------------------------------------------


def register(database_url: str) -> str:
    env = {**os.environ, "PROCTOR_DATABASE_URL": database_url}
    proctor = Path(sys.executable).parent / "proctor"
    command = [str(proctor), "platform", "add", "bench"]
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=True)
    return done.stdout.strip().splitlines()[-1]


def serve(database_url: str, port: int) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PROCTOR_DATABASE_URL": database_url, "PROCTOR_DEADLINE_GRACE_MS": "600000"}
    proctor = Path(sys.executable).parent / "proctor"
    process = subprocess.Popen([str(proctor), "serve", "--port", str(port)], env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    wait_for(port, process)
    return process


def measure_service(label: str, database_url: str, args: argparse.Namespace) -> list[tuple[str, dict[str, Any]]]:
    secret = register(database_url)
    port = free_port()
    process = serve(database_url, port)
    url = f"http://127.0.0.1:{port}/api/v1/webhooks/bench"
    rows = []
    try:
        start = int(time.time() * 1000)
        setup, moves = deliveries(f"{label}-t", args.games, args.moves, start)
        rows.append((f"{label}: throughput", run_load(url, secret, setup, moves, args.concurrency, None)))
        paced_games = max(1, int(args.rate * args.seconds) // args.moves + 1)
        setup, moves = deliveries(f"{label}-p", paced_games, args.moves, start)
        moves = moves[: int(args.rate * args.seconds)]
        paced = run_load(url, secret, setup, moves, args.concurrency, args.rate)
        rows.append((f"{label}: paced {args.rate:g}/s", paced))
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
    return rows


def measure_bare(args: argparse.Namespace) -> dict[str, Any]:
    port = free_port()
    process = subprocess.Popen([sys.executable, "-c", BARE_APP, str(port)], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)  # fmt: skip
    wait_for(port, process)
    try:
        _, moves = deliveries("bare", args.games, args.moves, int(time.time() * 1000))
        url = f"http://127.0.0.1:{port}/api/v1/webhooks/bench"
        return run_load(url, "whsec_AAAA", [], moves, args.concurrency, None)
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=50)
    parser.add_argument("--moves", type=int, default=100)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--rate", type=float, default=200.0)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--load", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.load:
        load_main(args)
        return
    print(f"Python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} CPUs; "
          f"{args.games} games x {args.moves} moves, {args.concurrency} in flight")  # fmt: skip
    rows: list[tuple[str, dict[str, Any]]] = []
    bare = measure_bare(args)
    rows.append(("bare aiohttp handler", bare))
    with tempfile.TemporaryDirectory() as folder:
        rows += measure_service("sqlite", f"sqlite:///{folder}/bench.db", args)
    postgres = os.environ.get("PROCTOR_TEST_POSTGRES_URL")
    if postgres:
        rows += measure_service("postgresql", postgres, args)
    bare_rate = bare["count"] / bare["seconds"]
    print(f"{'run':28} {'moves/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'non-2xx':>8} {'vs bare':>8}")
    for name, result in rows:
        rate = result["count"] / result["seconds"]
        print(f"{name:28} {rate:>9.0f} {result['p50']:>8.1f} {result['p99']:>8.1f} {result['failures']:>8} "
              f"{rate / bare_rate:>8.0%}")  # fmt: skip
    print("targets: >= 1,000 moves/s on SQLite; p99 < 50 ms at 200 moves/s; >= 30 % of the bare handler")


if __name__ == "__main__":
    main()
