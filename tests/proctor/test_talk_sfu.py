"""Talking to a player in the distributed mode (issues 15 and 16), on Debian's Janus and redis-server with the service
in this process.  The player's page publishes its camera in its room on Janus; the arbiter's desk opens a talk, is
told where to publish its microphone (the player's room, with a Janus token of the arbiter's own), publishes a 440 Hz
tone there as ``talk`` and says its feed; the service checks it with Janus and tells the player's page, which
subscribes to it with its own token and PIN and hears the tone.  The talk is audited, ends when the arbiter closes it
or when the desk's feed leaves Janus, and an offer sent to the service itself is refused in this mode."""

from __future__ import annotations

import asyncio
from contextlib import AsyncExitStack
from typing import Any

import aiohttp
import pytest
from aiortc import RTCPeerConnection

from proctor.settings import Settings
from tests.proctor.conftest import Platformer
from tests.proctor.test_camera import CAM, issue_token
from tests.proctor.test_live_views import audit, page_events, wait_for
from tests.proctor.test_sfu_rooms import room_of
from tests.proctor.test_sfu_rooms import settings as settings  # noqa: PLC0414 - the rooms' settings, as a fixture
from tests.proctor.test_talk import TONE_HZ, Listener, Tone, desk_offer, next_event_of
from tests.video.tracks import MovingPicture
from video.janus import JanusSession, janus_session, publish, subscribe

pytestmark = pytest.mark.asyncio


async def desk_goes_away(platform: Platformer, events: Any, desk_janus: JanusSession,
                         grant: dict[str, Any]) -> dict[str, Any]:  # fmt: skip
    """A second talk whose desk goes away without a word: its feed leaves Janus, and the talk ends."""
    response = await platform.client.post("/api/v1/players/tk-1/talk", json={}, headers=CAM)
    assert response.status == 201, await response.text()
    second: dict[str, Any] = await response.json()
    reloaded = RTCPeerConnection()  # the desk reloaded: a new connection for the new talk
    reloaded.addTrack(Tone())
    try:
        voice = await publish(await desk_janus.attach(), reloaded, grant["room"], "talk", grant["pin"])
        response = await platform.client.post(f"/api/v1/players/tk-1/talk/{second['id']}/published",
                                              json={"feed": voice}, headers=CAM)  # fmt: skip
        assert response.status == 200, await response.text()
        assert (await next_event_of(events, "talk"))["speaking"] is True
        await desk_janus.destroy()
        assert (await next_event_of(events, "talk"))["speaking"] is False
    finally:
        await reloaded.close()
    return second


async def test_an_arbiter_speaks_to_a_player_through_the_media_server(platform: Platformer, settings: Settings) -> None:
    token = await issue_token(platform, settings, "tk-1")
    stream = await platform.client.get(f"/api/v1/play/{token}/events")
    events = page_events(stream)
    assert (await anext(events))[0] == "state"
    room = await room_of(platform, token)
    camera, listener = RTCPeerConnection(), Listener()
    camera.addTrack(MovingPicture(5))
    async with aiohttp.ClientSession() as http, AsyncExitStack() as stack:
        page = await stack.enter_async_context(janus_session(room["url"], room["token"], http))
        feed = await publish(await page.attach(), camera, room["room"], "front", room["pin"])
        response = await platform.client.post("/api/v1/sfu/published",
                                              json={"token": token, "device": "front", "feed": feed})  # fmt: skip
        assert response.status == 201, await response.text()

        # The desk's own connection to the service is refused in this mode, with words saying what to do instead.
        offered, offer = await desk_offer(Tone())
        refused = await platform.client.post("/api/v1/players/tk-1/talk", json=offer, headers=CAM)
        await offered.close()
        assert refused.status == 409 and "media server" in (await refused.json())["message"]

        response = await platform.client.post("/api/v1/players/tk-1/talk", json={}, headers=CAM)
        assert response.status == 201, await response.text()
        talk = await response.json()
        grant = talk["janus"]
        assert (grant["room"], grant["pin"]) == (room["room"], room["pin"]) and grant["token"] != room["token"]
        desk = RTCPeerConnection()
        desk.addTrack(Tone())
        desk_janus = await stack.enter_async_context(janus_session(grant["url"], grant["token"], http))
        voice = await publish(await desk_janus.attach(), desk, grant["room"], "talk", grant["pin"])
        told_path = f"/api/v1/players/tk-1/talk/{talk['id']}/published"
        bad = await platform.client.post(told_path, json={"feed": "one"}, headers=CAM)
        assert bad.status == 400
        camera_feed = await platform.client.post(told_path, json={"feed": feed}, headers=CAM)  # not the desk's
        assert camera_feed.status == 409, await camera_feed.text()
        response = await platform.client.post(told_path, json={"feed": voice}, headers=CAM)
        assert response.status == 200, await response.text()

        # The page is told, subscribes with its own token and PIN, and hears the tone.
        told = await next_event_of(events, "talk")
        assert told["speaking"] is True and told["feed"] == voice
        await subscribe(await page.attach(), listener.pc, room["room"], told["feed"], room["pin"])
        await wait_for(lambda: listener.loud_frames() >= 50, 15)
        assert abs(listener.main_frequency() - TONE_HZ) < 10, listener.main_frequency()
        # A page opened (or reloaded) now is told the feed with its state.
        again = await platform.client.get(f"/api/v1/play/{token}/events")
        kind, state = await anext(page_events(again))
        again.close()
        assert kind == "state" and state["talk"] is True and state["talk_feed"] == voice

        response = await platform.client.delete(f"/api/v1/players/tk-1/talk/{talk['id']}", headers=CAM)
        assert response.status == 200, await response.text()
        assert (await next_event_of(events, "talk"))["speaking"] is False

        second = await desk_goes_away(platform, events, desk_janus, grant)
    await asyncio.gather(camera.close(), desk.close(), listener.close())
    stream.close()
    opened, closed = audit(settings, "camera.talk"), audit(settings, "camera.talk-end")
    assert [row.detail["talk"] for row in opened] == [talk["id"], second["id"]]
    assert [row.detail["reason"] for row in closed] == [
        "closed by the arbiter", "desk gone (its microphone left the media server)"
    ]  # fmt: skip
