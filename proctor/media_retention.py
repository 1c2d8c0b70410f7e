"""Evidence retention: snapshots and clips past their retention are deleted by the hourly sweep, except those an open
incident or an open appeal names (held until it is closed), and each deletion is an audit entry (``media.deleted``,
with the file's name and SHA-256).

An incident is closed once it is dismissed or penalised (as the dashboard's "handled"); an appeal once the committee
has decided it.  An incident names the files of its evidence, of the evidence added to it later, and of the camera
actions recorded on it; an appeal holds its incident's and its game's incidents' files."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, or_, select
from sqlmodel import col

from proctor.models import Appeal, AppealDecision, CameraAction, Incident, IncidentAction
from proctor.service import Service
from proctor.staging import Batch

CLOSING_ACTIONS = ("dismiss", "penalty")
"""The actions after which an incident no longer holds its media."""


@dataclass(frozen=True, slots=True)
class ExpiredFile:
    name: str
    """Relative to the media folder (``event/section/file.jpg``), as evidence names it."""
    sha256: str
    written_ms: int
    retention_s: float


def expired_media(folder: Path, max_age_s: float, now: float,
                  sections: Mapping[str, float] | None = None) -> list[ExpiredFile]:  # fmt: skip
    """The media files under ``folder`` last written more than their retention before ``now``: in a folder named in
    ``sections`` (``event/section``, relative to ``folder``) after its retention (seconds), anywhere else after
    ``max_age_s``; with their SHA-256 (for the audit entry of their deletion)."""
    if not folder.is_dir():
        return []
    sections = sections or {}
    found = []
    for directory, _, files in os.walk(folder):  # symbolic links to folders are not followed
        where = Path(directory).relative_to(folder).as_posix()
        max_age = sections.get(where, max_age_s)
        for file in files:
            path = Path(directory) / file
            if path.is_file() and (written := path.stat().st_mtime) < now - max_age:
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
                name = file if where == "." else f"{where}/{file}"
                found.append(ExpiredFile(name, digest, int(written * 1000), max_age))
    return sorted(found, key=lambda f: f.name)


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


def held_media(connection: Connection) -> set[str]:
    """Every name an open incident or an open appeal's incidents mention (the media among them are held)."""
    closed = select(col(IncidentAction.incident_id)).where(col(IncidentAction.action).in_(CLOSING_ACTIONS))
    decided = select(col(AppealDecision.appeal_id))
    appealed = connection.execute(
        select(col(Appeal.incident_id), col(Appeal.game_id)).where(col(Appeal.id).not_in(decided))
    ).all()
    appealed_incidents = [incident for incident, _ in appealed if incident is not None]
    appealed_games = [game for _, game in appealed if game is not None]
    holding = select(col(Incident.id)).where(or_(
        col(Incident.id).not_in(closed), col(Incident.id).in_(appealed_incidents),
        col(Incident.game_id).in_(appealed_games),
    ))  # fmt: skip
    named: set[str] = set()
    for (evidence,) in connection.execute(select(col(Incident.evidence)).where(col(Incident.id).in_(holding))):
        named.update(_strings(evidence))
    for (verdict,) in connection.execute(
        select(col(IncidentAction.verdict)).where(col(IncidentAction.incident_id).in_(holding))
    ):
        named.update(_strings(verdict))
    for (detail,) in connection.execute(
        select(col(CameraAction.detail)).where(col(CameraAction.incident_id).in_(holding))
    ):
        named.update(_strings(detail))
    return named


def retire_media(service: Service, connection: Connection, batch: Batch, expired: list[ExpiredFile],
                 now: int) -> list[str]:  # fmt: skip
    """On the writer thread: the expired files no open incident or appeal holds, each with its audit entry
    (``media.deleted``) staged; the caller deletes them once the batch has committed."""
    held = held_media(connection)
    deleting = [file for file in expired if file.name not in held]
    for file in deleting:
        service.audit(connection, batch, now, "service", "media.deleted", f"media:{file.name}", {
            "sha256": file.sha256, "written_ms": file.written_ms, "retention_s": file.retention_s,
        })  # fmt: skip
    return [file.name for file in deleting]
