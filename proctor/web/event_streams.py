"""Server-sent event streams that last only as long as what authorised them: a dashboard session, an arbiter's
bearer token, a player's stream token.

What authorised a stream is checked again before each frame is sent, at once when this process ends a session or a
stream token (:class:`Revocations`), and every ``stream_recheck_s`` otherwise (another process's revocation, an
expiry).  When it no longer holds, the stream sends a last ``end`` event saying why and ends.  A client that goes
away ends its stream quietly: no traceback, no address in the log."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

from aiohttp import web

Authority = Callable[[], str | None]
"""Why the stream must end now (a sentence for the client), or None while what authorised it still holds."""


class Revocations:
    """Wakes this process's open streams when a session or a stream token ends here, so that they check again at
    once instead of at their next periodic check."""

    def __init__(self) -> None:
        self._changed = asyncio.Event()

    def signal(self) -> None:
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    async def wait(self) -> None:
        await self._changed.wait()


def end_frame(reason: str) -> str:
    return f"event: end\ndata: {json.dumps({'reason': reason}, ensure_ascii=False)}\n\n"


async def _next(frames: AsyncIterator[str]) -> str:
    return await anext(frames)


async def relay(
    request: web.Request,
    frames: AsyncIterator[str],
    authority: Authority,
    revocations: Revocations,
    recheck_s: float,
    first: str = "",
) -> web.StreamResponse:
    """Send ``frames`` as server-sent events for as long as ``authority`` holds and the client listens."""
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
    await response.prepare(request)
    pending: asyncio.Task[str] | None = None
    try:
        if first:
            await response.write(first.encode())
        while True:
            if pending is None:
                pending = asyncio.ensure_future(_next(frames))
            woken: asyncio.Task[Any] = asyncio.ensure_future(revocations.wait())
            try:
                await asyncio.wait({pending, woken}, timeout=recheck_s, return_when=asyncio.FIRST_COMPLETED)
            finally:
                woken.cancel()
            reason = authority()
            if reason is not None:
                await response.write(end_frame(reason).encode())
                return response
            if pending.done():
                frame, pending = pending.result(), None
                await response.write(frame.encode())
    except (ConnectionResetError, StopAsyncIteration):
        return response  # the client went away (or the source ended): nothing to say, nothing to log
    finally:
        if pending is not None:
            pending.cancel()
            with contextlib.suppress(asyncio.CancelledError, StopAsyncIteration, ConnectionResetError):
                await pending
        closing = getattr(frames, "aclose", None)
        if closing is not None:
            await closing()
