"""The evaluation set's pictures: a clip's frames as the player's camera would give them to the sender, composed from
registry media (``benchmarks/media.py``) following a :class:`benchmarks.evalset.ClipSpec`.

* people: cut out of the portraits with ``cv2.grabCut`` (a deterministic seed mask around the face and shoulders)
  into soft-edged cutouts, the body extended below the photo's edge; composited with head sway and jitter;
* the head, as far as a frontal photo can show it: a turn is a cylinder warp of the head (the features slide towards
  one side and narrow; the far side of the head repeats the cheek's pixels: no real profile, no ear); looking down
  is a vertical cylinder warp (the features slide down under a stretched forehead: the portraits are cut just above
  the hairline) with the whole person lowered until only the top of the head is in the picture; a mug or a hand
  (skin-coloured from the face) slides up over the mouth;
* the room: real photos and real videos from static cameras (played back and forth; the indoor ones cropped to
  leave out the arm and hand of whoever moves the box and the bottle in them, the source cameras' own exposure
  changes taken out, the bare wall of the cup video as its median frame), a slow lighting drift, the
  room light dropping (-30 % over 1 s), dim light (gain 0.3-0.4, more noise), a saturated window behind the player
  (the camera's exposure turned down for it), per-frame sensor noise;
* background effects as a video app makes them: a person mask that reaches a few pixels beyond the person (the
  halo, where the real room shows) and wanders frame to frame in reach, offset and softness; behind it either a
  still replacement picture that does not follow the camera's gain, or the camera's own picture blurred (Gaussian,
  sigma 8-16 px, computed at a quarter of the size as apps do);
* the camera covered (a black cap, or a flat skin-coloured hand), or frozen (the last frame repeated, bit-identical).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import av
import cv2
import numpy as np
from numpy.typing import NDArray

from benchmarks.evalset import (
    COVER_S,
    HEIGHT,
    WIDTH,
    ClipSpec,
    Person,
    camera_gain,
    face_at,
    faces_truth,
    frame_times,
    occluder_at,
    pitch_at,
    smooth,
    yaw_at,
)
from benchmarks.media import MediaError

Frame = NDArray[np.uint8]
Mask = NDArray[np.float32]


def as_frame(image: Any) -> Frame:
    """OpenCV's result as the uint8 array it is (no copy)."""
    return np.asarray(image, dtype=np.uint8)


def as_mask(image: Any) -> Mask:
    return np.asarray(image, dtype=np.float32)


# --------------------------------------------------------------------------------------------------------------------
# People: cutouts from the photos


@dataclass(frozen=True, slots=True)
class Photo:
    face: tuple[int, int, int]
    """x, y, width of the face in the photo (OpenCV's Haar cascade on the photo; for the partial faces, the face of
    obama.jpg shifted by the columns cut off)."""
    crop: tuple[int, int, int, int]
    """x0, y0, x1, y1: head and shoulders down to the crop's bottom edge (the body goes on below the frame)."""
    cut: int = 0
    """-1 / +1: the photo's left / right edge cuts through the face (it is placed at that edge of the frame)."""
    clear: tuple[tuple[int, int, int, int], ...] = ()
    """Boxes (x0, y0, x1, y1) surely not the person: someone else's shoulder, a curtain grabCut would keep."""


PHOTOS: dict[str, Photo] = {
    "obama": Photo((353, 101, 279), (0, 0, 910, 1000)),
    "biden": Photo((430, 203, 325), (0, 20, 970, 1150), clear=((700, 470, 870, 580),)),
    "obama2": Photo((136, 240, 343), (0, 80, 540, 1200), clear=((0, 420, 150, 590),)),
    "obama3": Photo((637, 260, 320), (230, 60, 1230, 1250)),
    "obama_partial_face": Photo((-66, 101, 279), (0, 0, 491, 1000), cut=-1),
    "obama_partial_face2": Photo((353, 101, 279), (0, 0, 551, 1000), cut=+1, clear=((290, 280, 345, 460),)),
    "astronaut": Photo((177, 66, 97), (0, 0, 512, 512)),
}
PHOTO_FILES = {name: f"{name}.png" if name == "astronaut" else f"{name}.jpg" for name in PHOTOS}
STILL_FILES = {"home": "home.jpg", "building": "building.jpg", "coffee": "coffee.png", "chelsea": "chelsea.png",
               "camera": "camera.png"}  # fmt: skip
VIDEO_FILES = {"box": "box.mp4", "cup": "cup.mp4", "vtest": "vtest.avi"}
VIDEO_CROPS = {"box": (240, 180, 640, 480), "cup": (0, 0, 224, 168)}
"""x0, y0, x1, y1 kept of the indoor videos (4:3, scaled up to 640x480): the rest shows the arm of the person moving
the box (and a seated person's knee), or the hand turning the bottle.  Someone else's arm is not an empty room."""
VIDEO_STILLS = frozenset({"cup"})
"""Videos used as their temporal median: the cup video's crop is a bare wall, whose only movement, scaled up 2.9
times, is the source's compression shimmer (and once the bottle's tip), nothing a webcam shows."""


@dataclass(frozen=True, slots=True)
class Cutout:
    image: Frame
    """BGRA, alpha soft at the edges; the body extended below the photo by repeating its last rows."""
    face_x: float
    face_y: float
    face_w: float
    skin: tuple[float, float, float]
    """The face's mean colour (BGR), for a hand in front of it."""


def seed_mask(shape: tuple[int, int], face_x: float, face_y: float, face_w: float) -> NDArray[np.uint8]:
    """grabCut's initial labels: background outside a box around head and shoulders and beside the head, probably the
    person in a head ellipse and a widening torso, surely the person in the middle of the face and the neck."""
    height, width = shape
    cx, top, bottom = face_x + face_w / 2, face_y, face_y + face_w
    mask = np.full(shape, cv2.GC_BGD, np.uint8)
    left, right = max(0, int(cx - 1.6 * face_w)), min(width, int(cx + 1.6 * face_w))
    mask[max(0, int(top - 0.45 * face_w)) :, left:right] = cv2.GC_PR_BGD
    for reach, below_chin in ((0.75, 0.0), (1.0, 0.25)):  # beside the head, and above the shoulders
        rows = slice(0, max(0, int(bottom + below_chin * face_w)))
        mask[rows, int(cx + reach * face_w) :] = cv2.GC_BGD
        mask[rows, : max(0, int(cx - reach * face_w))] = cv2.GC_BGD
    torso = [[cx - 0.7 * face_w, bottom], [cx + 0.7 * face_w, bottom], [cx + 1.5 * face_w, height],
             [cx - 1.5 * face_w, height]]  # fmt: skip
    cv2.fillPoly(mask, [np.array(torso, np.int32)], cv2.GC_PR_FGD)
    centre = (int(cx), int(top + 0.45 * face_w))
    cv2.ellipse(mask, centre, (int(0.6 * face_w), int(0.75 * face_w)), 0, 0, 360, cv2.GC_PR_FGD, -1)
    inner = (int(cx), int(top + 0.55 * face_w))
    cv2.ellipse(mask, inner, (int(0.35 * face_w), int(0.45 * face_w)), 0, 0, 360, cv2.GC_FGD, -1)
    mask[int(bottom) : int(bottom + face_w), max(0, int(cx - 0.25 * face_w)) : int(cx + 0.25 * face_w)] = cv2.GC_FGD
    return mask


def make_cutout(photo: Frame, spec: Photo, face_px: int = 200, grab_face_px: int = 90) -> Cutout:
    """The person in ``photo`` as a BGRA cutout whose face is ``face_px`` wide (grabCut runs on a smaller copy)."""
    fx, fy, fw = spec.face
    x0, y0, x1, y1 = spec.crop
    crop = photo[y0:y1, x0:x1]
    small_scale = grab_face_px / fw
    small = cv2.resize(crop, None, fx=small_scale, fy=small_scale, interpolation=cv2.INTER_AREA)
    mask = seed_mask(small.shape[:2], (fx - x0) * small_scale, (fy - y0) * small_scale, grab_face_px)
    for bx0, by0, bx1, by1 in spec.clear:
        rows = slice(max(0, int((by0 - y0) * small_scale)), max(0, int((by1 - y0) * small_scale)))
        mask[rows, max(0, int((bx0 - x0) * small_scale)) : max(0, int((bx1 - x0) * small_scale))] = cv2.GC_BGD
    cv2.setRNGSeed(0)  # grabCut's GMM initialisation draws from OpenCV's RNG
    background_model, foreground_model = np.zeros((1, 65), np.float64), np.zeros((1, 65), np.float64)
    cv2.grabCut(small, mask, (0, 0, 0, 0), background_model, foreground_model, 6, cv2.GC_INIT_WITH_MASK)
    labelled = np.where((mask == cv2.GC_FGD) | (mask == cv2.GC_PR_FGD), 255, 0).astype(np.uint8)
    person = cv2.morphologyEx(labelled, cv2.MORPH_CLOSE, np.ones((5, 5), np.uint8))  # a lapel pin is not background
    scale = face_px / fw
    image = cv2.resize(crop, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA if scale < 1 else cv2.INTER_LINEAR)
    alpha = cv2.resize(person, (image.shape[1], image.shape[0]), interpolation=cv2.INTER_LINEAR)
    alpha = cv2.GaussianBlur(cv2.erode(alpha, np.ones((3, 3), np.uint8)), (7, 7), 0)
    if spec.cut:  # the photo's cut edge stays opaque: it is placed at (or beyond) the frame's edge
        column = 0 if spec.cut < 0 else -1
        alpha[:, column] = np.maximum(alpha[:, column], alpha[:, column + 1 if spec.cut < 0 else column - 1])
    rgba: Frame = np.dstack([image, alpha]).astype(np.uint8)
    # The body goes on below the photo (a person whose head is above the frame shows it): repeat the last rows.
    rgba = cv2.copyMakeBorder(rgba, 0, 2 * face_px, 0, 0, cv2.BORDER_REPLICATE).astype(np.uint8)
    face_x, face_y = (fx - x0) * scale, (fy - y0) * scale
    inner = image[int(face_y + 0.35 * face_px) : int(face_y + 0.75 * face_px),
                  max(0, int(face_x + 0.3 * face_px)) : int(face_x + 0.7 * face_px)]  # fmt: skip
    skin = tuple(float(v) for v in inner.reshape(-1, 3).mean(axis=0)) if inner.size else (90.0, 120.0, 170.0)
    return Cutout(rgba, face_x, face_y, face_px, (skin[0], skin[1], skin[2]))


def make_cutouts(paths: dict[str, Path]) -> dict[str, Cutout]:
    cutouts = {}
    for name, spec in PHOTOS.items():
        photo = cv2.imread(str(paths[PHOTO_FILES[name]]), cv2.IMREAD_COLOR)
        if photo is None:
            raise MediaError(f"cannot read {paths[PHOTO_FILES[name]]}")
        cutouts[name] = make_cutout(photo.astype(np.uint8), spec)
    return cutouts


# --------------------------------------------------------------------------------------------------------------------
# What comes in front of a face


SPRITE_FACE = 100
"""Sprites are drawn for a face this wide, and scaled to the face they cover."""


def mug_sprite(rng: np.random.Generator, skin: tuple[float, float, float]) -> Frame:
    """A mug held up to the mouth (BGRA): a shaded cylinder in a random colour, its rim, a handle, three fingers."""
    size = 72
    colour = np.array([(40, 40, 170), (160, 90, 30), (225, 225, 225), (40, 120, 40), (35, 35, 35)][rng.integers(5)],
                      np.float32) * np.float32(rng.uniform(0.8, 1.1))  # fmt: skip
    image = np.zeros((size, size, 3), np.float32)
    alpha: Mask = np.zeros((size, size), np.float32)
    x0, x1, y0, y1 = 10, 54, 8, 66
    columns = np.arange(x0, x1, dtype=np.float32)
    u = (columns - (x0 + x1) / 2) / ((x1 - x0) / 2)
    shade = 0.55 + 0.45 * np.cos(u * math.pi / 2) + 0.35 * np.exp(-(((u + 0.45) / 0.12) ** 2))
    image[y0:y1, x0:x1] = colour * shade[None, :, None]
    alpha[y0:y1, x0:x1] = 1
    cv2.ellipse(image, ((x0 + x1) // 2, y0), ((x1 - x0) // 2, 5), 0, 0, 360, (colour * 0.35).tolist(), -1)
    cv2.ellipse(alpha, ((x0 + x1) // 2, y0), ((x1 - x0) // 2, 5), 0, 0, 360, 1.0, -1)
    cv2.ellipse(image, (x1 + 2, (y0 + y1) // 2), (9, 14), 0, -90, 90, (colour * 0.8).tolist(), 5)
    cv2.ellipse(alpha, (x1 + 2, (y0 + y1) // 2), (9, 14), 0, -90, 90, 1.0, 5)
    for i in range(3):  # fingers round the mug's far side
        y = 34 + 9 * i
        cv2.ellipse(image, (x0 + 6, y), (9, 4), 0, 0, 360, [c * 0.9 for c in skin], -1)
        cv2.ellipse(alpha, (x0 + 6, y), (9, 4), 0, 0, 360, 1.0, -1)
    alpha = as_mask(cv2.GaussianBlur(alpha, (0, 0), 0.8))
    sprite: Frame = np.dstack([np.clip(image, 0, 255), alpha * 255]).astype(np.uint8)
    return sprite


def hand_sprite(skin: tuple[float, float, float]) -> Frame:
    """A hand over the mouth (BGRA): a palm and four fingers across the lower face, shaded, in the face's colour."""
    size = 80
    image = np.zeros((size, size, 3), np.float32)
    alpha: Mask = np.zeros((size, size), np.float32)
    colour = np.array(skin, np.float32) * np.float32(0.92)
    cv2.ellipse(image, (58, 48), (18, 24), 0, 0, 360, colour.tolist(), -1)
    cv2.ellipse(alpha, (58, 48), (18, 24), 0, 0, 360, 1.0, -1)
    for i in range(4):
        y = 22 + 11 * i
        length = (34, 40, 38, 30)[i]
        cv2.ellipse(image, (58 - length // 2, y), (length // 2 + 4, 5), 0, 0, 360, (colour * 1.02).tolist(), -1)
        cv2.ellipse(alpha, (58 - length // 2, y), (length // 2 + 4, 5), 0, 0, 360, 1.0, -1)
        cv2.line(image, (60 - length, y + 5), (58, y + 5), (colour * 0.7).tolist(), 1)  # the crease between fingers
    rows = np.linspace(1.08, 0.85, size, dtype=np.float32)[:, None, None]
    image *= rows
    alpha = as_mask(cv2.GaussianBlur(alpha, (0, 0), 0.8))
    sprite: Frame = np.dstack([np.clip(image, 0, 255), alpha * 255]).astype(np.uint8)
    return sprite


def over(patch: Frame, sprite: Frame, x: float, y: float, width: float) -> None:
    """Composite a BGRA sprite over a BGRA patch (in place), its top-left at (x, y), scaled to ``width``."""
    scale = width / sprite.shape[1]
    sw, sh = max(1, round(sprite.shape[1] * scale)), max(1, round(sprite.shape[0] * scale))
    scaled = cv2.resize(sprite, (sw, sh), interpolation=cv2.INTER_LINEAR)
    px0, py0 = max(0, round(x)), max(0, round(y))
    px1, py1 = min(patch.shape[1], round(x) + sw), min(patch.shape[0], round(y) + sh)
    if px1 <= px0 or py1 <= py0:
        return
    piece = scaled[py0 - round(y) : py1 - round(y), px0 - round(x) : px1 - round(x)].astype(np.float32)
    region = patch[py0:py1, px0:px1].astype(np.float32)
    a = piece[..., 3:4] / 255
    region[..., :3] = piece[..., :3] * a + region[..., :3] * (1 - a)
    region[..., 3:4] = 255 * a + region[..., 3:4] * (1 - a)
    patch[py0:py1, px0:px1] = np.clip(region, 0, 255).astype(np.uint8)


# --------------------------------------------------------------------------------------------------------------------
# Placing a person


EDGE = math.asin(0.7)
"""A turned head shows at most this far round its side (radians): beyond it, the side of the head repeats the cheek
and hair pixels this far from the face's centre line (a frontal photo has nothing further round)."""


def head_warp(patch: Frame, cx: float, top: float, face_w: float, yaw: float, pitch: float) -> Frame:
    """The head in the patch turned by ``yaw`` degrees (+: to the picture's right) and pitched down by ``pitch``, as
    if it were a cylinder about as wide as the face: the output at angle psi shows the surface at psi - angle; what
    would come from round the side, or from above the photo's top, repeats the last pixels the photo has there.  The
    warp fades out below the chin and beside the head, so the body and the outline stay put."""
    height, width = patch.shape[:2]
    xs = np.arange(width, dtype=np.float32)
    ys = np.arange(height, dtype=np.float32)
    map_x = np.repeat(xs[None, :], height, axis=0)
    map_y = np.repeat(ys[:, None], width, axis=1)
    if yaw:
        radius = 0.55 * face_w
        raw = (xs - cx) / radius
        source = cx + radius * np.sin(np.clip(np.arcsin(np.clip(raw, -1, 1)) - math.radians(yaw), -EDGE, EDGE))
        columns = np.clip((1.25 - np.abs(raw)) / 0.35, 0, 1)
        shift = ((source - xs) * columns).astype(np.float32)
        rows = np.clip((top + 1.25 * face_w - ys) / (0.2 * face_w), 0, 1).astype(np.float32)
        map_x += rows[:, None] * shift[None, :]
    if pitch:
        centre, radius = top + 0.45 * face_w, 0.8 * face_w
        middle = patch[:, int(np.clip(cx, 0, width - 1)), 3]
        first = float(np.argmax(middle > 128)) if (middle > 128).any() else 0.0
        raw = (ys - centre) / radius
        source = centre + radius * np.sin(np.clip(np.arcsin(np.clip(raw, -1, 1)) - math.radians(pitch), -EDGE, EDGE))
        source = np.maximum(source, first + 2)
        shift = np.where(raw < 1, source - ys, 0).astype(np.float32)
        columns = np.clip((0.75 * face_w - np.abs(xs - cx)) / (0.2 * face_w), 0, 1).astype(np.float32)
        map_y += shift[:, None] * columns[None, :]
    warped: Frame = cv2.remap(patch, map_x, map_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE).astype(np.uint8)
    warped[..., 3] = patch[..., 3]  # the outline stays: a turned or lowered head covers about the same place
    return warped


def place(canvas: Frame, mask: Mask, cutout: Cutout, cx: float, top: float, face_w: float, yaw: float = 0.0,
          pitch: float = 0.0, occluder: tuple[Frame, str, float] | None = None) -> None:  # fmt: skip
    """Composite the cutout over the canvas (in place) with its face centred at ``cx`` and its top at ``top``, and
    add its alpha to ``mask`` (where the people are, for a background effect)."""
    scale = face_w / cutout.face_w
    tx = cx - scale * (cutout.face_x + cutout.face_w / 2)
    ty = top - scale * cutout.face_y
    height, width = cutout.image.shape[:2]
    x0, y0 = max(0, math.floor(tx)), max(0, math.floor(ty))
    x1, y1 = min(WIDTH, math.ceil(tx + scale * width)), min(HEIGHT, math.ceil(ty + scale * height))
    if x1 <= x0 or y1 <= y0:
        return
    matrix = np.array([[scale, 0, tx - x0], [0, scale, ty - y0]], np.float32)
    size = (x1 - x0, y1 - y0)
    patch: Frame = cv2.warpAffine(cutout.image, matrix, size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT,
                                  borderValue=(0, 0, 0, 0)).astype(np.uint8)  # fmt: skip
    if yaw or pitch:
        patch = head_warp(patch, cx - x0, top - y0, face_w, yaw, pitch)
    if occluder is not None:
        sprite, kind, amount = occluder
        rise = (1 - amount) * 1.3 * face_w  # it comes up from below
        if kind == "mug":
            over(patch, sprite, cx - x0 - 0.3 * face_w, top - y0 + 0.55 * face_w + rise, 0.75 * face_w)
        else:
            over(patch, sprite, cx - x0 - 0.55 * face_w, top - y0 + 0.35 * face_w + rise, 0.95 * face_w)
    alpha = cv2.extractChannel(patch, 3).astype(np.float32) * np.float32(1 / 255)
    region = canvas[y0:y1, x0:x1]
    canvas[y0:y1, x0:x1] = cv2.blendLinear(cv2.cvtColor(patch, cv2.COLOR_BGRA2BGR), region, alpha, 1 - alpha)
    np.maximum(mask[y0:y1, x0:x1], alpha, out=mask[y0:y1, x0:x1])


# --------------------------------------------------------------------------------------------------------------------
# Rooms


@dataclass
class Background:
    frames: list[Frame]
    fps: float
    """0 for a still image."""

    def at(self, t: float) -> Frame:
        if self.fps <= 0 or len(self.frames) == 1:
            return self.frames[0]
        period = 2 * (len(self.frames) - 1)  # played back and forth: no jump at the loop
        index = int(t * self.fps) % period
        return self.frames[index if index < len(self.frames) else period - index]


def cover_fit(image: Frame, rng: np.random.Generator) -> Frame:
    """Scale to cover 640x480 and crop (at a seeded offset)."""
    height, width = image.shape[:2]
    scale = max(WIDTH / width, HEIGHT / height)
    size = (max(WIDTH, round(width * scale)), max(HEIGHT, round(height * scale)))
    resized = cv2.resize(image, size, interpolation=cv2.INTER_AREA if scale < 1 else cv2.INTER_LINEAR)
    x = int(rng.integers(0, size[0] - WIDTH + 1))
    y = int(rng.integers(0, size[1] - HEIGHT + 1))
    fitted: Frame = np.ascontiguousarray(resized[y : y + HEIGHT, x : x + WIDTH])
    return fitted


@functools.lru_cache(maxsize=len(VIDEO_FILES))
def _video(path: Path, crop: tuple[int, int, int, int] | None, still: bool = False) -> tuple[list[Frame], float]:
    """A video's frames at up to 15 a second, cropped and fitted to 640x480 (all 4:3: no offset), with the source
    camera's own exposure changes taken out (each frame scaled to the video's mean brightness: the composite's
    exposure is the simulated camera's, on the room and the people alike; the cup video's swings by 15 % as the hand
    moves), once per process.  ``still``: their per-pixel median, as a single frame."""
    frames: list[Frame] = []
    rng = np.random.default_rng(0)
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        rate = float(stream.average_rate or stream.guessed_rate or 15)
        step = max(1, round(rate / 15))
        for index, frame in enumerate(container.decode(stream)):
            if index % step == 0:
                image = frame.to_ndarray(format="bgr24").astype(np.uint8)
                if crop is not None:
                    x0, y0, x1, y1 = crop
                    image = np.ascontiguousarray(image[y0:y1, x0:x1])
                frames.append(cover_fit(image, rng))
    means = [float(frame.mean()) for frame in frames]
    overall = sum(means) / len(means)
    frames = [as_frame(cv2.convertScaleAbs(frame, alpha=overall / max(mean, 1.0)))
              for frame, mean in zip(frames, means, strict=True)]  # fmt: skip
    if still:
        return [as_frame(np.median(np.stack(frames), axis=0).astype(np.uint8))], 0.0
    return frames, rate / step


def load_background(name: str, paths: dict[str, Path], rng: np.random.Generator) -> Background:
    if name in STILL_FILES:
        image = cv2.imread(str(paths[STILL_FILES[name]]), cv2.IMREAD_COLOR)
        if image is None:
            raise MediaError(f"cannot read {paths[STILL_FILES[name]]}")
        return Background([cover_fit(image.astype(np.uint8), rng)], 0.0)
    frames, fps = _video(paths[VIDEO_FILES[name]], VIDEO_CROPS.get(name), name in VIDEO_STILLS)
    return Background(frames, fps)


def cover_image(kind: str, rng: np.random.Generator) -> Frame:
    """What a covered lens shows: a cap (nearly black) or a hand (flat skin tone, a little light from one side)."""
    if kind == "black":
        return np.full((HEIGHT, WIDTH, 3), round(rng.uniform(3, 8)), np.uint8)
    skin = np.array([95, 125, 170], np.float32) * np.float32(rng.uniform(0.6, 0.85))
    ramp = np.linspace(-1, 1, WIDTH, dtype=np.float32)[None, :, None] * np.float32(rng.uniform(0.03, 0.08))
    y, x = np.mgrid[0:HEIGHT, 0:WIDTH].astype(np.float32)
    vignette = 1 - 0.05 * (((x - WIDTH / 2) / WIDTH) ** 2 + ((y - HEIGHT / 2) / HEIGHT) ** 2)[..., None]
    image: Frame = np.clip(skin * (1 + ramp) * vignette, 0, 255).astype(np.uint8)
    return image


def window_alpha(box: tuple[int, int, int, int]) -> Mask:
    """Where a bright window is (0..1): a soft-edged pane (the glare spreads a little) with a cross of bars."""
    alpha = np.zeros((HEIGHT, WIDTH), np.float32)
    x0, y0, x1, y1 = box
    alpha[max(0, y0) : min(HEIGHT, y1), max(0, x0) : min(WIDTH, x1)] = 1
    middle_x, middle_y = (x0 + x1) // 2, (y0 + y1) // 2
    alpha[max(0, y0) : min(HEIGHT, y1), max(0, middle_x - 4) : middle_x + 4] = 0
    alpha[max(0, middle_y - 4) : middle_y + 4, max(0, x0) : min(WIDTH, x1)] = 0
    return as_mask(cv2.GaussianBlur(alpha, (0, 0), 3))


# --------------------------------------------------------------------------------------------------------------------
# The camera


class Composer:
    """The frames of one clip as the player's camera would send them, with how many faces each clearly shows."""

    def __init__(self, spec: ClipSpec, cutouts: dict[str, Cutout], paths: dict[str, Path]) -> None:
        self.spec, self.cutouts = spec, cutouts
        rng = np.random.default_rng(spec.seed)
        self.background = load_background(spec.background, paths, rng)
        self.noise_bank = [np.clip(128 + rng.standard_normal((HEIGHT, WIDTH, 3)) * spec.noise, 0, 255).astype(np.uint8)
                           for _ in range(24)]  # fmt: skip
        self.noise_index = 0
        self.rng = rng
        self.jitter = {id(p): np.zeros(3) for p in (spec.player, spec.second) if p is not None}
        self.cover = cover_image(spec.cover_kind, rng) if spec.cover is not None else None
        virtual = spec.effect == "virtual"
        self.replacement = load_background(spec.effect_image, paths, rng).frames[0] if virtual else None
        self.window = window_alpha(spec.window) if spec.window is not None else None
        self.sprites = {
            (id(person), kind): mug_sprite(rng, cutouts[person.photo].skin) if kind == "mug" else hand_sprite(
                cutouts[person.photo].skin)
            for person in (spec.player, spec.second) if person is not None
            for kind in {kind for _, _, kind in person.occluders}
        }  # fmt: skip
        self.halo, self.feather, self.offset = spec.halo, spec.feather, np.zeros(2)
        self.mask = np.zeros((HEIGHT, WIDTH), np.float32)
        self.last: Frame | None = None

    def _noise(self) -> Frame:
        self.noise_index = (self.noise_index + 1 + int(self.rng.integers(len(self.noise_bank) - 1))) % len(
            self.noise_bank
        )
        return self.noise_bank[self.noise_index]

    def _face(self, person: Person, t: float) -> tuple[float, float, float]:
        """The placement with jitter: a slow random walk pulled back to rest (about 1.5 px)."""
        jitter = self.jitter[id(person)]
        jitter *= 0.9
        jitter += self.rng.normal(0, [0.6, 0.4, 0.002])
        cx, top, width = face_at(person, t)
        return cx + jitter[0], top + jitter[1], width * (1 + jitter[2])

    def _people(self, canvas: Frame, t: float) -> None:
        second = self.spec.second
        order = [self.spec.player] if second is None else [self.spec.player, second] if second.front else [
            second, self.spec.player]  # fmt: skip
        self.mask[:] = 0
        for person in order:
            cx, top, width = self._face(person, t)
            occluding = occluder_at(person, t)
            occluder = None
            if occluding is not None:
                kind, amount = occluding
                occluder = (self.sprites[id(person), kind], kind, amount)
            place(canvas, self.mask, self.cutouts[person.photo], cx, top, width, yaw_at(person, t),
                  pitch_at(person, t), occluder)  # fmt: skip

    def _effect_mask(self) -> Mask:
        """The app's person mask: the people grown by a wandering halo, shifted a little, its edge softened by a
        wandering blur."""
        spec = self.spec
        self.halo = float(np.clip(self.halo + self.rng.normal(0, 0.4), 0.5 * spec.halo, 1.5 * spec.halo))
        self.feather = float(np.clip(self.feather + self.rng.normal(0, 0.3), 0.6 * spec.feather, 1.5 * spec.feather))
        self.offset = np.clip(self.offset * 0.8 + self.rng.normal(0, 0.6, 2), -2.5, 2.5).reshape(2)
        binary = (self.mask > 0.5).astype(np.uint8) * np.uint8(255)
        reach = max(1, round(self.halo))
        grown = cv2.dilate(binary, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * reach + 1, 2 * reach + 1)))
        shifted = np.roll(grown, (round(self.offset[1]), round(self.offset[0])), axis=(0, 1))
        # Softened at half the size (as cheap as the apps' own masks, which are coarser still), then scaled up.
        half = cv2.resize(shifted, (WIDTH // 2, HEIGHT // 2), interpolation=cv2.INTER_AREA).astype(np.float32)
        soft = cv2.GaussianBlur(half, (0, 0), self.feather / 2) * np.float32(1 / 255)
        return as_mask(cv2.resize(soft, (WIDTH, HEIGHT), interpolation=cv2.INTER_LINEAR))

    def frames(self) -> Iterator[tuple[float, Frame, int | None]]:
        spec = self.spec
        for t in frame_times(spec.seconds, spec.fps):
            if spec.freeze is not None and spec.freeze[0] <= t < spec.freeze[1] and self.last is not None:
                yield t, self.last, None  # the camera repeats its last frame
                continue
            canvas = self.background.at(t).copy()
            self._people(canvas, t)
            gain = camera_gain(spec, t) * (1 + self.rng.normal(0, 0.003))  # auto-exposure hunting a little
            frame = as_frame(cv2.addWeighted(canvas, gain, self._noise(), 1.0, -128.0))
            if self.window is not None:
                glare = self.window * (1 - self.mask)
                white = np.full_like(frame, 254)
                frame = as_frame(cv2.blendLinear(white, frame, glare, 1 - glare))
            if spec.effect is not None and t >= spec.effect_from:
                person = self._effect_mask()
                if self.replacement is not None:
                    behind = self.replacement
                else:
                    sigma = spec.blur_sigma / 4
                    small = cv2.resize(frame, (WIDTH // 4, HEIGHT // 4), interpolation=cv2.INTER_AREA)
                    behind = as_frame(cv2.resize(cv2.GaussianBlur(small, (0, 0), sigma), (WIDTH, HEIGHT),
                                                 interpolation=cv2.INTER_LINEAR))  # fmt: skip
                frame = as_frame(cv2.blendLinear(frame, behind, person, 1 - person))
            truth = faces_truth(spec, t)
            if spec.cover is not None and self.cover is not None:
                start, end = spec.cover
                amount = min(smooth((t - start) / COVER_S), 1 - smooth((t - end) / COVER_S))
                if amount > 0:
                    covered = cv2.addWeighted(self.cover, 1.0, self._noise(), 0.6, -128 * 0.6)
                    frame = as_frame(cv2.addWeighted(frame, 1 - amount, covered, amount, 0.0))
            self.last = frame
            yield t, frame, truth
