"""A section can ask the service to follow a virtual-background signal with the pan check at once (36.4): the
service prompts it on the same incident, and the verdict is noted there; a real aiortc peer streams to the app."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from proctor.database import create_database_engine, migrate
from proctor.events import EventFileError, parse_event, store_event
from proctor.settings import Settings
from tests.proctor.conftest import Platformer, app_context
from tests.proctor.test_camera import connect
from tests.proctor.test_camera_controls import ARBITER, SwayingFace, add_arbiter, incidents, issue, wait_for
from video.checks import Check, Finding
from video.devices import StreamKey

pytestmark = pytest.mark.asyncio

EVENT = """
[event]
slug = "pan-2026"
name = "Pan Open"

[[sections]]
slug = "open"
name = "Open"
time_control = "rapid-15"
[sections.policy]
auto_pan_check = {flag}

[[sections.players]]
start_no = 1
name = "Panning"
platform_ref = "p-1"
"""


def load(settings: Settings, tmp_path: Path, flag: str) -> None:
    engine = create_database_engine(settings)
    migrate(engine)
    with engine.begin() as connection:
        store_event(connection, parse_event(EVENT.replace("{flag}", flag), tmp_path), now=0)
    engine.dispose()


async def _suspected(platform: Platformer, settings: Settings, tmp_path: Path, flag: str) -> dict[str, object]:
    """Stream, have the passive signal raise a virtual-background finding, and return its incident once its
    prompts (if any) are recorded."""
    load(settings, tmp_path, flag)
    add_arbiter(settings)
    context = app_context(platform)
    context.camera.settings = Settings(database_url=settings.database_url, media_dir=str(tmp_path / "media"))
    context.camera.ingest.settings.rate = 4.0
    token = await issue(platform, "p-1")
    pc = await connect(platform, token, SwayingFace())
    camera = context.camera
    try:
        await wait_for(lambda: _streaming(camera))
        now = time.time()
        camera.on_finding("p-1", Finding(Check.VIRTUAL_BACKGROUND, now - 13, None, "the background does not move"),
                          None)  # fmt: skip
        await wait_for(lambda: _raised(camera))
        incident = camera.open_incidents[(StreamKey("p-1"), "virtual-background")]

        async def settled() -> bool:
            # The service's prompt is stored a moment after the incident is raised: with the setting on, wait for
            # it to be there and recorded (an empty list is not yet "settled").
            status = await (await platform.client.get("/api/v1/players/p-1/camera", headers=ARBITER)).json()
            prompts = status["prompts"]
            if flag == "true" and not prompts:
                return False
            return all(p["recorded"] is not None for p in prompts) and not camera.prompting.get("p-1")

        await wait_for(settled, 30.0)
    finally:
        await pc.close()
    return {i["id"]: i for i in await incidents(platform)}[incident]


async def _streaming(camera: object) -> bool:
    session = camera.ingest.sessions.get(StreamKey("p-1"))  # type: ignore[attr-defined]
    return session is not None and session.frames_analysed >= 2


async def _raised(camera: object) -> bool:
    return (StreamKey("p-1"), "virtual-background") in camera.open_incidents  # type: ignore[attr-defined]


async def test_the_service_asks_for_the_pan_check_and_notes_its_verdict(
    platform: Platformer, settings: Settings, tmp_path: Path
) -> None:
    raised = await _suspected(platform, settings, tmp_path, "true")
    assert (raised["kind"], raised["article"]) == ("virtual-background", "36.4")
    actions = raised["actions"]
    assert isinstance(actions, list)
    notes = [a["note"] for a in actions if a["action"] == "note"]
    assert any("prompted by the service" in note for note in notes), notes
    assert any("the background moved with the camera" in note for note in notes), notes
    assert {a["arbiter"] for a in actions if a["action"] == "note"} >= {"service"}


async def test_without_the_setting_the_arbiter_decides_whether_to_ask(
    platform: Platformer, settings: Settings, tmp_path: Path
) -> None:
    raised = await _suspected(platform, settings, tmp_path, "false")
    actions = raised["actions"]
    assert isinstance(actions, list)
    assert not [a for a in actions if a["action"] == "note" and "pan" in a["note"].lower()]


async def test_the_setting_must_be_true_or_false(tmp_path: Path) -> None:
    with pytest.raises(EventFileError, match="auto_pan_check"):
        parse_event(EVENT.replace("{flag}", '"yes"'), tmp_path)
