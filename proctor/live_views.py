"""The arbiters' live views of a player's camera (issue 13, "Seeing the room"): the player's incoming track relayed
to an arbiter's browser over a second peer connection, one per view.

aiortc's :class:`~aiortc.contrib.media.MediaRelay` (video.ingest) fans the decoded track out; aiortc encodes it again
(VP8) for each viewer, on this process's event loop: a view costs a re-encode, so a process takes at most
``live_views_max`` of them (:func:`admits`, a large view counting as two; docs/video.md has the figures).  Beyond
that, 429 with a message in both languages (:class:`LiveViewsFullError`).

While at least one arbiter watches a player, the player's page is asked (its event stream, as prompts and messages
reach it: ``view-rate``) to send at ``live_view_rate`` (:func:`sender_video`); when the last viewer leaves, back to
the rate the analysis needs.  The analysis keeps its own rate: the ingest picks its frames by time.

Each view is audited when it opens (``camera.view``) and ends (``camera.view-end``, with how long it lasted); the log
names views by their ids only.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
import secrets
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Final

from aiortc import RTCConfiguration, RTCIceServer, RTCPeerConnection, RTCSessionDescription
from aiortc.mediastreams import MediaStreamTrack
from aiortc.rtcrtpsender import RTCRtpSender
from sqlalchemy import Connection

from proctor.accounts import Identity
from proctor.assignments import require_assigned_to_player
from proctor.errors import ConflictError, NotFoundError, TooManyRequestsError
from proctor.service import Service
from proctor.settings import Settings
from proctor.sfu import PlayerRooms
from proctor.wall_clock import now_ms
from proctor.writer import Writer
from video.devices import Device
from video.ingest import Ingest

log = logging.getLogger("proctor.live_views")

ANALYSIS_VIDEO: Final = {"width": 640, "height": 480, "frameRate": 5, "maxBitrate": 300_000}
"""What the player's page sends while nobody watches: enough for the analysis (``analysis_rate``, 2 a second)."""
WATCHED_BITRATE: Final = 800_000
"""The player's sending bitrate while an arbiter watches (640x480 at 15 fps)."""
RETRY_AFTER_S: Final = 10
WATCH_EVERY_S: Final = 2.0
"""How often the views are checked for a viewer gone without saying so..."""
CONNECT_WITHIN_S: Final = 20.0
"""...or one that never connected in this time."""
RENEW_WITHIN_S: Final = 60.0
"""A view through Janus the desk has not renewed for this long is over (the desk renews every 20 s)."""


class ViewSize(enum.Enum):
    """How large a view the desk shows: one of a wall of up to 12, or the large one beside the board."""

    SMALL = "small"
    LARGE = "large"

    @property
    def cost(self) -> int:
        """What it counts against ``live_views_max``.  Every view is the same re-encode at 640x480 (about 5 % of a core
        at 15 fps, docs/video.md); the large one counts 2 so that the views an arbiter keeps open longest leave room
        for the wall's."""
        return 2 if self is ViewSize.LARGE else 1


def sender_video(settings: Settings, watched: bool) -> dict[str, Any]:
    """What the player's page should send: the analysis rate, or ``live_view_rate`` at full size while watched
    (``watched`` says which: the page tells the player)."""
    if not watched:
        return {**ANALYSIS_VIDEO, "watched": False}
    return {**ANALYSIS_VIDEO, "frameRate": settings.live_view_rate, "maxBitrate": WATCHED_BITRATE, "watched": True}


def admits(in_use: int, size: ViewSize, most: int) -> bool:
    """Whether a view of this size fits beside the views in use (each counted by its :attr:`ViewSize.cost`)."""
    return in_use + size.cost <= most


class LiveViewsFullError(TooManyRequestsError):
    """This process relays as many views as it may (``live_views_max``): close one first."""

    code = "live-views-full"


def full_error(in_use: int, size: ViewSize, most: int) -> LiveViewsFullError:
    return LiveViewsFullError(
        f"live views full: this server relays at most {most} views (a large view counts 2) and {in_use} are in use; "
        "close a view first",
        message_zh=f"实时画面已满：本服务器最多转发 {most} 路（大画面计 2 路），已用 {in_use} 路；请先关闭一路画面",
        max=most, in_use=in_use, size=size.value, retry_after_s=RETRY_AFTER_S,
    )  # fmt: skip


@dataclass
class LiveView:
    """One arbiter's view of one player's camera: its peer connection and the relayed track it sends."""

    id: str
    player_ref: str
    who: Identity
    size: ViewSize
    started_ms: int
    pc: RTCPeerConnection | None
    """The view's connection from this process (None: the arbiter's browser takes it from Janus)."""
    track: MediaStreamTrack | None
    device: Device = Device.FRONT
    """Which of the player's devices it shows (the desk's large view shows a player's set: front, side, screen)."""
    sound: MediaStreamTrack | None = None
    """The player's microphone, relayed with the front camera when the desk asks for it (its offer can receive
    sound) and the player's section listens to it (issue 15: the desk's level meter, and listening live)."""
    renewed_ms: int = 0
    """A view through Janus: when the desk last said it still shows it (:meth:`LiveViews.renew`)."""

    @property
    def through_sfu(self) -> bool:
        return self.pc is None

    def describe(self) -> dict[str, Any]:
        return {"id": self.id, "player": self.player_ref, "size": self.size.value, "since": self.started_ms,
                "device": self.device.value, "sound": self.sound is not None,
                "through": "janus" if self.through_sfu else "service"}  # fmt: skip


@dataclass
class LiveViews:
    """Every live view this process relays, and what each watched player's page is asked to send."""

    settings: Settings
    service: Service
    writer: Writer
    ingest: Ingest
    tell: Callable[[str, str, dict[str, Any]], None]
    """Tells one player's open pages (:meth:`proctor.camera.Camera.tell`)."""
    wanted: dict[str, dict[str, Any]]
    """What each watched player's page is asked to send (the page's first event carries it too)."""
    ice_servers: list[RTCIceServer] = field(default_factory=list)
    views: dict[str, LiveView] = field(default_factory=dict)
    watchdog: asyncio.Task[None] | None = None
    rooms: PlayerRooms | None = None
    """The distributed mode (proctor.sfu): the arbiters' browsers watch through Janus, and this process relays
    nothing (:meth:`open_through_sfu`)."""

    def start(self) -> None:
        self.watchdog = asyncio.get_running_loop().create_task(self._watch())

    async def _watch(self) -> None:
        while True:
            await asyncio.sleep(WATCH_EVERY_S)
            for view_id, why in gone(self.views.values(), now_ms()):
                if view_id in self.views:
                    try:
                        await self.end(view_id, None, why)
                    except Exception:
                        log.exception("ending live view %s failed", view_id)

    @property
    def in_use(self) -> int:
        """What the views this process relays count against ``live_views_max`` (those through Janus cost it
        nothing)."""
        return sum(view.size.cost for view in self.views.values() if not view.through_sfu)

    def watchers(self, player_ref: str) -> int:
        """How many views watch the player's front camera (the one whose rate the page raises while watched)."""
        return sum(view.player_ref == player_ref and view.device is Device.FRONT for view in self.views.values())

    def describe(self) -> dict[str, Any]:
        return {"max": self.settings.live_views_max, "in_use": self.in_use, "rate": self.settings.live_view_rate,
                "sfu": self.rooms is not None}  # fmt: skip

    async def open(
        self, who: Identity, player_ref: str, sdp: str, kind: str, size: ViewSize, device: Device = Device.FRONT
    ) -> tuple[LiveView, Any]:
        """The arbiter's offer (a video m-line to receive) answered with the player's live track of ``device``
        (the side camera and the screen are relayed as they arrive: the screen at its low rate); audited.
        ForbiddenError beyond the arbiter's assignment, ConflictError without a live stream, LiveViewsFullError at
        the cap, ValueError for an offer that cannot be used."""
        with self.writer.engine.connect() as connection:
            require_assigned(connection, self.service, who, player_ref)
        if not admits(self.in_use, size, self.settings.live_views_max):
            raise full_error(self.in_use, size, self.settings.live_views_max)
        track = self.ingest.relayed(player_ref, device)
        if track is None:
            raise ConflictError(f"player {player_ref!r} has no live {device.title} stream to watch")
        pc = RTCPeerConnection(RTCConfiguration(iceServers=list(self.ice_servers)))
        view = LiveView(secrets.token_urlsafe(9), player_ref, who, size, now_ms(), pc, track, device)
        try:
            await pc.setRemoteDescription(RTCSessionDescription(sdp=sdp, type=kind))
            pc.addTrack(track)
            for transceiver in pc.getTransceivers():
                if transceiver.kind == "video":
                    transceiver.setCodecPreferences(vp8_codecs())
            listens = device is Device.FRONT and any(t.kind == "audio" for t in pc.getTransceivers())
            if listens and (sound := self.ingest.relayed_sound(player_ref)) is not None:
                view.sound = sound
                pc.addTrack(sound)
            await pc.setLocalDescription(await pc.createAnswer())
        except Exception as error:
            track.stop()
            if view.sound is not None:
                view.sound.stop()
            await pc.close()
            raise ValueError(f"the offer cannot be used: {error}") from None
        if not admits(self.in_use, size, self.settings.live_views_max):  # another view took the place meanwhile
            track.stop()
            if view.sound is not None:
                view.sound.stop()
            await pc.close()
            raise full_error(self.in_use, size, self.settings.live_views_max)
        self.views[view.id] = view

        @pc.on("connectionstatechange")
        async def on_state() -> None:
            if pc.connectionState in ("failed", "closed") and view.id in self.views:
                await self.end(view.id, None, "connection " + pc.connectionState)

        await self._opened(view)
        log.info("live view %s opened (%s): %d of %d in use", view.id, size.value, self.in_use,
                 self.settings.live_views_max)  # fmt: skip
        return view, pc.localDescription

    async def open_through_sfu(
        self, who: Identity, player_ref: str, size: ViewSize, device: Device = Device.FRONT
    ) -> tuple[LiveView, dict[str, Any]]:
        """The distributed mode's view: what the arbiter's browser needs to take the player's ``device`` from Janus
        (:meth:`proctor.sfu.PlayerRooms.viewer_grant`); audited like a relayed view, and kept while the desk renews
        it (:meth:`renew`, every :data:`RENEW_WITHIN_S` at least).  ForbiddenError beyond the arbiter's assignment,
        ConflictError when the player does not publish the device."""
        assert self.rooms is not None
        with self.writer.engine.connect() as connection:
            require_assigned(connection, self.service, who, player_ref)
        grant = await self.rooms.viewer_grant(who.name, player_ref, device)
        started = now_ms()
        view = LiveView(secrets.token_urlsafe(9), player_ref, who, size, started, None, None, device,
                        renewed_ms=started)  # fmt: skip
        self.views[view.id] = view
        await self._opened(view)
        log.info("live view %s opened through Janus (%s)", view.id, size.value)
        return view, grant

    def renew(self, view_id: str, who: Identity) -> LiveView:
        """The desk still shows this view through Janus.  NotFoundError for an unknown view, or another arbiter's."""
        view = self.views.get(view_id)
        if view is None or who.name != view.who.name:
            raise NotFoundError(f"no live view {view_id!r} of yours")
        view.renewed_ms = now_ms()
        return view

    async def _opened(self, view: LiveView) -> None:
        """A view opened: audited; the player's page asked for the live rate by the first viewer of its camera."""
        player_ref = view.player_ref
        first = view.device is Device.FRONT and self.watchers(player_ref) == 1
        detail = {"view": view.id, "size": view.size.value, "device": view.device.value,
                  "sound": view.sound is not None, "through": "janus" if view.through_sfu else "service"}  # fmt: skip
        await self.writer.submit(lambda connection, batch: self.service.audit(
            connection, batch, view.started_ms, view.who.label, "camera.view", f"player:{player_ref}", detail,
        ))  # fmt: skip
        if first:
            self._ask_rate(player_ref)

    async def end(self, view_id: str, who: Identity | None, reason: str) -> dict[str, Any]:
        """End a view (its viewer closed it, or its connection ended): audited with how long it lasted; the last
        viewer of a player gives the player's page back its analysis rate.  NotFoundError for an unknown view, or
        another arbiter's."""
        view = self.views.get(view_id)
        if view is None or (who is not None and who.name != view.who.name):
            raise NotFoundError(f"no live view {view_id!r} of yours")
        del self.views[view_id]
        if view.track is not None:
            view.track.stop()
        if view.sound is not None:
            view.sound.stop()
        ended = now_ms()
        seconds = round((ended - view.started_ms) / 1000, 1)
        if view.device is Device.FRONT and self.watchers(view.player_ref) == 0:
            self._ask_rate(view.player_ref)
        try:
            await self.writer.submit(lambda connection, batch: self.service.audit(
                connection, batch, ended, view.who.label, "camera.view-end", f"player:{view.player_ref}",
                {"view": view.id, "size": view.size.value, "seconds": seconds, "reason": reason},
            ))  # fmt: skip
        finally:
            if view.pc is not None:
                await view.pc.close()
        log.info("live view %s ended after %.0f s (%s)", view.id, seconds, reason)
        return {**view.describe(), "seconds": seconds}

    def _ask_rate(self, player_ref: str) -> None:
        """Ask the player's page for the rate its viewers need now (``view-rate``), or its analysis rate back."""
        watched = self.watchers(player_ref) > 0
        video = sender_video(self.settings, watched)
        if watched:
            self.wanted[player_ref] = video
        else:
            self.wanted.pop(player_ref, None)
        self.tell(player_ref, "view-rate", {"watched": watched, "video": video})

    async def close(self) -> None:
        if self.watchdog is not None:
            self.watchdog.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.watchdog
        for view_id in list(self.views):
            try:
                await self.end(view_id, None, "service stopped")
            except Exception:
                log.exception("ending live view %s failed", view_id)


def gone(views: Iterable[LiveView], now: int) -> list[tuple[str, str]]:
    """The views whose viewer is gone, and why: the browser closed the connection (DTLS closed, which aiortc does
    not turn into the peer connection's state), it failed, or it never connected within ``CONNECT_WITHIN_S``."""
    ended = []
    for view in views:
        if view.pc is None:  # through Janus: gone when the desk stops renewing it
            if now - view.renewed_ms > RENEW_WITHIN_S * 1000:
                ended.append((view.id, "viewer gone (not renewed)"))
            continue
        transport = next((t.sender.transport for t in view.pc.getTransceivers() if t.sender.transport), None)
        state = transport.state if transport is not None else "new"
        if state in ("closed", "failed"):
            ended.append((view.id, f"viewer gone (connection {state})"))
        elif state != "connected" and now - view.started_ms > CONNECT_WITHIN_S * 1000:
            ended.append((view.id, "viewer never connected"))
    return ended


def require_assigned(connection: Connection, service: Service, who: Identity, player_ref: str) -> None:
    """The arbiter may watch the player as they may act on the player's camera (16): the board of their current
    game, else their sections."""
    live = [g.id for g in service.games.values() if player_ref in g.refs and not g.state.is_over]
    require_assigned_to_player(connection, who, player_ref, max(live) if live else None,
                               f"player {player_ref}'s camera")  # fmt: skip


def vp8_codecs() -> list[Any]:
    """VP8 (and its retransmission), the codec the views are encoded in (the figures in docs/video.md are VP8's)."""
    return [c for c in RTCRtpSender.getCapabilities("video").codecs if c.mimeType in ("video/VP8", "video/rtx")]
