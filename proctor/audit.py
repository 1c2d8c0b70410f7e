"""The audit log: a hash chain of entries, appended as changes are staged, and its verification (``proctor audit
verify``).

Each entry's hash covers its content and the previous entry's hash, so an edited entry breaks its own hash and a
deleted one breaks the chain (and leaves a gap in the ids); the feed deliveries, incidents, arbiters' camera actions
and appeals (with their votes and decisions) are counted against their audit entries, so that removing the last
entries together with nothing else is caught too.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, func, select
from sqlmodel import col

from proctor.models import Appeal, AppealDecision, AppealVote, AuditEntry, CameraAction, FeedDelivery, Incident
from proctor.staging import Batch, Staging

GENESIS = "0" * 64
"""The previous hash of the first entry."""


def audit_hash(previous: str, at: int, actor: str, action: str, subject: str, detail: dict[str, Any]) -> str:
    canonical = json.dumps(
        {"prev": previous, "at": at, "actor": actor, "action": action, "subject": subject, "detail": detail},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


class AuditChain:
    """The chain's head as committed, and the appending of entries to a batch (on the writer thread)."""

    def __init__(self, staging: Staging) -> None:
        self.staging = staging
        self.last_hash = GENESIS

    def load(self, connection: Connection) -> None:
        head = connection.execute(select(col(AuditEntry.hash)).order_by(col(AuditEntry.id).desc()).limit(1)).scalar()
        self.last_hash = head or GENESIS

    def append(self, batch: Batch, at: int, actor: str, action: str, subject: str, detail: dict[str, Any]) -> None:
        """Append a hash-chained audit entry (no personal data: ids and references only)."""
        previous = batch.last_hash or self.last_hash
        digest = audit_hash(previous, at, actor, action, subject, detail)
        self.staging.stage(batch, "audit_entry", {
            "id": self.staging.allocate(batch, "audit_entry"), "at_ms": at, "actor": actor, "action": action,
            "subject": subject, "detail": detail, "prev_hash": previous, "hash": digest,
        })  # fmt: skip
        batch.last_hash = digest

    def commit(self, batch: Batch) -> None:
        """Make a committed batch's last entry the head."""
        if batch.last_hash is not None:
            self.last_hash = batch.last_hash


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
