"""withdrawals: a player's withdrawal from a section after a round, with its reason (24.4, 24.1.2)

Revision ID: 0011
Revises: 0010
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "withdrawal",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("section_id", sa.Integer(), nullable=False),
        sa.Column("start_no", sa.Integer(), nullable=False),
        sa.Column("after_round", sa.Integer(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("recorded_by", sa.String(length=200), nullable=False),
        sa.Column("recorded_role", sa.String(length=20), nullable=False),
        sa.Column("created_ms", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(["section_id"], ["section.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("section_id", "start_no"),
    )
    with op.batch_alter_table("withdrawal", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_withdrawal_section_id"), ["section_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("withdrawal", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_withdrawal_section_id"))
    op.drop_table("withdrawal")
