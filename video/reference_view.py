"""A camera's approved view (issue 15): the side camera's setup is approved by an arbiter with a reference still,
and the service notices when the camera no longer shows that view (moved, turned away: the desk and the playing
device no longer where they were).

The comparison is by local features, not by pixels: ORB keypoints of both pictures (grey, contrast-equalised with
CLAHE, so that a change of light or exposure moves no keypoint), matched by Hamming distance with Lowe's ratio
test, and the matches' motion fitted as a similarity (shift, rotation, scale) with RANSAC.  The view is kept when
enough matches agree on a motion close to none; the player moving, leaning or standing in front of part of the
desk hides some keypoints and adds others that do not agree, but leaves the room's keypoints where they were.  A
camera that moved gives a motion far from none (its inliers agree on a shift), one turned away gives too few
matches.  A picture without enough texture to judge (dark, flat: covered, which the covered check says) is not
judged.

Pure functions over frames (numpy arrays in, figures out) and :class:`ViewWatch`, the temporal rule (held for
``moved_s`` before it is raised, gone for ``clear_s`` before it ends), as :class:`video.checks.Monitor` does for the
other checks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Final

import cv2
import numpy as np
from numpy.typing import NDArray

from video.checks import Check, Finding, Frame

SIZE: Final = (640, 480)
"""Both pictures are compared at this size (the player page's camera size)."""
FEATURES: Final = 800
"""ORB keypoints kept per picture, at most..."""
PER_CELL: Final = 50
"""...this many in each cell of the :data:`GRID`."""
RATIO: Final = 0.8
"""Lowe's ratio test: a match is kept when its distance is below this share of the second best's."""
MIN_KEYPOINTS: Final = 40
"""A picture with fewer keypoints has too little texture to be judged (dark, flat, out of focus)."""
MIN_INLIERS: Final = 15
"""The view is kept only when at least this many matches agree on one motion..."""
MAX_SHIFT: Final = 0.05
"""...and that motion moves the picture by less than this share of its diagonal (32 px at 640x480)..."""
MAX_ROTATION_DEG: Final = 3.0
"""...turns it by less than this..."""
MAX_SCALE: Final = 0.08
"""...and scales it by less than this (log ratio): a phone nudged on its stand moves far more than a hand's sway."""
RANSAC_PX: Final = 4.0
GRID: Final = (4, 4)
"""The reference's keypoints are counted in these cells (columns, rows)..."""
CELL_POINTS: Final = 4
"""...a cell with at least this many is textured..."""
CELL_FOUND: Final = 2
"""...and is found again when at least this many of them are among the matches agreeing on the motion..."""
MIN_COVERAGE: Final = 0.35
"""...in at least this share of the textured cells: the player (part of the reference, on a side camera a quarter
to a third of the picture) moving or leaning hides or moves a few cells, a camera that moved moves all of them."""


@dataclass(frozen=True, slots=True)
class ReferenceView:
    """An approved view's keypoints and descriptors, made once from its still."""

    points: NDArray[np.float32]
    """N x 2, in pixels at :data:`SIZE`."""
    descriptors: NDArray[np.uint8] | None

    @classmethod
    def of(cls, frame: Frame) -> ReferenceView:
        return cls(*features(frame))

    @classmethod
    def from_jpeg(cls, jpeg: bytes) -> ReferenceView | None:
        """The view of a still (a JPEG: the arbiter's reference still), or None when it cannot be decoded."""
        image = cv2.imdecode(np.frombuffer(jpeg, np.uint8), cv2.IMREAD_COLOR)
        return None if image is None else cls.of(np.asarray(image, np.uint8))

    @property
    def judgeable(self) -> bool:
        return self.descriptors is not None and len(self.points) >= MIN_KEYPOINTS


@dataclass(frozen=True, slots=True)
class ViewComparison:
    """How a picture compares with the reference view."""

    judged: bool
    """False when either picture has too little texture to tell (no verdict either way)."""
    kept: bool
    """The camera shows the reference view (True when not judged)."""
    matches: int = 0
    inliers: int = 0
    shift: float = 0.0
    """The fitted motion's shift, as a share of the picture's diagonal."""
    rotation_deg: float = 0.0
    scale: float = 0.0
    """Its scale as a log ratio."""
    coverage: float = 1.0
    """The share of the reference's textured cells found where they were (:data:`MIN_COVERAGE`)."""

    def describe(self, screen: bool = False) -> str:
        if not self.judged:
            return "too little detail to compare with the approved view"
        if screen:
            return (f"the shared screen no longer shows what was approved (the platform's board): {self.coverage:.0%} "
                    f"of it is where it was, {self.inliers} of {self.matches} matched points agree")  # fmt: skip
        if self.inliers < MIN_INLIERS:
            return (f"the approved view is no longer seen: {self.inliers} of {self.matches} matched points agree "
                    "(the camera was moved or turned away)")  # fmt: skip
        if self.shift < MAX_SHIFT and abs(self.rotation_deg) < MAX_ROTATION_DEG and abs(self.scale) < MAX_SCALE:
            return (f"the approved view is mostly gone: {self.coverage:.0%} of it is where it was (the camera was "
                    "moved, or something stands in front of it)")  # fmt: skip
        return (f"the camera moved from its approved view: shifted {self.shift:.0%} of the picture, turned "
                f"{self.rotation_deg:+.1f}°, scaled {math.expm1(self.scale):+.0%}")  # fmt: skip


def _grey(frame: Frame) -> NDArray[np.uint8]:
    grey: NDArray[np.uint8] = np.asarray(frame if frame.ndim == 2 else cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY))
    if (grey.shape[1], grey.shape[0]) != SIZE:
        grey = cv2.resize(grey, SIZE, interpolation=cv2.INTER_AREA).astype(np.uint8, copy=False)
    return cv2.createCLAHE(clipLimit=2.0, tileGridSize=(8, 8)).apply(grey).astype(np.uint8, copy=False)


def features(frame: Frame) -> tuple[NDArray[np.float32], NDArray[np.uint8] | None]:
    """The picture's ORB keypoints (N x 2, at :data:`SIZE`) and their descriptors (None without any), at most
    :data:`PER_CELL` of the strongest in each cell of the :data:`GRID`: a textured player would otherwise take most
    of them, and the room's are the ones that say where the camera looks."""
    grey = _grey(frame)
    orb = cv2.ORB_create(nfeatures=FEATURES * 4, fastThreshold=10)  # type: ignore[attr-defined]
    keypoints = orb.detect(grey, None)
    if not keypoints:
        return np.zeros((0, 2), np.float32), None
    cells = _cells(np.array([kp.pt for kp in keypoints], np.float32).reshape(-1, 2))
    strongest = sorted(range(len(keypoints)), key=lambda i: -keypoints[i].response)
    taken: dict[int, int] = {}
    chosen = []
    for index in strongest:
        if taken.get(int(cells[index]), 0) < PER_CELL:
            taken[int(cells[index])] = taken.get(int(cells[index]), 0) + 1
            chosen.append(keypoints[index])
    kept, descriptors = orb.compute(grey, chosen)
    points = np.array([kp.pt for kp in kept], np.float32).reshape(-1, 2)
    return points, descriptors


def _cells(points: NDArray[np.float32]) -> NDArray[np.int64]:
    """Each point's cell of the :data:`GRID` over the picture."""
    columns = np.clip((points[:, 0] * GRID[0] / SIZE[0]).astype(np.int64), 0, GRID[0] - 1)
    rows = np.clip((points[:, 1] * GRID[1] / SIZE[1]).astype(np.int64), 0, GRID[1] - 1)
    return rows * GRID[0] + columns


def _motion(source: NDArray[np.float32], target: NDArray[np.float32]) -> tuple[Any, NDArray[np.bool_]]:
    """The similarity (2 x 3) that most matches agree on, and which agree (RANSAC); None without one."""
    if len(source) < 3:
        return None, np.zeros(len(source), np.bool_)
    motion, mask = cv2.estimateAffinePartial2D(source, target, method=cv2.RANSAC, ransacReprojThreshold=RANSAC_PX)
    agreeing = np.zeros(len(source), np.bool_) if mask is None else mask.ravel().astype(np.bool_)
    return motion, agreeing


def _figures(motion: Any) -> tuple[float, float, float]:
    """A similarity's shift of the picture's centre (a share of the diagonal), rotation (degrees), scale (log)."""
    scale = math.log(max(1e-6, math.hypot(motion[0, 0], motion[1, 0])))
    rotation = math.degrees(math.atan2(motion[1, 0], motion[0, 0]))
    centre = np.array([SIZE[0] / 2, SIZE[1] / 2, 1.0])
    moved = motion @ centre
    return float(math.hypot(moved[0] - centre[0], moved[1] - centre[1]) / math.hypot(*SIZE)), rotation, scale


def compare_view(reference: ReferenceView, frame: Frame, min_coverage: float = MIN_COVERAGE) -> ViewComparison:
    """Whether ``frame`` still shows the reference view (:class:`ViewComparison`); :func:`compare_views` with the
    frame's keypoints."""
    return compare_views(reference, ReferenceView.of(frame), min_coverage)


def compare_views(reference: ReferenceView, seen: ReferenceView, min_coverage: float = MIN_COVERAGE) -> ViewComparison:
    """Whether a picture, by its keypoints (``seen``), still shows the reference view (:class:`ViewComparison`).

    Only the matches that moved less than :data:`MAX_SHIFT` can show the view kept: among them, the motion most
    agree on must be close to none, and its points must be found over most of the reference's textured cells
    (:data:`MIN_COVERAGE`): the player is part of the reference too, and a player sitting where they sat in front of
    a camera that moved would otherwise keep it.  When the view is not kept, the figures are those of the motion
    most of all the matches agree on (how far the camera moved)."""
    points, descriptors = seen.points, seen.descriptors
    if not reference.judgeable or descriptors is None or len(points) < MIN_KEYPOINTS:
        return ViewComparison(judged=False, kept=True)
    assert reference.descriptors is not None
    pairs = cv2.BFMatcher(cv2.NORM_HAMMING).knnMatch(reference.descriptors, descriptors, k=2)
    good = [pair[0] for pair in pairs if len(pair) == 2 and pair[0].distance < RATIO * pair[1].distance]
    source = reference.points[[m.queryIdx for m in good]].reshape(-1, 2)
    target = points[[m.trainIdx for m in good]].reshape(-1, 2)
    near = np.hypot(*(target - source).T) < MAX_SHIFT * math.hypot(*SIZE)
    motion, agreeing = _motion(source[near], target[near])
    textured = np.bincount(_cells(reference.points), minlength=GRID[0] * GRID[1]) >= CELL_POINTS
    found = np.bincount(_cells(source[near][agreeing]), minlength=GRID[0] * GRID[1]) >= CELL_FOUND
    coverage = float((found & textured).sum() / max(1, textured.sum()))
    inliers = int(agreeing.sum())
    if motion is not None and inliers >= MIN_INLIERS:
        shift, rotation, scale = _figures(motion)
        near_none = shift < MAX_SHIFT and abs(rotation) < MAX_ROTATION_DEG and abs(scale) < MAX_SCALE
        if near_none and coverage >= min_coverage:
            return ViewComparison(True, True, len(good), inliers, shift, rotation, scale, coverage)
    # Not kept: how far the camera moved, by the motion most of all the matches agree on.
    motion, agreeing = _motion(source, target)
    if motion is None or int(agreeing.sum()) < MIN_INLIERS:
        return ViewComparison(True, False, len(good), int(agreeing.sum()), coverage=coverage)
    shift, rotation, scale = _figures(motion)
    return ViewComparison(True, False, len(good), int(agreeing.sum()), shift, rotation, scale, coverage)


SCREEN_COVERAGE: Final = 0.7
"""A shared screen keeps its view only with this share of its textured cells in place (a camera's is
:data:`MIN_COVERAGE`): a screen's picture is the page itself, pixel for pixel, with no player moving in front of
it, and its view follows the game (:func:`followed`), so that the page as the game goes on keeps all of it (1.0 over
a drawn game of 224 stones); a program over a third of it (half the board) leaves 0.69, over half of it 0.38."""
FOLLOW_COVERAGE: Final = 0.85
"""A shared screen's approved view follows the game (:func:`followed`) from a picture that kept at least this share
of it in place."""


def followed(reference: ReferenceView, comparison: ViewComparison, seen: ReferenceView) -> ReferenceView:
    """The shared screen's view to compare the next pictures with: the platform's page changes as the game goes on
    (stones cover the board's lines, the clocks and the move list change: from the approved still, 0.46 of the page's
    textured cells are still found after 60 stones, 0.38 after 100 to 200, against :data:`SCREEN_COVERAGE`), so a
    picture that clearly keeps the view (:data:`FOLLOW_COVERAGE`) becomes the view.  A program opened
    over the board or in its place never does, and is compared with the last page that did.  ``seen``: the
    picture's keypoints, as :func:`compare_views` was given them."""
    if comparison.judged and comparison.kept and comparison.coverage >= FOLLOW_COVERAGE:
        return seen
    return reference


@dataclass
class ViewWatch:
    """The temporal rule of the ``camera-moved`` check (and of the screen's ``screen-changed``): the approved view not
    seen for ``moved_s`` raises it, seen again for ``clear_s`` ends it.  Pictures that cannot be judged neither raise
    nor clear."""

    moved_s: float = 6.0
    clear_s: float = 3.0
    check: Check = Check.CAMERA_MOVED
    """``camera-moved`` (a camera), or ``screen-changed`` (the shared screen)."""
    since: float | None = None
    cleared_since: float | None = None
    active: Finding | None = None
    last: ViewComparison | None = field(default=None)

    def feed(self, at: float, comparison: ViewComparison) -> list[Finding]:
        self.last = comparison
        if not comparison.judged:
            return []
        if not comparison.kept:
            self.cleared_since = None
            if self.since is None:
                self.since = at
            if self.active is None and at - self.since >= self.moved_s:
                detail = comparison.describe(screen=self.check is Check.SCREEN_CHANGED)
                self.active = Finding(self.check, self.since, None, detail)
                return [self.active]
            return []
        self.since = None
        if self.active is None:
            return []
        if self.cleared_since is None:
            self.cleared_since = at
        if at - self.cleared_since < self.clear_s:
            return []
        ended = Finding(self.check, self.active.started, at, self.active.detail)
        self.active, self.cleared_since = None, None
        return [ended]
