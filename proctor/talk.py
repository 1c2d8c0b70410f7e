"""Talking to a player (issue 15, "Talking to the player"): an arbiter's microphone to the player's page, as human
proctors speak to a player during a room scan or a check.

The desk opens a talk (its browser's offer: an audio track to send) while it watches the player; the service answers
and passes the arbiter's sound on to the player's front-camera connection (video.voice), whose page plays it and
says that an arbiter is speaking (its event stream: ``talk``).  The desk's button is push-to-talk: the talk stays
open while the arbiter watches, and their microphone is live only while the button is held.

In the distributed mode (issue 16) the player's page sends its camera to Janus, not to the service: the desk then
publishes its microphone in the player's room on Janus (as ``talk``, with the arbiter's own token that the service
adds), tells the service its feed, and the service checks it there and tells the player's page, which subscribes to
it and plays it.  The talk ends as in the one-process mode, or when its feed stops publishing.

One arbiter at a time speaks to a player; who may is who may act on the player's camera (16: the board of their
current game, else their sections; not the review panel).  Each talk is audited when it opens (``camera.talk``) and
ends (``camera.talk-end``, with how long it lasted); no sound is kept.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from aiortc import RTCConfiguration, RTCIceServer, RTCPeerConnection, RTCSessionDescription
from aiortc.mediastreams import MediaStreamTrack

from proctor.accounts import Identity
from proctor.errors import ConflictError, NotFoundError
from proctor.live_views import require_assigned
from proctor.service import Service
from proctor.sfu import PlayerRooms
from proctor.wall_clock import now_ms
from proctor.writer import Writer
from video.ingest import Ingest

log = logging.getLogger("proctor.talk")

CONNECT_WITHIN_S: Final = 20.0
"""A talk whose desk never connected in this time is ended."""
PUBLISHING_WAIT_S: Final = 8.0
"""The distributed mode: how long the desk's feed may take to be listed as publishing once it says it is."""
TALK_DISPLAY: Final = "talk"
"""The name the desk's microphone publishes under in the player's room (the player's devices use theirs)."""
WATCH_EVERY_S: Final = 2.0


@dataclass
class Talk:
    """One arbiter speaking to one player: the desk's peer connection and, once it arrives, its microphone."""

    id: str
    player_ref: str
    who: Identity
    started_ms: int
    pc: RTCPeerConnection | None
    """The desk's connection to the service; None in the distributed mode (the desk publishes to Janus)."""
    source: MediaStreamTrack | None = None
    feed: int | None = None
    """The distributed mode: the desk's microphone's feed in the player's room, once it publishes."""

    def describe(self) -> dict[str, Any]:
        return {"id": self.id, "player": self.player_ref, "since": self.started_ms, "arbiter": self.who.label}


@dataclass
class Talks:
    """The talks this process relays, one at most per player."""

    service: Service
    writer: Writer
    ingest: Ingest
    tell: Callable[[str, str, dict[str, Any]], None]
    """Tells one player's open pages (:meth:`proctor.camera.Camera.tell`)."""
    ice_servers: list[RTCIceServer] = field(default_factory=list)
    rooms: PlayerRooms | None = None
    """The distributed mode: the players' rooms on Janus (set by proctor.camera when it starts them)."""
    talks: dict[str, Talk] = field(default_factory=dict)
    watchdog: asyncio.Task[None] | None = None

    def start(self) -> None:
        self.watchdog = asyncio.get_running_loop().create_task(self._watch())

    def of_player(self, player_ref: str) -> Talk | None:
        return next((talk for talk in self.talks.values() if talk.player_ref == player_ref), None)

    async def open(self, who: Identity, player_ref: str, sdp: str, kind: str) -> tuple[Talk, Any]:
        """The desk's offer (an audio track to send) answered; the player's page is told and plays the sound.
        ForbiddenError beyond the arbiter's assignment (16); ConflictError without a live front camera whose page
        can play sound, or while another arbiter speaks to the player; ValueError for an offer that cannot be used."""
        if self.rooms is not None:
            raise ConflictError("the players' cameras go to the media server: open the talk without an offer and "
                                "publish the microphone in the player's room")  # fmt: skip
        await self._may_speak(who, player_ref)
        voice = self.ingest.voice(player_ref)
        if voice is None:
            raise ConflictError(f"player {player_ref!r} has no live camera whose page can play sound")
        await self._replace_own(who, player_ref)
        pc = RTCPeerConnection(RTCConfiguration(iceServers=list(self.ice_servers)))
        talk = Talk(secrets.token_urlsafe(9), player_ref, who, now_ms(), pc)

        @pc.on("track")
        def on_track(track: MediaStreamTrack) -> None:
            if track.kind == "audio" and talk.id in self.talks:
                talk.source = track
                current = self.ingest.voice(player_ref)
                if current is not None:
                    current.speak(track)

        @pc.on("connectionstatechange")
        async def on_state() -> None:
            if pc.connectionState in ("failed", "closed") and talk.id in self.talks:
                await self.end(talk.id, None, "connection " + pc.connectionState)

        self.talks[talk.id] = talk
        try:
            await pc.setRemoteDescription(RTCSessionDescription(sdp=sdp, type=kind))
            if not any(t.kind == "audio" for t in pc.getTransceivers()):
                raise ValueError("it sends no sound")
            await pc.setLocalDescription(await pc.createAnswer())
        except Exception as error:
            del self.talks[talk.id]
            await pc.close()
            raise ValueError(f"the offer cannot be used: {error}") from None
        await self._audit_open(talk)
        self.tell(player_ref, "talk", {"speaking": True, "since": talk.started_ms})
        log.info("talk %s opened", talk.id)
        return talk, pc.localDescription

    async def open_in_room(self, who: Identity, player_ref: str) -> tuple[Talk, dict[str, Any]]:
        """The distributed mode: a talk opened, and where the desk publishes its microphone (Janus's address, the
        arbiter's token, the player's room and PIN); the player's page is told once the desk says its feed
        (:meth:`published`).  ForbiddenError and ConflictError as :meth:`open`."""
        if self.rooms is None:
            raise ConflictError("this service takes the cameras itself: send the desk's offer")
        await self._may_speak(who, player_ref)
        grant = await self.rooms.talker_grant(who.name, player_ref)
        await self._replace_own(who, player_ref)
        talk = Talk(secrets.token_urlsafe(9), player_ref, who, now_ms(), None)
        self.talks[talk.id] = talk
        await self._audit_open(talk)
        log.info("talk %s opened (through the media server)", talk.id)
        return talk, grant

    async def published(self, talk_id: str, who: Identity, feed: int) -> Talk:
        """The desk publishes its microphone as ``feed`` in the player's room: checked with Janus (ConflictError if
        it does not, within a few seconds), then the player's page is told to play it.  NotFoundError for an unknown
        talk, or another arbiter's."""
        talk = self.talks.get(talk_id)
        if talk is None or talk.who.name != who.name:
            raise NotFoundError(f"no talk {talk_id!r} of yours")
        assert self.rooms is not None
        deadline = asyncio.get_running_loop().time() + PUBLISHING_WAIT_S
        while not await self.rooms.publishing(talk.player_ref, feed, TALK_DISPLAY):
            if asyncio.get_running_loop().time() >= deadline:
                raise ConflictError(f"feed {feed} is not publishing the arbiter's microphone in this player's room")
            await asyncio.sleep(0.2)
        if talk.id not in self.talks:
            raise NotFoundError(f"no talk {talk_id!r} of yours")
        talk.feed = feed
        self.tell(talk.player_ref, "talk", {"speaking": True, "since": talk.started_ms, "feed": feed})
        return talk

    async def _may_speak(self, who: Identity, player_ref: str) -> None:
        with self.writer.engine.connect() as connection:
            require_assigned(connection, self.service, who, player_ref)
        if (other := self.of_player(player_ref)) is not None and other.who.name != who.name:
            raise ConflictError(f"{other.who.label} is already speaking to this player")

    async def _replace_own(self, who: Identity, player_ref: str) -> None:
        """The same arbiter again (a reloaded desk): the new talk replaces the old."""
        if (other := self.of_player(player_ref)) is not None and other.who.name == who.name:
            await self.end(other.id, None, "replaced by a new talk")

    async def _audit_open(self, talk: Talk) -> None:
        await self.writer.submit(lambda connection, batch: self.service.audit(
            connection, batch, talk.started_ms, talk.who.label, "camera.talk", f"player:{talk.player_ref}",
            {"talk": talk.id},
        ))  # fmt: skip

    async def end(self, talk_id: str, who: Identity | None, reason: str) -> dict[str, Any]:
        """End a talk (its arbiter closed it, or its connection ended): audited with how long it lasted; the player's
        page is told.  NotFoundError for an unknown talk, or another arbiter's."""
        talk = self.talks.get(talk_id)
        if talk is None or (who is not None and who.name != talk.who.name):
            raise NotFoundError(f"no talk {talk_id!r} of yours")
        del self.talks[talk_id]
        voice = self.ingest.voices.get(talk.player_ref)
        if voice is not None and talk.source is not None and voice.source is talk.source:
            voice.silence()
        ended = now_ms()
        seconds = round((ended - talk.started_ms) / 1000, 1)
        self.tell(talk.player_ref, "talk", {"speaking": False})
        try:
            await self.writer.submit(lambda connection, batch: self.service.audit(
                connection, batch, ended, talk.who.label, "camera.talk-end", f"player:{talk.player_ref}",
                {"talk": talk.id, "seconds": seconds, "reason": reason},
            ))  # fmt: skip
        finally:
            if talk.pc is not None:
                await talk.pc.close()
        log.info("talk %s ended after %.0f s (%s)", talk.id, seconds, reason)
        return {**talk.describe(), "seconds": seconds}

    async def _watch(self) -> None:
        """End the talks whose desk is gone (aiortc does not always turn a closed browser into a state change) or
        never connected."""
        while True:
            await asyncio.sleep(WATCH_EVERY_S)
            now = now_ms()
            for talk in list(self.talks.values()):
                try:
                    why = await self._gone(talk, now)
                except Exception as error:  # Janus away: asked again next round
                    log.warning("talk %s could not be checked: %s", talk.id, error)
                    continue
                if why is not None and talk.id in self.talks:
                    try:
                        await self.end(talk.id, None, why)
                    except Exception:
                        log.exception("ending talk %s failed", talk.id)

    async def _gone(self, talk: Talk, now: int) -> str | None:
        """Why the talk's desk is gone (None: it is not): its connection closed or failed, its feed no longer
        publishing, or it never connected."""
        late = now - talk.started_ms > CONNECT_WITHIN_S * 1000
        if talk.pc is None:  # the distributed mode: the desk's feed in the player's room
            if talk.feed is None:
                return "desk never connected" if late else None
            assert self.rooms is not None
            if not await self.rooms.publishing(talk.player_ref, talk.feed, TALK_DISPLAY):
                return "desk gone (its microphone left the media server)"
            return None
        transport = next((t.receiver.transport for t in talk.pc.getTransceivers() if t.receiver.transport), None)
        state = transport.state if transport is not None else "new"
        if state in ("closed", "failed"):
            return f"desk gone (connection {state})"
        return "desk never connected" if state != "connected" and late else None

    async def close(self) -> None:
        if self.watchdog is not None:
            self.watchdog.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.watchdog
        for talk_id in list(self.talks):
            try:
                await self.end(talk_id, None, "service stopped")
            except Exception:
                log.exception("ending talk %s failed", talk_id)
