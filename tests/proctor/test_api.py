"""The read side, the OpenAPI document, the live stream and the audit chain."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import pytest
from sqlalchemy import text, update

from proctor.audit import verify_audit
from proctor.database import create_database_engine
from proctor.models import AuditEntry
from proctor.settings import Settings
from proctor.web.routes import ROUTES
from tests.proctor.conftest import T0, Platformer, reader
from tests.proctor.test_arbiters import add_arbiter, bearer

pytestmark = pytest.mark.asyncio


async def test_the_openapi_document_matches_the_routes(platform: Platformer) -> None:
    document = await (await platform.client.get("/api/openapi.json")).json()
    assert document["openapi"].startswith("3.")
    documented = {(method.upper(), path) for path, item in document["paths"].items() for method in item}
    app = platform.client.app
    assert app is not None
    served = set()
    for resource in app.router.resources():
        info = resource.get_info()
        path = info.get("path") or info.get("formatter")
        for route in resource:
            if route.method != "HEAD":
                served.add((route.method, re.sub(r"\{(\w+)(:[^}]*)?\}", r"{\1}", path)))
    assert documented == served
    for path, item in document["paths"].items():
        for operation in item.values():
            assert operation["summary"] and operation["responses"]
            names = {p["name"] for p in operation.get("parameters", []) if p["in"] == "path"}
            assert names == set(re.findall(r"\{(\w+)\}", path)), path
    assert len(ROUTES) == len(served)


async def test_the_stream_is_for_arbiters_only(platform: Platformer, settings: Settings) -> None:
    assert (await platform.client.get("/api/v1/stream")).status == 401
    assert (await platform.client.get("/api/v1/incidents")).status == 401
    refused = await platform.client.get("/api/v1/stream", headers=bearer("not-a-token"))
    assert refused.status == 401 and (await refused.json())["error"] == "unauthorized"


async def test_the_stream_carries_every_committed_change(platform: Platformer, settings: Settings) -> None:
    response = await platform.client.get("/api/v1/stream", headers=bearer(add_arbiter(settings, "Sse", "reviewer")))
    assert response.headers["Content-Type"].startswith("text/event-stream")
    assert (await response.content.readline()) == b": connected\n"
    await platform.create("s1")
    frames: list[tuple[str, Any]] = []
    event = None
    async with asyncio.timeout(5):
        while not frames:
            line = (await response.content.readline()).decode().strip()
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: "):
                frames.append((event or "", json.loads(line[6:])))
    assert frames[0][0] == "game" and frames[0][1]["external_id"] == "s1"
    response.close()


async def test_the_game_view(platform: Platformer) -> None:
    await platform.create("v1", opening="soosorv-2")
    for side in ("b", "w"):
        await platform.send("player.joined", "v1", {"player": f"v1-{side}"}, at=T0 - 10_000)
    for index, point in enumerate(["h8", "h9", "h10"], start=1):
        await platform.send("move", "v1", {"point": point}, at=T0 + index * 1000)
    state = await (
        await platform.client.get(f"/api/v1/platforms/{platform.name}/games/v1", headers=reader(platform))
    ).json()
    assert state["opening"] == "soosorv-2" and state["position"]["black"] == ["h8", "h10"]
    assert state["opening_due"]["player"] == "v1-w" and "swap" in state["opening_due"]["options"]
    assert state["opening_due"]["article"] == "11.1.2 A"
    assert set(state["clocks"]) == {"v1-b", "v1-w"}


async def test_audit_verify_finds_edited_and_deleted_entries(platform: Platformer, settings: Settings) -> None:
    await platform.create("au1")
    for side in ("b", "w"):
        await platform.send("player.joined", "au1", {"player": f"au1-{side}"})
    engine = create_database_engine(settings)
    with engine.connect() as connection:
        report = verify_audit(connection)
    assert report.ok and report.entries == 3
    with engine.begin() as connection:
        connection.execute(update(AuditEntry).where(AuditEntry.id == 2).values(actor="someone else"))  # type: ignore[arg-type]
    with engine.connect() as connection:
        assert verify_audit(connection).problems == ("entry 2: its content was changed after it was written",)
    with engine.begin() as connection:
        connection.execute(text("DELETE FROM audit_entry WHERE id = 3"))
    with engine.connect() as connection:
        problems = verify_audit(connection).problems
    assert "3 feed deliveries are stored but 2 are in the audit log" in problems
    engine.dispose()
