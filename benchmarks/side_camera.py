"""The side camera's evaluation set (issue 15): composed clips of a second camera (a phone on a stand beside the
player) that shows the player, the desk and the playing device, approved by an arbiter a few seconds after the
stream starts, and then moved, turned away, covered or frozen, or left alone through what a side camera sees at the
board.  ``benchmarks/detectors.py --side`` encodes them through VP8 and analyses them as the service analyses a side
camera; this module holds the set (pure: the specs and their labels) and the pictures.

The picture: a room (a registry photo, or a static camera's video) with a desk across its lower part (a seeded wood
grain), a laptop on it showing the platform's page (``tests.video.frames.platform_screen``, a stone played every 15
s), and the player (a portrait cut-out, seen from the side: the head turned 35-45°, smaller than on the front camera)
at one side of it, swaying.  The camera's view is a similarity warp of that scene (1.25 times as close as the scene:
a move reveals what lies beyond the view's edge), so that a moved camera shows the same room from elsewhere.

Positives (each held to the clip's end or put back 20-40 s later):

* ``camera-moved``: slid sideways or down by 8-16 % of the picture, tilted by 6-15°, pushed closer by 15-30 %, or
  turned away to another part of the room (another room photo);
* ``covered`` (a cap or a hand over the lens) and ``frozen`` (the last frame repeated).

Hard negatives (in 6-minute streams): the player leaning towards the device for 3-8 s, an arm reaching across the
desk to the device for 2-4 s, someone bumping the desk (the view shaking by 2-4 px and 1° for half a second), the
room light dropping by 30 %, a dim room, the camera's slow gain drift, the page on the device changing as the game
goes on, 120-300 kbit/s at 5 fps and 500 kbit/s at 15 fps.

Scored: ``camera-moved`` (within 10 s of the move: the view is compared every 2 s and must be lost for 6 s),
``covered`` (5 s) and ``frozen`` (10 s), and the false alarms of every check the side camera raises (``left-area`` and
``extra-person`` too: nobody leaves or comes in here, so every one of theirs is false; they are not scored while the
camera is moved, covered or frozen).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np
from numpy.typing import NDArray

from benchmarks.composition import Cutout, Frame, cover_image, load_background, place
from benchmarks.evalset import (
    COVER_S,
    COVERED,
    DRIFT,
    DRIFT_PERIOD_S,
    EXTRA_PERSON,
    FROZEN,
    HEIGHT,
    LEFT_AREA,
    LIGHT_RAMP_S,
    WIDTH,
    ClipLabels,
    Episode,
    Target,
    Unscored,
    frame_times,
    ramp,
    smooth,
)
from tests.video.frames import platform_screen
from video.checks import Thresholds

CAMERA_MOVED = "CAMERA_MOVED"
SIDE_CHECKS = (CAMERA_MOVED, COVERED, FROZEN, LEFT_AREA, EXTRA_PERSON)
"""What the service raises on a side camera (``video.devices.DEVICE_CHECKS``; ``lost`` is the stream's)."""
SIDE_WITHIN = {CAMERA_MOVED: 10.0, COVERED: 5.0, FROZEN: 10.0}
"""Seconds from an episode's start to its finding."""
SIDE_TARGETS = {CAMERA_MOVED: Target(0.9, 0.5), COVERED: Target(1.0), FROZEN: Target(1.0),
                LEFT_AREA: Target(None, 0.5), EXTRA_PERSON: Target(None, 0.5)}  # fmt: skip
"""This set's targets (ours: the issue names none): a moved camera found nine times in ten within 10 s, at most one
false alarm in two player-hours for any check; covered and frozen as on the front camera."""
APPROVE_AT = 4.0
"""The arbiter approves the view (its reference still) this long after the stream's start."""
ZOOM = 1.25
"""The view is this much closer than the composed scene."""
MOVE_RAMP = {"slide": 0.8, "down": 0.6, "tilt": 0.6, "closer": 1.0, "away": 0.6}
"""How long each move takes (seconds)."""
SHAKE_S = 0.6
"""A bump shakes the view this long."""
STONE_EVERY_S = 15.0


@dataclass(frozen=True, slots=True)
class Move:
    """The camera moved at ``start`` (over its kind's ramp), put back at ``back`` (None: never)."""

    kind: str
    start: float
    back: float | None
    dx: float = 0.0
    """Shares of the picture's width and height the view moves by..."""
    dy: float = 0.0
    angle: float = 0.0
    """...degrees it turns by..."""
    scale: float = 1.0
    """...and how much closer it gets."""


@dataclass(frozen=True, slots=True)
class SideSpec:
    name: str
    scenario: str
    seconds: float
    room: str
    other_room: str
    player: str
    fps: float = 5.0
    bitrate: int = 300_000
    seed: int = 0
    gain: float = 1.0
    noise: float = 3.0
    drift_phase: float = 0.0
    moves: tuple[Move, ...] = ()
    covers: tuple[tuple[float, float, str], ...] = ()
    """(start, seconds, "black" | "hand")."""
    freezes: tuple[tuple[float, float], ...] = ()
    """(start, seconds)."""
    leans: tuple[tuple[float, float], ...] = ()
    reaches: tuple[tuple[float, float], ...] = ()
    bumps: tuple[float, ...] = ()
    lights: tuple[float, ...] = ()
    """When the room light drops by 30 % (over LIGHT_RAMP_S)."""
    side: int = -1
    """The player sits on the left (-1) or the right (1) of the picture, the device on the other side."""

    @property
    def stream(self) -> str:
        return f"{self.fps:g} fps {self.bitrate // 1000} kbit/s"


# --------------------------------------------------------------------------------------------------------------------
# Labels


def side_labels(spec: SideSpec) -> ClipLabels:
    """The clip's episodes, and the stretches where the other checks are not scored."""
    clear = Thresholds().clear_s
    episodes: list[Episode] = []
    unscored: list[Unscored] = []
    every = frozenset(SIDE_CHECKS)
    for move in spec.moves:
        end = spec.seconds if move.back is None else move.back + MOVE_RAMP[move.kind]
        episodes.append(Episode(CAMERA_MOVED, move.start, end, SIDE_WITHIN[CAMERA_MOVED]))
        # Moved, the camera may no longer show the player, and turned away or slid down it may face a bare wall or
        # the desk (which the covered check calls covered): the moved camera's finding is the one that counts.
        unscored.append(Unscored(frozenset({LEFT_AREA, EXTRA_PERSON, COVERED}), move.start, end + clear + 1))
    for start, seconds, _ in spec.covers:
        episodes.append(Episode(COVERED, start + COVER_S, start + seconds, SIDE_WITHIN[COVERED]))
        unscored.append(Unscored(every - {COVERED}, start, start + seconds + COVER_S + clear + 1))
    for start, seconds in spec.freezes:
        episodes.append(Episode(FROZEN, start, start + seconds, SIDE_WITHIN[FROZEN]))
        unscored.append(Unscored(every - {FROZEN, COVERED}, start, start + seconds + clear + 1))
    # Before the view is approved the camera has nothing to be compared with.
    unscored.append(Unscored(frozenset({CAMERA_MOVED}), 0.0, APPROVE_AT))
    return ClipLabels(spec.name, spec.seconds, tuple(sorted(episodes, key=lambda e: e.onset)), tuple(unscored))


# --------------------------------------------------------------------------------------------------------------------
# The set


ROOMS = ("home", "building", "cup", "box")
PLAYERS = ("obama", "biden", "obama2", "astronaut")
STREAMS = ((5.0, 300_000), (5.0, 120_000), (15.0, 500_000), (5.0, 200_000))


def _move(rng: np.random.Generator, kind: str, start: float, back: float | None) -> Move:
    sign = float(rng.choice((-1.0, 1.0)))
    if kind == "slide":
        return Move(kind, start, back, dx=sign * float(rng.uniform(0.08, 0.16)))
    if kind == "down":
        return Move(kind, start, back, dy=float(rng.uniform(0.08, 0.14)), angle=sign * float(rng.uniform(0, 3)))
    if kind == "tilt":
        return Move(kind, start, back, angle=sign * float(rng.uniform(6, 15)))
    if kind == "closer":
        return Move(kind, start, back, scale=float(rng.uniform(1.15, 1.3)))
    return Move(kind, start, back)  # away: the view turned to another part of the room


def _negatives(rng: np.random.Generator, seconds: float, first: float = 20.0) -> dict[str, tuple[object, ...]]:
    """Leans, reaches, bumps and a light drop, spread over the stream."""
    leans: list[tuple[float, float]] = []
    reaches: list[tuple[float, float]] = []
    bumps: list[float] = []
    t = first
    while t < seconds - 15:
        kind = rng.choice(("lean", "reach", "bump", "reach", "lean"))
        if kind == "lean":
            leans.append((t, float(rng.uniform(3, 8))))
        elif kind == "reach":
            reaches.append((t, float(rng.uniform(2, 4))))
        else:
            bumps.append(t)
        t += float(rng.uniform(15, 35))
    lights = (float(rng.uniform(0.4, 0.8)) * seconds,) if rng.random() < 0.5 else ()
    return {"leans": tuple(leans), "reaches": tuple(reaches), "bumps": tuple(bumps), "lights": lights}


def side_set(quick: bool = False) -> list[SideSpec]:
    """The clips, each drawn from its own seed: 24 moves (4 of each kind, and 4 more put back), 6 covered, 6 frozen,
    and 12 six-minute streams of hard negatives (1.2 player-hours); ``quick``: one of each."""
    specs: list[SideSpec] = []
    kinds = ("slide", "down", "tilt", "closer", "away", "slide")
    repeats = 1 if quick else 4
    for index in range(len(kinds) * repeats):
        rng = np.random.default_rng(5000 + index)
        kind = kinds[index % len(kinds)]
        seconds = 60.0 if quick else 75.0
        start = float(rng.uniform(25, 35))
        back = start + float(rng.uniform(20, 30)) if index % len(kinds) == len(kinds) - 1 else None
        fps, bitrate = STREAMS[index % len(STREAMS)]
        specs.append(_spec(rng, f"side-moved-{kind}-{index:03d}", "moved", seconds, index, fps, bitrate,
                           moves=(_move(rng, kind, start, back),), **_negatives(rng, seconds, 10.0)))  # fmt: skip
    for index in range(2 if quick else 6):
        rng = np.random.default_rng(5100 + index)
        fps, bitrate = STREAMS[index % len(STREAMS)]
        start = float(rng.uniform(20, 30))
        kind = ("black", "hand")[index // 2 % 2]
        covers = ((start, float(rng.uniform(8, 15)), kind),) if index % 2 == 0 else ()
        freezes = ((start, float(rng.uniform(12, 20))),) if not covers else ()
        name = f"side-{'covered' if covers else 'frozen'}-{index:03d}"
        specs.append(_spec(rng, name, "covered" if covers else "frozen", 50.0, index, fps, bitrate, covers=covers,
                           freezes=freezes))  # fmt: skip
    for index in range(1 if quick else 12):
        rng = np.random.default_rng(5200 + index)
        seconds = 90.0 if quick else 360.0
        fps, bitrate = STREAMS[index % len(STREAMS)]
        gain = 0.35 if index % 4 == 3 else 1.0
        specs.append(_spec(rng, f"side-present-{index:03d}", "present", seconds, index, fps, bitrate, gain=gain,
                           noise=8.0 if gain < 1 else 3.0, **_negatives(rng, seconds)))  # fmt: skip
    return specs


def _spec(rng: np.random.Generator, name: str, scenario: str, seconds: float, index: int, fps: float, bitrate: int,
          **extra: object) -> SideSpec:  # fmt: skip
    room = ROOMS[index % len(ROOMS)]
    other = ROOMS[(index + 1 + int(rng.integers(len(ROOMS) - 1))) % len(ROOMS)]
    return SideSpec(name, scenario, seconds, room, other, PLAYERS[index % len(PLAYERS)], fps, bitrate,
                    seed=int(rng.integers(1 << 31)), drift_phase=float(rng.uniform(0, 2 * math.pi)),
                    side=-1 if index % 3 else 1, **extra)  # type: ignore[arg-type]  # fmt: skip


# --------------------------------------------------------------------------------------------------------------------
# The pictures


@functools.lru_cache(maxsize=4)
def _desk(seed: int) -> Frame:
    """A desk top's wood grain (seeded): lengthwise streaks over a warm brown, darker at its front edge."""
    rng = np.random.default_rng(seed)
    rows = HEIGHT - int(HEIGHT * 0.62)
    noise = rng.normal(0, 1, (rows, WIDTH // 8)).astype(np.float32)
    grain = np.asarray(cv2.resize(cv2.GaussianBlur(noise, (0, 0), 1.2), (WIDTH, rows), interpolation=cv2.INTER_CUBIC))
    base = np.array([60, 95, 140], np.float32) * float(rng.uniform(0.8, 1.1))
    shade = np.linspace(1.0, 0.8, rows, dtype=np.float32)[:, None, None]
    desk = (base * shade + 18 * grain[..., None]).clip(0, 255).astype(np.uint8)
    cv2.line(desk, (0, 2), (WIDTH, 2), (40, 60, 90), 3)
    return desk


@functools.lru_cache(maxsize=8)
def _device(stones: int) -> Frame:
    """The laptop's screen showing the platform's page, as a small picture."""
    page = platform_screen(stones, seconds=600 - stones * 10)
    return np.asarray(cv2.resize(page, (320, 180), interpolation=cv2.INTER_AREA), np.uint8)


def _arm(skin: tuple[float, float, float]) -> tuple[Frame, NDArray[np.float32]]:
    """A forearm and hand seen from above (a skin-coloured rounded bar, shaded), with its alpha."""
    arm = np.zeros((60, 260, 3), np.uint8)
    alpha = np.zeros((60, 260), np.uint8)
    cv2.ellipse(alpha, (130, 30), (125, 22), 0, 0, 360, 255, -1)
    cv2.circle(alpha, (240, 30), 26, 255, -1)
    shade = np.linspace(1.1, 0.75, 60, dtype=np.float32)[:, None, None]
    arm[:] = (np.array(skin, np.float32) * shade).clip(0, 255).astype(np.uint8)
    soft = np.asarray(cv2.GaussianBlur(alpha, (0, 0), 2), np.float32) * np.float32(1 / 255)
    return arm, soft


@dataclass
class SideComposer:
    """The frames of one side-camera clip as the phone would send them."""

    spec: SideSpec
    cutouts: dict[str, Cutout]
    paths: dict[str, Path]
    last: Frame | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        spec = self.spec
        self.rng = np.random.default_rng(spec.seed)
        self.room = load_background(spec.room, self.paths, self.rng)
        self.other = load_background(spec.other_room, self.paths, self.rng).at(0.0)
        self.desk = _desk(spec.seed % 4)
        self.arm = _arm(self.cutouts[spec.player].skin)
        self.cover = {kind: cover_image(kind, self.rng) for _, _, kind in spec.covers}
        self.noise = [np.clip(self.rng.normal(0, spec.noise, (HEIGHT, WIDTH, 3)), -40, 40).astype(np.int16)
                      for _ in range(16)]  # fmt: skip
        self.mask = np.zeros((HEIGHT, WIDTH), np.float32)
        self.screen_box = (350, 205, 590, 300) if spec.side < 0 else (50, 205, 290, 300)

    def gain(self, t: float) -> float:
        level = 1.0
        for at in self.spec.lights:
            if t >= at:
                level *= 1 - 0.3 * smooth((t - at) / LIGHT_RAMP_S)
        drift = 1 + DRIFT * math.sin(2 * math.pi * t / DRIFT_PERIOD_S + self.spec.drift_phase)
        return self.spec.gain * drift * level

    def scene(self, t: float) -> Frame:
        """The room, the desk, the laptop and the player, at scene scale."""
        spec = self.spec
        canvas = self.room.at(t).copy()
        top = int(HEIGHT * 0.62)
        canvas[top:] = self.desk
        x0, y0, x1, y1 = self.screen_box
        cv2.rectangle(canvas, (x0 - 8, y0 - 8), (x1 + 8, y1 + 50), (35, 35, 38), -1)  # the laptop, its keyboard
        cv2.rectangle(canvas, (x0 - 4, y1 + 10), (x1 + 4, y1 + 44), (70, 70, 74), -1)
        canvas[y0:y1, x0:x1] = cv2.resize(_device(20 + int(t / STONE_EVERY_S)), (x1 - x0, y1 - y0))
        lean = max((ramp(t, s, s + n, 0.5) for s, n in spec.leans), default=0.0)
        sway = 3 * math.sin(2 * math.pi * t / 3.7)
        cx = (150 if spec.side < 0 else 490) - spec.side * 70 * lean + sway
        self.mask[:] = 0
        place(canvas, self.mask, self.cutouts[spec.player], cx, 120 + 25 * lean, 78.0, spec.side * -38.0)
        for start, seconds in spec.reaches:
            reach = ramp(t, start, start + seconds, 0.8)
            if reach > 0:
                self._over_arm(canvas, cx, reach)
        return canvas

    def _over_arm(self, canvas: Frame, cx: float, reach: float) -> None:
        """An arm from the player's shoulder reaching ``reach`` of the way to the device, over the desk."""
        arm, alpha = self.arm
        hand = cx - self.spec.side * (40 + 180 * reach)
        if self.spec.side < 0:  # the player on the left: the hand is the arm's right end
            x = round(hand) - arm.shape[1]
        else:
            arm, alpha = arm[:, ::-1], alpha[:, ::-1]
            x = round(hand)
        y = 300
        left, right = max(0, x), min(WIDTH, x + arm.shape[1])
        if right <= left:
            return
        a = alpha[:, left - x : right - x, None]
        region = canvas[y : y + arm.shape[0], left:right].astype(np.float32)
        mixed = a * arm[:, left - x : right - x].astype(np.float32) + (1 - a) * region
        canvas[y : y + arm.shape[0], left:right] = mixed.astype(np.uint8)

    def pose(self, t: float) -> tuple[float, float, float, float, bool]:
        """The view's shift (pixels), turn (degrees) and closeness at ``t``, and whether it is turned away."""
        dx = dy = angle = 0.0
        scale = 1.0
        away = False
        for move in self.spec.moves:
            end = math.inf if move.back is None else move.back + MOVE_RAMP[move.kind]
            rise = MOVE_RAMP[move.kind]
            amount = ramp(t, move.start, end, rise) if move.back is not None else smooth((t - move.start) / rise)
            if move.kind == "away":
                away = away or amount >= 1.0
                dx += 0.35 * amount * WIDTH  # on its way round
                continue
            dx, dy = dx + amount * move.dx * WIDTH, dy + amount * move.dy * HEIGHT
            angle += amount * move.angle
            scale *= 1 + amount * (move.scale - 1)
        for at in self.spec.bumps:
            if at <= t < at + SHAKE_S:
                phase = (t - at) / SHAKE_S
                shake = math.sin(2 * math.pi * 4 * phase) * (1 - phase)
                dx += 3 * shake
                dy += 2 * shake
                angle += 1.0 * shake
        return dx, dy, angle, scale, away

    def view(self, scene: Frame, t: float) -> Frame:
        dx, dy, angle, scale, away = self.pose(t)
        if away:
            scene, dx, dy, angle, scale = self.other, 0.0, 0.0, 0.0, 1.0
        matrix = np.asarray(cv2.getRotationMatrix2D((WIDTH / 2 + dx, HEIGHT / 2 + dy), angle, ZOOM * scale), np.float64)
        matrix[:, 2] += (-dx, -dy)
        picture = cv2.warpAffine(scene, matrix, (WIDTH, HEIGHT), flags=cv2.INTER_LINEAR,
                                 borderMode=cv2.BORDER_REFLECT_101)  # fmt: skip
        lit = picture.astype(np.float32) * self.gain(t)
        noise = self.noise[int(self.rng.integers(len(self.noise)))]
        return np.clip(lit + noise, 0, 255).astype(np.uint8)

    def frames(self) -> Iterator[tuple[float, Frame]]:
        spec = self.spec
        for t in frame_times(spec.seconds, spec.fps):
            if any(s <= t < s + n for s, n in spec.freezes) and self.last is not None:
                yield t, self.last
                continue
            picture = self.view(self.scene(t), t)
            for start, seconds, kind in spec.covers:
                amount = ramp(t, start, start + seconds + COVER_S, COVER_S)
                if amount > 0:
                    picture = np.asarray(cv2.addWeighted(self.cover[kind], amount, picture, 1 - amount, 0), np.uint8)
            self.last = picture
            yield t, picture
