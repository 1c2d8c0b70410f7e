"""Synthetic camera pictures for the video tests: a real face (scikit-image's astronaut, NASA, public domain, from
the scikit-image wheel) over a textured background, with sensor-like noise."""

from __future__ import annotations

import numpy as np
import skimage.data
from numpy.typing import NDArray

Frame = NDArray[np.uint8]


def _face(size: int) -> Frame:
    rgb = skimage.data.astronaut()  # type: ignore[no-untyped-call]
    step = rgb.shape[0] / size
    rows = (np.arange(size) * step).astype(int)
    face: Frame = rgb[rows][:, rows][..., ::-1].copy()  # RGB → BGR, nearest-neighbour resize
    return face


def background(rng: np.random.Generator) -> Frame:
    y, x = np.mgrid[0:480, 0:640]
    base = (110 + 40 * np.sin(x / 37.0) * np.cos(y / 23.0)).astype(np.float32)
    frame = np.repeat(base[..., None], 3, axis=2) + rng.normal(0, 3, (480, 640, 3))
    return frame.clip(0, 255).astype(np.uint8)


def scene(people: int, rng: np.random.Generator, sway: int = 0, gain: float = 1.0) -> Frame:
    """0, 1 or 2 people in front of the background; ``sway``: the people moved that many pixels to the right (a
    real person is never still: a clip sways them), ``gain``: the camera's exposure, on the whole picture."""
    frame = background(rng)
    if people == 1:
        frame[60:420, 140 + sway : 500 + sway] = _face(360)
    elif people >= 2:
        face = _face(300)
        frame[90:390, 10 + sway // 2 : 310 + sway // 2] = face
        frame[90:390, 330 + sway // 2 : 630 + sway // 2] = face
    if gain != 1.0:
        frame = (frame.astype(np.float32) * gain).clip(0, 255).astype(np.uint8)
    return frame
