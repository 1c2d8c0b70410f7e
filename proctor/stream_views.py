"""Where the service sees its players' streams: its own ingest (the one-process mode), and in the distributed mode the
reports of the analysis workers that hold them (issue 16; proctor.worker writes one a second per stream into the
stream registry, proctor.sfu reads them back), so that the desk, the camera roster and the check-ins see a worker's
stream as they see one of the service's own.

A report carries what the desk reads of a stream: since when it is open (or when it closed), its frame counts, the
findings active on it, the analysis rate it keeps, and its last analysed frame as a small JPEG (the desk's
thumbnail).  A report older than :data:`REPORT_STALE_S` is a stream nobody analyses now (its worker died and none
has taken it over yet): shown as lost."""

from __future__ import annotations

import base64
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from proctor.microphone_states import Heard
from video.checks import Check, Finding
from video.devices import Device, StreamKey
from video.ingest import Ingest, StreamSession

REPORT_STALE_S: Final = 5.0


class SeenStream(Protocol):
    """What the desk reads of a stream, wherever it is analysed (video.ingest's sessions and ended streams, and
    :class:`RemoteStream`)."""

    @property
    def opened_at(self) -> float: ...
    @property
    def closed_at(self) -> float | None: ...
    @property
    def frames_received(self) -> int: ...
    @property
    def frames_analysed(self) -> int: ...
    @property
    def frames_dropped(self) -> int: ...
    def active(self) -> list[Finding]: ...


class LiveStream(SeenStream, Protocol):
    """A stream that is up, wherever it is analysed: what the desk reads of its analysis."""

    @property
    def degraded(self) -> bool: ...
    def rate_achieved(self, now: float) -> float | None: ...


@dataclass(frozen=True, slots=True)
class RemoteStream:
    """A stream as its analysis worker last reported it."""

    worker: str
    opened_at: float
    closed_at: float | None
    frames_received: int
    frames_analysed: int
    frames_dropped: int
    findings: tuple[Finding, ...]
    rate: float | None
    degraded: bool
    live: bool
    reported_at: float
    thumbnail: bytes | None = field(default=None, repr=False)
    microphone: Heard | None = None
    """A front camera's microphone, as the worker's check holds it (if the worker listens to it)."""

    def active(self) -> list[Finding]:
        return list(self.findings)

    def rate_achieved(self, now: float) -> float | None:
        return self.rate

    def current(self, now: float) -> bool:
        """Live and reported lately."""
        return self.live and now - self.reported_at < REPORT_STALE_S

    @classmethod
    def of(cls, report: Mapping[str, Any]) -> RemoteStream:
        thumbnail = report.get("thumbnail")
        return cls(
            str(report["worker"]), float(report["opened_at"]), report.get("closed_at"),
            int(report["frames_received"]), int(report["frames_analysed"]), int(report["frames_dropped"]),
            tuple(Finding(Check(check), float(started), None, str(detail))
                  for check, started, detail in report.get("findings", [])),
            report.get("rate"), bool(report.get("degraded")), bool(report.get("live")), float(report["reported_at"]),
            base64.b64decode(thumbnail) if thumbnail else None, Heard.of(report.get("microphone")),
        )  # fmt: skip


def report_of(worker: str, session: StreamSession, live: bool, now: float) -> dict[str, Any]:
    """A worker's report of one of its streams (:meth:`RemoteStream.of` reads it back)."""
    achieved = session.rate_achieved(now)
    return {
        "worker": worker, "opened_at": session.opened_at, "closed_at": session.closed_at,
        "frames_received": session.frames_received, "frames_analysed": session.frames_analysed,
        "frames_dropped": session.frames_dropped,
        "findings": [[f.check.value, f.started, f.detail] for f in session.active()],
        "rate": None if achieved is None else round(achieved, 2), "degraded": session.degraded, "live": live,
        "reported_at": now,
        "thumbnail": base64.b64encode(session.thumbnail).decode() if session.thumbnail else None,
    }  # fmt: skip


@dataclass
class StreamViews:
    """The streams as the desk sees them: the service's own ingest first, then the workers' reports."""

    ingest: Ingest | None
    remote: dict[StreamKey, RemoteStream] = field(default_factory=dict)
    """The workers' latest reports, by stream (kept up by proctor.sfu)."""
    listening: Callable[[str], Heard | None] | None = None
    """The service's own microphones (proctor.microphone's ``heard``), set once they start."""

    def heard(self, player_ref: str) -> Heard | None:
        """The player's microphone as its check holds it now: here, or at the worker holding the front camera."""
        own = self.listening(player_ref) if self.listening is not None else None
        if own is not None:
            return own
        remote = self.remote.get(StreamKey(player_ref, Device.FRONT))
        return remote.microphone if remote is not None and remote.current(time.time()) else None

    def last(self, player_ref: str, device: Device = Device.FRONT) -> SeenStream | None:
        """The player's stream of this device, live or not (or what is kept of the last one that ended)."""
        own = self.ingest.last(player_ref, device) if self.ingest is not None else None
        return own if own is not None else self.remote.get(StreamKey(player_ref, device))

    def live(self, player_ref: str, device: Device = Device.FRONT) -> LiveStream | None:
        """The player's stream of this device if it is up (here, or at a worker that reported it lately)."""
        own = self.ingest.live(player_ref, device) if self.ingest is not None else None
        if own is not None:
            return own
        remote = self.remote.get(StreamKey(player_ref, device))
        return remote if remote is not None and remote.current(time.time()) else None

    def players(self, device: Device) -> set[str]:
        """Every player with a stream of this device seen here or at a worker."""
        seen = {key.player for key in self.remote if key.device is device}
        if self.ingest is not None:
            seen |= {key.player for key in set(self.ingest.sessions) | set(self.ingest.ended) if key.device is device}
        return seen

    def thumbnail(self, player_ref: str, device: Device = Device.FRONT) -> bytes | None:
        stream = self.live(player_ref, device)
        return getattr(stream, "thumbnail", None)


def degraded(stream: SeenStream) -> bool:
    """Whether the stream's analysis cannot keep its rate (a live session's, or a worker's report; an ended stream's
    never)."""
    return isinstance(stream, StreamSession | RemoteStream) and stream.degraded
