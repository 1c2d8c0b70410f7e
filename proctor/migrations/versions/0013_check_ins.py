"""check-ins: a player's check-in for a round recorded by hand, and its undoing (24.1.1)

Revision ID: 0013
Revises: 0012
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "check_in",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("section_id", sa.Integer(), nullable=False),
        sa.Column("round_no", sa.Integer(), nullable=False),
        sa.Column("start_no", sa.Integer(), nullable=False),
        sa.Column("action", sa.String(length=20), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("detail", sa.JSON(), nullable=True),
        sa.Column("recorded_by", sa.String(length=200), nullable=False),
        sa.Column("recorded_role", sa.String(length=20), nullable=False),
        sa.Column("created_ms", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(["section_id"], ["section.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("check_in", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_check_in_section_id"), ["section_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("check_in", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_check_in_section_id"))
    op.drop_table("check_in")
