"""The event bus behind the live stream: an interface, with an in-process implementation.

Several service nodes would need a shared bus (e.g. Redis pub/sub) implementing the same two methods.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any, Protocol


class EventBus(Protocol):
    def publish(self, kind: str, payload: dict[str, Any]) -> None:
        """Called from any thread."""

    def publish_many(self, messages: list[tuple[str, dict[str, Any]]]) -> None:
        """Called from any thread, once per committed batch."""

    def subscribe(self) -> AsyncIterator[str]:
        """Server-sent-event frames, one per published message, for as long as the subscriber listens."""


class InProcessBus:
    """Fan-out to the subscribers of this process; a slow subscriber loses its oldest messages, never memory."""

    def __init__(self, loop: asyncio.AbstractEventLoop, queue_size: int = 1000) -> None:
        self.loop = loop
        self.queue_size = queue_size
        self.subscribers: set[asyncio.Queue[str]] = set()
        self.sequence = 0

    def publish(self, kind: str, payload: dict[str, Any]) -> None:
        self.publish_many([(kind, payload)])

    def publish_many(self, messages: list[tuple[str, dict[str, Any]]]) -> None:
        if messages and self.subscribers:  # nobody listening: no frames, and no wake-up of the event loop
            self.loop.call_soon_threadsafe(self.fan_out, messages)

    def fan_out(self, messages: list[tuple[str, dict[str, Any]]]) -> None:
        """On the event loop: each message, as a frame, to every subscriber of this process."""
        for kind, payload in messages:
            self.sequence += 1
            frame = f"id: {self.sequence}\nevent: {kind}\ndata: {json.dumps(payload, separators=(',', ':'))}\n\n"
            for queue in self.subscribers:
                if queue.full():
                    queue.get_nowait()
                queue.put_nowait(frame)

    async def subscribe(self) -> AsyncGenerator[str, None]:
        queue: asyncio.Queue[str] = asyncio.Queue(self.queue_size)
        self.subscribers.add(queue)
        try:
            while True:
                yield await queue.get()
        finally:
            self.subscribers.discard(queue)
