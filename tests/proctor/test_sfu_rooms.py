"""The players' rooms on Janus (proctor.sfu), on Debian's Janus and redis-server with the service in this process: a
player's page gets a room of its own with a PIN and a token of its own; the feed it says it published is checked
with Janus before the workers are given it (a feed that is not publishing, or not that device, is refused); a
player's token and PIN open their own room and nobody else's."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp
import pytest
import redis
from aiortc import RTCPeerConnection
from sqlalchemy import select
from sqlmodel import col

from proctor.models import Incident
from proctor.settings import Settings
from proctor.stream_registry import STREAMS
from proctor.worker import Worker
from tests.proctor.conftest import Platformer, app_context, seat
from tests.proctor.redis_server import RedisServer
from tests.proctor.test_camera import CAM, issue_token
from tests.proctor.test_workers import published
from tests.video.janus_server import JanusServer
from tests.video.tracks import MovingPicture
from video.devices import StreamKey
from video.janus import JanusError, janus_session, publish

pytestmark = pytest.mark.asyncio


@pytest.fixture
def settings(database_url: str, janus_server: JanusServer, redis_server: RedisServer) -> Settings:
    return Settings(database_url=database_url, deadline_grace_ms=0, bus_url=redis_server.url,
                    janus_url=janus_server.url, janus_admin_url=janus_server.admin_url,
                    janus_admin_secret=janus_server.admin_secret, worker_secret="rooms-test-secret")  # fmt: skip


async def room_of(platform: Platformer, token: str) -> dict[str, Any]:
    response = await platform.client.post("/api/v1/sfu/room", json={"token": token})
    assert response.status == 200, await response.text()
    room: dict[str, Any] = await response.json()
    return room


async def test_a_page_publishes_in_its_own_room_and_only_a_checked_feed_reaches_the_workers(
    platform: Platformer, settings: Settings, redis_server: RedisServer
) -> None:
    first = await issue_token(platform, settings, "sr-1")
    await seat(platform, "sr-2")
    response = await platform.client.post("/api/v1/players/sr-2/stream-token", headers=CAM)
    second = (await response.json())["token"]
    mine, theirs = await room_of(platform, first), await room_of(platform, second)
    assert mine["room"] != theirs["room"] and mine["pin"] != theirs["pin"] and mine["token"] != theirs["token"]
    assert mine == await room_of(platform, first)  # the same room again (derived, not stored)
    pc = RTCPeerConnection()
    pc.addTrack(MovingPicture(10))
    async with aiohttp.ClientSession() as http, janus_session(mine["url"], mine["token"], http) as janus:
        try:
            feed = await publish(await janus.attach(), pc, mine["room"], "front", mine["pin"])

            async def published(body: dict[str, Any]) -> aiohttp.ClientResponse:
                return await platform.client.post("/api/v1/sfu/published", json={"token": first, **body})

            assert (await published({"device": "front", "feed": feed + 1})).status == 409  # not publishing
            wrong = await published({"device": "side", "feed": feed})  # the section uses no side camera
            assert wrong.status == 409 and "does not use" in (await wrong.json())["message"]
            assert (await published({"device": "front", "feed": "one"})).status == 400
            assert (await published({"device": "front", "feed": feed})).status == 201
            entries = redis.Redis.from_url(redis_server.url, decode_responses=True).hgetall(STREAMS)
            entry = json.loads(entries["sr-1|front"])
            assert (entry["room"], entry["feed"], entry["pin"]) == (mine["room"], feed, mine["pin"])
            assert "camera-covered" in entry["policy"]["enabled"]
            # Another player's feed told with this player's token: not in this player's room.
            response = await platform.client.post("/api/v1/sfu/published",
                                                  json={"token": second, "device": "front", "feed": feed})  # fmt: skip
            assert response.status == 409
            # This player's token and PIN do not open the other's room.
            with pytest.raises(JanusError):
                await publish(await janus.attach(), RTCPeerConnection(), theirs["room"], "front", mine["pin"])
        finally:
            await pc.close()


async def test_after_janus_restarts_the_page_publishes_again_and_the_worker_takes_it_in_a_new_session(
    platform: Platformer,
    settings: Settings,
    janus_server: JanusServer,
    redis_server: RedisServer,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Janus restarted (every session, room and token gone): the player's page publishes again (a new room request
    makes the service add the tokens and the room again), and the worker, whose session is gone, opens a new one and
    takes the new feed; a covered camera is then raised through it."""
    token = await issue_token(platform, settings, "sr-3")
    base = str(platform.client.make_url("")).rstrip("/")
    worker = Worker(Settings(bus_url=redis_server.url, janus_url=janus_server.url, worker_secret=settings.worker_secret,
                             writer_urls=base, models_dir="no-models"), "w1")  # fmt: skip
    stop = asyncio.Event()
    working = asyncio.create_task(worker.run(stop))
    try:
        async with aiohttp.ClientSession() as http:
            async with published(http, base, "sr-3", token):
                await until(lambda: analysed(worker) > 0, "the worker analyses the first feed")
                first_feed = worker.held["sr-3|front"].stream.feed
                janus_server.stop()
                janus_server.start()
            async with published(http, base, "sr-3", token) as again:
                await until(lambda: "sr-3|front" in worker.held
                            and worker.held["sr-3|front"].stream.feed != first_feed and analysed(worker) > 0,
                            "the worker takes the new feed")  # fmt: skip
                again.track.covered = True
                await until(lambda: covered(platform), "the covered camera raised through the new session")
    finally:
        stop.set()
        await asyncio.wait_for(working, 20)
    assert "Janus lost its session (restarted?): opening a new one" in caplog.text


def analysed(worker: Worker) -> int:
    session = worker.ingest.sessions.get(StreamKey("sr-3")) if worker.ingest is not None else None
    return session.frames_analysed if session is not None else 0


def covered(platform: Platformer) -> bool:
    with app_context(platform).engine.connect() as connection:
        return (
            connection.execute(
                select(col(Incident.id)).where(
                    col(Incident.player_ref) == "sr-3", col(Incident.kind) == "camera-covered"
                )
            ).first()
            is not None
        )


async def until(condition: Any, what: str, seconds: float = 40.0) -> None:
    for _ in range(int(seconds / 0.2)):
        if condition():
            return
        await asyncio.sleep(0.2)
    raise AssertionError(f"not within {seconds} s: {what}")
