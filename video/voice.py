"""An arbiter's voice to a player's page (issue 15, "Talking to the player"): the arbiter's microphone, received on a
peer connection of its own, sent on to the player's front-camera connection, whose page plays it.

A :class:`PlayerVoice` is kept per player across the page's reconnections: each front connection whose offer can
receive sound gets a new :class:`VoiceTrack` from it (:meth:`PlayerVoice.outlet`), and while an arbiter speaks
(:meth:`PlayerVoice.speak`) a task pumps the arbiter's decoded frames to the latest outlet.  Between talks the
outlet sends nothing at all (its ``recv`` waits): no sound is encoded for the hundreds of players nobody speaks to.
Frames are stamped again on the outlet's own clock, continuous while a talk lasts and jumping over the silence
between talks, as a muted sender's would.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from fractions import Fraction

from aiortc import MediaStreamTrack
from aiortc.mediastreams import MediaStreamError
from av import AudioFrame

log = logging.getLogger("video.voice")

QUEUE_FRAMES = 25
"""At most this many frames wait for the player's connection (0.5 s at 20 ms a frame); older ones are dropped."""


class VoiceTrack(MediaStreamTrack):
    """The sound a player's page receives: the frames an arbiter's talk puts in, nothing between talks."""

    kind = "audio"

    def __init__(self) -> None:
        super().__init__()
        self.queue: asyncio.Queue[AudioFrame] = asyncio.Queue(QUEUE_FRAMES)
        self.started: float | None = None
        self.next_pts = 0

    def put(self, frame: AudioFrame) -> None:
        if self.queue.full():
            self.queue.get_nowait()  # the connection is behind: the oldest sound goes
        self.queue.put_nowait(frame)

    async def recv(self) -> AudioFrame:
        if self.readyState != "live":
            raise MediaStreamError
        frame = await self.queue.get()
        now = time.monotonic()
        if self.started is None:
            self.started = now
        rate = frame.sample_rate
        # Continuous within a talk; after a silence, on from where the clock is (the receiver's jitter buffer sees
        # a gap, as after a muted sender).
        pts = max(self.next_pts, round((now - self.started) * rate))
        frame.pts, frame.time_base = pts, Fraction(1, rate)
        self.next_pts = pts + frame.samples
        return frame


class PlayerVoice:
    """What arbiters say to one player, whichever of the player's front connections is the latest."""

    def __init__(self) -> None:
        self.track: VoiceTrack | None = None
        self.source: MediaStreamTrack | None = None
        self.pump: asyncio.Task[None] | None = None
        self.frames = 0
        """Frames passed on to the player (for the desk and the tests)."""

    def outlet(self) -> VoiceTrack:
        """A new track for a new front connection of the player (the older one's, if any, is stopped)."""
        if self.track is not None:
            self.track.stop()
        self.track = VoiceTrack()
        return self.track

    def detach(self) -> None:
        """The player's latest front connection cannot play sound: nothing goes to the older one's track."""
        self.silence()
        if self.track is not None:
            self.track.stop()
        self.track = None

    @property
    def speaking(self) -> bool:
        return self.source is not None

    def speak(self, source: MediaStreamTrack) -> None:
        """Pass ``source`` (an arbiter's microphone) on to the player until :meth:`silence`."""
        self.silence()
        self.source = source
        self.pump = asyncio.get_running_loop().create_task(self._pump(source))

    def silence(self) -> None:
        if self.pump is not None:
            self.pump.cancel()
        self.pump, self.source = None, None

    async def _pump(self, source: MediaStreamTrack) -> None:
        with contextlib.suppress(MediaStreamError, asyncio.CancelledError):
            while True:
                frame = await source.recv()
                if isinstance(frame, AudioFrame) and self.track is not None and self.track.readyState == "live":
                    self.track.put(frame)
                    self.frames += 1

    async def close(self) -> None:
        pump = self.pump
        self.silence()
        if pump is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await pump
        if self.track is not None:
            self.track.stop()
