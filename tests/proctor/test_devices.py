"""A player's devices (issue 15): real aiortc peers stream a player's front camera, side camera and screen to the
running app at once, each keyed by player and device; a second offer of one device is refused without touching the
others; a window shared as the screen is refused; a screen share that stops is a case within 3 s; the side camera's
approved view, and a camera that moved from it; the cases, the camera status and the roster name the device."""

from __future__ import annotations

import asyncio
import math
import time
from fractions import Fraction
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
from aiortc import RTCConfiguration, RTCPeerConnection, RTCSessionDescription, VideoStreamTrack
from av import VideoFrame

from proctor.database import create_database_engine, migrate
from proctor.events import EventFileError, parse_event, store_event
from proctor.settings import Settings
from tests.proctor.conftest import Platformer, app_context, seat
from tests.proctor.test_camera import ScriptedCamera
from tests.proctor.test_camera_controls import ARBITER, add_arbiter, incidents, issue, wait_for
from tests.video.frames import composed, other_screens, platform_screen, room_photo
from video.devices import Device, StreamKey

pytestmark = pytest.mark.asyncio

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
screen_retention_days = 7

[sections.policy.thresholds]
camera_moved_s = 2
screen_still_s = 1
screen_changed_s = 2
view_interval_s = 1

[[sections.players]]
start_no = 1
name = "Set"
platform_ref = "d-1"

[[sections]]
slug = "front"
name = "Front only"
time_control = "rapid-15"

[[sections.players]]
start_no = 1
name = "Front"
platform_ref = "f-1"
"""


def load_event(settings: Settings, tmp_path: Path, text: str = EVENT) -> None:
    engine = create_database_engine(settings)
    migrate(engine)
    with engine.begin() as connection:
        store_event(connection, parse_event(text, tmp_path), now=0)
    engine.dispose()


class SideCamera(VideoStreamTrack):
    """A phone beside the player at 10 frames a second: the room, the player swaying in it and the light drifting;
    from ``moved_at`` on, the phone turned 8 degrees and pushed 60 px aside."""

    def __init__(self, moved_at: float = math.inf) -> None:
        super().__init__()
        self.started, self.moved_at, self.wall = time.monotonic(), moved_at, time.time()
        self.rng, self.room, self.count = np.random.default_rng(3), room_photo(), 0

    async def recv(self) -> VideoFrame:
        await asyncio.sleep(0.1)
        elapsed = time.monotonic() - self.started
        picture = composed(self.room, self.rng, round(20 * math.sin(elapsed)), 1 + 0.1 * math.sin(elapsed / 3), False)
        if elapsed >= self.moved_at:
            turn = cv2.getRotationMatrix2D((320, 240), 8, 1.0)
            turn[0, 2] += 60
            picture = cv2.warpAffine(picture, turn, (640, 480), borderMode=cv2.BORDER_REFLECT).astype(np.uint8)
        frame = VideoFrame.from_ndarray(np.ascontiguousarray(picture), format="bgr24")
        frame.pts, frame.time_base = self.count, Fraction(1, 10)
        self.count += 1
        return frame


class Screen(VideoStreamTrack):
    """A shared screen at 2 frames a second (a board with a moving cursor) that stops sending after ``stops_at``."""

    def __init__(self, stops_at: float = math.inf) -> None:
        super().__init__()
        self.started, self.stops_at, self.count = time.monotonic(), stops_at, 0

    async def recv(self) -> VideoFrame:
        await asyncio.sleep(0.5)
        while time.monotonic() - self.started >= self.stops_at:
            await asyncio.sleep(1)  # the share stopped: no more frames
        picture = np.full((360, 640, 3), 200, np.uint8)
        cv2.rectangle(picture, (40 + self.count % 200, 40), (80 + self.count % 200, 80), (20, 20, 20), -1)
        frame = VideoFrame.from_ndarray(picture, format="bgr24")
        frame.pts, frame.time_base = self.count, Fraction(1, 2)
        self.count += 1
        return frame


async def offer(
    platform: Platformer, token: str, track: VideoStreamTrack, device: str | None = None, surface: str | None = None
) -> tuple[int, dict[str, Any], RTCPeerConnection]:
    """A peer connection offering ``track`` as the player's ``device``: the answer's status and body, and the peer."""
    pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
    pc.addTrack(track)
    await pc.setLocalDescription(await pc.createOffer())
    body: dict[str, Any] = {"sdp": pc.localDescription.sdp, "type": "offer", "token": token}
    if device is not None:
        body["device"] = device
    if surface is not None:
        body["surface"] = surface
    response = await platform.client.post("/api/v1/rtc/offer", json=body)
    answer = await response.json()
    if response.status == 200:
        await pc.setRemoteDescription(RTCSessionDescription(answer["sdp"], answer["type"]))
    else:
        await pc.close()
    return response.status, answer, pc


async def camera_status(platform: Platformer, player: str) -> dict[str, Any]:
    result: dict[str, Any] = await (
        await platform.client.get(f"/api/v1/players/{player}/camera", headers=ARBITER)
    ).json()
    return result


async def prepared(platform: Platformer, settings: Settings, tmp_path: Path) -> tuple[Any, str]:
    """The event loaded, an arbiter, d-1 seated in a game (its cases need one) and their stream token."""
    load_event(settings, tmp_path)
    add_arbiter(settings)
    context = app_context(platform)
    context.camera.settings = Settings(database_url=settings.database_url, media_dir=str(tmp_path / "media"))
    await seat(platform, "d-1")
    return context, await issue(platform, "d-1")


async def test_front_side_and_screen_stream_at_once_keyed_by_device(
    platform: Platformer, settings: Settings, tmp_path: Path
) -> None:
    context, token = await prepared(platform, settings, tmp_path)
    ingest = context.camera.ingest
    peers = []
    try:
        for device, track, surface in (("front", ScriptedCamera([(60, 1)]), None), ("side", SideCamera(), None),
                                       ("screen", Screen(), "monitor")):  # fmt: skip
            status, body, pc = await offer(platform, token, track, device, surface)
            assert status == 200, body
            peers.append(pc)
        await wait_for(lambda: _receiving(ingest, "d-1", list(Device)))
        assert set(ingest.sessions) == {StreamKey("d-1", device) for device in Device}
        # A second front camera is refused (and told), the side camera and the screen stay.
        status, body, _ = await offer(platform, token, ScriptedCamera([(60, 1)]), "front")
        assert status == 409 and "front camera is already streaming" in body["message"]
        assert all(ingest.live("d-1", device) is not None for device in Device)
        second = [i for i in await incidents(platform) if i["kind"] == "second-connection"]
        assert len(second) == 1 and "device" not in second[0]["evidence"]
        status, body, _ = await offer(platform, token, SideCamera(), "side")
        assert status == 409 and "side camera is already streaming" in body["message"]
        second = [i for i in reversed(await incidents(platform)) if i["kind"] == "second-connection"]  # oldest first
        assert [i["evidence"].get("device") for i in second] == [None, "side"]
        assert second[1]["summary_words"]["en"].startswith("a second connection of the player's side camera")
        assert len({i["case"]["id"] for i in second}) == 2  # one case per device
        # The status, the page and the roster each show every device of the section.
        seen = await camera_status(platform, "d-1")
        assert seen["policy"]["devices"] == ["front", "side", "screen"] and seen["policy"]["screen_retention_days"] == 7
        assert {d: s["state"] for d, s in seen["devices"].items()} == dict.fromkeys(("front", "side", "screen"),
                                                                                    "connected")  # fmt: skip
        assert seen["devices"]["side"]["reference"] is False
        devices = await (await platform.client.get(f"/api/v1/play/{token}/devices",
                                                   params={"origin": "https://proctor.example"})).json()  # fmt: skip
        assert devices["required"] == ["front", "side", "screen"]
        assert devices["side"]["link"] == f"https://proctor.example/play/{token}?device=side"
        assert devices["side"]["qr"].startswith("data:image/svg+xml")
        roster = await (
            await platform.client.get("/api/v1/events/set-2026/sections/set/camera-roster", headers=ARBITER)
        ).json()
        (entry,) = roster["players"]
        assert roster["devices"] == ["front", "side", "screen"]
        assert {d: s["state"] for d, s in entry["devices"].items()} == dict.fromkeys(("front", "side", "screen"),
                                                                                     "connected")  # fmt: skip
        for device in ("side", "screen"):
            response = await platform.client.get("/api/v1/players/d-1/camera/thumbnail.jpg",
                                                  params={"device": device}, headers=ARBITER)  # fmt: skip
            assert response.status == 200 and (await response.read())[:2] == b"\xff\xd8"
        # The screen's evidence stills go to the section's screen folder (its own retention).
        await wait_for(lambda: _has_files(tmp_path / "media" / "set-2026" / "set" / "screen"))
    finally:
        for pc in peers:
            await pc.close()


async def _receiving(ingest: Any, player: str, devices: list[Device]) -> bool:
    return all((s := ingest.live(player, device)) is not None and s.frames_analysed > 1 for device in devices)


async def _has_files(folder: Path) -> bool:
    return folder.is_dir() and any(folder.iterdir())


async def test_a_window_is_refused_and_a_device_the_section_does_not_use_too(
    platform: Platformer, settings: Settings, tmp_path: Path
) -> None:
    context, token = await prepared(platform, settings, tmp_path)
    for surface in ("window", "browser", None):
        status, body, _ = await offer(platform, token, Screen(), "screen", surface)
        assert status == 400 and "share the entire screen" in body["message"], body
    assert context.camera.ingest.sessions == {}
    seen = await camera_status(platform, "d-1")
    assert seen["devices"]["screen"] == {"state": "refused", "since": seen["devices"]["screen"]["since"],
                                         "surface": "unknown", "reference": False}  # fmt: skip
    # The page reports a window it refused itself.
    report = {"device": "screen", "state": "refused", "surface": "window"}
    response = await platform.client.post(f"/api/v1/play/{token}/devices", json=report)
    assert response.status == 200 and (await response.json())["devices"]["screen"]["surface"] == "window"
    # A player of a front-only section has no side camera.
    await seat(platform, "f-1")
    other = await issue(platform, "f-1")
    status, body, _ = await offer(platform, other, SideCamera(), "side")
    assert status == 409 and "does not use a side camera" in body["message"]
    status, body, _ = await offer(platform, other, SideCamera(), "phone")
    assert status == 404


async def test_a_screen_share_that_stops_is_a_case_within_3_s(
    platform: Platformer, settings: Settings, tmp_path: Path
) -> None:
    context, token = await prepared(platform, settings, tmp_path)
    peers = []
    try:
        # The page says the player stopped sharing: the case is raised at once.
        status, body, pc = await offer(platform, token, Screen(), "screen", "monitor")
        assert status == 200, body
        peers.append(pc)
        await wait_for(lambda: _receiving(context.camera.ingest, "d-1", [Device.SCREEN]))
        reported = time.monotonic()
        response = await platform.client.post(f"/api/v1/play/{token}/devices", json={"device": "screen",
                                                                                      "state": "ended"})  # fmt: skip
        assert response.status == 200
        assert (await response.json())["devices"]["screen"]["state"] == "stopped"
        await wait_for(lambda: _stopped(platform, 1), timeout=3)
        assert time.monotonic() - reported < 3
        (stopped,) = [i for i in await incidents(platform) if i["kind"] == "screen-share-stopped"]
        assert stopped["article"] == "36.4.4" and stopped["evidence"]["device"] == "screen"
        assert stopped["summary_words"]["en"] == (
            "the player stopped sharing the screen before their game was over (36.4.4)"
        )
        assert stopped["evidence"]["media"][0].startswith("set-2026/set/screen/")  # the last screen still
        # A share that goes silent (the page gone, the network lost): within 3 s of its last frame.
        status, body, pc = await offer(platform, token, Screen(stops_at=3.0), "screen", "monitor")
        assert status == 200, body
        peers.append(pc)
        await wait_for(lambda: _receiving(context.camera.ingest, "d-1", [Device.SCREEN]))
        session = context.camera.ingest.live("d-1", Device.SCREEN)
        await wait_for(lambda: _stopped(platform, 2), timeout=10)
        last_frame = session.monitor.last_frame_at
        assert time.time() - last_frame < 3.0 + 0.5  # screen_lost_s (2.5 s) and the watchdog's half second
    finally:
        for pc in peers:
            await pc.close()


async def _stopped(platform: Platformer, count: int) -> bool:
    return sum(i["kind"] == "screen-share-stopped" for i in await incidents(platform)) >= count  # type: ignore[no-any-return]


async def test_the_side_cameras_approved_view_and_a_camera_that_moved(
    platform: Platformer, settings: Settings, tmp_path: Path
) -> None:
    context, token = await prepared(platform, settings, tmp_path)
    response = await platform.client.post("/api/v1/players/d-1/devices/side/reference", headers=ARBITER, json={})
    assert response.status == 409  # no side camera yet
    phone = SideCamera(moved_at=6.0)
    status, body, pc = await offer(platform, token, phone, "side")
    assert status == 200, body
    try:
        await wait_for(lambda: _receiving(context.camera.ingest, "d-1", [Device.SIDE]))
        response = await platform.client.post("/api/v1/players/d-1/devices/side/reference", headers=ARBITER,
                                              json={"note": "desk and laptop in view"})  # fmt: skip
        assert response.status == 201, await response.text()
        approved = await response.json()
        assert approved["device"] == "side" and approved["points"] >= 100
        assert (tmp_path / "media" / approved["media"]).read_bytes()[:2] == b"\xff\xd8"
        assert (await camera_status(platform, "d-1"))["devices"]["side"]["reference"] is True
        # Still where it was approved: nothing; moved at 6 s: camera-moved, naming the side camera.
        await wait_for(lambda: _kinds(platform, "camera-moved"), timeout=15)
        (moved,) = [i for i in await incidents(platform) if i["kind"] == "camera-moved"]
        assert moved["evidence"]["device"] == "side" and moved["article"] == "36.4"
        assert approved["at"] / 1000 < phone.wall + 6.0 <= moved["at"] / 1000 + 0.5  # approved before, found after
        assert moved["summary_words"]["en"].startswith("side camera: the camera moved from its approved view")
        assert moved["summary_words"]["zh"].startswith("侧面摄像头：")
        assert (await camera_status(platform, "d-1"))["devices"]["side"]["state"] == "moved"
    finally:
        await pc.close()


class PlatformPage(VideoStreamTrack):
    """A shared screen at 2 frames a second showing the platform's page, a stone more every second; from
    ``switched_at`` on, an analysis program in its place."""

    def __init__(self, switched_at: float = math.inf) -> None:
        super().__init__()
        self.started, self.switched_at, self.wall, self.count = time.monotonic(), switched_at, time.time(), 0
        self.analysis = other_screens()["an analysis program's board"]

    async def recv(self) -> VideoFrame:
        await asyncio.sleep(0.5)
        elapsed = time.monotonic() - self.started
        picture = (
            self.analysis if elapsed >= self.switched_at else platform_screen(10 + int(elapsed), 600 - int(elapsed))
        )
        frame = VideoFrame.from_ndarray(np.ascontiguousarray(picture), format="bgr24")
        frame.pts, frame.time_base = self.count, Fraction(1, 2)
        self.count += 1
        return frame


async def test_the_screens_approved_view_and_another_program_in_its_place(
    platform: Platformer, settings: Settings, tmp_path: Path
) -> None:
    """The arbiter approves what the screen shows (the platform's board); the game goes on (a stone a second) and
    nothing is raised; an analysis program in its place is a screen-changed review flag (36.4.3, 36.4.5) naming the
    screen, with its thumbnail."""
    context, token = await prepared(platform, settings, tmp_path)
    page = PlatformPage(switched_at=9.0)
    status, body, pc = await offer(platform, token, page, "screen", "monitor")
    assert status == 200, body
    try:
        await wait_for(lambda: _receiving(context.camera.ingest, "d-1", [Device.SCREEN]))
        response = await platform.client.post("/api/v1/players/d-1/devices/screen/reference", headers=ARBITER,
                                              json={"note": "the platform's board"})  # fmt: skip
        assert response.status == 201, await response.text()
        approved = await response.json()
        assert approved["device"] == "screen" and approved["points"] >= 100
        await wait_for(lambda: _kinds(platform, "screen-changed"), timeout=20)
        (changed,) = [i for i in await incidents(platform) if i["kind"] == "screen-changed"]
        assert changed["evidence"]["device"] == "screen" and changed["article"] == "36.4.3, 36.4.5"
        assert approved["at"] / 1000 < page.wall + 9.0 <= changed["at"] / 1000 + 1.0  # approved before, found after
        assert changed["summary_words"]["en"].startswith(
            "screen share: the shared screen no longer shows what was approved"
        )
        assert (
            changed["summary_words"]["zh"] == "屏幕共享：共享的屏幕不再显示批准时的内容（比赛平台的棋盘）：供审查的提示"
        )
        assert (tmp_path / "media" / changed["evidence"]["media"][0]).read_bytes()[:2] == b"\xff\xd8"
        assert (await camera_status(platform, "d-1"))["devices"]["screen"]["state"] == "changed"
    finally:
        await pc.close()


async def _kinds(platform: Platformer, kind: str) -> bool:
    return any(i["kind"] == kind for i in await incidents(platform))


async def test_the_devices_key_is_checked(tmp_path: Path) -> None:
    for bad in ('["side"]', '["front", "phone"]', '"front"'):
        text = EVENT.replace('devices = ["front", "side", "screen"]', f"devices = {bad}")
        with pytest.raises(EventFileError, match="devices"):
            parse_event(text, tmp_path)
    sections = parse_event(EVENT, tmp_path).sections
    assert [s.policy.devices for s in sections] == [["front", "side", "screen"], ["front"]]
