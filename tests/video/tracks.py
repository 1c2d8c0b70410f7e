"""A camera track for aiortc senders in tests and benchmarks: a picture that keeps VP8 busy."""

from __future__ import annotations

import asyncio
import time
from fractions import Fraction

import numpy as np
from aiortc import VideoStreamTrack
from av import VideoFrame


class MovingPicture(VideoStreamTrack):
    """640x480 at ``rate`` frames a second, in real time: a noisy picture sliding a pixel a frame over ``travel``
    pixels and back to the start (as a swaying player: VP8 has work to do)."""

    def __init__(self, rate: int = 15, travel: int = 60) -> None:
        super().__init__()
        self.rate, self.travel = rate, travel
        self.picture = np.random.default_rng(3).integers(0, 255, (480, 640 + travel, 3), dtype=np.uint8)
        self.count = 0
        self.started = time.monotonic()

    async def recv(self) -> VideoFrame:
        await asyncio.sleep(max(0.0, self.started + self.count / self.rate - time.monotonic()))
        shift = self.count % self.travel
        frame = VideoFrame.from_ndarray(np.ascontiguousarray(self.picture[:, shift : shift + 640]), format="bgr24")
        frame.pts, frame.time_base = self.count, Fraction(1, self.rate)
        self.count += 1
        return frame


class Coverable(MovingPicture):
    """:class:`MovingPicture`, or a dark picture while :attr:`covered` (a hand over the lens)."""

    def __init__(self, rate: int = 15, travel: int = 60) -> None:
        super().__init__(rate, travel)
        self.covered = False
        self.dark = np.full((480, 640, 3), 4, dtype=np.uint8)

    async def recv(self) -> VideoFrame:
        frame = await super().recv()
        if not self.covered:
            return frame
        dark = VideoFrame.from_ndarray(self.dark, format="bgr24")
        dark.pts, dark.time_base = frame.pts, frame.time_base
        return dark
