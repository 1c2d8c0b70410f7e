"""The stream session's own liveness timeline (the camera's, apart from the game feed's)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from video.checks import Check, Finding, Monitor, Observation
from video.ingest import StreamSession


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
