"""Staging: a transaction's changes held in a :class:`Batch` until the writer (proctor.writer) flushes and commits it.

A job stages rows (ids allocated here, with no round trip: the writer is the only writer of these tables) and new
game states; :meth:`Staging.flush` writes the rows, one executemany per table, parents first; only once the
transaction has committed does the rest become visible, so that a failed commit leaves memory as it was.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sqlalchemy import JSON, Connection, Table, bindparam, func, select, update

from proctor.models import (
    Appeal,
    AppealDecision,
    AppealVote,
    AuditEntry,
    BracketDraw,
    CameraAction,
    Case,
    CaseAction,
    CaseOccurrence,
    CheckIn,
    FeedDelivery,
    Game,
    GameEvent,
    Incident,
    IncidentAction,
    Withdrawal,
)

if TYPE_CHECKING:
    from proctor.cases import CaseHead
    from proctor.live_games import LiveGame


def table_of(model: Any) -> Table:
    table: Table = model.__table__
    return table


GAME_TABLE = table_of(Game)
FEED_TABLE = table_of(FeedDelivery)
#: The append-only tables whose ids the writer allocates, in the order they are written (parents first).
ALLOCATED: dict[str, Table] = {
    "game": GAME_TABLE,
    "feed_delivery": FEED_TABLE,
    "game_event": table_of(GameEvent),
    "incident": table_of(Incident),
    "incident_action": table_of(IncidentAction),
    "incident_case": table_of(Case),
    "case_occurrence": table_of(CaseOccurrence),
    "case_action": table_of(CaseAction),
    "audit_entry": table_of(AuditEntry),
}
SEALED: dict[str, tuple[str, ...] | None] = {
    "game": ("id", "platform_id", "external_id", "pairing_id", "black_ref", "white_ref", "black_name", "white_name",
             "settings", "created_ms"),
    "feed_delivery": None, "game_event": None, "incident": None, "incident_action": None, "camera_action": None,
    "appeal": None, "appeal_vote": None, "appeal_decision": None, "incident_case": None, "case_occurrence": None,
    "case_action": None, "withdrawal": None, "bracket_draw": None,
    "check_in": None,
}  # fmt: skip
"""The rows whose content the audit log holds a hash of, and the columns hashed (None: all).  A game row changes by
design (its state after each event): what it was created with is sealed, its state is checked against the replay of
its sealed events (``proctor audit verify``)."""
SEALED_TABLES: dict[str, Table] = {
    **{name: table for name, table in ALLOCATED.items() if name in SEALED},
    "camera_action": table_of(CameraAction), "appeal": table_of(Appeal), "appeal_vote": table_of(AppealVote),
    "appeal_decision": table_of(AppealDecision), "withdrawal": table_of(Withdrawal),
    "bracket_draw": table_of(BracketDraw), "check_in": table_of(CheckIn),
}  # fmt: skip
UPDATE_COLUMNS = (
    "last_seq", "applied", "status", "winner", "reason", "article", "next_deadline_ms", "updated_ms", "snapshot",
    "snapshot_applied",
)  # fmt: skip


@dataclass
class Notice:
    """What changed, for the live stream."""

    kind: str
    payload: dict[str, Any]


@dataclass
class Batch:
    """The staged changes of one transaction: new game states, rows to insert, game rows to update, ids allocated.
    The writer flushes the rows (one executemany per table) and commits, then makes the rest visible."""

    games: dict[int, LiveGame] = field(default_factory=dict)
    last_hash: str | None = None
    notices: list[Notice] = field(default_factory=list)
    rows: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    updates: dict[int, dict[str, Any]] = field(default_factory=dict)
    next_ids: dict[str, int] = field(default_factory=dict)
    webhooks: dict[tuple[int, str], int] = field(default_factory=dict)
    """(platform, webhook-id) → game, for deliveries staged in this batch."""
    bodies: dict[tuple[int, int], dict[str, Any]] = field(default_factory=dict)
    """(game, seq) → body, for deliveries staged in this batch."""
    seals: list[tuple[int, str, str]] = field(default_factory=list)
    """The hashes of the append-only rows staged or written in this batch, for the audit entries (proctor.audit):
    (how many audit entries were staged before the row, ``table:id``, the row's hash)."""
    cases: dict[int, CaseHead] = field(default_factory=dict)
    """The cases this batch opened or changed, by id (proctor.casebook)."""
    case_keys: dict[str, int] = field(default_factory=dict)
    """Key → the key's latest case, for the cases opened in this batch."""
    case_incidents: dict[int, int] = field(default_factory=dict)
    """Incident → its case, for the occurrences staged in this batch."""

    def mark(self) -> tuple[Any, ...]:
        """What a failed job must roll back to."""
        return (dict(self.games), len(self.notices), self.last_hash, {t: len(r) for t, r in self.rows.items()},
                {k: dict(v) for k, v in self.updates.items()}, dict(self.next_ids), dict(self.webhooks),
                dict(self.bodies), len(self.seals), dict(self.cases), dict(self.case_keys),
                dict(self.case_incidents))  # fmt: skip

    def restore(self, mark: tuple[Any, ...]) -> None:
        games, notices, last_hash, lengths, updates, next_ids, webhooks, bodies, seals, cases, keys, incidents = mark
        self.games, self.last_hash, self.updates, self.next_ids = games, last_hash, updates, next_ids
        self.webhooks, self.bodies = webhooks, bodies
        self.cases, self.case_keys, self.case_incidents = cases, keys, incidents
        del self.notices[notices:]
        del self.seals[seals:]
        for table, rows in self.rows.items():
            del rows[lengths.get(table, 0) :]


class RawJson(str):
    """JSON text that is already serialised (a delivery's body as received)."""


def row_digest(table: Table, row: Mapping[str, Any]) -> str:
    """The SHA-256 of a row's content (its sealed columns), the same for the row as staged and as read back: JSON
    columns are hashed as the JSON they store."""
    names = SEALED.get(table.name) or tuple(column.name for column in table.columns)
    json_columns = {column.name for column in table.columns if isinstance(column.type, JSON)}
    content: dict[str, Any] = {}
    for name in names:
        value = row.get(name)
        if name in json_columns and value is not None:
            value = json.loads(value) if isinstance(value, str) else json.loads(json.dumps(value))
        content[name] = value
    canonical = json.dumps({"table": table.name, "row": content}, sort_keys=True, separators=(",", ":"),
                           ensure_ascii=False)  # fmt: skip
    return hashlib.sha256(canonical.encode()).hexdigest()


def seal(batch: Batch, table: str, row: Mapping[str, Any]) -> None:
    """Put a row's hash into the batch, for the audit entry staged next (or the last one: proctor.audit)."""
    entries = len(batch.rows.get("audit_entry", ()))
    batch.seals.append((entries, f"{table}:{row['id']}", row_digest(SEALED_TABLES[table], row)))


def seal_stored(connection: Connection, batch: Batch, table: str, row_id: int) -> None:
    """Seal a row the job wrote itself (not staged), as the database holds it."""
    stored = SEALED_TABLES[table]
    row = connection.execute(select(stored).where(stored.c.id == row_id)).mappings().one()
    seal(batch, table, dict(row))


class Staging:
    """The next id of each append-only table, and the way staged rows reach the database."""

    def __init__(self) -> None:
        self.next_ids: dict[str, int] = {}

    def load(self, connection: Connection) -> None:
        for name, table in ALLOCATED.items():
            self.next_ids[name] = (connection.execute(select(func.max(table.c.id))).scalar() or 0) + 1

    def allocate(self, batch: Batch, table: str) -> int:
        """The next id of an append-only table (the writer is its only writer, so ids need no round trip)."""
        value = batch.next_ids.get(table, self.next_ids[table])
        batch.next_ids[table] = value + 1
        return value

    def stage(self, batch: Batch, table: str, row: dict[str, Any]) -> None:
        """Stage a row to insert; an append-only row's hash goes into the audit log (a staged row is not changed
        after this)."""
        batch.rows.setdefault(table, []).append(row)
        if table in SEALED:
            seal(batch, table, row)

    def flush(self, connection: Connection, batch: Batch) -> None:
        """Write the staged rows, parents first, then the game rows' updates."""
        for name, table in ALLOCATED.items():
            staged = batch.rows.get(name)
            if staged:
                insert_many(connection, table, staged)
        for with_snapshot in (False, True):
            rows = [
                {"game_key": game_id, **values}
                for game_id, values in batch.updates.items()
                if ("snapshot" in values) == with_snapshot
            ]
            if rows:
                columns = UPDATE_COLUMNS if with_snapshot else UPDATE_COLUMNS[:-2]
                statement = (
                    update(GAME_TABLE)
                    .where(GAME_TABLE.c.id == bindparam("game_key"))
                    .values({key: bindparam(key) for key in columns})
                )
                connection.execute(statement, rows)

    def commit(self, batch: Batch) -> None:
        """Make a committed batch's ids the next ones."""
        self.next_ids.update(batch.next_ids)


def insert_many(connection: Connection, table: Table, rows: list[dict[str, Any]]) -> None:
    """One executemany straight to the driver: the hot path of every delivery, without SQLAlchemy's per-row
    processing.  JSON columns are serialised here (a delivery's body is stored as the text that was received)."""
    columns = [column.name for column in table.columns]
    json_columns = {column.name for column in table.columns if isinstance(column.type, JSON)}
    marker = "?" if connection.dialect.paramstyle == "qmark" else "%s"
    sql = f"INSERT INTO {table.name} ({', '.join(columns)}) VALUES ({', '.join([marker] * len(columns))})"
    values = []
    for row in rows:
        record = []
        for name in columns:
            value = row.get(name)
            if name in json_columns and value is not None and not isinstance(value, RawJson):
                value = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
            record.append(value)
        values.append(tuple(record))
    connection.exec_driver_sql(sql, values)
