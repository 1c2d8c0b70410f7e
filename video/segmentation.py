"""Where the people are in a frame: MediaPipe's selfie segmentation (the landscape model, 256x144), from the
``mediapipe==0.10.21`` wheel on PyPI (fetched by ``proctor fetch-models``, see :mod:`video.models`), run by OpenCV's
DNN module (~10 ms a frame on one core here; no other runtime).

The model answers "which pixels belong to a person" for any picture, and on an empty, textured room it still marks
large regions: the mask alone does not say that someone is there.  The checks therefore use it against what the
stream showed when a face was found (:mod:`video.checks`): the player is still there while the region the player
filled still looks as it did, and a new body is a masked region where the room used to be.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import cv2
import numpy as np
from numpy.typing import NDArray

from video.errors import ModelUnavailableError
from video.models import SELFIE_SEGMENTATION, model_path

Frame = NDArray[np.uint8]
Mask = NDArray[np.float32]

MASK_SIZE = (160, 120)
"""The masks the checks use (width, height): the checks' own grid (a quarter of 640x480)."""


class PersonSegmenter(Protocol):
    name: str

    def segment(self, frame: Frame) -> Mask:
        """How much each cell of a :data:`MASK_SIZE` grid over a BGR frame belongs to a person (0..1)."""
        ...


@dataclass
class SelfieSegmentation:
    path: Path
    name: str = "selfie-segmentation"
    _local: threading.local = field(default_factory=threading.local, repr=False)

    def __post_init__(self) -> None:
        self._net()  # fail now, not on the first frame

    def _net(self) -> cv2.dnn.Net:
        """One network per thread: a DNN forward pass is not safe to share between threads."""
        net = getattr(self._local, "net", None)
        if net is None:
            try:
                net = cv2.dnn.readNetFromTFLite(str(self.path))
            except cv2.error as error:
                raise ModelUnavailableError(f"cannot load {self.path.name}: {error}") from None
            self._local.net = net
        return net

    def segment(self, frame: Frame) -> Mask:
        image = frame if frame.ndim == 3 else cv2.cvtColor(frame, cv2.COLOR_GRAY2BGR)
        blob = cv2.dnn.blobFromImage(image, 1 / 255, (256, 144), swapRB=True)
        net = self._net()
        net.setInput(blob)
        out = net.forward()
        mask: Mask = cv2.resize(out[0, 0], MASK_SIZE, interpolation=cv2.INTER_AREA).astype(np.float32, copy=False)
        return mask


def available_segmenter(models_dir: Path | None) -> tuple[PersonSegmenter | None, str]:
    """The segmenter the checks use, and a sentence saying which (or why none: the checks then rest on faces)."""
    if models_dir is None:
        return None, "people: off (no models folder given); presence rests on faces"
    try:
        segmenter = SelfieSegmentation(model_path(models_dir, SELFIE_SEGMENTATION))
        return segmenter, "people: selfie segmentation (OpenCV DNN)"
    except ModelUnavailableError as error:
        return None, f"people: off ({error}); presence rests on faces, background checks on the face's box"
