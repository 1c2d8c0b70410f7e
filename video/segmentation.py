"""Where the people are in a frame: MediaPipe's selfie segmentation (the landscape model, 256x144), from the
``mediapipe==0.10.21`` wheel on PyPI (fetched by ``proctor fetch-models``, see :mod:`video.models`), run by LiteRT
(:mod:`video.runtimes`; ~3 ms a frame on one core here, against 20 on OpenCV's DNN).

The model answers "which pixels belong to a person" for any picture, and on an empty, textured room it still marks
large regions: the mask alone does not say that someone is there.  The checks therefore use it against what the
stream showed when a face was found (:mod:`video.checks`): the player is still there while the region the player
filled still looks as it did, and a new body is a masked region where the room used to be.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import cv2
import numpy as np
from numpy.typing import NDArray

from video.errors import ModelUnavailableError
from video.models import SELFIE_SEGMENTATION, model_path
from video.runtimes import TfliteNet

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
    net: TfliteNet = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.net = TfliteNet(self.path)  # fails now, not on the first frame

    def segment(self, frame: Frame) -> Mask:
        image = frame if frame.ndim == 3 else cv2.cvtColor(frame, cv2.COLOR_GRAY2BGR)
        _, height, width, _ = self.net.shape
        rgb = cv2.cvtColor(cv2.resize(image, (width, height), interpolation=cv2.INTER_LINEAR), cv2.COLOR_BGR2RGB)
        (out,) = self.net.run((rgb.astype(np.float32) / 255)[None]).values()
        mask: Mask = cv2.resize(out[0, :, :, 0], MASK_SIZE, interpolation=cv2.INTER_AREA).astype(np.float32, copy=False)
        return mask


def available_segmenter(models_dir: Path | None) -> tuple[PersonSegmenter | None, str]:
    """The segmenter the checks use, and a sentence saying which (or why none: the checks then rest on faces)."""
    if models_dir is None:
        return None, "people: off (no models folder given); presence rests on faces"
    try:
        segmenter = SelfieSegmentation(model_path(models_dir, SELFIE_SEGMENTATION))
        return segmenter, "people: selfie segmentation (LiteRT)"
    except ModelUnavailableError as error:
        return None, f"people: off ({error}); presence rests on faces, background checks on the face's box"
