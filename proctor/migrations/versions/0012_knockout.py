"""knockout stages: a pairing's own time control (play-off games, regulations 2023 VII(4)3) and the bracket's draw
(27.1, 28.4)

Revision ID: 0012
Revises: 0011
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("pairing", schema=None) as batch_op:
        batch_op.add_column(sa.Column("time_control", sa.String(length=60), nullable=False, server_default=""))
    op.create_table(
        "bracket_draw",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("section_id", sa.Integer(), nullable=False),
        sa.Column("seeds", sa.JSON(), nullable=False),
        sa.Column("source", sa.JSON(), nullable=True),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("recorded_by", sa.String(length=200), nullable=False),
        sa.Column("recorded_role", sa.String(length=20), nullable=False),
        sa.Column("created_ms", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(["section_id"], ["section.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("section_id"),
    )


def downgrade() -> None:
    op.drop_table("bracket_draw")
    with op.batch_alter_table("pairing", schema=None) as batch_op:
        batch_op.drop_column("time_control")
