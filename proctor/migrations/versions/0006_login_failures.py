"""login failures: the login limit's state in the database

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-02 10:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "login_failure",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("address", sa.String(length=100), nullable=False),
        sa.Column("at_ms", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("login_failure", schema=None) as batch_op:
        batch_op.create_index("ix_login_failure_name_address", ["name", "address"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("login_failure", schema=None) as batch_op:
        batch_op.drop_index("ix_login_failure_name_address")
    op.drop_table("login_failure")
