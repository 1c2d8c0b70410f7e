"""Evidence is kept while something still needs it, and each deletion is audited (item 22 of issue 12): the retention
sweep deletes media past their retention except those an open incident or an open appeal names, with an audit entry
per deleted file, and ``proctor audit verify`` stays intact."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import time
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlmodel import col

from proctor.audit import verify_audit
from proctor.camera import DETECTOR
from proctor.database import create_database_engine
from proctor.models import AuditEntry
from proctor.settings import Settings
from tests.proctor.conftest import Platformer, app_context
from tests.proctor.test_appeals import appeal_body
from tests.proctor.test_arbiters import act, add_arbiter

pytestmark = pytest.mark.asyncio


async def test_the_sweep_holds_what_open_incidents_and_appeals_name_and_audits_each_deletion(
    platform: Platformer, settings: Settings, tmp_path: Path
) -> None:
    context = app_context(platform)
    media = tmp_path / "media"
    context.camera.settings = dataclasses.replace(settings, media_dir=str(media), media_retention_days=7)
    chief = add_arbiter(settings, "Li", "chief")
    _, created = await platform.create("g1")
    game = int(created["game"])
    old = time.time() - 30 * 86_400
    for name in ("open.jpg", "dismissed.jpg", "appealed.jpg", "named-by-nothing.jpg", "new.jpg",
                 "added-later.webm"):  # fmt: skip
        (media / name).parent.mkdir(parents=True, exist_ok=True)
        (media / name).write_bytes(name.encode())
        if name != "new.jpg":
            os.utime(media / name, (old, old))

    async def incident(name: str, game_id: int | None = None) -> int:
        evidence = {"media": [name], "sha256": hashlib.sha256(name.encode()).hexdigest()}
        return int(await context.writer.submit(lambda connection, batch: context.service.raise_incident(
            connection, batch, game_id, "camera-covered", "the camera is covered", source="detector:camera",
            article="36.4", evidence=evidence, at=int(time.time() * 1000))))  # fmt: skip

    still_open = await incident("open.jpg")
    dismissed = await incident("dismissed.jpg")
    appealed = await incident("appealed.jpg", game)
    for incident_id in (dismissed, appealed):
        status, _ = await act(platform, chief, f"/api/v1/incidents/{incident_id}/actions",
                              {"action": "dismiss", "note": "nothing there"})  # fmt: skip
        assert status == 201
    await context.writer.submit(lambda connection, batch: context.service.add_evidence(  # a clip, after the incident
        connection, batch, still_open, DETECTOR, "added-later.webm", hashlib.sha256(b"added-later.webm").hexdigest(),
        "the clip", int(time.time() * 1000)))  # fmt: skip
    status, _ = await act(platform, chief, "/api/v1/appeals", appeal_body(game))  # an open appeal on the game
    assert status == 201

    removed = await context.camera.sweep_media_once()
    assert removed == ["dismissed.jpg", "named-by-nothing.jpg"]
    left = sorted(path.name for path in media.iterdir())
    assert left == ["added-later.webm", "appealed.jpg", "new.jpg", "open.jpg"]

    status, _ = await act(platform, chief, f"/api/v1/incidents/{still_open}/actions",
                          {"action": "dismiss", "note": "handled"})  # fmt: skip
    assert status == 201
    assert await context.camera.sweep_media_once() == ["added-later.webm", "open.jpg"]  # closed: no longer held

    engine = create_database_engine(settings)
    with engine.connect() as connection:
        entries = connection.execute(select(col(AuditEntry.subject), col(AuditEntry.detail)).where(
            col(AuditEntry.action) == "media.deleted").order_by(col(AuditEntry.id))).all()  # fmt: skip
        report = verify_audit(connection)
    engine.dispose()
    assert [subject for subject, _ in entries] == [
        "media:dismissed.jpg",
        "media:named-by-nothing.jpg",
        "media:added-later.webm",
        "media:open.jpg",
    ]
    assert entries[0][1]["sha256"] == hashlib.sha256(b"dismissed.jpg").hexdigest()
    assert report.ok, report.problems
