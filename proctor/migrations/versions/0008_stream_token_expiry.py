"""stream tokens expire (``expires_ms``; those issued before expire a day after they were issued)

Revision ID: 0008
Revises: 0007
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("stream_token", schema=None) as batch_op:
        batch_op.add_column(sa.Column("expires_ms", sa.BigInteger(), nullable=True))
    op.execute("UPDATE stream_token SET expires_ms = created_ms + 86400000 WHERE expires_ms IS NULL")


def downgrade() -> None:
    with op.batch_alter_table("stream_token", schema=None) as batch_op:
        batch_op.drop_column("expires_ms")
