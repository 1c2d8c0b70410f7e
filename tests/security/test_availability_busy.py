"""Issue 12, item 10: while another process holds SQLite's write lock, reads answer at once (WAL: readers never wait
for a writer), and a change answers 503 with Retry-After within a few seconds (never a 500, never a stalled event
loop); once the lock is released, changes work again."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import insert

from proctor.accounts import set_password, token_hash
from proctor.database import create_database_engine
from proctor.models import Arbiter
from proctor.settings import Settings
from tests.proctor import conftest as proctor_fixtures
from tests.proctor.conftest import Platformer

database_url, settings, platform = proctor_fixtures.database_url, proctor_fixtures.settings, proctor_fixtures.platform
PASSWORD = "correct horse battery"
HOLD = """
import sqlite3, sys, time
connection = sqlite3.connect(sys.argv[1], isolation_level=None)
connection.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
time.sleep(120)
"""


def add_chief(settings: Settings) -> dict[str, str]:
    engine = create_database_engine(settings)
    with engine.begin() as connection:
        connection.execute(insert(Arbiter).values(name="Li", role="chief", token_hash=token_hash("li-token")))
        set_password(connection, "Li", PASSWORD)
    engine.dispose()
    return {"Authorization": "Bearer li-token"}


def hold_write_lock(database_url: str) -> Iterator[subprocess.Popen[str]]:
    """Another process that holds the write lock (BEGIN IMMEDIATE) until it is stopped."""
    path = database_url.removeprefix("sqlite:///")
    holder = subprocess.Popen([sys.executable, "-c", HOLD, path], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        yield holder
    finally:
        holder.kill()
        holder.wait(timeout=10)


async def timed(call: Any) -> tuple[float, Any]:
    started = time.monotonic()
    response = await call
    return time.monotonic() - started, response


async def test_reads_answer_and_changes_are_503_while_another_process_holds_the_write_lock(
    platform: Platformer, settings: Settings
) -> None:
    if not settings.database_url.startswith("sqlite"):
        pytest.skip("SQLite's write lock")
    chief = add_chief(settings)
    assert (await platform.create("busy"))[0] == 200
    client = platform.client
    for holder in hold_write_lock(settings.database_url):
        for path in ("/healthz", "/api/v1/games", "/api/v1/incidents"):
            took, response = await timed(client.get(path, headers=chief))
            assert response.status == 200 and took < 1.0, (path, response.status, took)
        took, response = await timed(client.post("/api/v1/session", json={"name": "Li", "password": PASSWORD}))
        answer = await response.json()
        assert (response.status, answer["error"]) == (503, "busy") and took < 6.0, (response.status, answer, took)
        assert int(response.headers["Retry-After"]) > 0 and "busy" in answer["message"]
        took, response = await timed(client.post("/api/v1/players/busy-b/stream-token", headers=chief))
        assert response.status == 503 and took < 6.0 and response.headers["Retry-After"], (response.status, took)
        took, response = await timed(client.get("/api/v1/games", headers=chief))
        assert response.status == 200 and took < 1.0
        took, response = await timed(client.get("/healthz"))
        assert response.status == 503 and took < 1.0 and "busy" in (await response.json())["writer_failure"]
        holder.kill()
    response = await client.post("/api/v1/session", json={"name": "Li", "password": PASSWORD})
    assert response.status == 201
    assert (await client.get("/healthz")).status == 200
