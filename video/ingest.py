"""WebRTC ingest (aiortc): one peer connection per player stream, every track drained, frames analysed at a set rate
off the event loop, and the stream's own liveness timeline (camera, separate from the game feed's).

This is the thin I/O adapter around :mod:`video.checks`: it converts frames and hands them to the pure checks.
Frames that arrive while the previous one is still being analysed, or before the next analysis is due, are dropped:
an overloaded stream loses frames, never memory (aiortc queues every decoded frame that is not consumed).
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
import time
from collections import deque
from collections.abc import Callable, Coroutine
from concurrent.futures import Executor
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import av
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
ClipHandler = Callable[[str, Finding, bytes], None]
"""(player ref, the finding that started, a WebM clip of the stream around it) — called on the event loop."""

CLIP_SIZE = (320, 240)
"""Clip frames are kept at this size (JPEG), so that a stream's ring buffer stays small (about 10 kB a frame)."""


@dataclass(frozen=True, slots=True)
class ClipSettings:
    before_s: float = 10.0
    """The clip starts this long before the finding is raised..."""
    after_s: float = 5.0
    """...and ends this long after."""


class RingBuffer:
    """The last few seconds of a stream's analysed frames, as small JPEGs with their times."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.frames: deque[tuple[float, bytes]] = deque()

    def add(self, at: float, jpeg: bytes) -> None:
        self.frames.append((at, jpeg))
        while self.frames and self.frames[0][0] < at - self.seconds:
            self.frames.popleft()

    def between(self, start: float, end: float) -> list[tuple[float, bytes]]:
        return [(at, jpeg) for at, jpeg in self.frames if start <= at <= end]


def small_jpeg(image: Frame) -> bytes:
    small: Frame = cv2.resize(image, CLIP_SIZE, interpolation=cv2.INTER_AREA).astype(np.uint8, copy=False)
    return _jpeg(small, quality=70)


def encode_clip(frames: list[tuple[float, bytes]], rate: float) -> bytes:
    """A WebM (VP8) clip of the frames at the analysis rate; browsers play it as it is."""
    buffer = io.BytesIO()
    with av.open(buffer, "w", format="webm") as container:
        stream = container.add_stream("libvpx", rate=Fraction(rate).limit_denominator(1000))
        stream.width, stream.height, stream.pix_fmt = CLIP_SIZE[0], CLIP_SIZE[1], "yuv420p"
        for _, jpeg in frames:
            decoded = cv2.imdecode(np.frombuffer(jpeg, np.uint8), cv2.IMREAD_COLOR)
            if decoded is None:
                continue
            image: Frame = decoded.astype(np.uint8, copy=False)
            for packet in stream.encode(VideoFrame.from_ndarray(image, format="bgr24")):
                container.mux(packet)
        for packet in stream.encode(None):
            container.mux(packet)
    return buffer.getvalue()


@dataclass
class StreamSession:
    """One player's camera stream."""

    player_ref: str
    monitor: Monitor
    detector: FaceDetector | None
    executor: Executor
    on_finding: FindingHandler
    rate: float = 2.0
    on_clip: ClipHandler | None = None
    clip: ClipSettings = field(default_factory=ClipSettings)
    buffer: RingBuffer = field(default_factory=lambda: RingBuffer(ClipSettings().before_s + 1))
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
            findings = self.monitor.feed(observation)
            if self.on_clip is not None:
                self.buffer.add(at, await loop.run_in_executor(self.executor, small_jpeg, image))
            for finding in findings:
                snapshot = _jpeg(image) if finding.ended is None else None
                self.on_finding(self.player_ref, finding, snapshot)
                if finding.ended is None and self.on_clip is not None:
                    self._spawn(self._clip(finding, at))
        except Exception:  # one bad frame must not stop the stream's checks
            log.exception("analysing a frame failed")
        finally:
            self.busy = False

    def _spawn(self, coroutine: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(coroutine)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _clip(self, finding: Finding, raised_at: float) -> None:
        """The clip from ``before_s`` before the finding was raised to ``after_s`` after it."""
        await asyncio.sleep(self.clip.after_s)
        frames = self.buffer.between(raised_at - self.clip.before_s, raised_at + self.clip.after_s)
        if not frames or self.on_clip is None:
            return
        try:
            clip = await asyncio.get_running_loop().run_in_executor(self.executor, encode_clip, frames, self.rate)
        except Exception:
            log.exception("encoding a clip failed")
            return
        self.on_clip(self.player_ref, finding, clip)

    def tick(self, now: float) -> None:
        for finding in self.monitor.tick(now):
            self.timeline = self.timeline.down(int(finding.started * 1000))
            self.on_finding(self.player_ref, finding, None)


def _jpeg(image: Frame, quality: int = 80) -> bytes:
    ok, encoded = cv2.imencode(".jpg", image, [int(cv2.IMWRITE_JPEG_QUALITY), quality])
    return bytes(encoded) if ok else b""


@dataclass
class IngestSettings:
    ice_servers: list[RTCIceServer] = field(default_factory=list)
    """Explicit ICE servers; none by default (never aiortc's silent public STUN)."""
    rate: float = 2.0
    thresholds: Thresholds = field(default_factory=Thresholds)
    clip: ClipSettings = field(default_factory=ClipSettings)


class Ingest:
    """Every player's peer connection and stream session in this process."""

    def __init__(self, settings: IngestSettings, detector: FaceDetector | None, executor: Executor,
                 on_finding: FindingHandler, on_clip: ClipHandler | None = None) -> None:  # fmt: skip
        self.settings = settings
        self.on_clip = on_clip
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
        clip = self.settings.clip
        session = StreamSession(player_ref, Monitor(self.settings.thresholds), self.detector, self.executor,
                                self.on_finding, self.settings.rate, self.on_clip, clip,
                                RingBuffer(clip.before_s + clip.after_s + 1))  # fmt: skip

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
