"""audited rows: the account changes' chain; the rows and accounts stored before this version sealed at the upgrade

Revision ID: 0007
Revises: 0006
"""

from __future__ import annotations

import time

import sqlalchemy as sa
from alembic import op
from sqlalchemy import func, insert, select
from sqlmodel import col

from proctor.account_log import record_account
from proctor.audit import GENESIS, audit_hash
from proctor.models import Arbiter, AuditEntry
from proctor.staging import SEALED_TABLES, row_digest

SEALED_AT_0007 = ("game", "feed_delivery", "game_event", "incident", "incident_action", "camera_action", "appeal",
                  "appeal_vote", "appeal_decision")  # fmt: skip
"""The sealed tables this revision knows (later revisions add tables that do not exist yet here)."""

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "account_change",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("at_ms", sa.BigInteger(), nullable=False),
        sa.Column("actor", sa.String(length=200), nullable=False),
        sa.Column("arbiter", sa.String(length=200), nullable=False),
        sa.Column("change", sa.String(length=20), nullable=False),
        sa.Column("state", sa.JSON(), nullable=True),
        sa.Column("prev_hash", sa.String(length=64), nullable=False),
        sa.Column("hash", sa.String(length=64), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("hash"),
        sa.UniqueConstraint("prev_hash"),
    )
    with op.batch_alter_table("account_change", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_account_change_arbiter"), ["arbiter"], unique=False)
    _seal_what_is_stored()


def _seal_what_is_stored() -> None:
    """A database from before this version: its arbiters and append-only rows are recorded as they are now (one
    ``rows.sealed`` audit entry), so that verification covers them from the upgrade on."""
    connection = op.get_bind()
    now = int(time.time() * 1000)
    for (name,) in connection.execute(select(col(Arbiter.name)).order_by(col(Arbiter.id))):
        record_account(connection, name, "upgrade", "existing", now)
    rows: dict[str, str] = {}
    for table_name, table in SEALED_TABLES.items():
        if table_name not in SEALED_AT_0007:
            continue
        for row in connection.execute(select(table)).mappings():
            rows[f"{table_name}:{row['id']}"] = row_digest(table, dict(row))
    if not rows:
        return
    head = connection.execute(select(col(AuditEntry.hash)).order_by(col(AuditEntry.id).desc()).limit(1)).scalar()
    previous = head or GENESIS
    last = connection.execute(select(func.max(col(AuditEntry.id)))).scalar() or 0
    detail = {"rows": rows}
    connection.execute(insert(AuditEntry).values(
        id=last + 1, at_ms=now, actor="upgrade", action="rows.sealed", subject="rows", detail=detail,
        prev_hash=previous, hash=audit_hash(previous, now, "upgrade", "rows.sealed", "rows", detail),
    ))  # fmt: skip


def downgrade() -> None:
    with op.batch_alter_table("account_change", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_account_change_arbiter"))
    op.drop_table("account_change")
