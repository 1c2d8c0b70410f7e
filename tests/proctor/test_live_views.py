"""The arbiters' live camera views (issue 13), over real WebRTC: an aiortc peer publishes a player's camera (640x480
at 15 fps) through /api/v1/rtc/offer with a stream token, and an aiortc viewer peer watches it through
/api/v1/players/{player}/live-view; the player's page hears the rate asked of it, the cap answers 429, an arbiter of
another section is refused, and each view is audited."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import ClientResponse
from aiortc import RTCConfiguration, RTCPeerConnection, RTCSessionDescription
from aiortc.mediastreams import MediaStreamTrack
from av import VideoFrame
from sqlalchemy import insert, select
from sqlmodel import col

from proctor.accounts import token_hash
from proctor.database import create_database_engine
from proctor.events import load_event_file
from proctor.live_views import ViewSize, admits, sender_video
from proctor.models import Arbiter, AuditEntry
from proctor.settings import Settings
from tests.proctor.conftest import Platformer, app_context, iso
from tests.proctor.test_camera import CAM, connect, issue_token
from tests.proctor.test_events import EXAMPLE
from tests.video.tracks import MovingPicture

pytestmark = pytest.mark.asyncio

RATE = 15


class Viewer:
    """An arbiter's browser, as an aiortc peer that only receives: it counts the frames it decodes."""

    def __init__(self) -> None:
        self.pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
        self.pc.addTransceiver("video", direction="recvonly")
        self.frames: list[tuple[float, int, int]] = []
        self.task: asyncio.Task[None] | None = None
        self.view = ""

        @self.pc.on("track")
        def on_track(track: MediaStreamTrack) -> None:
            self.task = asyncio.get_running_loop().create_task(self._count(track))

    async def _count(self, track: MediaStreamTrack) -> None:
        while True:
            try:
                frame = await track.recv()
            except Exception:
                return
            if isinstance(frame, VideoFrame):
                self.frames.append((time.monotonic(), frame.width, frame.height))

    async def offer(self) -> dict[str, str]:
        await self.pc.setLocalDescription(await self.pc.createOffer())
        description = self.pc.localDescription
        return {"sdp": description.sdp, "type": description.type}

    async def watch(self, platform: Platformer, player: str, headers: dict[str, str], size: str = "large") -> Any:
        response = await platform.client.post(f"/api/v1/players/{player}/live-view",
                                              json={**await self.offer(), "size": size}, headers=headers)  # fmt: skip
        body = await response.json()
        if response.status == 201:
            self.view = body["id"]
            await self.pc.setRemoteDescription(RTCSessionDescription(body["sdp"], body["type"]))
        return response.status, body

    def rate(self, seconds: float) -> float:
        """Frames a second over the last ``seconds``."""
        now = time.monotonic()
        return sum(at >= now - seconds for at, _, _ in self.frames) / seconds

    async def close(self) -> None:
        if self.task is not None:
            self.task.cancel()
        await self.pc.close()


async def page_events(response: ClientResponse) -> AsyncIterator[tuple[str, dict[str, Any]]]:
    """The (event, data) pairs of a player's page stream."""
    kind = ""
    async for raw in response.content:
        line = raw.decode().rstrip("\n")
        if line.startswith("event: "):
            kind = line[7:]
        elif line.startswith("data: "):
            yield kind, json.loads(line[6:])


async def next_rate(events: AsyncIterator[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    async def first() -> dict[str, Any]:
        async for kind, data in events:
            if kind == "view-rate":
                return data
        raise AssertionError("the page stream ended")

    return await asyncio.wait_for(first(), 10)


async def wait_for(condition: Any, seconds: float = 10.0) -> None:
    until = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < until, "timed out"
        await asyncio.sleep(0.1)


def audit(settings: Settings, action: str) -> list[Any]:
    engine = create_database_engine(settings)
    with engine.connect() as connection:
        rows = connection.execute(
            select(AuditEntry).where(col(AuditEntry.action) == action).order_by(col(AuditEntry.id))
        ).all()
    engine.dispose()
    return list(rows)


async def test_the_cap_counts_a_large_view_as_two() -> None:
    assert admits(10, ViewSize.LARGE, 12) and not admits(11, ViewSize.LARGE, 12)
    assert admits(11, ViewSize.SMALL, 12) and not admits(12, ViewSize.SMALL, 12)
    settings = Settings()
    assert sender_video(settings, watched=False)["frameRate"] == 5
    assert sender_video(settings, watched=True) == {"width": 640, "height": 480, "frameRate": 15.0,
                                                     "maxBitrate": 800_000, "watched": True}  # fmt: skip


async def test_an_arbiter_watches_a_player_live(platform: Platformer, settings: Settings) -> None:
    token = await issue_token(platform, settings, "p1")
    stream = await platform.client.get(f"/api/v1/play/{token}/events")
    events = page_events(stream)
    kind, state = await anext(events)
    assert kind == "state" and state["video"]["frameRate"] == 5  # nobody watches: the analysis' rate
    sender = await connect(platform, token, MovingPicture(RATE))
    context = app_context(platform)
    ingest = context.camera.ingest
    await wait_for(lambda: ingest.live("p1") is not None and ingest.live("p1").frames_received > 10)
    viewer = Viewer()
    try:
        status, body = await viewer.watch(platform, "p1", CAM)
        assert status == 201, body
        assert (body["size"], body["in_use"], body["max"]) == ("large", 2, settings.live_views_max)
        asked = await next_rate(events)
        assert asked == {"watched": True, "video": {"width": 640, "height": 480, "frameRate": 15.0,
                                                   "maxBitrate": 800_000, "watched": True}}  # fmt: skip
        config = await (await platform.client.get(f"/api/v1/rtc/config?token={token}")).json()
        assert config["video"]["frameRate"] == 15.0  # a page that reloads while watched sends at the view's rate
        await wait_for(lambda: len(viewer.frames) > 0, 15)
        session = ingest.live("p1")
        analysed, started = session.frames_analysed, time.monotonic()
        await asyncio.sleep(4)
        fps = viewer.rate(3.5)
        assert fps >= 10, fps
        assert {(w, h) for _, w, h in viewer.frames[-10:]} == {(640, 480)}
        # The analysis keeps its own rate: frames picked by time, 15 a second arriving.
        analysed_rate = (session.frames_analysed - analysed) / (time.monotonic() - started)
        assert analysed_rate <= settings.analysis_rate * 1.3, analysed_rate
        listed = await (await platform.client.get("/api/v1/live-views", headers=CAM)).json()
        assert [view["player"] for view in listed["mine"]] == ["p1"] and listed["in_use"] == 2

        response = await platform.client.delete(f"/api/v1/players/p1/live-view/{viewer.view}", headers=CAM)
        assert response.status == 200, await response.text()
        ended = await response.json()
        assert ended["seconds"] >= 4
        assert await next_rate(events) == {"watched": False, "video": sender_video(settings, watched=False)}
        assert context.camera.live_views.in_use == 0
        again = await platform.client.delete(f"/api/v1/players/p1/live-view/{viewer.view}", headers=CAM)
        assert again.status == 404
    finally:
        await viewer.close()
        await sender.close()
        stream.close()
    opened, closed = audit(settings, "camera.view"), audit(settings, "camera.view-end")
    assert [(row.actor, row.subject, row.detail["size"]) for row in opened] == [("Cam (arbiter)", "player:p1", "large")]
    assert closed[0].detail["view"] == opened[0].detail["view"] and closed[0].detail["seconds"] >= 4
    assert closed[0].detail["reason"] == "closed by the arbiter"


@pytest.fixture
def settings(database_url: str) -> Settings:
    """Three views at most: one large and one small fill the process."""
    return Settings(database_url=database_url, deadline_grace_ms=0, feed_gap_timeout_s=0.5, live_views_max=3)


async def test_the_cap_refuses_a_view_beyond_it_and_a_closed_connection_frees_its_place(
    platform: Platformer, settings: Settings
) -> None:
    token = await issue_token(platform, settings, "p2")
    sender = await connect(platform, token, MovingPicture(RATE))
    ingest = app_context(platform).camera.ingest
    await wait_for(lambda: ingest.live("p2") is not None and ingest.live("p2").frames_received > 5)
    viewers = [Viewer() for _ in range(3)]
    try:
        assert (await viewers[0].watch(platform, "p2", CAM, "large"))[0] == 201
        assert (await viewers[1].watch(platform, "p2", CAM, "small"))[0] == 201
        status, refused = await viewers[2].watch(platform, "p2", CAM, "small")
        assert status == 429, refused
        assert refused["error"] == "live-views-full" and (refused["max"], refused["in_use"]) == (3, 3)
        assert "at most 3 views" in refused["message"] and "最多转发 3 路" in refused["message_zh"]
        # The viewer's browser goes away: its connection closing ends the view.
        await wait_for(lambda: len(viewers[1].frames) > 0, 15)
        await viewers[1].close()
        views = app_context(platform).camera.live_views
        await wait_for(lambda: views.in_use == 2, 20)
        fresh = Viewer()
        viewers.append(fresh)
        assert (await fresh.watch(platform, "p2", CAM, "small"))[0] == 201
        bad = await platform.client.post("/api/v1/players/p2/live-view", json={"sdp": "v=0", "type": "offer"},
                                         headers=CAM)  # fmt: skip
        assert bad.status == 400
        viewers.append(Viewer())
        wrong = await platform.client.post("/api/v1/players/p2/live-view",
                                           json={**await viewers[-1].offer(), "size": "huge"}, headers=CAM)  # fmt: skip
        assert wrong.status == 400
    finally:
        for viewer in viewers:
            await viewer.close()
        await sender.close()
    ends = audit(settings, "camera.view-end")
    assert any(row.detail["reason"].startswith("connection") for row in ends)


async def test_an_arbiter_of_another_section_may_not_watch(platform: Platformer, settings: Settings) -> None:
    engine = create_database_engine(settings)
    with engine.begin() as connection:
        load_event_file(connection, EXAMPLE, now=0)
        for name, role, sections in (("Wang", "arbiter", ["national-youth-2021/youth-m"]), ("Li", "chief", None),
                                     ("Rev", "reviewer", None)):  # fmt: skip
            connection.execute(insert(Arbiter).values(name=name, role=role, token_hash=token_hash(name),
                                                      sections=sections))  # fmt: skip
    engine.dispose()
    start = int(time.time() * 1000) - 10_000
    data = {"black": {"id": "youth-f-p1"}, "white": {"id": "youth-f-p3"}, "rule": "renju", "opening": "five-move-two",
            "time_control": "youth-60", "start_at": iso(start)}  # fmt: skip
    assert (await platform.send("game.created", "youth-f-r1-b1", data, at=start - 60_000))[0] == 200
    response = await platform.client.post(
        "/api/v1/players/youth-f-p1/stream-token", headers={"Authorization": "Bearer Li"}
    )
    token = (await response.json())["token"]
    sender = await connect(platform, token, MovingPicture(RATE))
    ingest = app_context(platform).camera.ingest
    await wait_for(lambda: ingest.live("youth-f-p1") is not None and ingest.live("youth-f-p1").frames_received > 5)
    viewers = [Viewer() for _ in range(3)]
    try:
        status, refused = await viewers[0].watch(platform, "youth-f-p1", {"Authorization": "Bearer Wang"})
        assert status == 403 and "youth-f" in refused["message"] and refused["article"] == "16", refused
        status, refused = await viewers[1].watch(platform, "youth-f-p1", {"Authorization": "Bearer Rev"})
        assert status == 403, refused  # the review panel only reads
        status, body = await viewers[2].watch(platform, "youth-f-p1", {"Authorization": "Bearer Li"})
        assert status == 201, body
        assert app_context(platform).camera.live_views.in_use == 2
        viewers.append(Viewer())
        status, missing = await viewers[-1].watch(platform, "youth-m-p1", {"Authorization": "Bearer Wang"}, "small")
        assert status == 409, missing  # in Wang's section, but no camera live
    finally:
        for viewer in viewers:
            await viewer.close()
        await sender.close()
    assert [row.actor for row in audit(settings, "camera.view")] == ["Li (chief)"]
