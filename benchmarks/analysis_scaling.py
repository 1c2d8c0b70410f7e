"""How the camera analysis scales over the machine's cores: in the ingest's threads, or in processes of its own.

Usage: python benchmarks/analysis_scaling.py [--seconds 60] [--workers 1 2] [--streams 8]

The streams.py clip (a person over a real room, swaying; a moment with nobody), through aiortc's own VP8 encoder and
decoder, its analysed frames (2 a second) given to ``--streams`` streams, each with its own
:class:`video.analysis.FrameAnalyser` (its own schedule for the models): analysed as fast as they go by W threads
(a ``ThreadPoolExecutor``, one OpenCV thread each, as the ingest's executor) and by W analysis processes
(:class:`video.analysis_processes.AnalysisProcesses`: the planes over a pipe, the same observations; tested in
tests/video/test_analysis_processes.py).  Printed: analysed frames a second and the ratio to one thread, for each W.
Nothing else runs here: no decoding, no event loop; what streams.py adds on top is its own figure.  Compare the
ratios within one run (these machines are noisy).  Nothing here is a test.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import cv2

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run by hand from anywhere, without installing

from benchmarks.analysis_cost import MODELS, clip_frames
from video.analysis import FrameAnalyser
from video.analysis_processes import AnalysisProcesses
from video.checks import Monitor, Thresholds
from video.conversion import picture, small_jpeg
from video.detectors import available_detector
from video.segmentation import available_segmenter


def in_threads(frames: list[tuple[float, Any]], workers: int, streams: int) -> float:
    """Analysed frames a second with ``workers`` threads, each stream's frames in order (one at a time)."""
    faces, _ = available_detector(MODELS)
    people, _ = available_segmenter(MODELS)
    analysers = [FrameAnalyser(Monitor(Thresholds()), faces, people) for _ in range(streams)]

    def run(stream: int) -> int:
        for at, frame in frames:
            image = picture(frame)
            analysers[stream].observe(image, at)
            small_jpeg(image)
        return len(frames)

    begun = time.perf_counter()
    with ThreadPoolExecutor(workers) as pool:
        done = sum(pool.map(run, range(streams)))
    return done / (time.perf_counter() - begun)


async def in_processes(frames: list[tuple[float, Any]], workers: int, streams: int) -> float:
    pool = AnalysisProcesses(workers, MODELS)
    pool.start()
    try:
        slots = [pool.slot(Thresholds(), 0.9, 2.4, 2.0) for _ in range(streams)]

        async def run(stream: int) -> int:
            for at, frame in frames:
                await slots[stream].look(frame, at, False, False)
            return len(frames)

        await slots[0].look(frames[0][1], 0.0, False, False)  # every process warm (its first forward passes)
        begun = time.perf_counter()
        done = sum(await asyncio.gather(*(run(stream) for stream in range(streams))))
        return done / (time.perf_counter() - begun)
    finally:
        pool.close()


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
    print(f"{'workers':>7} {'threads fr/s':>13} {'ratio':>6} {'processes fr/s':>15} {'ratio':>6}")
    for workers in args.workers:
        threads = base if workers == 1 else in_threads(frames, workers, args.streams)
        processes = asyncio.run(in_processes(frames, workers, args.streams))
        print(f"{workers:>7} {threads:13.1f} {threads / base:6.2f} {processes:15.1f} {processes / base:6.2f}")


if __name__ == "__main__":
    main()
