"""Stream tokens expire, and a second connection cannot take a live stream over (item 21 of issue 12): a token works
until the end of the player's event (its file's ``ends``) or for ``STREAM_TOKEN_TTL_S``; once expired, the page, the
configuration, the offer, the requests and the event stream say so (410); a second offer for a player whose camera
is live is refused (409) with a ``second-connection`` incident, and the first stream stays."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
from aiortc import RTCConfiguration, RTCPeerConnection, VideoStreamTrack
from sqlalchemy import update

from proctor.camera import event_end_ms, token_expiry
from proctor.database import create_database_engine, migrate
from proctor.events import parse_event, store_event
from proctor.models import StreamToken
from proctor.settings import Settings
from tests.proctor.conftest import Platformer, app_context
from tests.proctor.test_arbiters import add_arbiter, bearer, started_game
from tests.proctor.test_camera import CAM, ScriptedCamera, connect, issue_token
from tests.security.test_streams import rest_of
from video.devices import StreamKey

pytestmark = pytest.mark.asyncio


def expire_tokens(settings: Settings) -> None:
    """As if the tokens' time had passed."""
    engine = create_database_engine(settings)
    with engine.begin() as connection:
        connection.execute(update(StreamToken).values(expires_ms=int(time.time() * 1000) - 1))
    engine.dispose()


async def offer_sdp() -> str:
    pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
    pc.addTrack(VideoStreamTrack())
    await pc.setLocalDescription(await pc.createOffer())
    assert pc.localDescription is not None
    sdp = pc.localDescription.sdp
    await pc.close()
    return sdp


async def test_an_expired_stream_token_says_so_everywhere(platform: Platformer, settings: Settings) -> None:
    token = add_arbiter(settings, "Cam", "arbiter")
    await started_game(platform, "g1")
    before = int(time.time() * 1000)
    issued = await (await platform.client.post("/api/v1/players/g1-b/stream-token", headers=bearer(token))).json()
    stream = issued["token"]
    assert before + settings.stream_token_ttl_s * 1000 <= issued["expires"] <= before + 86_400_000 + 5_000
    page_events = await platform.client.get(f"/api/v1/play/{stream}/events")
    assert (await page_events.content.readuntil(b"\n\n")).startswith(b"event: state")
    expire_tokens(settings)
    assert "event: end" in (ended := await rest_of(page_events, settings.stream_recheck_s + 1.0))
    assert "expired" in ended
    page = await platform.client.get(f"/play/{stream}")
    assert page.status == 410 and "expired" in await page.text() and "ask the arbiter" in await page.text()
    for response in (
        await platform.client.get(f"/api/v1/rtc/config?token={stream}"),
        await platform.client.post(
            "/api/v1/rtc/offer", json={"sdp": await offer_sdp(), "type": "offer", "token": stream}
        ),
        await platform.client.post(f"/api/v1/play/{stream}/requests", json={"kind": "call"}),
        await platform.client.get(f"/api/v1/play/{stream}/events"),
    ):
        body = await response.json()
        assert response.status == 410 and body["error"] == "expired" and "new link" in body["message"]
    assert app_context(platform).camera.ingest.connections == {}


EVENT = """
[event]
slug = "long-cup"
name = "Long Cup"
ends = "{ends}"

[[sections]]
slug = "open"
name = "Open"
time_control = "rapid-15"

[[sections.players]]
start_no = 1
name = "Far"
platform_ref = "far-1"
"""


@pytest.mark.parametrize("days", [5, -5])
async def test_a_token_lasts_until_the_end_of_the_players_event(settings: Settings, tmp_path: Path,
                                                                days: int) -> None:  # fmt: skip
    ends = time.strftime("%Y-%m-%d", time.gmtime(time.time() + days * 86_400))
    engine = create_database_engine(settings)
    migrate(engine)
    now = int(time.time() * 1000)
    with engine.begin() as connection:
        store_event(connection, parse_event(EVENT.format(ends=ends), tmp_path), now=0)
        expiry = token_expiry(connection, "far-1", now, settings.stream_token_ttl_s)
        assert token_expiry(connection, "in-no-event", now, 3600) == now + 3_600_000
    engine.dispose()
    end = event_end_ms(ends)
    assert end is not None and end % 86_400_000 == 0
    # an event still to come lasts to the end of its last day; one whose end has passed gives the set time
    assert expiry == (end if days > 0 else now + settings.stream_token_ttl_s * 1000)


async def wait_for(condition: Any, within_s: float = 10.0) -> None:
    for _ in range(int(within_s * 10)):
        if condition():
            return
        await asyncio.sleep(0.1)
    raise AssertionError("not in time")


async def test_a_second_connection_while_the_first_is_live_is_refused_and_raises_an_incident(
    platform: Platformer, settings: Settings
) -> None:
    token = await issue_token(platform, settings, "two-1")
    ingest = app_context(platform).camera.ingest
    first = await connect(platform, token, ScriptedCamera([(60, 1)]))
    try:
        await wait_for(lambda: (s := ingest.live("two-1")) is not None and s.frames_received > 0)
        server_side = ingest.connections[StreamKey("two-1")]
        for _ in range(2):
            second = await platform.client.post("/api/v1/rtc/offer", json={"sdp": await offer_sdp(), "type": "offer",
                                                                           "token": token})  # fmt: skip
            body = await second.json()
            assert second.status == 409 and "already streaming" in body["message"] and body["article"] == "36.4, 37.2"
        assert ingest.connections[StreamKey("two-1")] is server_side  # the first stream stays
        incidents = await (await platform.client.get("/api/v1/incidents?kind=second-connection", headers=CAM)).json()
        assert len(incidents) == 1  # once per live stream, however many offers follow
        (incident,) = incidents
        assert incident["player"] == "two-1" and incident["article"] == "36.4, 37.2" and incident["source"] == "service"
    finally:
        await first.close()
    await wait_for(lambda: ingest.live("two-1") is None)  # the first is gone: the page may connect again
    again = await connect(platform, token, ScriptedCamera([(60, 1)]))
    await again.close()
