"""The player's VP8 encoder for the evaluation set: aiortc's own ``Vp8Encoder`` (libvpx, real-time deadline, CBR,
keyframes only on request, made anew when the target bitrate moves by more than 10 %), with its target capped as
the player page caps it (``sender.setParameters({encodings: [{maxBitrate}]})``), and aiortc's ``Vp8Decoder`` on the
service's side.  The live part puts :class:`CappedVp8Encoder` into each aiortc sender; the offline part runs the
same two through :class:`Vp8Link`, with the target following an aiortc receiver's estimates
(:func:`benchmarks.evalset.sender_bitrate`) frame by frame, so that both parts start with the same encoder warm-up.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from aiortc.codecs.vpx import MAX_BITRATE, Vp8Decoder, Vp8Encoder, vp8_depayload
from aiortc.jitterbuffer import JitterFrame
from av import VideoFrame
from numpy.typing import NDArray

CLOCK = 90_000
"""RTP's video clock (aiortc's ``VIDEO_CLOCK_RATE``)."""
TIME_BASE = Fraction(1, CLOCK)
FLOOR = 50_000
"""The lowest target (aiortc's own setter stops at 250 kbit/s; a browser goes lower on a poor link)."""


class CappedVp8Encoder(Vp8Encoder):
    """aiortc's VP8 encoder, its target never above ``cap`` (the page's ``maxBitrate``): the receiver's estimates
    (REMB) can lower it but not raise it beyond.  Everything else, settings included, is aiortc's."""

    def __init__(self, cap: int) -> None:
        super().__init__()
        self.cap = cap
        self.target_bitrate = super().target_bitrate

    @property
    def target_bitrate(self) -> int:
        return int(getattr(self, "_Vp8Encoder__target_bitrate"))  # noqa: B009 (aiortc's name-mangled private)

    @target_bitrate.setter
    def target_bitrate(self, bitrate: int) -> None:
        value = max(FLOOR, min(int(bitrate), self.cap, MAX_BITRATE))
        setattr(self, "_Vp8Encoder__target_bitrate", value)  # noqa: B010 (aiortc's name-mangled private)


class Vp8Link:
    """A sender's encoder and the service's decoder without the network between them (no loss, no jitter)."""

    def __init__(self, cap: int) -> None:
        self.encoder = CappedVp8Encoder(cap)
        self.decoder = Vp8Decoder()
        self.bytes = 0
        self.resets = 0
        """How many times the encoder was made anew (the first time included)."""
        self._codec: object = None

    def send(self, image: NDArray[np.uint8], at: float, bitrate: int | None = None) -> list[VideoFrame]:
        """Encode one BGR frame (``at``: seconds into the stream) and decode what comes out."""
        if bitrate is not None:
            self.encoder.target_bitrate = bitrate
        frame = VideoFrame.from_ndarray(image, format="bgr24")
        frame.pts = round(at * CLOCK)
        frame.time_base = TIME_BASE
        payloads, timestamp = self.encoder.encode(frame)
        if self.encoder.codec is not self._codec:
            self._codec = self.encoder.codec
            self.resets += 1
        data = b"".join(vp8_depayload(payload) for payload in payloads)
        self.bytes += len(data)
        if not data:
            return []
        return [f for f in self.decoder.decode(JitterFrame(data, timestamp)) if isinstance(f, VideoFrame)]
