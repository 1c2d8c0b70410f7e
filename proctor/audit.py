"""The audit log: a hash chain of entries, appended as changes are staged, and its verification (``proctor audit
verify``).

Each entry's hash covers its content and the previous entry's hash, so an edited entry breaks its own hash and a
deleted one breaks the chain (and leaves a gap in the ids); the feed deliveries, incidents, arbiters' camera actions,
appeals (with their votes and decisions) and cases (with their occurrences and actions) are counted against their
audit entries, so that removing the last entries together with nothing else is caught too.

The entries also hold the hash of every append-only row (``detail.rows``: ``table:id`` → SHA-256 of its content,
proctor.staging.SEALED): deliveries, game events, incidents and their actions, camera actions, appeals with their
votes and decisions, cases with their occurrences and actions, and what a game was created with.  Verification
checks each row against its hash (changed, deleted, or written outside the service), each game's state against the
replay of its events, each pairing's result against the last one entered or loaded from its event's file
(proctor.loaded_results), and the arbiters against their own chained log (proctor.account_log).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, func, select
from sqlmodel import col

from engine.adjudication import Adjudication, settings_from_dict
from engine.errors import EngineError
from proctor.account_log import verify_account_log
from proctor.codec import event_from_dict
from proctor.loaded_results import verify_loaded_results
from proctor.models import (
    Appeal,
    AppealDecision,
    AppealVote,
    AuditEntry,
    CameraAction,
    Case,
    CaseAction,
    CaseOccurrence,
    FeedDelivery,
    Game,
    GameEvent,
    Incident,
    Pairing,
)
from proctor.staging import SEALED_TABLES, Batch, Staging, row_digest

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
    """The chain's head as committed, and the appending of entries to a batch (on the writer thread).

    Entries are staged as the changes are; when the batch is written (:meth:`finish`) each append-only row's hash
    goes into the detail of the entry staged after it (else the batch's last entry; ``rows.sealed`` when the batch
    has none), and the entries are chained, in order."""

    def __init__(self, staging: Staging) -> None:
        self.staging = staging
        self.last_hash = GENESIS

    def load(self, connection: Connection) -> None:
        head = connection.execute(select(col(AuditEntry.hash)).order_by(col(AuditEntry.id).desc()).limit(1)).scalar()
        self.last_hash = head or GENESIS

    def append(self, batch: Batch, at: int, actor: str, action: str, subject: str, detail: dict[str, Any]) -> None:
        """Stage an audit entry (no personal data: ids, references and hashes only); chained by :meth:`finish`."""
        self.staging.stage(batch, "audit_entry", {
            "id": self.staging.allocate(batch, "audit_entry"), "at_ms": at, "actor": actor, "action": action,
            "subject": subject, "detail": dict(detail), "prev_hash": None, "hash": None,
        })  # fmt: skip

    def finish(self, batch: Batch, at: int) -> None:
        """Before the batch is written: the rows' hashes into their entries, and the entries chained."""
        if batch.seals and not batch.rows.get("audit_entry"):
            self.append(batch, at, "service", "rows.sealed", "rows", {})
        entries = batch.rows.get("audit_entry", [])
        for before, key, digest in batch.seals:
            entry = entries[min(before, len(entries) - 1)]
            entry["detail"].setdefault("rows", {})[key] = digest
        previous = self.last_hash
        for entry in entries:
            entry["prev_hash"] = previous
            entry["hash"] = previous = audit_hash(
                previous, entry["at_ms"], entry["actor"], entry["action"], entry["subject"], entry["detail"]
            )
        batch.last_hash = previous if entries else None

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
    """Check the chain, then every append-only row against the hash its audit entry holds, the rows that change by
    design against the replay of what is audited (games, results), and the account changes (proctor.account_log)."""
    problems: list[str] = []
    previous = GENESIS
    expected_id: int | None = None
    count = 0
    counts: dict[str, int] = {}
    sealed: dict[str, tuple[int, str]] = {}
    results: dict[int, tuple[int, str]] = {}
    for row in connection.execute(select(AuditEntry).order_by(col(AuditEntry.id))):
        count += 1
        if expected_id is not None and row.id != expected_id:
            problems.append(f"entries {expected_id}–{row.id - 1} are missing")
        expected_id = row.id + 1
        if row.prev_hash != previous:
            problems.append(f"entry {row.id}: does not follow the entry before it (deleted or reordered)")
        detail = row.detail or {}
        recomputed = audit_hash(row.prev_hash, row.at_ms, row.actor, row.action, row.subject, detail)
        if recomputed != row.hash:
            problems.append(f"entry {row.id}: its content was changed after it was written")
        previous = row.hash
        counts[row.action] = counts.get(row.action, 0) + 1
        for key, digest in (detail.get("rows") or {}).items():
            sealed[key] = (row.id, digest)
        if row.action == "pairing.result" and row.subject.startswith("pairing:"):
            results[int(row.subject.removeprefix("pairing:"))] = (row.at_ms, detail.get("new", ""))
    deliveries = connection.execute(select(func.count()).select_from(FeedDelivery)).scalar_one()
    audited = counts.get("feed.received", 0) + counts.get("game.created", 0)
    if deliveries != audited:
        problems.append(f"{deliveries} feed deliveries are stored but {audited} are in the audit log")
    camera = sum(n for action, n in counts.items() if action.startswith("camera."))
    opened, joined = counts.get("case.opened", 0), counts.get("case.occurrence", 0)
    case_actions = sum(n for action, n in counts.items() if action.startswith("case.")) - opened - joined
    for what, table, audited in (
        ("incidents", Incident, counts.get("incident.raised", 0)),
        ("camera actions", CameraAction, camera),
        ("appeals", Appeal, counts.get("appeal.filed", 0)),
        ("appeal votes", AppealVote, counts.get("appeal.vote", 0)),
        ("appeal decisions", AppealDecision, counts.get("appeal.decided", 0)),
        ("cases", Case, opened),
        ("case occurrences", CaseOccurrence, opened + joined),
        ("case actions", CaseAction, case_actions),
    ):
        stored = connection.execute(select(func.count()).select_from(table)).scalar_one()
        if stored != audited:
            problems.append(f"{stored} {what} are stored but {audited} are in the audit log")
    problems.extend(_check_rows(connection, sealed))
    problems.extend(_check_games(connection))
    loaded_problems, loaded = verify_loaded_results(connection)
    problems.extend(loaded_problems)
    problems.extend(_check_results(connection, results, loaded))
    problems.extend(verify_account_log(connection))
    return AuditReport(count, tuple(problems))


def _check_rows(connection: Connection, sealed: dict[str, tuple[int, str]]) -> list[str]:
    """Each append-only row against the hash in its audit entry: changed, deleted, or never audited."""
    problems = []
    for name, table in SEALED_TABLES.items():
        seen: set[str] = set()
        for row in connection.execute(select(table).order_by(table.c.id)).mappings():
            key = f"{name}:{row['id']}"
            seen.add(key)
            entry = sealed.get(key)
            if entry is None:
                problems.append(f"{name} {row['id']}: not in the audit log (written outside the service)")
            elif row_digest(table, dict(row)) != entry[1]:
                problems.append(f"{name} {row['id']}: changed after it was written (audit entry {entry[0]} has its "
                                "hash)")  # fmt: skip
        for key, (entry_id, _) in sealed.items():
            table_name, _, row_id = key.partition(":")
            if table_name == name and key not in seen:
                problems.append(f"{name} {row_id}: deleted (audit entry {entry_id} has its hash)")
    return problems


def _check_games(connection: Connection) -> list[str]:
    """Each game row's state against the replay of its (sealed) events from what it was created with."""
    problems = []
    for game in connection.execute(select(Game).order_by(col(Game.id))):
        events = connection.execute(
            select(col(GameEvent.event)).where(col(GameEvent.game_id) == game.id).order_by(col(GameEvent.position))
        ).scalars()
        try:
            state = Adjudication.new(settings_from_dict(game.settings or {}))
            applied = 0
            for data in events:
                state = state.apply(event_from_dict(data or {}))
                applied += 1
        except (EngineError, ValueError, KeyError, TypeError) as error:
            problems.append(f"game {game.id}: its events do not replay ({error})")
            continue
        outcome = state.outcome
        replayed = {
            "applied": applied,
            "status": "over" if outcome else ("live" if state.started else "scheduled"),
            "winner": (outcome.winner.value if outcome.winner else None) if outcome else None,
            "reason": outcome.termination.value if outcome else None,
            "article": outcome.article if outcome else None,
        }
        for column, value in replayed.items():
            stored = getattr(game, column)
            if stored != value:
                problems.append(f"game {game.id}: its {column} is {stored!r} but the replay of its events gives "
                                f"{value!r}")  # fmt: skip
    return problems


def _check_results(
    connection: Connection, entered: dict[int, tuple[int, str]], loaded: dict[int, tuple[int, str]]
) -> list[str]:
    """Each pairing's result against the last one entered for it (``pairing.result``) or loaded from its event's file
    (proctor.loaded_results), whichever came later."""
    problems = []
    rows = connection.execute(select(col(Pairing.id), col(Pairing.result)).order_by(col(Pairing.id)))
    for pairing_id, result in rows:
        candidates = []
        if pairing_id in entered:
            candidates.append((*entered[pairing_id], "entered"))
        if pairing_id in loaded:
            candidates.append((*loaded[pairing_id], "loaded from the event file"))
        if not candidates:
            if result:
                problems.append(f"pairing {pairing_id}: its result is {result!r} but no result was loaded from an "
                                "event file or entered for it")  # fmt: skip
            continue
        _, last, how = max(candidates, key=lambda candidate: (candidate[0], candidate[2] == "entered"))
        if result != last:
            problems.append(f"pairing {pairing_id}: its result is {result!r} but the last one {how} is {last!r}")
    return problems
