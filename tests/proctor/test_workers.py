"""Analysis workers (issue 16), every one a process of its own on this machine: Debian's Janus and redis-server, the
service (``proctor serve`` with ``JANUS_URL``) and three ``proctor worker`` processes.  Four players publish their
front cameras to Janus as their pages do (an aiortc sender each: the room and PIN from the service, the feed told
back to it).  The workers share the streams by load (2, 1, 1); a covered camera is raised by the worker that holds
it, through the service; the worker holding a second player's camera is killed with SIGKILL, another takes the
stream within seconds, the time it went unchecked is on the game's camera timeline, and the same camera covered
afterwards is raised by its new worker.  Redis restarted empty, every stream is held again by the same worker and a
covered camera is still raised; a fourth worker that joins takes its share from the others.  Nothing is recorded
twice."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import time
from collections.abc import AsyncIterator, Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import aiohttp
import pytest
import redis
from aiortc import RTCConfiguration, RTCIceServer, RTCPeerConnection
from aiortc.rtcconfiguration import RTCIceTransportPolicy
from sqlalchemy import insert, select
from sqlmodel import col

from proctor.accounts import token_hash
from proctor.database import create_database_engine, migrate
from proctor.events import parse_event, store_event
from proctor.models import Arbiter, Incident, IncidentAction
from proctor.settings import Settings
from proctor.signatures import signed_headers
from proctor.stream_registry import CLAIM, WORKER
from tests.proctor.conftest import iso, register_platform
from tests.proctor.redis_server import RedisServer
from tests.proctor.test_crash import PROCTOR, free_port
from tests.proctor.test_writer_lease import stop_all, wait_listening
from tests.video.janus_server import JanusServer
from tests.video.tracks import Coverable
from video.janus import janus_session, publish

T = TypeVar("T")

pytestmark = pytest.mark.slow

PLAYERS = ("wk-1", "wk-2", "wk-3", "wk-4")
WORKERS = ("w1", "w2", "w3")
SECRET = "worker-test-secret"
MODELS = Path(__file__).parent.parent.parent / "models"


def service(database_url: str, port: int, janus: JanusServer, bus_url: str, folder: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PROCTOR_DATABASE_URL": database_url, "PROCTOR_DEADLINE_GRACE_MS": "600000",
           "PROCTOR_BUS_URL": bus_url, "PROCTOR_JANUS_URL": janus.url, "PROCTOR_JANUS_ADMIN_URL": janus.admin_url,
           "PROCTOR_JANUS_ADMIN_SECRET": janus.admin_secret, "PROCTOR_WORKER_SECRET": SECRET,
           "PROCTOR_MEDIA_DIR": str(folder / "media"), "PROCTOR_MODELS_DIR": str(folder / "no-models")}  # fmt: skip
    out = open(folder / "service.log", "ab")  # noqa: SIM115 - handed to the child process
    return subprocess.Popen([str(PROCTOR), "serve", "--port", str(port)], env=env, stdout=out, stderr=out)


def worker(name: str, ports: int | tuple[int, ...], janus: JanusServer, bus_url: str,
           folder: Path) -> subprocess.Popen[bytes]:  # fmt: skip
    """``proctor worker`` reporting to the service processes on ``ports``."""
    urls = ",".join(f"http://127.0.0.1:{port}" for port in (ports if isinstance(ports, tuple) else (ports,)))
    env = {**os.environ, "PROCTOR_BUS_URL": bus_url, "PROCTOR_JANUS_URL": janus.url, "PROCTOR_WORKER_SECRET": SECRET,
           "PROCTOR_WRITER_URLS": urls, "PROCTOR_MODELS_DIR": str(MODELS), "PROCTOR_WORKER_CAPACITY": "3"}  # fmt: skip
    out = open(folder / f"{name}.log", "ab")  # noqa: SIM115 - handed to the child process
    return subprocess.Popen([str(PROCTOR), "worker", "--id", name], env=env, stdout=out, stderr=out)


def with_workers(database_url: str, janus: JanusServer, bus_url: str, folder: Path, names: tuple[str, ...],
                 scenario: Callable[[int, str, dict[str, subprocess.Popen[bytes]]], Coroutine[Any, Any, T]],
                 event: str | None = None) -> T:  # fmt: skip
    """The service and the workers ``names`` as processes (with ``event`` stored first, a platform and the arbiter
    Cam), ``scenario(port, the platform's secret, the workers)`` run against them, every process stopped after (a
    worker the scenario added to the dict too)."""
    if event is not None:
        engine = create_database_engine(Settings(database_url=database_url))
        migrate(engine)
        with engine.begin() as connection:
            store_event(connection, parse_event(event, folder), now=0)
        engine.dispose()
    secret = register_platform(database_url)
    add_arbiter(database_url)
    port = free_port()
    server = service(database_url, port, janus, bus_url, folder)
    workers: dict[str, subprocess.Popen[bytes]] = {}
    try:
        wait_listening(port, server, 30)
        workers.update({name: worker(name, port, janus, bus_url, folder) for name in names})
        return asyncio.run(scenario(port, secret, workers))
    finally:
        stop_all([server, *workers.values()])


def add_arbiter(database_url: str) -> None:
    engine = create_database_engine(Settings(database_url=database_url))
    with engine.begin() as connection:
        connection.execute(insert(Arbiter).values(name="Cam", role="chief", token_hash=token_hash("cam-token")))
    engine.dispose()


@dataclass
class Player:
    ref: str
    token: str
    track: Coverable
    pc: RTCPeerConnection


async def seat_and_link(http: aiohttp.ClientSession, base: str, secret: str, ref: str) -> str:
    """The player seated in a game an hour from now (a signed ``game.created``), and their stream link's token."""
    start = int(time.time() * 1000) + 3_600_000
    data = {"black": {"id": ref, "name": ref}, "white": {"id": f"{ref}-opp", "name": "Opp"}, "rule": "renju",
            "time_control": "rapid-15", "start_at": iso(start)}  # fmt: skip
    body = json.dumps({"type": "game.created", "game_id": f"game-{ref}", "seq": 1, "at": iso(start - 60_000),
                       "data": data}).encode()  # fmt: skip
    headers = signed_headers(secret, f"seat-{ref}", int(time.time()), body)
    async with http.post(f"{base}/api/v1/webhooks/tourney", data=body, headers=headers) as response:
        assert response.status == 200, await response.text()
    async with http.post(f"{base}/api/v1/players/{ref}/stream-token",
                         headers={"Authorization": "Bearer cam-token"}) as response:  # fmt: skip
        assert response.status == 201, await response.text()
        return str((await response.json())["token"])


@contextlib.asynccontextmanager
async def published(
    http: aiohttp.ClientSession, base: str, ref: str, token: str, relay_only: bool = False
) -> AsyncIterator[Player]:
    """The player's page: its room from the service, its front camera published there, the feed told back.
    ``relay_only``: a network that lets nothing through but TURN (the room's ICE servers, relayed candidates only)."""
    async with http.post(f"{base}/api/v1/sfu/room", json={"token": token}) as response:
        assert response.status == 200, await response.text()
        room = await response.json()
    track = Coverable(rate=10)
    if relay_only:
        servers = [RTCIceServer(s["urls"], s.get("username"), s.get("credential")) for s in room["iceServers"]]
        assert servers, room
        pc = RTCPeerConnection(RTCConfiguration(iceServers=servers, iceTransportPolicy=RTCIceTransportPolicy.RELAY))
    else:
        pc = RTCPeerConnection()
    pc.addTrack(track)
    async with janus_session(room["url"], room["token"], http) as janus:
        handle = await janus.attach()
        feed = await publish(handle, pc, room["room"], "front", room["pin"])
        async with http.post(f"{base}/api/v1/sfu/published",
                             json={"token": token, "device": "front", "feed": feed}) as response:  # fmt: skip
            assert response.status == 201, await response.text()
        try:
            yield Player(ref, token, track, pc)
        finally:
            await pc.close()


def live_workers(bus_url: str) -> int:
    client = redis.Redis.from_url(bus_url, decode_responses=True)
    try:
        return len(client.keys(f"{WORKER}*"))
    finally:
        client.close()


def holders(bus_url: str, players: tuple[str, ...] = PLAYERS) -> dict[str, str | None]:
    client = redis.Redis.from_url(bus_url, decode_responses=True)
    try:
        return {ref: None if (held := client.get(f"{CLAIM}{ref}|front")) is None else str(held) for ref in players}
    finally:
        client.close()


async def wait_for(condition: Any, seconds: float, what: str) -> float:
    began = time.monotonic()
    while time.monotonic() - began < seconds:
        if condition():
            return time.monotonic() - began
        await asyncio.sleep(0.2)
    raise AssertionError(f"not within {seconds} s: {what}")


CAM = {"Authorization": "Bearer cam-token"}


async def desk_camera(http: aiohttp.ClientSession, base: str, ref: str) -> dict[str, Any]:
    """The player's camera as the desk reads it, once its worker reports frames analysed (within 15 s)."""
    for _ in range(75):
        async with http.get(f"{base}/api/v1/players/{ref}/camera", headers=CAM) as response:
            status: dict[str, Any] = await response.json()
        if status["connected"] and status["frames"]["analysed"] > 0:
            return status
        await asyncio.sleep(0.2)
    raise AssertionError(f"{ref}'s camera never showed as analysed: {status}")


def incidents(database_url: str, ref: str, kind: str) -> list[Any]:
    engine = create_database_engine(Settings(database_url=database_url))
    with engine.connect() as connection:
        rows = connection.execute(
            select(Incident).where(col(Incident.player_ref) == ref, col(Incident.kind) == kind)
        ).all()
    engine.dispose()
    return list(rows)


def notes(database_url: str, incident_id: int) -> list[str]:
    engine = create_database_engine(Settings(database_url=database_url))
    with engine.connect() as connection:
        rows = connection.execute(
            select(col(IncidentAction.note)).where(col(IncidentAction.incident_id) == incident_id)
        ).all()
    engine.dispose()
    return [row[0] for row in rows]


@dataclass
class Seen:
    loads: dict[str, int]
    moved_in: float
    new_holder: str
    timeline: dict[str, Any]


def balanced(bus_url: str, among: int) -> bool:
    """Every stream held, by ``among`` workers, none holding two more than another."""
    held = holders(bus_url)
    if None in held.values():
        return False
    loads = [list(held.values()).count(name) for name in set(held.values())]
    return len(loads) == among and max(loads) - min(loads) <= 1


async def scenario(
    database_url: str,
    port: int,
    redis_server: RedisServer,
    secret: str,
    workers: dict[str, Any],
    janus: JanusServer,
    folder: Path,
) -> Seen:
    bus_url = redis_server.url
    base = f"http://127.0.0.1:{port}"
    async with aiohttp.ClientSession() as http, contextlib.AsyncExitStack() as stack:
        # The workers first (a worker that joins later takes new streams and orphaned ones, never a live worker's).
        await wait_for(lambda: live_workers(bus_url) == len(WORKERS), 60, "every worker in the registry")
        players = {}
        for ref in PLAYERS:
            token = await seat_and_link(http, base, secret, ref)
            players[ref] = await stack.enter_async_context(published(http, base, ref, token))
        await wait_for(lambda: all(holders(bus_url).values()), 30, "every stream held by a worker")
        held = holders(bus_url)
        loads = {name: sum(1 for holder in held.values() if holder == name) for name in WORKERS}

        # The desk sees each camera as its worker reports it: live, analysed, with its thumbnail.
        await desk_camera(http, base, "wk-1")
        thumbnail = await http.get(f"{base}/api/v1/players/wk-1/camera/thumbnail.jpg", headers=CAM)
        assert thumbnail.status == 200 and (await thumbnail.read()).startswith(b"\xff\xd8")

        # A covered camera, raised by the worker holding it, through the service.
        players["wk-1"].track.covered = True
        await wait_for(lambda: incidents(database_url, "wk-1", "camera-covered"), 30, "wk-1's covered camera raised")
        players["wk-1"].track.covered = False

        # The worker holding wk-2's camera killed: another takes it, the gap is recorded.
        victim = held["wk-2"]
        assert victim is not None
        workers[victim].send_signal(signal.SIGKILL)
        killed = time.monotonic()
        await wait_for(lambda: holders(bus_url)["wk-2"] not in (None, victim), 20, "wk-2's stream taken over")
        moved_in = time.monotonic() - killed
        new_holder = holders(bus_url)["wk-2"]
        assert new_holder is not None
        await wait_for(lambda: incidents(database_url, "wk-2", "analysis-gap"), 20, "wk-2's gap recorded")
        await wait_for(lambda: balanced(bus_url, 2), 30, "the two left even (a worker with 3 lets one go)")

        # The same camera covered after the move: raised by its new worker.
        await asyncio.sleep(2.0)  # the new worker's first frames
        players["wk-2"].track.covered = True
        await wait_for(lambda: incidents(database_url, "wk-2", "camera-covered"), 30, "wk-2's covered camera raised")
        players["wk-2"].track.covered = False

        # Redis restarted empty: the service writes its streams again, the workers keep theirs and carry on.
        before = holders(bus_url)
        redis_server.stop()
        await asyncio.sleep(2.0)
        redis_server.start()
        await wait_for(lambda: holders(bus_url) == before, 20, "every stream held again by the same worker")
        players["wk-3"].track.covered = True
        await wait_for(lambda: incidents(database_url, "wk-3", "camera-covered"), 30, "wk-3's covered camera raised")
        players["wk-3"].track.covered = False

        # A worker that joins takes its share from the others (one stream at a time, without a gap to report).
        workers["w4"] = worker("w4", port, janus, bus_url, folder)
        await wait_for(lambda: balanced(bus_url, 3) and "w4" in holders(bus_url).values(), 60, "w4 took its share")

        async with http.get(f"{base}/api/v1/games", headers={"Authorization": "Bearer cam-token"}) as response:
            games = await response.json()
        game = next(g["id"] for g in games if g.get("platform_game_id") == "game-wk-2")
        async with http.get(f"{base}/api/v1/games/{game}/timeline",
                            headers={"Authorization": "Bearer cam-token"}) as response:  # fmt: skip
            assert response.status == 200, await response.text()
            timeline = await response.json()
        return Seen(loads, moved_in, new_holder, timeline)


def test_workers_share_the_streams_and_take_a_killed_workers_over_with_the_gap_on_the_timeline(
    database_url: str, redis_server: RedisServer, janus_server: JanusServer, tmp_path: Path
) -> None:
    if not database_url.startswith("sqlite"):
        pytest.skip("the workers reach the database through the service only: its other tests cover PostgreSQL")
    seen = with_workers(database_url, janus_server, redis_server.url, tmp_path, WORKERS,
                        lambda port, secret, workers: scenario(database_url, port, redis_server, secret, workers,
                                                               janus_server, tmp_path))  # fmt: skip
    logs = {name: (tmp_path / f"{name}.log").read_text() for name in WORKERS}
    assert sorted(seen.loads.values()) == [1, 1, 2], (seen.loads, logs)
    assert seen.moved_in < 10, seen.moved_in
    covered = incidents(database_url, "wk-2", "camera-covered")
    assert len(covered) == 1 and len(incidents(database_url, "wk-1", "camera-covered")) == 1
    (gap,) = incidents(database_url, "wk-2", "analysis-gap")  # the kill's; a stream handed over to w4 has none
    assert gap.source == "detector:camera" and 1000 <= gap.evidence["gap_ms"] <= 15_000, gap.evidence
    assert any(note.startswith("ended after ") for note in notes(database_url, gap.id))
    assert gap.created_ms < covered[0].created_ms
    camera = seen.timeline["liveness"]["camera"]["wk-2"]
    kinds = [entry["kind"] for entry in camera]
    assert "analysis-gap" in kinds and "camera-covered" in kinds, camera
    assert next(e for e in camera if e["kind"] == "analysis-gap")["end"] is not None
    assert f"worker {seen.new_holder} took wk-2|front" in logs[seen.new_holder]
