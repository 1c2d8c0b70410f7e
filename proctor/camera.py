"""The players' cameras in the service: stream tokens, ICE configuration (TURN REST credentials), and the findings
of the video checks turned into incidents with their evidence.

A finding that starts raises an incident (kind = the check, its article from 36, source ``detector:camera``) on the
player's current game, with a JPEG snapshot saved under ``media_dir`` and its SHA-256 in the incident's evidence and
in the audit log; when the condition ends, a note is added to the same incident.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import hmac
import logging
import secrets
import time
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiortc import RTCIceServer
from sqlalchemy import Connection, insert, select, update
from sqlmodel import col

from engine.penalties import Role
from proctor.errors import NotFoundError, UnauthorizedError
from proctor.models import StreamToken
from proctor.service import Batch, Identity, Service, now_ms, token_hash
from proctor.settings import Settings
from proctor.writer import Writer
from video.checks import Finding, Thresholds
from video.detectors import available_detector
from video.ingest import Ingest, IngestSettings

log = logging.getLogger("proctor.camera")

DETECTOR = Identity("detector:camera", Role.ARBITER)
"""How the detector signs its notes on incidents (it has no authority to penalise)."""


def issue_stream_token(connection: Connection, player_ref: str, now: int) -> str:
    """A new stream token for the player; any earlier one stops working."""
    connection.execute(
        update(StreamToken)
        .where(col(StreamToken.player_ref) == player_ref, col(StreamToken.revoked_ms).is_(None))
        .values(revoked_ms=now)
    )
    token = secrets.token_urlsafe(24)
    connection.execute(insert(StreamToken).values(token_hash=token_hash(token), player_ref=player_ref, created_ms=now))
    return token


def player_for_token(connection: Connection, token: str) -> str:
    row = connection.execute(
        select(col(StreamToken.player_ref)).where(
            col(StreamToken.token_hash) == token_hash(token), col(StreamToken.revoked_ms).is_(None)
        )
    ).first()
    if row is None:
        raise UnauthorizedError("unknown or revoked stream token")
    return str(row[0])


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


@dataclass
class Camera:
    settings: Settings
    service: Service
    writer: Writer
    ingest: Ingest | None = None
    checks_note: str = ""
    open_incidents: dict[tuple[str, str], int] = field(default_factory=dict)
    raised: dict[tuple[str, str, float], int] = field(default_factory=dict)
    """The incident each started finding raised, until its clip is attached."""
    sweeper: asyncio.Task[None] | None = None
    pending: set[asyncio.Task[Any]] = field(default_factory=set)
    executor: ThreadPoolExecutor = field(default_factory=lambda: ThreadPoolExecutor(2, "proctor-video"))

    def start(self, thresholds: Thresholds | None = None) -> None:
        detector, self.checks_note = available_detector()
        log.info("video checks: %s", self.checks_note)
        config = IngestSettings(
            ice_servers=[RTCIceServer(**s) for s in ice_servers(self.settings, "service", time.time())],
            rate=self.settings.analysis_rate,
            thresholds=thresholds or Thresholds(),
        )
        self.ingest = Ingest(config, detector, self.executor, self.on_finding, self.on_clip)
        self.ingest.start()
        self.sweeper = asyncio.get_running_loop().create_task(self._sweep_media_forever())

    async def close(self) -> None:
        if self.sweeper is not None:
            self.sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.sweeper
        if self.ingest is not None:
            await self.ingest.close()
        if self.pending:
            await asyncio.gather(*self.pending, return_exceptions=True)
        self.executor.shutdown(wait=False, cancel_futures=True)

    def _spawn(self, coroutine: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(coroutine)
        self.pending.add(task)
        task.add_done_callback(self.pending.discard)

    def on_finding(self, player_ref: str, finding: Finding, snapshot: bytes | None) -> None:
        self._spawn(self._record(player_ref, finding, snapshot))

    def on_clip(self, player_ref: str, finding: Finding, clip: bytes) -> None:
        self._spawn(self._attach_clip(player_ref, finding, clip))

    async def _attach_clip(self, player_ref: str, finding: Finding, clip: bytes) -> None:
        key = (player_ref, finding.check.value, finding.started)
        for _ in range(50):  # the incident is normally stored long before its clip is ready
            if key in self.raised:
                break
            await asyncio.sleep(0.1)
        incident = self.raised.pop(key, None)
        if incident is None:
            return
        name, digest = self._save(clip, finding, "webm"), _sha256(clip)
        note = f"clip {name} ({len(clip) // 1024} kB)"
        try:
            await self.writer.submit(
                lambda connection, batch: self.service.add_evidence(
                    connection, batch, incident, DETECTOR, name, digest, note, now_ms()
                )
            )
        except Exception:
            log.exception("attaching a clip failed")

    async def _sweep_media_forever(self) -> None:
        """Media older than the retention setting is deleted, every hour; the incident records stay."""
        while True:
            removed = await asyncio.get_running_loop().run_in_executor(
                self.executor, sweep_media, Path(self.settings.media_dir),
                self.settings.media_retention_days * 86_400, time.time(),
            )  # fmt: skip
            if removed:
                log.info("retention: deleted %d media files", len(removed))
            await asyncio.sleep(3600)

    def current_game(self, player_ref: str) -> int | None:
        live = [g.id for g in self.service.games.values() if player_ref in g.refs and not g.state.is_over]
        return max(live) if live else None

    async def _record(self, player_ref: str, finding: Finding, snapshot: bytes | None) -> None:
        key = (player_ref, finding.check.value)
        try:
            if finding.ended is None:
                evidence: dict[str, Any] = {"started": finding.started, "detail": finding.detail}
                if snapshot:
                    evidence["media"], evidence["sha256"] = [self._save(snapshot, finding)], _sha256(snapshot)
                game_id = self.current_game(player_ref)
                summary = f"{finding.check.value}: {finding.detail}"

                def raise_it(connection: Connection, batch: Batch) -> int:
                    return self.service.raise_incident(
                        connection, batch, game_id, finding.check.value, summary, source="detector:camera",
                        article=finding.check.article, evidence=evidence, player_ref=player_ref,
                        at=int(finding.started * 1000),
                    )  # fmt: skip

                incident_id = await self.writer.submit(raise_it)
                self.open_incidents[key] = incident_id
                self.raised[(player_ref, finding.check.value, finding.started)] = incident_id
            else:
                incident = self.open_incidents.pop(key, None)
                if incident is None:
                    return
                note = f"ended after {finding.ended - finding.started:.0f} s"

                def note_it(connection: Connection, batch: Batch) -> Any:
                    return self.service.act_on_incident(
                        connection, batch, incident, DETECTOR, "note", note, None, None, now_ms()
                    )

                await self.writer.submit(note_it)
        except Exception:
            log.exception("recording a camera finding failed")

    def _save(self, data: bytes, finding: Finding, extension: str = "jpg") -> str:
        folder = Path(self.settings.media_dir)
        folder.mkdir(parents=True, exist_ok=True)
        name = f"{int(finding.started * 1000)}-{finding.check.value}-{secrets.token_hex(4)}.{extension}"
        (folder / name).write_bytes(data)
        return name


def sweep_media(folder: Path, max_age_s: float, now: float) -> list[str]:
    """Delete the media files in ``folder`` last written more than ``max_age_s`` before ``now``; their names."""
    if not folder.is_dir():
        return []
    removed = []
    for path in folder.iterdir():
        if path.is_file() and path.stat().st_mtime < now - max_age_s:
            path.unlink(missing_ok=True)
            removed.append(path.name)
    return sorted(removed)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def require_player(connection: Connection, token: str) -> str:
    try:
        return player_for_token(connection, token)
    except UnauthorizedError:
        raise NotFoundError("unknown stream token") from None
