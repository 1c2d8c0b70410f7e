"""Synthetic camera pictures for the video tests: a real face (scikit-image's astronaut, NASA, public domain, from
the scikit-image wheel) over a textured background, with sensor-like noise; and the same player composed as a
background-replacing or background-blurring app would show her (:func:`composed`)."""

from __future__ import annotations

import cv2
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


def scene(people: int, rng: np.random.Generator, sway: int = 0, gain: float = 1.0, room: Frame | None = None) -> Frame:
    """0, 1 or 2 people in front of the background (or ``room``, with the camera's noise); ``sway``: the people
    moved that many pixels to the right (a real person is never still: a clip sways them), ``gain``: the camera's
    exposure, on the whole picture."""
    if room is None:
        frame = background(rng)
    else:
        frame = (room.astype(np.float32) + rng.normal(0, 2.5, room.shape)).clip(0, 255).astype(np.uint8)
    if people == 1:  # clipped at the frame's edges: a player walking out is partly out of the picture
        left = 140 + sway
        face = _face(360)[:, max(0, -left) : max(0, min(360, frame.shape[1] - left))]
        if face.shape[1]:
            frame[60:420, max(0, left) : max(0, left) + face.shape[1]] = face
    elif people >= 2:
        face = _face(300)
        frame[90:390, 10 + sway // 2 : 310 + sway // 2] = face
        frame[90:390, 330 + sway // 2 : 630 + sway // 2] = face
    if gain != 1.0:
        frame = (frame.astype(np.float32) * gain).clip(0, 255).astype(np.uint8)
    return frame


def _astronaut_alpha(size: int) -> NDArray[np.float32]:
    """Where the astronaut is in her portrait, roughly (head and shoulders; the flag and the shuttle behind her
    left out), as the soft alpha a background-replacement app would make."""
    alpha = np.zeros((360, 360), np.uint8)
    cv2.ellipse(alpha, (160, 85), (58, 80), 0, 0, 360, 255, -1)
    cv2.fillPoly(alpha, [np.array([(95, 128), (225, 128), (262, 200), (268, 360), (12, 360), (22, 200)])], 255)
    scaled = np.asarray(cv2.resize(alpha, (size, size)), dtype=np.float32) / np.float32(255)
    return scaled


def player_alpha(sway: int) -> NDArray[np.float32]:
    """Where :func:`composed` puts the astronaut (0..1, 640x480)."""
    alpha = np.zeros((480, 640), np.float32)
    left = 140 + sway
    alpha[120:480, left : left + 360] = _astronaut_alpha(360)
    return alpha


def room_photo() -> Frame:
    """A real room-like photo with texture (scikit-image's coffee, CC0), 640x480."""
    coffee = skimage.data.coffee()[..., ::-1]  # type: ignore[no-untyped-call]
    room: Frame = cv2.resize(coffee, (640, 480), interpolation=cv2.INTER_AREA)
    return room


def composed(
    room: Frame,
    rng: np.random.Generator,
    sway: int,
    gain: float,
    replaced: bool,
    blur: float = 0.0,
    edge: float = 4.0,
    weighted: bool = False,
) -> Frame:
    """The astronaut in front of ``room``, as a camera and an app would make it.  A real background: the camera's
    exposure (``gain``) and noise on the whole picture; ``blur``: an app blurs the camera's picture by that many
    pixels (the whole frame, the player included, as Jitsi Meet, LiveKit and MediaPipe's own example do; or, with
    ``weighted``, the background alone, each pixel's blur weighted by the mask, as Google Meet does) and lays the
    player over it; ``replaced``: an app puts the player (with the camera's exposure and noise) over the still, clean
    room picture.  The app's mask has a soft edge of ``edge`` pixels that wanders from frame to frame."""
    alpha = player_alpha(sway)
    person = np.zeros((480, 640, 3), np.float32)
    left = 140 + sway
    person[120:480, left : left + 360] = _face(360)
    noise = rng.normal(0, 2.5, (480, 640, 3)).astype(np.float32)
    camera = (room.astype(np.float32) * (1 - alpha[..., None]) + person * alpha[..., None]) * gain + noise
    if not replaced and not blur:
        return camera.clip(0, 255).astype(np.uint8)
    soft = cv2.GaussianBlur(alpha, (0, 0), max(0.5, edge + rng.uniform(-1.5, 1.5)))[..., None]
    behind: NDArray[np.float32]
    if replaced:
        behind = room.astype(np.float32)
    elif weighted:
        away = 1 - alpha[..., None]
        weights = cv2.GaussianBlur(away, (0, 0), blur)[..., None]
        behind = np.asarray(cv2.GaussianBlur(camera * away, (0, 0), blur) / np.maximum(weights, 1e-3), np.float32)
    else:
        behind = np.asarray(cv2.GaussianBlur(camera, (0, 0), blur), np.float32)
    picture = behind * (1 - soft) + camera * soft
    return picture.clip(0, 255).astype(np.uint8)


def platform_screen(stones: int, seconds: int = 600, cursor: tuple[int, int] = (900, 500), chat: int = 0,
                    size: tuple[int, int] = (1280, 720)) -> Frame:  # fmt: skip
    """A shared screen showing a Gomoku platform's page (drawn: a header, a 15x15 board with ``stones`` stones played
    in a fixed order, both clocks at ``seconds`` and less, a move list and ``chat`` lines of chat, the mouse pointer
    at ``cursor``), at ``size``."""
    width, height = size
    page = np.full((height, width, 3), 245, np.uint8)
    cv2.rectangle(page, (0, 0), (width, 56), (60, 40, 30), -1)
    cv2.putText(
        page, "Gomoku Online  -  Round 3  Board 12", (20, 38), cv2.FONT_HERSHEY_SIMPLEX, 1.0, (255, 255, 255), 2
    )
    left, top, cell = 60, 90, 40
    cv2.rectangle(page, (left - 30, top - 30), (left + 14 * cell + 30, top + 14 * cell + 30), (90, 170, 220), -1)
    for i in range(15):
        cv2.line(page, (left, top + i * cell), (left + 14 * cell, top + i * cell), (30, 30, 30), 1)
        cv2.line(page, (left + i * cell, top), (left + i * cell, top + 14 * cell), (30, 30, 30), 1)
    order = np.random.default_rng(11).permutation(225)
    for index, point in enumerate(order[:stones]):
        x, y = left + (point % 15) * cell, top + (point // 15) * cell
        cv2.circle(page, (int(x), int(y)), 17, (20, 20, 20) if index % 2 == 0 else (250, 250, 250), -1)
        cv2.circle(page, (int(x), int(y)), 17, (20, 20, 20), 1)
    panel = left + 14 * cell + 80
    for row, (name, clock) in enumerate((("Black  Li Wei", seconds), ("White  Zhang Min", seconds - 37))):
        y = 120 + row * 70
        cv2.putText(page, name, (panel, y), cv2.FONT_HERSHEY_SIMPLEX, 0.9, (30, 30, 30), 2)
        cv2.putText(page, f"{clock // 60:02d}:{clock % 60:02d}", (panel + 330, y), cv2.FONT_HERSHEY_SIMPLEX, 1.0,
                    (30, 30, 30), 2)  # fmt: skip
    for move in range(min(stones, 12)):
        cv2.putText(page, f"{move + 1}. {'abcdefghijklmno'[order[move] % 15]}{order[move] // 15 + 1}",
                    (panel, 280 + move * 24), cv2.FONT_HERSHEY_SIMPLEX, 0.6, (60, 60, 60), 1)  # fmt: skip
    for line in range(chat):
        cv2.putText(page, f"chat {line + 1}: good luck", (panel + 220, 280 + line * 24), cv2.FONT_HERSHEY_SIMPLEX, 0.6,
                    (120, 60, 60), 1)  # fmt: skip
    x, y = cursor
    pointer = np.array([[x, y], [x, y + 22], [x + 6, y + 16], [x + 14, y + 16]], np.int32)
    cv2.fillPoly(page, [pointer], (0, 0, 0))
    return page


def other_screens(size: tuple[int, int] = (1280, 720)) -> dict[str, Frame]:
    """What a shared screen may show instead of the platform: a text editor, another program's board (an analysis
    tool, its board elsewhere and in its own colours, with an evaluation bar), a photo as the desktop."""
    width, height = size
    editor = np.full((height, width, 3), 30, np.uint8)
    for line in range(26):
        cv2.putText(editor, f"{line + 1:3d}  def search(board, depth={line}): return evaluate(board) * {line}",
                    (10, 30 + line * 26), cv2.FONT_HERSHEY_SIMPLEX, 0.6, (200, 220, 200), 1)  # fmt: skip
    analysis = np.full((height, width, 3), 40, np.uint8)
    left, top, cell = 420, 60, 42
    cv2.rectangle(analysis, (left - 20, top - 20), (left + 14 * cell + 20, top + 14 * cell + 20), (200, 200, 200), -1)
    for i in range(15):
        cv2.line(analysis, (left, top + i * cell), (left + 14 * cell, top + i * cell), (80, 80, 80), 1)
        cv2.line(analysis, (left + i * cell, top), (left + i * cell, top + 14 * cell), (80, 80, 80), 1)
    order = np.random.default_rng(11).permutation(225)
    for index, point in enumerate(order[:30]):
        x, y = left + (point % 15) * cell, top + (point // 15) * cell
        cv2.circle(analysis, (int(x), int(y)), 18, (10, 10, 10) if index % 2 == 0 else (255, 255, 255), -1)
    cv2.rectangle(analysis, (340, 60), (370, 650), (0, 0, 200), -1)
    cv2.rectangle(analysis, (340, 60), (370, 250), (240, 240, 240), -1)
    for line in range(12):
        cv2.putText(analysis, f"{line + 1}. h8 +{0.3 * line:.2f}  depth {20 + line}", (30, 80 + line * 40),
                    cv2.FONT_HERSHEY_SIMPLEX, 0.7, (220, 220, 220), 1)  # fmt: skip
    desktop = cv2.resize(room_photo(), size, interpolation=cv2.INTER_AREA).astype(np.uint8)
    return {"a text editor": editor, "an analysis program's board": analysis, "a photo as the desktop": desktop}
