"""The database: engines for SQLite (the embedded default) and PostgreSQL, and migrations (Alembic) to the head."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, create_engine, event

from proctor.settings import Settings

MIGRATIONS = Path(__file__).parent / "migrations"


WRITES = "proctor_writes"
"""The execution option of the writer's transactions (:func:`writing`)."""


def writing(engine: Engine) -> Engine:
    """The engine as the writer uses it: on SQLite its transactions begin with ``BEGIN IMMEDIATE``."""
    return engine.execution_options(**{WRITES: True})


def normalise_url(url: str) -> str:
    """``postgresql://`` and ``postgres://`` use psycopg 3; anything else is taken as given."""
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


def create_database_engine(settings: Settings) -> Engine:
    url = normalise_url(settings.database_url)
    if url.startswith("sqlite"):
        busy_ms = round(settings.sqlite_busy_timeout_s * 1000)
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": busy_ms / 1000})
        synchronous = settings.sqlite_synchronous

        @event.listens_for(engine, "connect")
        def _pragmas(connection: Any, _record: Any) -> None:
            connection.isolation_level = None  # SQLAlchemy emits BEGIN itself, so SAVEPOINTs work (its pysqlite docs)
            cursor = connection.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute(f"PRAGMA synchronous={synchronous}")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute(f"PRAGMA busy_timeout={busy_ms}")
            cursor.close()

        @event.listens_for(engine, "begin")
        def _begin(connection: Any) -> None:
            # The writer's transactions take the write lock first (waiting up to the busy timeout for another
            # process's): a transaction that read first could not wait for it, it would fail at once.  Reads take
            # none (WAL: readers never wait for a writer).
            immediate = connection.get_execution_options().get(WRITES, False)
            connection.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")

        return engine
    return create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=10)


def migrate(engine: Engine) -> None:
    """Bring the schema to the latest migration (idempotent)."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "head")
