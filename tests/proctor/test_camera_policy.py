"""Each player's camera follows their event section's proctoring policy (issue 6): the section's thresholds over the
service's, its checks, and its evidence retention, with the media kept in the section's own folder; a real aiortc
peer streams to the running app."""

from __future__ import annotations

import hashlib
import os
import re
import time
from pathlib import Path
from typing import Any

import pytest

from proctor.camera import retention_by_folder
from proctor.database import create_database_engine, migrate
from proctor.events import CHECKS, parse_event, store_event
from proctor.media_retention import expired_media
from proctor.settings import Settings
from tests.proctor.conftest import Platformer, app_context
from tests.proctor.test_camera import ScriptedCamera, connect
from tests.proctor.test_camera_controls import ARBITER, add_arbiter, issue, wait_for
from video.checks import POLICY_CHECKS, Check, Thresholds
from video.devices import StreamKey

pytestmark = pytest.mark.asyncio

EVENT = """
[event]
slug = "nyc-2021"
name = "City Open 2021"

[[sections]]
slug = "slow"
name = "Slow"
time_control = "rapid-15"

[[sections.players]]
start_no = 1
name = "Quick, earlier"
platform_ref = "q-1"

[[sections]]
slug = "quick"
name = "Quick"
time_control = "rapid-15"

[sections.policy]
evidence_retention_days = 30

[sections.policy.thresholds]
absence_s = 1.5
clear_s = 1
not_a_threshold = 7

[[sections.players]]
start_no = 1
name = "Quick"
platform_ref = "q-1"

[[sections]]
slug = "quiet"
name = "No presence check"
time_control = "rapid-15"

[sections.policy]
checks = ["camera", "extra-person", "earphones"]

[sections.policy.thresholds]
absence_s = 1

[[sections.players]]
start_no = 1
name = "Quiet"
platform_ref = "s-1"
"""

SERVICE = Thresholds(absence_s=60.0, extra_person_s=40.0)
"""The service's thresholds in these tests: far too long to be reached."""


def load_event(settings: Settings, tmp_path: Path) -> None:
    engine = create_database_engine(settings)
    migrate(engine)
    with engine.begin() as connection:
        store_event(connection, parse_event(EVENT, tmp_path), now=0)
    engine.dispose()


async def status(platform: Platformer, player: str) -> dict[str, Any]:
    response = await platform.client.get(f"/api/v1/players/{player}/camera", headers=ARBITER)
    assert response.status == 200
    result: dict[str, Any] = await response.json()
    return result


async def test_each_stream_follows_its_players_section(
    platform: Platformer, settings: Settings, tmp_path: Path
) -> None:
    load_event(settings, tmp_path)
    add_arbiter(settings)
    context = app_context(platform)
    context.camera.ingest.settings.thresholds = SERVICE
    media = tmp_path / "media"
    context.camera.settings = Settings(database_url=settings.database_url, media_dir=str(media))
    tokens = {player: await issue(platform, player) for player in ("q-1", "s-1", "n-1")}
    before = await status(platform, "q-1")  # before any stream: the policy that will apply
    assert before["connected"] is False and before["policy"]["section"]["section"] == "quick"
    connections = [await connect(platform, tokens[player], ScriptedCamera([(60, 0)])) for player in tokens]
    camera = context.camera
    try:
        # q-1 is in two sections: the later one applies, its absence_s (1.5 s) over the service's 60 s.
        await wait_for(lambda: _flagged(camera, "q-1", "left-area"))
        left_id = camera.open_incidents[(StreamKey("q-1"), "left-area")]
        await wait_for(lambda: _analysed(camera, ("s-1", "n-1"), 6))  # 3 s of an empty room for them too
        assert not await _flagged(camera, "s-1", "left-area")  # its section does not check presence
        assert not await _flagged(camera, "n-1", "left-area")  # no section: the service's 60 s
        quiet = camera.ingest.sessions[StreamKey("s-1")].monitor
        assert quiet.conditions[Check.LEFT_AREA].active is not None and quiet.active() == []  # followed, not raised
        prompt = await platform.client.post("/api/v1/players/q-1/camera/prompts", headers=ARBITER,
                                            json={"kind": "room-scan", "seconds": 5})  # fmt: skip
        assert prompt.status == 201
        scan = (await prompt.json())["incident"]

        async def recorded() -> bool:
            return all(p["recorded"] is not None for p in (await status(platform, "q-1"))["prompts"])

        await wait_for(recorded)
    finally:
        for pc in connections:
            await pc.close()
    incidents = {i["id"]: i for i in await (await platform.client.get("/api/v1/incidents", headers=ARBITER)).json()}
    left = incidents[left_id]
    (name,) = left["evidence"]["media"]
    assert re.fullmatch(r"nyc-2021/quick/\d+-left-area-[0-9a-f]{8}\.jpg", name), name
    data = (media / name).read_bytes()
    assert data[:2] == b"\xff\xd8" and hashlib.sha256(data).hexdigest() == left["evidence"]["sha256"]
    (clip,) = [a["verdict"]["evidence"] for a in incidents[scan]["actions"] if a["action"] == "evidence"]
    assert clip["media"][0].startswith("nyc-2021/quick/") and clip["media"][0].endswith(".webm")
    assert hashlib.sha256((media / clip["media"][0]).read_bytes()).hexdigest() == clip["sha256"]
    assert [i["kind"] for i in incidents.values()].count("left-area") == 1
    assert sorted(path.name for path in media.iterdir()) == ["nyc-2021"]  # nothing at the top level

    quick, quiet_status, none = [await status(platform, player) for player in ("q-1", "s-1", "n-1")]
    assert quick["policy"]["section"] == {"event": "nyc-2021", "section": "quick", "name": "Quick"}
    thresholds = quick["policy"]["thresholds"]
    assert (thresholds["absence_s"], thresholds["clear_s"]) == (1.5, 1.0)  # the section's
    assert thresholds["extra_person_s"] == 40.0 and "not_a_threshold" not in thresholds  # the service's, field by field
    assert quick["policy"]["checks"] == sorted(check.value for check in Check)
    assert (quick["policy"]["evidence_retention_days"], quick["policy"]["media_folder"]) == (30, "nyc-2021/quick")
    assert quiet_status["policy"]["checks"] == ["camera-covered", "camera-frozen", "camera-lost", "camera-moved",
                                                "extra-person"]  # fmt: skip
    assert quiet_status["policy"]["evidence_retention_days"] == 365 and quiet_status["findings"] == []
    assert none["policy"]["section"] is None and none["policy"]["thresholds"]["absence_s"] == 60.0
    assert none["policy"]["media_folder"] == "" and none["policy"]["evidence_retention_days"] == 90


async def _flagged(camera: Any, player: str, kind: str) -> bool:
    return (StreamKey(player), kind) in camera.open_incidents


async def _analysed(camera: Any, players: tuple[str, ...], frames: int) -> bool:
    sessions = [camera.ingest.sessions.get(StreamKey(player)) for player in players]
    return all(session is not None and session.frames_analysed >= frames for session in sessions)


async def test_media_expire_after_their_sections_retention(settings: Settings, tmp_path: Path) -> None:
    load_event(settings, tmp_path)
    engine = create_database_engine(settings)
    with engine.connect() as connection:
        sections = retention_by_folder(connection)
    engine.dispose()
    day = 86_400
    cameras = {folder: seconds for folder, seconds in sections.items() if not folder.endswith(("/screen", "/sound"))}
    assert cameras == {"nyc-2021/slow": 365 * day, "nyc-2021/quick": 30 * day, "nyc-2021/quiet": 365 * day}
    assert sections["nyc-2021/quick/screen"] == 30 * day  # the screen's own (screen_retention_days, issue 15)
    assert sections["nyc-2021/quick/sound"] == 30 * day  # the microphone's clips (sound_retention_days, issue 15)
    media, now = tmp_path / "media", time.time()
    ages = {
        "old.jpg": 100, "new.jpg": 10,  # the top level: the service's 90 days
        "nyc-2021/quick/old.jpg": 40, "nyc-2021/quick/new.webm": 20,  # 30 days
        "nyc-2021/slow/old.jpg": 100,  # 365 days: kept
        "gone-2019/open/old.jpg": 100, "gone-2019/open/new.jpg": 50,  # a section no longer there: 90 days
    }  # fmt: skip
    for name, days in ages.items():
        path = media / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"x")
        os.utime(path, (now - days * day, now - days * day))
    expired = [file.name for file in expired_media(media, 90 * day, now, sections)]
    assert expired == ["gone-2019/open/old.jpg", "nyc-2021/quick/old.jpg", "old.jpg"]


async def test_every_check_an_event_file_may_name_is_mapped() -> None:
    assert set(POLICY_CHECKS) == set(CHECKS)
