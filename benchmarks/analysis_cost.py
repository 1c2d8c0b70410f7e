"""What one analysed frame costs, part by part, in CPU time (not wall time): figures that hold on a busy machine.

Usage: python benchmarks/analysis_cost.py [--seconds 150] [--fps 15] [--bitrate 300000] [--opencv-threads 1]
       [--repeat 1]

The clip is the one ``benchmarks/streams.py`` streams (``tests.video.frames.composed``: a real person over a real room
photo, swaying a few pixels, the camera's noise, a while with nobody in view), encoded by aiortc's own VP8 encoder and
decoded by its decoder (``benchmarks.vp8.Vp8Link``, the service's decoder).  The frames the ingest would analyse
(2 a second) are kept as the ingest gets them (``video.conversion.picture``), then each part runs over all of them
and is charged the process's CPU time (``time.process_time``) it took:

* decode: aiortc's VP8 decoder, per received frame (the ingest decodes every frame the player sends);
* convert: the decoded frame to a BGR array, per analysed frame;
* grey, grid, edges: ``video.checks.to_grey``, ``_grid`` and ``_edges`` (the blur check's bands) on their own;
* faces, segmentation: the models on every frame (they run on a share of the frames, printed);
* observe: ``video.checks.observe`` with the faces and mask given (the cheap checks, on every analysed frame);
* analyser: ``video.analysis.FrameAnalyser.observe`` as the ingest runs it (the models as it schedules them);
* feed: ``video.checks.Monitor.feed`` (the temporal rules, on the event loop).

The analysis's cost per analysed frame is the analyser's plus the feed's; a stream at 2 analysed frames a second
costs twice that a second, plus the decode of every frame it sends.  OpenCV runs on ``--opencv-threads`` threads
(the ingest's setting is 1).  Nothing here is a test; figures are printed with their ratios to the analyser's.
"""

from __future__ import annotations

import argparse
import inspect
import math
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from aiortc.codecs.vpx import vp8_depayload
from aiortc.jitterbuffer import JitterFrame
from av import VideoFrame

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run by hand from anywhere, without installing

from benchmarks.vp8 import CLOCK, TIME_BASE, Vp8Link
from tests.video.frames import composed, room_photo
from video import checks
from video.analysis import FrameAnalyser
from video.checks import Frame, Monitor, Thresholds, observe, to_grey
from video.conversion import picture
from video.detectors import available_detector
from video.segmentation import available_segmenter

MODELS = Path(__file__).resolve().parent.parent / "models"
RATE = 2.0


def clip_frames(seconds: float, fps: int, bitrate: int) -> tuple[list[tuple[float, Any]], list[float]]:
    """The analysed frames (time, decoded VideoFrame) of the streams.py clip, and the decode CPU of every frame."""
    room = room_photo()
    rng = np.random.default_rng(7)
    link = Vp8Link(bitrate)
    total = int(seconds * fps)
    step = math.ceil(fps / RATE - 1e-9)
    kept: list[tuple[float, Any]] = []
    decode: list[float] = []
    for index in range(total):
        cycle = index % (10 * fps)  # streams.py's 10 s clip, looped: nobody in view for 1.5 s of it
        if 6 * fps <= cycle < 7.5 * fps:
            picture = (room + rng.normal(0, 2.5, room.shape)).clip(0, 255).astype(np.uint8)
        else:
            sway = round(3 * math.sin(2 * math.pi * index / fps / 3.0))
            picture = composed(room, rng, sway, 1.0, replaced=False)
        frame = VideoFrame.from_ndarray(picture, format="bgr24")
        frame.pts, frame.time_base = round(index / fps * CLOCK), TIME_BASE
        payloads, timestamp = link.encoder.encode(frame)
        data = b"".join(vp8_depayload(payload) for payload in payloads)
        if not data:
            continue
        begun = time.process_time()
        decoded = [f for f in link.decoder.decode(JitterFrame(data, timestamp)) if isinstance(f, VideoFrame)]
        decode.append(time.process_time() - begun)
        if index % step == 0:
            kept += [(index / fps, f) for f in decoded]
    return kept, decode


def cost(part: Callable[[int], object], count: int, repeat: int) -> list[float]:
    """CPU milliseconds per call of ``part(i)`` for i in range(count), the least over ``repeat`` passes."""
    best = [math.inf] * count
    for _ in range(repeat):
        for i in range(count):
            begun = time.process_time()
            part(i)
            best[i] = min(best[i], (time.process_time() - begun) * 1000)
    return best


def summary(name: str, values: list[float], base: float, runs: str = "") -> str:
    mean = statistics.fmean(values)
    p90 = sorted(values)[int(0.9 * (len(values) - 1))]
    share = f"{mean / base:6.0%}" if base else "     -"
    return f"  {name:<28} {mean:7.2f} {statistics.median(values):7.2f} {p90:7.2f} {share}  {runs}"


@dataclass
class Costs:
    """CPU milliseconds per call of each part, per analysed frame (decode: per received frame)."""

    parts: dict[str, list[float]] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)
    share: float = 0.0
    """The share of the analysed frames the models ran on (as the analyser schedules them)."""


def measure(images: list[Frame], times: list[float], repeat: int, faces_model: Any, people_model: Any) -> Costs:
    costs = Costs()
    n = len(images)
    # The analyser as the ingest runs it, over the whole clip (its own state from frame to frame).
    analyser = FrameAnalyser(Monitor(Thresholds()), faces_model, people_model)
    observations: list[Any] = []
    costs.parts["FrameAnalyser.observe"] = cost(lambda i: observations.append(analyser.observe(images[i], times[i])),
                                                n, 1)  # fmt: skip
    monitor = Monitor(Thresholds())
    costs.parts["Monitor.feed"] = cost(lambda i: monitor.feed(observations[i]), n, 1)
    costs.share = analyser.searches / max(analyser.frames, 1)
    costs.notes["FrameAnalyser.observe"] = f"models on {analyser.searches} of {analyser.frames} frames"
    scene = analyser.scene

    # The parts on their own, over every frame.
    greys = [to_grey(image) for image in images]
    grids = [checks._grid(grey) for grey in greys]
    shapes = [(grid.shape[0], grid.shape[1]) for grid in grids]
    costs.parts["grey"] = cost(lambda i: to_grey(images[i]), n, repeat)
    costs.parts["grid"] = cost(lambda i: checks._grid(greys[i]), n, repeat)
    costs.parts["edges (bands and gradient)"] = cost(lambda i: checks._edges(greys[i], shapes[i]), n, repeat)
    found: list[Any] = [()] * n
    masks: list[Any] = [None] * n

    def detect(i: int) -> None:
        found[i] = tuple(faces_model.detect(images[i])) if faces_model is not None else ()

    def segment(i: int) -> None:
        masks[i] = people_model.segment(images[i]) if people_model is not None else None

    costs.parts["faces (CenterFace)"] = cost(detect, n, repeat)
    costs.parts["segmentation"] = cost(segment, n, repeat)
    ran = f"run on {costs.share:.0%} of the frames"
    costs.notes["faces (CenterFace)"] = costs.notes["segmentation"] = ran
    costs.parts["observe (cheap checks)"] = cost(
        lambda i: observe(images[i], times[i], grids[i - 1] if i else None, None, found[i], masks[i], scene), n, repeat
    )
    costs.notes["observe (cheap checks)"] = "every frame (edges included)"
    if "bands" in inspect.signature(observe).parameters:  # checkouts that reuse the blur check's bands
        bands = [checks.detail_bands(grey, shape) for grey, shape in zip(greys, shapes, strict=True)]
        costs.parts["observe, bands given"] = cost(
            lambda i: observe(images[i], times[i], grids[i - 1] if i else None, None, found[i], masks[i], scene,
                              bands=bands[i]), n, repeat)  # fmt: skip
        costs.notes["observe, bands given"] = "the frames between the models' runs"
    return costs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=150.0, help="clip length (2 analysed frames a second)")
    parser.add_argument("--fps", type=int, default=15)
    parser.add_argument("--bitrate", type=int, default=300_000)
    parser.add_argument("--opencv-threads", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=1, help="passes per part (the least CPU per frame is kept)")
    args = parser.parse_args()
    cv2.setNumThreads(args.opencv_threads)
    faces_model, faces_note = available_detector(MODELS)
    people_model, people_note = available_segmenter(MODELS)
    print(f"{faces_note}; {people_note}; OpenCV {cv2.__version__} on {cv2.getNumThreads()} thread(s)")
    begun = time.monotonic()
    kept, decode = clip_frames(args.seconds, args.fps, args.bitrate)
    images: list[Frame] = []
    convert = cost(lambda i: images.append(picture(kept[i][1])), len(kept), 1)
    times = [at for at, _ in kept]
    print(f"clip: {args.seconds:g} s at {args.fps} fps, {args.bitrate // 1000} kbit/s; {len(decode)} frames decoded, "
          f"{len(images)} analysed; made in {time.monotonic() - begun:.0f} s")  # fmt: skip
    costs = measure(images, times, args.repeat, faces_model, people_model)
    analysed, feed = costs.parts["FrameAnalyser.observe"], costs.parts["Monitor.feed"]
    base = statistics.fmean(analysed)
    print(f"\nms of CPU per call over {len(images)} analysed frames (mean, median, p90, share of the analyser's mean)")
    print(f"  {'part':<28} {'mean':>7} {'median':>7} {'p90':>7}  share")
    print(summary("decode (every frame sent)", [v * 1000 for v in decode], 0.0))
    print(summary("convert (planes, to BGR)", convert, base))
    for name, values in costs.parts.items():
        if name not in ("FrameAnalyser.observe", "Monitor.feed"):
            print(summary(name, values, base, costs.notes.get(name, "")))
    for name in ("FrameAnalyser.observe", "Monitor.feed"):
        print(summary(name, costs.parts[name], base, costs.notes.get(name, "")))
    per_frame = base + statistics.fmean(feed)
    models = costs.share * (statistics.fmean(costs.parts["faces (CenterFace)"])
                            + statistics.fmean(costs.parts["segmentation"]))  # fmt: skip
    per_second = RATE * per_frame + args.fps * statistics.fmean(decode) * 1000
    print(f"\nper analysed frame: {per_frame:.1f} ms of CPU (analyser + feed; the models' expected share "
          f"{models:.1f}, the cheap checks {statistics.fmean(costs.parts['observe (cheap checks)']):.1f} with the "
          f"edges); per stream at {RATE:g} analysed frames a second and {args.fps} fps decoded: {per_second:.0f} ms "
          f"of CPU a second")  # fmt: skip


if __name__ == "__main__":
    main()
