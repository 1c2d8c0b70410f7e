"""match games: a pairing's game number within its match (regulations 2023 VII(2), the two-game system); the games
of one match share their round and board

Revision ID: 0010
Revises: 0009
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def _pairing_without_board_key() -> sa.Table:
    """The pairing table as 0001 made it, without its unnamed unique key on (section, round, board): SQLite cannot
    drop an unnamed constraint, so the table is copied from this definition."""
    return sa.Table(
        "pairing",
        sa.MetaData(),
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("section_id", sa.Integer(), nullable=False),
        sa.Column("round_no", sa.Integer(), nullable=False),
        sa.Column("board", sa.Integer(), nullable=False),
        sa.Column("black_start_no", sa.Integer(), nullable=False),
        sa.Column("white_start_no", sa.Integer(), nullable=True),
        sa.Column("platform_game_id", sa.String(length=100), nullable=False),
        sa.Column("result", sa.String(length=8), nullable=False),
        sa.ForeignKeyConstraint(["section_id"], ["section.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.Index("ix_pairing_section_id", "section_id"),
    )


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        batch = op.batch_alter_table("pairing", copy_from=_pairing_without_board_key(), recreate="always")
    else:
        op.drop_constraint("pairing_section_id_round_no_board_key", "pairing", type_="unique")
        batch = op.batch_alter_table("pairing")
    with batch as batch_op:
        batch_op.add_column(sa.Column("game_no", sa.Integer(), nullable=False, server_default="1"))
        batch_op.create_unique_constraint("uq_pairing_match_game", ["section_id", "round_no", "board", "game_no"])


def downgrade() -> None:
    with op.batch_alter_table("pairing", schema=None) as batch_op:
        batch_op.drop_constraint("uq_pairing_match_game", type_="unique")
        batch_op.drop_column("game_no")
        batch_op.create_unique_constraint("pairing_section_id_round_no_board_key", ["section_id", "round_no", "board"])
