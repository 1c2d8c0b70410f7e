"""The stream session's own liveness timeline (the camera's, apart from the game feed's)."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import cv2
import numpy as np
import pytest

from video.checks import Box, Check, Finding, Monitor, Observation, Thresholds
from video.devices import StreamKey
from video.ingest import CapturedFrame, CaptureResult, Ingest, IngestSettings, StreamSession, ear_crop

from .tracks import MovingPicture


def _session(enabled: frozenset[Check]) -> tuple[StreamSession, list[Finding]]:
    reported: list[Finding] = []
    session = StreamSession("p-1", Monitor(enabled=enabled), None, ThreadPoolExecutor(1),
                            lambda _player, finding, _snapshot: reported.append(finding))  # fmt: skip
    session.monitor.feed(Observation(100.0, 120.0, 40.0, 2.0, (), 640, 480))
    return session, reported


def test_a_lost_camera_takes_the_streams_timeline_down_and_is_reported() -> None:
    session, reported = _session(frozenset(Check))
    session.tick(103.0)
    assert not session.timeline.is_down and reported == []
    session.tick(105.5)
    assert session.timeline.is_down and [f.check for f in reported] == [Check.LOST]


def test_the_timeline_goes_down_even_where_the_section_does_not_report_lost_cameras() -> None:
    session, reported = _session(frozenset(Check) - {Check.LOST})
    session.tick(105.5)
    assert session.timeline.is_down and reported == []


def test_the_ear_crop_is_beside_the_face_on_the_side_away_from_the_nose() -> None:
    picture = np.zeros((480, 640, 3), np.uint8)
    picture[:, 320:] = 200  # the right half bright, to tell the sides apart
    still = bytes(cv2.imencode(".jpg", picture)[1])
    eyes_and_nose = ((290, 130), (330, 130), (300, 150))  # the nose towards the picture's left: turn < 0
    face = Box(280, 100, 60, 80, eyes_and_nose)
    assert face.turn is not None and face.turn < 0
    crop = cv2.imdecode(np.frombuffer(ear_crop(CapturedFrame(0.0, b"", still, (face,))) or b"", np.uint8), 1)
    assert (
        crop is not None and crop.shape[:2] == (96, 60) and crop[:, 15:].mean() > 150
    )  # x 310-370: mostly the bright right half
    mirrored = Box(280, 100, 60, 80, ((290, 130), (330, 130), (320, 150)))
    other = cv2.imdecode(np.frombuffer(ear_crop(CapturedFrame(0.0, b"", still, (mirrored,))) or b"", np.uint8), 1)
    assert (
        other is not None and other.shape[:2] == (96, 60) and other[:, :-15].mean() < 50
    )  # x 250-310: the dark left half
    assert ear_crop(CapturedFrame(0.0, b"", still, (Box(280, 100, 60, 80),))) is None  # no landmarks, no crop


def test_an_ended_stream_leaves_the_sessions_once_its_camera_lost_is_raised() -> None:
    ingest = Ingest(IngestSettings(), None, ThreadPoolExecutor(1), lambda _p, _f, _s: None)
    session, reported = _session(frozenset(Check))
    ingest.sessions[StreamKey("p-1")] = session
    session.frames_received, session.closed_at = 10, 101.0
    for now in (102.0, 103.0):
        ingest.sweep(now)
        assert StreamKey("p-1") in ingest.sessions  # not yet lost
    ingest.sweep(105.5)
    assert [f.check for f in reported] == [Check.LOST] and StreamKey("p-1") not in ingest.sessions
    ended = ingest.last("p-1")
    assert ended is not None and ended.closed_at == 101.0 and [f.check for f in ended.active()] == [Check.LOST]


def test_the_analysis_says_when_it_cannot_keep_its_rate() -> None:
    session, _ = _session(frozenset(Check))
    session.opened_at = 0.0
    # The player sends 15 frames a second; the service analysed only one a second for 10 s (set rate: 2).
    session.received_at.extend(i / 15 for i in range(150))
    session.analysed_at.extend(float(i) for i in range(10))
    session.tick(10.0)
    assert session.degraded and session.rate_achieved(10.0) == 1.0
    # Back at its rate: no longer degraded.
    session.received_at.extend(10 + i / 15 for i in range(150))
    session.analysed_at.extend(10 + i / 2 for i in range(20))
    session.tick(20.0)
    assert not session.degraded
    # A player whose camera sends one frame a second is not the service falling behind.
    slow, _ = _session(frozenset(Check))
    slow.opened_at = 0.0
    slow.received_at.extend(float(i) for i in range(10))
    slow.analysed_at.extend(float(i) for i in range(10))
    slow.tick(10.0)
    assert not slow.degraded


async def test_a_camera_whose_analysis_is_backed_up_is_not_lost_while_its_frames_arrive() -> None:
    """The executor is busy (several start-of-game ear checks at once): no frame is analysed for longer than
    ``lost_s``, but frames keep arriving, so the camera is alive. Liveness counts from arrival, not analysis."""
    blocked = threading.Event()
    executor = ThreadPoolExecutor(1)
    executor.submit(blocked.wait, 10.0)  # the only worker is taken
    reported: list[Finding] = []
    session = StreamSession("p-1", Monitor(Thresholds(lost_s=1.0), enabled=frozenset(Check)), None, executor,
                            lambda _player, finding, _snapshot: reported.append(finding))  # fmt: skip
    session.monitor.feed(Observation(time.time(), 120.0, 40.0, 2.0, (), 640, 480))  # analysed once before
    consuming = asyncio.create_task(session.consume(MovingPicture(rate=10)))
    try:
        for _ in range(10):  # 2 s: twice lost_s
            await asyncio.sleep(0.2)
            session.tick(time.time())
        assert session.frames_received >= 10 and session.frames_analysed == 0
        assert reported == [] and not session.timeline.is_down
    finally:
        consuming.cancel()
        blocked.set()
        executor.shutdown(wait=False, cancel_futures=True)
    # The frames stop: now the camera is lost, from its last frame's arrival.
    await asyncio.sleep(1.2)
    session.tick(time.time())
    assert [f.check for f in reported] == [Check.LOST]
    assert reported[0].started == session.received_at[-1]


def test_a_capture_goes_through_json_and_back_unchanged() -> None:
    """What a worker answers the service for a prompt (proctor.worker): the frames, their stills, faces with their
    landmarks, what the checks saw, and the clip, read back as they were; what is not such a capture is an error."""
    face = Box(100, 80, 64, 72, ((110, 100), (150, 100), (130, 120), (115, 140), (145, 140)))
    seen = Observation(12.5, 120.0, 30.0, 0.4, (face,), 640, 480, background_change=0.2, player_seen=True,
                       new_body=0.05, gone_since=None, bent_down=False)  # fmt: skip
    result = CaptureResult(
        (CapturedFrame(12.5, b"\xff\xd8small", b"\xff\xd8still", (face,), seen),
         CapturedFrame(13.0, b"\xff\xd8small2", None, (), None)),
        b"\x1aE\xdf\xa3clip",
    )  # fmt: skip
    assert CaptureResult.from_json(json.loads(json.dumps(result.to_json()))) == result
    for bad in ({}, {"frames": [{"at": 1.0}]}, {"frames": [{"at": 1.0, "small": "not base64!"}]}):
        with pytest.raises((KeyError, TypeError, ValueError)):
            CaptureResult.from_json(bad)
