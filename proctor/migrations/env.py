"""Alembic environment: runs on the connection the service hands over (proctor.database.migrate), or on the URL in
``PROCTOR_DATABASE_URL`` when run with the ``alembic`` command."""

from __future__ import annotations

import os

from alembic import context
from sqlalchemy import create_engine
from sqlmodel import SQLModel

import proctor.models  # noqa: F401  (registers the tables on SQLModel.metadata)

target_metadata = SQLModel.metadata
connection = context.config.attributes.get("connection")
if connection is None:
    engine = create_engine(os.environ.get("PROCTOR_DATABASE_URL", "sqlite:///proctor.db"))
    with engine.begin() as own:
        context.configure(connection=own, target_metadata=target_metadata, render_as_batch=True)
        with context.begin_transaction():
            context.run_migrations()
else:
    context.configure(connection=connection, target_metadata=target_metadata, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()
