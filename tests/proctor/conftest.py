"""Fixtures for the service: a real app on a real database, real signed webhooks."""

from __future__ import annotations

import itertools
import json
import os
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient
from sqlalchemy import create_engine, insert, select, text
from sqlmodel import col

from proctor.accounts import token_hash
from proctor.app import create_app
from proctor.context import CONTEXT
from proctor.database import create_database_engine, migrate
from proctor.models import Arbiter, Platform, PlatformSecret
from proctor.settings import Settings
from proctor.signatures import new_secret, signed_headers
from tests.proctor.redis_server import redis_server  # noqa: F401 - a fixture for the tests of the bus across processes

T0 = 1_767_225_600_000  # 2026-01-01T00:00:00Z


def iso(ms: int) -> str:
    seconds, rest = divmod(ms, 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{rest:03d}Z"


def database_urls() -> list[str]:
    urls = ["sqlite"]
    if os.environ.get("PROCTOR_TEST_POSTGRES_URL"):
        urls.append("postgresql")
    return urls


@pytest.fixture(params=database_urls())
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'proctor.db'}"
        return
    url = fresh_postgres_database("test")
    yield url
    base = os.environ["PROCTOR_TEST_POSTGRES_URL"]
    admin = create_engine(base.replace("postgresql://", "postgresql+psycopg://"), isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'DROP DATABASE IF EXISTS "{url.rsplit("/", 1)[1]}" WITH (FORCE)'))
    admin.dispose()


def fresh_postgres_database(purpose: str) -> str:
    """A new, empty database on the test server (scripts/with-postgres); the server goes with its data after."""
    base = os.environ["PROCTOR_TEST_POSTGRES_URL"]
    name = f"proctor_{purpose}_{os.getpid()}_{next(_counter)}"
    admin = create_engine(base.replace("postgresql://", "postgresql+psycopg://"), isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    return base.rsplit("/", 1)[0] + "/" + name


_counter = itertools.count()


@dataclass
class Platformer:
    """A platform posting signed webhooks to the app."""

    client: TestClient[Any, Any]
    name: str
    secret: str
    ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))
    seqs: dict[str, int] = field(default_factory=dict)

    def body(
        self, kind: str, game: str, data: dict[str, Any] | None = None, at: int = T0, seq: int | None = None
    ) -> bytes:
        if seq is None:
            seq = self.seqs.get(game, 0) + 1
        self.seqs[game] = max(self.seqs.get(game, 0), seq)
        return json.dumps({"type": kind, "game_id": game, "seq": seq, "at": iso(at), "data": data or {}}).encode()

    async def post(self, body: bytes, webhook_id: str | None = None, secret: str | None = None,
                   timestamp: int | None = None) -> tuple[int, dict[str, Any]]:  # fmt: skip
        webhook_id = webhook_id or f"msg_{next(self.ids)}"
        headers = signed_headers(secret or self.secret, webhook_id, timestamp or int(time.time()), body)
        response = await self.client.post(f"/api/v1/webhooks/{self.name}", data=body, headers=headers)
        return response.status, await response.json()

    async def send(self, kind: str, game: str, data: dict[str, Any] | None = None, at: int = T0,
                   seq: int | None = None) -> tuple[int, dict[str, Any]]:  # fmt: skip
        return await self.post(self.body(kind, game, data, at, seq))

    async def create(self, game: str, *, rule: str = "renju", time_control: Any = "rapid-15", start: int = T0,
                     opening: str | None = None) -> tuple[int, dict[str, Any]]:  # fmt: skip
        data = {"black": {"id": f"{game}-b", "name": "Black"}, "white": {"id": f"{game}-w", "name": "White"},
                "rule": rule, "time_control": time_control, "start_at": iso(start)}  # fmt: skip
        if opening:
            data["opening"] = opening
        return await self.send("game.created", game, data, at=start - 60_000)


async def seat(platform: Platformer, player: str) -> None:
    """Make the service know a player (a stream token is issued only for a known one): Black in a game scheduled an
    hour from now, against ``{player}-opponent``."""
    start = int(time.time() * 1000) + 3_600_000
    data = {"black": {"id": player, "name": player}, "white": {"id": f"{player}-opponent", "name": "Opponent"},
            "rule": "renju", "time_control": "rapid-15", "start_at": iso(start)}  # fmt: skip
    status, body = await platform.send("game.created", f"seat-{player}", data, at=start - 60_000)
    assert status == 200, body


def reader(platform: Platformer) -> dict[str, str]:
    """The bearer header of the review panel's account ``Reader`` (added on first use): the full game view, with
    player ids, verdicts, feed state and incidents, is for arbiters and the review panel."""
    engine = app_context(platform).engine
    with engine.begin() as connection:
        if connection.execute(select(col(Arbiter.id)).where(col(Arbiter.name) == "Reader")).first() is None:
            connection.execute(insert(Arbiter).values(name="Reader", role="reviewer", token_hash=token_hash("reader")))
    return {"Authorization": "Bearer reader"}


def register_platform(database_url: str, name: str = "tourney") -> str:
    settings = Settings(database_url=database_url)
    engine = create_database_engine(settings)
    migrate(engine)
    secret = new_secret()
    with engine.begin() as connection:
        platform_id = connection.execute(
            insert(Platform).values(name=name, created_ms=0).returning(col(Platform.id))
        ).scalar_one()
        connection.execute(insert(PlatformSecret).values(platform_id=platform_id, secret=secret, created_ms=0))
    engine.dispose()
    return secret


@pytest.fixture
def settings(database_url: str) -> Settings:
    return Settings(database_url=database_url, deadline_grace_ms=0, feed_gap_timeout_s=0.5)


@pytest.fixture
async def platform(settings: Settings, aiohttp_client: Any) -> AsyncIterator[Platformer]:
    secret = register_platform(settings.database_url)
    app: web.Application = create_app(settings)
    client = await aiohttp_client(app)
    yield Platformer(client, "tourney", secret)


def app_context(platform: Platformer) -> Any:
    app = platform.client.app
    assert app is not None
    return app[CONTEXT]
