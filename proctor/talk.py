"""Talking to a player (issue 15, "Talking to the player"): an arbiter's microphone to the player's page, as human
proctors speak to a player during a room scan or a check.

The desk opens a talk (its browser's offer: an audio track to send) while it watches the player; the service answers
and passes the arbiter's sound on to the player's front-camera connection (video.voice), whose page plays it and
says that an arbiter is speaking (its event stream: ``talk``).  The desk's button is push-to-talk: the talk stays
open while the arbiter watches, and their microphone is live only while the button is held.

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
from proctor.wall_clock import now_ms
from proctor.writer import Writer
from video.ingest import Ingest

log = logging.getLogger("proctor.talk")

CONNECT_WITHIN_S: Final = 20.0
"""A talk whose desk never connected in this time is ended."""
WATCH_EVERY_S: Final = 2.0


@dataclass
class Talk:
    """One arbiter speaking to one player: the desk's peer connection and, once it arrives, its microphone."""

    id: str
    player_ref: str
    who: Identity
    started_ms: int
    pc: RTCPeerConnection
    source: MediaStreamTrack | None = None

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
        with self.writer.engine.connect() as connection:
            require_assigned(connection, self.service, who, player_ref)
        voice = self.ingest.voice(player_ref)
        if voice is None:
            raise ConflictError(f"player {player_ref!r} has no live camera whose page can play sound")
        if (other := self.of_player(player_ref)) is not None and other.who.name != who.name:
            raise ConflictError(f"{other.who.label} is already speaking to this player")
        if other is not None:  # the same arbiter again (a reloaded desk): the new talk replaces the old
            await self.end(other.id, None, "replaced by a new talk")
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
        await self.writer.submit(lambda connection, batch: self.service.audit(
            connection, batch, talk.started_ms, who.label, "camera.talk", f"player:{player_ref}", {"talk": talk.id},
        ))  # fmt: skip
        self.tell(player_ref, "talk", {"speaking": True, "since": talk.started_ms})
        log.info("talk %s opened", talk.id)
        return talk, pc.localDescription

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
                transport = next((t.receiver.transport for t in talk.pc.getTransceivers() if t.receiver.transport),
                                 None)  # fmt: skip
                state = transport.state if transport is not None else "new"
                why = None
                if state in ("closed", "failed"):
                    why = f"desk gone (connection {state})"
                elif state != "connected" and now - talk.started_ms > CONNECT_WITHIN_S * 1000:
                    why = "desk never connected"
                if why is not None and talk.id in self.talks:
                    try:
                        await self.end(talk.id, None, why)
                    except Exception:
                        log.exception("ending talk %s failed", talk.id)

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
