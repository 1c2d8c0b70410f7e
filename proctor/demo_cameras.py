"""The demo's simulated cameras (``proctor demo``): a few players' webcams, streamed over real WebRTC to the service's
ingest as the player's page does (a stream link from ``POST …/stream-links``, then ``POST /api/v1/rtc/offer``), each
playing a short scene the checks should notice (36.4): the player leaving the area, a second person coming in, the
picture freezing; then the player sitting still, in a loop.

The pictures: a real face (scikit-image's astronaut, NASA, public domain) over a real room-like photo (its coffee,
CC0), both taken from the pinned scikit-image wheel on PyPI and checked against their SHA-256 (the installed package
when it is there, else the wheel downloaded by pip, as ``proctor fetch-models`` gets the models: video.models).  The
scenes are encoded once to VP8 and kept beside the models; the streams send the encoded packets as they are (no
encoding while the demo runs).  Without the pictures the demo plays its games without cameras, and says why.
"""

from __future__ import annotations

import asyncio
import enum
import hashlib
import math
import shutil
import time
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any, Final

import aiohttp
import av
import cv2
import numpy as np
from aiortc import MediaStreamTrack, RTCConfiguration, RTCPeerConnection, RTCRtpSender, RTCSessionDescription
from aiortc.mediastreams import MediaStreamError
from numpy.typing import NDArray

from video.errors import ModelUnavailableError
from video.models import ModelSource, fetch

Frame = NDArray[np.uint8]

SCIKIT_IMAGE: Final = "scikit-image==0.26.0"
SCIKIT_IMAGE_WHEEL: Final = "scikit_image-0.26.0-cp311-cp311-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl"
SCIKIT_IMAGE_WHEEL_SHA256: Final = "74aa5518ccea28121f57a95374581d3b979839adc25bb03f289b1bc9b99c58af"
LICENCE: Final = "BSD-3-Clause (scikit-image); the pictures public domain (NASA) and CC0"
FACE: Final = ModelSource(
    "astronaut.png", SCIKIT_IMAGE, SCIKIT_IMAGE_WHEEL, SCIKIT_IMAGE_WHEEL_SHA256, "skimage/data/astronaut.png",
    "88431cd9653ccd539741b555fb0a46b61558b301d4110412b5bc28b5e3ea6cb5", LICENCE,
)  # fmt: skip
ROOM: Final = ModelSource(
    "coffee.png", SCIKIT_IMAGE, SCIKIT_IMAGE_WHEEL, SCIKIT_IMAGE_WHEEL_SHA256, "skimage/data/coffee.png",
    "cc02f8ca188b167c775a7101b5d767d1e71792cf762c33d6fa15a4599b5a8de7", LICENCE,
)  # fmt: skip
PICTURES: Final = (FACE, ROOM)
WIDTH, HEIGHT, FPS = 640, 480, 5
"""The size and rate a player's page sends while nobody watches it live (proctor.live_views)."""
CLIPS_VERSION: Final = 3
"""Bumped when the scenes change, so that older encoded clips are not reused."""


class Scene(enum.Enum):
    """What a simulated camera shows, once, before the player sits still in a loop."""

    LEAVES = "leaves"
    """The player is there, gets up and is out of the picture for 9 s, and comes back (36.4.1)."""
    SECOND_PERSON = "second-person"
    """Someone else sits beside the player for 6 s (36.4.2)."""
    FROZEN = "frozen"
    """The picture stops changing for 10 s (a frozen camera, or a still picture played in its place; 36.4)."""
    STILL = "still"
    """The player at the board, nothing else."""


EPISODES: Final[dict[Scene, tuple[tuple[str, float], ...]]] = {
    Scene.LEAVES: (("player", 6.0), ("nobody", 9.0), ("player", 4.0)),
    Scene.SECOND_PERSON: (("player", 6.0), ("two", 6.0), ("player", 4.0)),
    Scene.FROZEN: (("player", 6.0), ("frozen", 10.0), ("player", 4.0)),
    Scene.STILL: (("player", 6.0),),
}
"""Each scene's parts, as (what is in the picture, seconds): each lasts longer than the check's default threshold
(video.checks.Thresholds: 5 s nobody, 2 s another person, 5 s frozen) with room for the analysis' pace."""


class CameraUnavailableError(Exception):
    """The pictures or the encoder are missing: the demo plays without cameras."""


def pictures(folder: Path) -> dict[str, Path]:
    """The face and the room, checked against their pins: from the installed scikit-image when it has them, else
    from its wheel (pip, hash-checked)."""
    folder.mkdir(parents=True, exist_ok=True)
    try:
        import skimage  # noqa: PLC0415 (a test extra: used when it is there)

        installed: Path | None = Path(skimage.__file__).parent / "data"
    except ImportError:
        installed = None
    for source in PICTURES:
        target = folder / source.file
        candidate = installed / source.file if installed is not None else None
        if not _matches(target, source) and candidate is not None and _matches(candidate, source):
            shutil.copyfile(candidate, target)
    try:
        fetch(folder, PICTURES)
    except ModelUnavailableError as error:
        raise CameraUnavailableError(f"the cameras' pictures: {error}") from None
    return {source.file: folder / source.file for source in PICTURES}


def _matches(path: Path, source: ModelSource) -> bool:
    return path.is_file() and hashlib.sha256(path.read_bytes()).hexdigest() == source.sha256


# --- The scenes --------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Pictures:
    room: Frame
    face: Frame
    """The astronaut's portrait at 360x360."""
    alpha: NDArray[np.float32]
    """Where she is in it (head and shoulders), 0 to 1."""

    @classmethod
    def load(cls, paths: dict[str, Path]) -> Pictures:
        room = cv2.imread(str(paths[ROOM.file]))
        face = cv2.imread(str(paths[FACE.file]))
        if room is None or face is None:
            raise CameraUnavailableError("the cameras' pictures cannot be read")
        mask = np.zeros((360, 360), np.uint8)
        cv2.ellipse(mask, (160, 85), (58, 80), 0, 0, 360, 255, -1)
        cv2.fillPoly(mask, [np.array([(95, 128), (225, 128), (262, 200), (268, 360), (12, 360), (22, 200)])], 255)
        return cls(
            np.asarray(cv2.resize(room, (WIDTH, HEIGHT), interpolation=cv2.INTER_AREA), dtype=np.uint8),
            np.asarray(cv2.resize(face, (360, 360), interpolation=cv2.INTER_AREA), dtype=np.uint8),
            np.asarray(cv2.GaussianBlur(mask, (0, 0), 2.0), dtype=np.float32) / np.float32(255),
        )


def _person(pictures: Pictures, canvas: NDArray[np.float32], left: int, top: int, size: int) -> None:
    """The astronaut at ``size`` pixels, her portrait's top left at (left, top), blended into ``canvas``."""
    face = cv2.resize(pictures.face, (size, size)).astype(np.float32)
    alpha = cv2.resize(pictures.alpha, (size, size))[..., None]
    x0, x1 = max(0, left), min(WIDTH, left + size)
    y0, y1 = max(0, top), min(HEIGHT, top + size)
    if x0 >= x1 or y0 >= y1:
        return
    part = (slice(y0 - top, y1 - top), slice(x0 - left, x1 - left))
    region = canvas[y0:y1, x0:x1]
    canvas[y0:y1, x0:x1] = region * (1 - alpha[part]) + face[part] * alpha[part]


def scene_frames(pictures: Pictures, parts: tuple[tuple[str, float], ...], seed: int) -> list[Frame]:
    """The scene's frames at :data:`FPS`: the room with the camera's noise and its exposure drifting slowly (as a
    webcam's does, on the whole picture: a real background follows it), the player swaying a few pixels as a seated
    player does; ``frozen`` repeats one frame exactly."""
    rng = np.random.default_rng(seed)
    noise = [rng.normal(0, 2.5, (HEIGHT, WIDTH, 3)).astype(np.float32) for _ in range(6)]
    frames: list[Frame] = []
    index = 0
    for what, seconds in parts:
        still: Frame | None = None
        for _ in range(round(seconds * FPS)):
            index += 1
            if what == "frozen":
                still = still if still is not None else frames[-1] if frames else None
                if still is not None:
                    frames.append(still)
                    continue
            canvas = pictures.room.astype(np.float32)
            sway = round(3 * math.sin(2 * math.pi * index / FPS / 3.0))
            if what in ("player", "frozen"):
                _person(pictures, canvas, 140 + sway, 120, 360)
            elif what == "two":
                _person(pictures, canvas, 20 + sway, 150, 300)
                _person(pictures, canvas, 330 - sway, 150, 300)
            gain = 1 + 0.03 * math.sin(2 * math.pi * index / FPS / 7.0)  # the camera's exposure, on everything
            frames.append((canvas * gain + noise[index % len(noise)]).clip(0, 255).astype(np.uint8))
    return frames


def encode(frames: list[Frame], path: Path) -> None:
    """VP8 at :data:`FPS` (libvpx's real-time mode, as a browser's encoder), a keyframe every 2 s."""
    partial = path.with_suffix(".partial.webm")
    with av.open(str(partial), mode="w") as container:
        stream: Any = container.add_stream("libvpx", rate=FPS)
        stream.width, stream.height, stream.pix_fmt = WIDTH, HEIGHT, "yuv420p"
        stream.bit_rate = 400_000
        stream.codec_context.gop_size = 2 * FPS
        stream.codec_context.options = {"deadline": "realtime", "cpu-used": "16", "lag-in-frames": "0"}
        stream.codec_context.thread_count = 2
        for index, picture in enumerate(frames):
            frame = av.VideoFrame.from_ndarray(picture, format="bgr24")
            frame.pts = index
            frame.time_base = Fraction(1, FPS)
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode(None):
            container.mux(packet)
    partial.replace(path)


def clip_paths(folder: Path) -> dict[Scene, Path]:
    """Every scene's clip, composed and encoded on first use (a few seconds each)."""
    paths = {scene: folder / f"demo-camera-{scene.value}-v{CLIPS_VERSION}.webm" for scene in Scene}
    missing = [scene for scene, path in paths.items() if not path.is_file()]
    if missing:
        loaded = Pictures.load(pictures(folder))
        for scene in missing:
            encode(scene_frames(loaded, EPISODES[scene], seed=list(Scene).index(scene)), paths[scene])
    return paths


# --- The streams -------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Clip:
    packets: tuple[tuple[bytes, int], ...]
    time_base: Fraction
    duration: int
    """In ``time_base`` units: one frame interval past the last packet."""

    @classmethod
    def load(cls, path: Path) -> Clip:
        with av.open(str(path)) as container:
            stream = container.streams.video[0]
            assert stream.time_base is not None
            packets = tuple((bytes(p), int(p.pts)) for p in container.demux(stream) if p.size and p.pts is not None)
            step = round(1 / (FPS * stream.time_base))
            return cls(packets, stream.time_base, packets[-1][1] + step)


class SceneTrack(MediaStreamTrack):
    """Sends the scene's encoded packets in real time, then the still player's in a loop, with timestamps that keep
    increasing (each clip starts with a keyframe)."""

    kind = "video"

    def __init__(self, episode: Clip, loop: Clip) -> None:
        super().__init__()
        if episode.time_base != loop.time_base:
            raise CameraUnavailableError("the scene's clips differ in time base")
        self.episode, self.loop = episode, loop
        self.sent = 0
        self.start: float | None = None

    async def recv(self) -> av.Packet[Any]:
        if self.readyState != "live":
            raise MediaStreamError
        if self.start is None:
            self.start = time.monotonic()
        first = len(self.episode.packets)
        if self.sent < first:
            data, pts = self.episode.packets[self.sent]
        else:
            lap, position = divmod(self.sent - first, len(self.loop.packets))
            data, pts = self.loop.packets[position]
            pts += self.episode.duration + lap * self.loop.duration
        wait = self.start + float(pts * self.episode.time_base) - time.monotonic()
        if wait > 0:
            await asyncio.sleep(wait)
        packet = av.Packet(data)
        packet.pts = pts
        packet.time_base = self.episode.time_base
        self.sent += 1
        return packet


@dataclass
class Camera:
    player: str
    scene: Scene
    connection: RTCPeerConnection


class Cameras:
    """The demo's simulated cameras: each a peer connection to the service's ingest, as a player's page makes."""

    def __init__(self, clips: dict[Scene, Path]) -> None:
        self.clips = {scene: Clip.load(path) for scene, path in clips.items()}
        self.cameras: list[Camera] = []

    async def connect(self, session: aiohttp.ClientSession, base: str, token: str, player: str, scene: Scene) -> None:
        """Offer the scene's stream with the player's stream token; the service answers."""
        connection = RTCPeerConnection(RTCConfiguration(iceServers=[]))
        track = SceneTrack(self.clips[scene], self.clips[Scene.STILL])
        transceiver = connection.addTransceiver(track, direction="sendonly")
        transceiver.setCodecPreferences(
            [c for c in RTCRtpSender.getCapabilities("video").codecs if c.mimeType.lower() == "video/vp8"]
        )
        self.cameras.append(Camera(player, scene, connection))
        await connection.setLocalDescription(await connection.createOffer())
        offer = connection.localDescription
        body = {"sdp": offer.sdp, "type": offer.type, "token": token}
        async with session.post(f"{base}/api/v1/rtc/offer", json=body) as response:
            answer = await response.json(content_type=None)
            if response.status != 200:
                raise CameraUnavailableError(f"the service refused the camera's offer: {answer.get('message')}")
        await connection.setRemoteDescription(RTCSessionDescription(sdp=answer["sdp"], type=answer["type"]))

    async def close(self) -> None:
        await asyncio.gather(*(camera.connection.close() for camera in self.cameras), return_exceptions=True)
