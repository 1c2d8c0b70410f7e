"""The microphones' findings as incidents (issue 15), wherever they were heard: by the service's own microphones (the
one-process mode, proctor.microphone) or by the analysis worker holding the player's front camera (the distributed
mode, issue 16; ``POST /api/v1/worker/sounds`` and ``/api/v1/worker/sound-clips``).

- ``voice`` (36.4.2, 36.4.3) is a review flag, never a penalty; its WAV clip (from 5 s before the speech to 5 s after
  it was raised) is kept in the section's ``sound`` folder and attached to it as evidence.
- ``microphone-muted`` and ``microphone-lost`` (36.4) are cases, each noted when it ends.

Each is recorded once however often it is told (a worker tries a report again when its answer was lost; a standby
writer knows nothing of what the first one held in memory): a finding is known by its player, its kind and its start
(proctor.camera_records, under the microphones' own source)."""

from __future__ import annotations

import asyncio
import hashlib
import logging
import secrets
from collections.abc import Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from aiohttp import web
from sqlalchemy import Connection

from engine.penalties import Role
from proctor.accounts import Identity
from proctor.camera import Camera, current_game
from proctor.camera_records import (
    ENDED_PREFIX,
    SOUND_CLIP_PREFIX,
    SOUND_SOURCE,
    clip_attached,
    ended_noted,
    recorded_incident,
)
from proctor.staging import Batch
from proctor.wall_clock import now_ms
from video.speech import SoundCheck, SoundFinding

log = logging.getLogger("proctor.sound_records")

DETECTOR: Final = Identity(SOUND_SOURCE, Role.ARBITER)
CLIP_WAIT_S: Final = 5.0
"""A clip heard here waits this long at most for its incident to be stored (it normally is, seconds before)."""


@dataclass
class SoundRecords:
    """Findings and clips of the players' microphones, stored through the service's writer."""

    camera: Camera
    open_incidents: dict[tuple[str, str], int] = field(default_factory=dict)
    """The incident each raised finding (player, check) opened, until its end is noted."""
    pending: set[asyncio.Task[Any]] = field(default_factory=set)

    # --- as heard by this process's microphones (called on the event loop) ----------------------------------------

    def on_finding(self, player_ref: str, finding: SoundFinding) -> None:
        self._spawn(self._logged(self.record(player_ref, finding), "recording a microphone finding"))

    def on_clip(self, player_ref: str, finding: SoundFinding, clip: bytes) -> None:
        self._spawn(self._logged(self._attach_when_raised(player_ref, finding, clip), "attaching a sound clip"))

    async def _attach_when_raised(self, player_ref: str, finding: SoundFinding, clip: bytes) -> None:
        for _ in range(int(CLIP_WAIT_S / 0.1)):
            if await self.attach_clip(player_ref, finding, clip) is not None:
                return
            await asyncio.sleep(0.1)
        log.warning("a sound clip came for a finding that was never stored: dropped")

    def _spawn(self, coroutine: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(coroutine)
        self.pending.add(task)
        task.add_done_callback(self.pending.discard)

    @staticmethod
    async def _logged(coroutine: Coroutine[Any, Any, Any], what: str) -> None:
        try:
            await coroutine
        except Exception:
            log.exception("%s failed", what)

    # --- stored once, whoever tells them -----------------------------------------------------------------------------

    async def record(self, player_ref: str, finding: SoundFinding) -> int | None:
        """A finding raised (its incident) or ended (its end noted on the incident it raised; None if it raised
        none)."""
        kind, at = finding.check.value, int(finding.started * 1000)
        service, writer = self.camera.service, self.camera.writer
        key = (player_ref, kind)
        if finding.ended is None:
            game = current_game(service, player_ref)
            summary = f"{kind}: {finding.detail}"
            evidence = {"started": finding.started, "detail": finding.detail, "device": "microphone"}

            def raise_it(connection: Connection, batch: Batch) -> int:
                if (known := recorded_incident(connection, player_ref, kind, at, SOUND_SOURCE)) is not None:
                    return known
                return service.raise_incident(
                    connection, batch, game, kind, summary, source=SOUND_SOURCE, article=finding.check.article,
                    evidence=evidence, player_ref=player_ref, at=at,
                )  # fmt: skip

            incident: int = await writer.submit(raise_it)
            self.open_incidents[key] = incident
            self._changed(player_ref, finding)
            return incident
        opened = self.open_incidents.pop(key, None)
        note = f"{ENDED_PREFIX}{finding.ended - finding.started:.0f} s"

        def note_it(connection: Connection, batch: Batch) -> int | None:
            target = opened or recorded_incident(connection, player_ref, kind, at, SOUND_SOURCE)
            if target is None or ended_noted(connection, target, SOUND_SOURCE):
                return target
            service.act_on_incident(connection, batch, target, DETECTOR, "note", note, None, None, now_ms())
            return target

        noted: int | None = await writer.submit(note_it)
        self._changed(player_ref, finding)
        return noted

    def _changed(self, player_ref: str, finding: SoundFinding) -> None:
        """The microphone's state changes with these (proctor.microphone_states): the player's page is told."""
        if finding.check is not SoundCheck.VOICE:
            self.camera.devices.changed(player_ref)

    async def attach_clip(self, player_ref: str, finding: SoundFinding, clip: bytes) -> int | None:
        """A voice finding's clip (WAV), kept in the section's sound folder and attached to the incident it raised;
        None when it raised none (yet)."""
        kind, at = finding.check.value, int(finding.started * 1000)
        with self.camera.writer.engine.connect() as connection:
            incident = recorded_incident(connection, player_ref, kind, at, SOUND_SOURCE)
            if incident is None or clip_attached(connection, incident, SOUND_SOURCE):
                return incident
        folder = self.camera.microphone_policy(player_ref).folder
        name = await asyncio.to_thread(self._write, folder, f"{at}-{kind}", clip)
        digest, note = hashlib.sha256(clip).hexdigest(), f"{SOUND_CLIP_PREFIX}{name} ({len(clip) // 1024} kB)"
        service = self.camera.service

        def attach(connection: Connection, batch: Batch) -> None:
            if not clip_attached(connection, incident, SOUND_SOURCE):
                service.add_evidence(connection, batch, incident, DETECTOR, name, digest, note, now_ms())

        await self.camera.writer.submit(attach)
        return incident

    def _write(self, where: str, stem: str, data: bytes) -> str:
        folder = Path(self.camera.settings.media_dir) / where
        folder.mkdir(parents=True, exist_ok=True)
        file = f"{stem}-{secrets.token_hex(4)}.wav"
        (folder / file).write_bytes(data)
        return f"{where}/{file}" if where else file

    async def close(self) -> None:
        if self.pending:
            await asyncio.gather(*self.pending, return_exceptions=True)


SOUND_RECORDS: Final = web.AppKey("sound_records", SoundRecords)
"""The service's records of the microphones' findings (set beside the microphones in proctor.app)."""


def sound_check(value: object) -> SoundCheck:
    """A report's ``check``: ValueError names the ones there are."""
    try:
        return SoundCheck(value)
    except ValueError:
        raise ValueError(f"'check' must be one of {', '.join(c.value for c in SoundCheck)}") from None
