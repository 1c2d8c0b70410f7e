"""Reads that handlers run off the event loop (replays, reports and exports read many rows)."""

from __future__ import annotations

import asyncio
from typing import Any

from proctor.context import WebContext


async def read(context: WebContext, job: Any) -> Any:
    """Run ``job(connection)`` off the event loop (replays, reports and exports read many rows)."""

    def run() -> Any:
        with context.engine.connect() as connection:
            return job(connection)

    return await asyncio.to_thread(run)
