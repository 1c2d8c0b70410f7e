"""cases: incidents grouped per player (or game) and kind, with the actions taken on them (append-only, audited)

Revision ID: 0009
Revises: 0008
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "incident_case",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("key", sa.String(length=200), nullable=False),
        sa.Column("kind", sa.String(length=60), nullable=False),
        sa.Column("player_ref", sa.String(length=100), nullable=True),
        sa.Column("game_id", sa.Integer(), nullable=True),
        sa.Column("follows", sa.Integer(), nullable=True),
        sa.Column("created_ms", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(["game_id"], ["game.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("incident_case", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_incident_case_key"), ["key"], unique=False)
        batch_op.create_index(batch_op.f("ix_incident_case_kind"), ["kind"], unique=False)
    op.create_table(
        "case_occurrence",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("case_id", sa.Integer(), nullable=False),
        sa.Column("incident_id", sa.Integer(), nullable=False),
        sa.Column("created_ms", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(["case_id"], ["incident_case.id"]),
        sa.ForeignKeyConstraint(["incident_id"], ["incident.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("incident_id"),
    )
    with op.batch_alter_table("case_occurrence", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_case_occurrence_case_id"), ["case_id"], unique=False)
    op.create_table(
        "case_action",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("case_id", sa.Integer(), nullable=False),
        sa.Column("arbiter", sa.String(length=200), nullable=False),
        sa.Column("role", sa.String(length=20), nullable=False),
        sa.Column("action", sa.String(length=20), nullable=False),
        sa.Column("note", sa.Text(), nullable=False),
        sa.Column("detail", sa.JSON(), nullable=True),
        sa.Column("created_ms", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(["case_id"], ["incident_case.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("case_action", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_case_action_case_id"), ["case_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("case_action", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_case_action_case_id"))
    op.drop_table("case_action")
    with op.batch_alter_table("case_occurrence", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_case_occurrence_case_id"))
    op.drop_table("case_occurrence")
    with op.batch_alter_table("incident_case", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_incident_case_kind"))
        batch_op.drop_index(batch_op.f("ix_incident_case_key"))
    op.drop_table("incident_case")
