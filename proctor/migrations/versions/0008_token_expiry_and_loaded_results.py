"""stream tokens expire; results loaded from event files are audited rows

Stream tokens get ``expires_ms`` (those issued before expire a day after they were issued); ``loaded_result`` holds
the results event files gave, chained on their own like the account changes, the pairings stored before this version
sealed at the upgrade.

Revision ID: 0008
Revises: 0007
"""

from __future__ import annotations

import time

import sqlalchemy as sa
from alembic import op
from sqlalchemy import select
from sqlmodel import col

from proctor.loaded_results import record_loaded_results
from proctor.models import Pairing

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("stream_token", schema=None) as batch_op:
        batch_op.add_column(sa.Column("expires_ms", sa.BigInteger(), nullable=True))
    op.execute("UPDATE stream_token SET expires_ms = created_ms + 86400000 WHERE expires_ms IS NULL")
    op.create_table(
        "loaded_result",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("at_ms", sa.BigInteger(), nullable=False),
        sa.Column("actor", sa.String(length=200), nullable=False),
        sa.Column("pairing_id", sa.Integer(), nullable=False),
        sa.Column("result", sa.String(length=10), nullable=False),
        sa.Column("prev_hash", sa.String(length=64), nullable=False),
        sa.Column("hash", sa.String(length=64), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("hash"),
        sa.UniqueConstraint("prev_hash"),
    )
    with op.batch_alter_table("loaded_result", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_loaded_result_pairing_id"), ["pairing_id"], unique=False)
    # The pairings stored before: their results as they are now, so that verification covers them from here on (a
    # result entered for one since keeps its later `pairing.result` entry).
    connection = op.get_bind()
    stored = connection.execute(select(col(Pairing.id), col(Pairing.result)).order_by(col(Pairing.id))).all()
    loaded = [(pairing, result) for pairing, result in stored if pairing is not None]
    record_loaded_results(connection, loaded, "existing", int(time.time() * 1000))


def downgrade() -> None:
    with op.batch_alter_table("loaded_result", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_loaded_result_pairing_id"))
    op.drop_table("loaded_result")
    with op.batch_alter_table("stream_token", schema=None) as batch_op:
        batch_op.drop_column("expires_ms")
