"""Janus as the SFU (issue 16, video.janus), on Debian's janus started here: a player's stream published to a
VideoRoom by an aiortc sender (as a player's page publishes) reaches an aiortc subscriber (as an analysis worker
takes it) decoded, frame after frame, without Janus re-encoding it; and the API is shut to anyone without a token the
admin API added, or whose token was removed."""

from __future__ import annotations

import asyncio
import fractions
import secrets
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import aiohttp
import numpy as np
import pytest
from aiortc import MediaStreamTrack, RTCPeerConnection, VideoStreamTrack
from av import VideoFrame

from tests.video.janus_server import JanusServer
from video.checks import Check, Finding
from video.conversion import picture
from video.ingest import Ingest, IngestSettings
from video.janus import JanusAdmin, JanusError, create_room, janus_session, publish, subscribe

pytestmark = pytest.mark.asyncio

ROOM = 4242


class Stripes(VideoStreamTrack):
    """640x480 at 15 fps: a grey picture with a bright band that moves down a row of bands each second."""

    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    async def recv(self) -> VideoFrame:
        await asyncio.sleep(1 / 15)
        image = np.full((480, 640, 3), 60, dtype=np.uint8)
        band = (self.count // 15) % 8
        image[band * 60 : (band + 1) * 60] = 220
        frame = VideoFrame.from_ndarray(image, format="bgr24")
        frame.pts, frame.time_base = self.count, fractions.Fraction(1, 15)
        self.count += 1
        return frame


async def test_a_published_stream_reaches_a_subscriber_through_janus_by_token(janus_server: JanusServer) -> None:
    player_token, worker_token = secrets.token_hex(12), secrets.token_hex(12)
    room_secret = secrets.token_hex(12)
    async with aiohttp.ClientSession() as http:
        admin = JanusAdmin(janus_server.admin_url, janus_server.admin_secret, http)
        with pytest.raises(JanusError, match="403"):  # no token: the API is shut
            async with janus_session(janus_server.url, "", http):
                pass
        with pytest.raises(JanusError):  # the admin API with a wrong secret
            await JanusAdmin(janus_server.admin_url, "wrong", http).add_token(player_token)
        await admin.add_token(player_token)
        await admin.add_token(worker_token)
        sender, worker = RTCPeerConnection(), RTCPeerConnection()
        frames: list[Any] = []
        got = asyncio.Event()
        drains: list[asyncio.Task[None]] = []

        @worker.on("track")
        def on_track(track: MediaStreamTrack) -> None:
            async def drain() -> None:
                while True:
                    frames.append(await track.recv())
                    if len(frames) >= 45:
                        got.set()

            if track.kind == "video":
                drains.append(asyncio.ensure_future(drain()))

        try:
            async with (
                janus_session(janus_server.url, player_token, http) as player_session,
                janus_session(janus_server.url, worker_token, http) as worker_session,
            ):
                player = await player_session.attach()
                await create_room(player, ROOM, room_secret)
                sender.addTrack(Stripes())
                feed = await publish(player, sender, ROOM, "Wang Xiaoming")
                listed = await (await worker_session.attach()).request({"request": "listparticipants", "room": ROOM})
                assert [p["id"] for p in listed["participants"]] == [feed]
                await subscribe(await worker_session.attach(), worker, ROOM, feed)
                await asyncio.wait_for(got.wait(), 20)
                last = picture(frames[-1])
                assert last.shape == (480, 640, 3)
                rows = last[:, :, 1].reshape(8, 60, 640).mean(axis=(1, 2))
                assert rows.max() > 180 and np.median(rows) < 100  # one bright band over the grey, as sent
                # A removed token shuts the API to its holder from then on.
                await admin.remove_token(player_token)
                with pytest.raises(JanusError, match="403"):
                    await player_session.attach()
        finally:
            for task in drains:
                task.cancel()
            await sender.close()
            await worker.close()


class Covered(VideoStreamTrack):
    """A camera with something over its lens: an even, nearly black picture, 15 frames a second."""

    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    async def recv(self) -> VideoFrame:
        await asyncio.sleep(1 / 15)
        frame = VideoFrame.from_ndarray(np.full((480, 640, 3), 8, dtype=np.uint8), format="bgr24")
        frame.pts, frame.time_base = self.count, fractions.Fraction(1, 15)
        self.count += 1
        return frame


async def test_the_ingest_analyses_a_players_camera_taken_from_janus(janus_server: JanusServer) -> None:
    token = secrets.token_hex(12)
    raised: list[tuple[str, Finding]] = []
    covered = asyncio.Event()

    def on_finding(stream: Any, finding: Finding, _snapshot: bytes | None) -> None:
        raised.append((stream, finding))
        if finding.check is Check.COVERED and finding.ended is None:
            covered.set()

    with ThreadPoolExecutor(2) as executor:
        ingest = Ingest(IngestSettings(), None, executor, on_finding)
        ingest.start()
        sender = RTCPeerConnection()
        try:
            async with aiohttp.ClientSession() as http:
                await JanusAdmin(janus_server.admin_url, janus_server.admin_secret, http).add_token(token)
                async with janus_session(janus_server.url, token, http) as session:
                    player = await session.attach()
                    await create_room(player, ROOM, secrets.token_hex(12))
                    sender.addTrack(Covered())
                    feed = await publish(player, sender, ROOM, "Wang Xiaoming")
                    await ingest.subscribe("wang-xiaoming", await session.attach(), ROOM, feed)
                    await asyncio.wait_for(covered.wait(), 20)  # covered_s (3 s) after the first frames
                    stream = ingest.live("wang-xiaoming")
                    assert stream is not None and stream.frames_received > 30
                    assert [f.check for _, f in raised] == [Check.COVERED]
        finally:
            await sender.close()
            await ingest.close()
