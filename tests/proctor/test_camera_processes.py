"""The service with ``analysis_processes``: the camera's frames are analysed in a process of their own
(video.analysis_processes), and the same real WebRTC path raises the same incidents, with their snapshot and clip."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from proctor.settings import Settings
from tests.proctor import test_camera as camera
from tests.proctor.conftest import Platformer, app_context
from video.devices import StreamKey

pytestmark = pytest.mark.asyncio


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return replace(settings, analysis_processes=1)


async def test_the_player_leaves_and_another_person_comes_in_seen_by_an_analysis_process(
    platform: Platformer, settings: Settings, tmp_path: Path
) -> None:
    await camera.test_the_player_leaves_and_another_person_comes_in(platform, settings, tmp_path)
    service = app_context(platform).camera
    session = service.ingest.sessions[StreamKey("cam1-b")]
    assert session.slot is not None and session.analyser.frames == 0  # none in the service's own threads
    assert service.processes is not None and service.processes.processes[0].process.is_alive()
    assert service.checks_note.endswith("; analysis processes: 1")
