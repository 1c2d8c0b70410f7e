"""The microphone's thin adapter: the player's WebRTC audio track (Opus, decoded by aiortc at 48 kHz) resampled to
16 kHz mono, cut into 32 ms chunks for the voice-activity model (run off the event loop), a ring of the last seconds
for the clips, and looks at the player's mouth on the front camera's frames while speech is heard.  The rules are
:class:`video.speech.VoiceMonitor`'s.
"""

from __future__ import annotations

import asyncio
import io
import logging
import time
import wave
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import av
import numpy as np
from aiortc import MediaStreamTrack
from aiortc.mediastreams import MediaStreamError
from av import AudioFrame, VideoFrame

from video.checks import Box
from video.conversion import pixels
from video.landmarks import FaceMesh
from video.speech import (
    CHUNK,
    SAMPLE_RATE,
    FacePatches,
    MouthView,
    Samples,
    SoundCheck,
    SoundFinding,
    SpeechSettings,
    VoiceMonitor,
    face_patches,
    level_dbfs,
    mouth_motion,
    mouth_openness,
)
from video.vad import VoiceActivity

if TYPE_CHECKING:
    from video.ingest import StreamSession

log = logging.getLogger("proctor.audio")

SoundFindingHandler = Callable[[str, SoundFinding], None]
SoundClipHandler = Callable[[str, SoundFinding, bytes], None]
"""(player ref, the voice finding, a WAV clip around it): called on the event loop."""

BATCH = 8
"""Chunks handed to the model at once (256 ms): a few calls into the executor a second per stream."""
BACKLOG_S = 10.0
"""Sound waiting for the model beyond this (an overloaded machine) is dropped, oldest first."""
FIRST_SOUND_S = 5.0
"""A stream's first sound may come this long after it opened (ICE and DTLS) before its loss starts counting."""
MOUTH_INTERVAL_S = 0.25
"""The mouth is looked at up to four times a second while speech is heard."""


class Resampler:
    """aiortc's decoded audio frames (any rate and layout) to mono float samples at 16 kHz."""

    def __init__(self) -> None:
        self.resampler = av.AudioResampler(format="flt", layout="mono", rate=SAMPLE_RATE)

    def __call__(self, frame: AudioFrame) -> Samples:
        out = [f.to_ndarray().reshape(-1) for f in self.resampler.resample(frame)]
        return np.concatenate(out).astype(np.float32) if out else np.zeros(0, dtype=np.float32)

    def flush(self) -> Samples:
        out = [f.to_ndarray().reshape(-1) for f in self.resampler.resample(None)]
        return np.concatenate(out).astype(np.float32) if out else np.zeros(0, dtype=np.float32)


def to_16k(samples: Samples, rate: int) -> Samples:
    """Mono float samples at any rate to 16 kHz, through the same resampler as the service's (20 ms frames)."""
    resample = Resampler()
    pieces = []
    step = rate // 50
    for start in range(0, len(samples), step):
        block = np.ascontiguousarray(samples[start : start + step], dtype=np.float32).reshape(1, -1)
        frame = AudioFrame.from_ndarray(block, format="flt", layout="mono")
        frame.sample_rate = rate
        pieces.append(resample(frame))
    pieces.append(resample.flush())
    return np.concatenate(pieces).astype(np.float32)


def wav_bytes(samples: Samples, rate: int = SAMPLE_RATE) -> bytes:
    """A mono 16-bit WAV file (browsers play it as it is)."""
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes((np.clip(samples, -1, 1) * 32767).astype("<i2").tobytes())
    return buffer.getvalue()


class AudioRing:
    """The last few seconds of a stream's sound at 16 kHz, as blocks with the time of their last sample."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.blocks: deque[tuple[float, Samples]] = deque()

    def add(self, end: float, samples: Samples) -> None:
        self.blocks.append((end, samples))
        while self.blocks and self.blocks[0][0] < end - self.seconds:
            self.blocks.popleft()

    def between(self, start: float, end: float) -> Samples:
        kept = []
        for block_end, samples in self.blocks:
            block_start = block_end - len(samples) / SAMPLE_RATE
            if block_end < start or block_start > end:
                continue
            first = max(0, round((start - block_start) * SAMPLE_RATE))
            last = min(len(samples), round((end - block_start) * SAMPLE_RATE))
            kept.append(samples[first:last])
        return np.concatenate(kept) if kept else np.zeros(0, dtype=np.float32)


def look_at_mouth(frame: VideoFrame, faces: Sequence[Box], mesh: FaceMesh | None, previous: FacePatches | None,
                  at: float) -> tuple[MouthView, FacePatches | None]:  # fmt: skip
    """In the executor: the largest face's mouth in this frame, by the face mesh where it is loaded (the opening),
    else by the mouth region's motion since the previous look."""
    if not faces:
        return MouthView(at), None
    face = max(faces, key=lambda box: box.width * box.height)
    if mesh is not None:
        points = mesh.points(pixels(frame, "rgb24"), face)
        return (MouthView(at, openness=mouth_openness(points)) if points is not None else MouthView(at)), None
    grey = pixels(frame, "gray")
    patches = face_patches(grey, face)
    if patches is None:
        return MouthView(at), None
    motion = mouth_motion(previous, patches) if previous is not None else None
    return MouthView(at, motion=motion), patches


@dataclass
class MicrophoneSession:
    """One player's microphone: the audio track drained and judged, and the front camera's frames looked at for the
    mouth while speech is heard."""

    player_ref: str
    vad: VoiceActivity | None
    mesh: FaceMesh | None
    executor: Executor
    on_finding: SoundFindingHandler
    on_clip: SoundClipHandler | None = None
    settings: SpeechSettings = field(default_factory=SpeechSettings)
    faces: Callable[[], Sequence[Box]] = tuple
    """The faces the front camera's checks saw last (:attr:`video.ingest.StreamSession.faces`)."""
    clip_before_s: float = 5.0
    clip_after_s: float = 5.0
    monitor: VoiceMonitor = field(init=False)
    ring: AudioRing = field(init=False)
    opened_at: float = field(default_factory=time.time)
    closed_at: float | None = None
    arrived_at: float | None = None
    """When the last sound arrived."""
    pending: Samples = field(default_factory=lambda: np.zeros(0, dtype=np.float32))
    pending_end: float = 0.0
    """The time of the last pending sample."""
    busy: bool = False
    looking: bool = False
    last_look: float = 0.0
    patches: FacePatches | None = None
    chunks: int = 0
    dropped_s: float = 0.0
    level: float = float("-inf")
    """The last batch's level (dBFS), for a level meter."""
    tasks: set[asyncio.Task[Any]] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.monitor = VoiceMonitor(self.settings)
        self.ring = AudioRing(self.clip_before_s + self.clip_after_s + 30.0)

    async def consume(self, track: MediaStreamTrack) -> None:
        """Drain the audio track; judge its sound a batch at a time, in order, off the event loop."""
        resample = Resampler()
        while True:
            try:
                frame = await track.recv()
            except MediaStreamError:
                self.closed_at = time.time()
                return
            if not isinstance(frame, AudioFrame):
                continue
            samples = resample(frame)
            now = time.time()
            self.arrived_at = now
            self.ring.add(now, samples)
            self.pending = np.concatenate([self.pending, samples])
            self.pending_end = now
            if len(self.pending) > BACKLOG_S * SAMPLE_RATE:
                cut = len(self.pending) - int(BACKLOG_S * SAMPLE_RATE)
                self.dropped_s += cut / SAMPLE_RATE
                self.pending = self.pending[cut:]
            if not self.busy and len(self.pending) >= BATCH * CHUNK:
                self.busy = True
                whole = len(self.pending) // CHUNK * CHUNK
                batch, self.pending = self.pending[:whole], self.pending[whole:]
                end = now - len(self.pending) / SAMPLE_RATE
                self._spawn(self._judge(batch, end))

    def _probabilities(self, batch: Samples) -> list[tuple[float, float]]:
        chunks = batch.reshape(-1, CHUNK)
        vad = self.vad
        return [(vad.probability(c) if vad is not None else 0.0, level_dbfs(c)) for c in chunks]

    async def _judge(self, batch: Samples, end: float) -> None:
        try:
            judged = await asyncio.get_running_loop().run_in_executor(self.executor, self._probabilities, batch)
            first = end - len(judged) * CHUNK / SAMPLE_RATE
            for index, (probability, level) in enumerate(judged):
                at = first + (index + 1) * CHUNK / SAMPLE_RATE
                self.chunks += 1
                for finding in self.monitor.hear(at, probability, level):
                    self._found(finding)
            self.level = level_dbfs(batch)
        except Exception:
            log.exception("judging the microphone's sound failed")
        finally:
            self.busy = False

    def _found(self, finding: SoundFinding) -> None:
        self.on_finding(self.player_ref, finding)
        if finding.check is SoundCheck.VOICE and finding.ended is None and self.on_clip is not None:
            self._spawn(self._clip(finding, time.time()))

    async def _clip(self, finding: SoundFinding, raised_at: float) -> None:
        await asyncio.sleep(self.clip_after_s)
        samples = self.ring.between(finding.started - self.clip_before_s, raised_at + self.clip_after_s)
        if samples.size and self.on_clip is not None:
            self.on_clip(self.player_ref, finding, wav_bytes(samples))

    async def watch_mouth_on(self, stream: StreamSession) -> None:
        """Once the front stream's video has come, watch the mouth on a subscription of its own (the latest frame
        only: :meth:`watch_mouth`)."""
        while stream.source is None:
            await asyncio.sleep(0.2)
        track = stream.relay.subscribe(stream.source, buffered=False)
        try:
            await self.watch_mouth(track)
        finally:
            track.stop()

    async def watch_mouth(self, track: MediaStreamTrack) -> None:
        """Drain a subscription to the front camera's video: while speech is heard, look at the mouth four times a
        second (the other frames are dropped)."""
        loop = asyncio.get_running_loop()
        while True:
            try:
                frame = await track.recv()
            except MediaStreamError:
                return
            now = time.time()
            if not isinstance(frame, VideoFrame) or self.looking or now - self.last_look < MOUTH_INTERVAL_S:
                continue
            if not self.monitor.wants_mouth(now):
                self.patches = None
                continue
            self.looking, self.last_look = True, now
            try:
                view, self.patches = await loop.run_in_executor(
                    self.executor, look_at_mouth, frame, tuple(self.faces()), self.mesh, self.patches, now
                )
                self.monitor.see(view)
            except Exception:
                log.exception("looking at the mouth failed")
            finally:
                self.looking = False

    def tick(self, now: float) -> None:
        # Before the first sound the connection is still being set up: the loss is counted from a few seconds on.
        last = self.arrived_at if self.arrived_at is not None else self.opened_at + FIRST_SOUND_S
        for finding in self.monitor.tick(now, last):
            self._found(finding)

    def _spawn(self, coroutine: Any) -> None:
        task = asyncio.get_running_loop().create_task(coroutine)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    def close(self) -> None:
        for task in list(self.tasks):
            task.cancel()
