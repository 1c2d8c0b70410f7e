"""The stream session's own liveness timeline (the camera's, apart from the game feed's)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import cv2
import numpy as np

from video.checks import Box, Check, Finding, Monitor, Observation
from video.ingest import CapturedFrame, StreamSession, ear_crop


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
