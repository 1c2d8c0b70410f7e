"""What the analysis workers tell the service (proctor.web.workers): only with the workers' secret; a finding, its
end, its clip, a microphone's finding and its sound clip, and a gap each recorded once however often a worker tries
them again (its answer lost); malformed reports refused with nothing stored; and the routes closed where the service
has no workers."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sqlalchemy import func, insert, select
from sqlmodel import col

from proctor.app import create_app
from proctor.models import CameraAction, Incident, IncidentAction
from proctor.settings import Settings
from tests.proctor.conftest import Platformer, app_context
from tests.proctor.test_camera import issue_token
from video.audio import wav_bytes

pytestmark = pytest.mark.asyncio

SECRET = "the-workers-secret"
WORKER = {"Authorization": f"Bearer {SECRET}"}
JPEG = b"\xff\xd8\xff\xe0 a snapshot \xff\xd9"


@pytest.fixture
def settings(database_url: str, tmp_path: Any) -> Settings:
    return Settings(database_url=database_url, deadline_grace_ms=0, worker_secret=SECRET,
                    media_dir=str(tmp_path / "media"))  # fmt: skip


def finding(**changes: Any) -> dict[str, Any]:
    body = {"player": "wr-1", "device": "front", "check": "camera-covered", "started": 1_900_000_000.25,
            "ended": None, "detail": "dark picture", "snapshot": base64.b64encode(JPEG).decode(),
            "worker": "w1"}  # fmt: skip
    return {**body, **changes}


def counts(platform: Platformer) -> tuple[int, int]:
    with app_context(platform).engine.connect() as connection:
        incidents = connection.execute(select(func.count()).select_from(Incident)).scalar_one()
        actions = connection.execute(select(func.count()).select_from(IncidentAction)).scalar_one()
    return incidents, actions


async def test_only_the_workers_secret_opens_the_reports(platform: Platformer) -> None:
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": SECRET}):
        response = await platform.client.post("/api/v1/worker/findings", json=finding(), headers=headers)
        assert response.status == 401, headers
    assert counts(platform) == (0, 0)


async def test_a_finding_its_end_its_clip_and_a_gap_are_each_recorded_once(
    platform: Platformer, settings: Settings
) -> None:
    await issue_token(platform, settings, "wr-1")
    before = counts(platform)
    answers = []
    for _ in range(2):  # the worker tries again: its first answer was lost
        response = await platform.client.post("/api/v1/worker/findings", json=finding(), headers=WORKER)
        assert response.status == 200, await response.text()
        answers.append((await response.json())["incident"])
    assert answers[0] == answers[1] is not None
    clip = {**finding(), "clip": base64.b64encode(b"webm bytes").decode()}
    del clip["snapshot"]
    for _ in range(2):
        response = await platform.client.post("/api/v1/worker/clips", json=clip, headers=WORKER)
        assert response.status == 200 and (await response.json())["incident"] == answers[0]
    for _ in range(2):
        response = await platform.client.post("/api/v1/worker/findings", json=finding(ended=1_900_000_009.0),
                                              headers=WORKER)  # fmt: skip
        assert response.status == 200 and (await response.json())["incident"] == answers[0]
    gap = {"player": "wr-1", "device": "side", "from_ms": 1_900_000_020_000, "to_ms": 1_900_000_026_500}
    gaps = []
    for _ in range(2):
        response = await platform.client.post("/api/v1/worker/gaps", json=gap, headers=WORKER)
        assert response.status == 200, await response.text()
        gaps.append((await response.json())["incident"])
    assert gaps[0] == gaps[1] != answers[0]
    # one finding, one gap; the clip, the end and the gap's end once each
    assert counts(platform) == (before[0] + 2, before[1] + 3)
    with app_context(platform).engine.connect() as connection:
        covered = connection.execute(select(Incident).where(col(Incident.id) == answers[0])).one()
        assert covered.kind == "camera-covered" and covered.created_ms == 1_900_000_000_250
        assert covered.source == "detector:camera" and covered.article == "36.4"
        assert len(covered.evidence["media"]) == 1
        notes = (
            connection.execute(
                select(col(IncidentAction.note))
                .where(col(IncidentAction.incident_id) == answers[0])
                .order_by(col(IncidentAction.id))
            )
            .scalars()
            .all()
        )
        assert notes[0].startswith("clip ") and notes[1] == "ended after 9 s"
        stored_gap = connection.execute(select(Incident).where(col(Incident.id) == gaps[0])).one()
        assert stored_gap.kind == "analysis-gap" and stored_gap.evidence == {"device": "side", "gap_ms": 6500}
    media = sorted(p.name for p in Path(settings.media_dir).rglob("*") if p.is_file())
    assert len([m for m in media if m.endswith(".jpg")]) == 1 and len([m for m in media if m.endswith(".webm")]) == 1


def sound(**changes: Any) -> dict[str, Any]:
    body = {"player": "wr-1", "check": "voice", "started": 1_900_000_100.5, "ended": None,
            "detail": "speech heard while no face was in view", "worker": "w1"}  # fmt: skip
    return {**body, **changes}


async def test_a_microphones_finding_its_end_and_its_sound_clip_are_each_recorded_once(
    platform: Platformer, settings: Settings
) -> None:
    await issue_token(platform, settings, "wr-1")
    before = counts(platform)
    wav = wav_bytes(np.full(16_000, 0.1, dtype=np.float32))
    answers = []
    for body in (sound(), sound(), {**sound(), "clip": base64.b64encode(wav).decode()},
                 {**sound(), "clip": base64.b64encode(wav).decode()}):  # fmt: skip
        path = "/api/v1/worker/sound-clips" if "clip" in body else "/api/v1/worker/sounds"
        response = await platform.client.post(path, json=body, headers=WORKER)
        assert response.status == 200, await response.text()
        answers.append((await response.json())["incident"])
    for _ in range(2):
        response = await platform.client.post("/api/v1/worker/sounds", json=sound(ended=1_900_000_112.0),
                                              headers=WORKER)  # fmt: skip
        answers.append((await response.json())["incident"])
    assert len(set(answers)) == 1 and answers[0] is not None
    assert counts(platform) == (before[0] + 1, before[1] + 2)  # the flag; its clip and its end once each
    with app_context(platform).engine.connect() as connection:
        voice = connection.execute(select(Incident).where(col(Incident.id) == answers[0])).one()
        assert voice.kind == "voice" and voice.created_ms == 1_900_000_100_500
        assert voice.source == "detector:microphone" and voice.article == "36.4.2, 36.4.3"
        assert voice.evidence["device"] == "microphone"
        actions = connection.execute(select(IncidentAction).where(col(IncidentAction.incident_id) == answers[0])
                                     .order_by(col(IncidentAction.id))).all()  # fmt: skip
    assert actions[0].note.startswith("sound clip ") and actions[1].note == "ended after 12 s"
    (kept,) = [p for p in Path(settings.media_dir).rglob("*.wav")]
    assert kept.read_bytes() == wav
    assert actions[0].verdict["evidence"]["sha256"] == hashlib.sha256(wav).hexdigest()


@pytest.mark.parametrize(
    ("path", "body", "field", "status"),
    [
        ("/api/v1/worker/sounds", sound(check="camera-covered"), "'check'", 400),
        ("/api/v1/worker/sounds", sound(started="noon"), "'started'", 400),
        ("/api/v1/worker/sounds", sound(ended=5.0), "'ended'", 400),
        ("/api/v1/worker/sound-clips", sound(), "'clip'", 400),
        ("/api/v1/worker/sound-clips", {**sound(), "clip": base64.b64encode(b"not a wav").decode()}, "'clip'", 400),
        ("/api/v1/worker/sounds", sound(player="nobody"), "nobody", 404),
    ],
)
async def test_malformed_microphone_reports_are_refused_and_store_nothing(
    platform: Platformer, settings: Settings, path: str, body: dict[str, Any], field: str, status: int
) -> None:
    await issue_token(platform, settings, "wr-1")
    before = counts(platform)
    response = await platform.client.post(path, json=body, headers=WORKER)
    assert response.status == status, await response.text()
    assert field in (await response.json())["message"]
    assert (await platform.client.post(path, json=sound(), headers={})).status == 401
    assert counts(platform) == before


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/api/v1/worker/findings", finding(check="hat"), "'check'"),
        ("/api/v1/worker/findings", finding(started="noon"), "'started'"),
        ("/api/v1/worker/findings", finding(started=float("inf")), "'started'"),
        ("/api/v1/worker/findings", finding(ended=1.0), "'ended'"),
        ("/api/v1/worker/findings", finding(snapshot="not base64!"), "'snapshot'"),
        ("/api/v1/worker/findings", finding(player=""), "'player'"),
        ("/api/v1/worker/clips", finding(), "'clip'"),
        ("/api/v1/worker/gaps", {"player": "wr-1", "from_ms": 5, "to_ms": 4}, "'to_ms'"),
        ("/api/v1/worker/gaps", {"player": "wr-1", "from_ms": "5", "to_ms": 6}, "'from_ms'"),
    ],
)
async def test_malformed_reports_are_refused_and_store_nothing(
    platform: Platformer, settings: Settings, path: str, body: dict[str, Any], field: str
) -> None:
    await issue_token(platform, settings, "wr-1")
    before = counts(platform)
    try:
        response = await platform.client.post(path, json=body, headers=WORKER)
    except ValueError:  # aiohttp refuses to send infinity as JSON: sent as Python's json writes it
        response = await platform.client.post(path, data=json.dumps(body), headers={**WORKER,
                                              "Content-Type": "application/json"})  # fmt: skip
    assert response.status == 400, await response.text()
    assert field in (await response.json())["message"]
    unknown = await platform.client.post(path, json={**finding(), "device": "third-eye"}, headers=WORKER)
    assert unknown.status == 404
    stranger = await platform.client.post(path, json={**finding(), "player": "nobody"}, headers=WORKER)
    assert stranger.status == 404
    assert counts(platform) == before


async def test_without_workers_the_reports_and_the_rooms_are_closed(database_url: str, aiohttp_client: Any) -> None:
    client = await aiohttp_client(create_app(Settings(database_url=database_url)))
    response = await client.post("/api/v1/worker/findings", json=finding(), headers=WORKER)
    assert response.status == 404 and "no analysis workers" in (await response.json())["message"]
    response = await client.post("/api/v1/sfu/room", json={"token": "nope"})
    assert response.status == 404  # an unknown token first


async def test_an_approved_views_still_is_read_by_its_hash_with_the_workers_secret_only(
    platform: Platformer, settings: Settings
) -> None:
    """What a worker fetches to compare the stream it holds with (proctor.worker): the still of a recorded approved
    view, by its SHA-256; a malformed name is 400, an unknown still 404, and nothing without the secret."""
    media = Path(settings.media_dir)
    (media / "wr").mkdir(parents=True)
    (media / "wr" / "side-reference.jpg").write_bytes(JPEG)
    digest = hashlib.sha256(JPEG).hexdigest()
    with app_context(platform).engine.begin() as connection:
        connection.execute(insert(CameraAction).values(
            player_ref="wr-1", arbiter="Cam", role="chief", kind="reference", created_ms=1,
            detail={"device": "side", "media": "wr/side-reference.jpg", "sha256": digest, "note": ""},
        ))  # fmt: skip
    path = f"/api/v1/worker/references/{digest}"
    found = await platform.client.get(path, headers=WORKER)
    assert found.status == 200 and await found.read() == JPEG and found.content_type == "image/jpeg"
    for headers in ({}, {"Authorization": "Bearer wrong"}):
        assert (await platform.client.get(path, headers=headers)).status == 401
    assert (await platform.client.get(f"/api/v1/worker/references/{'0' * 64}", headers=WORKER)).status == 404
    assert (await platform.client.get("/api/v1/worker/references/..%2Fproctor.db", headers=WORKER)).status in (400, 404)
    assert (await platform.client.get("/api/v1/worker/references/ABC", headers=WORKER)).status == 400
    # A still changed on disk since it was approved is not handed out as that view.
    (media / "wr" / "side-reference.jpg").write_bytes(JPEG + b"changed")
    assert (await platform.client.get(path, headers=WORKER)).status == 404
