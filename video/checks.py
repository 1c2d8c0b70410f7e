"""Frame checks for article 36: pure functions over frames (numpy arrays in, observations out), and temporal rules
with hysteresis that turn a stream of observations into findings.

Nothing here touches the network, the event loop or the clock: times are passed in (seconds), so the same frames
always give the same findings (tests and benchmarks replay clips).

Observations per analysed frame (:func:`observe`):
- brightness and contrast (a covered or dark camera);
- the difference from the previous analysed frame, and how much of it moved (a frozen camera repeats the same image);
- the faces found, and the people the segmentation marks compared with the scene when the player was last seen
  (nobody: the player left the area, 36.4.1; two faces or a new body: another person, 36.4.2);
- the background outside the people: its brightness trace against the person's, its stillness (a replaced
  background, 36.4) and its sharpness against the person's (a blurred background, 36.4).

Rules (:class:`Monitor`): each condition must hold for ``on_s`` seconds before a finding starts, and be absent for
``off_s`` seconds before it ends, so that a single missed detection neither raises nor clears anything.
"""

from __future__ import annotations

import enum
import math
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any, Final, Protocol

import cv2
import numpy as np
from numpy.typing import NDArray

Frame = NDArray[np.uint8]
"""An image as OpenCV and aiortc give it: height x width x 3 (BGR), or height x width (grey)."""


class Check(enum.Enum):
    """What the service watches for, with the article each applies."""

    LEFT_AREA = "left-area"
    EXTRA_PERSON = "extra-person"
    COVERED = "camera-covered"
    FROZEN = "camera-frozen"
    LOST = "camera-lost"
    VIRTUAL_BACKGROUND = "virtual-background"
    BLURRED_BACKGROUND = "background-blurred"
    CAMERA_MOVED = "camera-moved"
    """A camera with an approved reference view (the side camera) no longer shows it (video.reference_view)."""
    SCREEN_CHANGED = "screen-changed"
    """The shared screen no longer shows what an arbiter approved (the platform's board): a review flag."""

    @property
    def article(self) -> str:
        return {
            "left-area": "36.4.1",
            "extra-person": "36.4.2",
            "camera-covered": "36.4",
            "camera-frozen": "36.4",
            "camera-lost": "36.4",
            "virtual-background": "36.4",
            "background-blurred": "36.4",
            "camera-moved": "36.4",
            "screen-changed": "36.4.3, 36.4.5",
        }[self.value]


POLICY_CHECKS: Final[dict[str, frozenset[Check]]] = {
    "absence": frozenset({Check.LEFT_AREA}),
    "extra-person": frozenset({Check.EXTRA_PERSON}),
    "camera": frozenset({Check.COVERED, Check.FROZEN, Check.LOST, Check.CAMERA_MOVED}),
    "virtual-background": frozenset({Check.VIRTUAL_BACKGROUND, Check.BLURRED_BACKGROUND}),
    "earphones": frozenset(),
    "devices": frozenset({Check.SCREEN_CHANGED}),
}
"""The checks each name of an event section's ``checks`` list (``[sections.policy]``) turns on (``virtual-background``:
a replaced background and a blurred one alike, both hiding the surroundings, 36.4).  ``earphones`` is
the prompted ear check (36.2), an arbiter's action that no policy turns off, and ``devices`` (36.4.3) has no passive
check yet: both turn on nothing here."""


def checks_for_policy(names: Iterable[str]) -> frozenset[Check]:
    """The checks a section's ``checks`` list enables (:data:`POLICY_CHECKS`); ValueError for a name it does not
    know (the event file's names are checked when it is loaded)."""
    enabled: set[Check] = set()
    for name in names:
        if name not in POLICY_CHECKS:
            raise ValueError(f"unknown check {name!r}; expected one of {', '.join(POLICY_CHECKS)}")
        enabled |= POLICY_CHECKS[name]
    return frozenset(enabled)


@dataclass(frozen=True, slots=True)
class Box:
    x: int
    y: int
    width: int
    height: int
    landmarks: tuple[tuple[int, int], ...] = ()
    """Where the detector gives them: the eyes, the nose tip and the mouth's corners (left and right as in the
    picture), in the frame's pixels."""

    @property
    def turn(self) -> float | None:
        """How far the head is turned, from the landmarks: the nose tip's offset from between the eyes, in eye
        distances (0 facing the camera; negative when the nose points to the picture's left, positive to its
        right; about ±0.5 in a clear three-quarter view).  None without landmarks."""
        if len(self.landmarks) < 3:
            return None
        (left_x, _), (right_x, _), (nose_x, _) = self.landmarks[:3]
        eyes = right_x - left_x
        return (nose_x - (left_x + right_x) / 2) / eyes if eyes > 0 else None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Box:
        """A box as :func:`dataclasses.asdict` wrote it to JSON (a worker's capture, proctor.worker)."""
        return cls(int(data["x"]), int(data["y"]), int(data["width"]), int(data["height"]),
                   tuple((int(x), int(y)) for x, y in data.get("landmarks", ())))  # fmt: skip

    def touches_edge(self, frame_width: int, frame_height: int, margin: int = 4) -> bool:
        return (
            self.x <= margin
            or self.y <= margin
            or self.x + self.width >= frame_width - margin
            or self.y + self.height >= frame_height - margin
        )


class FaceDetector(Protocol):
    name: str

    def detect(self, frame: Frame) -> list[Box]:
        """The faces in a BGR (or grey) frame, in its pixel coordinates."""
        ...


@dataclass(frozen=True, slots=True)
class Observation:
    at: float
    brightness: float
    contrast: float
    change: float | None
    """Mean absolute difference from the previous analysed frame (0–255, on the 4x4-averaged grid); None for the
    first frame."""
    faces: tuple[Box, ...]
    width: int
    height: int
    background_brightness: float | None = None
    """Mean grey level of the background: the frame outside the people in view (None when nobody is in view, or
    when too little of the frame is left)."""
    background_change: float | None = None
    """Mean absolute difference of the background from the previous analysed frame (same pixels in both)."""
    background_gain: float | None = None
    """How much brighter the background got since the previous analysed frame, as the log of a ratio: the mean of
    its cells' log ratios around their median (:func:`exposure_change`), on the cells outside the people in both
    frames.  Summed over frames it traces the background's brightness on fixed pixels, which the people moving in
    front of it does not disturb; the encoder's warm-up refines the picture without a bias, so the trace ignores it.
    A replacement picture's trace is flat (it does not follow the camera's exposure)..."""
    moving: float | None = None
    """The share of the grid's cells whose grey level changed by :data:`MOVING_LEVEL` or more since the previous
    analysed frame: a frozen source, re-encoded, keeps being refined by the encoder in small steps everywhere (the
    mean change stays 0.1-0.5), but no cell moves by this much; a real person is never that still."""
    people: float | None = None
    """The share of the frame the person segmentation marks (None without a segmenter)."""
    player_seen: bool | None = None
    """The player is still there without a face in view (looking down, turned away, in dim light): the region the
    player filled when their face was last found still looks as it did and is still marked as a person.  None without
    a segmenter or before a face was ever found."""
    new_body: float = 0.0
    """The share of the frame covered by a body that was not there when the player was last seen alone: marked as a
    person where the room used to be, looking unlike the room, and without the player's face in it (36.4.2)."""
    person_gain: float | None = None
    """...while the person's, the same on the cells inside the person in both frames, follows the camera's exposure
    and the room's light (None: nobody in view, or too little of the person or the background to judge)."""
    background_sharpness: float | None = None
    """How much fine detail the background has for its coarse detail (:func:`detail_bands`: 0.3-0.65 for a room through
    a webcam and VP8, 0.12-0.2 when an app blurs it)..."""
    person_sharpness: float | None = None
    """...and the person's inner region's..."""
    background_structure: float | None = None
    """...and how much coarse detail the background has (grey levels): a plain wall has little and cannot be
    judged."""
    bent_down: bool = False
    """The player went out of the picture through its bottom edge a moment ago (:class:`video.analysis.FrameAnalyser`):
    bent down, not gone; not someone in view either (a frozen picture is not told by them)."""
    gone_since: float | None = None
    """The player presumed bent down was found gone after all (nothing moved where they sat): the absence counts
    from when they went out of the picture, this time (:class:`video.analysis.FrameAnalyser`)."""
    shows_room: bool | None = None
    """The whole picture is the room as it was when the player was last seen (outside where the player sat, within
    a little exposure change): a bare wall the player walked away from, not a lens covered by a hand or a cap, which
    show something else.  None before the player was ever seen."""
    edges: float | None = None
    """How much edge the whole frame has (its mean gradient at 320x240): a lens covered by a hand or a cap has none;
    a white wall with anything on it has some."""
    background_halo: float | None = None
    """How much of the person's colour is left just beyond their edge over a plain background (:func:`edge_halo`:
    0.00-0.02 for a real wall, 0.07-0.25 where an app blurred the whole frame and laid the sharp person over it);
    None where it cannot be told (no plain background beside the person, nobody in view)."""

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Observation:
        """An observation as :func:`dataclasses.asdict` wrote it to JSON (a worker's capture, proctor.worker)."""
        values = {f.name: data[f.name] for f in fields(cls) if f.name in data}
        values["faces"] = tuple(Box.from_json(box) for box in data.get("faces", ()))
        return cls(**values)


CROWD_GAP_S = 1.0
"""Another person unseen for at most this long is still there (:meth:`Monitor.feed`)."""
PASS_GAP_S = 3.0
"""A second face seen again within this long of the last sighting is the same person (passing behind the player,
hidden by the player's head for up to this long: the set's passes in 3-5 s were hidden 2.6 s): the episode counts
from the first sighting (:meth:`Monitor.feed`)."""
TIME_SLACK_S = 1e-6
"""Durations are compared with this slack: the frames' times are quotients of the decoder's clock, and a gap or a
hold of exactly its length must count."""
MOVING_LEVEL = 4.0
"""Grey levels (on the 4x4-averaged grid) a cell must change by to count as moving (:attr:`Observation.moving`)."""
SAME_LEVEL = 22.0
"""Grey levels within which a cell still looks as it did (exposure compensated): :func:`compare_scene`."""


@dataclass(frozen=True, slots=True)
class Scene:
    """The stream when the player was last seen with their face: the 4x4-averaged grey grid and where the player
    was (the segmentation's mask).  What the player's body and the room looked like, for :func:`compare_scene`."""

    grey: NDArray[np.float32]
    player: NDArray[np.bool_]
    at: float
    face: Box | None = None
    """The player's face then (in the frame's pixels)."""


FACE_IN_PLACE = 0.5
"""A face within this many face widths of where the player's face was when the scene was taken, and of about its
size, is the player still sitting where they sat."""


def face_in_place(faces: Sequence[Box], rest: Box | None) -> bool:
    """Whether one of ``faces`` is the player's face where it sat (:data:`FACE_IN_PLACE`)."""
    if rest is None:
        return False
    for face in faces:
        apart = math.hypot(face.x + face.width / 2 - rest.x - rest.width / 2,
                           face.y + face.height / 2 - rest.y - rest.height / 2)  # fmt: skip
        if apart <= FACE_IN_PLACE * rest.width and 0.7 <= face.width / max(rest.width, 1) <= 1.4:
            return True
    return False


def _grow(mask: NDArray[np.bool_], cells: int) -> NDArray[np.bool_]:
    kernel = np.ones((2 * cells + 1, 2 * cells + 1), np.uint8)
    grown: NDArray[np.bool_] = cv2.dilate(mask.astype(np.uint8), kernel).astype(bool)
    return grown


def _shrink(mask: NDArray[np.bool_], cells: int) -> NDArray[np.bool_]:
    kernel = np.ones((2 * cells + 1, 2 * cells + 1), np.uint8)
    shrunk: NDArray[np.bool_] = cv2.erode(mask.astype(np.uint8), kernel).astype(bool)
    return shrunk


PLAYER_KEPT = 0.5
"""Share of the player's remembered region that must still look as it did..."""
PLAYER_MARKED = 0.2
"""...with at least this share of it still marked as a person..."""
PLAYER_UNCHANGED = 0.8
"""...or at least this share of it unchanged; or, failing that..."""
LOCAL_MOVING = 2.0
"""Movement counts as the player's where it is at least this many times denser than in the rest of the picture."""
PLAYER_MOVING = 0.01
"""...at least this share of the region around it marked as a person and moving (:data:`MOVING_LEVEL`)."""
BODY_MIN_SHARE = 0.025
"""A new body covers at least this share of the frame (as one region)..."""
UNMARKED_BODY_SHARE = 0.08
"""...or, not marked as a person, at least this share standing from the frame's top edge down to its bottom edge
(someone standing close beside the seated player, the head above the picture: the segmentation misses a body
without a head; a thing that moved in the room and came to rest, a box on a shelf, a chair pushed in, does not)..."""
ATTACHED_BODY_SHARE = 0.05
"""A new marked region that the segmentation joins to the person whose face is in view is another body only if it
covers at least this share of the frame: the player turning back from a turn, or reaching out, widens their own
mask by 2-3 %; someone standing beside them is a whole body (the head above the picture, 8 % and more)."""
STANDING_GAP = 12
"""Rows (a tenth of the grid's height) across which a standing body's parts join (a belt, a shirt the colour of the
wall behind it)."""
UNMARKED_BODY_MOVING = 0.3
"""...that is mostly still (at most this share of it changed since the previous analysed frame: someone standing
sways, a moving background changes all over)..."""
BODY_PLAYER_KEPT = 0.5
"""...and is counted only while at least this share of the player's remembered region still looks as it did (or
the player's face is where it sat: :func:`face_in_place`; someone standing close behind the player covers part of
that region, 0.39-0.46 of it left in ``second-body-076-building``)..."""
ROOM_CHANGED = 0.4
"""...and while at least this share of the room looks as it did when the scene was taken (someone standing beside
the player covers a part of it, up to half of it; a background effect switched on, or the camera turned, changes all
of it: measured on the evaluation set, a replacement left 0.22-0.33 of the room looking as it did, a second person
standing close beside the player 0.49, which 0.5 missed)."""
GAIN_BIN = 0.02
"""The bins (of the log of a cell's grey level over the scene's) in which :func:`room_gain` looks for the camera's
gain."""
GAIN_DARK = 12.0
"""Cells darker than this in the scene say nothing of the gain (their ratios are the sensor's noise)."""


def room_gain(current: NDArray[np.float32], reference: NDArray[np.float32]) -> float:
    """The camera's exposure (and the room light's) change between the scene's room and the room now: the most
    common ratio of their cells' grey levels.  The cells still showing the room share the camera's gain; those a
    person now covers, or that moved, scatter.  The ratio of the medians moves with a large body standing in front of
    the room (a third of it covered by a bright shirt makes the rest look 25 % darker and unlike itself)."""
    usable = reference >= GAIN_DARK
    if int(usable.sum()) < 50:
        return float(np.median(current)) / max(float(np.median(reference)), 1.0)
    ratios = np.log(np.maximum(current[usable], 1.0) / reference[usable])
    bins = np.arange(-1.0, 1.0 + GAIN_BIN, GAIN_BIN)
    counts, _ = np.histogram(ratios, bins=bins)
    smoothed = np.convolve(counts, np.array([1.0, 2.0, 1.0]), mode="same")
    peak = int(np.argmax(smoothed))
    centre = (bins[peak] + bins[peak + 1]) / 2
    # The median of the ratios around the peak: the bins find it, they do not round it.
    return float(np.exp(np.median(ratios[np.abs(ratios - centre) <= 1.5 * GAIN_BIN])))


def compare_scene(
    grey: NDArray[np.float32], people: NDArray[np.bool_], faces: Sequence[Box], scene: Scene, step: int = 4,
    moved: NDArray[np.bool_] | None = None, change: NDArray[np.float32] | None = None,
) -> tuple[bool, float]:  # fmt: skip
    """Whether the player is still where they were when last seen with a face, and the share of the frame a new body
    covers (see :attr:`Observation.player_seen` and :attr:`Observation.new_body`).  ``grey`` and ``people`` are on
    the scene's grid; ``faces`` in the frame's pixels (``step`` to the grid); ``moved``: the cells that moved since
    the previous analysed frame, and ``change``: by how much (grey levels)."""
    room = ~_grow(scene.player, 3)
    # The camera's exposure and the room's light since then, from the room alone (the player leaving changes the
    # frame's mean, not the room's).
    reference = scene.grey[room] if room.mean() >= BACKGROUND_MIN_SHARE else scene.grey
    current = grey[room] if room.mean() >= BACKGROUND_MIN_SHARE else grey
    gain = room_gain(current, reference)
    same = np.abs(grey - scene.grey * gain) < SAME_LEVEL
    inner = _shrink(scene.player, 2)
    if inner.sum() < 20:
        inner = scene.player
    kept = float(same[inner].mean()) if inner.any() else 0.0
    marked = float(people[inner].mean()) if inner.any() else 0.0
    # The region still looks as it did, and the segmentation still sees a person in some of it (or nearly all of it
    # looks the same: the segmentation loses a person whose face is hidden more often than the picture changes).
    seen = kept >= PLAYER_KEPT and (marked >= PLAYER_MARKED or kept >= PLAYER_UNCHANGED)
    if not seen and moved is not None:
        # Or someone is still moving where the player was, and is marked as a person there: a player who looks down
        # or turns away changes how the region looks, but keeps moving in it; an empty room is still.
        near = _grow(scene.player, 2)
        marked_near = float(people[near].mean()) if near.any() else 0.0
        moving_near = float((moved & people)[near].mean()) if near.any() else 0.0
        # The movement must be the player's, not the whole picture's (the exposure hunting over a bare wall, the
        # encoder's key frames): more of it where the player was than elsewhere.
        elsewhere = float(moved[~near].mean()) if (~near).any() else 0.0
        local = moving_near >= LOCAL_MOVING * elsewhere
        seen = (
            local
            and marked_near >= PLAYER_MARKED
            and moving_near >= PLAYER_MOVING
            and _reaches_bottom(_grow(moved & people & near, 1) & near, BOWED_MIN_SHARE)
        )  # a seated body goes on below the frame; a thing moving on the table does not
        if not seen:
            seen = _bowed(people, moved, scene.player, change)
    if kept < BODY_PLAYER_KEPT and not face_in_place(faces, scene.face):
        # The player is not where they sat (leaning out, getting up): what is new is the player's own body.  With
        # their face where it sat, someone else covers the region the player filled (standing close behind them).
        return seen, 0.0
    if room.mean() >= BACKGROUND_MIN_SHARE and float(same[room].mean()) < ROOM_CHANGED:
        # The room as a whole no longer looks as it did (a background effect switched on, the camera moved): the
        # scene is stale, and what differs from it is no body.  A new scene is taken at the next calm frame.
        return seen, 0.0
    centres = [((f.y + f.height // 2) // step, (f.x + f.width // 2) // step) for f in faces]
    # A body is new where the room was: marked as a person and unlike the room, or (the segmentation misses a body
    # whose head is out of the picture) a large region unlike the room standing from the frame's top to its bottom.
    body = _new_regions(people & room & ~same, centres, BODY_MIN_SHARE, standing=False, people=people)
    body = max(body, _new_regions(room & ~same, centres, UNMARKED_BODY_SHARE, standing=True, moved=moved))
    return seen, body / same.size


def _new_regions(
    fresh: NDArray[np.bool_],
    centres: Sequence[tuple[int, int]],
    min_share: float,
    standing: bool,
    moved: NDArray[np.bool_] | None = None,
    people: NDArray[np.bool_] | None = None,
) -> int:
    """The cells of ``fresh``'s regions of at least ``min_share`` of the grid without a face's centre in them (the
    player moved, or a face the detector counts already); ``standing``: only regions from the frame's top edge down
    to its bottom edge (across gaps of a few rows: a belt, a shirt the colour of the wall behind); ``moved``: only
    regions mostly still since the previous frame; ``people``: the segmentation's mask, in which a region joined to
    a face's person must be at least :data:`ATTACHED_BODY_SHARE`."""
    attached: set[int] = set()
    person_labels: NDArray[np.int32] | None = None
    if people is not None and centres:
        person_labels = np.asarray(cv2.connectedComponents(people.astype(np.uint8), connectivity=8)[1], np.int32)
        rows_, cols_ = people.shape
        attached = {int(person_labels[r, c]) for r, c in centres if 0 <= r < rows_ and 0 <= c < cols_} - {0}
    cells = fresh.astype(np.uint8)
    if standing:
        cells = np.asarray(cv2.morphologyEx(cells, cv2.MORPH_CLOSE, np.ones((STANDING_GAP, 1), np.uint8)), np.uint8)
    count, labels, stats, _ = cv2.connectedComponentsWithStats(cells, connectivity=8)
    rows, cols = fresh.shape
    total = 0
    for label in range(1, count):
        area = int(stats[label, cv2.CC_STAT_AREA])
        if area < min_share * fresh.size:
            continue
        if any(0 <= r < rows and 0 <= c < cols and labels[r, c] == label for r, c in centres):
            continue
        top, height = int(stats[label, cv2.CC_STAT_TOP]), int(stats[label, cv2.CC_STAT_HEIGHT])
        if standing and not (top == 0 and top + height >= rows):
            continue
        if moved is not None and float(moved[labels == label].mean()) > UNMARKED_BODY_MOVING:
            continue  # something in the room keeps moving (a screen, a pet, a swinging door), not a body at rest
        if person_labels is not None and area < ATTACHED_BODY_SHARE * fresh.size:
            row, col = int(stats[label, cv2.CC_STAT_TOP]), int(stats[label, cv2.CC_STAT_LEFT])
            where = np.argwhere(labels[row : row + height, col:] == label)[0]
            if int(person_labels[row + where[0], col + where[1]]) in attached:
                continue  # the player's own shoulder or arm, turned back or reaching out, widening their mask
        total += area
    return total


ROOM_LEVEL = 8.0
"""Grey levels within which the room, on average, still looks as it did when the player was last seen..."""
ROOM_GAIN = (0.8, 1.25)
"""...after a change of the camera's exposure within these bounds (a hand or a cap over the lens is far darker)."""


def shows_room(grey: NDArray[np.float32], scene: Scene) -> bool:
    """Whether the picture is the room of the scene (see :attr:`Observation.shows_room`)."""
    room = ~_grow(scene.player, 3)
    if room.mean() < BACKGROUND_MIN_SHARE or grey.shape != scene.grey.shape:
        return False
    reference, current = scene.grey[room], grey[room]
    gain = float(np.median(current)) / max(float(np.median(reference)), 1.0)
    if not ROOM_GAIN[0] <= gain <= ROOM_GAIN[1]:
        return False
    return float(np.abs(current - reference * gain).mean()) < ROOM_LEVEL


BOWED_MIN_SHARE = 0.003
"""A bowed head's moving region covers at least this share of the frame..."""
BOWED_ROWS = 3
"""...and reaches the bottom this many rows of the grid..."""
BOWED_LEVEL = 8.0
"""...and its moving cells' top tenth changed by this many grey levels or more: a head bobbing against the room
(the set's players looking down: 13-27 in nine frames of ten); the encoder refreshing the ghost of a player who
walked away from a bare wall moves the cells where they sat by 4-5 (in ``live-leaves-005-cup`` it held the absence
off every few seconds)."""


def _bowed(
    people: NDArray[np.bool_], moved: NDArray[np.bool_], player: NDArray[np.bool_],
    change: NDArray[np.float32] | None = None,
) -> bool:  # fmt: skip
    """The player bent over the board: only the top of the head is left in the picture, at its bottom edge, below
    where the player sat, and it bobs.  The segmentation rarely marks so little of a head, so what counts is a
    compact moving region touching the bottom rows within the player's columns (the room's furniture there is
    still), moving by more than the encoder's refreshes (:data:`BOWED_LEVEL`)."""
    columns: NDArray[np.bool_] = np.asarray(player.any(axis=0), dtype=bool)
    if not columns.any():
        return False
    near = np.zeros_like(moved)
    near[:, columns] = True
    near[: moved.shape[0] * 3 // 4] = False  # the bottom quarter
    if float((moved & near).sum()) < LOCAL_MOVING * float(moved[~near].mean()) * float(near.sum()):
        return False  # the whole picture moves, not a head at the bottom
    if change is not None and (moved & near).any() and float(np.percentile(change[moved & near], 90)) < BOWED_LEVEL:
        return False  # the encoder refreshing the picture where the player was, not a head
    return _reaches_bottom(_grow(moved & near, 1) & near, BOWED_MIN_SHARE)


def _reaches_bottom(cells: NDArray[np.bool_], min_share: float) -> bool:
    """A region of at least ``min_share`` of the grid reaches its bottom :data:`BOWED_ROWS` rows."""
    count, _, stats, _ = cv2.connectedComponentsWithStats(cells.astype(np.uint8), connectivity=8)
    bottom = cells.shape[0] - BOWED_ROWS
    for label in range(1, count):
        y, height, area = (int(stats[label, key]) for key in (cv2.CC_STAT_TOP, cv2.CC_STAT_HEIGHT, cv2.CC_STAT_AREA))
        if y + height > bottom and area >= min_share * cells.size:
            return True
    return False


def _face_cells(faces: Sequence[Box], shape: tuple[int, ...], step: int = 4) -> NDArray[np.bool_]:
    cells = np.zeros(shape[:2], dtype=bool)
    for face in faces:
        cells[face.y // step : (face.y + face.height) // step, face.x // step : (face.x + face.width) // step] = True
    return cells


def _grid(grey: Frame) -> NDArray[np.float32]:
    """The 4x4 block means of a grey frame (the checks' grid: 160x120 for 640x480): averaging removes most of the
    encoder's fine noise, which a point sample keeps."""
    height, width = grey.shape[0] // 4 * 4, grey.shape[1] // 4 * 4
    # OpenCV's area resize by a whole factor sums each block and scales it by 1/16: the same float32 means as numpy's
    # block mean (the sums of 16 grey levels are exact), ten times faster.
    blocks = grey[:height, :width].astype(np.float32)
    grid = np.asarray(cv2.resize(blocks, (width // 4, height // 4), interpolation=cv2.INTER_AREA), dtype=np.float32)
    return grid


Bands = tuple[NDArray[np.float32], NDArray[np.float32]]
"""The picture's fine and coarse detail per cell of the grid (:func:`detail_bands`)."""


def _half(grey: Frame, shape: tuple[int, int]) -> NDArray[np.float32]:
    return np.asarray(cv2.resize(grey, (shape[1] * 2, shape[0] * 2), interpolation=cv2.INTER_AREA), dtype=np.float32)


def _bands(half: NDArray[np.float32], shape: tuple[int, int]) -> Bands:
    size = (shape[1], shape[0])
    fine = cv2.resize(np.abs(cv2.GaussianBlur(half, (0, 0), 1.0) - cv2.GaussianBlur(half, (0, 0), 2.0)), size,
                      interpolation=cv2.INTER_AREA)  # fmt: skip
    # The coarse band on the grid itself (half the size again, the sigmas halved with it): its detail is far coarser
    # than a grid cell, and blurs of 2 and 4 cells cost a sixth of blurs of 4 and 8 pixels at 320x240.
    grid = np.asarray(cv2.resize(half, size, interpolation=cv2.INTER_AREA), dtype=np.float32)
    coarse = np.abs(cv2.GaussianBlur(grid, (0, 0), 2.0) - cv2.GaussianBlur(grid, (0, 0), 4.0))
    return np.asarray(fine, dtype=np.float32), np.asarray(coarse, dtype=np.float32)


def _gradient(half: NDArray[np.float32], shape: tuple[int, int]) -> NDArray[np.float32]:
    gradient = np.abs(cv2.Sobel(half, cv2.CV_32F, 1, 0)) + np.abs(cv2.Sobel(half, cv2.CV_32F, 0, 1))
    return np.asarray(cv2.resize(gradient, (shape[1], shape[0]), interpolation=cv2.INTER_AREA), dtype=np.float32)


def grid_shape(frame: Frame) -> tuple[int, int]:
    """The checks' grid for a frame of this size (rows, columns): :func:`_grid`'s."""
    return frame.shape[0] // 4, frame.shape[1] // 4


def detail_bands(grey: Frame, shape: tuple[int, int]) -> Bands:
    """Per cell of the grid ``shape``: the picture's detail in a fine band and in a coarse band (the mean absolute
    difference of Gaussians of sigma 1 and 2 at 320x240, and of 2 and 4 cells on the grid: 4 and 8 pixels at
    320x240).  A picture's fine
    detail over its coarse detail stays about the same at every contrast (0.3-0.65 for a webcam's room at these
    bitrates); a blur of sigma 8-16 px at 640x480 takes the fine band away and leaves the coarse one (0.12-0.2).  A
    plain wall has little of either and is not judged.  Four Gaussian blurs, still among the dearest of the cheap
    checks, which :class:`video.analysis.FrameAnalyser` measures about once a second and reuses between."""
    return _bands(_half(grey, shape), shape)


def _edges(grey: Frame, shape: tuple[int, int]) -> tuple[NDArray[np.float32], NDArray[np.float32], NDArray[np.float32]]:
    """:func:`detail_bands` and the mean gradient magnitude per cell (how much edge there is)."""
    half = _half(grey, shape)
    fine, coarse = _bands(half, shape)
    return fine, coarse, _gradient(half, shape)


def _detail_ratio(fine: NDArray[np.float32], coarse: NDArray[np.float32], where: NDArray[np.bool_]) -> float:
    return float(fine[where].sum()) / max(float(coarse[where].sum()), 1e-6)


def person_mask(
    faces: Sequence[Box], width: int, height: int, step: int = 1, margin: float = 0.25
) -> NDArray[np.bool_]:
    """Where the people are, roughly, without a segmenter: around each face, two and a half face-widths wide (the
    shoulders), from half a face above it down to the bottom of the frame (head, shoulders, body and arms at a desk),
    widened by ``margin`` face-widths on every side for the movement between two analysed frames.  ``step``: the
    mask of a frame subsampled by that factor."""
    mask = np.zeros((math.ceil(height / step), math.ceil(width / step)), dtype=bool)
    for face in faces:
        extra = int(margin * face.width)
        x0 = max(0, (face.x - 3 * face.width // 4 - extra) // step)
        x1 = min(mask.shape[1], (face.x + 7 * face.width // 4 + extra) // step + 1)
        y0 = max(0, (face.y - face.height // 2 - extra) // step)
        mask[y0:, x0:x1] = True
    return mask


BACKGROUND_MIN_SHARE = 0.1
"""Below this share of the frame left outside the people, the background is not judged."""
BLUR_MARGIN = 8
"""The background's detail (the blurred-background check) is measured this many cells (32 pixels at 640x480) away
from the people: the coarse band (Gaussians of 16 and 32 pixels) spreads a person's edges that far into the
background, the fine band does not, so a bare wall beside a person looked blurred (3 of the 4 false alarms of
run 8, the wall behind a second person standing far back)."""
PERSON_MIN_SHARE = 0.03
"""Below this share of the frame marked as a person, the person's own region is not judged."""

HALO_SIZE: Final = (320, 240)
"""The edge halo (:func:`edge_halo`) is measured on the frame at this size (half of 640x480)."""
_HALO_OFFSETS = np.arange(-12, 37, dtype=np.float32)
"""The samples of a profile across the person's edge, in pixels of :data:`HALO_SIZE` along the mask's outward
normal (-24 to +72 pixels at 640x480)."""
_HALO_PERSON = slice(2, 8)
"""The person's colour: 20 to 10 pixels (at 640x480) inside the mask's edge..."""
_HALO_FAR = slice(38, 45)
"""...the background's: 52 to 64 pixels outside it, beyond the reach of an app's blur of 8-16 px..."""
_HALO_SEARCH = (4, 21)
"""...and where the colour changes from the one to the other (the person's own edge) is looked for within 16 pixels
of the mask's edge either way: the mask is that far off now and then."""
_HALO_NEAR = (2, 4, 6)
"""Beyond the person's edge, 4, 8 and 12 pixels out (at 640x480): where a blurred frame keeps the person's colours..."""
_HALO_BEYOND = (2, 4, 6, 8, 10, 12, 16, 20)
"""...and 4 to 40 pixels out: the background must change smoothly there (a blur's tail or a plain wall; not another
object's edge, such as a dark cupboard beside the player)..."""
_HALO_CLEAN = (16, 20)
"""...and be the far background's colour again at 32 and 40 pixels out."""
HALO_CONTRAST = 24.0
"""A profile is judged only where the person and the background differ by this much (grey levels, the distance of
their colours)..."""
HALO_FLAT = 4.0
"""...and the background is flat where its colour is taken (the standard deviation of each channel; the person's
within twice this): the signal is for plain walls, where nothing else changes near the person."""
HALO_STEP = 0.12
"""The largest change of the profile between two samples beyond the person's edge, as a share of the contrast (a
blur's tail changes by a few hundredths; an object's edge by a third and more)."""
HALO_BACK = 0.05
"""The profile at 32 and 40 pixels out must be within this share of the contrast of the far background."""
HALO_EDGES = 10
"""Fewer usable profiles than this: the frame is not judged."""


@dataclass(frozen=True, slots=True)
class Halo:
    """The edge halo measured on a frame (:func:`edge_halo`), to be reused on the next frames like the bands."""

    value: float | None


def edge_halo(frame: Frame, people: NDArray[np.float32]) -> float | None:
    """How much of the person's colour is left just beyond their edge, over a plain background: the median, over
    profiles across the segmentation mask's edge (normal to it), of the colour 4-12 pixels beyond the person's own
    edge, as a share of the contrast between the person and the background (0: the background's colour; 1: the
    person's).  A real wall behind a person changes colour within 1-3 pixels, through VP8 at 120-800 kbit/s too
    (the evaluation set's negatives: median 0.00, 99th percentile 0.03); an app that blurs the whole frame and lays
    the sharp person over it through a mask that hugs the person smears the person's colours outward over the blur's
    reach (8-16 px: 0.07-0.25).  An app that blurs the background without the person (a mask-weighted blur) leaves
    no such smear, and one whose mask reaches 10 px or more beyond the person shows the real wall where this looks.

    Only profiles that can say it count: the person's and the background's colours far enough apart and flat, the
    person's edge found near the mask's edge, the background changing smoothly beyond it and back to its colour 32
    pixels out (a textured room, or another object beside the player, is left out).  None when fewer than
    :data:`HALO_EDGES` profiles can (``people``: the segmentation's mask on the grid, 0..1)."""
    width, height = HALO_SIZE
    mask = np.asarray(cv2.GaussianBlur(people.astype(np.float32), (0, 0), 0.5), dtype=np.float32)
    inside = (mask >= 0.5).astype(np.uint8)
    rows, cols = np.nonzero(inside.astype(bool) & (cv2.erode(inside, np.ones((3, 3), np.uint8)) == 0))
    gx = cv2.Sobel(mask, cv2.CV_32F, 1, 0, ksize=3)[rows, cols]
    gy = cv2.Sobel(mask, cv2.CV_32F, 0, 1, ksize=3)[rows, cols]
    length = np.hypot(gx, gy)
    keep = length > 0.05
    scale = width / mask.shape[1]
    x0, y0 = (cols[keep] + 0.5) * scale - 0.5, (rows[keep] + 0.5) * scale - 0.5
    out_x, out_y = -gx[keep] / length[keep], -gy[keep] / length[keep]  # the mask falls outwards
    # A profile is a straight line: it stays inside the picture when both its ends do.
    ends = _HALO_OFFSETS[[0, -1]]
    end_x, end_y = x0[:, None] + out_x[:, None] * ends[None, :], y0[:, None] + out_y[:, None] * ends[None, :]
    whole = (end_x.min(1) >= 1) & (end_x.max(1) <= width - 2) & (end_y.min(1) >= 1) & (end_y.max(1) <= height - 2)
    if int(whole.sum()) < HALO_EDGES:
        return None
    xs = (x0[whole, None] + out_x[whole, None] * _HALO_OFFSETS[None, :]).astype(np.float32)
    ys = (y0[whole, None] + out_y[whole, None] * _HALO_OFFSETS[None, :]).astype(np.float32)
    marked = np.asarray(cv2.remap(mask, (xs + 0.5) / scale - 0.5, (ys + 0.5) / scale - 0.5, cv2.INTER_LINEAR))
    # 16 pixels out and beyond: background; and where the person's colour is taken, the person.  The profiles are
    # narrowed step by step, the cheapest test first (the same profiles pass as with every test on every profile).
    placed = (marked[:, 20:] < 0.3).all(1) & (marked[:, :8] > 0.7).all(1)
    if int(placed.sum()) < HALO_EDGES:
        return None
    small = np.asarray(cv2.resize(frame[..., :3] if frame.ndim == 3 else cv2.cvtColor(frame, cv2.COLOR_GRAY2BGR),
                                  HALO_SIZE, interpolation=cv2.INTER_AREA), dtype=np.float32)  # fmt: skip
    colours = np.asarray(cv2.remap(small, xs[placed], ys[placed], cv2.INTER_LINEAR), dtype=np.float32)  # n x s x 3
    person, far = colours[:, _HALO_PERSON].mean(1), colours[:, _HALO_FAR].mean(1)
    step = person - far
    contrast = (step * step).sum(1)
    apart = contrast >= HALO_CONTRAST**2
    colours, person, far, step, contrast = colours[apart], person[apart], far[apart], step[apart], contrast[apart]
    flat = colours[:, _HALO_FAR].std(1).max(1) < HALO_FLAT
    usable = flat & (colours[:, _HALO_PERSON].std(1).max(1) < 2 * HALO_FLAT)
    if int(usable.sum()) < HALO_EDGES:
        return None
    # Each profile as a share of the contrast: 1 the person's colour, 0 the background's.
    share = np.einsum("nsc,nc->ns", colours[usable] - far[usable][:, None, :], step[usable]) / contrast[usable][:, None]
    first, last = _HALO_SEARCH
    below = share[:, first:last] < 0.5
    crossed = below.any(1)
    edge = first + np.argmax(below[crossed], axis=1)  # the person's own edge: where the colour is half-way
    share = share[crossed]
    reach = edge[:, None] + np.asarray(_HALO_BEYOND + _HALO_CLEAN)[None, :]
    within = (reach < share.shape[1]).all(1)
    beyond = np.take_along_axis(share, np.minimum(reach, share.shape[1] - 1), axis=1)
    tail, back = beyond[:, : len(_HALO_BEYOND)], beyond[:, len(_HALO_BEYOND) :]
    plain = within & (np.abs(np.diff(tail, axis=1)).max(1) < HALO_STEP) & (np.abs(back).max(1) < HALO_BACK)
    if int(plain.sum()) < HALO_EDGES:
        return None
    return float(np.median(tail[plain, : len(_HALO_NEAR)].mean(1)))


def _trimmed_change(difference: NDArray[np.float32]) -> float:
    """The background's change (mean absolute difference), leaving out the largest 20 % of the differences: the
    person's shoulders, arms and hands reach outside the mask now and then (the pan check's measure)."""
    magnitude = np.abs(difference)
    return float(magnitude[magnitude <= np.percentile(magnitude, 80)].mean())


EXPOSURE_CELLS = 20
"""A region's exposure change is measured on at least this many cells of the grid."""
EXPOSURE_AROUND = 0.1
"""The cells whose log ratio is within this of the region's median count towards its exposure change: a cell the
person's movement changed (an arm, a turned head, a mug) is far from it; the camera's exposure moves them all."""


def exposure_change(ratios: NDArray[np.float32]) -> float | None:
    """A region's exposure change between two frames from its cells' log ratios: their mean around their median
    (:data:`EXPOSURE_AROUND`).  Not the median alone: the encoder leaves most of a slowly brightening picture's
    blocks as they were (a ratio of exactly 1) and refreshes a few at a time, so the median stays 0 while the mean
    follows the exposure.  None on too few cells."""
    if ratios.size < EXPOSURE_CELLS:
        return None
    median = float(np.median(ratios))
    near = ratios[np.abs(ratios - median) <= EXPOSURE_AROUND]
    return float(near.mean())


def _gains(
    small: NDArray[np.float32], previous: NDArray[np.float32], background: NDArray[np.bool_], person: NDArray[np.bool_]
) -> tuple[float | None, float | None]:
    """The background's and the person's exposure changes since the previous analysed frame (log ratios), on cells
    lit enough in both frames to say anything (:data:`GAIN_DARK`)."""
    lit = (small >= GAIN_DARK) & (previous >= GAIN_DARK)
    ratios = np.log(np.maximum(small, 1.0) / np.maximum(previous, 1.0)).astype(np.float32)
    return exposure_change(ratios[background & lit]), exposure_change(ratios[person & lit])


def grey_grid(frame: Frame) -> tuple[Frame, NDArray[np.float32]]:
    """The frame in grey, and its grid (the 4x4 block means the cheap checks compare)."""
    grey = to_grey(frame)
    return grey, _grid(grey)


def to_grey(frame: Frame) -> Frame:
    if frame.ndim == 2:
        return frame
    return np.asarray(cv2.cvtColor(frame[..., :3], cv2.COLOR_BGR2GRAY), dtype=np.uint8)


def observe(
    frame: Frame,
    at: float,
    previous: NDArray[np.float32] | None,
    detector: FaceDetector | None,
    known_faces: tuple[Box, ...] | None = None,
    people: NDArray[np.float32] | None = None,
    scene: Scene | None = None,
    grid: tuple[Frame, NDArray[np.float32]] | None = None,
    bands: Bands | None = None,
    previous_people: NDArray[np.float32] | None = None,
    halo: Halo | None = None,
) -> tuple[Observation, NDArray[np.float32]]:
    """What one analysed frame shows; returns the observation and the grid to compare the next frame with.

    ``known_faces``: the faces found in a frame a moment ago, to use instead of running the detector on this one
    (the detector is by far the dearest part, and who is in view does not change between two frames 0.5 s apart as
    far as checks counted in seconds are concerned).  ``people``: the person segmentation's mask on the grid (from
    this frame or one a moment ago), and ``scene``: the stream when the player was last seen (:class:`Scene`).
    ``grid``: the frame's grey picture and its grid (:func:`grey_grid`), if the caller made them already.
    ``bands``: the picture's detail bands (:func:`detail_bands`) from this frame or one a moment ago, like the mask.
    ``previous_people``: the mask the previous analysed frame was judged with (the exposure changes are measured on
    the cells that were the person, or the background, in both frames).  ``halo``: the edge halo (:func:`edge_halo`)
    measured on this frame or one a moment ago, like the bands (measured here when not given)."""
    grey, small = grid if grid is not None else grey_grid(frame)
    comparable = previous is not None and previous.shape == small.shape
    difference = small - previous if comparable and previous is not None else None
    change = moving = None
    if difference is not None:
        magnitude = np.abs(difference)
        change, moving = float(magnitude.mean()), float((magnitude >= MOVING_LEVEL).mean())
    faces = known_faces
    if faces is None:
        faces = tuple(detector.detect(frame)) if detector is not None else ()
    shape = (small.shape[0], small.shape[1])
    half = _half(grey, shape)
    fine, coarse = bands if bands is not None and bands[0].shape == small.shape else _bands(half, shape)
    grad = _gradient(half, shape)
    height, width = grey.shape
    background_brightness = background_change = background_gain = person_gain = None
    background_sharpness = person_sharpness = background_structure = None
    background_halo = None
    room = shows_room(small, scene) if scene is not None else None
    regions = _regions(small, difference, faces, people, previous_people, scene, width, height)
    share, player_seen, new_body = regions.share, regions.player_seen, regions.new_body
    outside, inner, far = regions.outside, regions.inner, regions.far
    both_outside, both_inner = regions.both_outside, regions.both_inner
    if outside is not None and outside.mean() >= BACKGROUND_MIN_SHARE:
        background_brightness = float(small[outside].mean())
        if difference is not None:
            background_change = _trimmed_change(difference[outside])
        if inner is not None and inner.mean() >= PERSON_MIN_SHARE / 2:
            if previous is not None and comparable and both_outside is not None and both_inner is not None:
                background_gain, person_gain = _gains(small, previous, both_outside, both_inner)
            if far is not None and far.mean() >= BACKGROUND_MIN_SHARE:
                background_sharpness = _detail_ratio(fine, coarse, far)
                person_sharpness = _detail_ratio(fine, coarse, inner)
                background_structure = float(coarse[far].mean())
            # Only with a face in view: the mask is then the player's (a player looking down, the face out of the
            # picture, leaves the segmentation marking the room's furniture, whose edges the encoder softens).
            if faces and people is not None and people.shape == small.shape:
                background_halo = (halo if halo is not None else Halo(edge_halo(frame, people))).value
    mean, deviation = cv2.meanStdDev(grey)  # numpy's grey.mean() and grey.std(), without a float64 copy
    observation = Observation(
        at, float(mean[0, 0]), float(deviation[0, 0]), change, faces, width, height, background_brightness,
        background_change, background_gain, moving, share, player_seen, new_body, person_gain,
        background_sharpness, person_sharpness, background_structure, shows_room=room, edges=float(grad.mean()),
        background_halo=background_halo,
    )  # fmt: skip
    return observation, small


@dataclass(frozen=True, slots=True)
class _Regions:
    """Where the people and the background are in an analysed frame (on the grid), and what the scene says."""

    share: float | None
    player_seen: bool | None
    new_body: float
    outside: NDArray[np.bool_] | None
    """The background: outside the people, by a margin (None with nobody in view)."""
    inner: NDArray[np.bool_] | None
    """The person's inner region (without a segmenter, the faces)."""
    far: NDArray[np.bool_] | None
    """The background far from the people (:data:`BLUR_MARGIN`)."""
    both_outside: NDArray[np.bool_] | None
    """The background in this frame and the previous one..."""
    both_inner: NDArray[np.bool_] | None
    """...and the person's inner region in both: the mask moving between them uncovers or covers cells, whose
    change is the person's, not the exposure's."""


def _regions(
    small: NDArray[np.float32], difference: NDArray[np.float32] | None, faces: tuple[Box, ...],
    people: NDArray[np.float32] | None, previous_people: NDArray[np.float32] | None, scene: Scene | None,
    width: int, height: int,
) -> _Regions:  # fmt: skip
    if people is None or people.shape != small.shape:
        if not faces:
            return _Regions(None, None, 0.0, None, None, None, None, None)
        outside = ~person_mask(faces, width, height, step=4)[: small.shape[0], : small.shape[1]]
        inner = _face_cells(faces, small.shape)  # without a segmenter: the faces themselves
        return _Regions(None, None, 0.0, outside, inner, outside, outside, inner)
    marked = people > 0.5
    share = float(marked.mean())
    player_seen, new_body = None, 0.0
    if scene is not None:
        change = np.abs(difference) if difference is not None else None
        moved = change >= MOVING_LEVEL if change is not None else None
        player_seen, new_body = compare_scene(small, marked, faces, scene, moved=moved, change=change)
    if not (share >= PERSON_MIN_SHARE and (bool(faces) or bool(player_seen))):
        return _Regions(share, player_seen, new_body, None, None, None, None, None)
    was = previous_people > 0.5 if previous_people is not None and previous_people.shape == small.shape else marked
    outside, inner = ~_grow(marked, 3), _shrink(marked, 2)
    return _Regions(share, player_seen, new_body, outside, inner, ~_grow(marked, BLUR_MARGIN),
                    outside & ~_grow(was, 3), inner & _shrink(was, 2))  # fmt: skip


@dataclass(frozen=True, slots=True)
class Thresholds:
    """The checks' thresholds (event settings, ``[sections.policy.thresholds]``)."""

    absence_s: float = 5.0
    """Nobody in view for this long: left the competition area (36.4.1).  Leaving without permission is the offence,
    not leaving for long; presence rests on the person, not the face, so a player looking down or turned away is
    not absent."""
    bent_down_s: float = 30.0
    """A player who went out of the picture through its bottom edge (bent down, or over the board with only the
    top of the head in view) counts as present this long before the absence is counted."""
    extra_person_s: float = 2.0
    """Two or more faces, or a new body, for this long: another person (36.4.2)."""
    covered_s: float = 3.0
    frozen_s: float = 5.0
    lost_s: float = 5.0
    """No frame at all for this long: the camera stream is lost."""
    clear_s: float = 3.0
    """How long a condition must be absent before its finding ends."""
    dark_brightness: float = 18.0
    flat_contrast: float = 6.0
    flat_bright: float = 200.0
    """A flat picture this bright or brighter is an overexposed, bare wall, not a covered lens: no ``camera-covered``
    (nobody is seen in it either, so the left-area check still runs)."""
    frozen_moving: float = 0.002
    """The median share of moving cells (:attr:`Observation.moving`) over the last :data:`FROZEN_WINDOW_S`, below
    which the picture counts as frozen while someone is in view.  Measured through VP8 (aiortc's encoder and
    libvpx's real-time mode, 140-500 kbit/s): a frozen source 0.000-0.002, a person in view 0.01 and up.  An empty
    room in steady light looks the same as a frozen one through the encoder's denoiser, so with nobody in view the
    left-area check speaks instead."""

    background_window_s: float = 8.0
    """The virtual-background signal is judged over this window of analysed frames with the player in view (36.4)..."""
    background_flat: float = 0.004
    """...in which the background's brightness on fixed pixels (the running sum of its exposure changes,
    :attr:`Observation.background_gain`) stayed within this share (0.4 %)..."""
    exposure_moves: float = 0.01
    """...while the person's (:attr:`Observation.person_gain`, smoothed: :data:`EXPOSURE_SMOOTHING`) ranged over at
    least this share (1 %): the person follows the camera's exposure and the room's light, a replacement picture
    does not (its trace stays within 0.2 %, through the encoder's warm-up too). A real room follows the exposure a
    second or two late (the encoder refreshes a still room's skipped blocks once they have moved far enough); its
    trace stays that flat only while the exposure itself holds still, and then the person's does not move either.
    Measured on the evaluation set's 6-minute streams (VP8, 120-800 kbit/s): a real room met both for at most 1.5 s
    at a time."""
    virtual_background_s: float = 3.0
    """The signal must hold this long after a full window before it is raised (twice the longest a real room met
    it, with room to spare): it is a reason to ask for the pan check, not a verdict (a webcam whose exposure is
    locked, in steady light, keeps a real room as flat as a replacement; a screen lighting the player's face while
    the room stays dark could fake it too)."""

    blur_window_s: float = 6.0
    """A blurred background (36.4) is judged over this window..."""
    blur_edges: float = 0.25
    """...in which, in most frames, the background had less fine detail for its coarse detail than this
    (:attr:`Observation.background_sharpness`, measured :data:`BLUR_MARGIN` away from the people: through VP8 at
    120-800 kbit/s, rooms 0.58-0.8, a bare wall with a bright window's glare 0.29-0.31, the same rooms blurred by an
    app's 8-16 px 0.12-0.23)..."""
    blur_ratio: float = 0.6
    """...and less than this share of the person's (0.38-0.55)..."""
    blur_structure: float = 1.0
    """...while the background had this much coarse detail (grey levels; rooms blurred 1.1-5): a plain wall (0.2)
    cannot be judged, and a blurred one hides nothing."""
    blur_halo: float = 0.05
    """...or, in most frames of the same window, the person's colours were smeared beyond their edge over a plain
    background by at least this share of the contrast (:attr:`Observation.background_halo`, judged with a face in
    view; on the evaluation set's 3.9 negative hours through VP8 the median frame 0.00, the 99th percentile 0.03,
    and no 6 s window held more than 0.03 in 70 % of its frames; its app-blurred backgrounds 0.07-0.18 in nine
    frames of ten).  A plain wall has no detail to lose, but an app that blurs the whole frame, the person included,
    leaves the person's colours around them; one that blurs the background alone (a mask-weighted blur, as Google
    Meet does) does not, and its blurred bare wall is still not told from a bare wall.  1 or more: off."""
    blurred_background_s: float = 3.0

    pan_travel: float = 0.1
    """In the pan check, the camera counts as moved when the player's face travels this share of the frame's width
    (or leaves the frame)..."""
    pan_background_change: float = 2.0
    """...and the background must then change by at least this (grey levels, the upper quartile of the analysed
    frames' background changes): a real room slides across the picture, a replacement image stays put."""

    @classmethod
    def from_policy(cls, values: dict[str, Any], base: Thresholds | None = None) -> Thresholds:
        """``base`` (the defaults without one) with the values a section's policy sets, field by field; names that
        are not thresholds are ignored."""
        known = {name for name in cls.__dataclass_fields__}
        return replace(base or cls(), **{k: float(v) for k, v in values.items() if k in known})


FROZEN_WINDOW_S = 2.5
"""The moving shares of the analysed frames of the last this many seconds decide whether the picture is frozen (at
least three of them: the decision keeps its meaning when the analysis rate falls)..."""
FROZEN_STILL_SHARE = 0.4
"""...when at least this share of them moved by less than :attr:`Thresholds.frozen_moving`: a frozen source
re-encoded is still at most frames, but each new key frame (aiortc's sender makes the encoder anew when its bitrate
estimate moves by a tenth, every few seconds early in a stream) re-quantises the whole picture, and it settles over
two or three frames; a person in view moves in every frame."""
EXPOSURE_SMOOTHING = 5
"""The person's exposure trace is judged through a running median of this many analysed frames (2.5 s).  Not the
median of its last quarter against its first: through Chromium the set's player followed the camera up 6 % and
down 3 % within 8 s, which left the two quarters level and held a replaced background off for 20 s."""
BODIES_NOT_BEHIND_EFFECTS = True
"""While a replaced or blurred background is suspected, a new body without a face is not another person."""


@dataclass(frozen=True, slots=True)
class Finding:
    """A condition that started (or ended) on a stream."""

    check: Check
    started: float
    ended: float | None
    detail: str


@dataclass
class _Condition:
    since: float | None = None
    """When the condition was first seen (continuously)."""
    cleared_since: float | None = None
    active: Finding | None = None


@dataclass
class Monitor:
    """The temporal rules of one stream.  Feed it observations (and "no frame" ticks) in time order."""

    thresholds: Thresholds = field(default_factory=Thresholds)
    leave_granted_until: float = 0.0
    """The arbiter granted leave of the area until this time (36.4.1)."""
    enabled: frozenset[Check] = frozenset(Check)
    """The checks that may raise findings (a section's policy, :func:`checks_for_policy`).  A disabled check is still
    followed, since the others depend on it (no face counts while the camera is covered), but its findings are
    never given out, nor listed as active."""
    bodies_without_faces: bool = True
    """A new body beside the player with no face of its own counts as another person (36.4.2): so on the front
    camera, which faces the player and the room behind them.  The side camera counts faces only
    (:data:`video.devices.FACELESS_BODIES`)."""
    conditions: dict[Check, _Condition] = field(default_factory=lambda: {check: _Condition() for check in Check})
    last_frame_at: float | None = None
    recent_moving: deque[tuple[float, float]] = field(default_factory=deque)
    """(time, moving share) of the analysed frames of the last :data:`FROZEN_WINDOW_S`."""
    exposure: deque[tuple[float, float, float]] = field(default_factory=deque)
    """(time, the background's brightness trace, the person's exposure trace) over the last ``background_window_s``
    of analysed frames in which both were measured, without a gap (the traces are the running sums of
    :attr:`Observation.background_gain` and :attr:`Observation.person_gain`)."""
    sharpness: deque[tuple[float, bool | None]] = field(default_factory=deque)
    """(time, background blurred?) over the last ``blur_window_s`` (None: not judged in that frame)."""
    halo: deque[tuple[float, bool | None]] = field(default_factory=deque)
    """(time, the person's colours smeared beyond their edge?) over the last ``blur_window_s`` (None: not judged)."""
    blurred_by_halo: bool = False
    """The blurred background is seen by the halo alone in the last frame (not by the background's sharpness)."""
    crowded_at: float = float("-inf")
    """When another person was last seen (two faces or a new body)."""
    faces_at: float = float("-inf")
    """When two faces or more were last seen..."""
    passing_since: float | None = None
    """...and since when, with no gap longer than :data:`PASS_GAP_S` between two sightings."""

    def _update(
        self, check: Check, present: bool, at: float, hold: float, detail: str, since: float | None = None
    ) -> list[Finding]:
        """``since``: when the condition began, if the evidence for it reaches back before this observation."""
        state = self.conditions[check]
        findings: list[Finding] = []
        if present:
            state.cleared_since = None
            if state.since is None:
                state.since = at if since is None else since
            if state.active is None and at - state.since >= hold - TIME_SLACK_S:
                state.active = Finding(check, state.since, None, detail)
                findings.append(state.active)
        else:
            state.since = None
            if state.active is not None:
                if state.cleared_since is None:
                    state.cleared_since = at
                if at - state.cleared_since >= self.thresholds.clear_s - TIME_SLACK_S:
                    ended = Finding(check, state.active.started, at, state.active.detail)
                    state.active = None
                    state.cleared_since = None
                    findings.append(ended)
        return findings

    def feed(self, observation: Observation) -> list[Finding]:
        """The findings that start or end with this observation."""
        t = self.thresholds
        at = observation.at
        self.arrived(at)
        findings = self._update(Check.LOST, False, at, t.lost_s, "")
        dark = observation.brightness < t.dark_brightness
        flat = observation.contrast < t.flat_contrast
        # A flat picture is a covered lens unless it is bright (an overexposed wall) or is the room itself: a bare
        # wall the player walked away from is as flat as a hand over the lens.
        covered = dark or (flat and observation.brightness < t.flat_bright and not observation.shows_room)
        findings += self._update(
            Check.COVERED, covered, at, t.covered_s,
            f"brightness {observation.brightness:.0f}, contrast {observation.contrast:.1f}",
        )  # fmt: skip
        faces = len(observation.faces)
        someone = faces > 0 or bool(observation.player_seen)
        moving = observation.moving if observation.moving is not None else None
        if moving is not None:
            self.recent_moving.append((at, moving))
        while self.recent_moving and self.recent_moving[0][0] < at - FROZEN_WINDOW_S:
            self.recent_moving.popleft()
        # A frozen source through VP8 is still refined by the encoder in small steps, but nothing in it moves; a
        # person in view always does.  The picture has been frozen since the window's first still frame.
        still_frames = sum(share < t.frozen_moving for _, share in self.recent_moving)
        frozen = (
            len(self.recent_moving) >= 3
            and still_frames >= FROZEN_STILL_SHARE * len(self.recent_moving)
            and not covered
            and (someone or self.conditions[Check.FROZEN].active is not None)
        )
        findings += self._update(
            Check.FROZEN, frozen, at, t.frozen_s, "the picture does not change at all",
            since=next((when for when, share in self.recent_moving if share < t.frozen_moving), None),
        )  # fmt: skip
        usable = not covered
        still = self.conditions[Check.FROZEN].active is not None
        absent = usable and not someone and not observation.bent_down and at >= self.leave_granted_until
        findings += self._update(Check.LEFT_AREA, absent, at, t.absence_s, "nobody in front of the camera",
                                 since=observation.gone_since)  # fmt: skip
        findings += self._update(
            Check.VIRTUAL_BACKGROUND, usable and not still and self._background_still(observation), at,
            t.virtual_background_s, self._background_detail(),
        )  # fmt: skip
        findings += self._update(
            Check.BLURRED_BACKGROUND, usable and not still and self._background_blurred(observation), at,
            t.blurred_background_s, self._blur_detail(observation),
        )  # fmt: skip
        # A new body beside the player, not instead of them; and not while the background is found replaced or
        # blurred: the effect's wandering mask edge is a new region of its own, and the effect hides whoever is
        # behind the player anyway (two faces still count).
        effect = BODIES_NOT_BEHIND_EFFECTS and any(
            self.conditions[check].since is not None or self.conditions[check].active is not None
            for check in (Check.VIRTUAL_BACKGROUND, Check.BLURRED_BACKGROUND)
        )
        body = self.bodies_without_faces and observation.new_body >= BODY_MIN_SHARE and someone and not effect
        crowded = usable and not still and (faces >= 2 or body)
        if crowded:
            self.crowded_at = at
        elif usable and not still and self.conditions[Check.EXTRA_PERSON].since is not None:
            # A person passing behind the player is hidden by the player's head for a moment, and a face turning
            # is missed in a frame or two: a gap this short does not end the episode.
            crowded = at - self.crowded_at <= CROWD_GAP_S + TIME_SLACK_S
        edge = sum(1 for box in observation.faces if box.touches_edge(observation.width, observation.height))
        detail = (
            f"{faces} faces in view" + (f" ({edge} at the frame's edge)" if edge else "")
            if faces >= 2
            else f"another body in view ({observation.new_body:.0%} of the frame), no face"
        )
        # A second face seen again after a longer gap (a person walking behind the player, hidden by their head for a
        # few seconds) is the same person: the episode counts from their first sighting.
        since = None
        if usable and not still and faces >= 2:
            if self.passing_since is None or at - self.faces_at > PASS_GAP_S + TIME_SLACK_S:
                self.passing_since = at
            self.faces_at, since = at, self.passing_since
        findings += self._update(Check.EXTRA_PERSON, crowded, at, t.extra_person_s, detail, since=since)
        return self._enabled(findings)

    def _background_still(self, observation: Observation) -> bool:
        """The replaced-background signal: over a full window with the player in view, the background's brightness
        trace stays flat while the person's exposure moves (:attr:`Thresholds.background_flat`,
        :attr:`Thresholds.exposure_moves`).  A frame in which either was not measured (nobody in view, the person
        or the room too small to judge) starts the window again: the traces must not skip a change."""
        t = self.thresholds
        window = self.exposure
        background, person = observation.background_gain, observation.person_gain
        if background is None or person is None:
            window.clear()
            return False
        _, room, own = window[-1] if window else (observation.at, 0.0, 0.0)
        window.append((observation.at, room + background, own + person))
        while window[0][0] < observation.at - t.background_window_s:
            window.popleft()
        if observation.at - window[0][0] < 0.9 * t.background_window_s:
            return False
        room, person = self._exposure_figures()
        return room < t.background_flat and person >= t.exposure_moves

    def _exposure_figures(self) -> tuple[float, float]:
        """How far the background's brightness trace ranged over the window, and how far the person's exposure
        trace did once smoothed (the running median of :data:`EXPOSURE_SMOOTHING` analysed frames: the person's own
        movement makes the trace jitter from frame to frame, the exposure moves it along, up or down or both), both
        as shares (the traces are sums of log ratios)."""
        if not self.exposure:
            return 0.0, 0.0
        rooms = [room for _, room, _ in self.exposure]
        people = [own for _, _, own in self.exposure]
        half = EXPOSURE_SMOOTHING // 2
        smoothed = [float(np.median(people[max(0, i - half) : i + half + 1])) for i in range(len(people))]
        return math.expm1(max(rooms) - min(rooms)), math.expm1(max(smoothed) - min(smoothed))

    def _background_detail(self) -> str:
        room, person = self._exposure_figures()
        window = self.thresholds.background_window_s
        return (f"the background does not follow the camera: its brightness stayed within {room:.1%} over "
                f"{window:.0f} s while the person's changed by {person:.1%} (ask for the pan check)")  # fmt: skip

    def _background_blurred(self, observation: Observation) -> bool:
        """A blurred background: over a window, in most frames, a background with shapes in it (not a plain wall)
        is far less sharp than the person in front of it, more than a webcam's depth of field makes it; or, over a
        plain wall, the person's colours are smeared beyond their edge as an app's whole-frame blur leaves them."""
        t = self.thresholds
        o = observation
        judged: bool | None = None
        background, person, structure = o.background_sharpness, o.person_sharpness, o.background_structure
        if background is not None and person is not None and structure is not None and structure >= t.blur_structure:
            judged = background < t.blur_edges and background < t.blur_ratio * person
        sharp = self._most_frames(self.sharpness, o.at, judged)
        halo = None if o.background_halo is None else o.background_halo >= t.blur_halo
        self.blurred_by_halo = self._most_frames(self.halo, o.at, halo) and not sharp
        return sharp or self.blurred_by_halo

    def _most_frames(self, window: deque[tuple[float, bool | None]], at: float, judged: bool | None) -> bool:
        """Whether, over a full ``blur_window_s``, most frames were judged (60 %) and most of those (70 %) said yes."""
        window.append((at, judged))
        while window and window[0][0] < at - self.thresholds.blur_window_s:
            window.popleft()
        if at - window[0][0] < 0.9 * self.thresholds.blur_window_s:
            return False
        votes = [v for _, v in window if v is not None]
        return len(votes) >= 0.6 * len(window) and sum(votes) >= 0.7 * len(votes)

    def _blur_detail(self, o: Observation) -> str:
        if self.blurred_by_halo:
            share = "" if o.background_halo is None else f" ({o.background_halo:.0%} of the contrast 4-12 px out)"
            return (f"the background is blurred: the person's colours are smeared beyond their edge{share}, as an "
                    f"app's blur leaves them (36.4: the surroundings must be visible)")  # fmt: skip
        if o.background_sharpness is None or o.person_sharpness is None:
            return "the background is blurred"
        return (f"the background is blurred: its edges' sharpness {o.background_sharpness:.2f} against the person's "
                f"{o.person_sharpness:.2f} (36.4: the surroundings must be visible)")  # fmt: skip

    def arrived(self, at: float) -> None:
        """A frame came at ``at`` (analysed or not: the camera is alive)."""
        if self.last_frame_at is None or at > self.last_frame_at:
            self.last_frame_at = at

    def tick(self, at: float) -> list[Finding]:
        """Time passes without a frame: the camera is lost once no frame has come for ``lost_s``."""
        if self.last_frame_at is None:
            return []
        missing = at - self.last_frame_at >= self.thresholds.lost_s
        if not missing:
            return []
        state = self.conditions[Check.LOST]
        if state.active is None:
            state.since = self.last_frame_at
            state.active = Finding(Check.LOST, self.last_frame_at, None, "no picture from the camera")
            return self._enabled([state.active])
        return []

    def active(self) -> list[Finding]:
        return self._enabled([c.active for c in self.conditions.values() if c.active is not None])

    def _enabled(self, findings: list[Finding]) -> list[Finding]:
        return [finding for finding in findings if finding.check in self.enabled]


def boxes_from(rects: Sequence[Sequence[int]]) -> list[Box]:
    return [Box(int(x), int(y), int(w), int(h)) for x, y, w, h in rects]


class PanOutcome(enum.Enum):
    BACKGROUND_MOVED = "background-moved"
    """The room moved with the camera: a real background."""
    BACKGROUND_STILL = "background-still"
    """The camera moved but the background did not: a virtual background or a replaced picture (36.4)."""
    CAMERA_STILL = "camera-still"
    """The camera did not move enough to tell: ask again."""


@dataclass(frozen=True, slots=True)
class PanVerdict:
    outcome: PanOutcome
    face_travel: float
    """How far the largest face travelled, as a share of the frame's width (1.0 when it left the frame)."""
    background_change: float
    detail: str


def judge_pan(observations: Sequence[Observation], thresholds: Thresholds | None = None) -> PanVerdict:
    """The active virtual-background check (36.4): the player was asked to pan or tilt the camera slowly; a real
    background slides across the picture with it, a replaced one stays where it is while the player moves."""
    t = thresholds or Thresholds()
    centres = [max(o.faces, key=lambda b: b.width * b.height) for o in observations if o.faces]
    width = observations[0].width if observations else 1
    if len(centres) < len(observations):
        travel = 1.0  # the face left the frame: the camera turned away from the player
    else:
        xs = [b.x + b.width / 2 for b in centres]
        ys = [b.y + b.height / 2 for b in centres]
        travel = max(max(xs) - min(xs), max(ys) - min(ys)) / width if centres else 0.0
    changes = [o.background_change if o.background_change is not None else o.change for o in observations]
    known = [c for c in changes if c is not None]
    background = float(np.percentile(known, 75)) if known else 0.0
    summary = f"face travelled {travel:.0%} of the width, background changed by {background:.1f}"
    if travel < t.pan_travel:
        return PanVerdict(PanOutcome.CAMERA_STILL, travel, background, f"the camera hardly moved ({summary})")
    if background < t.pan_background_change:
        return PanVerdict(PanOutcome.BACKGROUND_STILL, travel, background,
                          f"the camera moved but the background did not: virtual background? ({summary})")  # fmt: skip
    return PanVerdict(
        PanOutcome.BACKGROUND_MOVED, travel, background, f"the background moved with the camera ({summary})"
    )
