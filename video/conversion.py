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

import cv2
import numpy as np
from av import VideoFrame
from numpy.typing import NDArray

_CONVERTING = threading.Lock()

CLIP_SIZE = (320, 240)
"""Clip frames are kept at this size (JPEG), so that a stream's ring buffer stays small (about 10 kB a frame)."""


def pixels(frame: VideoFrame, format: str = "bgr24") -> NDArray[np.uint8]:
    """The frame as an array of ``format`` (``bgr24``, ``rgb24``, ``gray``), converted under the process's one lock."""
    with _CONVERTING:
        return np.asarray(frame.to_ndarray(format=format), dtype=np.uint8)


def planes(frame: VideoFrame) -> NDArray[np.uint8] | None:
    """A ``yuv420p`` frame's three planes as one array (height * 3 / 2 rows, without the decoder's line padding),
    copied under the same lock; None for any other pixel format.  An analysis process receives these (half the
    bytes of the converted picture) and converts them itself (:func:`from_planes`)."""
    if frame.format.name != "yuv420p" or frame.width % 2 or frame.height % 2:
        return None
    with _CONVERTING:
        return np.asarray(frame.to_ndarray(format="yuv420p"), dtype=np.uint8)


def from_planes(data: NDArray[np.uint8]) -> NDArray[np.uint8]:
    """The BGR picture of :func:`planes`' array, converted by OpenCV (BT.601, the chroma upsampled by repetition):
    about a third of the CPU of PyAV's scaler on a frame it has not converted before (0.27 ms against 0.7-0.9 ms at
    640x480), without the lock.  Its pixels differ from the scaler's by about 1 level on average (up to 12 at sharp
    colour edges, where the scaler interpolates the chroma): the analysis is measured on these (:func:`picture`)."""
    return np.asarray(cv2.cvtColor(data, cv2.COLOR_YUV2BGR_I420), dtype=np.uint8)


def picture(frame: VideoFrame) -> NDArray[np.uint8]:
    """The decoded frame as the checks analyse it, in BGR: its planes copied under the lock and converted by
    :func:`from_planes` outside it (so that an analysis process, given the planes, sees the very same pixels); a
    frame in another layout through :func:`pixels`."""
    data = planes(frame)
    return from_planes(data) if data is not None else pixels(frame)


ANALYSED_WIDTH = 640
"""The checks are measured on 640x480 cameras: their grid is a quarter of the frame's size, and the segmenter's mask,
the faces' sizes and margins follow from it."""


def at_analysis_size(image: NDArray[np.uint8]) -> NDArray[np.uint8]:
    """A camera's picture narrower than :data:`ANALYSED_WIDTH` (the distributed mode's low simulcast layer, 320x240)
    scaled up to it (0.3 ms), so that the checks see the frame they were measured on.  Analysed at half size as it
    came, a present player was taken for gone: 5 false ``left-area`` in a 6-minute clip against 1 scaled up
    (benchmarks/detectors.py ``--low``); a larger picture is left as it is."""
    height, width = image.shape[:2]
    if width >= ANALYSED_WIDTH:
        return image
    size = (ANALYSED_WIDTH, round(height * ANALYSED_WIDTH / width))
    return np.asarray(cv2.resize(image, size, interpolation=cv2.INTER_LINEAR), dtype=np.uint8)


def camera_picture(frame: VideoFrame) -> NDArray[np.uint8]:
    """A camera's decoded frame as the checks analyse it: :func:`picture` at :func:`at_analysis_size`."""
    return at_analysis_size(picture(frame))


def to_jpeg(image: NDArray[np.uint8], quality: int = 80) -> bytes:
    ok, encoded = cv2.imencode(".jpg", image, [int(cv2.IMWRITE_JPEG_QUALITY), quality])
    return bytes(encoded) if ok else b""


def small_jpeg(image: NDArray[np.uint8]) -> bytes:
    """The picture at :data:`CLIP_SIZE` as a JPEG: the desk's thumbnail and the clips' frames."""
    small = cv2.resize(image, CLIP_SIZE, interpolation=cv2.INTER_AREA).astype(np.uint8, copy=False)
    return to_jpeg(small, quality=70)
