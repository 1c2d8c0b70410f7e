"""A decoded frame's pixels, one conversion at a time.

A player's decoded frame is shared: aiortc's ``MediaRelay`` hands the same :class:`av.VideoFrame` to the analysis, the
microphone's look at the mouth and the arbiters' live views.  PyAV converts a frame through a scaler cached on the
frame itself, which is not safe to use from two threads at once: two threads converting one frame crash the process
(a segmentation fault within a few hundred conversions here, PyAV 18.1) or hang in it (a full test run's worker
threads were found waiting there for ever).  Different frames convert safely in parallel, so one lock for every
conversion costs little: a conversion takes 1-2 ms against the 20-30 ms of the analysis it feeds.
"""

from __future__ import annotations

import threading

import numpy as np
from av import VideoFrame
from numpy.typing import NDArray

_CONVERTING = threading.Lock()


def pixels(frame: VideoFrame, format: str = "bgr24") -> NDArray[np.uint8]:
    """The frame as an array of ``format`` (``bgr24``, ``rgb24``, ``gray``), converted under the process's one lock."""
    with _CONVERTING:
        return np.asarray(frame.to_ndarray(format=format), dtype=np.uint8)
