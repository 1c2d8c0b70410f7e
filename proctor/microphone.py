"""The players' microphones in the service (issue 15): the audio track on the front camera's stream, judged by
:mod:`video.audio` and :mod:`video.speech`, its findings turned into incidents.

A section's policy turns it on (``microphone_required = true``): the player's page then asks for the microphone with
the camera, and the service
- raises ``voice`` (36.4.2, 36.4.3; source ``detector:microphone``) when speech is heard that is not the player's
  own (their mouth still, or no face in view), a review flag never a penalty, with a WAV clip from 5 s before the
  speech to 5 s after it was raised as its evidence;
- raises ``microphone-muted`` (only digital silence for 5 s) and ``microphone-lost`` (no sound for 5 s, or no audio
  track on a front stream that has been up that long) as cases (36.4), each noted when it ends.
Without the policy no sound is listened to or kept (the track, if a page sends one anyway, is drained unheard).  The
clips are kept in the section's ``sound`` folder for ``sound_retention_days`` (30 by default: sound is more private
than a face).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import secrets
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Final

from aiohttp import web
from aiortc import MediaStreamTrack
from sqlalchemy import Connection

from engine.penalties import Role
from proctor.accounts import Identity
from proctor.camera import Camera, current_game, player_section
from proctor.staging import Batch
from proctor.wall_clock import now_ms
from video.audio import MicrophoneSession
from video.ingest import StreamSession
from video.landmarks import FaceMesh, available_face_mesh
from video.speech import SoundCheck, SoundFinding, SpeechSettings
from video.vad import VoiceActivity, available_vad

log = logging.getLogger("proctor.microphone")

DETECTOR = Identity("detector:microphone", Role.ARBITER)
SOUND_FOLDER: Final = "sound"
"""A section's sound clips are kept in this subfolder of its media folder, with their own retention."""
DEFAULT_SOUND_RETENTION_DAYS: Final = 30


@dataclass(frozen=True, slots=True)
class MicrophonePolicy:
    required: bool = False
    settings: SpeechSettings = field(default_factory=SpeechSettings)
    folder: str = ""
    """Where its clips go, relative to the media folder."""
    retention_days: int = 30
    """How long its clips are kept (``sound_retention_days``; the player's page says so before they agree)."""

    @classmethod
    def of(cls, found: tuple[Any, Mapping[str, Any]] | None) -> MicrophonePolicy:
        """From the player's section and its policy (:func:`proctor.camera.player_section`)."""
        if found is None:
            return cls()
        section, policy = found
        known = {f.name for f in fields(SpeechSettings)}
        values: dict[str, Any] = {k: v for k, v in dict(policy.get("thresholds") or {}).items() if k in known}
        values = {k: int(v) if k == "mouth_min_views" else float(v) for k, v in values.items()}
        settings = replace(SpeechSettings(), **values)
        return cls(
            bool(policy.get("microphone_required", False)),
            settings,
            f"{section.folder}/{SOUND_FOLDER}",
            int(policy.get("sound_retention_days", 30)),
        )


@dataclass
class Microphone:
    """Every player's microphone in this process, beside the cameras (:class:`proctor.camera.Camera`)."""

    camera: Camera
    vad: VoiceActivity | None = None
    mesh: FaceMesh | None = None
    note: str = ""
    sessions: dict[str, MicrophoneSession] = field(default_factory=dict)
    streams: dict[str, StreamSession] = field(default_factory=dict)
    """The front stream each microphone rides on."""
    policies: dict[str, MicrophonePolicy] = field(default_factory=dict)
    seen: dict[str, StreamSession] = field(default_factory=dict)
    """Each player's latest front stream whose policy was read (by the sweep, or when its audio came)."""
    open_incidents: dict[tuple[str, str], int] = field(default_factory=dict)
    raised: dict[tuple[str, float], int] = field(default_factory=dict)
    pending: set[asyncio.Task[Any]] = field(default_factory=set)
    watchdog: asyncio.Task[None] | None = None
    executor: ThreadPoolExecutor = field(default_factory=lambda: ThreadPoolExecutor(1, "proctor-audio"))
    """The microphones' own thread: their work is light (0.2 ms a 32 ms chunk; the face mesh 20 ms a look while
    speech is heard) but must not wait behind the cameras' analysis, or the sound falls seconds behind."""

    def start(self) -> None:
        """Load the models, take the front streams' audio from the ingest, and watch the microphones."""
        models = Path(self.camera.settings.models_dir)
        self.vad, vad_note = available_vad(models)
        self.mesh, mesh_note = available_face_mesh(models)
        self.note = f"{vad_note}; {mesh_note}"
        log.info("microphone checks: %s", self.note)
        assert self.camera.ingest is not None
        self.camera.ingest.on_audio = self.hear
        self.watchdog = asyncio.get_running_loop().create_task(self._watch())

    def policy_for(self, player_ref: str) -> MicrophonePolicy:
        with self.camera.writer.engine.connect() as connection:
            return MicrophonePolicy.of(player_section(connection, player_ref))

    def hear(self, stream: StreamSession, track: MediaStreamTrack) -> bool:
        """A front stream's audio track arrived: listen to it if the player's section requires the microphone (True),
        else leave it to be drained unheard (False)."""
        policy = self.policy_for(stream.player_ref)
        self.seen[stream.player_ref] = stream
        if not policy.required:
            return False
        session = self._open(stream, policy)
        session.opened_at = time.time()
        self._keep(stream, session.consume(track))
        self._keep(stream, session.watch_mouth_on(stream))
        return True

    def _open(self, stream: StreamSession, policy: MicrophonePolicy) -> MicrophoneSession:
        player = stream.player_ref
        previous = self.sessions.get(player)
        if previous is not None and self.streams.get(player) is stream:
            return previous  # the placeholder made while the track was awaited
        if previous is not None:
            self._retire(player, previous)
        session = MicrophoneSession(player, self.vad, self.mesh, self.executor, self.on_finding,
                                    self.on_clip, policy.settings, faces=lambda: stream.faces,
                                    opened_at=stream.opened_at)  # fmt: skip
        self.sessions[player], self.streams[player], self.policies[player] = session, stream, policy
        return session

    def _retire(self, player: str, session: MicrophoneSession) -> None:
        """A microphone replaced by a new stream: what it had raised ends now."""
        session.close()
        now = time.time()
        for finding in session.monitor.active():
            self.on_finding(player, SoundFinding(finding.check, finding.started, now, finding.detail))

    @staticmethod
    def _keep(stream: StreamSession, coroutine: Any) -> None:
        """A task of the stream's: cancelled with it when it ends or is replaced."""
        task = asyncio.get_running_loop().create_task(coroutine)
        stream.tasks.add(task)
        task.add_done_callback(stream.tasks.discard)

    async def _watch(self) -> None:
        while True:
            await asyncio.sleep(0.5)
            try:
                self.sweep(time.time())
            except Exception:
                log.exception("watching the microphones failed")

    def sweep(self, now: float) -> None:
        """Tick each microphone; a required one whose front stream has sent no audio track is watched too (its loss
        is raised after ``microphone_lost_s``)."""
        ingest = self.camera.ingest
        if ingest is None:
            return
        for stream in list(ingest.sessions.values()):
            if stream.device.value != "front" or stream.closed_at is not None:
                continue
            if self.seen.get(stream.player_ref) is not stream:  # a stream's policy is read once
                self.seen[stream.player_ref] = stream
                policy = self.policy_for(stream.player_ref)
                if policy.required and self.streams.get(stream.player_ref) is not stream:
                    self._open(stream, policy)
        for player, session in list(self.sessions.items()):
            riding = self.streams.get(player)
            if riding is not None and riding.closed_at is not None and session.monitor.lost.active is not None:
                continue  # said; the camera's own loss tells the rest
            session.tick(now)

    # --- Incidents -------------------------------------------------------------------------------------------------

    def _spawn(self, coroutine: Any) -> None:
        task = asyncio.get_running_loop().create_task(coroutine)
        self.pending.add(task)
        task.add_done_callback(self.pending.discard)

    def on_finding(self, player_ref: str, finding: SoundFinding) -> None:
        self._spawn(self._record(player_ref, finding))

    def on_clip(self, player_ref: str, finding: SoundFinding, clip: bytes) -> None:
        self._spawn(self._attach_clip(player_ref, finding, clip))

    async def _record(self, player_ref: str, finding: SoundFinding) -> None:
        key = (player_ref, finding.check.value)
        service, writer = self.camera.service, self.camera.writer
        try:
            if finding.ended is None:
                game = current_game(service, player_ref)
                kind, summary = finding.check.value, f"{finding.check.value}: {finding.detail}"
                evidence = {"started": finding.started, "detail": finding.detail, "device": "microphone"}

                def raise_it(connection: Connection, batch: Batch) -> int:
                    return service.raise_incident(
                        connection, batch, game, kind, summary, source=DETECTOR.name, article=finding.check.article,
                        evidence=evidence, player_ref=player_ref, at=int(finding.started * 1000),
                    )  # fmt: skip

                incident = await writer.submit(raise_it)
                self.open_incidents[key] = incident
                if finding.check is SoundCheck.VOICE:
                    self.raised[(player_ref, finding.started)] = incident
            else:
                incident = self.open_incidents.pop(key, None)
                if incident is None:
                    return
                note = f"ended after {finding.ended - finding.started:.0f} s"
                await writer.submit(lambda connection, batch: service.act_on_incident(
                    connection, batch, incident, DETECTOR, "note", note, None, None, now_ms()
                ))  # fmt: skip
        except Exception:
            log.exception("recording a microphone finding failed")

    async def _attach_clip(self, player_ref: str, finding: SoundFinding, clip: bytes) -> None:
        for _ in range(50):  # the incident is normally stored long before its clip is ready
            if (player_ref, finding.started) in self.raised:
                break
            await asyncio.sleep(0.1)
        incident = self.raised.pop((player_ref, finding.started), None)
        if incident is None:
            return
        policy = self.policies.get(player_ref) or self.policy_for(player_ref)
        name = self._write(policy.folder, f"{int(finding.started * 1000)}-{finding.check.value}", clip)
        digest, note = hashlib.sha256(clip).hexdigest(), f"sound clip {name} ({len(clip) // 1024} kB)"
        service = self.camera.service
        try:
            await self.camera.writer.submit(lambda connection, batch: service.add_evidence(
                connection, batch, incident, DETECTOR, name, digest, note, now_ms()
            ))  # fmt: skip
        except Exception:
            log.exception("attaching a sound clip failed")

    def _write(self, where: str, stem: str, data: bytes) -> str:
        folder = Path(self.camera.settings.media_dir) / where
        folder.mkdir(parents=True, exist_ok=True)
        file = f"{stem}-{secrets.token_hex(4)}.wav"
        (folder / file).write_bytes(data)
        return f"{where}/{file}" if where else file

    def status(self, player_ref: str) -> dict[str, Any] | None:
        """The microphone's state for the camera status and the desk's level meter (None: not required)."""
        session = self.sessions.get(player_ref)
        if session is None:
            return None
        return {"level_dbfs": None if session.level == float("-inf") else round(session.level, 1),
                "findings": [f.check.value for f in session.monitor.active()], "checks": self.note}  # fmt: skip

    async def close(self) -> None:
        if self.watchdog is not None:
            self.watchdog.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.watchdog
        for session in self.sessions.values():
            session.close()
        if self.pending:
            await asyncio.gather(*self.pending, return_exceptions=True)
        self.executor.shutdown(wait=False, cancel_futures=True)


MICROPHONE: Final = web.AppKey("microphone", Microphone)
"""The app's microphones (set beside the camera in proctor.app)."""
