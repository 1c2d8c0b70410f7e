"""The camera analysis in processes of its own (video.analysis_processes): the same observations as in the ingest's
own threads, frame by frame; a process that dies is started again; a live aiortc stream analysed there raises its
findings as before."""

from __future__ import annotations

import asyncio
import math
import os
import signal
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
from aiortc import RTCPeerConnection
from av import VideoFrame

from video import reference_view
from video.analysis import FrameAnalyser
from video.analysis_processes import AnalysisProcesses, AnalysisUnavailableError
from video.checks import Check, Finding, Monitor, Thresholds
from video.conversion import picture
from video.detectors import CenterFaces, available_detector
from video.devices import Device, DeviceThresholds, StreamKey
from video.ingest import Ingest, IngestSettings, StreamPolicy
from video.reference_view import ReferenceView, compare_view
from video.segmentation import available_segmenter

from .frames import composed, room_photo
from .tracks import MovingPicture

MODELS_DIR = Path(os.environ.get("PROCTOR_MODELS_DIR", "models"))


class Camera(MovingPicture):
    """The moving picture, until a hand covers the lens (``dark``)."""

    dark = False

    async def recv(self) -> VideoFrame:
        frame = await super().recv()
        if not self.dark:
            return frame
        black = VideoFrame.from_ndarray(np.zeros((480, 640, 3), np.uint8), format="bgr24")
        black.pts, black.time_base = frame.pts, frame.time_base
        return black


@pytest.fixture(scope="module")
def processes() -> Iterator[AnalysisProcesses]:
    detector, note = available_detector(MODELS_DIR)
    if not isinstance(detector, CenterFaces):
        if os.environ.get("CI"):
            raise AssertionError(note)  # CI fetches the models: a missing model there is a failure
        pytest.skip(note)
    pool = AnalysisProcesses(1, MODELS_DIR)
    pool.start()
    yield pool
    pool.close()


def _clip(count: int) -> list[VideoFrame]:
    """A player swaying over a real room, then nobody, as the decoder hands frames over (``yuv420p``)."""
    room, rng = room_photo(), np.random.default_rng(5)
    frames = []
    for index in range(count):
        if index < count - 3:
            picture = composed(room, rng, round(3 * math.sin(index)), 1.0, replaced=False)
        else:
            picture = (room + rng.normal(0, 2.5, room.shape)).clip(0, 255).astype(np.uint8)
        frames.append(VideoFrame.from_ndarray(picture, format="bgr24").reformat(format="yuv420p"))
    return frames


async def test_a_process_sees_what_the_ingests_own_thread_sees(processes: AnalysisProcesses) -> None:
    frames = _clip(12)
    threads = cv2.getNumThreads()
    cv2.setNumThreads(1)  # as in the process: the models' sums in the same order
    try:
        detector, _ = available_detector(MODELS_DIR)
        people, _ = available_segmenter(MODELS_DIR)
        here = FrameAnalyser(Monitor(Thresholds()), detector, people)
        expected = [here.observe(picture(frame), 100.0 + i / 2) for i, frame in enumerate(frames)]
    finally:
        cv2.setNumThreads(threads)
    slot = processes.slot(Thresholds(), 0.9, 2.4, 2.0)
    try:
        seen = [await slot.look(frame, 100.0 + i / 2, False, i == 0) for i, frame in enumerate(frames)]
    finally:
        slot.close()
    assert [looked.observation for looked in seen] == expected
    assert [len(o.faces) for o in expected[:3]] == [1, 1, 1] and expected[-1].faces == ()
    assert seen[0].still is not None and seen[0].still.startswith(b"\xff\xd8")  # asked for: the whole frame
    assert seen[1].still is None and all(looked.small.startswith(b"\xff\xd8") for looked in seen)
    decoded = cv2.imdecode(np.frombuffer(seen[0].small, np.uint8), cv2.IMREAD_COLOR)
    assert decoded is not None and decoded.shape == (240, 320, 3)
    assert all(looked.view is None for looked in seen)  # no approved view was sent


async def test_a_process_compares_the_frame_with_the_approved_view_it_is_sent(processes: AnalysisProcesses) -> None:
    """The side camera's comparison (ORB, tens of ms) runs in the analysis process, with the frame: the same
    comparison as in the ingest's own thread, the view kept, and a camera turned a few degrees seen as moved."""
    room = room_photo()
    reference = ReferenceView.of(room)
    turned = np.asarray(
        cv2.warpAffine(room, cv2.getRotationMatrix2D((320, 240), 9.0, 1.1), (640, 480), borderMode=cv2.BORDER_REFLECT),
        np.uint8,
    )
    frames = [VideoFrame.from_ndarray(p, format="bgr24").reformat(format="yuv420p") for p in (room, turned)]
    slot = processes.slot(Thresholds(), 0.9, 2.4, 2.0)
    try:
        seen = [await slot.look(frame, 10.0 + i, False, False, reference) for i, frame in enumerate(frames)]
    finally:
        slot.close()
    expected = [compare_view(reference, picture(frame)) for frame in frames]
    assert [looked.view for looked in seen] == expected
    assert expected[0] is not None and expected[0].judged and expected[0].kept
    assert expected[1] is not None and expected[1].judged and not expected[1].kept


async def test_a_process_that_dies_is_started_again_for_the_next_frame(processes: AnalysisProcesses) -> None:
    (owner,) = processes.processes
    frame = _clip(4)[0]
    slot = processes.slot(Thresholds(), 0.9, 2.4, 2.0)
    try:
        assert len((await slot.look(frame, 1.0, False, False)).observation.faces) == 1
        before, pid = owner.restarts, owner.process.pid
        os.kill(pid, signal.SIGKILL)
        owner.process.join(5)
        looked = await slot.look(frame, 2.0, False, False)  # in a new process, the stream known there
        assert len(looked.observation.faces) == 1
        assert owner.process.pid != pid and owner.restarts == before + 1
        # A frame sent to a stream the process does not know is refused, and the process lives on.
        with pytest.raises(AnalysisUnavailableError, match="KeyError"):
            await type(slot)(owner, "unknown").look(frame, 2.5, False, False)
        assert len((await slot.look(frame, 3.0, False, False)).observation.faces) == 1
    finally:
        slot.close()


async def test_a_live_stream_analysed_in_a_process_raises_its_findings(processes: AnalysisProcesses) -> None:
    """A real aiortc peer streams a camera that goes dark: covered (36.4), raised from the process's observations."""
    reported: list[tuple[StreamKey, Finding]] = []
    executor = ThreadPoolExecutor(2)
    settings = IngestSettings(ice_servers=[], rate=4.0)
    policy = StreamPolicy(Thresholds(covered_s=1.0), enabled=frozenset({Check.COVERED}))
    ingest = Ingest(settings, None, executor, lambda key, finding, _s: reported.append((key, finding)),
                    processes=processes)  # fmt: skip
    ingest.start()
    track = Camera(rate=15)
    sender = RTCPeerConnection()
    sender.addTrack(track)
    try:
        await sender.setLocalDescription(await sender.createOffer())
        answer = await ingest.answer("p-1", sender.localDescription.sdp, "offer", policy)
        await sender.setRemoteDescription(answer)
        session = ingest.sessions[StreamKey("p-1")]
        assert session.slot is not None
        deadline = time.monotonic() + 20
        while session.frames_analysed < 4 and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        assert session.frames_analysed >= 4 and session.thumbnail is not None
        track.dark = True
        while not any(f.check is Check.COVERED for _, f in reported) and time.monotonic() < deadline + 10:
            await asyncio.sleep(0.1)
        assert [f.check for _, f in reported if f.ended is None] == [Check.COVERED]
        assert session.analyser.frames == 0  # none in this process's threads
    finally:
        await sender.close()
        await ingest.close()
        executor.shutdown(wait=False, cancel_futures=True)


class Phone(MovingPicture):
    """A side camera on the room (a real photo, the camera's noise), turned 8 degrees once :attr:`turned`."""

    turned = False

    def __init__(self) -> None:
        super().__init__(rate=10)
        self.room, self.rng = room_photo(), np.random.default_rng(4)

    async def recv(self) -> VideoFrame:
        frame = await super().recv()
        picture = (self.room + self.rng.normal(0, 2.0, self.room.shape)).clip(0, 255).astype(np.uint8)
        if self.turned:
            turn = cv2.getRotationMatrix2D((320, 240), 8, 1.0)
            picture = np.asarray(cv2.warpAffine(picture, turn, (640, 480), borderMode=cv2.BORDER_REFLECT), np.uint8)
        out = VideoFrame.from_ndarray(picture, format="bgr24")
        out.pts, out.time_base = frame.pts, frame.time_base
        return out


async def test_a_side_camera_analysed_in_a_process_is_compared_with_its_approved_view_there(
    processes: AnalysisProcesses, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real aiortc peer streams a side camera; its approved view given, the comparisons run in the analysis
    process (the ingest's threads compare nothing), and the phone turned is raised as ``camera-moved`` (36.4)."""
    reported: list[tuple[StreamKey, Finding]] = []
    executor = ThreadPoolExecutor(2)
    policy = StreamPolicy(Thresholds(), frozenset({Check.CAMERA_MOVED}),
                          DeviceThresholds(camera_moved_s=1.0, view_interval_s=0.5))  # fmt: skip
    ingest = Ingest(IngestSettings(ice_servers=[], rate=4.0), None, executor,
                    lambda key, finding, _s: reported.append((key, finding)), processes=processes)  # fmt: skip
    ingest.start()
    track = Phone()
    sender = RTCPeerConnection()
    sender.addTrack(track)
    compared: list[float] = []
    original = reference_view.compare_views

    def counting(*args: Any, **kwargs: Any) -> Any:  # in this process only: the analysis process has its own
        compared.append(time.monotonic())
        return original(*args, **kwargs)

    monkeypatch.setattr(reference_view, "compare_views", counting)
    try:
        await sender.setLocalDescription(await sender.createOffer())
        answer = await ingest.answer("p-2", sender.localDescription.sdp, "offer", policy, Device.SIDE)
        await sender.setRemoteDescription(answer)
        session = ingest.sessions[StreamKey("p-2", Device.SIDE)]
        deadline = time.monotonic() + 20
        while session.frames_analysed < 2 and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        assert session.frames_analysed >= 2
        session.set_reference(ReferenceView.of(room_photo()))
        await asyncio.sleep(3.0)
        assert session.view.last is not None and session.view.last.judged and session.view.last.kept
        assert reported == []
        track.turned = True
        while not reported and time.monotonic() < deadline + 10:
            await asyncio.sleep(0.1)
        assert [(k.device, f.check) for k, f in reported] == [(Device.SIDE, Check.CAMERA_MOVED)]
        assert compared == []  # every comparison was made in the analysis process
    finally:
        await sender.close()
        await ingest.close()
        executor.shutdown(wait=False, cancel_futures=True)
