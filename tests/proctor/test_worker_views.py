"""An approved view and a prompt in the distributed mode (issues 15 and 16), every part a process of its own on this
machine: Debian's Janus and redis-server, the service (``proctor serve`` with ``JANUS_URL``) and two ``proctor
worker`` processes.  A player of a section that requires a side camera publishes the front and side cameras to Janus
as the page does.  The arbiter approves the side camera's setup through the service: the service asks the worker
holding the stream for a recording, keeps its last still as the approved view, and enters its hash with the stream;
the worker fetches the still and compares the picture with it.  A room scan prompted on the front camera is recorded
by the worker holding it, its clip kept as evidence.  The phone turned is raised as ``camera-moved`` (36.4) through
the worker; the worker killed, the other takes the stream over with its approved view, and the phone turned again is
raised again, by the new worker."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import math
import signal
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import redis
from aiortc import MediaStreamTrack, RTCPeerConnection
from sqlalchemy import select
from sqlmodel import col

from proctor.database import create_database_engine
from proctor.models import CameraAction
from proctor.settings import Settings
from proctor.stream_registry import CLAIM
from tests.proctor.redis_server import RedisServer
from tests.proctor.test_devices import EVENT, SideCamera
from tests.proctor.test_workers import CAM, incidents, live_workers, seat_and_link, wait_for, with_workers
from tests.video.janus_server import JanusServer
from tests.video.tracks import Coverable
from video.janus import janus_session, publish

pytestmark = pytest.mark.slow

PLAYER = "d-1"
"""The section's player with front, side and screen (tests.proctor.test_devices.EVENT: the view compared every
second, moved after 2 s)."""
WORKERS = ("v1", "v2")


def side_holder(bus_url: str) -> str | None:
    client = redis.Redis.from_url(bus_url, decode_responses=True)
    try:
        held = client.get(f"{CLAIM}{PLAYER}|side")
        return None if held is None else str(held)
    finally:
        client.close()


@contextlib.asynccontextmanager
async def publishing(http: aiohttp.ClientSession, base: str, token: str, device: str,
                     *tracks: MediaStreamTrack) -> AsyncIterator[None]:  # fmt: skip
    """The player's page publishing one device (its tracks: a camera, and the microphone with the front camera) to
    their room, the feed told back to the service."""
    async with http.post(f"{base}/api/v1/sfu/room", json={"token": token}) as response:
        assert response.status == 200, await response.text()
        room = await response.json()
    pc = RTCPeerConnection()
    for track in tracks:
        pc.addTrack(track)
    async with janus_session(room["url"], room["token"], http) as janus:
        feed = await publish(await janus.attach(), pc, room["room"], device, room["pin"])
        async with http.post(f"{base}/api/v1/sfu/published",
                             json={"token": token, "device": device, "feed": feed}) as response:  # fmt: skip
            assert response.status == 201, await response.text()
        try:
            yield
        finally:
            await pc.close()


def captures(database_url: str) -> list[dict[str, Any]]:
    """The prompts' recordings kept (``capture`` camera actions), each its detail."""
    engine = create_database_engine(Settings(database_url=database_url))
    with engine.connect() as connection:
        rows = connection.execute(select(CameraAction).where(col(CameraAction.kind) == "capture")).all()
    engine.dispose()
    return [dict(row.detail or {}) for row in rows]


def moved(database_url: str) -> list[Any]:
    return [i for i in incidents(database_url, PLAYER, "camera-moved") if (i.evidence or {}).get("device") == "side"]


async def scenario(database_url: str, port: int, bus_url: str, secret: str, workers: dict[str, Any],
                   folder: Path) -> dict[str, Any]:  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    async with aiohttp.ClientSession() as http, contextlib.AsyncExitStack() as stack:
        await wait_for(lambda: live_workers(bus_url) == len(WORKERS), 60, "both workers in the registry")
        token = await seat_and_link(http, base, secret, PLAYER)
        phone = SideCamera()
        await stack.enter_async_context(publishing(http, base, token, "front", Coverable(rate=10)))
        await stack.enter_async_context(publishing(http, base, token, "side", phone))
        await wait_for(lambda: side_holder(bus_url) is not None, 30, "the side camera held by a worker")
        await asyncio.sleep(2.0)  # its first frames analysed

        # The arbiter approves the setup: a still from the worker holding the stream, recorded by the service.
        async with http.post(f"{base}/api/v1/players/{PLAYER}/devices/side/reference", headers=CAM,
                             json={"note": "desk and laptop in view"}) as response:  # fmt: skip
            assert response.status == 201, await response.text()
            approved = await response.json()
        still = (folder / "media" / approved["media"]).read_bytes()
        assert still[:2] == b"\xff\xd8" and hashlib.sha256(still).hexdigest() == approved["sha256"]
        async with http.get(f"{base}/api/v1/players/{PLAYER}/camera", headers=CAM) as response:
            assert (await response.json())["devices"]["side"]["reference"] is True
        # The workers fetch it by its hash with their secret, nobody else.
        path = f"{base}/api/v1/worker/references/{approved['sha256']}"
        async with http.get(path, headers={"Authorization": "Bearer not-the-secret"}) as response:
            assert response.status == 401
        async with http.get(path, headers={"Authorization": "Bearer worker-test-secret"}) as response:
            assert response.status == 200 and await response.read() == still

        # A room scan prompted on the front camera: the worker holding it records the window, the clip is evidence.
        async with http.post(f"{base}/api/v1/players/{PLAYER}/camera/prompts", headers=CAM,
                             json={"kind": "room-scan", "seconds": 5}) as response:  # fmt: skip
            assert response.status == 201, await response.text()
            prompted = await response.json()
        await wait_for(lambda: captures(database_url), 25, "the room scan's recording kept")

        # Still as approved: nothing; turned: camera-moved, raised by the worker holding the stream.
        await asyncio.sleep(3.0)
        assert moved(database_url) == []
        first_holder = side_holder(bus_url)
        phone.moved_at = 0.0
        await wait_for(lambda: moved(database_url), 20, "the turned side camera raised through its worker")
        phone.moved_at = math.inf
        await asyncio.sleep(5.0)  # seen again: the finding ends

        # The worker killed: the other takes the stream, with its approved view.
        assert first_holder is not None
        workers[first_holder].send_signal(signal.SIGKILL)
        await wait_for(lambda: side_holder(bus_url) not in (None, first_holder), 20, "the side camera taken over")
        await asyncio.sleep(4.0)  # the approved view fetched, the first frames compared
        phone.moved_at = 0.0
        await wait_for(lambda: len(moved(database_url)) >= 2, 25, "turned again: raised by the new worker")
        return {"approved": approved, "first": first_holder, "second": side_holder(bus_url), "prompted": prompted}


def test_an_approved_view_reaches_the_worker_holding_the_stream_and_the_one_that_takes_it_over(
    database_url: str, redis_server: RedisServer, janus_server: JanusServer, tmp_path: Path
) -> None:
    if not database_url.startswith("sqlite"):
        pytest.skip("the workers reach the database through the service only: its other tests cover PostgreSQL")
    seen = with_workers(database_url, janus_server, redis_server.url, tmp_path, WORKERS,
                        lambda port, secret, workers: scenario(database_url, port, redis_server.url, secret, workers,
                                                               tmp_path), EVENT)  # fmt: skip
    logs = {name: (tmp_path / f"{name}.log").read_text() for name in WORKERS}
    first, second = seen["first"], seen["second"]
    digest = seen["approved"]["sha256"][:12]
    assert f"compared with its approved view {digest}" in logs[first], logs[first]
    assert f"compared with its approved view {digest}" in logs[second], logs[second]
    raised = moved(database_url)
    assert len(raised) == 2 and all(i.article == "36.4" for i in raised)
    (scan,) = captures(database_url)
    assert scan["prompt"] == seen["prompted"]["id"] and scan["frames"] >= 5, scan
    clip = (tmp_path / "media" / scan["clip"]["media"]).read_bytes()
    assert clip[:4] == b"\x1aE\xdf\xa3" and hashlib.sha256(clip).hexdigest() == scan["clip"]["sha256"]  # WebM
    (incident,) = incidents(database_url, PLAYER, "room-scan")
    assert incident.id == seen["prompted"]["incident"]
