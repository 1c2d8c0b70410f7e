"""The players' rooms on Janus (the distributed mode, issue 16): where a player's page publishes its cameras and
screen, and how the analysis workers find them (proctor.stream_registry).

Janus runs with token authentication: nobody without a token the service added through its admin API reaches it.
Each player has a room of their own, joined only with its PIN, so that a player's token opens their own streams and
nobody else's; the workers have a token of their own. The room, its PIN, its secret and the player's token are
derived from ``WORKER_SECRET`` (HMAC-SHA256, a label each), so that the standby writer, taking over, gives the same
answers without any state handed over, and a room Janus lost in a restart is made again the next time a page asks.

A page asks for its room (:meth:`PlayerRooms.room_for`), publishes each device there (the device's name as its
display name), and says which feed it got (:meth:`PlayerRooms.published`); the service checks with Janus that the feed
is publishing in that room under that name before it enters the stream in the registry, with the policy the
player's section sets. The service writes its streams to Redis again every few seconds (a Redis restarted empty has
them back) and adopts what it finds there when it starts (a standby taking over).

An arbiter's prompt (a room scan, a pan check, an ear check) and an approved view (the side camera's setup, the
screen's board) need a recording of the stream: the service asks the worker holding it (:meth:`PlayerRooms.capture`,
through the registry) and waits for its answer.  An approved still's hash then goes with the stream in the registry,
and whichever worker holds the stream fetches the still from the service and compares the picture with it
(proctor.worker)."""

from __future__ import annotations

import asyncio
import binascii
import contextlib
import hashlib
import hmac
import logging
import secrets
import time
from dataclasses import dataclass, replace
from typing import Any, Final

import aiohttp
from redis.exceptions import RedisError

from proctor.errors import ConflictError, MediaServerUnavailableError
from proctor.settings import Settings
from proctor.sound_policy import MicrophonePolicy
from proctor.stream_registry import PublishedStream, StreamRegistry, policy_json, stream_name
from proctor.stream_views import RemoteStream
from video.devices import Device, StreamKey
from video.ingest import CaptureResult, StreamPolicy
from video.janus import JanusAdmin, JanusError, JanusHandle, JanusSession, create_room

log = logging.getLogger("proctor.sfu")

REPUBLISH_S: Final = 3.0
READ_REPORTS_S: Final = 1.0
PUBLISHING_WAIT_S: Final = 8.0
"""How long the service waits for a feed a page says it published to be publishing in Janus."""
ANSWER_S: Final = 8.0
"""How long beyond a recording's window the service waits for the worker's answer (its next round, the clip's
encoding, the upload)."""
ROOM_PUBLISHERS: Final = len(Device) + 2
"""A room's publishers: the player's devices, one more for a page publishing again before Janus dropped the first,
and an arbiter speaking to the player (proctor.talk)."""


def _derive(secret: str, label: str) -> str:
    return hmac.new(secret.encode(), label.encode(), hashlib.sha256).hexdigest()


def worker_janus_token(secret: str) -> str:
    """The analysis workers' Janus token."""
    return _derive(secret, "janus:workers")[:40]


def service_janus_token(secret: str) -> str:
    return _derive(secret, "janus:service")[:40]


@dataclass(frozen=True, slots=True)
class PlayerRoom:
    """A player's room on Janus, as their page is told it."""

    url: str
    token: str
    room: int
    pin: str

    def describe(self) -> dict[str, Any]:
        return {"url": self.url, "token": self.token, "room": self.room, "pin": self.pin}


class PlayerRooms:
    """The service's side of Janus: the players' rooms and tokens, and the streams entered in the registry."""

    def __init__(self, settings: Settings, registry: StreamRegistry) -> None:
        self.settings = settings
        self.secret = settings.worker_secret
        self.registry = registry
        self.streams: dict[str, PublishedStream] = {}
        self.http: aiohttp.ClientSession | None = None
        self.janus: JanusSession | None = None
        self.handle: JanusHandle | None = None
        self.lock = asyncio.Lock()
        self.task: asyncio.Task[None] | None = None
        self.reading: asyncio.Task[None] | None = None
        self.remote: dict[StreamKey, RemoteStream] = {}
        """The workers' latest reports of these streams (proctor.stream_views), read every second."""
        self.references: dict[str, str] = {}
        """The SHA-256 of each stream's approved view (its reference still), by stream name."""

    def _room(self, player_ref: str) -> tuple[int, str, str]:
        """The player's room id (1 … 2^31 - 1), its PIN and its secret."""
        room = int(_derive(self.secret, f"room:{player_ref}")[:8], 16) % (2**31 - 1) + 1
        return room, _derive(self.secret, f"pin:{player_ref}")[:24], _derive(self.secret, f"room-secret:{player_ref}")

    def player_token(self, player_ref: str) -> str:
        return _derive(self.secret, f"janus:player:{player_ref}")[:40]

    async def start(self) -> None:
        self.http = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=15))
        try:
            adopted = await self.registry.streams()
        except RedisError as error:
            log.warning("the stream registry is away (%s): no stream adopted", error)
            adopted = {}
        self.streams.update(adopted)
        try:  # the workers' token added now, so that they can start before any page asks for its room
            await self._with_janus(lambda handle: asyncio.sleep(0))
        except MediaServerUnavailableError:
            log.warning("Janus is not answering: the workers' token is added when it does")
        self.task = asyncio.get_running_loop().create_task(self._republish_forever())
        self.reading = asyncio.get_running_loop().create_task(self._read_reports_forever())

    async def close(self) -> None:
        for task in (self.task, self.reading):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        await self._drop_session()
        if self.http is not None:
            await self.http.close()
        await self.registry.close()

    async def _drop_session(self) -> None:
        if self.janus is not None:
            with contextlib.suppress(JanusError, aiohttp.ClientError, TimeoutError):
                await self.janus.destroy()
        self.janus = self.handle = None

    async def _videoroom(self) -> JanusHandle:
        """The service's own handle on the VideoRoom (made again after Janus restarted)."""
        assert self.http is not None
        if self.handle is not None:
            return self.handle
        admin = JanusAdmin(self.settings.janus_admin_url, self.settings.janus_admin_secret, self.http)
        for token in (service_janus_token(self.secret), worker_janus_token(self.secret)):
            await admin.add_token(token)
        self.janus = JanusSession(self.settings.janus_url, service_janus_token(self.secret), self.http)
        await self.janus.create()
        self.handle = await self.janus.attach()
        return self.handle

    async def _with_janus(self, call: Any) -> Any:
        """``call(handle)`` on Janus, once more on a new session if the first failed (Janus restarted); Janus away:
        ServiceUnavailableError (503, the page tries again)."""
        async with self.lock:
            for attempt in (1, 2):
                try:
                    return await call(await self._videoroom())
                except (JanusError, aiohttp.ClientError, TimeoutError) as error:
                    await self._drop_session()
                    if attempt == 2:
                        log.warning("Janus refused or is away: %s", error)
                        raise MediaServerUnavailableError("the media server is not answering; try again shortly",
                                                          retry_after_s=5) from None  # fmt: skip
        raise AssertionError("unreachable")

    async def room_for(self, player_ref: str) -> PlayerRoom:
        """The player's room, made if Janus has none, and the player's token added."""
        room, pin, room_secret = self._room(player_ref)
        token = self.player_token(player_ref)
        assert self.http is not None
        admin = JanusAdmin(self.settings.janus_admin_url, self.settings.janus_admin_secret, self.http)

        async def ensure(handle: JanusHandle) -> None:
            await admin.add_token(token)
            await create_room(handle, room, room_secret, ROOM_PUBLISHERS, pin)

        await self._with_janus(ensure)
        return PlayerRoom(self.settings.janus_public_url or self.settings.janus_url, token, room, pin)

    async def published(
        self, player_ref: str, device: Device, feed: int, policy: StreamPolicy, sound: MicrophonePolicy | None = None
    ) -> PublishedStream:
        """The page says it publishes ``device`` as ``feed`` in the player's room: checked with Janus (the feed
        publishing there under the device's name, else ConflictError), then entered in the registry with what its
        worker checks (``policy``; ``sound``: the front camera's microphone, if the section listens to it)."""
        room, pin, _ = self._room(player_ref)
        # Janus lists a feed as publishing once its media flow (ICE and DTLS done): a page that tells it at once
        # waits here for that, a few seconds at most.
        deadline = time.monotonic() + PUBLISHING_WAIT_S
        while not await self.publishing(player_ref, feed, device.value):
            if time.monotonic() >= deadline:
                raise ConflictError(f"feed {feed} is not publishing the {device.title} in this player's room")
            await asyncio.sleep(0.2)
        leave = next((s.leave_until for s in self.streams.values() if s.player == player_ref), 0.0)
        name = stream_name(StreamKey(player_ref, device))
        listen = sound.to_json() if sound is not None else {}
        stream = PublishedStream(player_ref, device, room, pin, feed, policy_json(policy), leave,
                                 self.references.get(name, ""), listen)  # fmt: skip
        self.streams[stream.name] = stream
        try:
            await self.registry.publish([stream])
        except RedisError as error:  # written again by the next round
            log.warning("the stream registry is away (%s): %s entered on the next round", error, stream.name)
        return stream

    async def publishing(self, player_ref: str, feed: int, display: str) -> bool:
        """Whether ``feed`` publishes in the player's room under ``display`` (a device's name, or ``talk``)."""
        room, _, _ = self._room(player_ref)

        async def listed(handle: JanusHandle) -> list[dict[str, Any]]:
            reply = await handle.request({"request": "listparticipants", "room": room})
            return list(reply.get("participants", []))

        return any(p.get("id") == feed and p.get("publisher") and p.get("display") == display
                   for p in await self._with_janus(listed))  # fmt: skip

    async def talker_grant(self, talker: str, player_ref: str) -> dict[str, Any]:
        """What an arbiter's browser needs to speak to the player through Janus (proctor.talk): Janus's address, the
        arbiter's own token (added now), the player's room and its PIN, to publish its microphone there as
        ``talk``.  ConflictError when the player's front camera is not published (their page plays the sound)."""
        stream = self.streams.get(stream_name(StreamKey(player_ref, Device.FRONT)))
        if stream is None:
            raise ConflictError(f"player {player_ref!r} has no live camera whose page can play sound")
        token = await self._arbiter_token(talker)
        url = self.settings.janus_public_url or self.settings.janus_url
        return {"url": url, "token": token, "room": stream.room, "pin": stream.pin}

    async def _arbiter_token(self, arbiter: str) -> str:
        """The arbiter's own Janus token, added now (the VideoRoom plugin only)."""
        token = _derive(self.secret, f"janus:viewer:{arbiter}")[:40]
        assert self.http is not None
        admin = JanusAdmin(self.settings.janus_admin_url, self.settings.janus_admin_secret, self.http)

        async def add(handle: JanusHandle) -> None:
            await admin.add_token(token)

        await self._with_janus(add)
        return token

    async def viewer_grant(self, viewer: str, player_ref: str, device: Device) -> dict[str, Any]:
        """What an arbiter's browser needs to watch the player's ``device`` through Janus (the live view of the
        distributed mode): Janus's address, the arbiter's own token (added now), the player's room, its PIN and the
        feed.  ConflictError when the player does not publish that device."""
        stream = self.streams.get(stream_name(StreamKey(player_ref, device)))
        if stream is None:
            raise ConflictError(f"player {player_ref!r} has no live {device.title} stream to watch")
        token = await self._arbiter_token(viewer)
        url = self.settings.janus_public_url or self.settings.janus_url
        return {"url": url, "token": token, "room": stream.room, "pin": stream.pin, "feed": stream.feed}

    async def capture(self, player_ref: str, device: Device, seconds: float, stills: bool) -> CaptureResult:
        """The player's ``device`` as the worker holding it analyses it for the next ``seconds`` (an arbiter's
        prompt, an approved view's still): its analysed frames, their stills if asked for, and their clip, as the
        one-process ingest's capture gives them; asked through the registry, its answer waited for.  LookupError
        when no worker holds a live stream of it, ConflictError when none answers in time."""
        name = stream_name(StreamKey(player_ref, device))
        if name not in self.streams:
            raise LookupError(f"no live stream for {player_ref!r}")
        try:
            holder = (await self.registry.holders([name])).get(name)
            if holder is None:
                raise LookupError(f"no analysis worker holds {name}")
            ident = secrets.token_hex(12)
            await self.registry.ask(holder, {"id": ident, "kind": "capture", "stream": name, "seconds": seconds,
                                             "stills": stills})  # fmt: skip
            answer = await self.registry.answered(ident, seconds + ANSWER_S)
        except RedisError as error:
            raise MediaServerUnavailableError(f"the stream registry is away: {error}") from None
        if answer is None:
            raise ConflictError(f"the analysis worker did not send the {device.title}'s recording in time: try again")
        if answer.get("error"):
            raise ConflictError(f"the {device.title}'s recording could not be made: {answer['error']}")
        try:
            return CaptureResult.from_json(answer["capture"])
        except (KeyError, TypeError, ValueError, binascii.Error):
            raise ConflictError(f"the analysis worker sent no usable recording of the {device.title}") from None

    async def set_reference(self, player_ref: str, device: Device, digest: str) -> None:
        """The device's approved view is the still with this SHA-256 from now on: entered with the stream (now, and
        with every later round), for the worker holding it to fetch."""
        name = stream_name(StreamKey(player_ref, device))
        self.references[name] = digest
        stream = self.streams.get(name)
        if stream is None:
            return
        self.streams[name] = replace(stream, reference=digest)
        try:
            await self.registry.publish([self.streams[name]])
        except RedisError as error:  # written again by the next round
            log.warning("the stream registry is away (%s): %s's approved view entered on the next round", error, name)

    def grant_leave(self, player_ref: str, until: float) -> None:
        """Leave of the area for the player's streams (36.4.1): the workers read it with the next round."""
        for name, stream in list(self.streams.items()):
            if stream.player == player_ref:
                self.streams[name] = replace(stream, leave_until=until)

    async def _republish_forever(self) -> None:
        while True:
            await asyncio.sleep(REPUBLISH_S)
            try:
                await self.registry.publish(list(self.streams.values()))
            except RedisError as error:
                log.warning("the stream registry is away: %s", error)

    async def _read_reports_forever(self) -> None:
        while True:
            await asyncio.sleep(READ_REPORTS_S)
            try:
                await self.read_reports()
            except RedisError as error:
                log.warning("the stream registry is away: %s", error)

    async def read_reports(self) -> None:
        """The workers' reports of the streams entered here, into :attr:`remote` (a stream without one keeps its
        last: it shows as lost once that is stale)."""
        reports = await self.registry.reports(list(self.streams))
        for name, report in reports.items():
            stream = self.streams.get(name)
            if stream is not None:
                self.remote[stream.key] = RemoteStream.of(report)
