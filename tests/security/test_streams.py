"""Event streams end when what authorised them ends (item 7 of issue 12): a player's page stream when its stream
token is revoked, the dashboards' live stream when its session logs out, is ended elsewhere or expires."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from sqlalchemy import update
from sqlmodel import col

from proctor.accounts import token_hash
from proctor.database import create_database_engine
from proctor.models import Arbiter, ArbiterSession
from proctor.settings import Settings
from tests.proctor.conftest import Platformer
from tests.proctor.test_accounts import add, log_in
from tests.proctor.test_arbiters import add_arbiter, bearer, started_game

pytestmark = pytest.mark.asyncio


async def rest_of(response: Any, within_s: float) -> str:
    """Everything the stream still sends, up to its end; a stream that does not end in time fails the test."""
    try:
        data: bytes = await asyncio.wait_for(response.content.read(), within_s)
        return data.decode()
    except TimeoutError:
        raise AssertionError(f"the stream was still open after {within_s} s") from None


async def test_a_revoked_stream_tokens_page_stream_ends_at_once(platform: Platformer, settings: Settings) -> None:
    token = add_arbiter(settings, "Cam", "arbiter")
    await started_game(platform, "g1")
    issued = await platform.client.post("/api/v1/players/g1-b/stream-token", headers=bearer(token))
    stream_token = (await issued.json())["token"]
    page = await platform.client.get(f"/api/v1/play/{stream_token}/events")
    assert page.status == 200
    assert (await page.content.readuntil(b"\n\n")).startswith(b"event: state")
    started = time.monotonic()
    assert (await platform.client.post("/api/v1/players/g1-b/stream-token", headers=bearer(token))).status == 201
    rest = await rest_of(page, 1.0)
    assert time.monotonic() - started < 1.0
    assert "event: end" in rest and "new link" in rest
    assert (await platform.client.get(f"/api/v1/play/{stream_token}/events")).status == 404


async def test_the_live_stream_ends_when_its_session_logs_out(platform: Platformer, settings: Settings) -> None:
    add(settings, "Li", "chief")
    csrf = (await (await log_in(platform, "Li")).json())["csrf"]
    stream = await platform.client.get("/api/v1/stream")
    assert stream.status == 200
    assert await stream.content.readuntil(b"\n\n") == b": connected\n\n"
    started = time.monotonic()
    assert (await platform.client.delete("/api/v1/session", headers={"X-CSRF-Token": csrf})).status == 204
    rest = await rest_of(stream, 1.0)
    assert time.monotonic() - started < 1.0 and "event: end" in rest and "log in again" in rest
    assert (await platform.client.get("/api/v1/stream")).status == 401


@pytest.mark.parametrize("how", ["ended by another process", "expired"])
async def test_the_live_stream_ends_when_its_session_ends_elsewhere(
    platform: Platformer, settings: Settings, how: str
) -> None:
    add(settings, "Li", "chief")
    assert (await log_in(platform, "Li")).status == 201
    stream = await platform.client.get("/api/v1/stream")
    assert await stream.content.readuntil(b"\n\n") == b": connected\n\n"
    engine = create_database_engine(settings)  # another process's view of the database: no signal to this one
    now = int(time.time() * 1000)
    change = {"ended_ms": now} if how == "ended by another process" else {"expires_ms": now}
    with engine.begin() as connection:
        connection.execute(update(ArbiterSession).where(col(ArbiterSession.ended_ms).is_(None)).values(**change))
    engine.dispose()
    rest = await rest_of(stream, settings.stream_recheck_s + 1.0)
    assert "event: end" in rest


async def test_the_live_stream_by_bearer_token_ends_when_the_token_is_replaced(
    platform: Platformer, settings: Settings
) -> None:
    token = add_arbiter(settings, "Cam", "arbiter")
    stream = await platform.client.get("/api/v1/stream", headers=bearer(token))
    assert await stream.content.readuntil(b"\n\n") == b": connected\n\n"
    add(settings, "Other", "arbiter")  # a change that is not this arbiter's: the stream stays
    with pytest.raises(AssertionError, match="still open"):
        await rest_of(stream, settings.stream_recheck_s + 0.5)
    engine = create_database_engine(settings)
    with engine.begin() as connection:
        connection.execute(update(Arbiter).where(col(Arbiter.name) == "Cam").values(token_hash=token_hash("new")))
    engine.dispose()
    assert "event: end" in await rest_of(stream, settings.stream_recheck_s + 1.0)
