"""The live camera view in the distributed mode (issue 16) in a real browser: Debian's Janus and redis-server, the
service with ``JANUS_URL``; Chromium plays the player, whose page publishes its camera to Janus (two simulcast
layers), and the chief arbiter Li opens "watch live" on the desk.  The desk subscribes to the player's feed on Janus
itself: the view plays the full 640x480 picture at 10 frames a second or more, the service relays nothing (no view
counts against LIVE_VIEWS_MAX), the player's page is asked for the live rate while watched, and the view's opening
and end are audited as a relayed view's.  An analysis worker (no models: the cheap checks) takes the stream, and the
desk shows the camera as the worker reports it.  The arbiter then speaks to the player through Janus too."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from playwright.async_api import Browser, Page, async_playwright
from sqlalchemy import select
from sqlmodel import col

from proctor.database import create_database_engine
from proctor.models import AuditEntry
from proctor.settings import Settings
from proctor.worker import Worker
from tests.browser.chromium import launch
from tests.browser.test_dashboard import LI_TOKEN, Served, add_arbiter, load_example_event, log_in, serve
from tests.browser.test_live_view import (
    LI,
    PLAYER,
    PLAYING,
    TILE,
    camera_browser,
    player_in_play,
    player_page,
    watch_from_menu,
)
from tests.browser.test_talk import hold_down, loudness, write_tone
from tests.proctor.conftest import register_platform
from tests.proctor.redis_server import RedisServer, redis_server  # noqa: F401 - the fixture
from tests.proctor.test_live_views import audit
from tests.video.janus_server import JanusServer

pytestmark = pytest.mark.asyncio


@pytest.fixture
async def served(tmp_path: Path, janus_server: JanusServer, redis_server: RedisServer) -> AsyncIterator[Served]:  # noqa: F811
    url = f"sqlite:///{tmp_path / 'proctor.db'}"
    secret = register_platform(url, "web")
    settings = Settings(database_url=url, media_dir=str(tmp_path / "media"), models_dir=str(tmp_path / "models"),
                        deadline_grace_ms=600_000, bus_url=redis_server.url, janus_url=janus_server.url,
                        janus_admin_url=janus_server.admin_url, janus_admin_secret=janus_server.admin_secret,
                        worker_secret="live-view-sfu-secret")  # fmt: skip
    load_example_event(settings)
    add_arbiter(settings, "Li", "chief", LI_TOKEN)
    async with serve(settings, secret) as served:
        # One analysis worker: the desk shows the camera as its worker reports it (and offers "watch live" then).
        worker_settings = Settings(bus_url=redis_server.url, janus_url=janus_server.url, writer_urls=served.base,
                                   worker_secret=settings.worker_secret,
                                   models_dir=str(tmp_path / "models"))  # fmt: skip
        worker = Worker(worker_settings, "w1")
        stop = asyncio.Event()
        working = asyncio.create_task(worker.run(stop))
        try:
            yield served
        finally:
            stop.set()
            await asyncio.wait_for(working, 20)


async def reported_live(served: Served) -> None:
    """The service's word on the player's camera: live, as the worker that took it reports it (within 10 s)."""
    for _ in range(50):
        async with served.http.get(f"{served.base}/api/v1/players/{PLAYER}/camera", headers=LI) as response:
            status = await response.json()
        if status["connected"] and status["frames"]["received"] > 0:
            return
        await asyncio.sleep(0.2)
    raise AssertionError(f"the camera never showed as connected: {status}")


async def watching(served: Served, browser: Browser, game_id: int) -> Page:
    """The chief's desk, once the worker reports the player's camera live, watching it in the large view (playing)."""
    await reported_live(served)
    desk = await (await browser.new_context(viewport={"width": 1366, "height": 768})).new_page()
    await desk.goto(served.base + "/arbiter")
    await log_in(desk, "Li")
    await watch_from_menu(desk, game_id, "large")
    await desk.wait_for_selector(f"{TILE}[data-state='playing']", timeout=20_000)
    return desk


async def test_an_arbiter_watches_a_player_through_janus_at_full_size(served: Served, tmp_path: Path) -> None:
    game_id, link, clip = await player_in_play(served, tmp_path)
    views = served.context.camera.live_views
    assert views is not None
    async with async_playwright() as playwright:
        browser = await camera_browser(playwright, clip)
        try:
            player = await player_page(browser, link)
            assert served.context.camera.ingest is not None and not served.context.camera.ingest.sessions
            desk = await watching(served, browser, game_id)
            # Watched, the page sends at the live rate (a busy machine takes a moment to say so): measured then.
            await player.wait_for_function("() => document.body.dataset.sendRate === '15'", timeout=5_000)
            await asyncio.sleep(1.0)  # the camera's new rate reaches the encoder and Janus
            played = await desk.evaluate(PLAYING, TILE)
            assert played["advanced"] > 2.0 and not played["hidden"], played
            assert (played["width"], played["height"]) == (640, 480), played  # the full layer, not the analysis'
            assert played["fps"] >= 10, played
            for language in ("zh", "en"):  # the player's name, not the id, and the event's zone, in both languages
                assert (await desk.get_attribute("html", "lang") or "").startswith(language)
                assert await desk.text_content(f"{TILE} .live-head .name") == "Male Youth Player 1"
                assert "Asia/Shanghai" in (await desk.text_content("#live-zone") or "")
                head = await desk.text_content(f"{TILE} .live-head") or ""
                assert (re.search(r"[\u4e00-\u9fff]", head) is not None) == (language == "zh"), head
                await desk.click("#lang")
            assert views.in_use == 0 and [v.through_sfu for v in views.views.values()] == [True]
            await desk.click(f"{TILE} button[data-role='close']")
            await player.wait_for_function("() => document.body.dataset.sendRate === '5'", timeout=10_000)
            assert not views.views
        finally:
            await browser.close()
    engine = create_database_engine(served.context.settings)
    with engine.connect() as connection:
        audited = connection.execute(
            select(col(AuditEntry.action), col(AuditEntry.subject), col(AuditEntry.detail))
            .where(col(AuditEntry.action).in_(("camera.view", "camera.view-end")))
            .order_by(col(AuditEntry.id))
        ).all()
    engine.dispose()
    assert [(action, subject) for action, subject, _ in audited] == [
        ("camera.view", f"player:{PLAYER}"), ("camera.view-end", f"player:{PLAYER}")]  # fmt: skip
    assert audited[0][2]["through"] == "janus"


async def test_an_arbiter_speaks_to_a_player_through_janus(served: Served, tmp_path: Path) -> None:
    """The desk's push-to-talk in the distributed mode: the desk publishes its microphone (Chromium's fake one, a
    440 Hz tone) in the player's room on Janus, the service tells the player's page its feed, and the page subscribes
    to it and plays it; released, the page falls quiet; the view closed, the talk ends (audited)."""
    game_id, link, clip = await player_in_play(served, tmp_path)
    tone = tmp_path / "tone.wav"
    write_tone(tone)
    async with async_playwright() as playwright:
        browser = await launch(playwright, "--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream",
                               f"--use-file-for-fake-video-capture={clip}", f"--use-file-for-fake-audio-capture={tone}",
                               "--allow-loopback-in-peer-connection",
                               "--autoplay-policy=no-user-gesture-required")  # fmt: skip
        try:
            player = await player_page(browser, link)
            desk = await watching(served, browser, game_id)
            talk = f"{TILE} .live-head button[data-role='talk']"
            quiet = await loudness(player, 0.5)
            await hold_down(desk, talk, player)
            held = await loudness(player, 3.0)
            await desk.mouse.up()
            await asyncio.sleep(1.0)  # what was in flight plays out
            released = await loudness(player, 1.5)
            await desk.click(f"{TILE} button[data-role='close']")
            await player.wait_for_selector("#talk-state", state="hidden", timeout=10_000)
        finally:
            await browser.close()
    loud = [m for m in held if m["rms"] > 0.02]
    assert len(loud) >= len(held) // 2, held
    assert all(abs(m["hz"] - 440) < 15 for m in loud), held
    assert max((m["rms"] for m in quiet), default=0.0) < 0.005, quiet
    assert max(m["rms"] for m in released[-3:]) < 0.005, released
    opened, ended = audit(served.context.settings, "camera.talk"), audit(served.context.settings, "camera.talk-end")
    assert [(row.actor, row.subject) for row in opened] == [("Li (chief)", f"player:{PLAYER}")]
    assert len(ended) == 1 and ended[0].detail["reason"] == "closed by the arbiter"
