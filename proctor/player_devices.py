"""A player's devices in the service (issue 15): each device's state for the player's page, the desk and the
roster; the side camera's approved view (an arbiter's reference still, which the service then compares the camera's
picture with: video.reference_view); and the shared screen's own rules: a share the player stopped, as the page
reports it, is a ``screen-share-stopped`` case at once (36.4.4), a window or a tab is refused, and a still of the
screen is kept at a low rate as evidence, in the section's ``screen`` folder with its own retention.

The states are folded by :func:`device_state` (pure); :class:`PlayerDevices` is the thin part that reads the ingest
and the database, writes media and tells the player's page (``devices`` on its event stream).
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from sqlalchemy import Connection, select
from sqlmodel import col

from proctor.accounts import Identity
from proctor.errors import ConflictError, NotFoundError
from proctor.models import CameraAction
from proctor.stream_registry import stream_name
from proctor.stream_views import SeenStream, degraded
from proctor.wall_clock import now_ms
from video.checks import Check
from video.devices import Device, StreamKey
from video.reference_view import ReferenceView

if TYPE_CHECKING:
    from proctor.camera import Camera, CameraPolicy

log = logging.getLogger("proctor.devices")

REFERENCE_SECONDS: Final = 2
"""The side camera's reference still is the last frame of a window this long (the arbiter looked at the live view
and approves what it shows)."""
REFERENCE_ARTICLE: Final = "36.4"
STOPPED_BY_PLAYER: Final = "the player stopped sharing the screen"


@dataclass(frozen=True, slots=True)
class DeviceSnapshot:
    """One device's stream as this process holds it (times in ms)."""

    live: bool
    since_ms: int | None
    checks: frozenset[str] = frozenset()
    """The checks whose findings hold now."""
    degraded: bool = False


def device_state(device: Device, stream: DeviceSnapshot | None, refused: tuple[str, int] | None) -> dict[str, Any]:
    """A device's state in words the page and the desk share: ``connected``, ``frozen``, ``covered``, ``moved``
    (the side camera's view no longer the approved one), ``changed`` (the screen no longer shows the approved board),
    ``analysis-degraded``, ``lost`` (a camera's stream ended)
    or ``stopped`` (the screen's), ``refused`` (a window or tab offered for the screen, with what was offered), or
    ``not-connected``; and since when."""
    if refused is not None and (stream is None or not stream.live or (stream.since_ms or 0) < refused[1]):
        return {"state": "refused", "since": refused[1], "surface": refused[0]}
    if stream is None:
        return {"state": "not-connected", "since": None}
    if not stream.live:
        return {"state": "stopped" if device is Device.SCREEN else "lost", "since": stream.since_ms}
    states = ((Check.COVERED, "covered"), (Check.FROZEN, "frozen"), (Check.CAMERA_MOVED, "moved"),
              (Check.SCREEN_CHANGED, "changed"))  # fmt: skip
    for check, state in states:
        if check.value in stream.checks:
            return {"state": state, "since": stream.since_ms}
    return {"state": "analysis-degraded" if stream.degraded else "connected", "since": stream.since_ms}


def snapshot_of(session: SeenStream | None, live: bool) -> DeviceSnapshot | None:
    if session is None:
        return None
    since = session.opened_at if live else session.closed_at
    return DeviceSnapshot(live, None if since is None else int(since * 1000),
                          frozenset(f.check.value for f in session.active()),
                          live and degraded(session))  # fmt: skip


class PlayerDevices:
    """The players' devices beside the front camera, in this process (proctor.camera.Camera composes it)."""

    def __init__(self, camera: Camera) -> None:
        self.camera = camera
        self.refusals: dict[StreamKey, tuple[str, int]] = {}
        """The last screen share refused per player (what the browser said was shared, when), until one connects."""
        self.screens: dict[str, bytes] = {}
        """Each player's last screen still (the snapshot of a ``screen-share-stopped`` case)."""

    # --- States -------------------------------------------------------------------------------------------------

    def states(self, player_ref: str, policy: CameraPolicy | None = None) -> dict[str, dict[str, Any]]:
        """Each device the player's section requires, with its state (:func:`device_state`); the side camera's
        with its approved view, when one was given."""
        camera = self.camera
        policy = policy or camera._policy(player_ref)
        ingest = camera.ingest
        found: dict[str, dict[str, Any]] = {}
        for device in policy.devices:
            live = camera.streams.live(player_ref, device) is not None
            session = camera.streams.last(player_ref, device)
            state = device_state(device, snapshot_of(session, live), self.refusals.get(StreamKey(player_ref, device)))
            if device is not Device.FRONT:  # the side camera's setup, or the screen's board, approved
                state["reference"] = ingest is not None and StreamKey(player_ref, device) in ingest.references
            found[device.value] = state
        if policy.microphone:  # the microphone, on the front camera's stream (proctor.microphone_states)
            found["microphone"] = camera.microphone_state(player_ref)
        return found

    def required(self, policy: CameraPolicy) -> list[str]:
        """What the player's section requires: its devices, and the microphone if it listens to it."""
        return [device.value for device in policy.devices] + (["microphone"] if policy.microphone else [])

    def changed(self, player_ref: str) -> None:
        """Tell the player's open pages their devices' states (``devices``), where the section requires more than
        the front camera (its page shows each device's state only then)."""
        if player_ref in self.camera.pages:
            policy = self.camera._policy(player_ref)
            if len(self.required(policy)) > 1:
                self.camera.tell(player_ref, "devices", {"devices": self.states(player_ref, policy)})

    def connected(self, player_ref: str, device: Device) -> None:
        self.refusals.pop(StreamKey(player_ref, device), None)
        self.changed(player_ref)

    def refused(self, player_ref: str, device: Device, surface: object) -> None:
        """A screen share of a window or a tab (or of what the browser did not say), refused: the state says so."""
        self.refusals[StreamKey(player_ref, device)] = (str(surface or "unknown"), now_ms())
        log.info("%s: screen share refused (%s)", player_ref, surface)
        self.changed(player_ref)

    # --- The player's page reports ----------------------------------------------------------------------------------

    def report(self, player_ref: str, device: Device, state: str, surface: object = None) -> dict[str, Any]:
        """What the player's page says of a device: ``ended`` (the player stopped the screen share, or the browser
        ended it: a ``screen-share-stopped`` case now, while the game is in play), or ``refused`` (a window or a tab
        was chosen, and the page refused it)."""
        if state == "refused":
            self.refused(player_ref, device, surface)
        elif state == "ended":
            ingest = self.camera.ingest
            detail = STOPPED_BY_PLAYER if device is Device.SCREEN else f"the player's page closed the {device.title}"
            if ingest is not None and ingest.end_stream(player_ref, device, detail):
                self.changed(player_ref)
        return {"player": player_ref, "device": device.value, "devices": self.states(player_ref)}

    # --- The shared screen's stills ----------------------------------------------------------------------------------

    def on_still(self, stream: StreamKey, at: float, jpeg: bytes) -> None:
        """A still of the shared screen (the ingest's, every ``screen_still_s``): kept as evidence in the section's
        ``screen`` folder (its retention: ``screen_retention_days``), and as the snapshot of a case that follows."""
        self.screens[stream.player] = jpeg
        try:
            self.camera._write_media(stream.player, jpeg, f"{int(at * 1000)}-screen", "jpg", Device.SCREEN)
        except OSError:
            log.exception("keeping a screen still failed")

    def last_screen(self, player_ref: str) -> bytes | None:
        return self.screens.get(player_ref)

    # --- The side camera's (and the screen's) approved view ---------------------------------------------------------

    async def approve_view(self, who: Identity, player_ref: str, device: Device, note: str) -> dict[str, Any]:
        """The arbiter approves the camera's setup (36.4), or what the shared screen shows (the platform's board), as
        it is now: its last frame becomes the reference still (a media file, its hash audited), which the service
        compares the device's picture with from then on (``camera-moved``, ``screen-changed``).  ConflictError
        without a live stream of the device, or when its picture has too little detail to compare with."""
        camera = self.camera
        camera.require_known(player_ref)
        still = await self._still(player_ref, device)
        reference = ReferenceView.from_jpeg(still)
        if reference is None or not reference.judgeable:
            raise ConflictError(f"the {device.title}'s picture has too little detail to serve as its approved view "
                                "(dark, covered or out of focus)")  # fmt: skip
        name = camera._write_media(player_ref, still, f"{now_ms()}-{device.value}-reference", "jpg", device)
        digest = hashlib.sha256(still).hexdigest()
        detail = {"device": device.value, "media": name, "sha256": digest, "note": note,
                  "points": len(reference.points)}  # fmt: skip
        audited = {"device": device.value, "media_sha256": digest,
                   "note_sha256": hashlib.sha256(note.encode()).hexdigest()}  # fmt: skip
        at = now_ms()
        row_id = await camera.record_action(who, player_ref, "reference", detail, audited, at)
        if camera.ingest is not None:
            camera.ingest.set_reference(player_ref, device, reference)
        if camera.rooms is not None:  # the distributed mode: the worker holding the stream fetches it
            await camera.rooms.set_reference(player_ref, device, digest)
        self.changed(player_ref)
        return {"id": row_id, "player": player_ref, "device": device.value, "media": name, "sha256": digest,
                "points": len(reference.points), "note": note, "at": at}  # fmt: skip

    async def _still(self, player_ref: str, device: Device) -> bytes:
        """The device's picture now, for its approved view: the last still of a :data:`REFERENCE_SECONDS` window
        (:meth:`proctor.camera.Camera.capture`: here, or at the worker holding the stream).  ConflictError without
        one."""
        try:
            recording = self.camera.capture(player_ref, REFERENCE_SECONDS, stills=True, device=device)
        except LookupError:
            raise ConflictError(
                f"player {player_ref!r} has no live {device.title} stream: ask them to open it first"
            ) from None
        try:
            result = await recording
        except LookupError:
            raise ConflictError(f"player {player_ref!r}'s {device.title} stream ended") from None
        still = next((frame.still for frame in reversed(result.frames) if frame.still), None)
        if still is None:
            raise ConflictError(f"no picture arrived from the {device.title} in {REFERENCE_SECONDS} s: try again")
        return still

    def still_of(self, digest: str) -> bytes | None:
        """A device's current approved view's still by its SHA-256 (for the workers), or None."""
        with self.camera.writer.engine.connect() as connection:
            row = next(
                (r for r in latest_references(connection).values() if (r.detail or {}).get("sha256") == digest), None
            )
        path = Path(self.camera.settings.media_dir) / str(row.detail.get("media", "")) if row is not None else None
        data = path.read_bytes() if path is not None and path.is_file() else None
        return data if data is not None and hashlib.sha256(data).hexdigest() == digest else None

    def reference(self, player_ref: str, device: Device) -> dict[str, Any] | None:
        """The camera's latest approved view as recorded (who, when, its still's name and hash), or None."""
        with self.camera.writer.engine.connect() as connection:
            rows = latest_references(connection, player_ref)
        row = rows.get((player_ref, device.value))
        if row is None:
            return None
        return {**{k: row.detail[k] for k in ("media", "sha256", "note")}, "by": row.arbiter, "at": row.created_ms}

    def load_references(self, connection: Connection) -> None:
        """The approved views recorded, given to the ingest again (the service started anew)."""
        ingest = self.camera.ingest
        if ingest is None:
            return
        folder = Path(self.camera.settings.media_dir)
        for (player_ref, device_name), row in latest_references(connection).items():
            path = folder / str(row.detail.get("media", ""))
            reference = ReferenceView.from_jpeg(path.read_bytes()) if path.is_file() else None
            if reference is None:
                log.warning("%s: the %s's reference still %s cannot be read", player_ref, device_name, path)
                continue
            ingest.set_reference(player_ref, Device(device_name), reference)


def room_references(connection: Connection) -> dict[str, str]:
    """The SHA-256 of each stream's latest approved view, by stream name (the distributed mode: the workers fetch
    the stills by their hash)."""
    return {stream_name(StreamKey(player_ref, Device(device))): str(row.detail["sha256"])
            for (player_ref, device), row in latest_references(connection).items()}  # fmt: skip


def latest_references(connection: Connection, player_ref: str | None = None) -> dict[tuple[str, str], Any]:
    """The latest approved view recorded per player and device (``reference`` camera actions)."""
    query = select(CameraAction).where(col(CameraAction.kind) == "reference").order_by(col(CameraAction.id))
    if player_ref is not None:
        query = query.where(col(CameraAction.player_ref) == player_ref)
    latest: dict[tuple[str, str], Any] = {}
    for row in connection.execute(query).all():
        latest[(row.player_ref, str((row.detail or {}).get("device", "side")))] = row
    return latest


def require_device(name: object, default: Device = Device.FRONT) -> Device:
    """The device a request names (``front`` when it names none); NotFoundError for an unknown one."""
    if name in (None, ""):
        return default
    try:
        return Device(name)
    except ValueError:
        raise NotFoundError(f"no device {name!r}: front, side or screen") from None
