"""WebRTC ingest (aiortc): one peer connection per player stream, every track drained, frames analysed at a set rate
off the event loop, and the stream's own liveness timeline (camera, separate from the game feed's).

This is the thin I/O adapter around :mod:`video.checks`: it converts frames and hands them to the pure checks.
Frames that arrive while the previous one is still being analysed, or before the next analysis is due, are dropped:
an overloaded stream loses frames, never memory (aiortc queues every decoded frame that is not consumed).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import io
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import asdict, dataclass, field, replace
from fractions import Fraction
from typing import Any

import av
import cv2
import numpy as np
from aiortc import MediaStreamTrack, RTCConfiguration, RTCIceServer, RTCPeerConnection, RTCSessionDescription
from aiortc.contrib.media import MediaRelay
from aiortc.mediastreams import MediaStreamError
from av import VideoFrame

from engine.liveness import Source, Timeline
from video.analysis import FrameAnalyser
from video.analysis_processes import AnalysisProcesses, AnalysisSlot
from video.checks import Box, Check, FaceDetector, Finding, Frame, Monitor, Observation, Thresholds
from video.conversion import CLIP_SIZE, camera_picture, picture, small_jpeg, to_jpeg
from video.devices import Device, DeviceThresholds, StreamKey, device_monitor
from video.janus import JanusHandle
from video.janus import subscribe as janus_subscribe
from video.reference_view import (
    SCREEN_COVERAGE,
    ReferenceView,
    ViewComparison,
    ViewWatch,
    compare_view,
    compare_views,
    followed,
)
from video.segmentation import PersonSegmenter
from video.voice import PlayerVoice

log = logging.getLogger("proctor.video")

FindingHandler = Callable[[StreamKey, Finding, bytes | None], None]
"""(the stream: player and device, finding, JPEG snapshot or None) — called on the event loop."""
AudioHandler = Callable[["StreamSession", MediaStreamTrack], bool]
"""(the front stream, its audio track): True when the microphone check took the track (video.audio)."""
ClipHandler = Callable[[StreamKey, Finding, bytes], None]
"""(the stream, the finding that started, a WebM clip of the stream around it) — called on the event loop."""
StillHandler = Callable[[StreamKey, float, bytes], None]
"""(the stream, when, a JPEG of the frame) — a shared screen's evidence still, called on the event loop."""

SCREEN_STILL_WIDTH = 1280
"""A shared screen's evidence stills are kept at most this wide (text on a board stays legible)."""

DEGRADED_WINDOW_S = 10.0
"""The achieved analysis rate is measured over this window..."""
DEGRADED_SHARE = 0.8
"""...and below this share of the set rate (with frames arriving fast enough) the analysis is degraded..."""
RECOVERED_SHARE = 0.95
"""...until it is back above this share."""


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


@dataclass(frozen=True, slots=True)
class CapturedFrame:
    """One analysed frame of a capture: its time, its clip frame (small JPEG), the full frame as a JPEG when stills
    were asked for, and the faces the detector found in it."""

    at: float
    small: bytes
    still: bytes | None
    faces: tuple[Box, ...]
    observation: Observation | None = None
    """What the checks saw in it (the pan check judges these)."""


@dataclass
class Capture:
    """The analysed frames of a stream from ``start`` to ``until`` (an arbiter's prompt), kept apart from the ring
    buffer so that the ring buffer stays as short as the findings' clips need."""

    start: float
    until: float
    stills: bool = False
    frames: list[CapturedFrame] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class CaptureResult:
    frames: tuple[CapturedFrame, ...]
    clip: bytes
    """A WebM clip of the frames (empty when no frame arrived in the window)."""

    def to_json(self) -> dict[str, Any]:
        """As JSON (the pictures and the clip in base64): what a worker answers the service (proctor.worker)."""
        return {
            "frames": [
                {"at": f.at, "small": _b64(f.small), "still": _b64(f.still) if f.still is not None else None,
                 "faces": [asdict(box) for box in f.faces],
                 "observation": asdict(f.observation) if f.observation is not None else None}
                for f in self.frames
            ],
            "clip": _b64(self.clip),
        }  # fmt: skip

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CaptureResult:
        """Read back what :meth:`to_json` wrote; ValueError (or KeyError, TypeError) when it is not that."""
        frames = tuple(
            CapturedFrame(float(f["at"]), base64.b64decode(f["small"], validate=True),
                          base64.b64decode(f["still"], validate=True) if f.get("still") else None,
                          tuple(Box.from_json(box) for box in f.get("faces", ())),
                          Observation.from_json(f["observation"]) if f.get("observation") else None)
            for f in data["frames"]
        )  # fmt: skip
        return cls(frames, base64.b64decode(data.get("clip") or "", validate=True))


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def turned_furthest(frames: Sequence[CapturedFrame]) -> tuple[CapturedFrame, CapturedFrame] | None:
    """The frames where the head is turned furthest to the left and to the right of the picture (as the camera sees
    it), to show both ears: by the largest face's turn (:attr:`video.checks.Box.turn`, from the nose's place between
    the eyes) where the detector gives landmarks, else by its centre's horizontal offset from the median over the
    frames.  None when fewer than two frames show a face."""
    turns = [(frame, turn) for frame in frames if (turn := face_turn(frame)) is not None]
    if len(turns) >= 2:
        scored = turns
    else:
        centres = [(frame, centre) for frame in frames if (centre := face_centre(frame)) is not None]
        if len(centres) < 2:
            return None
        median = float(np.median([centre for _, centre in centres]))
        scored = [(frame, centre - median) for frame, centre in centres]
    left = min(scored, key=lambda item: item[1])[0]
    right = max(reversed(scored), key=lambda item: item[1])[0]  # the last of equals: two frames, not one
    return left, right


def ear_crop(frame: CapturedFrame) -> bytes | None:
    """The ear the camera can see in a still of a turned head (36.2), as a JPEG for the arbiter: beside the largest
    face, on the side away from where the nose points, from the face's middle to half a face-width beyond its edge,
    and a little taller than the face.  None without a still, a face or landmarks."""
    if frame.still is None or not frame.faces:
        return None
    face = max(frame.faces, key=lambda box: box.width * box.height)
    if face.turn is None:
        return None
    image = cv2.imdecode(np.frombuffer(frame.still, np.uint8), cv2.IMREAD_COLOR)
    if image is None:
        return None
    height, width = image.shape[:2]
    middle = face.x + face.width // 2
    left, right = (middle, face.x + 3 * face.width // 2) if face.turn < 0 else (face.x - face.width // 2, middle)
    top, bottom = face.y - face.height // 10, face.y + face.height * 11 // 10
    crop = image[max(0, top) : min(height, bottom), max(0, left) : min(width, right)]
    return to_jpeg(crop.astype(np.uint8, copy=False), quality=90) if crop.size else None


def face_turn(frame: CapturedFrame) -> float | None:
    """How far the frame's largest face is turned (None without a face or without landmarks)."""
    if not frame.faces:
        return None
    return max(frame.faces, key=lambda box: box.width * box.height).turn


def face_centre(frame: CapturedFrame) -> float | None:
    """The horizontal centre of the frame's largest face, in pixels (None without a face)."""
    if not frame.faces:
        return None
    largest = max(frame.faces, key=lambda box: box.width * box.height)
    return largest.x + largest.width / 2


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
    face_interval_s: float = 0.9
    """The models run on an analysed frame at least this long after their last run (about once a second at the
    default 2 analysed frames a second), unless something is changing (:class:`video.analysis.FrameAnalyser`)..."""
    still_interval_s: float = 2.4
    """...and this long while nothing moves outside the player."""
    people: PersonSegmenter | None = None
    analyser: FrameAnalyser = field(init=False)
    busy: bool = False
    next_due: float = 0.0
    analysed_at: deque[float] = field(default_factory=lambda: deque(maxlen=64))
    """When the last analysed frames were taken (for the achieved rate)."""
    received_at: deque[float] = field(default_factory=lambda: deque(maxlen=256))
    """When the last frames arrived (the rate the player sends at)."""
    degraded_since: float | None = None
    """Since when the analysis has fallen behind its set rate although frames arrive fast enough
    (:attr:`degraded`)."""
    tasks: set[asyncio.Task[Any]] = field(default_factory=set)
    captures: list[Capture] = field(default_factory=list)
    opened_at: float = field(default_factory=time.time)
    """When the offer was accepted."""
    closed_at: float | None = None
    """When the peer connection failed or closed."""
    thumbnail: bytes | None = None
    frame_size: tuple[int, int] | None = None
    """The last analysed frame's width and height (the SFU's low simulcast layer is half the camera's)."""
    """The last analysed frame as a small JPEG (CLIP_SIZE), for the arbiters' dashboard; overwritten each time."""
    relay: MediaRelay = field(default_factory=MediaRelay)
    """Fans the player's video track out: the analysis is one subscriber, each arbiter's live view another."""
    source: MediaStreamTrack | None = None
    """The player's incoming video track (once it arrived)."""
    sound: MediaStreamTrack | None = None
    """The player's incoming microphone track, once it arrived and is listened to (the section requires it): an
    arbiter watching the player live may hear it too (:meth:`Ingest.relayed_sound`)."""
    device: Device = Device.FRONT
    """Which of the player's devices this stream is (video.devices): the screen is kept, not analysed; a camera with
    an approved reference view (the side camera) is also compared with it."""
    limits: DeviceThresholds = field(default_factory=DeviceThresholds)
    reference: ReferenceView | None = None
    """The approved view of this camera (an arbiter's reference still), once given."""
    view: ViewWatch = field(default_factory=ViewWatch)
    viewed_at: float = float("-inf")
    """When the picture was last compared with the reference view."""
    on_still: StillHandler | None = None
    stilled_at: float = float("-inf")
    """When the shared screen's last evidence still was kept."""
    slot: AnalysisSlot | None = None
    """Where the frames are analysed when the ingest has analysis processes (video.analysis_processes); None: in
    the executor, with :attr:`analyser`."""
    last_faces: tuple[Box, ...] = ()
    """The faces in the last analysed frame."""
    searches: int = 0
    """How many of the analysed frames the models ran on (the analysis's cost: the benchmarks print it)."""

    def __post_init__(self) -> None:
        self.analyser = FrameAnalyser(self.monitor, self.detector, self.people, self.face_interval_s,
                                      self.still_interval_s, self.rate)  # fmt: skip

    @property
    def key(self) -> StreamKey:
        return StreamKey(self.player_ref, self.device)

    def active(self) -> list[Finding]:
        """The findings that hold now (the reference view's too)."""
        moved = self.view.active
        return self.monitor.active() + ([moved] if moved is not None and moved.check in self.monitor.enabled
                                        else [])  # fmt: skip

    def set_reference(self, reference: ReferenceView | None) -> None:
        """A new approved view (None: none): compared from the next analysed frame, the watch begun anew (a finding
        of the old view that held ends with it)."""
        self.reference, self.viewed_at = reference, float("-inf")
        if self.device is Device.SCREEN:
            self.view = ViewWatch(self.limits.screen_changed_s, self.monitor.thresholds.clear_s, Check.SCREEN_CHANGED)
        else:
            self.view = ViewWatch(self.limits.camera_moved_s, self.monitor.thresholds.clear_s)

    def receiving(self, now: float, within_s: float) -> bool:
        """Whether the stream is up and sent a frame in the last ``within_s`` seconds (or was opened that recently,
        and is still being set up)."""
        last = self.received_at[-1] if self.received_at else self.opened_at
        return self.closed_at is None and now - last < within_s

    @property
    def faces(self) -> tuple[Box, ...]:
        return self.last_faces

    def rate_achieved(self, now: float, window_s: float = DEGRADED_WINDOW_S) -> float | None:
        """Analysed frames a second over the last ``window_s`` (None before the stream has run that long)."""
        if now - self.opened_at < window_s:
            return None
        return sum(1 for at in self.analysed_at if at >= now - window_s) / window_s

    def rate_received(self, now: float, window_s: float = DEGRADED_WINDOW_S) -> float:
        return sum(1 for at in self.received_at if at >= now - window_s) / window_s

    @property
    def degraded(self) -> bool:
        """The analysis cannot keep its set rate (the machine is overloaded): arbiters are told, since the checks'
        findings may then come late (``analysis-degraded`` on the camera's status)."""
        return self.degraded_since is not None

    def _watch_rate(self, now: float) -> None:
        achieved = self.rate_achieved(now)
        if achieved is None or self.closed_at is not None:
            return
        sent = self.rate_received(now)
        behind = achieved < DEGRADED_SHARE * self.rate and sent >= self.rate
        if behind and self.degraded_since is None:
            self.degraded_since = now
            log.warning("analysis degraded: %.1f of %.1f frames a second", achieved, self.rate)
        elif not behind and achieved >= RECOVERED_SHARE * self.rate:
            self.degraded_since = None

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
            self.received_at.append(now)
            if self.timeline.is_down:
                self.timeline = self.timeline.up(int(now * 1000))
            self._arrived(now)
            if self.busy or now < self.next_due:
                self.frames_dropped += 1
                continue
            self.busy = True
            # Keep the cadence: the next frame is due one period after this one was due, not after it was taken
            # (frames arrive at their own times), unless the stream fell a whole period behind.
            self.next_due = max(self.next_due + 1 / self.rate, now + 0.5 / self.rate)
            self.analysed_at.append(now)
            task = loop.create_task(self._analyse(frame, now))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)

    def _keep_screen(self, frame: VideoFrame, at: float, whole: bool) -> tuple[bytes, bytes | None, bytes | None,
                                                                             list[Finding]]:  # fmt: skip
        """In the executor: a shared screen's small JPEG (the desk's thumbnail, the clips), a larger still when one is
        due as evidence (:attr:`DeviceThresholds.screen_still_s`), the whole frame as a JPEG when a capture asks for
        it (``whole``: the approved view's still), and the comparison with the approved view when one is due
        (``screen-changed``)."""
        image: Frame = picture(frame)
        reference, comparison = self._due_view(at), None
        if reference is not None:  # the platform's page changes as the game goes on: the view follows it
            seen = ReferenceView.of(image)  # its keypoints, once: compared, and the next view if it follows
            comparison = compare_views(reference, seen, SCREEN_COVERAGE)
            self.reference = followed(reference, comparison, seen)
        findings = self._judge_view(at, comparison)
        captured = to_jpeg(image) if whole else None
        every = self.limits.screen_still_s
        still = None
        if self.on_still is not None and every > 0 and at - self.stilled_at >= every:
            height, width = image.shape[:2]
            if width > SCREEN_STILL_WIDTH:
                size = (SCREEN_STILL_WIDTH, round(height * SCREEN_STILL_WIDTH / width))
                image = cv2.resize(image, size, interpolation=cv2.INTER_AREA).astype(np.uint8, copy=False)
            still = to_jpeg(image, quality=75)
        return small_jpeg(image), still, captured, findings

    def _arrived(self, at: float) -> None:
        """A frame arrived: the stream's liveness counts from arrival, not from analysis (a busy executor, as when
        several start-of-game checks run at once, must not make a live camera look lost, nor a live share look
        stopped with ``screen_lost_s`` as short as 2.5 s). A camera's lost finding still ends only after frames for
        ``clear_s`` (its analysis); a shared screen's ends with its first frame again."""
        if self.closed_at is not None:
            return
        self.monitor.arrived(at)
        if self.device is not Device.SCREEN:
            return
        lost = self.monitor.conditions[Check.LOST]
        lost.since = None
        if lost.active is not None:  # frames again on the same connection: the share is back
            ended = Finding(Check.LOST, lost.active.started, at, lost.active.detail)
            lost.active = None
            if Check.LOST in self.monitor.enabled:
                self.on_finding(self.key, ended, None)

    async def _analyse_screen(self, frame: VideoFrame, at: float) -> None:
        """The screen is kept, not analysed by the camera checks: its thumbnail, the clips' ring buffer and its
        evidence stills; its checks are its stream's (stopped or lost, :meth:`tick`) and, once an arbiter approved
        what it shows (the platform's board), whether it still shows that (``screen-changed``)."""
        try:
            capturing = [c for c in self.captures if c.start <= at <= c.until]
            whole = any(capture.stills for capture in capturing)
            small_frame, still, captured, findings = await asyncio.get_running_loop().run_in_executor(
                self.executor, self._keep_screen, frame, at, whole
            )
            self.frames_analysed += 1
            self.thumbnail = small_frame
            if self.on_clip is not None:
                self.buffer.add(at, small_frame)
            for capture in capturing:
                capture.frames.append(CapturedFrame(at, small_frame, captured if capture.stills else None, ()))
            if still is not None and self.on_still is not None:
                self.stilled_at = at
                self.on_still(self.key, at, still)
            for finding in findings:
                self.on_finding(self.key, finding, small_frame if finding.ended is None else None)
        except Exception:
            log.exception("keeping a screen frame failed")
        finally:
            self.busy = False

    def _due_view(self, at: float) -> ReferenceView | None:
        """The approved view to compare this frame with, when one is given and a comparison is due (it is then
        counted as made)."""
        reference = self.reference
        if reference is None or at - self.viewed_at < self.limits.view_interval_s:
            return None
        self.viewed_at = at
        return reference

    def _judge_view(self, at: float, comparison: ViewComparison | None) -> list[Finding]:
        """A comparison with the approved view (None: none was due) through its temporal rule."""
        if comparison is None:
            return []
        return [f for f in self.view.feed(at, comparison) if f.check in self.monitor.enabled]

    def _observe(self, frame: VideoFrame, at: float, search: bool, reference: ReferenceView | None
                 ) -> tuple[Frame, Observation, bytes, ViewComparison | None]:  # fmt: skip
        """In the executor, all at once: the frame converted (off the event loop, which must keep draining every
        stream's packets), what it shows, its small JPEG, and how it compares with ``reference`` (if given)."""
        image: Frame = camera_picture(frame)
        comparison = compare_view(reference, image) if reference is not None else None
        return image, self.analyser.observe(image, at, search), small_jpeg(image), comparison

    async def _look(
        self, frame: VideoFrame, at: float, search: bool, still: bool, reference: ReferenceView | None
    ) -> tuple[Frame | None, Observation, bytes, bytes | None, ViewComparison | None]:
        """What the frame shows, its small JPEG, (``still``) its whole picture as a JPEG and its comparison with
        ``reference`` (the side camera's approved view, when a comparison is due): in the stream's analysis process,
        or in the executor (then with the converted picture, else None)."""
        loop = asyncio.get_running_loop()
        if self.slot is not None:
            looked = await self.slot.look(frame, at, search, still, reference)
            self.searches += looked.searched
            return None, looked.observation, looked.small, looked.still, looked.view
        searches = self.analyser.searches
        image, observation, small_frame, comparison = await loop.run_in_executor(
            self.executor, self._observe, frame, at, search, reference
        )
        self.searches += self.analyser.searches - searches
        whole = await loop.run_in_executor(self.executor, to_jpeg, image) if still else None
        return image, observation, small_frame, whole, comparison

    async def _analyse(self, frame: VideoFrame, at: float) -> None:
        if self.device is Device.SCREEN:
            await self._analyse_screen(frame, at)
            return
        try:
            loop = asyncio.get_running_loop()
            capturing = [c for c in self.captures if c.start <= at <= c.until]
            wants_still = any(capture.stills for capture in capturing)
            # The models run about once a second (every analysed frame during a capture, whose stills need the
            # faces); the frames between reuse what they found.
            # The side camera's comparison with its approved view (ORB, tens of ms) runs where the analysis runs.
            reference = self._due_view(at)
            image, observation, small_frame, still, comparison = await self._look(
                frame, at, bool(capturing), wants_still, reference
            )
            self.frames_analysed += 1
            self.frame_size = (frame.width, frame.height)
            self.last_faces = observation.faces
            findings = self.monitor.feed(observation) + self._judge_view(at, comparison)
            self.thumbnail = small_frame
            if self.on_clip is not None or capturing:
                if self.on_clip is not None:
                    self.buffer.add(at, small_frame)
                for capture in capturing:
                    capture.frames.append(
                        CapturedFrame(
                            at, small_frame, still if capture.stills else None, observation.faces, observation
                        )
                    )
            for finding in findings:
                snapshot = None
                if finding.ended is None:
                    if image is None:
                        image = await loop.run_in_executor(self.executor, camera_picture, frame)
                    snapshot = to_jpeg(image)
                self.on_finding(self.key, finding, snapshot)
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
        self.on_clip(self.key, finding, clip)

    def begin_capture(self, seconds: float, stills: bool = False) -> Capture:
        """Keep every analysed frame from now for ``seconds`` (see :meth:`finish_capture`)."""
        now = time.time()
        capture = Capture(now, now + seconds, stills)
        self.captures.append(capture)
        return capture

    async def finish_capture(self, capture: Capture) -> CaptureResult:
        """Wait for the capture's window to end; its frames and their clip."""
        try:
            await asyncio.sleep(max(0.0, capture.until - time.time()))
        finally:
            self.captures.remove(capture)
        frames = tuple(capture.frames)
        if not frames:
            return CaptureResult(frames, b"")
        clip = await asyncio.get_running_loop().run_in_executor(
            self.executor, encode_clip, [(f.at, f.small) for f in frames], self.rate
        )
        return CaptureResult(frames, clip)

    def tick(self, now: float) -> None:
        self._watch_rate(now)
        findings = self.monitor.tick(now)
        lost = self.monitor.conditions[Check.LOST].active
        if lost is not None and not self.timeline.is_down:
            # The stream's liveness is its own timeline, whether or not the section reports lost cameras.
            self.timeline = self.timeline.down(int(lost.started * 1000))
        for finding in findings:
            self.on_finding(self.key, finding, None)

    def end(self, now: float, detail: str) -> None:
        """The stream ended as the player's page says (a screen share the player stopped): lost now, not after
        ``lost_s`` of silence."""
        if self.closed_at is None:
            self.closed_at = now
        state = self.monitor.conditions[Check.LOST]
        if state.active is not None:
            return
        since = self.monitor.last_frame_at if self.monitor.last_frame_at is not None else now
        state.since, state.active = since, Finding(Check.LOST, since, None, detail)
        if not self.timeline.is_down:
            self.timeline = self.timeline.down(int(since * 1000))
        if Check.LOST in self.monitor.enabled:
            self.on_finding(self.key, state.active, None)


def _transport_closed(pc: RTCPeerConnection | None) -> bool:
    """Whether the browser closed the connection (its DTLS transport closed or failed: a page closed), which aiortc
    does not turn into the peer connection's state."""
    if pc is None:
        return False
    transports = [t.receiver.transport for t in pc.getTransceivers() if t.receiver.transport is not None]
    return any(transport.state in ("closed", "failed") for transport in transports)


@dataclass(frozen=True, slots=True)
class EndedStream:
    """What is kept of a stream that ended: when it was open, its frame counts and what it had found."""

    opened_at: float
    closed_at: float | None
    frames_received: int
    frames_analysed: int
    frames_dropped: int
    findings: tuple[Finding, ...]

    @classmethod
    def of(cls, session: StreamSession) -> EndedStream:
        return cls(session.opened_at, session.closed_at, session.frames_received, session.frames_analysed,
                   session.frames_dropped, tuple(session.monitor.active()))  # fmt: skip

    def active(self) -> list[Finding]:
        return list(self.findings)


@dataclass
class IngestSettings:
    ice_servers: list[RTCIceServer] = field(default_factory=list)
    """Explicit ICE servers; none by default (never aiortc's silent public STUN)."""
    rate: float = 2.0
    thresholds: Thresholds = field(default_factory=Thresholds)
    clip: ClipSettings = field(default_factory=ClipSettings)
    face_interval_s: float = 0.9
    """Look for faces about once a second (:attr:`StreamSession.face_interval_s`)..."""
    still_interval_s: float = 2.4
    """...and every few seconds while nothing moves outside the player (:attr:`StreamSession.still_interval_s`)."""
    opencv_threads: int = 1
    """OpenCV's own worker threads (a process-wide setting, applied by :meth:`Ingest.start`).  One: the streams are
    analysed in parallel by the executor already, and OpenCV's pool on top of it costs half as much CPU again for the
    same frames (measured: CenterFace 23 ms of CPU per frame on one thread, 36 ms on two)."""


@dataclass(frozen=True, slots=True)
class StreamPolicy:
    """What one stream is checked against: the player's section's thresholds and checks, or the service's."""

    thresholds: Thresholds = field(default_factory=Thresholds)
    enabled: frozenset[Check] = frozenset(Check)
    """The checks that may raise findings (:attr:`video.checks.Monitor.enabled`), each device's within its own
    (:data:`video.devices.DEVICE_CHECKS`)."""
    devices: DeviceThresholds = field(default_factory=DeviceThresholds)
    """The side camera's and the screen's own thresholds."""


class Ingest:
    """Every player's peer connection and stream session in this process."""

    def __init__(self, settings: IngestSettings, detector: FaceDetector | None, executor: Executor,
                 on_finding: FindingHandler, on_clip: ClipHandler | None = None,
                 people: PersonSegmenter | None = None,
                 processes: AnalysisProcesses | None = None) -> None:  # fmt: skip
        self.settings = settings
        self.processes = processes
        """Where the cameras' frames are analysed (video.analysis_processes); None: in the executor's threads."""
        self.on_clip = on_clip
        self.detector = detector
        self.people = people
        self.ended: dict[StreamKey, EndedStream] = {}
        """Each stream's last session that ended, once its camera-lost was raised (or it was replaced): removed from
        :attr:`sessions`, so that the watchdog ticks only the streams that can still raise something."""
        self.executor = executor
        self.on_finding = on_finding
        self.on_still: StillHandler | None = None
        """Where a shared screen's evidence stills go (none: not kept)."""
        self.on_audio: AudioHandler | None = None
        """Who listens to a front stream's audio track (the microphone check, proctor.microphone); it returns False
        to leave the track to be drained unheard."""
        self.connections: dict[StreamKey, RTCPeerConnection] = {}
        self.sessions: dict[StreamKey, StreamSession] = {}
        """By player and device (video.devices): a player's front camera, side camera and screen are three."""
        self.leave_until: dict[str, float] = {}
        """Leave of the area granted per player (36.4.1): kept here, so that a reconnected stream keeps it."""
        self.references: dict[StreamKey, ReferenceView] = {}
        """Each camera's approved view (the side camera's reference still): kept here, so that a reconnected stream
        is compared with it."""
        self.voices: dict[str, PlayerVoice] = {}
        """What arbiters say to each player (video.voice): sent on the player's front connection, if its offer can
        receive sound."""
        self._watchdog: asyncio.Task[None] | None = None

    def start(self) -> None:
        cv2.setNumThreads(self.settings.opencv_threads)
        self._watchdog = asyncio.get_running_loop().create_task(self._watch())

    async def _watch(self) -> None:
        while True:
            await asyncio.sleep(0.5)
            self.sweep(time.time())

    def sweep(self, now: float) -> None:
        """Tick every stream (lost cameras, the analysis rate); retire those that ended and have said so."""
        for key, session in list(self.sessions.items()):
            if (
                session.device is Device.SCREEN
                and session.closed_at is None
                and _transport_closed(self.connections.get(key))
            ):  # the page was closed or its share's connection ended: at once, not after screen_lost_s
                session.end(now, "the screen share's connection ended")
            session.tick(now)
            if session.closed_at is not None and (
                session.monitor.conditions[Check.LOST].active is not None or not session.frames_received
            ):
                self._retire(key, session)

    def _retire(self, key: StreamKey, session: StreamSession) -> None:
        """The stream ended and what it had to say is said: keep its summary, drop the rest."""
        if self.sessions.get(key) is session:
            del self.sessions[key]
        self.ended[key] = EndedStream.of(session)
        for task in list(session.tasks):
            task.cancel()
        if session.slot is not None:
            session.slot.close()

    def last(self, player_ref: str, device: Device = Device.FRONT) -> StreamSession | EndedStream | None:
        """The player's stream of this device, live or not, or the summary of the last one that ended."""
        key = StreamKey(player_ref, device)
        return self.sessions.get(key) or self.ended.get(key)

    async def answer(
        self, player_ref: str, sdp: str, kind: str, policy: StreamPolicy | None = None,
        device: Device = Device.FRONT,
    ) -> RTCSessionDescription:  # fmt: skip
        """Accept a player's offer for one of their devices and return the answer; a bad SDP raises ValueError and
        allocates nothing.  ``policy``: what this stream is checked against (the service's thresholds and every check
        without one), within the device's own checks (:data:`video.devices.DEVICE_CHECKS`).  An earlier stream of
        the same device is replaced; the player's other devices are not touched."""
        pc, session = self._connection(player_ref, policy, device)
        try:
            await pc.setRemoteDescription(RTCSessionDescription(sdp=sdp, type=kind))
            hears = device is Device.FRONT and any(t.kind == "audio" for t in pc.getTransceivers())
            if hears:  # the page can play what an arbiter says to the player (video.voice)
                pc.addTrack(self.voices.setdefault(player_ref, PlayerVoice()).outlet())
            await pc.setLocalDescription(await pc.createAnswer())
        except Exception as error:
            await pc.close()
            raise ValueError(f"the offer cannot be used: {error}") from None
        if device is Device.FRONT and not hears and player_ref in self.voices:
            self.voices[player_ref].detach()  # this page cannot play sound: no arbiter can speak to it
        await self._install(pc, session)
        description = pc.localDescription
        assert description is not None
        return description

    async def subscribe(
        self, player_ref: str, handle: JanusHandle, room: int, feed: int, policy: StreamPolicy | None = None,
        device: Device = Device.FRONT, pin: str = "", substream: int | None = None,
    ) -> None:  # fmt: skip
        """Take a player's device from the SFU (the distributed mode, issue 16): subscribe to its ``feed`` in
        Janus's ``room`` through ``handle`` (video.janus) and analyse it as a stream the player offered directly
        (:meth:`answer`); ``substream``: the simulcast layer to take (0, the lowest; None: Janus's default, the
        highest).  Janus's refusal raises :class:`video.janus.JanusError` and allocates nothing."""
        pc, session = self._connection(player_ref, policy, device)
        try:
            await janus_subscribe(handle, pc, room, feed, pin, substream)
        except BaseException:
            await pc.close()
            raise
        await self._install(pc, session)

    def _connection(
        self, player_ref: str, policy: StreamPolicy | None, device: Device
    ) -> tuple[RTCPeerConnection, StreamSession]:
        """A new peer connection for a player's device and its stream session, its tracks going to the session."""
        pc = RTCPeerConnection(RTCConfiguration(iceServers=list(self.settings.ice_servers)))
        clip = self.settings.clip
        policy = policy or StreamPolicy(self.settings.thresholds)
        thresholds = policy.thresholds
        if device is Device.SCREEN:
            thresholds = replace(thresholds, lost_s=policy.devices.screen_lost_s)
        monitor = device_monitor(thresholds, policy.enabled, device)
        session = StreamSession(player_ref, monitor, self.detector, self.executor,
                                self.on_finding, self.settings.rate, self.on_clip, clip,
                                RingBuffer(clip.before_s + clip.after_s + 1),
                                face_interval_s=self.settings.face_interval_s,
                                still_interval_s=self.settings.still_interval_s, people=self.people,
                                device=device, limits=policy.devices, on_still=self.on_still)  # fmt: skip
        key = session.key
        session.monitor.leave_granted_until = self.leave_until.get(player_ref, 0.0)
        session.set_reference(self.references.get(key))

        @pc.on("track")
        def on_track(track: MediaStreamTrack) -> None:
            self._take(session, track)

        @pc.on("connectionstatechange")
        async def on_state() -> None:
            if pc.connectionState in ("failed", "closed"):
                await self._drop(key, pc)

        return pc, session

    async def _install(self, pc: RTCPeerConnection, session: StreamSession) -> None:
        """The connection and its session become the device's stream (its analysis given a place before its first
        frame can arrive); an earlier one of the same device is ended and replaced."""
        key = session.key
        if self.processes is not None and session.device is not Device.SCREEN:
            thresholds = session.monitor.thresholds
            session.slot = self.processes.slot(thresholds, self.settings.face_interval_s,
                                               self.settings.still_interval_s, self.settings.rate)  # fmt: skip
        previous = self.connections.get(key)
        replaced = self.sessions.get(key)
        self.connections[key] = pc
        self.sessions[key] = session
        if replaced is not None:
            if replaced.closed_at is None:
                replaced.closed_at = time.time()
            self.ended[key] = EndedStream.of(replaced)
            for task in list(replaced.tasks):
                task.cancel()
            if replaced.slot is not None:
                replaced.slot.close()
        if previous is not None:
            await previous.close()

    async def _drop(self, key: StreamKey, pc: RTCPeerConnection) -> None:
        if self.connections.get(key) is pc:
            del self.connections[key]
            session = self.sessions.get(key)
            if session is not None and session.closed_at is None:
                session.closed_at = time.time()
        await pc.close()

    async def release(self, player_ref: str, device: Device) -> bool:
        """Stop taking this stream, silently: no finding is raised (another analysis worker takes it over, or its
        publisher changed; the distributed mode).  False when the device has no stream here."""
        key = StreamKey(player_ref, device)
        session = self.sessions.pop(key, None)
        pc = self.connections.pop(key, None)
        if session is not None:
            for task in list(session.tasks):
                task.cancel()
            if session.slot is not None:
                session.slot.close()
        if pc is not None:
            await pc.close()
        return session is not None

    def grant_leave(self, player_ref: str, until: float) -> None:
        """The player may be away until ``until`` (seconds): the left-area check stays quiet, on this player's
        cameras and on any stream the player opens later."""
        self.leave_until[player_ref] = until
        for device in Device:
            session = self.sessions.get(StreamKey(player_ref, device))
            if session is not None:
                session.monitor.leave_granted_until = until

    def set_reference(self, player_ref: str, device: Device, reference: ReferenceView | None) -> None:
        """The camera's approved view (None: withdrawn), for its live stream and any it opens later."""
        key = StreamKey(player_ref, device)
        if reference is None:
            self.references.pop(key, None)
        else:
            self.references[key] = reference
        session = self.sessions.get(key)
        if session is not None:
            session.set_reference(reference)

    def end_stream(self, player_ref: str, device: Device, detail: str) -> bool:
        """The player's page says this device's stream ended (the player stopped sharing the screen): its loss is
        raised now (:meth:`StreamSession.end`).  False when the device has no stream here."""
        session = self.sessions.get(StreamKey(player_ref, device))
        if session is None:
            return False
        session.end(time.time(), detail)
        return True

    def live(self, player_ref: str, device: Device = Device.FRONT) -> StreamSession | None:
        """The player's stream of this device, if its peer connection is up (or still being set up)."""
        key = StreamKey(player_ref, device)
        pc = self.connections.get(key)
        if pc is None or pc.connectionState in ("failed", "closed"):
            return None
        session = self.sessions.get(key)
        return session if session is not None and session.closed_at is None else None

    def relayed(self, player_ref: str, device: Device = Device.FRONT) -> MediaStreamTrack | None:
        """A new subscription to the player's live video track of this device, for one viewer (who must stop it when
        done): it keeps only the latest frame, so that a slow viewer drops frames instead of queueing them.  None
        without a live video track."""
        session = self.live(player_ref, device)
        if session is None or session.source is None or session.source.readyState != "live":
            return None
        return session.relay.subscribe(session.source, buffered=False)

    def _take(self, session: StreamSession, track: MediaStreamTrack) -> None:
        """A track of the stream's connection arrived: its video analysed (and relayed, so that arbiters can watch it
        too: :meth:`relayed`); a front camera's sound to the microphone check, if the section listens (and relayed,
        so that an arbiter watching may hear it: :meth:`relayed_sound`); anything else drained unheard."""
        if track.kind == "audio" and session.device is Device.FRONT and self.on_audio is not None:
            heard = session.relay.subscribe(track)
            if self.on_audio(session, heard):
                session.sound = track
                return  # the microphone (issue 15) drains it
            track = heard
        elif track.kind == "video":
            session.source = track
            track = session.relay.subscribe(track)
        task = asyncio.get_running_loop().create_task(session.consume(track))
        session.tasks.add(task)
        task.add_done_callback(session.tasks.discard)

    def relayed_sound(self, player_ref: str) -> MediaStreamTrack | None:
        """A new subscription to the player's live microphone, for one arbiter's live view (who must stop it when
        done); None when the player sends none, or their section does not listen to it."""
        session = self.live(player_ref, Device.FRONT)
        if session is None or session.sound is None or session.sound.readyState != "live":
            return None
        return session.relay.subscribe(session.sound)

    def holding(
        self, player_ref: str, now: float, stale_s: float, device: Device = Device.FRONT
    ) -> StreamSession | None:
        """The player's stream of this device if it is live and not stale (a frame in the last ``stale_s`` seconds):
        one that a new offer must not replace."""
        session = self.live(player_ref, device)
        return session if session is not None and session.receiving(now, stale_s) else None

    def capture(
        self, player_ref: str, seconds: float, stills: bool = False, device: Device = Device.FRONT
    ) -> Awaitable[CaptureResult]:
        """Start keeping the player's analysed frames (of this device's camera) now, for ``seconds``; the awaitable
        gives them and their clip once the window ends.  LookupError (and nothing started) when the player has no
        live stream of it."""
        session = self.live(player_ref, device)
        if session is None:
            raise LookupError(f"no live stream for {player_ref!r}")
        return session.finish_capture(session.begin_capture(seconds, stills))

    def voice(self, player_ref: str) -> PlayerVoice | None:
        """What an arbiter says to the player, if the player's live front connection can play it (None: no live
        front camera, or a page that did not offer to receive sound)."""
        voice = self.voices.get(player_ref)
        if voice is None or voice.track is None or self.live(player_ref, Device.FRONT) is None:
            return None
        return voice

    async def close(self) -> None:
        if self._watchdog is not None:
            self._watchdog.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watchdog
        await asyncio.gather(*(voice.close() for voice in self.voices.values()), return_exceptions=True)
        await asyncio.gather(*(pc.close() for pc in self.connections.values()), return_exceptions=True)
        for session in self.sessions.values():
            for task in list(session.tasks):
                task.cancel()
            if session.slot is not None:
                session.slot.close()
        self.connections.clear()
