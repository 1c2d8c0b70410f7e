"""Benchmark the arbiters' live camera views (issue 13): what one relayed view costs the service, and the frames a
second its viewer gets, for N = 1, 4 and 12 views of one player at 640x480 15 fps.

Usage: python benchmarks/live_view.py [--views 1 4 12] [--seconds 10] [--size small] [--decode]

The real app (``create_app``, the service's defaults, its own temporary SQLite file) runs in this process on
127.0.0.1.  A sender process (this script with ``--send``) is the player's camera: an aiortc peer that encodes a
moving 640x480 picture live at 15 fps (VP8) and publishes it through ``/api/v1/rtc/offer`` with the player's stream
token, as the player's page does.  For each N, a viewer process (``--watch``) opens N views through
``POST /api/v1/players/{player}/live-view`` (an arbiter's bearer token), each an aiortc peer that receives and counts
the frames that arrive whole (decoding twelve 640x480 streams in one Python process would measure that process, not
the service; ``--decode`` decodes every frame).  Once every view has frames and a warm-up has passed, the service's
CPU (this process, utime + stime) is measured for ``--seconds`` while the viewers count their frames.  Step 0 is the
stream with nobody watching (the ingest and the analysis alone).  The sender's and the viewers' CPU is theirs.

Printed per step: the service's CPU as a share of one core; over the stream alone (measured first and last: the
lower), in all, per view, and against one view (the relay's re-encode: aiortc encodes VP8 once per viewer); the
viewers' frames a second (mean and slowest) and frame size; the frames received from the sender and analysed a second
(the analysis keeps ``ANALYSIS_RATE`` whatever the sending rate); the frames the service encoded a second, the
encoder's CPU per frame (``Vp8Encoder.encode`` timed in its threads) and the service's CPU per relayed frame.  Then a
view's cost at ``LIVE_VIEW_RATE`` and how many views one core would take at it, beside ``LIVE_VIEWS_MAX``.  Figures
are noisy on a loaded machine: compare ratios in one run.  Nothing here is a test.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web
from aiortc import RTCConfiguration, RTCPeerConnection, RTCSessionDescription, rtcrtpreceiver
from aiortc.codecs import vpx
from aiortc.codecs.base import Decoder
from aiortc.jitterbuffer import JitterFrame
from aiortc.mediastreams import MediaStreamTrack
from av import VideoFrame
from sqlalchemy import insert

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run by hand from anywhere, without installing

from proctor.accounts import token_hash
from proctor.app import create_app
from proctor.context import CONTEXT
from proctor.database import create_database_engine
from proctor.models import Arbiter
from proctor.settings import Settings
from proctor.signatures import signed_headers
from tests.proctor.conftest import iso, register_platform
from tests.video.tracks import MovingPicture

PLAYER = "bench-b"
ARBITER_TOKEN = "bench-arbiter"
AUTH = {"Authorization": f"Bearer {ARBITER_TOKEN}"}
FPS = 15
WARM_UP_S = 3.0


def cpu_seconds(pid: int | str = "self") -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# --------------------------------------------------------------------------------------------------------------------
# The player's camera (--send URL TOKEN)


async def send_main(base: str, token: str) -> None:
    """Publish the camera, say so, and keep it up until stdin closes."""
    pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
    pc.addTrack(MovingPicture(FPS, travel=120))
    await pc.setLocalDescription(await pc.createOffer())
    async with aiohttp.ClientSession() as http:
        body = {"sdp": pc.localDescription.sdp, "type": "offer", "token": token}
        async with http.post(f"{base}/api/v1/rtc/offer", json=body) as response:
            response.raise_for_status()
            answer = await response.json()
    await pc.setRemoteDescription(RTCSessionDescription(answer["sdp"], answer["type"]))
    print(json.dumps({"sending": True}), flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    await pc.close()


# --------------------------------------------------------------------------------------------------------------------
# The arbiters' browsers (--watch URL N SECONDS SIZE DECODE)


class CountingDecoder(Decoder):
    """Decodes until it has a picture (to know its size), then only counts the frames that arrive whole: the viewers'
    decoding is not what is measured, and 12 of them would take the viewer process's core (``--decode``: all)."""

    def __init__(self, real: Decoder) -> None:
        self.real = real
        self.picture: VideoFrame | None = None

    def decode(self, encoded_frame: JitterFrame) -> list[Any]:
        if self.picture is None:
            frames = self.real.decode(encoded_frame)
            if frames and isinstance(frames[-1], VideoFrame):
                self.picture = frames[-1]
            return frames
        self.picture.pts = encoded_frame.timestamp
        return [self.picture]


async def watch_main(base: str, count: int, seconds: float, size: str, decode: bool) -> None:
    """Open ``count`` views; once each has frames and the warm-up passed, print ``start``, count frames for
    ``seconds``, and print each view's frames a second and frame size."""
    if not decode:
        real = getattr(rtcrtpreceiver, "get_decoder")  # noqa: B009 (aiortc's own name, not exported)
        setattr(rtcrtpreceiver, "get_decoder", lambda codec: CountingDecoder(real(codec)))  # noqa: B010
    frames: list[list[tuple[float, int, int]]] = [[] for _ in range(count)]
    connections: list[RTCPeerConnection] = []
    refused: list[int] = []

    def counter(index: int, track: MediaStreamTrack) -> None:
        async def count_frames() -> None:
            while True:
                try:
                    frame = await track.recv()
                except Exception:
                    return
                if isinstance(frame, VideoFrame):
                    frames[index].append((time.monotonic(), frame.width, frame.height))

        asyncio.get_running_loop().create_task(count_frames())

    async with aiohttp.ClientSession() as http:
        for index in range(count):
            pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
            pc.addTransceiver("video", direction="recvonly")
            pc.on("track", lambda track, index=index: counter(index, track))
            await pc.setLocalDescription(await pc.createOffer())
            body = {"sdp": pc.localDescription.sdp, "type": "offer", "size": size}
            async with http.post(f"{base}/api/v1/players/{PLAYER}/live-view", json=body, headers=AUTH) as response:
                answer = await response.json()
                if response.status != 201:
                    refused.append(response.status)
                    await pc.close()
                    continue
            await pc.setRemoteDescription(RTCSessionDescription(answer["sdp"], answer["type"]))
            connections.append(pc)
    deadline = time.monotonic() + 30
    watching = [f for f in frames[: len(connections)]]
    while time.monotonic() < deadline and not all(watching):
        await asyncio.sleep(0.1)
    await asyncio.sleep(WARM_UP_S)
    print(json.dumps({"start": True, "refused": refused}), flush=True)
    started = time.monotonic()
    await asyncio.sleep(seconds)
    ended = time.monotonic()
    rates = [sum(started <= at < ended for at, _, _ in f) / (ended - started) for f in watching]
    sizes = sorted({(w, h) for f in watching for _, w, h in f[-5:]})
    print(json.dumps({"fps": rates, "sizes": sizes, "refused": refused}), flush=True)
    await asyncio.gather(*(pc.close() for pc in connections), return_exceptions=True)


# --------------------------------------------------------------------------------------------------------------------
# The service (this process)


class EncoderClock:
    """The CPU the service's VP8 encoders spend (aiortc encodes in its executor's threads): ``Vp8Encoder.encode``
    wrapped to add up its thread CPU time and count its frames."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.frames = 0
        self.lock = threading.Lock()
        encode = vpx.Vp8Encoder.encode

        def timed(encoder: vpx.Vp8Encoder, *args: Any, **kwargs: Any) -> Any:
            started = time.thread_time()
            try:
                return encode(encoder, *args, **kwargs)
            finally:
                with self.lock:
                    self.seconds += time.thread_time() - started
                    self.frames += 1

        vpx.Vp8Encoder.encode = timed  # type: ignore[method-assign,assignment]

    def read(self) -> tuple[float, int]:
        with self.lock:
            return self.seconds, self.frames


ENCODERS = EncoderClock()


async def prepare(base: str, secret: str) -> str:
    """A game in play with the player, and the player's stream token."""
    start = int(time.time() * 1000) - 5_000
    created = {"black": {"id": PLAYER, "name": "Bench"}, "white": {"id": "bench-w", "name": "Other"},
               "rule": "renju", "time_control": "rapid-15", "start_at": iso(start)}  # fmt: skip
    events = [("game.created", created, start - 60_000)]
    events += [("player.joined", {"player": p}, start - 30_000) for p in (PLAYER, "bench-w")]
    async with aiohttp.ClientSession() as http:
        for seq, (kind, data, at) in enumerate(events, start=1):
            body = json.dumps({"type": kind, "game_id": "g1", "seq": seq, "at": iso(at), "data": data}).encode()
            headers = signed_headers(secret, f"msg_{seq}", int(time.time()), body)
            async with http.post(f"{base}/api/v1/webhooks/bench", data=body, headers=headers) as response:
                response.raise_for_status()
        async with http.post(f"{base}/api/v1/players/{PLAYER}/stream-token", headers=AUTH) as response:
            response.raise_for_status()
            return str((await response.json())["token"])


async def step(app: web.Application, base: str, views: int, seconds: float, size: str, decode: bool) -> dict[str, Any]:
    session = app[CONTEXT].camera.ingest.live(PLAYER)
    viewer = None
    if views:
        viewer = await asyncio.create_subprocess_exec(
            sys.executable, __file__, "--watch", base, str(views), str(seconds), size, str(int(decode)),
            stdout=subprocess.PIPE,
        )  # fmt: skip
        assert viewer.stdout is not None
        json.loads(await asyncio.wait_for(viewer.stdout.readline(), 60))  # start
    else:
        await asyncio.sleep(WARM_UP_S)
    cpu0, analysed0, t0, encoded0 = cpu_seconds(), session.frames_analysed, time.monotonic(), ENCODERS.read()
    received0 = session.frames_received
    if viewer is not None:
        assert viewer.stdout is not None
        result = json.loads(await asyncio.wait_for(viewer.stdout.readline(), seconds + 60))
        await asyncio.wait_for(viewer.wait(), 30)
    else:
        await asyncio.sleep(seconds)
        result = {"fps": [], "sizes": [], "refused": []}
    elapsed = time.monotonic() - t0
    encoded = ENCODERS.read()
    frames = encoded[1] - encoded0[1]
    return {"views": views, "cpu": (cpu_seconds() - cpu0) / elapsed, "encoded": frames / elapsed,
            "encode_ms": 1000 * (encoded[0] - encoded0[0]) / frames if frames else float("nan"),
            "analysed": (session.frames_analysed - analysed0) / elapsed,
            "received": (session.frames_received - received0) / elapsed, **result}  # fmt: skip


async def main(args: argparse.Namespace) -> None:
    folder = Path(tempfile.mkdtemp(prefix="live-view-bench-"))
    url = f"sqlite:///{folder / 'proctor.db'}"
    secret = register_platform(url, "bench")
    settings = Settings(database_url=url, media_dir=str(folder / "media"), models_dir=args.models)
    engine = create_database_engine(settings)
    with engine.begin() as connection:
        connection.execute(insert(Arbiter).values(name="Bench", role="chief", token_hash=token_hash(ARBITER_TOKEN)))
    engine.dispose()
    app = create_app(settings)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    host, port = runner.addresses[0][:2]
    base = f"http://{host}:{port}"
    sender = None
    try:
        token = await prepare(base, secret)
        sender = await asyncio.create_subprocess_exec(sys.executable, __file__, "--send", base, token,
                                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE)  # fmt: skip
        assert sender.stdout is not None
        json.loads(await sender.stdout.readline())
        ingest = app[CONTEXT].camera.ingest
        while ingest.live(PLAYER) is None or ingest.live(PLAYER).frames_received < FPS:
            await asyncio.sleep(0.2)
        print(f"CPUs: {os.cpu_count()}, LIVE_VIEWS_MAX {settings.live_views_max}, LIVE_VIEW_RATE "
              f"{settings.live_view_rate}, ANALYSIS_RATE {settings.analysis_rate}; sender 640x480 {FPS} fps VP8; "
              f"views {args.size}; {args.seconds:.0f} s a step; viewers "
              f"{'decode every frame' if args.decode else 'count whole frames'}")  # fmt: skip
        results = [await step(app, base, 0, args.seconds, args.size, args.decode)]
        for views in args.views:
            results.append(await step(app, base, views, args.seconds, args.size, args.decode))
            await asyncio.sleep(2)  # the views' ends audited, their connections closed
        results.append(await step(app, base, 0, args.seconds, args.size, args.decode))
        report(results, settings)
    finally:
        if sender is not None and sender.stdin is not None:
            sender.stdin.close()
            await sender.wait()
        await runner.cleanup()


def report(results: list[dict[str, Any]], settings: Settings) -> None:
    """One row per step; the stream alone (nobody watching) is measured first and last, and the lower of the two is
    what the views are counted over."""
    alone = [r for r in results if not r["views"]]
    base = min(r["cpu"] for r in alone)
    watched = [r for r in results if r["views"]]
    one = next((r["cpu"] - base for r in watched if r["views"] == 1), None)
    print(f"{'views':>5} {'service':>7} {'+views':>6} {'/view':>6} {'x 1':>5} {'fps':>5} {'min':>5} {'size':>7} "
          f"{'in/s':>5} {'anl/s':>5} {'enc/s':>6} {'enc ms':>6} {'ms/relayed':>10}")  # fmt: skip
    for result in results:
        views, fps = result["views"], result["fps"]
        extra = result["cpu"] - base
        size = "x".join(map(str, result["sizes"][0])) if result["sizes"] else "-"
        print(f"{views:5d} {result['cpu']:7.1%} {extra:6.1%} "
              f"{(extra / views if views else float('nan')):6.1%} "
              f"{(extra / one if views and one else float('nan')):5.2f} "
              f"{(statistics.mean(fps) if fps else float('nan')):5.1f} {(min(fps) if fps else float('nan')):5.1f} "
              f"{size:>7} {result['received']:5.1f} {result['analysed']:5.2f} {result['encoded']:6.1f} "
              f"{result['encode_ms']:6.1f} {per_frame(result, base):10.1f}"
              + (f"  refused: {result['refused']}" if result["refused"] else ""))  # fmt: skip
    # A view's cost at the live rate from the service's CPU per frame it relayed (whatever rate the machine let the
    # viewers have) and from the encoder's own CPU per frame: both hold on a loaded machine, where the views' frame
    # rate is the first thing to fall.
    rate = settings.live_view_rate
    costs = [per_frame(r, base) * rate / 1000 for r in watched if sum(r["fps"])]
    encode = [r["encode_ms"] * rate / 1000 for r in watched]
    worst = max(*costs, *encode)
    print(f"stream alone: {base:.1%} of a core; a view at {rate:.0f} fps: {min(costs):.1%}-{max(costs):.1%} of a core "
          f"over the stream alone, its VP8 encode {min(encode):.1%}-{max(encode):.1%}; at {worst:.1%} a view, one core "
          f"takes {int((1 - base) / worst) if worst > 0 else 0} views beside the stream "
          f"(LIVE_VIEWS_MAX = {settings.live_views_max})")  # fmt: skip


def per_frame(result: dict[str, Any], base: float) -> float:
    """The service's CPU (ms) per frame relayed to a viewer, over the stream alone."""
    relayed = sum(result["fps"])
    return 1000 * (result["cpu"] - base) / relayed if relayed else float("nan")


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--views", type=int, nargs="+", default=[1, 4, 12])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--size", choices=["small", "large"], default="small")
    parser.add_argument("--models", default="models", help="the offline models (as the service's MODELS_DIR)")
    parser.add_argument("--decode", action="store_true", help="the viewers decode every frame (a real browser's work)")
    return parser.parse_args()


if __name__ == "__main__":
    if sys.argv[1:2] == ["--send"]:
        asyncio.run(send_main(sys.argv[2], sys.argv[3]))
    elif sys.argv[1:2] == ["--watch"]:
        asyncio.run(watch_main(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), sys.argv[5], sys.argv[6] == "1"))
    else:
        asyncio.run(main(parse()))
