"""The logs carry no client addresses, no tokens, and no tracebacks for ordinary disconnects (item 18 of issue 12):
a real server on loopback with the service's access log, dashboards and a player's page that close their event
streams, and a 500."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from proctor import review
from proctor.app import create_app
from proctor.bus import InProcessBus
from proctor.context import CONTEXT
from proctor.settings import Settings
from proctor.signatures import signed_headers
from proctor.web.access_log import AccessLog
from tests.proctor.conftest import Platformer, iso, register_platform
from tests.proctor.test_arbiters import add_arbiter, bearer

pytestmark = pytest.mark.asyncio


async def closed_early(http: aiohttp.ClientSession, url: str, **headers: str) -> None:
    """Open an event stream, read its first frame, and go away."""
    response = await http.get(url, headers=headers)
    assert response.status == 200
    await response.content.readuntil(b"\n\n")
    response.close()


async def test_disconnects_and_failures_leave_no_address_token_or_traceback_in_the_log(
    settings: Settings, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = register_platform(settings.database_url)
    token = add_arbiter(settings, "Cam", "arbiter")
    caplog.set_level(logging.DEBUG)
    app = create_app(settings)
    runner = web.AppRunner(app, access_log_class=AccessLog)  # as 'proctor serve' runs it (web.run_app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    port = runner.addresses[0][1]
    base, auth = f"http://127.0.0.1:{port}", bearer(token)
    async with aiohttp.ClientSession() as http:
        await http.post(f"{base}/api/v1/webhooks/tourney")  # unsigned: a 401, logged as a request
        body = Platformer(http, "tourney", secret).body("game.created", "g1", {  # type: ignore[arg-type]
            "black": {"id": "p1", "name": "P"}, "white": {"id": "p2", "name": "Q"}, "rule": "renju",
            "time_control": "rapid-15", "start_at": iso(int(time.time() * 1000) + 3_600_000)})  # fmt: skip
        headers = signed_headers(secret, "msg_1", int(time.time()), body)
        assert (await http.post(f"{base}/api/v1/webhooks/tourney", data=body, headers=headers)).status == 200
        raised = await http.post(f"{base}/api/v1/incidents", json={"kind": "x", "summary": "y", "player": "p1"},
                                 headers=auth)  # fmt: skip
        assert raised.status == 201
        issued = await http.post(f"{base}/api/v1/players/p1/stream-token", headers=auth)
        assert issued.status == 201
        stream_token = (await issued.json())["token"]
        for _ in range(3):  # dashboards that close their live stream, and a player's page
            await closed_early(http, f"{base}/api/v1/stream", **auth)
        await closed_early(http, f"{base}/api/v1/play/{stream_token}/events")
        assert (await http.get(f"{base}/play/{stream_token}")).status == 200
        for _ in range(3):  # something to send on the closed streams: the writes find the clients gone
            await http.post(f"{base}/api/v1/incidents", json={"kind": "x", "summary": "y"}, headers=auth)
            await http.post(f"{base}/api/v1/players/p1/camera/messages", json={"text": "hello"}, headers=auth)
            await asyncio.sleep(0.3)

        context = app[CONTEXT]
        assert isinstance(context.bus, InProcessBus)
        assert not context.bus.subscribers and not context.camera.pages  # the closed streams have ended

        def broken(*args: Any, **kwargs: Any) -> Any:
            raise RuntimeError("a bug")

        monkeypatch.setattr(review, "incident_page", broken)
        assert (await http.get(f"{base}/api/v1/incidents", headers=auth)).status == 500
        await asyncio.sleep(settings.stream_recheck_s + 0.5)
    await runner.cleanup()

    records = caplog.records
    texts = [record.getMessage() + (logging.Formatter().formatException(record.exc_info) if record.exc_info else "")
             for record in records]  # fmt: skip
    assert any(record.name == "aiohttp.access" for record in records)  # the access log was written
    assert not [text for text in texts if "127.0.0.1" in text], "a client address in the log"
    assert not [text for text in texts if stream_token in text or token in text], "a token in the log"
    failures = [record for record in records if record.exc_info]
    assert [record.getMessage() for record in failures] == ["GET /api/v1/incidents failed"]  # the 500 only
