"""Benchmark camera ingest: how many concurrent player streams one ingest process holds, from a separate sender process.

Usage: python benchmarks/streams.py [--quick] [--seconds 12] [--memory-seconds 120] [--fps 15 5] [--probe]

A 640x480 clip (``tests.video.frames.composed``: a real person over a real room photo, swaying a few pixels as a seated
player does, with the camera's noise; a few seconds with nobody in front of the camera) is composed once and encoded to
VP8 (libvpx, ~300 kbit/s, a keyframe every 2 s) into a temp dir, at each sender frame rate. A sender process (this
script with ``--send``, so its CPU is not charged to the ingest process) opens N aiortc peer connections over loopback
(no ICE servers) and relays the clip's packets without re-encoding, looping it with continuous timestamps. Signalling is
one aiohttp endpoint in this (receiving) process.  Each player's loop starts at another of the clip's five keyframes,
so that the players' walk-outs (the dear part: the models look at every frame while nobody is in view) are spread
over the loop as in an event, not all at the same second every 10 s; each stream still has someone leaving and coming
back every 10 s, far more often than a player does.

Two receivers, stepped up in the same run, one at a time:

* checks: ``video.ingest.Ingest`` as ``proctor.camera`` builds it (the available face detector, a 2-thread executor,
  every check on, the default rate of 2 analysed frames/s per stream);
  with ``--clips``, also the evidence clips (an ``on_clip`` handler, where this checkout's ``Ingest`` takes one);
* bare: a plain aiortc peer connection per stream that drains and discards the decoded frames.

For each step (N streams, ``--seconds`` long after the connections are up and a short warm-up):

* analysis latency: ``video.ingest.observe`` is wrapped to record ``time.time() - at`` (``at`` = the frame's receipt
  time), so it includes the executor's queueing: p50 / p99 / max;
* analysed frames per stream per second, against the most the rate allows at that frame rate
  (``fps / ceil(fps / rate)``: a frame is analysed only once the next one is due);
* received (decoded) frames per stream per second, mean and slowest stream, against the sender's frame rate;
* the process RSS (VmRSS) each second; its slope over the second half of the step, in MB/min;
* CPU of this process split by thread (event loop, aiortc decoder threads, the analysis executor, and the threads
  Python does not know: mostly OpenCV's own worker pool inside the detector), and the sender process's CPU.

A step passes when p99 and max latency <= 1 s, analysed >= 90 % of possible, mean received >= 90 % of sent and the RSS
slope <= ``--rss-slope``; a mode stops at its first failing step.  Then the checks mode runs ``--memory-seconds`` at
its best count to show whether memory stays flat.

The whole monitoring set (``--devices front,side,screen,audio``, issue 15): each player opens three connections
as the player's page does, the front camera with the microphone (a quiet room's noise, Opus), the side camera (the
same clip) and the shared screen (the platform's page drawn by ``tests.video.frames.platform_screen``, 1280x720 at
the page's 2 fps, a move a second); the receiver runs what the service runs for them: both cameras' checks, the side
camera and the screen compared with an approved view, the screen's evidence stills, and the microphone's voice model
(``video.audio.MicrophoneSession``, on its own thread).  The counts are then players; latency, analysed and received
rates are the cameras'.  The senders are then one process per 4 players (``--per-sender``): one process's event loop
holds about 40 camera connections but only 8 or so players with microphones, and its cameras falling behind would be
charged to the receiver.  Use ``--warmup 45`` with it: the microphones' 40 s sound rings fill first, which a 12 s step
would read as memory climbing.

Through the SFU (``--sfu``, issue 16): the benchmark starts Debian's Janus (``tests.video.janus_server``: token
authentication on, the VideoRoom plugin only); each sender connection publishes to one room as a player's page would,
and the receiver subscribes to each feed through Janus (``video.janus``, ``video.ingest.Ingest.subscribe``) as an
analysis worker would, instead of taking the senders' offers.  Janus's own CPU is printed after each step.  ``--low``
sends 320x240 at a third of the bitrate instead of 640x480: the low layer of the page's simulcast, which aiortc cannot
send (a separate low stream stands in for it).

Targets (issue 11): >= 20 streams at 15 fps and >= 40 at 5 fps with every check on; through the SFU at the low layer
(issue 16): >= 40 analysed streams per worker process.  Results depend on the CPU count
(printed).  Nothing here is a test.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import inspect
import json
import math
import multiprocessing
import os
import platform
import secrets
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

import aiohttp
import av
import cv2
import numpy as np
from aiohttp import web
from aiortc import (
    AudioStreamTrack,
    MediaStreamTrack,
    RTCConfiguration,
    RTCPeerConnection,
    RTCRtpSender,
    RTCSessionDescription,
)
from aiortc.mediastreams import MediaStreamError
from numpy.typing import NDArray

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run by hand from anywhere, without installing

import video.analysis
from tests.video.frames import composed, platform_screen, room_photo
from tests.video.janus_server import JanusServer, start_janus
from video.audio import MicrophoneSession
from video.checks import Finding, Observation, Thresholds, observe
from video.detectors import available_detector
from video.devices import Device, StreamKey
from video.ingest import Ingest, IngestSettings, StreamSession
from video.janus import JanusAdmin, JanusSession, create_room, janus_session, publish
from video.janus import subscribe as janus_subscribe
from video.landmarks import available_face_mesh
from video.reference_view import ReferenceView
from video.segmentation import available_segmenter
from video.vad import available_vad

MODELS = Path(__file__).resolve().parent.parent / "models"
"""The offline models (``proctor fetch-models``); without them the Haar fallback runs, and the output says so."""

WIDTH, HEIGHT = 640, 480
RATE = 2.0
LATENCY_LIMIT = 1.0
SHARE = 0.9

# --------------------------------------------------------------------------------------------------------------------
# The clip


def compose_clip(folder: Path, fps: int, seconds: float, bitrate: int, size: tuple[int, int] = (WIDTH, HEIGHT)) -> Path:
    """Encode the scene to VP8 at ``fps``: 1 person swaying (3 px, about every 3 s) in a still room, with nobody in
    front of the camera for a short while.  A still room lets the models wait (``video.analysis``): a busier one
    costs up to the figures of a room where something always moves (the benchmark's detectors report says how often
    the models ran on the evaluation set's rooms)."""
    room = room_photo()
    rng = np.random.default_rng(7)
    path = folder / f"clip-{fps}fps-{size[0]}x{size[1]}.webm"
    with av.open(str(path), mode="w") as container:
        stream = container.add_stream("libvpx", rate=fps)
        stream.width, stream.height, stream.pix_fmt = size[0], size[1], "yuv420p"
        stream.bit_rate = bitrate
        stream.codec_context.gop_size = 2 * fps
        stream.codec_context.options = {"deadline": "realtime", "cpu-used": "8", "lag-in-frames": "0"}
        total = int(seconds * fps)
        for index in range(total):
            people = 0 if 0.6 * total <= index < 0.75 * total else 1
            if people:
                sway = round(3 * math.sin(2 * math.pi * index / fps / 3.0))
                picture = composed(room, rng, sway, 1.0, replaced=False)
            else:
                picture = (room + rng.normal(0, 2.5, room.shape)).clip(0, 255).astype(np.uint8)
            if size != (WIDTH, HEIGHT):
                picture = np.asarray(cv2.resize(picture, size, interpolation=cv2.INTER_AREA), dtype=np.uint8)
            frame = av.VideoFrame.from_ndarray(picture, format="bgr24")
            frame.pts = index
            frame.time_base = Fraction(1, fps)
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode(None):
            container.mux(packet)
    return path


SCREEN_SIZE, SCREEN_FPS, SCREEN_BITRATE = (1280, 720), 2, 600_000
"""The shared screen as the player's page sends it (``dashboard/js/player_devices.js``: 2 fps, 600 kbit/s)."""
CAMERAS = ("front", "side")
ROOM = 1
"""The SFU's room the senders publish to (``--sfu``)."""


def compose_screen(folder: Path, seconds: float) -> Path:
    """The platform's page (``tests.video.frames.platform_screen``) at 2 fps, a move played every second, the clocks
    running."""
    path = folder / "screen.webm"
    with av.open(str(path), mode="w") as container:
        stream = container.add_stream("libvpx", rate=SCREEN_FPS)
        stream.width, stream.height, stream.pix_fmt = SCREEN_SIZE[0], SCREEN_SIZE[1], "yuv420p"
        stream.bit_rate = SCREEN_BITRATE
        stream.codec_context.gop_size = 10 * SCREEN_FPS
        stream.codec_context.options = {"deadline": "realtime", "cpu-used": "8", "lag-in-frames": "0"}
        for index in range(int(seconds * SCREEN_FPS)):
            picture = platform_screen(20 + index // SCREEN_FPS, 600 - index // SCREEN_FPS, size=SCREEN_SIZE)
            frame = av.VideoFrame.from_ndarray(picture, format="bgr24")
            frame.pts, frame.time_base = index, Fraction(1, SCREEN_FPS)
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode(None):
            container.mux(packet)
    return path


class RoomNoise(AudioStreamTrack):
    """The microphone: a quiet room's noise (no speech), 48 kHz, encoded to Opus by the sender."""

    def __init__(self) -> None:
        super().__init__()
        self.rng = np.random.default_rng(3)

    async def recv(self) -> av.AudioFrame:
        frame = await super().recv()  # silence, paced in real time
        assert isinstance(frame, av.AudioFrame)
        noise = self.rng.normal(0, 60, frame.samples * len(frame.layout.channels)).astype(np.int16)
        frame.planes[0].update(noise.tobytes())
        return frame


@dataclass
class Clip:
    packets: list[tuple[bytes, int]]
    time_base: Fraction
    duration: int  # in time_base units, one frame interval past the last packet

    @classmethod
    def load(cls, path: str) -> Clip:
        with av.open(path) as container:
            stream = container.streams.video[0]
            assert stream.time_base is not None
            packets = [(bytes(p), int(p.pts)) for p in container.demux(stream) if p.size and p.pts is not None]
            rate = stream.average_rate or stream.guessed_rate or 15
            step = round(1 / (float(rate) * stream.time_base))
            return cls(packets, stream.time_base, packets[-1][1] + step)

    def from_keyframe(self, index: int) -> Clip:
        """The same loop started at its ``index``-th keyframe (counted round the loop), timestamps from 0: players do
        not all leave their seats at the same second."""
        keys = [i for i, (data, _) in enumerate(self.packets) if data and not data[0] & 1]  # VP8: bit 0 clear = key
        if not keys:
            return self
        start = keys[index % len(keys)]
        base = self.packets[start][1]
        rotated = [(d, p - base) for d, p in self.packets[start:]]
        rotated += [(d, p - base + self.duration) for d, p in self.packets[:start]]
        return Clip(rotated, self.time_base, self.duration)


class LoopedClip(MediaStreamTrack):
    """Relays the clip's encoded packets in real time, looping with timestamps that keep increasing.

    (aiortc's ``MediaPlayer(decode=False, loop=True)`` restarts the timestamps at 0 on each loop, so after the first
    pass its pacing is lost and it floods; decoding and re-encoding would charge the sender with VP8 encoding.)
    """

    kind = "video"

    def __init__(self, clip: Clip) -> None:
        super().__init__()
        self.clip = clip
        self.index = 0
        self.start: float | None = None

    async def recv(self) -> av.Packet[Any]:
        if self.readyState != "live":
            raise MediaStreamError
        if self.start is None:
            self.start = time.monotonic()
        lap, position = divmod(self.index, len(self.clip.packets))
        data, pts = self.clip.packets[position]
        pts += lap * self.clip.duration
        wait = self.start + float(pts * self.clip.time_base) - time.monotonic()
        if wait > 0:
            await asyncio.sleep(wait)
        packet = av.Packet(data)
        packet.pts = pts
        packet.time_base = self.clip.time_base
        self.index += 1
        return packet


# --------------------------------------------------------------------------------------------------------------------
# The sender process (--send)


def cpu_seconds(pid: int | str = "self") -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def send_main(url: str, clip_path: str, count: int, devices: list[str], screen_path: str | None,
                    first: int = 0, janus: str = "", janus_token: str = "") -> None:  # fmt: skip
    """Open ``count`` players' streams (a connection per device: ``front`` and ``side`` the camera clip, ``screen``
    the screen clip, ``audio`` the room's noise on the front connection), print a JSON line when they are connected,
    and another when stdin closes.  With ``janus``: each connection publishes to Janus's room, and the receiver is
    told its feed."""
    clip = Clip.load(clip_path)
    screen = Clip.load(screen_path) if screen_path else None
    # aiortc encodes each sound frame (Opus, 50 a second per microphone) and packs each video frame in the loop's
    # default executor (a few threads): with many microphones the cameras' packets waited behind the sound there.
    asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(64, "sender"))
    vp8 = [c for c in RTCRtpSender.getCapabilities("video").codecs if c.mimeType.lower() == "video/vp8"]
    connections: list[RTCPeerConnection] = []
    tracks: list[LoopedClip] = []
    limit = asyncio.Semaphore(8)
    async with aiohttp.ClientSession() as http, contextlib.AsyncExitStack() as stack:
        sfu = await stack.enter_async_context(janus_session(janus, janus_token, http)) if janus else None

        async def connect(index: int, device: str) -> None:
            async with limit:
                pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
                connections.append(pc)
                # Each player's camera starts the loop at another keyframe (5 in the clip): their absences are spread
                # over the loop instead of all at once, every 10 s.
                track = LoopedClip(screen if device == "screen" and screen is not None else clip.from_keyframe(index))
                if device in CAMERAS:
                    tracks.append(track)  # the cameras' rate is the one reported
                transceiver = pc.addTransceiver(track, direction="sendonly")
                transceiver.setCodecPreferences(vp8)
                if device == "front" and "audio" in devices:
                    pc.addTransceiver(RoomNoise(), direction="sendonly")
                player = f"player-{index}"
                if sfu is not None:  # published to the SFU; the receiver subscribes to the feed
                    feed = await publish(await sfu.attach(), pc, ROOM, f"{player}/{device}")
                    async with http.post(url, json={"player": player, "device": device, "feed": feed}) as response:
                        response.raise_for_status()
                    return
                await pc.setLocalDescription(await pc.createOffer())
                offer = pc.localDescription
                body = {"sdp": offer.sdp, "type": offer.type, "player": player, "device": device}
                async with http.post(url, json=body) as response:
                    response.raise_for_status()
                    answer = await response.json()
                await pc.setRemoteDescription(RTCSessionDescription(sdp=answer["sdp"], type=answer["type"]))

        opened = [d for d in devices if d != "audio"]
        players = range(first, first + count)
        await asyncio.gather(*(connect(index, device) for index in players for device in opened))
        await sending(connections, tracks)
        await asyncio.gather(*(pc.close() for pc in connections), return_exceptions=True)


async def sending(connections: list[RTCPeerConnection], tracks: list[LoopedClip]) -> None:
    """Once connected, say so; send until stdin closes, then say at what rate and CPU."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and any(pc.connectionState != "connected" for pc in connections):
        await asyncio.sleep(0.1)
    connected = sum(pc.connectionState == "connected" for pc in connections)
    print(json.dumps({"connected": connected}), flush=True)
    started, cpu_start, sent_start = time.monotonic(), cpu_seconds(), sum(t.index for t in tracks)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)  # until the receiver closes stdin
    elapsed = time.monotonic() - started
    sent = sum(t.index for t in tracks) - sent_start
    cameras = max(len(tracks), 1)
    print(json.dumps({"fps": sent / elapsed / cameras, "cpu": (cpu_seconds() - cpu_start) / elapsed}), flush=True)


# --------------------------------------------------------------------------------------------------------------------
# The receiving side (this process)

latencies: list[float] = []
recording = False


def timed_observe(*args: Any, **kwargs: Any) -> tuple[Observation, NDArray[np.float32]]:
    """``video.checks.observe``, recording how long after its receipt each frame's analysis ended."""
    result = observe(*args, **kwargs)
    if recording:
        latencies.append(time.time() - result[0].at)
    return result


video.analysis.observe = timed_observe  # type: ignore[attr-defined]  # the analyser looks it up at each call

if hasattr(StreamSession, "_look"):  # checkouts that may analyse in processes: timed where both ways meet
    _look = StreamSession._look

    async def timed_look(self: StreamSession, frame: Any, at: float, *rest: Any) -> Any:
        result = await _look(self, frame, at, *rest)
        if recording:
            latencies.append(time.time() - at)
        return result

    video.analysis.observe = observe  # type: ignore[attr-defined]
    StreamSession._look = timed_look  # type: ignore[method-assign,assignment]


def rss_mb() -> float:
    """This process's resident memory, with its analysis processes' (``--processes``)."""
    total = 0.0
    for pid in ["self"] + [str(child.pid) for child in multiprocessing.active_children()]:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) / 1024
        except OSError:
            continue
    return total


def slope_per_minute(samples: list[tuple[float, float]]) -> float:
    if len(samples) < 3:
        return 0.0
    times = np.array([t for t, _ in samples])
    values = np.array([v for _, v in samples])
    return float(np.polyfit(times - times[0], values, 1)[0] * 60)


def thread_cpu() -> dict[str, float]:
    """CPU seconds of this process's threads, grouped: event loop, aiortc decoders, analysis, other."""
    groups: dict[str, float] = {}
    names = {t.native_id: t.name for t in threading.enumerate()}
    for task in Path("/proc/self/task").iterdir():
        try:
            seconds = cpu_seconds(f"self/task/{task.name}")
        except OSError:  # the thread ended
            continue
        name = names.get(int(task.name), "")
        group = ("loop" if name == "MainThread" else "decode" if name.endswith("decoder")
                 else "analysis" if name.startswith(("proctor-video", "proctor-audio", "proctor-analysis"))
                 else "other")  # fmt: skip
        groups[group] = groups.get(group, 0.0) + seconds
    for child in multiprocessing.active_children():  # the analysis processes (--processes): analysis too
        with contextlib.suppress(OSError):
            groups["analysis"] = groups.get("analysis", 0.0) + cpu_seconds(child.pid or 0)
    return groups


class Receiver:
    """Either the checks (Ingest) or bare aiortc decode, behind one signalling endpoint."""

    def __init__(self, mode: str, executor: ThreadPoolExecutor, clips: bool, devices: list[str],
                 processes: int = 0, janus: JanusSession | None = None) -> None:  # fmt: skip
        self.mode = mode
        self.janus = janus
        """The SFU's session the streams are subscribed through (``--sfu``), or None: the senders offer."""
        self.devices = devices
        self.processes: Any = None
        self.microphones: list[MicrophoneSession] = []
        self.audio = ThreadPoolExecutor(1, "proctor-audio")  # the microphone's own thread, as proctor.microphone's
        self.findings = 0
        self.clips = 0
        self.ingest: Ingest | None = None
        self.bare: dict[str, RTCPeerConnection] = {}
        self.bare_frames: dict[str, int] = {}
        self.bare_tasks: set[asyncio.Task[None]] = set()
        if mode == "checks":
            detector, self.note = available_detector(MODELS)
            people, people_note = available_segmenter(MODELS)
            self.note += f"; {people_note}"
            settings = IngestSettings(ice_servers=[], rate=RATE, thresholds=Thresholds())
            extra: dict[str, Any] = {}
            if processes:
                from video.analysis_processes import AnalysisProcesses  # noqa: PLC0415  (newer checkouts only)

                self.processes = AnalysisProcesses(processes, MODELS)
                self.processes.start()
                extra["processes"] = self.processes
            if clips:  # evidence clips, where this checkout's Ingest takes an ``on_clip`` handler
                if "on_clip" not in inspect.signature(Ingest).parameters:
                    raise SystemExit("--clips: this checkout's video.ingest.Ingest takes no on_clip")
                factory: Any = Ingest
                self.ingest = factory(settings, detector, executor, self.on_finding, on_clip=self.on_clip,
                                      people=people, **extra)  # fmt: skip
            else:
                self.ingest = Ingest(settings, detector, executor, self.on_finding, people=people, **extra)
            assert self.ingest is not None
            self.ingest.start()
            if devices != ["front"]:
                self.whole_set(self.ingest)
        else:
            self.note = "bare aiortc receive + decode, frames discarded"

    def whole_set(self, ingest: Ingest) -> None:
        """The rest of the monitoring set as the service runs it: the side camera and the screen compared with their
        approved views (ORB), the screen's evidence stills kept, the microphone's sound judged by the voice model
        (and the mouth looked at while speech is heard: never, in a quiet room)."""
        room, rng = room_photo(), np.random.default_rng(7)
        side = ReferenceView.of(composed(room, rng, 0, 1.0, replaced=False))
        screen = ReferenceView.of(platform_screen(20, 600, size=SCREEN_SIZE))
        vad, _ = available_vad(MODELS)
        mesh, _ = available_face_mesh(MODELS)
        for index in range(500):
            ingest.references[StreamKey(f"player-{index}", Device.SIDE)] = side
            ingest.references[StreamKey(f"player-{index}", Device.SCREEN)] = screen
        ingest.on_still = lambda _key, _at, _still: None

        def hear(stream: StreamSession, track: MediaStreamTrack) -> bool:
            session = MicrophoneSession(stream.player_ref, vad, mesh, self.audio, lambda _p, _f: None,
                                        faces=lambda: stream.faces)  # fmt: skip
            self.microphones.append(session)
            for job in (session.consume(track), session.watch_mouth_on(stream)):
                task = asyncio.get_running_loop().create_task(job)
                stream.tasks.add(task)
                task.add_done_callback(stream.tasks.discard)
            return True

        ingest.on_audio = hear

    def on_finding(self, stream: StreamKey, finding: Finding, snapshot: bytes | None) -> None:
        self.findings += 1

    def on_clip(self, stream: StreamKey, finding: Finding, clip: bytes) -> None:
        self.clips += 1

    async def answer(self, player: str, sdp: str, kind: str, device: str = "front") -> RTCSessionDescription:
        if self.ingest is not None:
            return await self.ingest.answer(player, sdp, kind, device=Device(device))
        pc = self.draining(player, device)
        await pc.setRemoteDescription(RTCSessionDescription(sdp=sdp, type=kind))
        await pc.setLocalDescription(await pc.createAnswer())
        description = pc.localDescription
        assert description is not None
        return description

    async def take(self, player: str, feed: int, device: str = "front") -> None:
        """Subscribe to a sender's feed through the SFU, as an analysis worker would."""
        assert self.janus is not None
        handle = await self.janus.attach()
        if self.ingest is not None:
            await self.ingest.subscribe(player, handle, ROOM, feed, device=Device(device))
            return
        await janus_subscribe(handle, self.draining(player, device), ROOM, feed)

    def draining(self, player: str, device: str) -> RTCPeerConnection:
        """A bare peer connection whose tracks are decoded and dropped, their frames counted."""
        pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
        name = f"{player}/{device}"
        self.bare[name] = pc
        if device in CAMERAS:
            self.bare_frames[name] = 0

        @pc.on("track")
        def on_track(track: MediaStreamTrack) -> None:
            async def drain() -> None:
                while True:
                    try:
                        await track.recv()
                    except MediaStreamError:
                        return
                    if track.kind == "video" and name in self.bare_frames:
                        self.bare_frames[name] += 1

            task = asyncio.get_running_loop().create_task(drain())
            self.bare_tasks.add(task)
            task.add_done_callback(self.bare_tasks.discard)

        return pc

    def searched(self) -> tuple[int, int]:
        """Analysed frames so far, and how many of them the models ran on (checkouts that count them)."""
        sessions = list(self.ingest.sessions.values()) if self.ingest is not None else []
        return sum(s.frames_analysed for s in sessions), sum(s.searches for s in sessions)

    def received(self) -> dict[str, int]:
        """Each camera's frames so far (the screen's rate is its own, and not judged)."""
        if self.ingest is not None:
            return {f"{key.player}/{key.device.value}": s.frames_received
                    for key, s in self.ingest.sessions.items() if key.device.value in CAMERAS}  # fmt: skip
        return dict(self.bare_frames)

    async def close(self) -> None:
        if self.ingest is not None:
            await self.ingest.close()
        for microphone in self.microphones:
            microphone.close()
        self.audio.shutdown(wait=False, cancel_futures=True)
        if self.processes is not None:
            self.processes.close()
        await asyncio.gather(*(pc.close() for pc in self.bare.values()), return_exceptions=True)
        for task in list(self.bare_tasks):
            task.cancel()


@dataclass
class Step:
    mode: str
    fps: int
    streams: int
    connected: int = 0
    seconds: float = 0.0
    p50: float = math.nan
    p99: float = math.nan
    max: float = math.nan
    cameras: int = 1  # analysed cameras per player (the whole set: 2)
    analysed: float = 0.0  # per camera per second
    models: float = math.nan  # share of the analysed frames the models ran on
    possible: float = 0.0
    received: float = 0.0  # mean per stream per second
    slowest: float = 0.0
    sent: float = 0.0
    rss_start: float = 0.0
    rss_end: float = 0.0
    slope: float = 0.0  # MB/min over the second half
    cpu: dict[str, float] = field(default_factory=dict)  # share of one CPU
    sender_cpu: float = 0.0
    janus_cpu: float = math.nan  # share of one CPU (--sfu)
    findings: int = 0
    failures: list[str] = field(default_factory=list)


class Senders:
    """The sender processes of a step: one for every ``per_sender`` players (one aiortc process holds about 40
    camera connections, but only 8 or so players of the whole set: their microphones' Opus encoding and three
    connections each fill its event loop, and its cameras then fall behind, which would be charged to the
    receiver)."""

    def __init__(self, url: str, clip: Path, screen: Path | None, devices: list[str], per_sender: int,
                 janus: tuple[str, str] | None = None) -> None:  # fmt: skip
        self.url, self.clip, self.screen, self.devices, self.per_sender = url, clip, screen, devices, per_sender
        self.janus = janus
        """The SFU's URL and the senders' token (``--sfu``)."""
        self.processes: list[asyncio.subprocess.Process] = []
        self.counts: list[int] = []

    async def start(self, players: int) -> int:
        """Start them and wait until their connections are up; how many are."""
        first = 0
        while first < players:
            count = min(self.per_sender, players - first)
            command = [sys.executable, __file__, "--send", self.url, "--clip", str(self.clip), "--streams",
                       str(count), "--first", str(first), "--devices", ",".join(self.devices)]  # fmt: skip
            if self.screen is not None:
                command += ["--screen-clip", str(self.screen)]
            if self.janus is not None:
                command += ["--janus", self.janus[0], "--janus-token", self.janus[1]]
            process = await asyncio.create_subprocess_exec(*command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
            self.processes.append(process)
            self.counts.append(count)
            first += count
        connected = 0
        for process in self.processes:
            assert process.stdout is not None
            line = await asyncio.wait_for(process.stdout.readline(), 120)
            if not line:
                raise RuntimeError("a sender exited before connecting")
            connected += json.loads(line)["connected"]
        return connected

    async def finish(self) -> tuple[float, float]:
        """Stop sending: the cameras' frames a second (the mean over the players) and the senders' CPU together."""
        finals = []
        for process in self.processes:
            assert process.stdin is not None and process.stdout is not None
            process.stdin.close()
            finals.append(json.loads(await asyncio.wait_for(process.stdout.readline(), 60) or b"{}"))
        fps = sum(f.get("fps", math.nan) * n for f, n in zip(finals, self.counts, strict=True)) / sum(self.counts)
        return fps, sum(f.get("cpu", math.nan) for f in finals)

    async def stop(self) -> None:
        for process in self.processes:
            if process.stdin is not None and not process.stdin.is_closing():
                process.stdin.close()
            try:
                await asyncio.wait_for(process.wait(), 30)
            except TimeoutError:
                process.kill()
                await process.wait()


class Bench:
    def __init__(self, args: argparse.Namespace, clips: dict[int, Path], screen: Path | None) -> None:
        self.args = args
        self.clips = clips
        self.screen = screen
        self.devices: list[str] = args.devices.split(",")
        self.cameras = sum(device in CAMERAS for device in self.devices)
        """Cameras per player: each is analysed (the latency, the analysed and received rates are theirs)."""
        self.receiver: Receiver | None = None
        self.executor = ThreadPoolExecutor(args.threads, "proctor-video")
        self.url = ""
        self.runner: web.AppRunner | None = None
        self.janus: JanusServer | None = None
        """The SFU (``--sfu``), and the tokens of the senders and of the receiver."""
        self.tokens = ("", "")
        self.http: aiohttp.ClientSession | None = None

    async def start_sfu(self, folder: Path) -> None:
        """Janus with its room, and a token each for the senders and the receiver (its admin API)."""
        self.janus = await asyncio.to_thread(start_janus, folder)
        self.http = aiohttp.ClientSession()
        self.tokens = (secrets.token_hex(12), secrets.token_hex(12))
        admin = JanusAdmin(self.janus.admin_url, self.janus.admin_secret, self.http)
        for token in self.tokens:
            await admin.add_token(token)
        async with janus_session(self.janus.url, self.tokens[1], self.http) as session:
            await create_room(await session.attach(), ROOM, secrets.token_hex(12), publishers=1000)

    async def stop_sfu(self) -> None:
        if self.http is not None:
            await self.http.close()
        if self.janus is not None:
            self.janus.stop()

    async def offer(self, request: web.Request) -> web.Response:
        body = await request.json()
        assert self.receiver is not None
        if "feed" in body:
            await self.receiver.take(body["player"], int(body["feed"]), body.get("device", "front"))
            return web.json_response({"subscribed": True})
        answer = await self.receiver.answer(body["player"], body["sdp"], body["type"], body.get("device", "front"))
        return web.json_response({"sdp": answer.sdp, "type": answer.type})

    async def serve(self) -> None:
        app = web.Application()
        app.router.add_post("/offer", self.offer)
        self.runner = web.AppRunner(app, access_log=None)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        host, port = self.runner.addresses[0][:2]
        self.url = f"http://{host}:{port}/offer"

    async def sample(self, receiver: Receiver, start: float, seconds: float) -> list[tuple[float, float]]:
        """The memory each second of the step (and, with ``--probe``, where decoded frames wait)."""
        samples: list[tuple[float, float]] = [(start, rss_mb())]
        while time.time() < start + seconds:
            slept = time.monotonic()
            await asyncio.sleep(1.0)
            samples.append((time.time(), rss_mb()))
            if self.args.probe:
                print(probe(receiver, samples[-1][1], time.monotonic() - slept - 1.0), flush=True)
        return samples

    async def step(self, mode: str, fps: int, streams: int, seconds: float) -> Step:
        global recording  # noqa: PLW0603
        result = Step(mode, fps, streams, cameras=self.cameras)
        sfu: JanusSession | None = None
        if self.janus is not None and self.http is not None:
            sfu = JanusSession(self.janus.url, self.tokens[1], self.http)
            await sfu.create()
        self.receiver = receiver = Receiver(mode, self.executor, self.args.clips, self.devices, self.args.processes,
                                            sfu)  # fmt: skip
        janus = (self.janus.url, self.tokens[0]) if self.janus is not None else None
        senders = Senders(self.url, self.clips[fps], self.screen, self.devices, self.args.per_sender, janus)
        janus_pid = self.janus.process.pid if self.janus is not None and self.janus.process is not None else None
        try:
            result.connected = await senders.start(streams)
            await asyncio.sleep(self.args.warmup)
            latencies.clear()
            recording = True
            start, start_frames, start_cpu = time.time(), receiver.received(), thread_cpu()
            start_searched = receiver.searched()
            janus_start = cpu_seconds(janus_pid) if janus_pid is not None else math.nan
            samples = await self.sample(receiver, start, seconds)
            recording = False
            end_frames, end_cpu = receiver.received(), thread_cpu()
            analysed, searched = (end - begun for end, begun in zip(receiver.searched(), start_searched, strict=True))
            result.models = searched / analysed if analysed and searched else math.nan
            result.seconds = time.time() - start
            if janus_pid is not None:
                result.janus_cpu = (cpu_seconds(janus_pid) - janus_start) / result.seconds
            result.findings = receiver.findings
            result.sent, result.sender_cpu = await senders.finish()
        finally:
            recording = False
            await senders.stop()
            await receiver.close()
            if sfu is not None:
                await sfu.destroy()
            self.receiver = None
        rates = [(end_frames.get(ref, 0) - start_frames.get(ref, 0)) / result.seconds for ref in end_frames]
        rates += [0.0] * (streams * self.cameras - len(rates))
        result.received, result.slowest = statistics.fmean(rates), min(rates)
        result.cpu = {k: (v - start_cpu.get(k, 0.0)) / result.seconds for k, v in end_cpu.items()}
        result.rss_start, result.rss_end = samples[0][1], samples[-1][1]
        result.slope = slope_per_minute(samples[len(samples) // 2 :])
        judge(result, self.args.rss_slope)
        return result


def probe(receiver: Receiver, rss: float, lag: float) -> str:
    """Where decoded frames wait (``--probe``, each second): aiortc's track queues (decoded frames not yet read) and
    decoder queues (encoded frames not yet decoded), the event loop's ready callbacks (among them decoded frames
    handed over by the decoder threads) and how late the loop woke up."""
    waiting = decoding = 0
    connections = receiver.ingest.connections.values() if receiver.ingest is not None else receiver.bare.values()
    for pc in list(connections):
        for rtp in pc.getReceivers():
            queue = getattr(rtp.track, "_queue", None)  # aiortc internals: a diagnostic only
            waiting += queue.qsize() if queue is not None else 0
            decoder = getattr(rtp, "_RTCRtpReceiver__decoder_queue", None)
            decoding += decoder.qsize() if decoder is not None else 0
    ready = len(getattr(asyncio.get_running_loop(), "_ready", ()))
    return (
        f"  probe: RSS {rss:6.0f} MB, decoded frames waiting {waiting:4d}, encoded {decoding:4d}, loop ready "
        f"{ready:4d}, loop {lag * 1000:4.0f} ms late"
    )


def judge(result: Step, rss_slope: float) -> None:
    """Latency figures from the recorded analyses, and why the step fails (nothing when it passes)."""
    if result.mode == "checks":
        values = sorted(latencies)
        if values:
            result.p50 = values[len(values) // 2]
            result.p99 = values[min(len(values) - 1, int(len(values) * 0.99))]
            result.max = values[-1]
        result.analysed = len(values) / result.seconds / (result.streams * result.cameras)
        result.possible = result.fps / math.ceil(result.fps / RATE - 1e-9)
        if not values or result.p99 > LATENCY_LIMIT or result.max > LATENCY_LIMIT:
            result.failures.append("latency")
        if result.analysed < SHARE * result.possible:
            result.failures.append("analysed")
    if result.connected < result.streams:
        result.failures.append("connect")
    if result.received < SHARE * result.fps:
        result.failures.append("received")
    if result.slope > rss_slope:
        result.failures.append("rss")


def fmt(value: float, spec: str) -> str:
    return "-" if math.isnan(value) else format(value, spec)


HEADER = (f"{'mode':6} {'fps':>3} {'n':>3} {'conn':>4} {'p50 ms':>7} {'p99 ms':>7} {'max ms':>7} {'an/s':>5} "
          f"{'mdl':>4} {'rx/s':>5} {'min':>5} {'tx/s':>5} {'RSS MB':>7} {'MB/min':>7} {'cpu loop/dec/ana/cv':>21} "
          f"{'send':>5} {'result':>8}")  # fmt: skip


def row(step: Step) -> str:
    cpu = "/".join(f"{step.cpu.get(k, 0.0):.0%}" for k in ("loop", "decode", "analysis", "other"))
    analysed = f"{step.analysed:5.2f}" if step.mode == "checks" else "    -"
    return (f"{step.mode:6} {step.fps:>3} {step.streams:>3} {step.connected:>4} {fmt(step.p50 * 1000, '7.0f'):>7} "
            f"{fmt(step.p99 * 1000, '7.0f'):>7} {fmt(step.max * 1000, '7.0f'):>7} {analysed} "
            f"{fmt(step.models * 100, '3.0f'):>3}% {step.received:5.1f} "
            f"{step.slowest:5.1f} {fmt(step.sent, '5.1f'):>5} {step.rss_end:7.0f} {step.slope:7.1f} {cpu:>21} "
            f"{fmt(step.sender_cpu, '5.0%'):>5} {','.join(step.failures) or 'ok':>8}"
            + (f"  Janus {step.janus_cpu:.0%}" if not math.isnan(step.janus_cpu) else ""))  # fmt: skip


async def receive_main(args: argparse.Namespace, clips: dict[int, Path], screen: Path | None) -> None:
    bench = Bench(args, clips, screen)
    await bench.serve()
    if args.sfu:
        await bench.start_sfu(Path(args.sfu_folder))
    best: dict[tuple[str, int], int] = {}
    passed: dict[tuple[str, int], Step] = {}
    unbounded: set[tuple[str, int]] = set()  # never failed: the limit lies above the last step tried
    memory: dict[int, Step] = {}
    try:
        print(HEADER, flush=True)
        for fps in args.fps:
            for mode in ("bare", "checks"):
                best[mode, fps] = 0
                for streams in args.steps:
                    step = await bench.step(mode, fps, streams, args.seconds)
                    print(row(step), flush=True)
                    if step.failures:
                        break
                    best[mode, fps], passed[mode, fps] = streams, step
                else:
                    unbounded.add((mode, fps))
            if args.memory_seconds > 0 and best["checks", fps] > 0:
                step = await bench.step("checks", fps, best["checks", fps], args.memory_seconds)
                memory[fps] = step
                print(row(step) + f"   <- memory run, {args.memory_seconds:.0f} s", flush=True)
    finally:
        bench.executor.shutdown(wait=False, cancel_futures=True)
        await bench.stop_sfu()
        if bench.runner is not None:
            await bench.runner.cleanup()
    summarise(args, best, passed, unbounded, memory)


def summarise(args: argparse.Namespace, best: dict[tuple[str, int], int], passed: dict[tuple[str, int], Step],
              unbounded: set[tuple[str, int]], memory: dict[int, Step]) -> None:  # fmt: skip
    print()
    print("Summary (most streams with every analysed frame within 1 s, decode keeping up, memory flat)")
    print(f"{'fps':>3} {'checks':>7} {'bare':>5} {'checks/bare':>12} {'target':>7}   memory run at the checks' best")
    targets = {15: 20, 5: 40}
    for fps in args.fps:
        checks, bare = best["checks", fps], best["bare", fps]
        ratio = f"{checks / bare:.0%}" if bare else "-"
        bounds = (("checks", fps) in unbounded, ("bare", fps) in unbounded)
        ratio = "-" if all(bounds) else (">= " if bounds[0] else "<= " if bounds[1] else "") + ratio
        target = targets.get(fps)
        shown = [f"{best[m, fps]}{'+' if (m, fps) in unbounded else ''}" for m in ("checks", "bare")]
        line = f"{fps:>3} {shown[0]:>7} {shown[1]:>5} {ratio:>12} {'>= ' + str(target) if target else '-':>7}   "
        run = memory.get(fps)
        if run is not None:
            line += (f"{run.streams} streams {run.seconds:.0f} s: RSS {run.rss_start:.0f} -> {run.rss_end:.0f} MB, "
                     f"{run.slope:+.1f} MB/min (2nd half), p99 {fmt(run.p99 * 1000, '.0f')} ms, "
                     f"{','.join(run.failures) or 'ok'}")  # fmt: skip
        else:
            line += "not run"
        print(line)
    print("CPU per frame at each mode's best step (ms of CPU time; 1 CPU = 1,000 ms/s):")
    for (mode, fps), step in sorted(passed.items()):
        if mode == "bare":
            frames = step.received * step.streams
            decode, loop = (step.cpu.get(k, 0) * 1000 / frames for k in ("decode", "loop"))
            print(f"  {fps:>2} fps bare   {step.streams:>3} streams: decode {decode:5.1f}, event loop (RTP, SRTP, "
                  f"jitter buffer) {loop:5.1f} per received frame")  # fmt: skip
        else:
            analysed = step.analysed * step.streams
            work = (step.cpu.get("analysis", 0) + step.cpu.get("other", 0)) * 1000 / analysed
            print(f"  {fps:>2} fps checks {step.streams:>3} streams: analysis (executor + OpenCV pool) {work:5.1f} per"
                  f" analysed frame; whole process {sum(step.cpu.values()):.0%} of one CPU")  # fmt: skip
    print(f"({os.cpu_count()} CPUs; senders in processes of their own on the same machine; the last step of each mode"
          f" is the first that failed, '+' = none failed; {args.seconds:.0f} s per step; steps "
          f"{', '.join(map(str, args.steps))})")  # fmt: skip


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="short steps, coarse counts, a short memory run")
    parser.add_argument("--seconds", type=float, help="measured seconds per step (default 12, quick 5)")
    parser.add_argument("--memory-seconds", type=float, help="memory run length (default 120, quick 20; 0 skips)")
    parser.add_argument("--fps", type=int, nargs="+", default=[15, 5], help="sender frame rates")
    parser.add_argument("--steps", type=int, nargs="+", help="stream counts to try, ascending")
    parser.add_argument("--warmup", type=float, default=2.0, help="seconds after connecting before measuring")
    parser.add_argument("--rss-slope", type=float, default=30.0, help="MB/min over a step's second half that fails")
    parser.add_argument("--clips", action="store_true", help="also keep evidence clips (Ingest's on_clip), if it has")
    parser.add_argument("--clip-seconds", type=float, default=10.0)
    parser.add_argument("--bitrate", type=int, default=300_000)
    parser.add_argument("--threads", type=int, default=2, help="analysis threads (the service's executor has 2)")
    parser.add_argument(
        "--processes",
        type=int,
        default=0,
        help="analyse in this many processes of their own (video.analysis_processes); 0: in threads",
    )
    parser.add_argument("--probe", action="store_true", help="print where decoded frames wait, each second")
    parser.add_argument("--devices", default="front",
                        help="each player's devices: front (default), or the whole set front,side,screen,audio "
                             "(issue 15; the counts are then players)")  # fmt: skip
    parser.add_argument(
        "--sfu",
        action="store_true",
        help="through Debian's Janus (started here): senders publish, the receiver subscribes",
    )
    parser.add_argument(
        "--low", action="store_true", help="320x240 at a third of the bitrate: the low layer of the page's simulcast"
    )
    parser.add_argument("--send", help=argparse.SUPPRESS)
    parser.add_argument("--janus", default="", help=argparse.SUPPRESS)
    parser.add_argument("--janus-token", default="", help=argparse.SUPPRESS)
    parser.add_argument("--screen-clip", help=argparse.SUPPRESS)
    parser.add_argument("--first", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--per-sender", type=int,
                        help="players per sender process (default: all in one; 4 with the whole set)")  # fmt: skip
    parser.add_argument("--clip", help=argparse.SUPPRESS)
    parser.add_argument("--streams", type=int, default=1, help=argparse.SUPPRESS)
    return parser.parse_args()


def main() -> None:
    args = arguments()
    if args.send:
        asyncio.run(
            send_main(
                args.send,
                args.clip,
                args.streams,
                args.devices.split(","),
                args.screen_clip,
                args.first,
                args.janus,
                args.janus_token,
            )
        )
        return
    if args.per_sender is None:
        args.per_sender = 4 if args.devices != "front" else 1_000_000
    if args.seconds is None:
        args.seconds = 5.0 if args.quick else 12.0
    if args.memory_seconds is None:
        args.memory_seconds = 20.0 if args.quick else 120.0
    if args.steps is None:
        args.steps = [4, 8, 16, 24, 32, 48, 64] if args.quick else [4, 8, 12, 16, 20, 24, 32, 40, 48, 64, 80]
    note = f"{available_detector(MODELS)[1]}; {available_segmenter(MODELS)[1]}"
    print(f"Python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} CPUs; aiortc "
          f"{__import__('aiortc').__version__}, PyAV {av.__version__}; {note}; analysis rate {RATE:g}/s per stream, "
          f"{args.threads} analysis threads, {args.processes} analysis processes; devices {args.devices}; "
          f"evidence clips {'on' if args.clips else 'off'}; "
          f"{'through Janus (the SFU)' if args.sfu else 'direct (no SFU)'}")  # fmt: skip
    with tempfile.TemporaryDirectory() as folder:
        started = time.monotonic()
        size, bitrate = ((WIDTH // 2, HEIGHT // 2), args.bitrate // 3) if args.low else ((WIDTH, HEIGHT), args.bitrate)
        clips = {fps: compose_clip(Path(folder), fps, args.clip_seconds, bitrate, size) for fps in args.fps}
        sizes = ", ".join(f"{fps} fps {clips[fps].stat().st_size * 8 / args.clip_seconds / 1000:.0f} kbit/s"
                          for fps in args.fps)  # fmt: skip
        screen = compose_screen(Path(folder), args.clip_seconds) if "screen" in args.devices.split(",") else None
        if screen is not None:
            sizes += (f"; screen {SCREEN_SIZE[0]}x{SCREEN_SIZE[1]} {SCREEN_FPS} fps "
                      f"{screen.stat().st_size * 8 / args.clip_seconds / 1000:.0f} kbit/s")  # fmt: skip
        print(f"clip: {size[0]}x{size[1]} VP8, {args.clip_seconds:g} s ({sizes}), composed in "
              f"{time.monotonic() - started:.1f} s")  # fmt: skip
        if args.sfu:
            args.sfu_folder = str(Path(folder) / "janus")
            Path(args.sfu_folder).mkdir()
        asyncio.run(receive_main(args, clips, screen))


if __name__ == "__main__":
    main()
