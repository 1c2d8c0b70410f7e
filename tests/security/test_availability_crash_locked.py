"""Issue 12, item 10 (must show): a real server is killed with SIGKILL while another process holds SQLite's write
lock in the middle of a burst; after a restart every delivery that got a 2xx is stored exactly once, and the ones
refused while the lock was held (503, Retry-After) are taken when the platform sends them again."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import subprocess
import sys
import time

import aiohttp
import pytest
from sqlalchemy import func, select
from sqlmodel import col

from proctor.database import create_database_engine
from proctor.models import FeedDelivery
from proctor.settings import Settings
from proctor.signatures import signed_headers
from tests.proctor import conftest as proctor_fixtures
from tests.proctor.conftest import register_platform
from tests.proctor.test_crash import deliveries, free_port, post_all, start_server
from tests.security.test_availability_busy import HOLD

database_url = proctor_fixtures.database_url
pytestmark = pytest.mark.slow


async def post_while_locked(
    port: int, secret: str, items: list[tuple[str, bytes]], refused: asyncio.Event
) -> tuple[set[str], list[int]]:
    """Post the items at once; the acknowledged webhook-ids and every status seen (0: no answer). `refused` is set at
    the first 503."""
    acknowledged: set[str] = set()
    statuses: list[int] = []

    async def one(session: aiohttp.ClientSession, webhook_id: str, body: bytes) -> None:
        headers = signed_headers(secret, webhook_id, int(time.time()), body)
        try:
            async with session.post(
                f"http://127.0.0.1:{port}/api/v1/webhooks/tourney", data=body, headers=headers
            ) as response:
                await response.read()
                statuses.append(response.status)
                if response.status == 503:
                    refused.set()
                if 200 <= response.status < 300:
                    acknowledged.add(webhook_id)
        except aiohttp.ClientError:
            statuses.append(0)

    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=20)) as session:
        await asyncio.gather(*(one(session, webhook_id, body) for webhook_id, body in items))
    return acknowledged, statuses


def test_sigkill_while_another_process_holds_the_write_lock_loses_nothing_acknowledged(database_url: str) -> None:
    if not database_url.startswith("sqlite"):
        pytest.skip("SQLite's write lock")
    secret = register_platform(database_url)
    items = deliveries(int(time.time() * 1000))
    third = len(items) // 3
    port = free_port()
    server = start_server(database_url, port)
    holder: subprocess.Popen[str] | None = None
    try:
        first = asyncio.run(post_all(port, secret, items[:third], kill_after=None, process=None))
        assert len(first) == third
        holder = subprocess.Popen(
            [sys.executable, "-c", HOLD, database_url.removeprefix("sqlite:///")], stdout=subprocess.PIPE, text=True
        )
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"

        async def burst_then_kill() -> tuple[set[str], list[int]]:
            refused = asyncio.Event()
            posting = asyncio.create_task(post_while_locked(port, secret, items[third : 2 * third], refused))
            # Past the busy timeout (3 s) the first are refused 503 and the rest wait; the kill comes at the first
            # refusal (a loaded machine answers later than the timeout), or after 15 s when none came.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(refused.wait(), timeout=15)
            server.send_signal(signal.SIGKILL)
            return await posting

        during, statuses = asyncio.run(burst_then_kill())
        server.wait(timeout=10)
        assert server.returncode == -signal.SIGKILL
        assert during == set() and 503 in statuses and 500 not in statuses  # nothing acknowledged while locked
        holder.kill()
        holder.wait(timeout=10)
        server = start_server(database_url, port)
        acknowledged = first | during
        rest = asyncio.run(post_all(port, secret, [i for i in items if i[0] not in acknowledged], None, None))
        assert acknowledged | rest == {webhook_id for webhook_id, _ in items}
    finally:
        if holder is not None and holder.poll() is None:
            holder.kill()
        if server.poll() is None:
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=20)
    engine = create_database_engine(Settings(database_url=database_url))
    with engine.connect() as connection:
        stored = connection.execute(select(col(FeedDelivery.webhook_id))).scalars().all()
        assert sorted(stored) == sorted(webhook_id for webhook_id, _ in items)
        assert connection.execute(select(func.count()).select_from(FeedDelivery)).scalar_one() == len(items)
        assert first <= set(stored)
    engine.dispose()
