"""The security suite runs on the service's own fixtures: a real app on a real database (SQLite, and PostgreSQL
under scripts/with-postgres), real signed webhooks."""

from __future__ import annotations

from tests.proctor.conftest import database_url, platform, settings

__all__ = ["database_url", "platform", "settings"]
