"""Issue 12, item 20: when the database cannot store (the disk full), the refusal is JSON and ``/healthz`` says why
(503) until a write succeeds again; any other failure is a 500 in JSON too."""

from __future__ import annotations

import time
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from sqlalchemy import event

from proctor.settings import Settings
from proctor.signatures import signed_headers
from proctor.web.status import error_middleware
from tests.proctor import conftest as proctor_fixtures
from tests.proctor.conftest import Platformer, app_context

database_url, settings, platform = proctor_fixtures.database_url, proctor_fixtures.settings, proctor_fixtures.platform


async def test_a_full_disk_is_a_json_refusal_and_healthz_reports_it(platform: Platformer, settings: Settings) -> None:
    if not settings.database_url.startswith("sqlite"):
        pytest.skip("SQLite's max_page_count stands for the full disk")
    assert (await platform.create("before"))[0] == 200
    engine = app_context(platform).engine
    full = True

    def no_room(connection: Any, _record: Any) -> None:  # SQLite's own limit: SQLITE_FULL, as on a full disk
        if full:
            cursor = connection.cursor()
            pages = cursor.execute("PRAGMA page_count").fetchone()[0]
            cursor.execute(f"PRAGMA max_page_count={pages}")
            cursor.close()

    event.listen(engine, "connect", no_room)
    engine.pool.dispose()
    statuses = []
    for g in range(40):
        response = await platform.client.post(
            f"/api/v1/webhooks/{platform.name}",
            data=(body := platform.body("game.created", f"full-{g}", _setup(f"full-{g}"))),
            headers=_signed(platform, f"full-{g}", body),
        )
        assert response.content_type == "application/json"
        statuses.append(response.status)
        if response.status >= 400:
            answer = await response.json()
            assert (response.status, answer["error"]) == (503, "storage"), answer
            assert "full" in answer["message"] and response.headers["Retry-After"]
            break
    assert statuses[-1] == 503, statuses
    health = await platform.client.get("/healthz")
    answer = await health.json()
    assert health.status == 503 and answer["status"] == "failing" and "full" in answer["writer_failure"], answer

    full = False
    engine.pool.dispose()
    assert (await platform.create("after"))[0] == 200
    health = await platform.client.get("/healthz")
    assert health.status == 200 and (await health.json())["status"] == "ok"


async def test_an_unexpected_failure_is_a_json_500() -> None:
    async def broken(request: web.Request) -> web.Response:
        raise RuntimeError("a bug")

    app = web.Application(middlewares=[error_middleware])
    app.router.add_get("/broken", broken)
    async with TestClient(TestServer(app)) as client:
        response = await client.get("/broken")
        assert response.status == 500 and response.content_type == "application/json"
        assert (await response.json())["error"] == "internal"


def _setup(game: str) -> dict[str, Any]:
    return {"black": {"id": f"{game}-b"}, "white": {"id": f"{game}-w"}, "rule": "renju", "time_control": "rapid-15",
            "start_at": "2026-01-01T00:00:00.000Z"}  # fmt: skip


def _signed(platform: Platformer, webhook_id: str, body: bytes) -> dict[str, str]:
    return signed_headers(platform.secret, webhook_id, int(time.time()), body)
