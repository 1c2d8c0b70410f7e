"""The players' cameras in the service: stream tokens, ICE configuration (TURN REST credentials), and the findings
of the video checks turned into incidents with their evidence.

A finding that starts raises an incident (kind = the check, its article from 36, source ``detector:camera``) on the
player's current game, with a JPEG snapshot saved under ``media_dir`` and its SHA-256 in the incident's evidence and
in the audit log; when the condition ends, a note is added to the same incident.

Each stream follows its player's section's proctoring policy (:class:`CameraPolicy`): the checks it enables, its
thresholds over the service's, and its evidence retention, the media being kept in the section's own folder
(``media_dir/<event>/<section>/``).  A player in no section gets the service's defaults, media in ``media_dir``.

The arbiters' controls over a player's camera (36): messages to the player's page, prompts (ear check 36.2, room scan
and pan check 36.4) whose window is recorded as evidence, leave of the area (36.4.1) and the approval of the player's
setup.  Each is an append-only ``camera_action`` row, an audit entry naming it, and a note on the incident it concerns;
the player's page hears of it on its own event stream (:meth:`Camera.listen`), and no other page does.

A stream token works until the end of the player's event, else ``stream_token_ttl_s`` (:func:`token_expiry`); a new
one revokes it.  A player streams one connection per device (the front camera, a side camera, the shared screen:
video.devices, the section's ``devices``): a second offer for a device while its first stream is live raises a
``second-connection`` incident and is refused (:meth:`Camera.accept_offer`).  The side camera's approved view and the
screen share's own rules are in proctor.player_devices.  Media past their retention are deleted
by the hourly sweep unless an open incident or appeal holds them, each deletion audited (proctor.media_retention).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import datetime
import enum
import hashlib
import hmac
import json
import logging
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Coroutine, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from aiortc import RTCIceServer, RTCSessionDescription
from aiortc.sdp import SessionDescription
from sqlalchemy import Connection, insert, select, update
from sqlmodel import col

from engine.penalties import Role
from proctor.accounts import Identity, token_hash
from proctor.assignments import require_assigned_to_player
from proctor.camera_records import (
    CLIP_PREFIX,
    DETECTOR_SOURCE,
    ENDED_PREFIX,
    clip_attached,
    ended_noted,
    recorded_incident,
)
from proctor.camera_roster import StreamSnapshot
from proctor.ear_checks import ARTICLE as EAR_ARTICLE
from proctor.ear_checks import SECONDS as EAR_CHECK_SECONDS
from proctor.ear_checks import DueCheck, EarCheckPolicy, EarCheckScheduler
from proctor.errors import (
    BadRequestError,
    ConfigurationError,
    ConflictError,
    ExpiredError,
    NotFoundError,
    UnauthorizedError,
)
from proctor.events import CHECKS, PolicySpec
from proctor.live_views import LiveViews, sender_video
from proctor.media_retention import expired_media, retire_media
from proctor.microphone_states import microphone_state
from proctor.models import CameraAction, Incident, Player, Section, StreamToken, Tournament
from proctor.player_devices import PlayerDevices, room_references, snapshot_of
from proctor.player_view import LEAVE_REQUEST, leave_answer, leave_requesters, player_place
from proctor.service import Service
from proctor.settings import Settings
from proctor.sfu import PlayerRooms
from proctor.sound_policy import MicrophonePolicy
from proctor.staging import Batch
from proctor.stream_registry import StreamRegistry
from proctor.stream_views import StreamViews
from proctor.stream_views import degraded as is_degraded
from proctor.talk import Talks
from proctor.wall_clock import now_ms
from proctor.writer import Writer
from video.analysis_processes import AnalysisProcesses
from video.checks import Check, Finding, PanVerdict, Thresholds, checks_for_policy, judge_pan
from video.detectors import available_detector
from video.devices import (
    DEFAULT_DEVICES,
    Device,
    DeviceThresholds,
    StreamKey,
    devices_for_policy,
    stream_key,
    surface_problem,
)
from video.ingest import (
    CapturedFrame,
    CaptureResult,
    Ingest,
    IngestSettings,
    StreamPolicy,
    ear_crop,
    face_centre,
    face_turn,
    turned_furthest,
)
from video.segmentation import available_segmenter

log = logging.getLogger("proctor.camera")

DETECTOR = Identity("detector:camera", Role.ARBITER)
"""How the detector signs its notes on incidents (it has no authority to penalise)."""
SERVICE = Identity("service", Role.ARBITER)
"""Who prompts the scheduled ear checks (36.2; proctor/ear_checks.py): the service itself, never an arbiter.  Its
actions are recorded with ``by_service`` (actor, role and incident source ``service``), not by this name."""


SCREEN_STOPPED = "screen-share-stopped"
"""The incident of a screen share that stopped or was lost while the player's game is in play (36.4.4: sharing may
stop only after the game)."""
SCREEN_ARTICLE = "36.4.4"
ANALYSIS_GAP = "analysis-gap"
"""A stream that went unchecked while analysis workers handed it over (the distributed mode): no fault of the
player's, shown on the camera timeline."""
SCREEN_FOLDER = "screen"
"""A section's screen stills and clips are kept in this subfolder of its media folder, with their own retention."""
DEFAULT_SCREEN_RETENTION_DAYS = 30


SECOND_CONNECTION_ARTICLE = "36.4, 37.2"
"""A second connection for a live camera: the camera must show the player's room and device (36.4); another device
needs the arbiter's permission (37.2)."""


def current_game(service: Service, player_ref: str) -> int | None:
    """The player's game in play (the latest, if several), as committed."""
    live = [g.id for g in service.games.values() if player_ref in g.refs and not g.state.is_over]
    return max(live) if live else None


def issue_stream_token(connection: Connection, player_ref: str, now: int, expires_ms: int) -> str:
    """A new stream token for the player, working until ``expires_ms``; any earlier one stops working."""
    connection.execute(
        update(StreamToken)
        .where(col(StreamToken.player_ref) == player_ref, col(StreamToken.revoked_ms).is_(None))
        .values(revoked_ms=now)
    )
    token = secrets.token_urlsafe(24)
    connection.execute(insert(StreamToken).values(token_hash=token_hash(token), player_ref=player_ref, created_ms=now,
                                                  expires_ms=expires_ms))  # fmt: skip
    return token


@dataclass(frozen=True, slots=True)
class IssuedLink:
    """A stream link just issued: the token itself exists only here (the database keeps its hash)."""

    player_ref: str
    token: str
    expires_ms: int

    @property
    def path(self) -> str:
        return f"/play/{self.token}"


def issue_audited_link(
    service: Service,
    connection: Connection,
    batch: Batch,
    who: Identity,
    player_ref: str,
    now: int,
    ttl_s: int,
    section: str | None = None,
) -> IssuedLink:
    """Issue the player's stream link (the earlier one revoked) with an audit entry ``stream-link.issued`` (subject
    ``player:REF``): who, until when, how many earlier links it revoked, and the section when issued for a whole one.
    Assignments are the caller's to check, in this transaction."""
    revoked = len(connection.execute(
        select(col(StreamToken.id))
        .where(col(StreamToken.player_ref) == player_ref, col(StreamToken.revoked_ms).is_(None))
    ).all())  # fmt: skip
    expires = token_expiry(connection, player_ref, now, ttl_s)
    token = issue_stream_token(connection, player_ref, now, expires)
    detail: dict[str, Any] = {"expires": expires, "revoked": revoked}
    if section is not None:
        detail["section"] = section
    service.audit(connection, batch, now, who.label, "stream-link.issued", f"player:{player_ref}", detail)
    return IssuedLink(player_ref, token, expires)


def event_end_ms(ends: str) -> int | None:
    """The end of an event's last day (``ends``, YYYY-MM-DD, as its file gives it): midnight UTC after it."""
    try:
        day = datetime.date.fromisoformat(ends)
    except (TypeError, ValueError):
        return None
    end = datetime.datetime.combine(day + datetime.timedelta(days=1), datetime.time(), datetime.UTC)
    return int(end.timestamp() * 1000)


def token_expiry(connection: Connection, player_ref: str, now: int, ttl_s: int) -> int:
    """When a token issued now for the player expires: at the end of their event, when its file gives an end still
    to come (the latest, for a player in several), else ``ttl_s`` from now."""
    rows = connection.execute(
        select(col(Tournament.config))
        .join(Section, col(Section.tournament_id) == col(Tournament.id))
        .join(Player, col(Player.section_id) == col(Section.id))
        .where(col(Player.platform_ref) == player_ref)
    ).scalars()
    ends = [event_end_ms(str(((config or {}).get("event") or {}).get("ends", ""))) for config in rows]
    future = [end for end in ends if end is not None and end > now]
    return max(future) if future else now + ttl_s * 1000


def _token_row(connection: Connection, token: str) -> Any:
    return connection.execute(
        select(col(StreamToken.player_ref), col(StreamToken.revoked_ms), col(StreamToken.expires_ms)).where(
            col(StreamToken.token_hash) == token_hash(token)
        )
    ).first()


def player_for_token(connection: Connection, token: str, now: int) -> str:
    """The player whose token this is: UnauthorizedError when it is unknown or revoked, ExpiredError when expired."""
    row = _token_row(connection, token)
    if row is None or row.revoked_ms is not None:
        raise UnauthorizedError("unknown or revoked stream token")
    if row.expires_ms is None or row.expires_ms <= now:
        raise ExpiredError(expired_text(row.expires_ms))
    return str(row.player_ref)


def expired_text(expires_ms: int | None) -> str:
    when = "" if expires_ms is None else " at " + time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(expires_ms / 1000))
    return f"this link expired{when}: ask the arbiter for a new link"


REPLACED_TEXT = "this link was replaced by a new one: ask the arbiter for the new link"


def token_replaced(connection: Connection, token: str) -> bool:
    """Whether this is a stream token that was revoked by a new one (its page says so: 404, in words)."""
    row = _token_row(connection, token)
    return row is not None and row.revoked_ms is not None


def token_ended(connection: Connection, token: str, player_ref: str, now: int) -> str | None:
    """Why the player's stream token no longer opens their page (None while it does)."""
    row = _token_row(connection, token)
    if row is None or row.player_ref != player_ref or row.revoked_ms is not None:
        return REPLACED_TEXT
    if row.expires_ms is None or row.expires_ms <= now:
        return expired_text(row.expires_ms)
    return None


def ice_servers(settings: Settings, player_ref: str, now_s: float) -> list[dict[str, Any]]:
    """The ICE servers for one player: as configured, with TURN REST credentials (coturn's ``use-auth-secret``:
    username ``expiry:player``, password base64(HMAC-SHA1(secret, username))) when a TURN secret is set."""
    servers: list[dict[str, Any]] = []
    for url in (u.strip() for u in settings.ice_servers.split(",") if u.strip()):
        server: dict[str, Any] = {"urls": url}
        if url.startswith(("turn:", "turns:")) and settings.turn_secret:
            username = f"{int(now_s) + settings.turn_ttl_s}:{player_ref}"
            digest = hmac.new(settings.turn_secret.encode(), username.encode(), hashlib.sha1).digest()
            server["username"], server["credential"] = username, base64.b64encode(digest).decode()
        servers.append(server)
    return servers


@dataclass(frozen=True, slots=True)
class SectionPlace:
    """The event section whose policy a player's camera follows."""

    event: str
    """The tournament's slug."""
    section: str
    """The section's slug."""
    section_id: int
    name: str

    @property
    def folder(self) -> str:
        """Where its media are kept, relative to the media folder (slugs are ``[a-z0-9-]``: safe as names)."""
        return f"{self.event}/{self.section}"


@dataclass(frozen=True, slots=True)
class CameraPolicy:
    """The proctoring policy one player's camera follows: their section's ``[sections.policy]`` (``checks``,
    ``thresholds`` over the service's, ``evidence_retention_days``), or the service's defaults when they are in no
    section."""

    section: SectionPlace | None
    stream: StreamPolicy
    retention_days: float
    ear_checks: EarCheckPolicy = field(default_factory=EarCheckPolicy)
    """The ear checks the service prompts itself (``ear_check_at_start``, ``ear_checks_per_hour``; 36.2)."""
    auto_pan_check: bool = False
    """The service asks for the pan check itself when the passive virtual-background signal is raised (36.4)."""
    devices: tuple[Device, ...] = DEFAULT_DEVICES
    """The devices the section requires (``devices``; video.devices): the front camera alone by default."""
    screen_retention_days: float = DEFAULT_SCREEN_RETENTION_DAYS
    """How long the shared screen's stills and clips are kept (``screen_retention_days``: a screen is more private
    than a face)."""
    microphone: bool = False
    """The section listens to its players' microphones (``microphone_required``; proctor.sound_policy)."""

    @classmethod
    def of(cls, section: SectionPlace | None, policy: Mapping[str, Any], base: Thresholds,
           default_retention_days: float) -> CameraPolicy:  # fmt: skip
        """``policy``: the section's policy as stored (ignored without a section)."""
        if section is None:
            return cls(None, StreamPolicy(base), default_retention_days)
        thresholds = Thresholds.from_policy(dict(policy.get("thresholds") or {}), base)
        limits = DeviceThresholds.from_policy(dict(policy.get("thresholds") or {}))
        enabled = checks_for_policy(policy.get("checks", CHECKS))
        retention = float(policy.get("evidence_retention_days", PolicySpec().evidence_retention_days))
        devices = devices_for_policy(policy.get("devices") or [d.value for d in DEFAULT_DEVICES])
        screen_days = float(policy.get("screen_retention_days", DEFAULT_SCREEN_RETENTION_DAYS))
        return cls(section, StreamPolicy(thresholds, enabled, limits), retention, EarCheckPolicy.of(policy),
                   bool(policy.get("auto_pan_check", False)), devices, screen_days,
                   bool(policy.get("microphone_required", False)))  # fmt: skip

    @property
    def media_folder(self) -> str:
        """Relative to the media folder: the section's folder, or "" (the media folder itself)."""
        return "" if self.section is None else self.section.folder

    def folder_of(self, device: Device) -> str:
        """Where a device's media are kept: the screen's in the section's ``screen`` subfolder (its own retention),
        the cameras' in the section's folder."""
        if device is not Device.SCREEN:
            return self.media_folder
        return f"{self.media_folder}/{SCREEN_FOLDER}" if self.media_folder else SCREEN_FOLDER

    def describe(self) -> dict[str, Any]:
        """As the camera status shows it."""
        section = self.section
        return {
            "section": None if section is None else {"event": section.event, "section": section.section,
                                                     "name": section.name},
            "checks": sorted(check.value for check in self.stream.enabled),
            "thresholds": asdict(self.stream.thresholds),
            "evidence_retention_days": self.retention_days,
            "media_folder": self.media_folder,
            "ear_checks": self.ear_checks.describe(),
            "auto_pan_check": self.auto_pan_check,
            "devices": [device.value for device in self.devices],
            "screen_retention_days": self.screen_retention_days,
            "device_thresholds": asdict(self.stream.devices),
        }  # fmt: skip


def player_section(connection: Connection, player_ref: str) -> tuple[SectionPlace, dict[str, Any]] | None:
    """The section the player (by their platform id) is in, and its policy; the latest section (the highest id) when
    they are in several, None when in none."""
    if not player_ref:
        return None
    row = connection.execute(
        select(col(Section.id), col(Section.slug), col(Section.name), col(Section.policy),
               col(Tournament.slug).label("event"))
        .select_from(Section)
        .join(Player, col(Player.section_id) == col(Section.id))
        .join(Tournament, col(Tournament.id) == col(Section.tournament_id))
        .where(col(Player.platform_ref) == player_ref)
        .order_by(col(Section.id).desc())
        .limit(1)
    ).first()  # fmt: skip
    if row is None:
        return None
    return SectionPlace(row.event, row.slug, row.id, row.name), dict(row.policy or {})


def retention_by_folder(connection: Connection) -> dict[str, float]:
    """Every section's media folder (relative to the media folder) and how long its media are kept, in seconds."""
    rows = connection.execute(
        select(col(Tournament.slug), col(Section.slug), col(Section.policy))
        .select_from(Section)
        .join(Tournament, col(Tournament.id) == col(Section.tournament_id))
    )
    default = PolicySpec().evidence_retention_days
    folders: dict[str, float] = {}
    for event, section, policy in rows:
        folders[f"{event}/{section}"] = float((policy or {}).get("evidence_retention_days", default)) * 86_400
        screen_days = (policy or {}).get("screen_retention_days", DEFAULT_SCREEN_RETENTION_DAYS)
        folders[f"{event}/{section}/{SCREEN_FOLDER}"] = float(screen_days) * 86_400
        sound_days = (policy or {}).get("sound_retention_days", 30)  # the microphone's clips (proctor.microphone)
        folders[f"{event}/{section}/sound"] = float(sound_days) * 86_400
    return folders


class Prompt(enum.Enum):
    """What an arbiter may ask a player to show on camera: the page shows the instruction with a countdown, and the
    stream is recorded for that window as evidence."""

    EAR_CHECK = "ear-check"
    ROOM_SCAN = "room-scan"
    PAN_CHECK = "pan-check"

    @property
    def article(self) -> str:
        return {"ear-check": "36.2", "room-scan": "36.4", "pan-check": "36.4"}[self.value]

    @property
    def title(self) -> str:
        return {
            "ear-check": "Ear check",
            "room-scan": "Pre-game environment check",
            "pan-check": "Virtual background check",
        }[self.value]

    @property
    def instruction(self) -> str:
        return {
            "ear-check": "Turn your head slowly to the left, then to the right, so that both ears can be seen.",
            "room-scan": "Pan the camera slowly around the room, the desk and the floor, then back.",
            "pan-check": "Tilt or pan the camera slowly left and right.",
        }[self.value]

    @property
    def keeps_stills(self) -> bool:
        """The ear check also keeps the frames where the face is turned furthest left and right."""
        return self is Prompt.EAR_CHECK


def ear_view_problem(frames: Sequence[CapturedFrame], seconds: int) -> str | None:
    """Why an ear check's recording (36.2) cannot show both ears, None when it can: no picture, no face, or the head
    not turned to both sides (the stills' turns, from the landmarks, must point opposite ways: a face that only looks
    ahead, or to one side, shows one ear or none; where the detector gives no landmarks, the face must have moved
    a quarter of its width)."""
    if not frames:
        return f"no picture arrived in the {seconds} s window"
    pair = turned_furthest(frames)
    if pair is None:
        return "no face was found in the window"
    left, right = pair
    if left.still is None or right.still is None:
        return "no still was kept"
    turns = face_turn(left), face_turn(right)
    if turns[0] is not None and turns[1] is not None:
        return None if turns[0] < 0 < turns[1] else "the head was not turned to both sides"
    centres = face_centre(left), face_centre(right)
    width = max(box.width for box in left.faces + right.faces)
    if centres[0] is None or centres[1] is None or centres[1] - centres[0] < width / 4:
        return "the head did not move to both sides"
    return None


def ear_check_text(problem: str | None, crops: int, scheduled: DueCheck | None) -> str:
    """What the arbiter reads of an ear check's recording (36.2): the summary of a scheduled check's incident, or the
    note on the arbiter's incident."""
    head = f"Ear check ({EAR_ARTICLE})" + ("" if scheduled is None else f", {scheduled.occasion.title}")
    if problem is not None:
        return f"{head}: no usable ear view: ask again ({problem})"
    shown = (
        "stills of the head turned furthest left and right, and an ear crop from each"
        if crops >= 2
        else "stills of the head turned furthest left and right (no ear crops: the face detector gave no landmarks)"
    )
    return f"{head}: judge both ears from the {shown}; confirm if earphones are seen ({EAR_ARTICLE}), else dismiss"


AUTO_PAN_SECONDS = 12
"""The window of a pan check the service asks for itself (``auto_pan_check``)."""
PROMPT_SECONDS = (5, 60)
"""A prompt's window: at least and at most this many seconds (15 by default)."""
LEAVE_MINUTES = (1, 60)
MAX_TEXT = 500
RECENT = 5
"""How many recent prompts and messages the status and the page's first event carry."""


@dataclass
class Camera:
    settings: Settings
    service: Service
    writer: Writer
    ingest: Ingest | None = None
    checks_note: str = ""
    processes: AnalysisProcesses | None = None
    """The analysis processes (``analysis_processes``), if any."""
    open_incidents: dict[tuple[StreamKey, str], int] = field(default_factory=dict)
    raised: dict[tuple[StreamKey, str, float], int] = field(default_factory=dict)
    """The incident each started finding raised (by stream, check and start), until its clip is attached."""
    sweeper: asyncio.Task[None] | None = None
    pending: set[asyncio.Task[Any]] = field(default_factory=set)
    executor: ThreadPoolExecutor = field(default_factory=lambda: ThreadPoolExecutor(2, "proctor-video"))
    pages: dict[str, set[asyncio.Queue[str]]] = field(default_factory=dict)
    """Each player's open pages (their event streams), by player."""
    page_events: int = 0
    prompting: dict[str, dict[str, Any]] = field(default_factory=dict)
    """The prompt each player's page is showing, until its window ends."""
    captures: set[asyncio.Task[None]] = field(default_factory=set)
    policies: dict[str, CameraPolicy] = field(default_factory=dict)
    """The policy each player's latest stream follows, from when its offer was accepted."""
    ear_checks: EarCheckScheduler | None = None
    """The ear checks the sections' policies ask the service to prompt (36.2), while their games are in play."""
    ear_check_task: asyncio.Task[None] | None = None
    second_offers: dict[StreamKey, int] = field(default_factory=dict)
    """The live stream (by identity) whose second offer already raised its incident, by player and device."""
    live_views: LiveViews | None = None
    """The arbiters' live views of the players' cameras (proctor.live_views), once started."""
    talks: Talks | None = None
    """The arbiters speaking to players (proctor.talk), once started."""
    video_wanted: dict[str, dict[str, Any]] = field(default_factory=dict)
    """What each watched player's page is asked to send (its first event says it too)."""
    rooms: PlayerRooms | None = None
    """The players' rooms on Janus, in the distributed mode (proctor.sfu: ``JANUS_URL``); None: the cameras come
    here directly."""
    streams: StreamViews = field(init=False)
    """The streams as the desk sees them: the ingest's, and in the distributed mode the workers' reports."""
    devices: PlayerDevices = field(init=False)
    """The players' second cameras and screens: the side camera's approved view, the screen's reports and stills,
    each device's state (proctor.player_devices)."""

    def __post_init__(self) -> None:
        self.devices = PlayerDevices(self)
        self.streams = StreamViews(None)

    def start(self, thresholds: Thresholds | None = None) -> None:
        detector, faces_note = available_detector(Path(self.settings.models_dir))
        people, people_note = available_segmenter(Path(self.settings.models_dir))
        self.checks_note = f"{faces_note}; {people_note}"
        if self.settings.analysis_processes > 0:
            self.processes = AnalysisProcesses(self.settings.analysis_processes, Path(self.settings.models_dir))
            self.processes.start(wait=False)  # each loads its models meanwhile; a stream's first frame waits for it
            self.checks_note += f"; analysis processes: {self.settings.analysis_processes}"
        log.info("video checks: %s", self.checks_note)
        config = IngestSettings(
            ice_servers=[RTCIceServer(**s) for s in ice_servers(self.settings, "service", time.time())],
            rate=self.settings.analysis_rate,
            thresholds=thresholds or Thresholds(),
        )
        self.ingest = Ingest(config, detector, self.executor, self.on_finding, self.on_clip, people, self.processes)
        self.ingest.on_still = self.devices.on_still
        self.ingest.start()
        self.streams.ingest = self.ingest
        self.live_views = LiveViews(self.settings, self.service, self.writer, self.ingest, self.tell,
                                    self.video_wanted, list(config.ice_servers))  # fmt: skip
        self.live_views.start()
        self.talks = Talks(self.service, self.writer, self.ingest, self.tell, list(config.ice_servers))
        self.talks.start()
        with self.writer.engine.connect() as connection:
            for player_ref, until_ms in leave_granted(connection, now_ms()).items():
                self.ingest.grant_leave(player_ref, until_ms / 1000)
            self.devices.load_references(connection)
        self.sweeper = asyncio.get_running_loop().create_task(self._sweep_media_forever())
        self.ear_checks = EarCheckScheduler(self)
        self.ear_check_task = asyncio.get_running_loop().create_task(self.ear_checks.run())

    async def start_rooms(self) -> None:
        """The distributed mode (``JANUS_URL``): the players' pages publish to Janus, analysis workers take the
        streams (proctor.sfu, proctor.worker)."""
        settings = self.settings
        if not (settings.bus_url and settings.worker_secret and settings.janus_admin_url):
            raise ConfigurationError("PROCTOR_JANUS_URL needs PROCTOR_BUS_URL, PROCTOR_WORKER_SECRET and "
                                     "PROCTOR_JANUS_ADMIN_URL")  # fmt: skip
        self.rooms = PlayerRooms(settings, StreamRegistry(settings.bus_url))
        self.rooms.remote = self.streams.remote  # the workers' reports, as the desk sees them
        with self.writer.engine.connect() as connection:
            self.rooms.references.update(room_references(connection))
        await self.rooms.start()
        if self.live_views is not None:  # the arbiters watch through Janus
            self.live_views.rooms = self.rooms
        if self.talks is not None:  # and speak to the players there
            self.talks.rooms = self.rooms
        with self.writer.engine.connect() as connection:
            for player_ref, until_ms in leave_granted(connection, now_ms()).items():
                self.rooms.grant_leave(player_ref, until_ms / 1000)

    async def sfu_room(self, player_ref: str) -> dict[str, Any]:
        """Where the player's page publishes (the distributed mode): Janus's address, the player's token, room and
        PIN.  ConflictError when the service takes the cameras itself."""
        room = await self._rooms().room_for(player_ref)
        return {**room.describe(), "iceServers": ice_servers(self.settings, player_ref, time.time())}

    async def sfu_published(self, player_ref: str, device: Device, feed: int, surface: object) -> dict[str, Any]:
        """The player's page publishes ``device`` as ``feed`` in their room: checked as an offer is (the device the
        section uses, a whole screen), and with Janus, then given to the analysis workers."""
        rooms = self._rooms()
        policy = self._allowed(player_ref, device, surface)
        sound = self.microphone_policy(player_ref) if device is Device.FRONT else None
        stream = await rooms.published(player_ref, device, feed, policy.stream, sound)
        self.policies[player_ref] = policy
        self.devices.connected(player_ref, device)
        return {"player": player_ref, "device": device.value, "feed": stream.feed}

    def _rooms(self) -> PlayerRooms:
        if self.rooms is None:
            raise ConflictError("this service takes the cameras itself: offer them to /api/v1/rtc/offer")
        return self.rooms

    def _allowed(self, player_ref: str, device: Device, surface: object) -> CameraPolicy:
        """The player's policy, if the device is one their section uses (ConflictError) and a screen share is of the
        whole screen (BadRequestError, 36.4)."""
        policy = self.policy_for(player_ref)
        if device not in policy.devices:
            raise ConflictError(f"this player's section does not use a {device.title} (its devices: "
                                f"{', '.join(d.value for d in policy.devices)})")  # fmt: skip
        if device is Device.SCREEN and (problem := surface_problem(surface)) is not None:
            self.devices.refused(player_ref, device, surface)
            raise BadRequestError(f"the screen share is refused: {problem} (36.4: the whole screen is monitored)")
        return policy

    def policy_for(self, player_ref: str) -> CameraPolicy:
        """The policy the player's camera follows now: their section's over the service's thresholds (the ingest's
        base), or the service's."""
        base = self.ingest.settings.thresholds if self.ingest is not None else Thresholds()
        with self.writer.engine.connect() as connection:
            found = player_section(connection, player_ref)
        section, policy = found if found is not None else (None, {})
        return CameraPolicy.of(section, policy, base, self.settings.media_retention_days)

    def microphone_policy(self, player_ref: str) -> MicrophonePolicy:
        """The player's microphone policy now: their section's (proctor.sound_policy)."""
        with self.writer.engine.connect() as connection:
            return MicrophonePolicy.of(player_section(connection, player_ref))

    def _policy(self, player_ref: str) -> CameraPolicy:
        """The policy of the player's latest stream (or the one that applies now, if they never streamed)."""
        return self.policies.get(player_ref) or self.policy_for(player_ref)

    async def accept_offer(
        self, player_ref: str, sdp: str, kind: str, device: Device = Device.FRONT, surface: object = None
    ) -> RTCSessionDescription:
        """A player's offer for one of their devices, answered; the stream follows the player's policy (ValueError
        for a bad SDP).

        The device must be one the player's section requires (``devices``; the front camera always is), else
        ConflictError; a screen share must be of the whole screen (``surface``, as the page read the browser's
        ``displaySurface``: a window or a tab is refused, BadRequestError, 36.4).  A second offer for a device while
        its stream is live (not failed or closed, a frame in the last ``camera_stale_s``) is refused (ConflictError)
        and raises a ``second-connection`` incident (36.4, 37.2: another device, or someone else holding the
        player's link, would take the stream over): the first stream stays.  Once the first is stale or lost (the
        page reconnecting after a dropped connection), the new offer replaces it.  The player's other devices are
        not touched."""
        if self.ingest is None:
            raise ConflictError("the camera service is not running")
        check_offer(sdp)
        policy = self._allowed(player_ref, device, surface)
        holding = self.ingest.holding(player_ref, time.time(), self.settings.camera_stale_s, device)
        if holding is not None:
            await self._second_connection(StreamKey(player_ref, device), holding)
            raise ConflictError(
                f"this player's {device.title} is already streaming on another connection: a second one is refused "
                "and the arbiter has been told (36.4, 37.2)", article=SECOND_CONNECTION_ARTICLE,
            )  # fmt: skip
        answer = await self.ingest.answer(player_ref, sdp, kind, policy.stream, device)
        self.policies[player_ref] = policy
        self.devices.connected(player_ref, device)
        return answer

    async def _second_connection(self, key: StreamKey, holding: Any) -> None:
        """Raise the ``second-connection`` incident, once per live stream (the refusals after it add nothing)."""
        if self.second_offers.get(key) == id(holding):
            return
        self.second_offers[key] = id(holding)
        player_ref = key.player
        game = self.current_game(player_ref)
        what = "camera" if key.device is Device.FRONT else key.device.title
        summary = (f"{player_ref}: a second {what} connection was offered while the first is live; it was refused and "
                   "the first kept (another device, or someone else with the player's link)")  # fmt: skip
        evidence = {} if key.device is Device.FRONT else {"device": key.device.value}
        await self.writer.submit(lambda connection, batch: self.service.raise_incident(
            connection, batch, game, "second-connection", summary, source="service",
            article=SECOND_CONNECTION_ARTICLE, player_ref=player_ref, at=now_ms(), evidence=evidence,
        ))  # fmt: skip

    async def close(self) -> None:
        if self.talks is not None:
            await self.talks.close()
        if self.live_views is not None:
            await self.live_views.close()
        if self.ear_check_task is not None:
            self.ear_check_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.ear_check_task
        for task in list(self.captures):
            task.cancel()
        if self.captures:
            await asyncio.gather(*self.captures, return_exceptions=True)
        if self.sweeper is not None:
            self.sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.sweeper
        if self.ingest is not None:
            await self.ingest.close()
        if self.rooms is not None:
            await self.rooms.close()
        if self.processes is not None:
            await asyncio.get_running_loop().run_in_executor(None, self.processes.close)
        if self.pending:
            await asyncio.gather(*self.pending, return_exceptions=True)
        self.executor.shutdown(wait=False, cancel_futures=True)

    def _spawn(self, coroutine: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(coroutine)
        self.pending.add(task)
        task.add_done_callback(self.pending.discard)

    def on_finding(self, stream: str | StreamKey, finding: Finding, snapshot: bytes | None) -> None:
        """A check's finding on a stream (a bare player id: their front camera)."""
        self._spawn(self._record(stream_key(stream), finding, snapshot))
        self._device_changed(stream_key(stream), finding)

    async def worker_finding(self, stream: StreamKey, finding: Finding, snapshot: bytes | None) -> int | None:
        """A finding an analysis worker reports (the distributed mode): recorded as one of this process's, once."""
        incident = await self.record_finding(stream, finding, snapshot)
        self._device_changed(stream, finding)
        return incident

    def _device_changed(self, stream: StreamKey, finding: Finding) -> None:
        """A device's state changes with these (proctor.player_devices): the pages and the desk are told."""
        if finding.check in (Check.LOST, Check.COVERED, Check.FROZEN, Check.CAMERA_MOVED, Check.SCREEN_CHANGED):
            self.devices.changed(stream.player)

    def on_clip(self, stream: str | StreamKey, finding: Finding, clip: bytes) -> None:
        self._spawn(self._attach_clip(stream_key(stream), finding, clip))

    async def _attach_clip(self, stream: StreamKey, finding: Finding, clip: bytes) -> None:
        key = (stream, finding.check.value, finding.started)
        for _ in range(50):  # the incident is normally stored long before its clip is ready
            if key in self.raised:
                break
            await asyncio.sleep(0.1)
        try:
            await self.attach_clip(stream, finding, clip)
        except Exception:
            log.exception("attaching a clip failed")

    async def attach_clip(self, stream: StreamKey, finding: Finding, clip: bytes) -> int | None:
        """A started finding's clip, attached to the incident it raised (None: it raised none); attached once, however
        often it is told."""
        kind = self._kind(stream, finding)[0]
        at = int(finding.started * 1000)
        incident = self.raised.pop((stream, finding.check.value, finding.started), None)
        with self.writer.engine.connect() as connection:
            incident = incident or recorded_incident(connection, stream.player, kind, at)
            if incident is None or clip_attached(connection, incident):
                return incident
        name, digest = self._save(stream, clip, finding, "webm"), _sha256(clip)
        note = f"{CLIP_PREFIX}{name} ({len(clip) // 1024} kB)"

        def attach(connection: Connection, batch: Batch) -> None:
            if not clip_attached(connection, incident):
                self.service.add_evidence(connection, batch, incident, DETECTOR, name, digest, note, now_ms())

        await self.writer.submit(attach)
        return incident

    async def _sweep_media_forever(self) -> None:
        """Media past their retention are deleted, every hour (:meth:`sweep_media_once`)."""
        while True:
            try:
                removed = await self.sweep_media_once()
                if removed:
                    log.info("retention: deleted %d media files", len(removed))
            except Exception:
                log.exception("the media retention sweep failed")
            await asyncio.sleep(3600)

    async def sweep_media_once(self) -> list[str]:
        """Delete the media past their retention (in a section's folder after its ``evidence_retention_days``,
        elsewhere after the service's setting) that no open incident or appeal holds, each with an audit entry
        (proctor.media_retention); the incident records stay.  The names deleted."""
        loop = asyncio.get_running_loop()
        with self.writer.engine.connect() as connection:
            sections = retention_by_folder(connection)
        folder = Path(self.settings.media_dir)
        expired = await loop.run_in_executor(
            self.executor, expired_media, folder, self.settings.media_retention_days * 86_400, time.time(), sections
        )
        if not expired:
            return []
        deleting = await self.writer.submit(
            lambda connection, batch: retire_media(self.service, connection, batch, expired, now_ms())
        )
        await loop.run_in_executor(self.executor, _unlink_all, folder, deleting)
        return list(deleting)

    def current_game(self, player_ref: str) -> int | None:
        return current_game(self.service, player_ref)

    async def _record(self, stream: StreamKey, finding: Finding, snapshot: bytes | None) -> None:
        try:
            await self.record_finding(stream, finding, snapshot)
        except Exception:
            log.exception("recording a camera finding failed")

    def _kind(self, stream: StreamKey, finding: Finding) -> tuple[str, str]:
        """The incident kind and article of a finding on this device (the screen's loss is its share stopped)."""
        if stream.device is Device.SCREEN and finding.check is Check.LOST:
            return SCREEN_STOPPED, SCREEN_ARTICLE
        return finding.check.value, finding.check.article

    async def record_finding(self, stream: StreamKey, finding: Finding, snapshot: bytes | None) -> int | None:
        """A check's finding as an incident (one that started), or the end noted on its incident; the incident, or None
        when there is nothing to record (the screen with no game in play, an end whose start raised nothing).  The
        same finding told again (an analysis worker's retry; proctor.camera_records) records nothing more."""
        player_ref, device = stream
        kind, article = self._kind(stream, finding)
        at = int(finding.started * 1000)
        if finding.ended is not None:
            return await self._record_end(stream, finding, kind, at)
        with self.writer.engine.connect() as connection:
            if (known := recorded_incident(connection, player_ref, kind, at)) is not None:
                return known
        evidence: dict[str, Any] = {"started": finding.started, "detail": finding.detail}
        game_id = self.current_game(player_ref)
        if device is Device.SCREEN:  # the screen matters only while the game is in play (36.4.4)
            if game_id is None:
                log.info("%s: the screen's %s with no game in play", player_ref, finding.check.value)
                return None
            snapshot = snapshot or self.devices.last_screen(player_ref)
        if device is not Device.FRONT:
            evidence["device"] = device.value
        if snapshot:
            name = self._save(stream, snapshot, finding)
            evidence["media"], evidence["sha256"] = [name], _sha256(snapshot)
        summary = f"{kind}: {finding.detail}"
        if device is not Device.FRONT:
            summary = f"{kind}: {device.title}: {finding.detail}"

        def raise_it(connection: Connection, batch: Batch) -> int:
            if (known := recorded_incident(connection, player_ref, kind, at)) is not None:
                return known
            return self.service.raise_incident(
                connection, batch, game_id, kind, summary, source=DETECTOR_SOURCE, article=article,
                evidence=evidence, player_ref=player_ref, at=at,
            )  # fmt: skip

        incident_id: int = await self.writer.submit(raise_it)
        self.open_incidents[(stream, finding.check.value)] = incident_id
        self.raised[(stream, finding.check.value, finding.started)] = incident_id
        if finding.check is Check.VIRTUAL_BACKGROUND and self._policy(player_ref).auto_pan_check:
            await self._ask_for_pan_check(player_ref, incident_id)
        return incident_id

    async def record_gap(self, stream: StreamKey, from_ms: int, to_ms: int) -> int:
        """A stream no analysis worker checked from ``from_ms`` to ``to_ms`` (its worker died and another took it
        over; proctor.worker): an ``analysis-gap`` incident with its end noted, so that the camera timeline shows
        it; once per stream and start."""
        player_ref, device = stream
        seconds = (to_ms - from_ms) / 1000
        evidence = {"device": device.value, "gap_ms": to_ms - from_ms}
        summary = f"{ANALYSIS_GAP}: the {device.title} went unchecked for {seconds:.0f} s (an analysis worker stopped)"
        game_id = self.current_game(player_ref)

        def record(connection: Connection, batch: Batch) -> int:
            if (known := recorded_incident(connection, player_ref, ANALYSIS_GAP, from_ms)) is not None:
                return known
            return self.service.raise_incident(
                connection, batch, game_id, ANALYSIS_GAP, summary, source=DETECTOR_SOURCE, evidence=evidence,
                player_ref=player_ref, at=from_ms,
            )  # fmt: skip

        incident: int = await self.writer.submit(record)
        note = f"{ENDED_PREFIX}{seconds:.0f} s"

        def end(connection: Connection, batch: Batch) -> None:  # the incident is stored: its end can be noted
            if not ended_noted(connection, incident):
                self.service.act_on_incident(connection, batch, incident, DETECTOR, "note", note, None, None, to_ms)

        await self.writer.submit(end)
        return incident

    async def _record_end(self, stream: StreamKey, finding: Finding, kind: str, at: int) -> int | None:
        assert finding.ended is not None
        incident = self.open_incidents.pop((stream, finding.check.value), None)
        note = f"{ENDED_PREFIX}{finding.ended - finding.started:.0f} s"

        def note_it(connection: Connection, batch: Batch) -> int | None:
            target = incident or recorded_incident(connection, stream.player, kind, at)
            if target is None or ended_noted(connection, target):
                return target
            self.service.act_on_incident(connection, batch, target, DETECTOR, "note", note, None, None, now_ms())
            return target

        result: int | None = await self.writer.submit(note_it)
        return result

    async def _ask_for_pan_check(self, player_ref: str, incident_id: int) -> None:
        """The section asks the service to follow a virtual-background signal with the pan check at once (36.4):
        prompted by the service on the same incident, whose note then carries the verdict."""
        if self.prompting.get(player_ref) is not None:
            return  # another prompt is on the player's page; the arbiter can ask again
        try:
            await self.prompt(SERVICE, player_ref, Prompt.PAN_CHECK, AUTO_PAN_SECONDS, incident_id, by_service=True)
        except ConflictError as error:  # the stream ended meanwhile
            log.info("automatic pan check not prompted: %s", error)

    def _save(self, stream: StreamKey, data: bytes, finding: Finding, extension: str = "jpg") -> str:
        stem = f"{int(finding.started * 1000)}-{finding.check.value}"
        if stream.device is not Device.FRONT:
            stem += f"-{stream.device.value}"
        return self._write_media(stream.player, data, stem, extension, stream.device)

    def _write_media(self, player_ref: str, data: bytes, stem: str, extension: str,
                     device: Device = Device.FRONT) -> str:  # fmt: skip
        """Write a media file in the player's section's folder (the screen's in its ``screen`` subfolder; or the
        media folder itself); its name relative to the media folder (``event/section/stem-xxxxxxxx.jpg``, or
        ``stem-xxxxxxxx.jpg``)."""
        where = self._policy(player_ref).folder_of(device)
        folder = Path(self.settings.media_dir) / where
        folder.mkdir(parents=True, exist_ok=True)
        file = f"{stem}-{secrets.token_hex(4)}.{extension}"
        (folder / file).write_bytes(data)
        return f"{where}/{file}" if where else file

    # --- The arbiters' controls -------------------------------------------------------------------------------------

    def require_known(self, player_ref: str) -> None:
        """NotFoundError unless the player was ever issued a stream token (only then is there a page to talk to)."""
        with self.writer.engine.connect() as connection:
            known = connection.execute(
                select(col(StreamToken.id)).where(col(StreamToken.player_ref) == player_ref).limit(1)
            ).first()
        if known is None:
            raise NotFoundError(f"no player {player_ref!r} with a camera: issue their stream token first")

    async def _record_control(self, action: CameraControl, at: int) -> tuple[int, int | None]:
        result: tuple[int, int | None] = await self.writer.submit(
            lambda connection, batch: action.record(self.service, connection, batch, at)
        )
        return result

    async def record_action(
        self, who: Identity, player_ref: str, kind: str, detail: dict[str, Any], audited: dict[str, Any], at: int
    ) -> int:
        """An arbiter's action on a player's device with no incident (the side camera's approved view), recorded and
        audited as every camera action is; its row's id."""
        row_id, _ = await self._record_control(CameraControl(who, player_ref, kind, None, detail, audited, ""), at)
        return row_id

    async def send_message(self, who: Identity, player_ref: str, text: str, incident: int | None) -> dict[str, Any]:
        """A message shown on the player's page."""
        self.require_known(player_ref)
        at = now_ms()
        action = CameraControl(who, player_ref, "message", incident, {"text": text},
                               {"text_sha256": _sha256(text.encode())}, f"message to the player: {text}")  # fmt: skip
        row_id, _ = await self._record_control(action, at)
        self.tell(player_ref, "message", {"id": row_id, "text": text, "at": at})
        return {"id": row_id, "player": player_ref, "incident": incident, "at": at}

    def capture(self, player_ref: str, seconds: float, stills: bool = False,
                device: Device = Device.FRONT) -> Awaitable[CaptureResult]:  # fmt: skip
        """Record the player's ``device`` for ``seconds`` from now where its stream is analysed: this process's
        ingest, or (the distributed mode) the worker holding it, asked at once.  The awaitable gives its analysed
        frames (their stills if asked for) and their clip once the window is over.  LookupError when the player
        has no live stream of it."""
        if self.ingest is not None and self.ingest.live(player_ref, device) is not None:
            return self.ingest.capture(player_ref, seconds, stills=stills, device=device)
        if self.rooms is not None and self.streams.live(player_ref, device) is not None:
            return asyncio.ensure_future(self.rooms.capture(player_ref, device, seconds, stills))
        raise LookupError(f"no live stream for {player_ref!r}")

    def no_live_stream(self, player_ref: str) -> str | None:
        """Why the player's camera cannot be prompted now (None when it can)."""
        if self.streams.live(player_ref) is not None:
            return None
        with self.writer.engine.connect() as connection:
            issued = connection.execute(
                select(col(StreamToken.id)).where(col(StreamToken.player_ref) == player_ref).limit(1)
            ).first()
        return "no live camera stream" if issued is not None else "no live camera stream: no stream link was issued"

    async def prompt(
        self, who: Identity, player_ref: str, prompt: Prompt, seconds: int, incident: int | None,
        by_service: bool = False,
    ) -> dict[str, Any]:  # fmt: skip
        """Show the prompt on the player's page and record the stream for its window; the clip (and, for the ear
        check, two stills and their ear crops) become evidence on the incident: the one given, or a new one of the
        prompt's kind."""
        self.require_known(player_ref)
        if self.streams.live(player_ref) is None:
            raise ConflictError(f"player {player_ref!r} has no live camera stream: ask them to open their link first")
        at = now_ms()
        detail = {"prompt": prompt.value, "article": prompt.article, "seconds": seconds}
        new_incident = None if incident is not None else NewIncident(
            self.current_game(player_ref), prompt.value,
            f"{prompt.title} ({prompt.article}): the arbiter asked for it ({seconds} s)", prompt.article,
        )  # fmt: skip
        by = "the service" if by_service else "the arbiter"
        action = CameraControl(who, player_ref, "prompt", incident, detail, detail,
                               f"{prompt.title} ({prompt.article}) prompted by {by}: {seconds} s", new_incident,
                               by_service)  # fmt: skip
        row_id, incident_id = await self._record_control(action, at)
        assert incident_id is not None  # the one named, or the one raised
        if prompt is Prompt.EAR_CHECK and self.ear_checks is not None:
            self.ear_checks.checked(player_ref, at)
        until = self._show_and_record(who, player_ref, prompt, row_id, incident_id, seconds, None)
        return {"id": row_id, "player": player_ref, "kind": prompt.value, "incident": incident_id,
                "seconds": seconds, "until": until}  # fmt: skip

    async def scheduled_ear_check(self, check: DueCheck, seconds: int = EAR_CHECK_SECONDS) -> dict[str, Any]:
        """An ear check the service prompts itself, as the section's policy asks (36.2; proctor/ear_checks.py): shown
        and recorded like an arbiter's, audited with the service as its actor.  No incident is raised now: the
        recording becomes one ``ear-check`` incident when its window ends.  ConflictError without a live stream."""
        if self.streams.live(check.player_ref) is None:
            raise ConflictError(f"player {check.player_ref!r} has no live camera stream")
        at = now_ms()
        detail = {"prompt": Prompt.EAR_CHECK.value, "article": EAR_ARTICLE, "seconds": seconds,
                  "scheduled": check.occasion.value, "due": check.due_ms, "game": check.game_id}  # fmt: skip
        action = CameraControl(SERVICE, check.player_ref, "prompt", None, detail, detail, "", by_service=True)
        row_id, _ = await self._record_control(action, at)
        until = self._show_and_record(SERVICE, check.player_ref, Prompt.EAR_CHECK, row_id, None, seconds, check)
        return {"id": row_id, "player": check.player_ref, "kind": Prompt.EAR_CHECK.value, "game": check.game_id,
                "scheduled": check.occasion.value, "seconds": seconds, "until": until}  # fmt: skip

    async def skip_ear_check(self, check: DueCheck, reason: str, at: int) -> int:
        """A scheduled ear check that could not be made (the player has no live stream, the game is not in play),
        recorded with why: a ``camera_action`` of kind ``skip``, audited as ``camera.skip``."""
        detail = {"prompt": Prompt.EAR_CHECK.value, "article": EAR_ARTICLE, "scheduled": check.occasion.value,
                  "due": check.due_ms, "game": check.game_id, "reason": reason}  # fmt: skip
        action = CameraControl(SERVICE, check.player_ref, "skip", None, detail, detail, "", by_service=True)
        row_id, _ = await self._record_control(action, at)
        log.info("scheduled ear check of %s skipped: %s", check.player_ref, reason)
        return row_id

    def _show_and_record(
        self, who: Identity, player_ref: str, prompt: Prompt, row_id: int, incident: int | None, seconds: int,
        scheduled: DueCheck | None,
    ) -> int:  # fmt: skip
        """Show the stored prompt on the player's page and record its window; when it ends, :meth:`_keep_capture`.
        Until when it runs."""
        until = now_ms() + seconds * 1000
        shown = {"id": row_id, "kind": prompt.value, "title": prompt.title, "article": prompt.article,
                 "instruction": prompt.instruction, "seconds": seconds, "until": until}  # fmt: skip
        try:
            recording = self.capture(player_ref, seconds, stills=prompt.keeps_stills)
        except LookupError:  # the stream dropped while the prompt was being stored
            recording = None
        self.prompting[player_ref] = shown
        self.tell(player_ref, "prompt", {**shown, "remaining_ms": seconds * 1000})
        task = asyncio.get_running_loop().create_task(
            self._keep_capture(who, player_ref, prompt, row_id, incident, seconds, recording, scheduled)
        )
        self.captures.add(task)
        task.add_done_callback(self.captures.discard)
        return until

    def _pan_verdict(self, player_ref: str, prompt: Prompt, result: CaptureResult) -> PanVerdict | None:
        """The pan check's verdict (36.4): did the background move with the camera?  (With the player's thresholds.)"""
        seen = [frame.observation for frame in result.frames if frame.observation is not None]
        if prompt is not Prompt.PAN_CHECK or not seen:
            return None
        return judge_pan(seen, self._policy(player_ref).stream.thresholds)

    def _keep_stills(
        self, player_ref: str, stem: str, result: CaptureResult, evidence: list[tuple[str, str, str]]
    ) -> list[dict[str, Any]]:
        """The ear check's stills (the head turned furthest left and right) and the ear crops from them (36.2),
        written as media; each file is added to ``evidence``."""
        stills: list[dict[str, Any]] = []
        for side, frame in zip(("left", "right"), turned_furthest(result.frames) or (), strict=False):
            if frame.still is None:
                continue
            name, digest = self._write_media(player_ref, frame.still, f"{stem}-{side}", "jpg"), _sha256(frame.still)
            centre, turn = face_centre(frame) or 0.0, face_turn(frame)
            how = f"turned {turn:+.2f} eye distances" if turn is not None else f"its centre at x={centre:.0f} px"
            evidence.append((name, digest, f"still: the head turned furthest {side} in the picture ({how})"))
            stills.append({"side": side, "media": name, "sha256": digest, "centre_x": centre, "turn": turn})
            ear = ear_crop(frame)
            if ear is not None:
                ear_name, ear_digest = self._write_media(player_ref, ear, f"{stem}-{side}-ear", "jpg"), _sha256(ear)
                evidence.append(
                    (ear_name, ear_digest, f"ear crop from the {side} still (36.2): the side away from the nose")
                )
                stills[-1]["ear"] = {"media": ear_name, "sha256": ear_digest}
        return stills

    def _judge_capture(
        self, player_ref: str, prompt: Prompt, result: CaptureResult, stills: list[dict[str, Any]], seconds: int,
        scheduled: DueCheck | None, detail: dict[str, Any], audited: dict[str, Any],
    ) -> str:  # fmt: skip
        """What the recording says, for the arbiter (the note on the incident, or a scheduled ear check's summary):
        the pan check's verdict, or whether the ear check's stills show both ears; added to ``detail`` and
        ``audited``."""
        verdict = self._pan_verdict(player_ref, prompt, result)
        if verdict is not None:
            detail["pan"] = {"outcome": verdict.outcome.value, "face_travel": round(verdict.face_travel, 3),
                             "background_change": round(verdict.background_change, 2)}  # fmt: skip
            audited["pan"] = verdict.outcome.value
        if prompt.keeps_stills:
            problem = ear_view_problem(result.frames, seconds)
            detail["stills"], detail["ear_view"] = stills, problem or "usable"
            audited["ear_view"] = problem or "usable"
            return ear_check_text(problem, sum("ear" in still for still in stills), scheduled)
        if not result.frames:
            return f"{prompt.title} ({prompt.article}): no picture arrived in the {seconds} s window, nothing recorded"
        return f"{prompt.title} (36.4): {verdict.detail}" if verdict is not None else ""

    async def _keep_capture(
        self, who: Identity, player_ref: str, prompt: Prompt, row_id: int, incident: int | None, seconds: int,
        recording: Awaitable[CaptureResult] | None, scheduled: DueCheck | None = None,
    ) -> None:  # fmt: skip
        """The prompt's window is over: keep its clip (and the ear check's stills and crops) and record them, as
        evidence on the arbiter's incident, or, for a scheduled ear check, as one new ``ear-check`` incident."""
        try:
            result = await recording if recording is not None else CaptureResult((), b"")
        except Exception:
            log.exception("recording a prompt failed")
            result = CaptureResult((), b"")
        finally:
            if self.prompting.get(player_ref, {}).get("id") == row_id:
                del self.prompting[player_ref]
        stem = f"{now_ms()}-{prompt.value}"
        evidence: list[tuple[str, str, str]] = []  # (file, SHA-256, note) of each file kept
        if result.clip:
            name = self._write_media(player_ref, result.clip, stem, "webm")
            evidence.append((name, _sha256(result.clip), f"clip of the {prompt.title.lower()}, {len(result.frames)} "
                             f"frames over {seconds} s ({len(result.clip) // 1024} kB)"))  # fmt: skip
        stills = self._keep_stills(player_ref, stem, result, evidence) if prompt.keeps_stills else []
        detail: dict[str, Any] = {"prompt": row_id, "frames": len(result.frames)}
        if result.clip:
            detail["clip"] = {"media": evidence[0][0], "sha256": evidence[0][1]}
        audited = {"prompt": row_id, "frames": len(result.frames), "clip_sha256": detail.get("clip", {}).get("sha256"),
                   "stills_sha256": [still["sha256"] for still in stills]}  # fmt: skip
        note = self._judge_capture(player_ref, prompt, result, stills, seconds, scheduled, detail, audited)
        if scheduled is not None:  # one item for the arbiter: stills and ear crops first, then the clip
            files = [item for item in evidence if not item[0].endswith(".webm")]
            files += [item for item in evidence if item[0].endswith(".webm")]
            raised = NewIncident(scheduled.game_id, Prompt.EAR_CHECK.value, note, EAR_ARTICLE, {
                "media": [name for name, _, _ in files], "sha256": [digest for _, digest, _ in files],
                "notes": [text for _, _, text in files], "scheduled": scheduled.occasion.value,
                "due": scheduled.due_ms,
            })  # fmt: skip

            def raise_one(connection: Connection, batch: Batch) -> Any:
                action = CameraControl(SERVICE, player_ref, "capture", None, detail, audited, "", raised, True)
                return action.record(self.service, connection, batch, now_ms())

            job = raise_one
        else:
            assert incident is not None

            def keep(connection: Connection, batch: Batch) -> Any:
                for name, digest, text in evidence:
                    self.service.add_evidence(connection, batch, incident, who, name, digest, text, now_ms())
                action = CameraControl(
                    who, player_ref, "capture", incident, detail, audited, note, None, who is SERVICE
                )
                return action.record(self.service, connection, batch, now_ms())

            job = keep
        try:
            await self.writer.submit(job)
        except Exception:
            log.exception("keeping a prompt's recording failed")

    async def grant_leave(
        self, who: Identity, player_ref: str, minutes: int, reason: str, incident: int | None
    ) -> dict[str, Any]:
        """Leave of the competition area (36.4.1) until now + ``minutes``: the left-area check stays quiet until then,
        on this stream and on any the player opens later (and after a restart)."""
        self.require_known(player_ref)
        at = now_ms()
        action = self._leave(who, player_ref, minutes, reason, incident, at)
        row_id, _ = await self._record_control(action, at)
        return self._left(player_ref, row_id, incident, at + minutes * 60_000, minutes)

    async def grant_leave_on_case(self, who: Identity, case_id: int, minutes: int, reason: str) -> dict[str, Any]:
        """A leave request's case answered: leave granted (as :meth:`grant_leave`, noted on the request) and the case
        closed as ``granted``, in one transaction; the player's page is told."""
        at = now_ms()

        def grant(connection: Connection, batch: Batch) -> tuple[str, int, int]:
            casebook = self.service.casebook
            head = casebook.open_case(connection, batch, case_id, who, kind=LEAVE_REQUEST)
            player_ref = head.player_ref
            if player_ref is None:
                raise BadRequestError(f"case {case_id} names no player")
            incident = casebook.case_incident(connection, head)
            row_id, _ = self._leave(who, player_ref, minutes, reason, incident, at).record(
                self.service, connection, batch, at
            )
            detail = {"minutes": minutes, "until": at + minutes * 60_000, "camera_action": row_id, "incident": incident}
            casebook.close(batch, head, who, "grant-leave", reason, detail, at)
            return player_ref, row_id, incident

        player_ref, row_id, incident = await self.writer.submit(grant)
        return {"case": case_id, "action": "grant-leave", "status": "granted",
                **self._left(player_ref, row_id, incident, at + minutes * 60_000, minutes)}  # fmt: skip

    @staticmethod
    def _leave(
        who: Identity, player_ref: str, minutes: int, reason: str, incident: int | None, at: int
    ) -> CameraControl:
        until = at + minutes * 60_000
        clock = time.strftime("%H:%M", time.gmtime(until / 1000))
        return CameraControl(
            who, player_ref, "leave", incident, {"minutes": minutes, "until": until, "reason": reason},
            {"minutes": minutes, "until_ms": until, "reason_sha256": _sha256(reason.encode())},
            f"leave of the area granted for {minutes} min, until {clock} UTC (36.4.1): {reason}",
        )  # fmt: skip

    def _left(self, player_ref: str, row_id: int, incident: int | None, until: int, minutes: int) -> dict[str, Any]:
        """A leave granted and stored: the left-area check told, the player's pages too."""
        if self.ingest is not None:
            self.ingest.grant_leave(player_ref, until / 1000)
        if self.rooms is not None:
            self.rooms.grant_leave(player_ref, until / 1000)
        self.tell(player_ref, "leave", {"until": until, "minutes": minutes})
        self.tell_leave_answer(player_ref)
        return {"id": row_id, "player": player_ref, "incident": incident, "until": until}

    async def approve(
        self, who: Identity, player_ref: str, approved: bool, note: str, incident: int | None
    ) -> dict[str, Any]:
        """The arbiter's approval of the player's setup after the pre-game environment check (36.4), with whether the
        player's camera was streaming then (``streaming``): an approval given while it streams, after the room scan and
        the ear check, is the player's check-in for their next round (24.1.1, proctor.check_ins)."""
        self.require_known(player_ref)
        at = now_ms()
        streaming = self.streams.live(player_ref) is not None
        verdict = "setup approved" if approved else "setup not approved"
        action = CameraControl(who, player_ref, "approval", incident,
                               {"approved": approved, "note": note, "streaming": streaming},
                               {"approved": approved, "note_sha256": _sha256(note.encode()), "streaming": streaming},
                               f"{verdict}: {note}" if note else verdict)  # fmt: skip
        row_id, _ = await self._record_control(action, at)
        self.tell(player_ref, "approval", {"approved": approved, "note": note, "at": at})
        return {"id": row_id, "player": player_ref, "approved": approved, "incident": incident, "at": at,
                "streaming": streaming}  # fmt: skip

    def status(self, player_ref: str) -> dict[str, Any]:
        """The player's camera as the arbiters see it."""
        self.require_known(player_ref)
        session = self.streams.last(player_ref)
        live = self.streams.live(player_ref) is not None
        with self.writer.engine.connect() as connection:
            history = CameraHistory.read(connection, player_ref)
        since = None if session is None else session.opened_at if live else session.closed_at
        policy = (self.policies.get(player_ref) if live else None) or self.policy_for(player_ref)
        now = now_ms()
        return {
            "player": player_ref,
            "connected": live,
            "since": None if since is None else int(since * 1000),
            "frames": {
                "received": session.frames_received if session else 0,
                "analysed": session.frames_analysed if session else 0,
                "dropped": session.frames_dropped if session else 0,
            },
            "findings": [
                {"check": f.check.value, "article": f.check.article, "since": int(f.started * 1000), "detail": f.detail}
                for f in (session.active() if session else [])
            ],
            "leave_granted_until": history.leave_until(now),
            "approval": history.approval(),
            "prompts": history.prompts(),
            "skipped_checks": history.skipped(),
            "messages": history.messages(),
            "analysis": self._analysis(player_ref, live),
            "checks": self.checks_note,
            "policy": policy.describe(),
            "devices": self.devices.states(player_ref, policy),
        }

    def _analysis(self, player_ref: str, live: bool) -> dict[str, Any]:
        """The analysis rate of the player's live stream against its set rate; ``degraded`` when the service cannot
        keep it (the findings may then come late: the arbiters see "analysis-degraded")."""
        session = self.streams.live(player_ref) if live else None
        target = self.settings.analysis_rate
        if session is None:
            return {"rate": None, "target": target, "degraded": False, "status": None}
        achieved = session.rate_achieved(time.time())
        degraded = session.degraded
        return {"rate": None if achieved is None else round(achieved, 2), "target": target,
                "degraded": degraded, "status": "analysis-degraded" if degraded else "ok"}  # fmt: skip

    def stream_snapshots(self, device: Device = Device.FRONT) -> dict[str, StreamSnapshot]:
        """The camera roster's view of every stream of this device this process has seen, by player: up or ended,
        since when, frozen, moved from its approved view, analysis-degraded (on the event loop, where the ingest
        changes them)."""
        snapshots: dict[str, StreamSnapshot] = {}
        for ref in self.streams.players(device):
            session = self.streams.last(ref, device)
            if session is None:
                continue
            live = self.streams.live(ref, device) is not None
            frozen = any(f.check is Check.FROZEN for f in session.active())
            moved = any(f.check is Check.CAMERA_MOVED for f in session.active())
            degraded = live and is_degraded(session)
            closed = None if session.closed_at is None else int(session.closed_at * 1000)
            snapshots[ref] = StreamSnapshot(live, int(session.opened_at * 1000), closed, live and frozen, degraded,
                                            live and moved)  # fmt: skip
        return snapshots

    def microphone_states(self) -> dict[str, dict[str, Any]]:
        """The camera roster's view of every microphone this process (or a worker) listens to, by player
        (proctor.microphone_states): each front stream seen, with what its microphone check holds."""
        return {ref: self.microphone_state(ref) for ref in self.streams.players(Device.FRONT)}

    def microphone_state(self, player_ref: str) -> dict[str, Any]:
        """The player's microphone: ``connected``, ``muted``, ``lost`` or ``not-connected``, since when."""
        front = snapshot_of(self.streams.last(player_ref), self.streams.live(player_ref) is not None)
        if front is None:
            return microphone_state(False, None, None)
        return microphone_state(front.live, front.since_ms, self.streams.heard(player_ref))

    def thumbnail(self, player_ref: str, device: Device = Device.FRONT) -> bytes | None:
        """The last analysed frame of the player's live stream of this device as a small JPEG; None without one."""
        return self.streams.thumbnail(player_ref, device)

    # --- The player's page ------------------------------------------------------------------------------------------

    def page_state(self, player_ref: str) -> dict[str, Any]:
        """What the page shows when it (re)connects: who and where the player plays (proctor.player_view), their latest
        leave request and its answer, leave granted, approval, recent messages, the running prompt, and what it should
        send (the analysis' rate, or the live view's while an arbiter watches: proctor.live_views)."""
        with self.writer.engine.connect() as connection:
            history = CameraHistory.read(connection, player_ref)
            place, request = player_place(connection, player_ref), leave_answer(connection, player_ref)
        now = now_ms()
        running = self.prompting.get(player_ref)
        approval = history.approval()
        talk = self.talks.of_player(player_ref) if self.talks is not None else None
        return {
            "player": place,
            "request": request,
            "leave_until": history.leave_until(now),
            "approval": None if approval is None else {k: approval[k] for k in ("approved", "note", "at")},
            "messages": [{k: m[k] for k in ("id", "text", "at")} for m in history.messages()],
            "prompt": None if running is None or running["until"] <= now else
            {**running, "remaining_ms": running["until"] - now},
            "video": self.video_wanted.get(player_ref, sender_video(self.settings, watched=False)),
            "devices": self.devices.states(player_ref),
            "talk": talk is not None,
            "talk_feed": None if talk is None else talk.feed,  # the distributed mode: the page subscribes to it
        }  # fmt: skip

    def tell_leave_answers(self, incidents: Sequence[int] = (), cases: Sequence[int] = ()) -> None:
        """The arbiter acted on these incidents or cases: each open page whose leave request (36.4.1) is among them
        gets its answer (``request``: granted, refused with the reason, or still waiting)."""
        if not self.pages:
            return
        with self.writer.engine.connect() as connection:
            for player_ref in leave_requesters(connection, list(incidents), list(cases)) & set(self.pages):
                self.tell(player_ref, "request", {"request": leave_answer(connection, player_ref)})

    def tell_leave_answer(self, player_ref: str) -> None:
        """The player's latest leave request and its answer, to their open pages."""
        if player_ref not in self.pages:
            return
        with self.writer.engine.connect() as connection:
            self.tell(player_ref, "request", {"request": leave_answer(connection, player_ref)})

    def tell(self, player_ref: str, kind: str, payload: dict[str, Any]) -> None:
        """An event for this player's open pages only; a page that does not read loses its oldest events."""
        self.page_events += 1
        frame = f"id: {self.page_events}\nevent: {kind}\ndata: {json.dumps(payload, separators=(',', ':'))}\n\n"
        for queue in self.pages.get(player_ref, ()):
            if queue.full():
                queue.get_nowait()
            queue.put_nowait(frame)

    async def listen(self, player_ref: str, heartbeat_s: float = 15.0) -> AsyncIterator[str]:
        """Server-sent-event frames for one player's page: its state first, then each event as it happens, and a
        comment line every ``heartbeat_s`` so that a closed page is noticed."""
        queue: asyncio.Queue[str] = asyncio.Queue(100)
        self.pages.setdefault(player_ref, set()).add(queue)
        try:
            state = json.dumps(self.page_state(player_ref), separators=(",", ":"))
            yield f"event: state\ndata: {state}\n\n"
            while True:
                try:
                    yield await asyncio.wait_for(queue.get(), heartbeat_s)
                except TimeoutError:
                    yield ": still here\n\n"
        finally:
            listeners = self.pages.get(player_ref, set())
            listeners.discard(queue)
            if not listeners:
                self.pages.pop(player_ref, None)


@dataclass(frozen=True, slots=True)
class NewIncident:
    """The incident a prompt raises when the arbiter names none."""

    game_id: int | None
    kind: str
    summary: str
    article: str
    evidence: dict[str, Any] = field(default_factory=dict)
    """Its evidence (a scheduled ear check's stills and crops), with the action's audited references."""


@dataclass(frozen=True, slots=True)
class CameraControl:
    """One arbiter action on a player's camera, as it is recorded: a ``camera_action`` row, an audit entry naming it
    (``audited``: references and hashes, not the free text), and a note on the incident it concerns."""

    who: Identity
    player_ref: str
    kind: str
    incident: int | None
    detail: dict[str, Any]
    audited: dict[str, Any]
    note: str
    """The note on the incident (none when empty)."""
    new_incident: NewIncident | None = None
    by_service: bool = False
    """The service's own action (a scheduled ear check, 36.2): actor, role and incident source ``service``."""

    @property
    def actor(self) -> str:
        return "service" if self.by_service else self.who.label

    def record(self, service: Service, connection: Connection, batch: Batch, at: int) -> tuple[int, int | None]:
        """Checks first, then the staged incident and its note, and the row itself last: a refused action (an
        unknown incident, one about another player, a player outside an assigned arbiter's sections) writes
        nothing.  The row's id and the incident's."""
        if not self.by_service:
            game_id = self.new_incident.game_id if self.new_incident is not None else None
            if game_id is None:
                game_id = current_game(service, self.player_ref)
            what = f"player {self.player_ref}'s camera"
            require_assigned_to_player(connection, self.who, self.player_ref, game_id, what)
        incident = self.incident
        if incident is not None:
            row = connection.execute(
                select(col(Incident.player_ref)).where(col(Incident.id) == incident)
            ).first()  # fmt: skip
            if row is None:
                raise NotFoundError(f"no incident {incident}")
            if row.player_ref not in (None, self.player_ref):
                raise BadRequestError(f"incident {incident} is about another player")
            if self.note:
                service.act_on_incident(connection, batch, incident, self.who, "note", self.note, None, None, at)
        elif self.new_incident is not None:
            new = self.new_incident
            source = "service" if self.by_service else f"arbiter:{self.who.name}"
            incident = service.raise_incident(
                connection, batch, new.game_id, new.kind, new.summary, source=source, article=new.article,
                evidence={**self.audited, **new.evidence, "reported_by": self.actor}, player_ref=self.player_ref,
                at=at,
            )  # fmt: skip
        row_id = connection.execute(
            insert(CameraAction).values(
                player_ref=self.player_ref, kind=self.kind, arbiter=self.who.name,
                role="service" if self.by_service else self.who.role.value, incident_id=incident, detail=self.detail,
                created_ms=at,
            ).returning(col(CameraAction.id))
        ).scalar_one()  # fmt: skip
        assert row_id is not None
        service.seal(connection, batch, "camera_action", row_id)
        service.audit(connection, batch, at, self.actor, f"camera.{self.kind}", f"camera-action:{row_id}",
                      {"incident": incident, **self.audited})  # fmt: skip
        return row_id, incident


@dataclass(frozen=True, slots=True)
class CameraHistory:
    """A player's camera actions as stored, newest last."""

    rows: tuple[Any, ...]

    @classmethod
    def read(cls, connection: Connection, player_ref: str) -> CameraHistory:
        rows = connection.execute(
            select(CameraAction).where(col(CameraAction.player_ref) == player_ref).order_by(col(CameraAction.id))
        ).all()
        return cls(tuple(rows))

    def _of(self, kind: str) -> list[Any]:
        return [row for row in self.rows if row.kind == kind]

    def leave_until(self, now: int) -> int | None:
        """The latest leave grant's end, while it lasts."""
        grants = self._of("leave")
        until = int(grants[-1].detail["until"]) if grants else None
        return until if until is not None and until > now else None

    def approval(self) -> dict[str, Any] | None:
        rows = self._of("approval")
        if not rows:
            return None
        row = rows[-1]
        return {"approved": row.detail["approved"], "note": row.detail["note"], "by": row.arbiter, "role": row.role,
                "at": row.created_ms, "incident": row.incident_id}  # fmt: skip

    def messages(self) -> list[dict[str, Any]]:
        return [{"id": row.id, "text": row.detail["text"], "by": row.arbiter, "at": row.created_ms,
                 "incident": row.incident_id} for row in self._of("message")[-RECENT:]]  # fmt: skip

    def prompts(self) -> list[dict[str, Any]]:
        """The last prompts, each with what its window recorded (None while it is being recorded)."""
        captures = {row.detail["prompt"]: row for row in self._of("capture")}
        listed = []
        for row in self._of("prompt")[-RECENT:]:
            capture = captures.get(row.id)
            listed.append({
                "id": row.id, "kind": row.detail["prompt"], "article": row.detail["article"],
                "seconds": row.detail["seconds"], "by": row.arbiter, "at": row.created_ms,
                "incident": row.incident_id if row.incident_id is not None or capture is None else capture.incident_id,
                "scheduled": row.detail.get("scheduled"),
                "recorded": None if capture is None else {
                    k: capture.detail[k] for k in ("frames", "clip", "stills", "pan", "ear_view") if k in capture.detail
                },
            })  # fmt: skip
        return listed

    def skipped(self) -> list[dict[str, Any]]:
        """The last scheduled ear checks that could not be made (36.2), with why."""
        return [{"id": row.id, "kind": row.detail["prompt"], "article": row.detail["article"],
                 "scheduled": row.detail["scheduled"], "due": row.detail["due"], "game": row.detail["game"],
                 "reason": row.detail["reason"], "at": row.created_ms}
                for row in self._of("skip")[-RECENT:]]  # fmt: skip


def leave_granted(connection: Connection, now: int) -> dict[str, int]:
    """The leave grants still running, by player (their latest grant's end)."""
    latest: dict[str, int] = {}
    rows = connection.execute(
        select(col(CameraAction.player_ref), col(CameraAction.detail))
        .where(col(CameraAction.kind) == "leave")
        .order_by(col(CameraAction.id))
    )
    for player_ref, detail in rows:
        latest[player_ref] = int(detail["until"])
    return {player: until for player, until in latest.items() if until > now}


def _unlink_all(folder: Path, names: Sequence[str]) -> None:
    for name in names:
        (folder / name).unlink(missing_ok=True)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def check_offer(sdp: str, kind: str = "video") -> None:
    """ValueError unless the offer is an SDP with a ``kind`` m-line (a video one: what the player's page sends; an
    audio one: what the desk's talk sends): aiortc would answer anything else with an empty answer and a stream that
    never gets a frame."""
    try:
        media = SessionDescription.parse(sdp).media
    except Exception as error:  # aiortc's parser raises what it meets (ValueError, IndexError, KeyError…)
        raise ValueError(f"the offer cannot be used: not an SDP ({error})") from None
    if not any(m.kind == kind and m.port != 0 for m in media):
        article = "an" if kind == "audio" else "a"
        raise ValueError(f"the offer cannot be used: it has no {kind} (an SDP with {article} {kind} m-line is needed)")


def require_player(connection: Connection, token: str, now: int) -> str:
    """The token's player; NotFoundError for an unknown or revoked token, ExpiredError (410) for an expired one."""
    try:
        return player_for_token(connection, token, now)
    except UnauthorizedError:
        raise NotFoundError("unknown stream token") from None
