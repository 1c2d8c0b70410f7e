"""The distributed mode as a whole (issue 16), every part a process of its own on this machine: PostgreSQL, Debian's
redis-server, Janus and coturn, the service's active writer and its standby (the writer's lease), two web processes in
front of them and three analysis workers.  Four players publish their cameras through the web processes (three
aiortc senders, as the page does, one of them on a network that lets nothing through but TURN, reaching Janus through
coturn; and Chromium on the player's page, its fake camera sent as two simulcast layers) and a platform posts a
burst of moves.  Then:

- the worker holding a camera is killed with SIGKILL: another takes the stream, the gap is recorded;
- the active writer is killed with SIGKILL in the middle of the burst: the standby takes over within 10 s, the
  platform's retries land through the web processes, every delivery is stored exactly once, and a camera covered
  afterwards is raised through the standby (the workers send to whichever writer answers);
- Redis is restarted empty: every stream is held again by the worker that had it, and a camera covered afterwards is
  still raised.

Chromium's page keeps publishing through all of it (its media go to Janus, not to the writer) and its camera stays
analysed.  The desk's live stream across a writer's death is tests/proctor/test_web_processes.py."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import subprocess
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from playwright.async_api import Page, async_playwright

from tests.browser.chromium import launch, require
from tests.browser.test_player_devices import CONNECTED, write_clip
from tests.proctor.conftest import register_platform
from tests.proctor.redis_server import RedisServer
from tests.proctor.test_crash import deliveries, free_port, post_all
from tests.proctor.test_turn import SECRET as TURN_SECRET
from tests.proctor.test_turn import coturn
from tests.proctor.test_workers import (
    CAM,
    SECRET,
    add_arbiter,
    holders,
    incidents,
    live_workers,
    published,
    seat_and_link,
    wait_for,
    worker,
)
from tests.proctor.test_writer_lease import assert_stored_once, leased, stop_all, wait_listening
from tests.video.janus_server import JanusServer

pytestmark = pytest.mark.slow

PLAYERS = ("dm-1", "dm-2", "dm-3")
TURN_ONLY = "dm-3"
BROWSER = "dm-4"
"""The player on Chromium's page."""
WORKERS = ("w1", "w2", "w3")


@dataclass
class Seen:
    moved_in: float
    took_over_in: float
    acknowledged: set[str]
    retried: set[str]
    browser_analysed: tuple[int, int]
    """Chromium's camera at the end: its frames analysed, and 3 s later."""
    browser_state: str
    """The page's connection state at the end (never reloaded)."""


@contextlib.asynccontextmanager
async def chromium_player(link: str, clip: Path) -> AsyncIterator[Page]:
    """The player's page on Chromium (its fake camera playing ``clip``), started and connected."""
    async with async_playwright() as playwright:
        browser = await launch(playwright, "--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream",
                               f"--use-file-for-fake-video-capture={clip}",
                               "--allow-loopback-in-peer-connection")  # fmt: skip
        try:
            page = await (await browser.new_context(viewport={"width": 390, "height": 844})).new_page()
            await page.goto(link)
            await page.check("#agree")
            await page.click("#start")
            await page.wait_for_function(CONNECTED, timeout=20_000)
            yield page
        finally:
            await browser.close()


async def analysed(http: aiohttp.ClientSession, base: str, ref: str) -> int:
    """The frames of the player's camera analysed, as the desk reads it (from its worker's report)."""
    async with http.get(f"{base}/api/v1/players/{ref}/camera", headers=CAM) as response:
        status = await response.json()
    return int(status["frames"]["analysed"]) if status.get("connected") else 0


async def through_the_kill(
    web: int, secret: str, items: list[tuple[str, bytes]], active: Any
) -> tuple[set[str], set[str], float]:
    """The burst through a web process, the active writer killed halfway, the rest retried once a request through
    the web process is answered again (by the standby)."""
    acknowledged = await post_all(web, secret, items, kill_after=len(items) // 2, process=active)
    killed = time.monotonic()
    async with aiohttp.ClientSession() as http:
        while True:  # held by the web process until the standby opens (a 503 after WRITER_WAIT_S)
            async with http.get(f"http://127.0.0.1:{web}/api/openapi.json") as response:
                if response.status == 200:
                    break
    took = time.monotonic() - killed
    pending = [item for item in items if item[0] not in acknowledged]
    retried = await post_all(web, secret, pending, kill_after=None, process=None)
    return acknowledged, retried, took


async def scenario(database_url: str, webs: tuple[int, int], redis_server: RedisServer, secret: str,
                   workers: dict[str, Any], active: Any, items: list[tuple[str, bytes]],
                   clip: Path) -> Seen:  # fmt: skip
    bus_url = redis_server.url
    base = f"http://127.0.0.1:{webs[0]}"
    await wait_for(lambda: live_workers(bus_url) == len(WORKERS), 60, "every worker in the registry")
    async with aiohttp.ClientSession() as http, contextlib.AsyncExitStack() as stack:
        players = {}
        for ref in PLAYERS:
            token = await seat_and_link(http, base, secret, ref)
            players[ref] = await stack.enter_async_context(
                published(http, f"http://127.0.0.1:{webs[1]}", ref, token, relay_only=ref == TURN_ONLY)
            )
        token = await seat_and_link(http, base, secret, BROWSER)
        page = await stack.enter_async_context(chromium_player(f"http://127.0.0.1:{webs[1]}/play/{token}", clip))
        everyone = (*PLAYERS, BROWSER)
        await wait_for(lambda: all(holders(bus_url, everyone).values()), 30, "every stream held by a worker")
        at_first = 0
        for _ in range(100):  # its worker's reports reach the desk within a second or two
            if (at_first := await analysed(http, base, BROWSER)) > 0:
                break
            await asyncio.sleep(0.2)
        assert at_first > 0, "Chromium's camera never showed as analysed"

        # The player behind TURN: its camera reached a worker through coturn and Janus.
        players[TURN_ONLY].track.covered = True
        await wait_for(lambda: incidents(database_url, TURN_ONLY, "camera-covered"), 30, "the TURN player covered")
        players[TURN_ONLY].track.covered = False

        # A worker killed: its stream taken over, the gap recorded.
        victim = holders(bus_url, PLAYERS)["dm-1"]
        assert victim is not None
        workers[victim].send_signal(signal.SIGKILL)
        killed = time.monotonic()
        await wait_for(lambda: holders(bus_url, PLAYERS)["dm-1"] not in (None, victim), 20, "dm-1 taken over")
        moved_in = time.monotonic() - killed
        await wait_for(lambda: incidents(database_url, "dm-1", "analysis-gap"), 20, "dm-1's gap recorded")

        # The active writer killed mid-burst: the standby takes over, the retries land.
        acknowledged, retried, took_over_in = await through_the_kill(webs[0], secret, items, active)
        players["dm-2"].track.covered = True  # raised through the standby
        await wait_for(lambda: incidents(database_url, "dm-2", "camera-covered"), 40, "dm-2 covered, after the kill")
        players["dm-2"].track.covered = False

        # Redis restarted empty: the same workers hold the same streams, and the checks go on.
        before = holders(bus_url, PLAYERS)
        redis_server.stop()
        await asyncio.sleep(2.0)
        redis_server.start()
        await wait_for(lambda: holders(bus_url, PLAYERS) == before, 20, "every stream held again by its worker")
        players["dm-1"].track.covered = True
        await wait_for(lambda: incidents(database_url, "dm-1", "camera-covered"), 30, "dm-1 covered, after Redis")
        # Chromium's camera analysed still, 2 frames a second (its counts start again at a worker that took it over).
        state = await page.evaluate("() => document.getElementById('status').dataset.state")
        before_end = await analysed(http, base, BROWSER)
        await asyncio.sleep(3.0)
        return Seen(moved_in, took_over_in, acknowledged, retried, (before_end, await analysed(http, base, BROWSER)),
                    str(state))  # fmt: skip


def test_the_distributed_mode_survives_a_worker_the_writer_and_redis_going_away(
    database_url: str, redis_server: RedisServer, janus_server: JanusServer, tmp_path: Path
) -> None:
    if not database_url.startswith("postgresql"):
        pytest.skip("the writer's lease is PostgreSQL's (a SQLite file is one process's)")
    require()
    secret = register_platform(database_url)
    add_arbiter(database_url)
    items = deliveries(int(time.time() * 1000))
    # coturn relays from the machine's own address, where Janus's candidates are (Janus leaves loopback out).
    with coturn(tmp_path, host_address()) as turn_port:
        run(database_url, redis_server, janus_server, tmp_path, secret, items, turn_port)


def host_address() -> str:
    """This machine's address on its default route (no packet is sent)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect(("192.0.2.1", 9))
        return str(probe.getsockname()[0])


def run(database_url: str, redis_server: RedisServer, janus_server: JanusServer, tmp_path: Path, secret: str,
        items: list[tuple[str, bytes]], turn_port: int) -> None:  # fmt: skip
    writers, webs = (free_port(), free_port()), (free_port(), free_port())
    media = {"bus_url": redis_server.url, "janus_url": janus_server.url, "janus_admin_url": janus_server.admin_url,
             "janus_admin_secret": janus_server.admin_secret, "worker_secret": SECRET,
             "ice_servers": f"turn:127.0.0.1:{turn_port}?transport=tcp", "turn_secret": TURN_SECRET}  # fmt: skip
    active = leased(database_url, writers[0], tmp_path / "active.log", **media)
    processes: list[subprocess.Popen[bytes]] = [active]
    try:
        wait_listening(writers[0], active, 30)
        standby = leased(database_url, writers[1], tmp_path / "standby.log", **media)
        processes.append(standby)
        urls = ",".join(f"http://127.0.0.1:{port}" for port in writers)
        for port in webs:
            processes.append(leased(database_url, port, tmp_path / f"web-{port}.log", bus_url=redis_server.url,
                                    writer_urls=urls, writer_lease="0"))  # fmt: skip
            wait_listening(port, processes[-1], 30)
        workers = {name: worker(name, writers, janus_server, redis_server.url, tmp_path) for name in WORKERS}
        processes += workers.values()
        clip = tmp_path / "camera.y4m"
        write_clip(clip, 4.0, side=False)
        seen = asyncio.run(scenario(database_url, webs, redis_server, secret, workers, active, items, clip))
    finally:
        stop_all(processes)
    print(f"distributed mode: a killed worker's stream taken over in {seen.moved_in:.1f} s; the standby answered "
          f"{seen.took_over_in:.1f} s after the writer's kill")  # fmt: skip
    assert seen.moved_in < 10, seen.moved_in
    assert 0 < len(seen.acknowledged) < len(items) and seen.took_over_in < 10, seen.took_over_in
    assert seen.acknowledged | seen.retried == {webhook_id for webhook_id, _ in items}
    assert_stored_once(database_url, [*items, *((f"seat-{ref}", b"") for ref in (*PLAYERS, BROWSER))])  # and seats
    assert seen.browser_state == "connected" and seen.browser_analysed[1] >= seen.browser_analysed[0] + 3, seen
    assert "after" in (tmp_path / "standby.log").read_text()  # the standby took the lease
    for ref, kind, count in ((TURN_ONLY, "camera-covered", 1), ("dm-2", "camera-covered", 1),
                             ("dm-1", "camera-covered", 1), ("dm-1", "analysis-gap", 1)):  # fmt: skip
        assert len(incidents(database_url, ref, kind)) == count, (ref, kind)
