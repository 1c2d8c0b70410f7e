"""WebRTC ingest (aiortc): one peer connection per player stream, every track drained, frames analysed at a set rate
off the event loop, and the stream's own liveness timeline (camera, separate from the game feed's).

This is the thin I/O adapter around :mod:`video.checks`: it converts frames and hands them to the pure checks.
Frames that arrive while the previous one is still being analysed, or before the next analysis is due, are dropped:
an overloaded stream loses frames, never memory (aiortc queues every decoded frame that is not consumed).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np
from aiortc import MediaStreamTrack, RTCConfiguration, RTCIceServer, RTCPeerConnection, RTCSessionDescription
from aiortc.mediastreams import MediaStreamError
from av import VideoFrame

from engine.liveness import Source, Timeline
from video.checks import FaceDetector, Finding, Frame, Monitor, Thresholds, observe

log = logging.getLogger("proctor.video")

FindingHandler = Callable[[str, Finding, bytes | None], None]
"""(player ref, finding, JPEG snapshot or None) — called on the event loop."""


@dataclass
class StreamSession:
    """One player's camera stream."""

    player_ref: str
    monitor: Monitor
    detector: FaceDetector | None
    executor: Executor
    on_finding: FindingHandler
    rate: float = 2.0
    timeline: Timeline = field(default_factory=lambda: Timeline(Source.CAMERA))
    frames_received: int = 0
    frames_analysed: int = 0
    frames_dropped: int = 0
    last_small: Frame | None = None
    busy: bool = False
    next_due: float = 0.0
    tasks: set[asyncio.Task[Any]] = field(default_factory=set)

    async def consume(self, track: MediaStreamTrack) -> None:
        """Drain the track; analyse at most ``rate`` frames a second."""
        loop = asyncio.get_running_loop()
        while True:
            try:
                frame = await track.recv()
            except MediaStreamError:
                return
            if track.kind != "video" or not isinstance(frame, VideoFrame):
                continue
            self.frames_received += 1
            now = time.time()
            if self.timeline.is_down:
                self.timeline = self.timeline.up(int(now * 1000))
            if self.busy or now < self.next_due:
                self.frames_dropped += 1
                continue
            self.busy = True
            self.next_due = now + 1 / self.rate
            image: Frame = frame.to_ndarray(format="bgr24").astype(np.uint8, copy=False)
            task = loop.create_task(self._analyse(image, now))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)

    async def _analyse(self, image: Frame, at: float) -> None:
        try:
            loop = asyncio.get_running_loop()
            observation, small = await loop.run_in_executor(
                self.executor, observe, image, at, self.last_small, self.detector
            )
            self.last_small = small
            self.frames_analysed += 1
            for finding in self.monitor.feed(observation):
                snapshot = _jpeg(image) if finding.ended is None else None
                self.on_finding(self.player_ref, finding, snapshot)
        except Exception:  # one bad frame must not stop the stream's checks
            log.exception("analysing a frame failed")
        finally:
            self.busy = False

    def tick(self, now: float) -> None:
        for finding in self.monitor.tick(now):
            self.timeline = self.timeline.down(int(finding.started * 1000))
            self.on_finding(self.player_ref, finding, None)


def _jpeg(image: Frame) -> bytes:
    ok, encoded = cv2.imencode(".jpg", image, [int(cv2.IMWRITE_JPEG_QUALITY), 80])
    return bytes(encoded) if ok else b""


@dataclass
class IngestSettings:
    ice_servers: list[RTCIceServer] = field(default_factory=list)
    """Explicit ICE servers; none by default (never aiortc's silent public STUN)."""
    rate: float = 2.0
    thresholds: Thresholds = field(default_factory=Thresholds)


class Ingest:
    """Every player's peer connection and stream session in this process."""

    def __init__(self, settings: IngestSettings, detector: FaceDetector | None, executor: Executor,
                 on_finding: FindingHandler) -> None:  # fmt: skip
        self.settings = settings
        self.detector = detector
        self.executor = executor
        self.on_finding = on_finding
        self.connections: dict[str, RTCPeerConnection] = {}
        self.sessions: dict[str, StreamSession] = {}
        self._watchdog: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._watchdog = asyncio.get_running_loop().create_task(self._watch())

    async def _watch(self) -> None:
        while True:
            await asyncio.sleep(0.5)
            now = time.time()
            for session in list(self.sessions.values()):
                session.tick(now)

    async def answer(self, player_ref: str, sdp: str, kind: str) -> RTCSessionDescription:
        """Accept a player's offer and return the answer; a bad SDP raises ValueError and allocates nothing."""
        pc = RTCPeerConnection(RTCConfiguration(iceServers=list(self.settings.ice_servers)))
        session = StreamSession(player_ref, Monitor(self.settings.thresholds), self.detector, self.executor,
                                self.on_finding, self.settings.rate)  # fmt: skip

        @pc.on("track")
        def on_track(track: MediaStreamTrack) -> None:
            task = asyncio.get_running_loop().create_task(session.consume(track))
            session.tasks.add(task)
            task.add_done_callback(session.tasks.discard)

        @pc.on("connectionstatechange")
        async def on_state() -> None:
            if pc.connectionState in ("failed", "closed"):
                await self._drop(player_ref, pc)

        try:
            await pc.setRemoteDescription(RTCSessionDescription(sdp=sdp, type=kind))
            await pc.setLocalDescription(await pc.createAnswer())
        except Exception as error:
            await pc.close()
            raise ValueError(f"the offer cannot be used: {error}") from None
        previous = self.connections.get(player_ref)
        self.connections[player_ref] = pc
        self.sessions[player_ref] = session
        if previous is not None:
            await previous.close()
        description = pc.localDescription
        assert description is not None
        return description

    async def _drop(self, player_ref: str, pc: RTCPeerConnection) -> None:
        if self.connections.get(player_ref) is pc:
            del self.connections[player_ref]
        await pc.close()

    def grant_leave(self, player_ref: str, until: float) -> None:
        session = self.sessions.get(player_ref)
        if session is not None:
            session.monitor.leave_granted_until = until

    async def close(self) -> None:
        if self._watchdog is not None:
            self._watchdog.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watchdog
        await asyncio.gather(*(pc.close() for pc in self.connections.values()), return_exceptions=True)
        for session in self.sessions.values():
            for task in list(session.tasks):
                task.cancel()
        self.connections.clear()
