"""The face mesh (MediaPipe's ``face_landmark.tflite``, 468 points, from the pinned ``mediapipe`` wheel like the person
segmentation), run by LiteRT (:mod:`video.runtimes`) on a face the detector found: the microphone check reads the
mouth's opening from it (:func:`video.speech.mouth_openness`).  About 2 ms a face here; it runs only while speech is
heard."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
from numpy.typing import NDArray

from video.checks import Box
from video.errors import ModelUnavailableError
from video.models import FACE_LANDMARK, model_path
from video.runtimes import TfliteNet

SIZE = 192
MARGIN = 1.5
"""The crop around the face's box, as a multiple of its larger side (the mesh wants the whole head with a margin)."""


class FaceMesh:
    name = "face mesh"

    def __init__(self, path: Path) -> None:
        self.net = TfliteNet(path)

    def points(self, rgb: NDArray[np.uint8], face: Box) -> NDArray[np.float32] | None:
        """The mesh's points (x, y, z in the 192-pixel crop) of the face in this RGB frame; None when the model says
        no face is there."""
        side = int(max(face.width, face.height) * MARGIN)
        cx, cy = face.x + face.width // 2, face.y + face.height // 2
        x0, y0 = cx - side // 2, cy - side // 2
        height, width = rgb.shape[:2]
        pad = max(0, -x0, -y0, x0 + side - width, y0 + side - height)
        image = cv2.copyMakeBorder(rgb, pad, pad, pad, pad, cv2.BORDER_REPLICATE) if pad else rgb
        crop = image[y0 + pad : y0 + pad + side, x0 + pad : x0 + pad + side]
        if crop.size == 0:
            return None
        tensor = cv2.resize(crop, (SIZE, SIZE), interpolation=cv2.INTER_LINEAR).astype(np.float32) / 255
        found = self.net.run(tensor[None]).values()
        mesh = next((o for o in found if o.size == 468 * 3), None)
        score = next((float(o.ravel()[0]) for o in found if o.size == 1), 0.0)
        if mesh is None or score < 0.0:  # a logit: below 0 the model does not see a face
            return None
        return mesh.reshape(468, 3).astype(np.float32)


def available_face_mesh(models_dir: Path) -> tuple[FaceMesh | None, str]:
    try:
        return FaceMesh(model_path(models_dir, FACE_LANDMARK)), "mouth: face mesh (face_landmark.tflite)"
    except ModelUnavailableError as error:
        return None, f"mouth: the mouth region's motion ({error})"
