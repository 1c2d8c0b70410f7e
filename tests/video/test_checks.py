"""The pure video checks and their temporal rules (36.4, 36.4.1, 36.4.2)."""

from __future__ import annotations

import numpy as np

from tests.video.frames import scene
from video.checks import Box, Check, Monitor, Observation, Thresholds, observe
from video.detectors import HaarFaces

FACE = Box(200, 100, 120, 120)


def seen(at: float, faces: int = 1, brightness: float = 120, contrast: float = 40, change: float = 2.0) -> Observation:
    boxes = tuple(Box(100 + 200 * i, 100, 120, 120) for i in range(faces))
    return Observation(at, brightness, contrast, change, boxes, 640, 480)


def run(monitor: Monitor, observations: list[Observation]) -> list[tuple[Check, float, float | None]]:
    found = []
    for observation in observations:
        found += [(f.check, f.started, f.ended) for f in monitor.feed(observation)]
    return found


def test_a_real_face_is_found_and_counted() -> None:
    rng = np.random.default_rng(1)
    detector = HaarFaces()
    counts = [len(observe(scene(n, rng), 0.0, None, detector)[0].faces) for n in (0, 1, 2)]
    assert counts == [0, 1, 2]


def test_36_4_1_left_the_area_after_the_threshold_with_hysteresis() -> None:
    monitor = Monitor(Thresholds(absence_s=5, clear_s=2))
    frames = [seen(t * 0.5, faces=1 if t < 4 else 0) for t in range(30)]
    assert run(monitor, frames) == [(Check.LEFT_AREA, 2.0, None)]  # absent from 2.0, raised at 7.0
    # Faces again from 15.0: the finding ends once they have been back for clear_s (2 s).
    more = [seen(15 + t * 0.5, faces=1) for t in range(6)]
    assert run(monitor, more) == [(Check.LEFT_AREA, 2.0, 17.0)]


def test_a_single_missed_detection_raises_nothing() -> None:
    monitor = Monitor(Thresholds(absence_s=5))
    frames = [seen(t * 0.5, faces=0 if t % 7 == 3 else 1) for t in range(40)]
    assert run(monitor, frames) == []


def test_leave_granted_by_the_arbiter_is_not_a_finding() -> None:
    monitor = Monitor(Thresholds(absence_s=3), leave_granted_until=100)
    assert run(monitor, [seen(t, faces=0) for t in range(20)]) == []


def test_36_4_2_another_person_and_the_edge() -> None:
    monitor = Monitor(Thresholds(extra_person_s=2))
    observations = [Observation(t * 0.5, 120, 40, 2.0, (FACE, Box(0, 120, 80, 100)), 640, 480) for t in range(8)]
    found = []
    for observation in observations:
        found += monitor.feed(observation)
    assert [f.check for f in found] == [Check.EXTRA_PERSON]
    assert "at the frame's edge" in found[0].detail


def test_covered_dark_and_frozen_cameras() -> None:
    covered = run(
        Monitor(Thresholds(covered_s=2)), [seen(t * 0.5, faces=0, brightness=5, contrast=1) for t in range(8)]
    )
    assert covered == [(Check.COVERED, 0.0, None)]
    frozen = run(Monitor(Thresholds(frozen_s=3)), [seen(t * 0.5, change=0.0) for t in range(10)])
    assert frozen == [(Check.FROZEN, 0.0, None)]


def test_a_lost_camera_is_found_by_the_clock() -> None:
    monitor = Monitor(Thresholds(lost_s=5))
    monitor.feed(seen(0.0))
    assert monitor.tick(4.0) == []
    (lost,) = monitor.tick(5.5)
    assert (lost.check, lost.started, lost.check.article) == (Check.LOST, 0.0, "36.4")
    assert monitor.tick(6.0) == []
