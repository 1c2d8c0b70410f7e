"""The player's side (items 13, 15 and 19 of issue 12): stream tokens only for players the service knows, offers
that are no usable SDP refused before a peer connection exists, and the player's page under the dashboards'
Content-Security-Policy (it cannot be framed)."""

from __future__ import annotations

from typing import Any

import pytest
from aiortc import RTCConfiguration, RTCPeerConnection

from proctor.settings import Settings
from tests.proctor.conftest import Platformer, app_context
from tests.proctor.test_arbiters import add_arbiter, bearer, started_game

pytestmark = pytest.mark.asyncio


async def stream_token(platform: Platformer, token: str, player: str) -> Any:
    return await platform.client.post(f"/api/v1/players/{player}/stream-token", headers=bearer(token))


async def test_a_stream_token_needs_a_known_player(platform: Platformer, settings: Settings) -> None:
    token = add_arbiter(settings, "Cam", "arbiter")
    refused = await stream_token(platform, token, "nobody-at-all")
    assert refused.status == 404 and "nobody-at-all" in (await refused.json())["message"]
    await started_game(platform, "g1")
    assert (await stream_token(platform, token, "g1-b")).status == 201  # a player of a live game


async def audio_only_offer() -> str:
    pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
    pc.addTransceiver("audio", direction="sendonly")
    await pc.setLocalDescription(await pc.createOffer())
    assert pc.localDescription is not None
    sdp = pc.localDescription.sdp
    await pc.close()
    return sdp


@pytest.mark.parametrize("sdp", ["x", "v=0\r\n", "audio-only"])
async def test_an_offer_that_is_no_video_sdp_is_a_400_and_allocates_nothing(
    platform: Platformer, settings: Settings, sdp: str
) -> None:
    token = add_arbiter(settings, "Cam", "arbiter")
    await started_game(platform, "g1")
    stream = (await (await stream_token(platform, token, "g1-b")).json())["token"]
    if sdp == "audio-only":
        sdp = await audio_only_offer()
    response = await platform.client.post("/api/v1/rtc/offer", json={"sdp": sdp, "type": "offer", "token": stream})
    assert response.status == 400 and (await response.json())["error"] == "bad-request"
    assert app_context(platform).camera.ingest.connections == {}


async def test_the_player_page_has_the_dashboards_policy(platform: Platformer, settings: Settings) -> None:
    token = add_arbiter(settings, "Cam", "arbiter")
    await started_game(platform, "g1")
    stream = (await (await stream_token(platform, token, "g1-b")).json())["token"]
    page = await platform.client.get(f"/play/{stream}")
    assert page.status == 200
    policy = page.headers["Content-Security-Policy"]
    assert "frame-ancestors 'none'" in policy and "default-src 'none'" in policy
    nonce = policy.split("'nonce-", 1)[1].split("'", 1)[0]
    assert f'<script type="module" nonce="{nonce}">' in await page.text()
    assert page.headers["Cache-Control"] == "no-store"
