"""The event bus across processes (issue 16), on a real redis-server (Debian's, started here on a free port): what one
process's writer commits reaches the live streams of another; a Redis restart is survived by the streams, which are
told to read their state again (``resync``) and go on; and two service apps on one database, the bus between them,
serve a platform's move on the desk's stream of the app that did not take it."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest
from aiohttp import web
from sqlalchemy import insert

from proctor.accounts import token_hash
from proctor.app import create_app
from proctor.bus import InProcessBus
from proctor.context import CONTEXT
from proctor.database import create_database_engine
from proctor.models import Arbiter
from proctor.redis_bus import RedisBus
from proctor.settings import Settings
from tests.proctor.conftest import Platformer
from tests.proctor.redis_server import RedisServer

pytestmark = pytest.mark.asyncio


async def frames(bus: RedisBus, count: int, timeout: float = 10.0) -> list[str]:
    """The next ``count`` frames a new subscriber of ``bus`` gets (its subscription is open before this returns the
    generator's first await)."""
    got: list[str] = []
    stream = bus.subscribe()

    async def take() -> None:
        async for frame in stream:
            got.append(frame)
            if len(got) == count:
                return

    await asyncio.wait_for(take(), timeout)
    await stream.aclose()
    return got


async def started(bus: RedisBus) -> RedisBus:
    bus.start()
    await asyncio.wait_for(bus.listening.wait(), 10)
    return bus


async def test_a_batch_committed_in_one_process_reaches_the_streams_of_another_in_order(
    redis_server: RedisServer,
) -> None:
    loop = asyncio.get_running_loop()
    writer_side = await started(RedisBus(loop, redis_server.url))
    web_side = await started(RedisBus(loop, redis_server.url))
    try:
        listening = asyncio.ensure_future(frames(web_side, 3))
        await asyncio.sleep(0.1)  # the subscriber is in
        batch = [("game", {"id": 1, "moves": 1}), ("incident", {"id": 7}), ("game", {"id": 1, "moves": 2})]
        threading.Thread(target=writer_side.publish_many, args=(batch,)).start()  # as the writer thread does
        got = await listening
        assert [frame.split("\n")[1] for frame in got] == ["event: game", "event: incident", "event: game"]
        assert got[2].endswith('data: {"id":1,"moves":2}\n\n') and got[0].startswith("id: ")
    finally:
        await writer_side.close()
        await web_side.close()


async def test_a_redis_restart_is_survived_the_streams_told_to_read_their_state_again(
    redis_server: RedisServer,
) -> None:
    loop = asyncio.get_running_loop()
    writer_side = await started(RedisBus(loop, redis_server.url))
    web_side = await started(RedisBus(loop, redis_server.url))
    try:
        stream = web_side.subscribe()
        first = asyncio.ensure_future(anext(stream))
        await asyncio.sleep(0.1)
        writer_side.publish("game", {"id": 1})
        assert "event: game" in await asyncio.wait_for(first, 10)
        redis_server.stop()
        await asyncio.sleep(0.5)
        writer_side.publish("game", {"id": 2})  # Redis is down: dropped with a warning, nothing raised
        redis_server.start()
        resync = await asyncio.wait_for(anext(stream), 15)  # the same stream, no reload
        assert "event: resync" in resync
        await asyncio.wait_for(writer_side.listening.wait(), 15)
        writer_side.publish("game", {"id": 3})
        after = await asyncio.wait_for(anext(stream), 10)
        assert "event: game" in after and '"id":3' in after
        await stream.aclose()
    finally:
        await writer_side.close()
        await web_side.close()


@pytest.fixture
def settings(database_url: str, redis_server: RedisServer) -> Settings:
    return Settings(database_url=database_url, deadline_grace_ms=600_000, bus_url=redis_server.url)


async def test_a_move_taken_by_one_web_process_is_on_the_desk_stream_of_another(
    platform: Platformer, settings: Settings, aiohttp_client: Any
) -> None:
    engine = create_database_engine(settings)
    with engine.begin() as connection:
        connection.execute(insert(Arbiter).values(name="Li", role="chief", token_hash=token_hash("li")))
    engine.dispose()
    other: web.Application = create_app(settings)  # a second web process on the same database and bus
    desk = await aiohttp_client(other)
    response = await desk.get("/api/v1/stream", headers={"Authorization": "Bearer li"})
    assert response.status == 200
    assert (await asyncio.wait_for(response.content.readline(), 10)).startswith(b": connected")
    seen: list[str] = []

    async def read_until_game() -> None:
        async for raw in response.content:
            line = raw.decode().strip()
            seen.append(line)
            if line.startswith("data: ") and '"g1"' in line:
                return

    reading = asyncio.ensure_future(read_until_game())
    await asyncio.sleep(0.3)
    status, created = await platform.create("g1", start=int(time.time() * 1000) - 5_000)
    assert status == 200, created
    await asyncio.wait_for(reading, 10)
    assert any(line.startswith("event: ") for line in seen), seen
    response.close()


async def test_without_a_bus_url_the_bus_stays_in_the_process(database_url: str, aiohttp_client: Any) -> None:
    app = create_app(Settings(database_url=database_url))
    await aiohttp_client(app)
    assert isinstance(app[CONTEXT].bus, InProcessBus)
