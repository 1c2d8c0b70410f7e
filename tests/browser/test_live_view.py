"""The large live camera view (issue 13) in a real browser: Debian's Chromium plays the player, its fake camera
sending a composed 640x480 clip at 15 fps from the player's page; the chief arbiter Li, on the desk in another
browser context, opens "watch live" from the board menu.  The video element plays (its currentTime advances, at
least 10 frames a second, 640 wide), beside the board and both clocks, with the player's name; the player's page was
asked for the higher rate and shows that it is watched; closing the view gives it back its analysis rate.  A second
view from the case card; then the player's page goes away and the view says "lost since HH:MM:SS" in the event's zone
instead of showing a frozen frame.  Screenshots at 1366x768 and 1920x1080 go to tests/browser/artifacts/.

Chromium gathers no ICE candidates on loopback unless told to (``--allow-loopback-in-peer-connection``); with it,
the player's and the arbiter's connections to the service stay on 127.0.0.1.
"""

from __future__ import annotations

import re
import time
from collections.abc import AsyncIterator
from pathlib import Path

import cv2
import numpy as np
import pytest
from playwright.async_api import Browser, Page, Playwright, async_playwright
from sqlalchemy import select
from sqlmodel import col

from proctor.database import create_database_engine
from proctor.models import AuditEntry
from tests.browser.chromium import launch
from tests.browser.screenshots import views
from tests.browser.test_cases_queue import game
from tests.browser.test_dashboard import (
    LI_TOKEN,
    Served,
    log_in,
    serve_example_event,
)
from tests.video.frames import scene

pytestmark = pytest.mark.asyncio

PLAYER, OPPONENT = "youth-m-p1", "youth-m-p3"
FPS = 15
LI = {"Authorization": f"Bearer {LI_TOKEN}"}
TILE = "#live-large .live-tile"


def write_clip(path: Path, seconds: float = 4.0) -> None:
    """A player who sways in front of the room, 640x480 at 15 fps, as I420 frames for Chromium's fake camera."""
    rng = np.random.default_rng(7)
    with path.open("wb") as out:
        out.write(f"YUV4MPEG2 W640 H480 F{FPS}:1 Ip A1:1 C420jpeg\n".encode())
        for index in range(int(seconds * FPS)):
            frame = scene(1, rng, round(20 * np.sin(index / 6)), 1.0)
            out.write(b"FRAME\n" + cv2.cvtColor(frame, cv2.COLOR_BGR2YUV_I420).tobytes())


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[Served]:
    """The real app on a free port, the example event (its zone Asia/Shanghai), and Li (chief)."""
    async with serve_example_event(tmp_path, deadline_grace_ms=600_000) as served:
        yield served


PLAYING = """(tile) => new Promise((done) => {
  const video = document.querySelector(tile + ' video');
  const t0 = video.currentTime, q0 = video.getVideoPlaybackQuality().totalVideoFrames, w0 = performance.now();
  setTimeout(() => done({
    advanced: video.currentTime - t0, width: video.videoWidth, height: video.videoHeight,
    fps: (video.getVideoPlaybackQuality().totalVideoFrames - q0) / ((performance.now() - w0) / 1000),
    hidden: getComputedStyle(video).visibility === 'hidden',
  }), 3000);
})"""


async def player_page(browser: Browser, link: str) -> Page:
    """The player's page on a phone-sized screen, its camera started and connected, sending at the analysis' rate."""
    player = await (await browser.new_context(viewport={"width": 390, "height": 844})).new_page()
    await player.goto(link)
    await player.check("#agree")
    await player.click("#start")
    await player.wait_for_function("() => document.getElementById('status').dataset.state === 'connected'",
                                   timeout=15_000)  # fmt: skip
    await player.wait_for_function("() => document.body.dataset.sendRate === '5'", timeout=5_000)
    return player


async def watch_from_menu(desk: Page, game_id: int, size: str) -> None:
    await desk.click(f"[data-menu='{game_id}']")
    await desk.click(f"#ctl-menu button[data-live='{size}'][data-player='{PLAYER}']")


async def the_large_view_plays(desk: Page, served: Served) -> None:
    """Playing: currentTime advancing, at least 10 frames a second, 640x480, the player's name (not the id), beside
    the board and both clocks, times in the event's zone."""
    await desk.wait_for_selector(f"{TILE}[data-state='playing']", timeout=15_000)
    played = await desk.evaluate(PLAYING, TILE)
    assert played["advanced"] > 2.0 and not played["hidden"], played
    assert (played["width"], played["height"]) == (640, 480), played
    assert played["fps"] >= 10, played
    assert await desk.text_content(f"{TILE} .live-head .name") == "Male Youth Player 1"
    assert await desk.locator("#live-clocks .clock").count() == 2
    assert "Asia/Shanghai" in (await desk.text_content("#live-zone") or "")
    assert await desk.is_visible("#live-board")
    assert served.context.camera.live_views.in_use == 2


async def the_view_says_lost(desk: Page, player: Page) -> None:
    """The player's page goes away: the view hides its last frame and says since when it is lost."""
    await desk.click("#lang")  # English
    await player.close()
    await desk.wait_for_selector(f"{TILE}[data-state='lost']", timeout=15_000)
    lost = await desk.text_content(f"{TILE} .live-lost") or ""
    assert re.fullmatch(r"lost since \d\d:\d\d:\d\d", lost), lost
    shown = await desk.evaluate(f"() => getComputedStyle(document.querySelector('{TILE} video')).visibility")
    assert shown == "hidden"  # no stale frame


async def player_in_play(served: Served, tmp_path: Path) -> tuple[int, str, Path]:
    """The player's game started 20 s ago, their stream link, and the clip their fake camera plays."""
    start = int(time.time() * 1000) - 20_000
    game_id = await game(served.platform, "youth-m-r1-b1", PLAYER, OPPONENT, start, (PLAYER, OPPONENT))
    async with served.http.post(f"{served.base}/api/v1/players/{PLAYER}/stream-token", headers=LI) as response:
        link = served.base + (await response.json())["url"]
    clip = tmp_path / "camera.y4m"
    write_clip(clip)
    return game_id, link, clip


async def camera_browser(playwright: Playwright, clip: Path) -> Browser:
    """Chromium whose fake camera plays ``clip``, its peer connections allowed on loopback (the service's address)."""
    return await launch(playwright, "--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream",
                        f"--use-file-for-fake-video-capture={clip}", "--allow-loopback-in-peer-connection")  # fmt: skip


async def test_the_large_live_camera_view_plays_beside_the_board(served: Served, tmp_path: Path) -> None:
    game_id, link, clip = await player_in_play(served, tmp_path)
    async with async_playwright() as playwright:
        browser = await camera_browser(playwright, clip)
        try:
            player = await player_page(browser, link)
            desk = await (await browser.new_context(viewport={"width": 1366, "height": 768})).new_page()
            await desk.goto(served.base + "/arbiter")
            await log_in(desk, "Li")
            await watch_from_menu(desk, game_id, "large")
            await the_large_view_plays(desk, served)
            # The player's page was asked for the live view's rate, and says it is watched.
            await player.wait_for_function("() => document.body.dataset.sendRate === '15'", timeout=5_000)
            assert "实时观看" in (await player.text_content("#watched-state") or "")
            await views(desk, "live-view")

            await desk.click(f"{TILE} button[data-role='close']")
            await player.wait_for_function("() => document.body.dataset.sendRate === '5'", timeout=10_000)
            assert await player.is_hidden("#watched-state")
            assert served.context.camera.live_views.in_use == 0

            # A wall view (small) from the board menu, the large one again from the player's case.
            await watch_from_menu(desk, game_id, "small")
            incident = {"game": game_id, "kind": "noise", "summary": "someone talks", "player": PLAYER}
            async with served.http.post(f"{served.base}/api/v1/incidents", json=incident, headers=LI) as response:
                assert response.status == 201, await response.text()
            case = f"#cases li.case[data-kind='noise'] button[data-live='large'][data-player='{PLAYER}']"
            await desk.click(case, timeout=10_000)
            await desk.wait_for_selector(f"{TILE}[data-state='playing']", timeout=15_000)
            await desk.wait_for_selector("#live-wall .live-tile[data-state='playing']", timeout=15_000)
            assert served.context.camera.live_views.in_use == 3
            await the_view_says_lost(desk, player)
            await views(desk, "live-view-lost")
        finally:
            await browser.close()
    engine = create_database_engine(served.context.settings)
    with engine.connect() as connection:
        opened = connection.execute(
            select(col(AuditEntry.actor), col(AuditEntry.subject)).where(col(AuditEntry.action) == "camera.view")
        ).all()
    engine.dispose()
    assert [tuple(row) for row in opened] == [("Li (chief)", f"player:{PLAYER}")] * 3
