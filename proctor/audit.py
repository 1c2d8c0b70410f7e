"""The audit log's verification: ``proctor audit verify``.

Each entry's hash covers its content and the previous entry's hash, so an edited entry breaks its own hash and a
deleted one breaks the chain (and leaves a gap in the ids); the feed deliveries, incidents, arbiters' camera actions
and appeals (with their votes and decisions) are counted against their audit entries, so that removing the last
entries together with nothing else is caught too.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Connection, func, select
from sqlmodel import col

from proctor.models import Appeal, AppealDecision, AppealVote, AuditEntry, CameraAction, FeedDelivery, Incident
from proctor.service import GENESIS, audit_hash


@dataclass(frozen=True)
class AuditReport:
    entries: int
    problems: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.problems


def verify_audit(connection: Connection) -> AuditReport:
    problems: list[str] = []
    previous = GENESIS
    expected_id: int | None = None
    count = 0
    counts: dict[str, int] = {}
    for row in connection.execute(select(AuditEntry).order_by(col(AuditEntry.id))):
        count += 1
        if expected_id is not None and row.id != expected_id:
            problems.append(f"entries {expected_id}–{row.id - 1} are missing")
        expected_id = row.id + 1
        if row.prev_hash != previous:
            problems.append(f"entry {row.id}: does not follow the entry before it (deleted or reordered)")
        recomputed = audit_hash(row.prev_hash, row.at_ms, row.actor, row.action, row.subject, row.detail or {})
        if recomputed != row.hash:
            problems.append(f"entry {row.id}: its content was changed after it was written")
        previous = row.hash
        counts[row.action] = counts.get(row.action, 0) + 1
    deliveries = connection.execute(select(func.count()).select_from(FeedDelivery)).scalar_one()
    audited = counts.get("feed.received", 0) + counts.get("game.created", 0)
    if deliveries != audited:
        problems.append(f"{deliveries} feed deliveries are stored but {audited} are in the audit log")
    camera = sum(n for action, n in counts.items() if action.startswith("camera."))
    for what, table, audited in (
        ("incidents", Incident, counts.get("incident.raised", 0)),
        ("camera actions", CameraAction, camera),
        ("appeals", Appeal, counts.get("appeal.filed", 0)),
        ("appeal votes", AppealVote, counts.get("appeal.vote", 0)),
        ("appeal decisions", AppealDecision, counts.get("appeal.decided", 0)),
    ):
        stored = connection.execute(select(func.count()).select_from(table)).scalar_one()
        if stored != audited:
            problems.append(f"{stored} {what} are stored but {audited} are in the audit log")
    return AuditReport(count, tuple(problems))
