"""A player's whole set in real browsers (issue 15): Debian's Chromium, one process per device page (Chromium takes
one fake camera file per process).  The player's page sends the front camera and shares the screen (Chromium's fake
display capture, a whole screen); a second browser is the phone opening the side camera's link; a third is another
player who picks a window instead of the whole screen.  The set connects, the side camera's view is approved and then
the phone is turned (a camera-moved case naming the side camera), the window is refused on the page and by the
service, and stopping the screen share is a case within 3 s (36.4.4).

Chromium gathers no ICE candidates on loopback unless told to (``--allow-loopback-in-peer-connection``): the pages'
connections to the service stay on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
from playwright.async_api import Browser, Page, async_playwright

from tests.browser.chromium import launch, require
from tests.browser.screenshots import views
from tests.browser.test_cases_queue import game
from tests.browser.test_dashboard import LI_TOKEN, Served, event_settings, log_in, serve
from tests.video.frames import composed, room_photo, scene
from video.devices import Device

pytestmark = pytest.mark.asyncio

ARTIFACTS = Path(__file__).parent / "artifacts"
LI = {"Authorization": f"Bearer {LI_TOKEN}"}
FPS = 5
MOVED_AT_S = 8.0
"""The phone is turned this long after the side camera starts (its approval is taken well before)."""
CYCLE = 12
"""Distinct pictures in a clip (repeated: 2.4 s at 5 frames a second)."""
PLAYER, OTHER = "set-1", "set-2"
EVENT = """
[event]
slug = "set-2026"
name = "Whole set"

[[sections]]
slug = "set"
name = "Front, side and screen"
time_control = "rapid-15"

[sections.policy]
devices = ["front", "side", "screen"]

[sections.policy.thresholds]
camera_moved_s = 2
view_interval_s = 1

[[sections.players]]
start_no = 1
name = "Set One"
platform_ref = "set-1"

[[sections.players]]
start_no = 2
name = "Set Two"
platform_ref = "set-2"
"""
CONNECTED = "() => document.getElementById('status').dataset.state === 'connected'"
STOP_SHARING = "() => document.getElementById('screen-preview').srcObject.getVideoTracks()[0].stop()"
PICKS_A_WINDOW = """
// The player picks a window in the browser's picker: the page's hint for the whole screen is not taken.
const pick = MediaDevices.prototype.getDisplayMedia;
MediaDevices.prototype.getDisplayMedia = function (options) {
  const video = Object.assign({}, options && options.video);
  delete video.displaySurface;
  return pick.call(this, Object.assign({}, options, { video }));
};
"""


def write_clip(path: Path, seconds: float, side: bool) -> None:
    """640x480 I420 frames for Chromium's fake camera: the player swaying (front), or the phone's view of the room
    and the player, turned 8 degrees and pushed aside from :data:`MOVED_AT_S` (side).  A cycle of :data:`CYCLE`
    pictures is composed once and repeated (composing each frame would take longer than the test)."""
    rng, room = np.random.default_rng(9), room_photo()
    pictures = []
    for index in range(CYCLE):
        sway = round(12 * np.sin(2 * np.pi * index / CYCLE))
        if side:
            pictures.append(composed(room, rng, sway, 1 + 0.05 * np.sin(2 * np.pi * index / CYCLE), False))
        else:
            pictures.append(scene(1, rng, sway, 1.0, room))
    turn = cv2.getRotationMatrix2D((320, 240), 8, 1.0)
    turn[0, 2] += 60
    turned = [cv2.warpAffine(p, turn, (640, 480), borderMode=cv2.BORDER_REFLECT).astype(np.uint8) for p in pictures]
    frames = [cv2.cvtColor(p, cv2.COLOR_BGR2YUV_I420).tobytes() for p in pictures]
    moved = [cv2.cvtColor(p, cv2.COLOR_BGR2YUV_I420).tobytes() for p in turned] if side else frames
    with path.open("wb") as out:
        out.write(f"YUV4MPEG2 W640 H480 F{FPS}:1 Ip A1:1 C420jpeg\n".encode())
        for index in range(int(seconds * FPS)):
            cycle = moved if index / FPS >= MOVED_AT_S else frames
            out.write(b"FRAME\n" + cycle[index % CYCLE])


@dataclass
class Seen:
    """What the scenario saw, for the tests to assert."""

    game: int = 0
    """The players' game (its id, once created)."""
    connected: dict[str, bool] = field(default_factory=dict)
    window: dict[str, Any] = field(default_factory=dict)
    moved: dict[str, Any] | None = None
    moved_after_s: float | None = None
    side_pill: str | None = None
    stopped: dict[str, Any] | None = None
    stopped_after_s: float | None = None
    screen_pill: str | None = None
    still_live: dict[str, bool] = field(default_factory=dict)
    desk_set: list[str] = field(default_factory=list)
    """The devices the desk's large live view showed playing (front, then the set beside the board)."""
    screen_reference: bool | None = None
    """Whether the screen's view is approved once the desk's button was clicked."""
    roster: dict[str, str] = field(default_factory=dict)
    """The player's row of the camera roster: each device's state."""
    incidents: list[tuple[str, str | None]] = field(default_factory=list)
    """Every incident raised, oldest first: its kind and the device it names."""


async def incident_of(served: Served, kind: str) -> dict[str, Any] | None:
    async with served.http.get(f"{served.base}/api/v1/incidents?kind={kind}", headers=LI) as response:
        found: list[dict[str, Any]] = await response.json()
    return found[0] if found else None


async def wait_incident(served: Served, kind: str, timeout: float) -> dict[str, Any] | None:
    ends = time.monotonic() + timeout
    while time.monotonic() < ends:
        if (found := await incident_of(served, kind)) is not None:
            return found
        await asyncio.sleep(0.1)
    return None


async def open_page(browser: Browser, url: str, width: int = 390, init_script: str = "") -> Page:
    context = await browser.new_context(viewport={"width": width, "height": 900})
    if init_script:
        await context.add_init_script(init_script)
    page = await context.new_page()
    await page.goto(url)
    await page.check("#agree")
    return page


async def the_window_is_refused(served: Served, browser: Browser, link: str, seen: Seen) -> None:
    page = await open_page(browser, link, init_script=PICKS_A_WINDOW)
    await page.click("#share-screen")
    await page.wait_for_selector("#state-screen[data-state='refused']", timeout=10_000)
    seen.window["said"] = await page.text_content("#screen-said")
    await page.click("#lang")  # and in English
    seen.window["said_en"] = await page.text_content("#screen-said")
    ARTIFACTS.mkdir(exist_ok=True)
    await page.screenshot(path=str(ARTIFACTS / "player-window-refused-en.png"), full_page=True)
    async with served.http.get(f"{served.base}/api/v1/players/{OTHER}/camera", headers=LI) as response:
        seen.window["service"] = (await response.json())["devices"]["screen"]
    seen.window["sessions"] = sorted(str(key) for key in served.context.camera.ingest.sessions if key.player == OTHER)


async def the_set(served: Served, front: Browser, phone: Browser, link: str, seen: Seen) -> None:
    page = await open_page(front, link, 1000)
    await page.click("#start")
    await page.wait_for_function(CONNECTED, timeout=15_000)
    await page.wait_for_selector("#devices-guide:not([hidden])", timeout=5_000)
    await page.click("#share-screen")
    side = await open_page(phone, link + "?device=side")
    side_started = time.monotonic()
    await side.click("#start")
    await side.wait_for_function(CONNECTED, timeout=15_000)
    ARTIFACTS.mkdir(exist_ok=True)
    await side.screenshot(path=str(ARTIFACTS / "player-side.png"), full_page=True)
    for device in ("front", "side", "screen"):
        await page.wait_for_selector(f"#state-{device}[data-state='connected']", timeout=10_000)
        seen.connected[device] = True
    ARTIFACTS.mkdir(exist_ok=True)
    await page.screenshot(path=str(ARTIFACTS / "player-devices.png"), full_page=True)
    # The arbiter approves the side camera's view (its frame now), well before the phone is turned.
    async with served.http.post(f"{served.base}/api/v1/players/{PLAYER}/devices/side/reference", headers=LI,
                                json={"note": "desk and screen in view"}) as response:  # fmt: skip
        assert response.status == 201, await response.text()
    assert time.monotonic() - side_started < MOVED_AT_S - 1
    seen.moved = await wait_incident(served, "camera-moved", MOVED_AT_S + 12 - (time.monotonic() - side_started))
    seen.moved_after_s = time.monotonic() - side_started - MOVED_AT_S
    await page.wait_for_selector("#state-side[data-state='moved']", timeout=5_000)
    seen.side_pill = await page.text_content("#state-side")
    await the_desk_shows_the_set(served, phone, seen)  # after: the desk's views would slow the 2 CPUs' analysis
    # The player stops sharing the screen.
    await page.evaluate(STOP_SHARING)
    stopped_at = time.monotonic()
    seen.stopped = await wait_incident(served, "screen-share-stopped", 3.0)
    seen.stopped_after_s = time.monotonic() - stopped_at
    await page.wait_for_selector("#state-screen[data-state='stopped']", timeout=5_000)
    seen.screen_pill = await page.text_content("#state-screen")
    ingest = served.context.camera.ingest
    seen.still_live = {device.value: ingest.live(PLAYER, device) is not None for device in Device}
    async with served.http.get(f"{served.base}/api/v1/incidents", headers=LI) as response:
        raised = await response.json()
    seen.incidents = [(i["kind"], i["evidence"].get("device")) for i in reversed(raised)]


async def the_desk_shows_the_set(served: Served, browser: Browser, seen: Seen) -> None:
    """The chief's desk: the camera roster shows each device's state (the side camera moved); the large live view of
    the player shows the front camera, and beside the board the side camera and the screen, each playing."""
    desk = await (await browser.new_context(viewport={"width": 1366, "height": 900})).new_page()
    await desk.goto(served.base + "/arbiter")
    await log_in(desk, "Li")
    await desk.click("#roster-open")
    await desk.wait_for_selector("#roster[open]")
    await desk.select_option("#roster-section", "set-2026/set")
    row = f"#roster-rows tr[data-player='{PLAYER}']"
    await desk.wait_for_selector(f"{row} .device-line[data-device='screen']", timeout=5_000)
    for device in ("side", "screen"):
        seen.roster[device] = await desk.get_attribute(f"{row} .device-line[data-device='{device}'] .cam-state",
                                                       "data-state") or ""  # fmt: skip
    seen.roster["front"] = await desk.get_attribute(row, "data-state") or ""
    await desk.keyboard.press("Escape")
    await desk.click(f"[data-menu='{seen.game}']")
    await desk.click(f"#ctl-menu button[data-live='large'][data-player='{PLAYER}']")
    await desk.wait_for_selector("#live-large .live-tile[data-state='playing']", timeout=10_000)
    seen.desk_set.append("front")
    for device in ("side", "screen"):
        tile = f"#live-set .live-tile[data-device='{device}'][data-state='playing']"
        await desk.wait_for_selector(tile, timeout=10_000)
        seen.desk_set.append(device)
    # The arbiter approves what the screen shows (the platform's board) from the desk: compared with from then on.
    await desk.click("#live-set .live-tile[data-device='screen'] button[data-role='approve-view']")
    await desk.wait_for_selector(
        "#live-set .live-tile[data-device='screen'] button[data-state='approved']", timeout=10_000
    )
    async with served.http.get(f"{served.base}/api/v1/players/{PLAYER}/camera", headers=LI) as response:
        seen.screen_reference = (await response.json())["devices"]["screen"].get("reference")
    await views(desk, "arbiter-live-set")
    await desk.close()


@pytest.fixture(scope="module")
def seen(tmp_path_factory: pytest.TempPathFactory) -> Seen:
    """The scenario, once for the module's tests (three browsers, about 30 s)."""
    require()  # before the module's fixture, which the per-test check would come after
    return asyncio.run(scenario(tmp_path_factory.mktemp("devices")))


async def scenario(tmp_path: Path) -> Seen:
    settings, secret = event_settings(tmp_path, EVENT)
    front_clip, side_clip = tmp_path / "front.y4m", tmp_path / "side.y4m"
    write_clip(front_clip, 8.0, side=False)
    write_clip(side_clip, MOVED_AT_S + 12, side=True)
    seen = Seen()
    async with serve(settings, secret) as served, async_playwright() as playwright:
        seen.game = await game(served.platform, "g1", PLAYER, OTHER, int(time.time() * 1000) - 10_000, (PLAYER, OTHER))
        links = {}
        for player in (PLAYER, OTHER):
            async with served.http.post(f"{served.base}/api/v1/players/{player}/stream-token", headers=LI) as response:
                links[player] = served.base + (await response.json())["url"]
        common = ("--use-fake-ui-for-media-stream", "--allow-loopback-in-peer-connection")
        camera = ("--use-fake-device-for-media-stream", "--use-file-for-fake-video-capture=")
        browsers = await asyncio.gather(
            launch(playwright, *common, camera[0], camera[1] + str(front_clip)),  # the player: front and screen
            launch(playwright, *common, camera[0], camera[1] + str(side_clip)),  # the phone: side
            launch(playwright, *common, "--use-fake-device-for-media-stream=display-media-type=window"),
        )
        try:
            await asyncio.gather(
                the_set(served, browsers[0], browsers[1], links[PLAYER], seen),
                the_window_is_refused(served, browsers[2], links[OTHER], seen),
            )
        finally:
            await asyncio.gather(*(browser.close() for browser in browsers))
    return seen


async def test_the_whole_set_connects(seen: Seen) -> None:
    assert seen.connected == {"front": True, "side": True, "screen": True}


async def test_a_window_only_share_is_refused_on_the_page_and_by_the_service(seen: Seen) -> None:
    assert seen.window["said"] == "你只共享了一个窗口：请重新共享，并选择“整个屏幕”。"
    assert seen.window["said_en"] == 'You shared a single window: share again and choose "Entire screen".'
    assert seen.window["service"]["state"] == "refused" and seen.window["service"]["surface"] == "window"
    assert seen.window["sessions"] == []  # nothing was streamed


async def test_a_side_camera_that_moved_is_noticed(seen: Seen) -> None:
    assert seen.moved is not None, seen
    assert seen.moved["evidence"]["device"] == "side" and seen.moved["article"] == "36.4"
    assert seen.moved["summary_words"]["en"].startswith("side camera: ")
    assert seen.moved_after_s is not None and 0 < seen.moved_after_s < 10
    assert seen.side_pill in ("已被移动：请放回批准时的位置", "moved: put it back where it was approved")


async def test_the_desk_shows_the_players_set_and_each_devices_state(seen: Seen) -> None:
    assert seen.desk_set == ["front", "side", "screen"]
    streaming = {"connected", "analysis-degraded"}  # up, though the 2 CPUs may not analyse every frame in time
    assert seen.roster["front"] in streaming and seen.roster["screen"] in streaming, seen.roster
    assert seen.roster["side"] == "moved"  # the phone was turned before the desk looked
    assert seen.screen_reference is True  # approved from the desk's screen tile


async def test_stopping_the_screen_share_is_a_case_within_3_s(seen: Seen) -> None:
    assert seen.stopped is not None and seen.stopped_after_s is not None and seen.stopped_after_s < 3.0
    assert seen.stopped["article"] == "36.4.4" and seen.stopped["evidence"]["device"] == "screen"
    assert seen.screen_pill in ("已停止", "stopped")
    assert seen.still_live.get("front") and seen.still_live.get("side")  # the other devices stay
