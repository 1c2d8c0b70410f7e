"""The evaluation set's live part: clips streamed in real time over WebRTC into the service's own ingest.

A sender process (its priority raised where the system allows, so that a CPU hog slows the service rather than the
simulated players) composes each clip's frames as they are due and plays them through an aiortc
``RTCPeerConnection`` (a ``VideoStreamTrack`` at the clip's frame rate, aiortc's VP8 encoder capped at the clip's
bitrate: :class:`benchmarks.vp8.CappedVp8Encoder`).  This process runs ``video.ingest.Ingest`` as
``proctor/camera.py`` builds it (the available face detector and person segmenter, a 2-thread executor, the default
``IngestSettings`` without ICE servers: loopback) and answers each offer with ``Ingest.answer``.  Every clip is a
new peer connection, so each starts at its stream's start, encoder warm-up included; a finding's raised time is when
the ingest called ``on_finding``, from the clip's first frame (both processes read the same clock).  Several clips
stream at once; with ``hog`` processes, busy loops run on the side while the clips marked ``hog`` stream.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import multiprocessing
import os
import queue
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from aiortc import RTCConfiguration, RTCPeerConnection, RTCRtpSender, RTCSessionDescription, VideoStreamTrack
from aiortc.mediastreams import MediaStreamError
from av import VideoFrame

from benchmarks.composition import Composer, Cutout, Frame
from benchmarks.evalset import ANALYSIS_RATE, ClipSpec, Raised
from benchmarks.vp8 import CLOCK, CappedVp8Encoder
from video.analysis import FrameAnalyser
from video.checks import Check, FaceDetector, Finding, Thresholds
from video.devices import StreamKey
from video.ingest import Ingest, IngestSettings

WARM_UP_S = 15.0
"""A live VP8 stream's encoder warm-up lasts about this long."""
GRACE_S = 2.0
"""Findings are collected until this long after a clip's last frame (analysis still under way)."""
CONNECT_S = 30.0
"""A clip whose media has not started this long after its answer fails."""


@dataclass
class LiveOutcome:
    """What one live clip gave."""

    spec: ClipSpec
    raised: list[Raised]
    start: float
    """The wall time of the clip's first frame (the sender's clock)."""
    frames_sent: int
    late_max: float
    """The sender's worst lateness against the clip's timeline (s)."""
    bytes_sent: int
    bitrates: list[tuple[float, int]]
    """(seconds into the clip, the encoder's target) once a second."""
    received: int = 0
    analysed: int = 0
    lost: int = 0
    """Camera-lost findings during the clip (the stream stalled)."""
    warm_up: tuple[float, int, float, int] = (0.0, 0, 0.0, 0)
    """The background's change per analysed frame summed, and counted, in the first WARM_UP_S and after."""


# --------------------------------------------------------------------------------------------------------------------
# The sender (its own process)


class ClipTrack(VideoStreamTrack):
    """Plays a clip's composed frames at its frame rate, each when it is due (composed ahead in a thread)."""

    def __init__(self, spec: ClipSpec, frames: Iterator[tuple[float, Frame, int | None]], pool: ThreadPoolExecutor
                 ) -> None:  # fmt: skip
        super().__init__()
        self.spec = spec
        self.frames = frames
        self.pool = pool
        self.count = round(spec.seconds * spec.fps)
        self.index = 0
        self.start: float | None = None
        self.late_max = 0.0
        self.ended = asyncio.get_running_loop().create_future()
        self.pending: asyncio.Future[Any] | None = None

    def _next(self) -> asyncio.Future[Any]:
        return asyncio.get_running_loop().run_in_executor(self.pool, next, self.frames, None)

    async def recv(self) -> VideoFrame:
        if self.index >= self.count:
            if not self.ended.done():
                self.ended.set_result(None)
            self.stop()
            raise MediaStreamError
        if self.pending is None:
            self.pending = self._next()
        item = await self.pending
        self.pending = self._next() if self.index + 1 < self.count else None
        if self.start is None:
            self.start = time.time()
        due = self.start + self.index / self.spec.fps
        wait = due - time.time()
        if wait > 0:
            await asyncio.sleep(wait)
        else:
            self.late_max = max(self.late_max, -wait)
        if item is None:
            raise MediaStreamError
        _, image, _ = item
        frame = VideoFrame.from_ndarray(image, format="bgr24")
        frame.pts = round(self.index * CLOCK / self.spec.fps)
        frame.time_base = Fraction(1, CLOCK)
        self.index += 1
        return frame


async def _send_clip(spec: ClipSpec, index: int, cutouts: dict[str, Cutout], paths: dict[str, Path],
                     replies: Any, answers: dict[int, asyncio.Future[tuple[str, str]]], pool: ThreadPoolExecutor
                     ) -> None:  # fmt: skip
    pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
    try:
        composer = await asyncio.get_running_loop().run_in_executor(pool, Composer, spec, cutouts, paths)
        track = ClipTrack(spec, composer.frames(), pool)
        sender = pc.addTrack(track)
        encoder = CappedVp8Encoder(spec.bitrate)
        # aiortc makes its own at the first frame otherwise (a name-mangled private: no other way in)
        setattr(sender, "_RTCRtpSender__encoder", encoder)  # noqa: B010
        capabilities = RTCRtpSender.getCapabilities("video")
        vp8 = [c for c in capabilities.codecs if c.mimeType.lower() in ("video/vp8", "video/rtx")]
        pc.getTransceivers()[0].setCodecPreferences(vp8)
        await pc.setLocalDescription(await pc.createOffer())
        description = pc.localDescription
        answers[index] = asyncio.get_running_loop().create_future()
        replies.put(("offer", index, description.sdp, description.type))
        sdp, kind = await answers[index]
        await pc.setRemoteDescription(RTCSessionDescription(sdp=sdp, type=kind))
        bitrates: list[tuple[float, int]] = []
        asked = time.time()
        while not track.ended.done():
            await asyncio.sleep(1.0)
            if track.start is not None:
                bitrates.append((time.time() - track.start, encoder.target_bitrate))
            elif pc.connectionState == "failed" or time.time() - asked > CONNECT_S:
                raise RuntimeError(f"no media flowing (connection {pc.connectionState})")
        sent = sum(getattr(s, "_RTCRtpSender__octet_count", 0) for s in pc.getSenders())
        replies.put(("done", index, track.start or time.time(), track.index, track.late_max, sent, bitrates))
    except Exception as error:  # the main process must hear of it, or it waits for ever
        replies.put(("failed", index, repr(error)))
    finally:
        await pc.close()


async def _sender(requests: Any, replies: Any, cutouts: dict[str, Cutout], paths: dict[str, Path]) -> None:
    import cv2  # noqa: PLC0415 (the sender process's own setting)

    cv2.setNumThreads(1)
    loop = asyncio.get_running_loop()
    answers: dict[int, asyncio.Future[tuple[str, str]]] = {}
    tasks: set[asyncio.Task[None]] = set()
    with ThreadPoolExecutor(8, "compose") as pool:
        while True:
            message = await loop.run_in_executor(None, requests.get)
            if message[0] == "stop":
                break
            if message[0] == "play":
                _, index, spec = message
                task = loop.create_task(_send_clip(spec, index, cutouts, paths, replies, answers, pool))
                tasks.add(task)
                task.add_done_callback(tasks.discard)
            elif message[0] == "answer":
                _, index, sdp, kind = message
                answers[index].set_result((sdp, kind))
        for task in list(tasks):
            task.cancel()


def exit_with_parent() -> None:
    """End this process as soon as the process that started it is gone: a benchmark killed midway leaves no worker,
    sender or busy loop behind."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def sender_main(requests: Any, replies: Any, cutouts: dict[str, Cutout], paths: dict[str, Path]) -> None:
    """The sender process: plays the clips it is asked for, one peer connection each."""
    exit_with_parent()
    try:
        os.setpriority(os.PRIO_PROCESS, 0, -5)
        replies.put(("priority", -5))
    except OSError:
        replies.put(("priority", 0))
    asyncio.run(_sender(requests, replies, cutouts, paths))


# --------------------------------------------------------------------------------------------------------------------
# The CPU hog


def _burn() -> None:
    exit_with_parent()
    while True:
        pass


@contextlib.contextmanager
def cpu_hog(processes: int) -> Iterator[None]:
    """``processes`` busy loops while the block runs (each ended by its own handle afterwards)."""
    context = multiprocessing.get_context("spawn")
    hogs = [context.Process(target=_burn, daemon=True, name=f"cpu-hog-{i}") for i in range(processes)]
    for hog in hogs:
        hog.start()
    try:
        yield
    finally:
        for hog in hogs:
            hog.terminate()
        for hog in hogs:
            hog.join(5)


# --------------------------------------------------------------------------------------------------------------------
# The service's side


@dataclass
class Recorder:
    """The ingest's ``on_finding``: every finding with its wall time, by stream."""

    started: dict[str, list[tuple[str, float]]] = field(default_factory=dict)

    def __call__(self, stream: StreamKey, finding: Finding, snapshot: bytes | None) -> None:
        if finding.ended is None:
            self.started.setdefault(stream.player, []).append((finding.check.name, time.time()))


def make_ingest(settings: IngestSettings, faces: FaceDetector | None, people: Any, on_finding: Recorder,
                executor: ThreadPoolExecutor) -> Ingest:  # fmt: skip
    """``video.ingest.Ingest`` as ``proctor/camera.py`` builds it: evidence clips on (their handler discards them),
    the person segmenter where this checkout's ``Ingest`` takes one."""
    parameters = inspect.signature(Ingest).parameters
    extra: dict[str, Any] = {}
    if "on_clip" in parameters:
        extra["on_clip"] = lambda player_ref, finding, clip: None
    if "people" in parameters and people is not None:
        extra["people"] = people
    return Ingest(settings, faces, executor, on_finding, **extra)


class LiveRun:
    """The sender process, the ingest and the clips under way."""

    def __init__(self, faces: FaceDetector | None, people: Any, cutouts: dict[str, Cutout], paths: dict[str, Path],
                 log: Callable[[str], None]) -> None:  # fmt: skip
        context = multiprocessing.get_context("spawn")
        self.requests, self.replies = context.Queue(), context.Queue()
        self.sender = context.Process(target=sender_main, args=(self.requests, self.replies, cutouts, paths),
                                      name="live-sender")  # fmt: skip
        self.recorder = Recorder()
        self.executor = ThreadPoolExecutor(2, "proctor-video")
        settings = IngestSettings(ice_servers=[], rate=ANALYSIS_RATE, thresholds=Thresholds())
        self.ingest = make_ingest(settings, faces, people, self.recorder, self.executor)
        self.inboxes: dict[int, asyncio.Queue[tuple[Any, ...]]] = {}
        self.outcomes: list[LiveOutcome] = []
        self.notes: list[str] = []
        self.log = log
        self.reader: asyncio.Task[None] | None = None
        self.changes: dict[int, list[tuple[float, float]]] = {}
        """The background's change (wall time, grey levels) of every analysed frame, by analyser."""
        self._observe = FrameAnalyser.observe

    def _watch_observations(self) -> None:
        """Record each analysed frame's background change, as the ingest's analysers observe them (a measurement
        only: the observation is returned unchanged)."""
        original, changes = self._observe, self.changes

        def observe(analyser: FrameAnalyser, image: Frame, at: float, *args: Any, **kwargs: Any) -> Any:
            observation = original(analyser, image, at, *args, **kwargs)
            change = getattr(observation, "background_change", None)
            if change is not None:
                changes.setdefault(id(analyser), []).append((at, float(change)))
            return observation

        setattr(FrameAnalyser, "observe", observe)  # noqa: B010 (the class's own method, put back on close)

    def start(self) -> None:
        self._watch_observations()
        self.sender.start()
        self.ingest.start()
        self.reader = asyncio.get_running_loop().create_task(self._read_replies())

    async def _read_replies(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            try:
                message = await loop.run_in_executor(None, self.replies.get, True, 1.0)
            except queue.Empty:
                if not self.sender.is_alive():
                    return
                continue
            if message[0] == "priority":
                self.notes.append("sender priority raised (nice -5)" if message[1] else "sender at normal priority")
                continue
            await self.inboxes[message[1]].put(message)

    async def play(self, index: int, spec: ClipSpec) -> None:
        """Stream one clip into the ingest and collect what it raised."""
        inbox = self.inboxes[index] = asyncio.Queue()
        ref = f"live-{index:03d}"
        self.requests.put(("play", index, spec))
        message = await inbox.get()
        if message[0] == "offer":
            _, _, sdp, kind = message
            answer = await self.ingest.answer(ref, sdp, kind)
            self.requests.put(("answer", index, answer.sdp, answer.type))
            message = await inbox.get()
        if message[0] == "failed":
            self.notes.append(f"{spec.name}: {message[2]}")
            return
        _, _, start, frames, late_max, sent, bitrates = message
        until = start + spec.seconds + GRACE_S
        await asyncio.sleep(max(0.0, until - time.time()))
        found = [(check, at - start) for check, at in self.recorder.started.get(ref, []) if at <= until]
        raised = [Raised(check, at) for check, at in found if check != Check.LOST.name]
        outcome = LiveOutcome(spec, raised, start, frames, late_max, sent, bitrates)
        session = self.ingest.sessions.get(StreamKey(ref))
        outcome.received = int(getattr(session, "frames_received", 0))
        outcome.analysed = int(getattr(session, "frames_analysed", 0))
        outcome.lost = sum(check == Check.LOST.name for check, _ in found)
        changes = self.changes.get(id(getattr(session, "analyser", None)), [])
        early = [c for at, c in changes if at - start < WARM_UP_S]
        late = [c for at, c in changes if WARM_UP_S <= at - start <= spec.seconds]
        outcome.warm_up = (sum(early), len(early), sum(late), len(late))
        self.outcomes.append(outcome)
        found_text = ", ".join(f"{r.check.lower()}@{r.at:.1f}" for r in raised) or "nothing"
        self.log(f"  live {spec.name:<34} {spec.stream:<17} {'hog ' if spec.hog else ''}analysed "
                 f"{outcome.analysed / spec.seconds:4.2f}/s raised: {found_text}")  # fmt: skip

    async def phase(self, clips: Sequence[tuple[int, ClipSpec]], streams: int) -> None:
        """The clips, ``streams`` at a time."""
        slots = asyncio.Semaphore(streams)

        async def one(index: int, spec: ClipSpec) -> None:
            async with slots:
                await self.play(index, spec)

        await asyncio.gather(*(one(index, spec) for index, spec in clips))

    async def close(self) -> None:
        setattr(FrameAnalyser, "observe", self._observe)  # noqa: B010
        self.requests.put(("stop",))
        await self.ingest.close()
        self.executor.shutdown(wait=False, cancel_futures=True)
        self.sender.join(10)
        if self.sender.is_alive():
            self.sender.terminate()
            self.sender.join(5)
        if self.reader is not None:
            self.reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.reader


async def run_live(specs: Sequence[ClipSpec], faces: FaceDetector | None, people: Any, cutouts: dict[str, Cutout],
                   paths: dict[str, Path], streams: int, hog: int, log: Callable[[str], None] = print
                   ) -> tuple[list[LiveOutcome], list[str]]:  # fmt: skip
    """Stream the clips, ``streams`` at a time: first those without the hog, then (with ``hog`` busy processes)
    those marked ``hog``.  The outcomes, and notes on how it went."""
    run = LiveRun(faces, people, cutouts, paths, log)
    run.start()
    try:
        numbered = sorted(enumerate(specs), key=lambda item: -item[1].seconds)
        await run.phase([(i, s) for i, s in numbered if not (s.hog and hog)], streams)
        hogged = [(i, s) for i, s in numbered if s.hog and hog]
        if hogged:
            with cpu_hog(hog):
                await run.phase(hogged, streams)
    finally:
        await run.close()
    return sorted(run.outcomes, key=lambda o: o.spec.name), run.notes
