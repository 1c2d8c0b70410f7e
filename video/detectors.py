"""Face detectors from registry packages (never a model hub).

- :class:`HaarFaces`: OpenCV's Haar cascades, shipped inside the opencv-python-headless 4.x wheel (``cv2.data``;
  OpenCV 5 ships none, hence the pin below 5).  Frontal faces, on a frame scaled to 3/4 (~45 ms at 640x480 here).

:func:`available_detector` says which detector runs, or why none does; the service then reports those checks as off
instead of failing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import cv2

from video.checks import Box, FaceDetector, Frame, boxes_from


@dataclass
class HaarFaces:
    name: str = "haar-frontal"
    scale: float = 0.75
    min_face: int = 20

    def __post_init__(self) -> None:
        path = Path(cv2.data.haarcascades) / "haarcascade_frontalface_alt2.xml"  # type: ignore[attr-defined]
        self.cascade = cv2.CascadeClassifier(str(path))
        if self.cascade.empty():
            raise RuntimeError(f"cannot load {path}")

    def detect(self, grey: Frame) -> list[Box]:
        small = cv2.resize(grey, None, fx=self.scale, fy=self.scale, interpolation=cv2.INTER_AREA)
        small = cv2.equalizeHist(small)
        found = self.cascade.detectMultiScale(small, scaleFactor=1.1, minNeighbors=4, minSize=(self.min_face,) * 2)
        factor = 1 / self.scale
        return [Box(int(b.x * factor), int(b.y * factor), int(b.width * factor), int(b.height * factor))
                for b in boxes_from(list(found))]  # fmt: skip


def available_detector() -> tuple[FaceDetector | None, str]:
    """The detector the checks will use, and a sentence saying which (or why none)."""
    try:
        return HaarFaces(), "faces: OpenCV Haar cascade (frontal)"
    except (RuntimeError, cv2.error) as error:
        return None, f"faces: off ({error}); the presence and second-person checks do not run"
