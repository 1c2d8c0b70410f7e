"""How the camera analysis scales over the machine's cores in the ingest's threads.

Usage: python benchmarks/analysis_scaling.py [--seconds 60] [--workers 1 2] [--streams 8]

The streams.py clip (a person over a real room, swaying; a moment with nobody), through aiortc's own VP8 encoder and
decoder, its analysed frames (2 a second) given to ``--streams`` streams, each with its own
:class:`video.analysis.FrameAnalyser` (its own schedule for the models), analysed as fast as they go by W threads (a
``ThreadPoolExecutor``, one OpenCV thread each, as the ingest's executor; the conversion under its one lock, and the
thumbnail, as the ingest does).  Printed: analysed frames a second and the ratio to one thread.  Nothing else runs
here: no decoding, no event loop (streams.py measures those with the analysis).  It answers whether the
interpreter's lock caps the analysis threads: near W times one thread, it does not.  Compare the ratios within one
run (these machines are noisy).  Nothing here is a test.
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import cv2

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run by hand from anywhere, without installing

from benchmarks.analysis_cost import MODELS, clip_frames
from video.analysis import FrameAnalyser
from video.checks import Monitor, Thresholds
from video.conversion import pixels
from video.detectors import available_detector
from video.ingest import small_jpeg
from video.segmentation import available_segmenter


def in_threads(frames: list[tuple[float, Any]], workers: int, streams: int) -> float:
    """Analysed frames a second with ``workers`` threads, each stream's frames in order (one at a time)."""
    faces, _ = available_detector(MODELS)
    people, _ = available_segmenter(MODELS)
    analysers = [FrameAnalyser(Monitor(Thresholds()), faces, people) for _ in range(streams)]

    def run(stream: int) -> int:
        for at, frame in frames:
            image = pixels(frame)
            analysers[stream].observe(image, at)
            small_jpeg(image)
        return len(frames)

    begun = time.perf_counter()
    with ThreadPoolExecutor(workers) as pool:
        done = sum(pool.map(run, range(streams)))
    return done / (time.perf_counter() - begun)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="clip length (2 analysed frames a second)")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--streams", type=int, default=8)
    args = parser.parse_args()
    cv2.setNumThreads(1)
    frames, _ = clip_frames(args.seconds, 15, 300_000)
    print(f"{len(frames)} analysed frames a stream, {args.streams} streams; {available_detector(MODELS)[1]}; "
          f"{available_segmenter(MODELS)[1]}")  # fmt: skip
    base = in_threads(frames, 1, args.streams)
    print(f"{'threads':>7} {'frames/s':>9} {'ratio':>6}")
    for workers in args.workers:
        threads = base if workers == 1 else in_threads(frames, workers, args.streams)
        print(f"{workers:>7} {threads:9.1f} {threads / base:6.2f}")


if __name__ == "__main__":
    main()
