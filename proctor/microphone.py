"""The players' microphones (issue 15): the audio track on each front camera's stream of one ingest, judged by
:mod:`video.audio` and :mod:`video.speech`.  The service's own ingest in the one-process mode, whose findings
proctor.sound_records stores; an analysis worker's in the distributed mode (issue 16), whose findings go to the
service as reports (proctor.worker).

A section's policy turns it on (``microphone_required = true``; proctor.sound_policy): the player's page then asks
for the microphone with the camera, and the microphone
- raises ``voice`` (36.4.2, 36.4.3) when speech is heard that is not the player's own (their mouth still, or no face
  in view), a review flag never a penalty, with a WAV clip from 5 s before the speech to 5 s after it was raised;
- raises ``microphone-muted`` (only digital silence for 5 s) and ``microphone-lost`` (no sound for 5 s, or no audio
  track on a front stream that has been up that long), each ended when the sound is back.
Without the policy no sound is listened to or kept (the track, if a page sends one anyway, is drained unheard).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from aiohttp import web
from aiortc import MediaStreamTrack

from proctor.microphone_states import Heard
from proctor.sound_policy import MicrophonePolicy
from video.audio import MicrophoneSession, SoundClipHandler, SoundFindingHandler
from video.ingest import Ingest, StreamSession
from video.landmarks import FaceMesh, available_face_mesh
from video.speech import SoundCheck, SoundFinding
from video.vad import VoiceActivity, available_vad

log = logging.getLogger("proctor.microphone")


@dataclass
class Microphone:
    """Every player's microphone on one ingest, beside its cameras."""

    ingest: Ingest
    models_dir: Path
    policy_for: Callable[[str], MicrophonePolicy]
    """The player's microphone policy now (their section's)."""
    on_finding: SoundFindingHandler
    on_clip: SoundClipHandler
    vad: VoiceActivity | None = None
    mesh: FaceMesh | None = None
    note: str = ""
    sessions: dict[str, MicrophoneSession] = field(default_factory=dict)
    streams: dict[str, StreamSession] = field(default_factory=dict)
    """The front stream each microphone rides on."""
    policies: dict[str, MicrophonePolicy] = field(default_factory=dict)
    seen: dict[str, StreamSession] = field(default_factory=dict)
    """Each player's latest front stream whose policy was read (by the sweep, or when its audio came)."""
    watchdog: asyncio.Task[None] | None = None
    executor: ThreadPoolExecutor = field(default_factory=lambda: ThreadPoolExecutor(1, "proctor-audio"))
    """The microphones' own thread: their work is light (0.2 ms a 32 ms chunk; the face mesh 20 ms a look while
    speech is heard) but must not wait behind the cameras' analysis, or the sound falls seconds behind."""

    def start(self) -> None:
        """Load the models, take the front streams' audio from the ingest, and watch the microphones."""
        self.vad, vad_note = available_vad(self.models_dir)
        self.mesh, mesh_note = available_face_mesh(self.models_dir)
        self.note = f"{vad_note}; {mesh_note}"
        log.info("microphone checks: %s", self.note)
        self.ingest.on_audio = self.hear
        self.watchdog = asyncio.get_running_loop().create_task(self._watch())

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

    def heard(self, player_ref: str) -> Heard | None:
        """What the check holds of the player's microphone now (None: not listened to here)."""
        session = self.sessions.get(player_ref)
        if session is None:
            return None
        active = {finding.check: int(finding.started * 1000) for finding in session.monitor.active()}
        return Heard(int(session.opened_at * 1000), active.get(SoundCheck.LOST), active.get(SoundCheck.MUTED))

    def forget(self, player_ref: str) -> None:
        """Stop listening to the player's microphone without a finding: its front stream moved to another analysis
        worker, which listens from now on (the distributed mode)."""
        session = self.sessions.pop(player_ref, None)
        if session is not None:
            session.close()
        for held in (self.streams, self.policies, self.seen):
            held.pop(player_ref, None)

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
        for stream in list(self.ingest.sessions.values()):
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

    async def close(self) -> None:
        if self.watchdog is not None:
            self.watchdog.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.watchdog
        for session in self.sessions.values():
            session.close()
        self.executor.shutdown(wait=False, cancel_futures=True)


MICROPHONE: Final = web.AppKey("microphone", Microphone)
"""The service's own microphones (set beside the camera in proctor.app)."""
