"""The event bus across processes (issue 16): Redis pub/sub behind the :class:`proctor.bus.EventBus` interface, so that
any web process serves the desk's live stream of the changes the one writer commits.

Each process publishes what its writer commits (one message per committed batch, in commit order: one sender task
per process) and listens on one subscription, fanning each message out to its own subscribers through an
:class:`~proctor.bus.InProcessBus`.  Redis keeps no pub/sub message: a process that loses its connection (Redis
restarted) connects again by itself, with a growing pause, and tells its subscribers ``resync`` once it listens
again, so that the pages read their state afresh instead of missing what was published meanwhile; live streams go
on without a reload.  Messages published while Redis is down are dropped with a warning (the database has them).

``BUS_URL`` (``redis://host:port/db``) turns it on; without it the service keeps :class:`~proctor.bus.InProcessBus`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncGenerator
from typing import Any, Final

import redis.asyncio as redis
from redis.exceptions import RedisError

from proctor.bus import InProcessBus

log = logging.getLogger("proctor.redis_bus")

CHANNEL: Final = "proctor:events"
RETRY_FIRST_S: Final = 0.2
RETRY_MOST_S: Final = 5.0
OUTBOX: Final = 10_000
"""Committed batches waiting to be published, at most; beyond that the oldest are dropped (Redis is down)."""


class RedisBus:
    """Fan-out across processes through one Redis channel; a slow subscriber loses its oldest messages, never
    memory."""

    def __init__(self, loop: asyncio.AbstractEventLoop, url: str, channel: str = CHANNEL,
                 queue_size: int = 1000) -> None:  # fmt: skip
        self.loop = loop
        self.url = url
        self.channel = channel
        self.local = InProcessBus(loop, queue_size)
        """This process's subscribers, fed from the one subscription."""
        self.outbox: asyncio.Queue[list[tuple[str, dict[str, Any]]]] = asyncio.Queue(OUTBOX)
        self.client: redis.Redis = redis.from_url(url)
        self.listening = asyncio.Event()
        """Set while the subscription is up (the tests wait for it)."""
        self.reconnects = 0
        self.tasks: list[asyncio.Task[None]] = []

    def start(self) -> None:
        self.tasks = [self.loop.create_task(self._send()), self.loop.create_task(self._listen())]

    async def close(self) -> None:
        for task in self.tasks:
            task.cancel()
        for task in self.tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self.client.aclose()

    # --- Publishing ------------------------------------------------------------------------------------------------

    def publish(self, kind: str, payload: dict[str, Any]) -> None:
        self.publish_many([(kind, payload)])

    def publish_many(self, messages: list[tuple[str, dict[str, Any]]]) -> None:
        """Called from any thread (the writer's, once per committed batch): queued in order for the sender task."""
        if messages:
            self.loop.call_soon_threadsafe(self._queue, messages)

    def _queue(self, messages: list[tuple[str, dict[str, Any]]]) -> None:
        if self.outbox.full():
            self.outbox.get_nowait()
            log.warning("event bus: Redis unreachable for long; the oldest unsent batch was dropped")
        self.outbox.put_nowait(messages)

    async def _send(self) -> None:
        while True:
            messages = await self.outbox.get()
            body = json.dumps(messages, separators=(",", ":"))
            try:
                await self.client.publish(self.channel, body)
            except (RedisError, OSError) as error:
                log.warning("event bus: a batch of %d message(s) not published: %s", len(messages), error)

    # --- Listening -------------------------------------------------------------------------------------------------

    async def _listen(self) -> None:
        """One subscription for the process, connected again after any loss."""
        pause = RETRY_FIRST_S
        while True:
            pubsub = self.client.pubsub()
            try:
                await pubsub.subscribe(self.channel)
                if self.reconnects:
                    self.local.fan_out([("resync", {"reason": "the event bus reconnected; read the state again"})])
                self.listening.set()
                pause = RETRY_FIRST_S
                async for message in pubsub.listen():
                    if message.get("type") == "message":
                        self.local.fan_out([(kind, payload) for kind, payload in json.loads(message["data"])])
                raise ConnectionError("the subscription ended")
            except (RedisError, OSError) as error:
                if self.listening.is_set():
                    log.warning("event bus: lost Redis (%s); connecting again", error)
                self.listening.clear()
                self.reconnects += 1
                await asyncio.sleep(pause)
                pause = min(RETRY_MOST_S, pause * 2)
            finally:
                with contextlib.suppress(RedisError, OSError):
                    await pubsub.aclose()

    @property
    def subscribers(self) -> set[asyncio.Queue[str]]:
        return self.local.subscribers

    def subscribe(self) -> AsyncGenerator[str, None]:
        return self.local.subscribe()
