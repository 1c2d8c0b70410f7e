"""What the camera's detector already recorded, so that a finding told twice is recorded once: an analysis worker
tries a report again when the answer was lost (proctor.worker), and a standby writer that took over knows nothing
of what the first one held in memory.  A finding is known by its player, its kind and its start (the incident's
``created_ms``, the detector's own time), and by its detector: the cameras' or the microphones'
(proctor.sound_records)."""

from __future__ import annotations

from typing import Final

from sqlalchemy import Connection, and_, select

from proctor.models import Incident, IncidentAction
from proctor.staging import table_of

DETECTOR_SOURCE: Final = "detector:camera"
SOUND_SOURCE: Final = "detector:microphone"
ENDED_PREFIX: Final = "ended after "
CLIP_PREFIX: Final = "clip "
SOUND_CLIP_PREFIX: Final = "sound clip "


def recorded_incident(
    connection: Connection, player_ref: str, kind: str, at_ms: int, source: str = DETECTOR_SOURCE
) -> int | None:
    """The incident the detector (``source``) raised for this finding (or gap), if any."""
    incidents = table_of(Incident)
    row = connection.execute(
        select(incidents.c.id).where(and_(
            incidents.c.player_ref == player_ref, incidents.c.kind == kind, incidents.c.created_ms == at_ms,
            incidents.c.source == source,
        )).order_by(incidents.c.id).limit(1)
    ).first()  # fmt: skip
    return None if row is None else int(row.id)


def _noted(connection: Connection, incident_id: int, action: str, prefix: str, source: str) -> bool:
    actions = table_of(IncidentAction)
    row = connection.execute(
        select(actions.c.id).where(and_(
            actions.c.incident_id == incident_id, actions.c.arbiter == source, actions.c.action == action,
            actions.c.note.startswith(prefix),
        )).limit(1)
    ).first()  # fmt: skip
    return row is not None


def ended_noted(connection: Connection, incident_id: int, source: str = DETECTOR_SOURCE) -> bool:
    """Whether the detector already noted the finding's end on the incident."""
    return _noted(connection, incident_id, "note", ENDED_PREFIX, source)


def clip_attached(connection: Connection, incident_id: int, source: str = DETECTOR_SOURCE) -> bool:
    """Whether the detector already attached the finding's clip (the cameras' video, the microphones' sound)."""
    prefix = SOUND_CLIP_PREFIX if source == SOUND_SOURCE else CLIP_PREFIX
    return _noted(connection, incident_id, "evidence", prefix, source)
