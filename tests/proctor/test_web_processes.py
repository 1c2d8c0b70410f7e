"""Web processes in front of an active writer and its standby (issue 16), every one a process of its own on this
machine: PostgreSQL, Debian's redis-server, two service processes sharing the writer's lease, two web processes
forwarding to them.  A platform posts a burst of signed deliveries through one web process while an arbiter's live
stream stays open on the other; the active writer is killed with SIGKILL mid-burst.  The web processes go on
forwarding to the standby once it holds the lease (within 10 s), the platform's retries land through them, every
delivery is stored exactly once, and the desk's stream, never reopened, carries the changes committed by both
writers."""

from __future__ import annotations

import asyncio
import contextlib
import re
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import pytest

from tests.proctor.conftest import register_platform
from tests.proctor.redis_server import RedisServer
from tests.proctor.test_crash import deliveries, free_port, post_all
from tests.proctor.test_forwarding import add_arbiter
from tests.proctor.test_writer_lease import assert_stored_once, leased, listening, stop_all, wait_listening

pytestmark = pytest.mark.slow


async def listen(port: int, token: str, heard: list[tuple[float, str]], ready: asyncio.Event) -> None:
    """The desk's live stream on a web process: each ``data:`` line with when it came, until cancelled."""
    async with (
        aiohttp.ClientSession() as session,
        session.get(f"http://127.0.0.1:{port}/api/v1/stream", headers={"Authorization": f"Bearer {token}"}) as stream,
    ):
        assert stream.status == 200
        async for raw in stream.content:
            line = raw.decode().strip()
            if line.startswith(": connected"):
                ready.set()
            elif line.startswith("data: "):
                heard.append((time.monotonic(), line))


@dataclass
class Outcome:
    acknowledged: set[str]
    """Deliveries acknowledged before the kill..."""
    retried: set[str]
    """...and on the platform's retries after it."""
    took: float
    """From the kill until a request through a web process was answered by the standby."""
    back: float
    """When that was (monotonic)."""
    heard: list[tuple[float, str]]
    """What the desk's stream carried, with when."""


async def burst_kill_retry(
    web_ports: tuple[int, int], secret: str, items: list[tuple[str, bytes]], active: subprocess.Popen[bytes]
) -> Outcome:
    """The burst through the first web process with the desk listening on the second; SIGKILL of the active writer
    halfway; a read through the web process, held there until the standby accepts it; the rest of the burst retried
    through both web processes."""
    heard: list[tuple[float, str]] = []
    ready = asyncio.Event()
    desk = asyncio.ensure_future(listen(web_ports[1], "li", heard, ready))
    await asyncio.wait_for(ready.wait(), 10)
    acknowledged = await post_all(web_ports[0], secret, items, kill_after=len(items) // 2, process=active)
    killed = time.monotonic()
    async with aiohttp.ClientSession() as session:
        while True:  # a 503 only if no process accepted it within WRITER_WAIT_S (15 s)
            async with session.get(f"http://127.0.0.1:{web_ports[0]}/api/openapi.json") as response:
                if response.status == 200:
                    break
                assert response.status == 503 and time.monotonic() - killed < 30, response.status
    back = time.monotonic()
    pending = [item for item in items if item[0] not in acknowledged]
    half = len(pending) // 2
    retried = await post_all(web_ports[0], secret, pending[:half], kill_after=None, process=None)
    retried |= await post_all(web_ports[1], secret, pending[half:], kill_after=None, process=None)
    await asyncio.sleep(1.0)  # the last commits' notices reach the desk through Redis
    desk.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await desk
    return Outcome(acknowledged, retried, back - killed, back, heard)


def test_web_processes_forward_to_the_standby_when_the_writer_is_killed_and_the_desk_stream_goes_on(
    database_url: str, redis_server: RedisServer, tmp_path: Path
) -> None:
    if not database_url.startswith("postgresql"):
        pytest.skip("the writer's lease is PostgreSQL's (a SQLite file is one process's)")
    secret = register_platform(database_url)
    add_arbiter(database_url, "li")
    items = deliveries(int(time.time() * 1000))
    active_port, standby_port, web_ports = free_port(), free_port(), (free_port(), free_port())
    urls = f"http://127.0.0.1:{active_port},http://127.0.0.1:{standby_port}"
    active = leased(database_url, active_port, tmp_path / "active.log", bus_url=redis_server.url)
    processes = [active]
    try:
        wait_listening(active_port, active, 30)
        standby = leased(database_url, standby_port, tmp_path / "standby.log", bus_url=redis_server.url)
        processes.append(standby)
        webs = [leased(database_url, port, tmp_path / f"web-{port}.log", bus_url=redis_server.url, writer_urls=urls,
                       writer_lease="0") for port in web_ports]  # fmt: skip
        processes += webs
        for port, process in zip(web_ports, webs, strict=True):
            wait_listening(port, process, 30)
        assert standby.poll() is None and not listening(standby_port)  # waiting, its port closed
        outcome = asyncio.run(burst_kill_retry(web_ports, secret, items, active))
        active.wait(timeout=10)
        assert active.returncode == -signal.SIGKILL and 0 < len(outcome.acknowledged) < len(items)
        assert outcome.took < 10, outcome.took
        assert outcome.acknowledged | outcome.retried == {webhook_id for webhook_id, _ in items}
        assert listening(standby_port) and all(process.poll() is None for process in webs)
        # The desk's one stream carried every game, from before the kill and from after the standby took over.
        games = {found for _, line in outcome.heard for found in re.findall(r'"external_id":"(crash-\d+)"', line)}
        assert games == {webhook_id.rsplit("-", 1)[0] for webhook_id, _ in items}, games
        assert any(at < outcome.back for at, _ in outcome.heard) and any(at > outcome.back for at, _ in outcome.heard)
    finally:
        stop_all(processes)
    assert_stored_once(database_url, items)
    assert "after" in (tmp_path / "standby.log").read_text()  # "writer's lease taken after N s as the standby"
    logs = "".join((tmp_path / f"web-{port}.log").read_text() for port in web_ports)
    assert f"forwarding to http://127.0.0.1:{standby_port}" in logs
