"""Talking to a player (issue 15), over real WebRTC: an aiortc peer is the player's page (its camera sent, a sound
received), another is the arbiter's desk sending a 440 Hz tone through /api/v1/players/{player}/talk.  The page
hears the tone and is told an arbiter speaks; the talk is audited; who may speak is who may act on the camera (16),
one arbiter at a time; a page that cannot play sound, or an offer without sound, is refused."""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import AsyncIterator
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from aiortc import RTCConfiguration, RTCPeerConnection, RTCSessionDescription
from aiortc.mediastreams import AUDIO_PTIME, MediaStreamError, MediaStreamTrack
from av import AudioFrame
from sqlalchemy import insert

from proctor.accounts import token_hash
from proctor.database import create_database_engine
from proctor.models import Arbiter
from proctor.settings import Settings
from tests.proctor.conftest import Platformer, app_context, seat
from tests.proctor.test_camera import CAM, issue_token
from tests.proctor.test_live_views import audit, page_events, wait_for
from tests.video.tracks import MovingPicture

pytestmark = pytest.mark.asyncio

TONE_HZ = 440.0


async def next_event_of(events: AsyncIterator[tuple[str, dict[str, Any]]], wanted: str) -> dict[str, Any]:
    async def first() -> dict[str, Any]:
        async for kind, data in events:
            if kind == wanted:
                return data
        raise AssertionError("the page stream ended")

    return await asyncio.wait_for(first(), 10)


async def another_token(platform: Platformer, player: str) -> str:
    """A second player's stream token (issue_token adds the arbiter Cam, once)."""
    await seat(platform, player)
    response = await platform.client.post(f"/api/v1/players/{player}/stream-token", headers=CAM)
    assert response.status == 201, await response.text()
    return str((await response.json())["token"])


class Tone(MediaStreamTrack):
    """An arbiter's microphone: a 440 Hz tone, 20 ms frames at 48 kHz, in real time."""

    kind = "audio"

    def __init__(self) -> None:
        super().__init__()
        self.samples = 0
        self.started = time.monotonic()

    async def recv(self) -> AudioFrame:
        if self.readyState != "live":
            raise MediaStreamError
        rate, count = 48_000, int(48_000 * AUDIO_PTIME)
        await asyncio.sleep(max(0.0, self.started + self.samples / rate - time.monotonic()))
        t = (self.samples + np.arange(count)) / rate
        wave = (0.3 * 32767 * np.sin(2 * math.pi * TONE_HZ * t)).astype("<i2")
        frame = AudioFrame.from_ndarray(wave.reshape(1, -1), format="s16", layout="mono")
        frame.sample_rate, frame.pts, frame.time_base = rate, self.samples, Fraction(1, rate)
        self.samples += count
        return frame


class Listener:
    """A peer connection that keeps every sound frame it receives (mono): a player's page hearing an arbiter."""

    def __init__(self) -> None:
        self.pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
        self.sound: list[np.ndarray[Any, Any]] = []
        self.task: asyncio.Task[None] | None = None

        @self.pc.on("track")
        def on_track(track: MediaStreamTrack) -> None:
            if track.kind == "audio":
                self.task = asyncio.get_running_loop().create_task(self._keep(track))

    async def _keep(self, track: MediaStreamTrack) -> None:
        while True:
            try:
                frame = await track.recv()
            except MediaStreamError:
                return
            if isinstance(frame, AudioFrame):
                samples = frame.to_ndarray().astype(np.float32) / 32768
                channels = len(frame.layout.channels)
                self.sound.append(samples.reshape(-1, channels).mean(axis=1))  # interleaved s16 → mono

    def loud_frames(self) -> int:
        return sum(float(np.sqrt(np.mean(s * s))) > 0.05 for s in self.sound)

    def main_frequency(self) -> float:
        sound = np.concatenate(self.sound[-50:])  # the last second
        spectrum = np.abs(np.fft.rfft(sound * np.hanning(len(sound))))
        return float(np.argmax(spectrum) * 48_000 / len(sound))

    async def close(self) -> None:
        if self.task is not None:
            self.task.cancel()
        await self.pc.close()


class Page(Listener):
    """The player's page: its camera sent to the service, whatever sound the service sends received and kept."""

    def __init__(self, hears: bool = True) -> None:
        super().__init__()
        self.pc.addTrack(MovingPicture(5))
        if hears:
            self.pc.addTransceiver("audio", direction="recvonly")

    async def join(self, platform: Platformer, token: str) -> None:
        await self.pc.setLocalDescription(await self.pc.createOffer())
        response = await platform.client.post("/api/v1/rtc/offer", json={
            "sdp": self.pc.localDescription.sdp, "type": "offer", "token": token})  # fmt: skip
        assert response.status == 200, await response.text()
        answer = await response.json()
        await self.pc.setRemoteDescription(RTCSessionDescription(answer["sdp"], answer["type"]))


async def desk_offer(track: MediaStreamTrack | None = None) -> tuple[RTCPeerConnection, dict[str, str]]:
    pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
    if track is not None:
        pc.addTrack(track)
    else:
        pc.addTransceiver("video", direction="recvonly")  # a desk that sends no sound
    await pc.setLocalDescription(await pc.createOffer())
    return pc, {"sdp": pc.localDescription.sdp, "type": "offer"}


async def test_an_arbiter_speaks_to_a_player_and_the_page_plays_it(platform: Platformer, settings: Settings) -> None:
    token = await issue_token(platform, settings, "p1")
    stream = await platform.client.get(f"/api/v1/play/{token}/events")
    events = page_events(stream)
    assert (await anext(events))[0] == "state"
    page = Page()
    await page.join(platform, token)
    ingest = app_context(platform).camera.ingest
    await wait_for(lambda: ingest.live("p1") is not None and ingest.live("p1").frames_received > 3)
    desk, offer = await desk_offer(Tone())
    try:
        response = await platform.client.post("/api/v1/players/p1/talk", json=offer, headers=CAM)
        assert response.status == 201, await response.text()
        talk = await response.json()
        assert (talk["player"], talk["arbiter"]) == ("p1", "Cam (arbiter)")
        await desk.setRemoteDescription(RTCSessionDescription(talk["sdp"], talk["type"]))
        told = await next_event_of(events, "talk")
        assert told["speaking"] is True
        await wait_for(lambda: page.loud_frames() >= 50, 15)  # a second of the tone reached the page
        assert abs(page.main_frequency() - TONE_HZ) < 10, page.main_frequency()
        await asyncio.sleep(1)
        response = await platform.client.delete(f"/api/v1/players/p1/talk/{talk['id']}", headers=CAM)
        assert response.status == 200, await response.text()
        assert (await response.json())["seconds"] >= 1
        assert (await next_event_of(events, "talk"))["speaking"] is False
        heard = page.loud_frames()
        await asyncio.sleep(1)
        assert page.loud_frames() <= heard + 5  # the talk ended: nothing more is sent (a few frames in flight)
        again = await platform.client.delete(f"/api/v1/players/p1/talk/{talk['id']}", headers=CAM)
        assert again.status == 404
    finally:
        await desk.close()
        await page.close()
        stream.close()
    opened, closed = audit(settings, "camera.talk"), audit(settings, "camera.talk-end")
    assert [(row.actor, row.subject) for row in opened] == [("Cam (arbiter)", "player:p1")]
    assert closed[0].detail["talk"] == opened[0].detail["talk"] and closed[0].detail["seconds"] >= 1
    assert closed[0].detail["reason"] == "closed by the arbiter"


async def test_who_may_speak_to_a_player_and_when(platform: Platformer, settings: Settings) -> None:
    token = await issue_token(platform, settings, "p1")
    deaf_token = await another_token(platform, "p2")
    engine = create_database_engine(settings)
    with engine.begin() as connection:
        for name, role in (("Li", "chief"), ("Rev", "reviewer")):
            connection.execute(insert(Arbiter).values(name=name, role=role, token_hash=token_hash(name)))
    engine.dispose()
    page, deaf = Page(), Page(hears=False)
    await page.join(platform, token)
    await deaf.join(platform, deaf_token)
    ingest = app_context(platform).camera.ingest
    await wait_for(lambda: all(ingest.live(p) is not None for p in ("p1", "p2")))
    desks = []
    try:
        for headers, player, track, status in (
            ({"Authorization": "Bearer Rev"}, "p1", Tone(), 403),  # the review panel only reads
            (CAM, "p2", Tone(), 409),  # a page that cannot play sound
            (CAM, "p3", Tone(), 409),  # no live camera at all
            (CAM, "p1", None, 400),  # an offer that sends no sound
            (CAM, "p1", Tone(), 201),
            ({"Authorization": "Bearer Li"}, "p1", Tone(), 409),  # another arbiter is speaking to the player
        ):
            desk, offer = await desk_offer(track)
            desks.append(desk)
            response = await platform.client.post(f"/api/v1/players/{player}/talk", json=offer, headers=headers)
            body = await response.json()
            assert response.status == status, (headers, player, body)
            if status == 409 and player == "p1":
                assert "Cam (arbiter) is already speaking" in body["message"]
            if status == 201:
                await desk.setRemoteDescription(RTCSessionDescription(body["sdp"], body["type"]))
        await wait_for(lambda: page.loud_frames() > 10, 15)  # Cam's desk is connected and heard
        await desks[4].close()  # the speaking desk goes away: its talk ends by itself, and Li may speak
        await wait_for(lambda: not app_context(platform).camera.talks.talks, 10)
        desk, offer = await desk_offer(Tone())
        desks.append(desk)
        response = await platform.client.post(
            "/api/v1/players/p1/talk", json=offer, headers={"Authorization": "Bearer Li"}
        )
        assert response.status == 201, await response.text()
    finally:
        for desk in desks:
            await desk.close()
        await page.close()
        await deaf.close()
    ended = audit(settings, "camera.talk-end")
    assert ended and ended[0].detail["reason"].startswith(("connection", "desk gone"))
