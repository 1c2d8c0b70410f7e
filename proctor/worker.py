"""An analysis worker (``proctor worker``; the distributed mode, issue 16): it takes camera streams from Janus and
runs the same checks as the one-process service, sending what they find to the service.

Every second the worker says it is alive with its load (proctor.stream_registry), renews its claims on the streams it
analyses, and claims the unheld streams the assignment gives it (proctor.stream_assignment: the least loaded worker
first). A stream whose claim it lost, or whose publisher changed, it lets go without a finding. When a worker dies its
claims lapse within seconds and the others take its streams; the one that takes a stream over reports the time it
went unanalysed (``analysis-gap``, on the camera timeline). While Redis is away the worker keeps analysing what it
holds and takes them again when Redis is back.

Findings, clips and gaps go to the service's processes (``WRITER_URLS``, or the web processes in front of them) over
HTTP with the workers' secret (``WORKER_SECRET``), one at a time in order, tried again until a service process accepts
them: a finding is recorded once by its stream, check and start (proctor.camera), so a retry after a lost answer
stores nothing twice. Evidence (the snapshot, the clip) goes with it: the one media store is the service's.

An arbiter's prompt (a room scan, a pan check, an ear check) and an approved view (the side camera's setup, the
screen's board) ask, through the registry, the worker holding the stream for a recording of it: the worker answers
with the window's analysed frames, their stills if asked for, and their clip, as the one-process capture gives them.
An approved still's hash is entered with the stream, and the worker holding it (the one that takes it over, too)
fetches the still from the service and compares the picture with it (``camera-moved``, ``screen-changed``).

A front camera's stream carries the player's microphone when their section requires it (the policy is entered with
the stream): the worker holding it listens as the one-process service does (proctor.microphone) and reports the
``voice``, ``microphone-muted`` and ``microphone-lost`` findings and the voice's WAV clip, which the service stores
(proctor.sound_records).  A stream let go for another worker stops being listened to here without a finding."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import logging
import os
import signal
import socket
import time
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import aiohttp
from redis.exceptions import RedisError

from proctor.errors import ConfigurationError
from proctor.forwarding import writer_urls
from proctor.microphone import Microphone
from proctor.settings import Settings
from proctor.sfu import worker_janus_token
from proctor.sound_policy import MicrophonePolicy
from proctor.stream_assignment import mine, sheds
from proctor.stream_registry import PublishedStream, StreamRegistry, policy_of
from proctor.stream_views import report_of
from video.analysis_processes import AnalysisProcesses
from video.checks import Finding, Thresholds
from video.detectors import available_detector
from video.devices import Device, StreamKey
from video.ingest import Ingest, IngestSettings
from video.janus import JanusError, JanusHandle, JanusSession
from video.reference_view import ReferenceView
from video.segmentation import available_segmenter
from video.speech import SoundFinding

log = logging.getLogger("proctor.worker")

STEP_S: Final = 1.0
REBALANCE_S: Final = 10.0
"""A worker holding more than its share lets one stream go at most this often (proctor.stream_assignment.sheds)..."""
UNEVEN_FOR_S: Final = 3.0
"""...once the load has been uneven this long (the loads are heartbeats up to a second old)."""
GAP_REPORTED_MS: Final = 2500
"""A stream unchecked for less than this while it moved between workers is not reported: a worker letting one go for
another to take hands it over within a second or two.  One whose worker died goes unchecked 3 s at least (its
claim's lapse), always reported."""
LAYERS: Final = {"high": None, "low": 0}
"""The simulcast layer a worker takes (``WORKER_LAYER``) as Janus's substream: the lowest is 0; None leaves Janus's
default, the highest."""
MISSING_S: Final = 15.0
"""A held stream missing from the registry this long was withdrawn (shorter: Redis restarted, the service writes it
again within seconds)."""
JANUS_RETRY_S: Final = 3.0
RETRY_FIRST_S: Final = 0.5
RETRY_MOST_S: Final = 5.0
OUTBOX: Final = 5000
CAPTURE_MOST_S: Final = 120.0
"""The longest recording the service may ask for (a prompt's window is at most a minute)."""


@dataclass
class Report:
    path: str
    body: dict[str, Any]


@dataclass
class Reports:
    """What the worker tells the service, in order, each until a service process accepts it (2xx); a 4xx is the
    service refusing it for good (logged, dropped)."""

    urls: tuple[str, ...]
    secret: str
    worker: str
    queue: asyncio.Queue[Report] = field(default_factory=lambda: asyncio.Queue(OUTBOX))
    task: asyncio.Task[None] | None = None
    sent: int = 0

    def start(self) -> None:
        self.task = asyncio.get_running_loop().create_task(self._send_forever())

    def put(self, path: str, body: dict[str, Any]) -> None:
        try:
            self.queue.put_nowait(Report(path, {**body, "worker": self.worker}))
        except asyncio.QueueFull:
            log.warning("the service has not taken the worker's reports for long: one dropped")

    async def _send_forever(self) -> None:
        headers = {"Authorization": f"Bearer {self.secret}"}
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30), headers=headers) as http:
            while True:
                report = await self.queue.get()
                await self._deliver(http, report)
                self.queue.task_done()

    async def _deliver(self, http: aiohttp.ClientSession, report: Report) -> None:
        pause = RETRY_FIRST_S
        while True:
            for url in self.urls:
                try:
                    async with http.post(url + report.path, json=report.body) as response:
                        if 200 <= response.status < 300:
                            self.sent += 1
                            return
                        if 400 <= response.status < 500 and response.status not in (408, 409, 429):
                            log.warning("the service refused a report (%s): %s", response.status, report.path)
                            return
                except (aiohttp.ClientError, TimeoutError):
                    continue
            await asyncio.sleep(pause)
            pause = min(pause * 2, RETRY_MOST_S)

    async def drain(self, within_s: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.queue.join(), within_s)

    async def close(self) -> None:
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.task


def _b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode()


def finding_body(stream: StreamKey, finding: Finding) -> dict[str, Any]:
    return {"player": stream.player, "device": stream.device.value, "check": finding.check.value,
            "started": finding.started, "ended": finding.ended, "detail": finding.detail}  # fmt: skip


def sound_body(player_ref: str, finding: SoundFinding) -> dict[str, Any]:
    return {"player": player_ref, "check": finding.check.value, "started": finding.started, "ended": finding.ended,
            "detail": finding.detail}  # fmt: skip


@dataclass
class Held:
    stream: PublishedStream
    handle: JanusHandle | None


class Worker:
    """One analysis worker: its ingest, its Janus session, its claims."""

    def __init__(self, settings: Settings, worker_id: str) -> None:
        if not (settings.bus_url and settings.janus_url and settings.worker_secret and settings.writer_urls):
            raise ConfigurationError(
                "a worker needs PROCTOR_BUS_URL, PROCTOR_JANUS_URL, PROCTOR_WORKER_SECRET and PROCTOR_WRITER_URLS"
            )
        self.settings = settings
        self.id = worker_id
        self.capacity = settings.worker_capacity
        if settings.worker_layer not in LAYERS:
            raise ConfigurationError(f"PROCTOR_WORKER_LAYER must be {' or '.join(LAYERS)}")
        self.substream = LAYERS[settings.worker_layer]
        self.registry = StreamRegistry(settings.bus_url)
        self.reports = Reports(writer_urls(settings.writer_urls), settings.worker_secret, worker_id)
        self.held: dict[str, Held] = {}
        self.missing_since: dict[str, float] = {}
        self.executor = ThreadPoolExecutor(2, "proctor-worker")
        self.processes: AnalysisProcesses | None = None
        self.ingest: Ingest | None = None
        self.microphone: Microphone | None = None
        self.sound_policies: dict[str, MicrophonePolicy] = {}
        """The microphone policy of each player whose front camera is held here (entered with the stream)."""
        self.janus: JanusSession | None = None
        self.janus_failed = False
        """A Janus request failed: the next round checks the session first (:meth:`_check_janus`)."""
        self.registry_up = True
        self.shed_at = 0.0
        self.uneven_since: float | None = None
        self.http: aiohttp.ClientSession | None = None
        self.applied: dict[str, str] = {}
        """The approved view given to the ingest for each stream (its still's SHA-256), by stream name."""
        self.tasks: set[asyncio.Task[None]] = set()
        """Answers being made and stills being fetched (each in the background: a round must not wait for them)."""

    def _start_ingest(self) -> Ingest:
        models = Path(self.settings.models_dir)
        detector, faces_note = available_detector(models)
        people, people_note = available_segmenter(models)
        if self.settings.analysis_processes > 0:
            self.processes = AnalysisProcesses(self.settings.analysis_processes, models)
            self.processes.start(wait=False)
        log.info("worker %s: %s; %s; capacity %d", self.id, faces_note, people_note, self.capacity)
        config = IngestSettings(rate=self.settings.analysis_rate, thresholds=Thresholds())
        ingest = Ingest(config, detector, self.executor, self.on_finding, self.on_clip, people, self.processes)
        ingest.start()
        self.microphone = Microphone(ingest, models, self.sound_policy, self.on_sound, self.on_sound_clip)
        self.microphone.start()
        return ingest

    def on_finding(self, stream: StreamKey, finding: Finding, snapshot: bytes | None) -> None:
        self.reports.put("/api/v1/worker/findings", {**finding_body(stream, finding), "snapshot": _b64(snapshot)})

    def on_clip(self, stream: StreamKey, finding: Finding, clip: bytes) -> None:
        self.reports.put("/api/v1/worker/clips", {**finding_body(stream, finding), "clip": _b64(clip)})

    def on_sound(self, player_ref: str, finding: SoundFinding) -> None:
        self.reports.put("/api/v1/worker/sounds", sound_body(player_ref, finding))

    def on_sound_clip(self, player_ref: str, finding: SoundFinding, clip: bytes) -> None:
        self.reports.put("/api/v1/worker/sound-clips", {**sound_body(player_ref, finding), "clip": _b64(clip)})

    def sound_policy(self, player_ref: str) -> MicrophonePolicy:
        """The player's microphone policy, as entered with the front camera's stream this worker holds."""
        return self.sound_policies.get(player_ref) or MicrophonePolicy()

    async def _open_janus(self, http: aiohttp.ClientSession, stop: asyncio.Event) -> JanusSession | None:
        """A session on Janus, tried every few seconds until Janus lets the workers in (the service adds their token
        when it starts); None if the worker is stopped meanwhile."""
        token = worker_janus_token(self.settings.worker_secret)
        while not stop.is_set():
            session = JanusSession(self.settings.janus_url, token, http)
            try:
                await session.create()
                return session
            except (JanusError, aiohttp.ClientError, TimeoutError) as error:
                log.warning("Janus does not let the worker in yet (%s): again in %.0f s", error, JANUS_RETRY_S)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), JANUS_RETRY_S)
        return None

    async def run(self, stop: asyncio.Event) -> None:
        self.ingest = self._start_ingest()
        self.reports.start()
        async with aiohttp.ClientSession() as http:
            self.http = http
            self.janus = await self._open_janus(http, stop)
            while self.janus is not None and not stop.is_set():
                if self.janus_failed:
                    await self._check_janus(http, stop)
                    if self.janus is None:
                        break
                await self._step_once()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), STEP_S)
            if self.janus is not None:
                await self.janus.destroy()
            await self.close()

    async def _check_janus(self, http: aiohttp.ClientSession, stop: asyncio.Event) -> None:
        """After a request Janus failed: is the worker's session still there?  Janus restarted (the session gone),
        the worker opens a new one once the service has added the workers' token again; the streams it held come
        back as their pages publish again (a new feed each: :meth:`step` takes it)."""
        assert self.janus is not None
        self.janus_failed = False
        try:
            reply = await self.janus.post(self.janus.url, {"janus": "keepalive"})
            if reply.get("janus") == "ack":
                return
        except (aiohttp.ClientError, TimeoutError, ValueError):
            pass
        log.warning("worker %s: Janus lost its session (restarted?): opening a new one", self.id)
        old, self.janus = self.janus, None
        await old.destroy()
        self.janus = await self._open_janus(http, stop)

    async def _step_once(self) -> None:
        """A round; Redis away, the worker holds what it holds (its claims lapse, and it takes them again if nobody
        else did when Redis is back)."""
        try:
            await self.step(time.time())
            if not self.registry_up:
                log.info("the stream registry is back")
                self.registry_up = True
        except RedisError as error:
            if self.registry_up:
                log.warning("the stream registry is away (%s): holding what is held", error)
                self.registry_up = False
        except (JanusError, aiohttp.ClientError, TimeoutError) as error:
            log.warning("Janus failed a request (%s): again next round", error)
            self.janus_failed = True

    async def step(self, now: float) -> None:
        """One round: drop what is no longer ours, renew the rest, say the load, claim our share."""
        assert self.ingest is not None
        streams = await self.registry.streams()
        for name, held in list(self.held.items()):
            entry = streams.get(name)
            if entry is None:
                since = self.missing_since.setdefault(name, now)
                if now - since >= MISSING_S:
                    await self._let_go(name, "withdrawn")
                    await self.registry.release(name, self.id)
                continue
            self.missing_since.pop(name, None)
            if not entry.same_media(held.stream):  # the page published again: the new feed, same claim
                await self._let_go(name, "published again")
                await self._take(entry)
            elif entry.leave_until != held.stream.leave_until:
                self.ingest.grant_leave(entry.player, entry.leave_until)
                held.stream = entry
        renewed = await self.registry.renew(list(self.held), self.id)
        for name, still in renewed.items():
            if not still:
                await self._let_go(name, "taken by another worker")
        await self.registry.heartbeat(self.id, len(self.held), self.capacity)
        holders = await self.registry.holders(list(streams))
        unheld = [name for name, holder in holders.items() if holder is None]
        workers = await self.registry.workers()
        if self.id in workers and self._sheds_now(now, sheds(self.id, workers)):
            name = next(reversed(self.held))  # the one taken last
            await self._let_go(name, "another worker has fewer streams")
            await self.registry.seen([name], int(now * 1000))  # analysed until now: the gap counts from here
            await self.registry.release(name, self.id)
        elif self.id in workers:
            for name in mine(self.id, workers, unheld):
                if await self.registry.claim(name, self.id):
                    gap_from = await self.registry.last_seen(name)
                    taken = await self._take(streams[name])
                    if taken and gap_from is not None and now * 1000 - gap_from >= GAP_REPORTED_MS:
                        self.reports.put("/api/v1/worker/gaps", {
                            "player": streams[name].player, "device": streams[name].device.value,
                            "from_ms": gap_from, "to_ms": int(now * 1000),
                        })  # fmt: skip
        await self.registry.seen(list(self.held), int(now * 1000))
        await self.registry.report(self._reports(now))
        for name in self.held:
            wanted = streams[name].reference if name in streams else self.applied.get(name, "")
            if wanted != self.applied.get(name, ""):
                self.applied[name] = wanted  # one fetch at a time: a failed one sets it back
                self._spawn(self._apply_reference(streams[name]))
        for request in await self.registry.asked(self.id):
            self._spawn(self._answer(request))

    def _spawn(self, coroutine: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(coroutine)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _apply_reference(self, stream: PublishedStream) -> None:
        """The stream's approved view (36.4: the side camera's setup, the screen's board), fetched from the service by
        its still's hash and given to the ingest; none, withdrawn."""
        assert self.ingest is not None
        reference = None
        if stream.reference:
            still = await self._fetch(f"/api/v1/worker/references/{stream.reference}")
            reference = ReferenceView.from_jpeg(still) if still is not None else None
            if reference is None or hashlib.sha256(still or b"").hexdigest() != stream.reference:
                log.warning("%s: the approved view %s could not be fetched: again next round", stream.name,
                            stream.reference[:12])  # fmt: skip
                self.applied.pop(stream.name, None)
                return
        self.ingest.set_reference(stream.player, stream.device, reference)
        if reference is None:
            log.info("worker %s: %s has no approved view", self.id, stream.name)
        else:
            log.info("worker %s: %s compared with its approved view %s", self.id, stream.name, stream.reference[:12])

    async def _fetch(self, path: str) -> bytes | None:
        """A GET from the first service process that answers it (None: none did)."""
        assert self.http is not None
        headers = {"Authorization": f"Bearer {self.settings.worker_secret}"}
        for url in self.reports.urls:
            try:
                async with self.http.get(url + path, headers=headers, timeout=aiohttp.ClientTimeout(total=10)) as reply:
                    if reply.status == 200:
                        return await reply.read()
            except (aiohttp.ClientError, TimeoutError):
                continue
        return None

    async def _answer(self, request: dict[str, Any]) -> None:
        """What the service asked about a stream held here: a recording of it from now (``seconds`` of its analysed
        frames, their stills if asked for, and their clip), for an arbiter's prompt or an approved view's still."""
        assert self.ingest is not None
        ident, name = str(request.get("id", "")), str(request.get("stream", ""))
        held = self.held.get(name)
        answer: dict[str, Any]
        if request.get("kind") != "capture" or not ident:
            answer = {"error": "not a request this worker knows"}
        elif held is None:
            answer = {"error": "the stream moved to another analysis worker: try again"}
        else:
            seconds = min(float(request.get("seconds", 2.0)), CAPTURE_MOST_S)
            stills = bool(request.get("stills"))
            try:
                recording = self.ingest.capture(held.stream.player, seconds, stills, held.stream.device)
                answer = {"capture": (await recording).to_json()}
            except LookupError:
                answer = {"error": "the stream is not live"}
        if ident:
            with contextlib.suppress(RedisError):
                await self.registry.answer(ident, answer)

    def _sheds_now(self, now: float, uneven: bool) -> bool:
        """Whether to let a stream go now: the load uneven for :data:`UNEVEN_FOR_S` (not a heartbeat a round behind)
        and no stream let go in the last :data:`REBALANCE_S`."""
        if not uneven or not self.held:
            self.uneven_since = None
            return False
        if self.uneven_since is None:
            self.uneven_since = now
        if now - self.uneven_since < UNEVEN_FOR_S or now - self.shed_at < REBALANCE_S:
            return False
        self.shed_at, self.uneven_since = now, None
        return True

    def _reports(self, now: float) -> dict[str, dict[str, Any]]:
        """What the desk is shown of each held stream (proctor.stream_views)."""
        assert self.ingest is not None
        reports = {}
        for name, held in self.held.items():
            session = self.ingest.sessions.get(held.stream.key)
            if session is not None:
                live = self.ingest.live(held.stream.player, held.stream.device) is not None
                reports[name] = report_of(self.id, session, live, now)
                heard = self.microphone.heard(held.stream.player) if self.microphone is not None else None
                if held.stream.device is Device.FRONT and heard is not None:
                    reports[name]["microphone"] = heard.to_json()
        return reports

    async def _take(self, stream: PublishedStream) -> bool:
        assert self.ingest is not None and self.janus is not None
        handle: JanusHandle | None = None
        try:
            handle = await self.janus.attach()
            if stream.leave_until:
                self.ingest.grant_leave(stream.player, stream.leave_until)
            if stream.device is Device.FRONT:  # before its tracks come: the audio is taken as they arrive
                self.sound_policies[stream.player] = MicrophonePolicy.from_json(stream.sound)
            await self.ingest.subscribe(stream.player, handle, stream.room, stream.feed, policy_of(stream.policy),
                                        stream.device, stream.pin, self.substream)  # fmt: skip
        except (JanusError, TimeoutError, aiohttp.ClientError) as error:
            log.warning("stream %s not taken: %s", stream.name, error)
            self.janus_failed = True
            if handle is not None:
                await handle.detach()
            await self.registry.release(stream.name, self.id)
            return False
        self.held[stream.name] = Held(stream, handle)
        log.info("worker %s took %s", self.id, stream.name)
        return True

    async def _let_go(self, name: str, why: str) -> None:
        assert self.ingest is not None
        held = self.held.pop(name, None)
        self.missing_since.pop(name, None)
        if held is None:
            return
        if held.stream.device is Device.FRONT and self.microphone is not None:
            self.microphone.forget(held.stream.player)
            self.sound_policies.pop(held.stream.player, None)
        await self.ingest.release(held.stream.player, held.stream.device)
        if held.handle is not None:
            await held.handle.detach()
        log.info("worker %s let %s go: %s", self.id, name, why)

    async def close(self) -> None:
        """A worker stopped on purpose lets its streams go at once (the others take them next second)."""
        for task in list(self.tasks):
            task.cancel()
        for name in list(self.held):
            await self._let_go(name, "the worker stops")
            with contextlib.suppress(RedisError):
                await self.registry.seen([name], int(time.time() * 1000))
                await self.registry.release(name, self.id)
        if self.microphone is not None:
            await self.microphone.close()
        await self.reports.drain(5.0)
        await self.reports.close()
        if self.ingest is not None:
            await self.ingest.close()
        if self.processes is not None:
            await asyncio.get_running_loop().run_in_executor(None, self.processes.close)
        self.executor.shutdown(wait=False, cancel_futures=True)
        await self.registry.close()


def default_worker_id() -> str:
    return f"{socket.gethostname()}-{os.getpid()}"


def run_worker(settings: Settings) -> int:
    """``proctor worker``: analyse the streams assigned to this worker until SIGTERM or SIGINT."""

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, stop.set)
        worker = Worker(settings, settings.worker_id or default_worker_id())
        await worker.run(stop)

    asyncio.run(main())
    return 0
