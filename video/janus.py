"""Janus (the SFU of the distributed mode, issue 16) through its HTTP API: a thin adapter, like aiortc's own
``examples/janus``, for the analysis workers (which subscribe to the players' streams they are given) and the tests'
senders (which publish as a player's page does).

Access is by token, never open: Janus runs with ``token_auth`` and the service adds a token for each party through
Janus's admin API (:class:`JanusAdmin`, with the admin secret), allowed the VideoRoom plugin only; every request
carries it, and one without is refused (:class:`JanusError`, Janus's 403).  Rooms are created with a secret of
their own (the service's), so that nobody else can change or destroy them.

A session's events (the answers to asynchronous requests: a publisher's SDP answer, a subscriber's offer) come by
long poll on the session, which also keeps it alive; each handle gets those addressed to it."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import secrets
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from aiortc import RTCPeerConnection, RTCSessionDescription

from video.errors import VideoError

log = logging.getLogger(__name__)

VIDEOROOM = "janus.plugin.videoroom"
REPLY_TIMEOUT_S = 10.0
"""How long a request waits for Janus's answer (an asynchronous one: its event)."""


class JanusError(VideoError):
    """Janus refused a request (its code and reason), or did not answer in time."""


def _transaction() -> str:
    return secrets.token_hex(8)


def _checked(reply: dict[str, Any], expected: str) -> dict[str, Any]:
    if reply.get("janus") != expected:
        error = reply.get("error", {})
        raise JanusError(f"Janus refused: {error.get('code', '?')} {error.get('reason', reply.get('janus'))}")
    data = reply.get("plugindata", {}).get("data", {})
    if isinstance(data, dict) and data.get("videoroom") == "event" and "error" in data:
        raise JanusError(f"VideoRoom refused: {data.get('error_code', '?')} {data['error']}")
    return reply


@dataclass
class JanusAdmin:
    """Janus's admin API (``/admin``): the tokens that open the API."""

    url: str
    secret: str
    http: aiohttp.ClientSession

    async def _call(self, message: dict[str, Any]) -> dict[str, Any]:
        body = {**message, "transaction": _transaction(), "admin_secret": self.secret}
        async with self.http.post(self.url, json=body) as response:
            return _checked(await response.json(content_type=None), "success")

    async def add_token(self, token: str) -> None:
        """Let ``token`` use the VideoRoom plugin (and nothing else)."""
        await self._call({"janus": "add_token", "token": token, "plugins": [VIDEOROOM]})

    async def remove_token(self, token: str) -> None:
        await self._call({"janus": "remove_token", "token": token})


@dataclass
class JanusHandle:
    """One handle on a plugin (VideoRoom) within a session."""

    session: JanusSession
    id: int
    events: asyncio.Queue[dict[str, Any]] = field(default_factory=asyncio.Queue)

    @property
    def url(self) -> str:
        return f"{self.session.url}/{self.id}"

    async def request(self, body: dict[str, Any]) -> dict[str, Any]:
        """A synchronous plugin request (create a room, list its participants): its data."""
        reply = await self.session.post(self.url, {"janus": "message", "body": body})
        return dict(_checked(reply, "success")["plugindata"]["data"])

    async def message(self, body: dict[str, Any], jsep: dict[str, Any] | None = None) -> dict[str, Any]:
        """An asynchronous plugin request (join, configure, start): Janus acknowledges, then its event comes by the
        session's long poll; returns that event (its ``plugindata`` and any ``jsep``)."""
        message: dict[str, Any] = {"janus": "message", "body": body, "transaction": _transaction()}
        if jsep is not None:
            message["jsep"] = jsep
        _checked(await self.session.post(self.url, message), "ack")
        async with asyncio.timeout(REPLY_TIMEOUT_S):
            while True:
                event = await self.events.get()
                if event.get("transaction") == message["transaction"]:
                    return _checked(event, "event")

    async def detach(self) -> None:
        self.session.handles.pop(self.id, None)
        with contextlib.suppress(JanusError, aiohttp.ClientError):
            await self.session.post(self.url, {"janus": "detach"})


class JanusSession:
    """A session on Janus's HTTP API (``http://host:8088/janus``), authorised by ``token``."""

    def __init__(self, root: str, token: str, http: aiohttp.ClientSession) -> None:
        self.root, self.token, self.http = root, token, http
        self.url = ""
        self.handles: dict[int, JanusHandle] = {}
        self._poller: asyncio.Task[None] | None = None
        self._ids = itertools.count()

    async def post(self, url: str, message: dict[str, Any]) -> dict[str, Any]:
        body = {"transaction": _transaction(), **message, "token": self.token}
        async with self.http.post(url, json=body) as response:
            reply: dict[str, Any] = await response.json(content_type=None)
            return reply

    async def create(self) -> None:
        reply = _checked(await self.post(self.root, {"janus": "create"}), "success")
        self.url = f"{self.root}/{reply['data']['id']}"
        self._poller = asyncio.ensure_future(self._poll())

    async def attach(self, plugin: str = VIDEOROOM) -> JanusHandle:
        reply = _checked(await self.post(self.url, {"janus": "attach", "plugin": plugin}), "success")
        handle = JanusHandle(self, int(reply["data"]["id"]))
        self.handles[handle.id] = handle
        return handle

    async def _poll(self) -> None:
        """Janus's events, handed to their handles (the long poll also keeps the session alive)."""
        while True:
            try:
                params = {"maxev": "10", "token": self.token, "rid": str(next(self._ids))}
                async with self.http.get(self.url, params=params) as response:
                    reply = await response.json(content_type=None)
            except (aiohttp.ClientError, TimeoutError, ValueError) as error:
                log.warning("Janus's long poll failed (%s): again in a second", type(error).__name__)
                await asyncio.sleep(1.0)
                continue
            for event in reply if isinstance(reply, list) else [reply]:
                if not isinstance(event, dict):
                    continue
                if event.get("janus") == "error":  # the session is gone (Janus restarted): nothing more will come
                    log.warning("Janus's long poll: %s", event.get("error", {}).get("reason", "an error"))
                    return
                handle = self.handles.get(event.get("sender", -1))
                if handle is not None:
                    handle.events.put_nowait(event)

    async def destroy(self) -> None:
        if self._poller is not None:
            self._poller.cancel()
            await asyncio.gather(self._poller, return_exceptions=True)
        if self.url:  # a Janus that went away has nothing to destroy
            with contextlib.suppress(JanusError, aiohttp.ClientError, TimeoutError, ValueError):
                await self.post(self.url, {"janus": "destroy"})


@contextlib.asynccontextmanager
async def janus_session(root: str, token: str, http: aiohttp.ClientSession) -> AsyncIterator[JanusSession]:
    session = JanusSession(root, token, http)
    await session.create()
    try:
        yield session
    finally:
        await session.destroy()


async def create_room(handle: JanusHandle, room: int, secret: str, publishers: int = 16, pin: str = "") -> None:
    """A VideoRoom for ``publishers`` streams (VP8, no recording), changeable only with ``secret`` and joined only
    with ``pin`` (if given); an existing one is left as it is."""
    exists = await handle.request({"request": "exists", "room": room})
    if exists.get("exists"):
        return
    await handle.request({"request": "create", "room": room, "secret": secret, "publishers": publishers,
                          "videocodec": "vp8", "audiocodec": "opus", "record": False,
                          "notify_joining": False, **_pin(pin)})  # fmt: skip


def _pin(pin: str) -> dict[str, str]:
    return {"pin": pin} if pin else {}


async def publish(handle: JanusHandle, pc: RTCPeerConnection, room: int, display: str, pin: str = "") -> int:
    """Publish ``pc``'s tracks in ``room`` (as a player's page does); returns the feed's id."""
    joined = await handle.message({"request": "join", "ptype": "publisher", "room": room, "display": display,
                                   **_pin(pin)})  # fmt: skip
    feed = int(joined["plugindata"]["data"]["id"])
    await pc.setLocalDescription(await pc.createOffer())
    local = pc.localDescription
    answered = await handle.message({"request": "configure", "audio": True, "video": True},
                                    {"type": local.type, "sdp": local.sdp})  # fmt: skip
    jsep = answered["jsep"]
    await pc.setRemoteDescription(RTCSessionDescription(sdp=jsep["sdp"], type=jsep["type"]))
    # The feed can be subscribed to once its media flows (ICE and DTLS done): Janus lists it as a publisher then.
    async with asyncio.timeout(REPLY_TIMEOUT_S):
        while True:
            listed = await handle.request({"request": "listparticipants", "room": room})
            if any(p.get("id") == feed and p.get("publisher") for p in listed.get("participants", [])):
                return feed
            await asyncio.sleep(0.1)


async def subscribe(
    handle: JanusHandle, pc: RTCPeerConnection, room: int, feed: int, pin: str = "", substream: int | None = None
) -> None:
    """Receive ``feed`` on ``pc`` (an analysis worker's, an arbiter's): Janus offers, ``pc`` answers.  ``substream``:
    the simulcast layer to receive (0: the lowest) when the publisher sends several; None: Janus's default, the
    highest."""
    offered = await handle.message({"request": "join", "ptype": "subscriber", "room": room,
                                    "streams": [{"feed": feed}], **_pin(pin)})  # fmt: skip
    jsep = offered["jsep"]
    await pc.setRemoteDescription(RTCSessionDescription(sdp=jsep["sdp"], type=jsep["type"]))
    await pc.setLocalDescription(await pc.createAnswer())
    local = pc.localDescription
    await handle.message({"request": "start", "room": room}, {"type": local.type, "sdp": local.sdp})
    if substream is not None:
        await handle.message({"request": "configure", "substream": substream})
