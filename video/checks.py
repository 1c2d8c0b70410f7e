"""Frame checks for article 36: pure functions over frames (numpy arrays in, observations out), and temporal rules
with hysteresis that turn a stream of observations into findings.

Nothing here touches the network, the event loop or the clock: times are passed in (seconds), so the same frames
always give the same findings (tests and benchmarks replay clips).

Observations per analysed frame (:func:`observe`):
- brightness and contrast (a covered or dark camera);
- the difference from the previous analysed frame (a frozen camera repeats the same image);
- the faces found (nobody: the player left the area, 36.4.1; two or more: another person, 36.4.2).

Rules (:class:`Monitor`): each condition must hold for ``on_s`` seconds before a finding starts, and be absent for
``off_s`` seconds before it ends, so that a single missed detection neither raises nor clears anything.
"""

from __future__ import annotations

import enum
import math
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final, Protocol

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

    @property
    def article(self) -> str:
        return {
            "left-area": "36.4.1",
            "extra-person": "36.4.2",
            "camera-covered": "36.4",
            "camera-frozen": "36.4",
            "camera-lost": "36.4",
            "virtual-background": "36.4",
        }[self.value]


POLICY_CHECKS: Final[dict[str, frozenset[Check]]] = {
    "absence": frozenset({Check.LEFT_AREA}),
    "extra-person": frozenset({Check.EXTRA_PERSON}),
    "camera": frozenset({Check.COVERED, Check.FROZEN, Check.LOST}),
    "virtual-background": frozenset({Check.VIRTUAL_BACKGROUND}),
    "earphones": frozenset(),
    "devices": frozenset(),
}
"""The checks each name of an event section's ``checks`` list (``[sections.policy]``) turns on.  ``earphones`` is
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
    """Mean absolute difference from the previous analysed frame (0–255); None for the first frame."""
    faces: tuple[Box, ...]
    width: int
    height: int
    background_brightness: float | None = None
    """Mean grey level of the background: the frame outside the people in view (None when nobody is in view, or
    when too little of the frame is left)."""
    background_change: float | None = None
    """Mean absolute difference of the background from the previous analysed frame (same pixels in both)."""
    background_shift: float | None = None
    """Mean signed difference of the background from the previous analysed frame (same pixels in both): how much
    brighter it got.  Summed over frames it traces the background's brightness on fixed pixels, which the people
    moving in front of a textured background does not disturb (the region's own mean would follow them)."""


def person_mask(
    faces: Sequence[Box], width: int, height: int, step: int = 1, margin: float = 0.25
) -> NDArray[np.bool_]:
    """Where the people are, roughly: around each face, two and a half face-widths wide (the shoulders), from half a
    face above it down to the bottom of the frame (head, shoulders, body and arms at a desk), widened by ``margin``
    face-widths on every side for the movement between two analysed frames.  ``step``: the mask of a frame
    subsampled by that factor."""
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


def _trimmed_change(difference: NDArray[np.int16]) -> tuple[float, float]:
    """The background's change (mean absolute difference) and shift (mean signed difference), leaving out the
    largest 20 % of the differences: the person's shoulders, arms and hands reach outside the mask now and then,
    and they would otherwise make a replaced background look alive."""
    magnitude = np.abs(difference)
    keep = magnitude <= np.percentile(magnitude, 80)
    return float(magnitude[keep].mean()), float(difference[keep].mean())


def to_grey(frame: Frame) -> Frame:
    if frame.ndim == 2:
        return frame
    # ITU-R 601 luma, as OpenCV's BGR2GRAY, without needing cv2 here.
    weights = np.array([0.114, 0.587, 0.299], dtype=np.float32)
    grey: Frame = (frame[..., :3].astype(np.float32) @ weights).clip(0, 255).astype(np.uint8)
    return grey


def observe(
    frame: Frame,
    at: float,
    previous: Frame | None,
    detector: FaceDetector | None,
    known_faces: tuple[Box, ...] | None = None,
) -> tuple[Observation, Frame]:
    """What one analysed frame shows; returns the observation and the small grey frame to compare the next with.

    ``known_faces``: the faces found in a frame a moment ago, to use instead of running the detector on this one
    (the detector is by far the dearest part, and who is in view does not change between two frames 0.5 s apart as
    far as checks counted in seconds are concerned)."""
    grey = to_grey(frame)
    small = grey[::4, ::4]
    change = None if previous is None or previous.shape != small.shape else float(
        np.abs(small.astype(np.int16) - previous.astype(np.int16)).mean()
    )  # fmt: skip
    faces = known_faces
    if faces is None:
        faces = tuple(detector.detect(frame)) if detector is not None else ()
    height, width = grey.shape
    background_brightness = background_change = background_shift = None
    if faces:
        outside = ~person_mask(faces, width, height, step=4)
        if outside.mean() >= BACKGROUND_MIN_SHARE:
            background_brightness = float(small[outside].mean())
            if previous is not None and previous.shape == small.shape:
                difference = small[outside].astype(np.int16) - previous[outside].astype(np.int16)
                background_change, background_shift = _trimmed_change(difference)
    observation = Observation(at, float(grey.mean()), float(grey.std()), change, faces, width, height,
                              background_brightness, background_change, background_shift)  # fmt: skip
    return observation, small


@dataclass(frozen=True, slots=True)
class Thresholds:
    """The checks' thresholds (event settings, ``[sections.policy.thresholds]``)."""

    absence_s: float = 20.0
    """No face for this long: left the competition area (36.4.1)."""
    extra_person_s: float = 3.0
    """Two or more faces for this long: another person (36.4.2)."""
    covered_s: float = 3.0
    frozen_s: float = 10.0
    lost_s: float = 5.0
    """No frame at all for this long: the camera stream is lost."""
    clear_s: float = 3.0
    """How long a condition must be absent before its finding ends."""
    dark_brightness: float = 18.0
    flat_contrast: float = 6.0
    frozen_change: float = 0.1
    """Median (over the last 5 analysed frames) of the mean grey-level change between them, below which the picture
    counts as frozen.  Measured through the browser's VP8 in the browser test: a still room 0.2-0.4, a frozen
    source 0.02-0.09 (the encoder keeps refining it)."""

    background_window_s: float = 20.0
    """The virtual-background signal is judged over this window of analysed frames (36.4)..."""
    background_change: float = 0.25
    """...in which the background (the frame outside the people) changed by less than this on average (grey levels;
    a real room through a webcam and VP8 shows sensor noise and the encoder's work, 0.3 and up)..."""
    background_brightness: float = 0.25
    """...and its brightness varied (the standard deviation of its trace on fixed pixels: the running sum of the
    frames' signed background differences) by less than this: a real camera's exposure follows the person moving in
    front of it and the light in the room; a replaced background's brightness does not move at all."""
    virtual_background_s: float = 10.0
    """The signal must hold this long after a full window before it is raised: it is a reason to ask for the pan
    check, not a verdict (a webcam with locked exposure in steady light can come close)."""

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


FROZEN_WINDOW = 5
"""Analysed frames whose changes decide whether the picture is frozen."""


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
    followed, since the others depend on it (no face counts while the camera is frozen or covered), but its findings
    are never given out, nor listed as active."""
    conditions: dict[Check, _Condition] = field(default_factory=lambda: {check: _Condition() for check in Check})
    last_frame_at: float | None = None
    recent_changes: deque[tuple[float, float]] = field(default_factory=lambda: deque(maxlen=FROZEN_WINDOW))
    """(time, change) of the last analysed frames."""
    background: deque[tuple[float, float | None, float | None]] = field(default_factory=deque)
    """(time, background brightness, background change) over the last ``background_window_s``."""

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
            if state.active is None and at - state.since >= hold:
                state.active = Finding(check, state.since, None, detail)
                findings.append(state.active)
        else:
            state.since = None
            if state.active is not None:
                if state.cleared_since is None:
                    state.cleared_since = at
                if at - state.cleared_since >= self.thresholds.clear_s:
                    ended = Finding(check, state.active.started, at, state.active.detail)
                    state.active = None
                    state.cleared_since = None
                    findings.append(ended)
        return findings

    def feed(self, observation: Observation) -> list[Finding]:
        """The findings that start or end with this observation."""
        t = self.thresholds
        at = observation.at
        self.last_frame_at = at
        findings = self._update(Check.LOST, False, at, t.lost_s, "")
        covered = observation.brightness < t.dark_brightness or observation.contrast < t.flat_contrast
        findings += self._update(
            Check.COVERED, covered, at, t.covered_s,
            f"brightness {observation.brightness:.0f}, contrast {observation.contrast:.1f}",
        )  # fmt: skip
        if observation.change is not None:
            self.recent_changes.append((at, observation.change))
        # The median of the last few changes: a frozen source through VP8 still shows the encoder's refinements
        # (0.02-0.09 here), and a still room its sensor noise (0.2-0.4).  The picture has been frozen since the
        # window's first frame.
        frozen = (
            len(self.recent_changes) == FROZEN_WINDOW
            and float(np.median([change for _, change in self.recent_changes])) < t.frozen_change
            and not covered
        )
        findings += self._update(
            Check.FROZEN, frozen, at, t.frozen_s, "the picture does not change at all", since=self.recent_changes[0][0]
            if self.recent_changes else None,
        )  # fmt: skip
        # One still frame says nothing; only a camera found frozen (or covered) makes the faces count for nothing.
        usable = not covered and self.conditions[Check.FROZEN].active is None
        faces = len(observation.faces)
        absent = usable and faces == 0 and at >= self.leave_granted_until
        findings += self._update(Check.LEFT_AREA, absent, at, t.absence_s, "nobody in front of the camera")
        findings += self._update(
            Check.VIRTUAL_BACKGROUND, usable and self._background_still(observation), at,
            t.virtual_background_s, self._background_detail(),
        )  # fmt: skip
        crowded = usable and faces >= 2
        edge = sum(1 for box in observation.faces if box.touches_edge(observation.width, observation.height))
        findings += self._update(
            Check.EXTRA_PERSON, crowded, at, t.extra_person_s,
            f"{faces} faces in view" + (f" ({edge} at the frame's edge)" if edge else ""),
        )  # fmt: skip
        return self._enabled(findings)

    def _background_still(self, observation: Observation) -> bool:
        """The frozen-background signal: over a full window, with someone in view nearly all the time, the
        background neither changes nor varies in brightness, as a replacement image does."""
        t = self.thresholds
        window = self.background
        window.append((observation.at, observation.background_shift, observation.background_change))
        while window and window[0][0] < observation.at - t.background_window_s:
            window.popleft()
        if observation.at - window[0][0] < 0.9 * t.background_window_s:
            return False
        changes = [c for _, _, c in window if c is not None]
        if len(changes) < 0.8 * len(window):
            return False
        return float(np.mean(changes)) < t.background_change and self._brightness_variation() < t.background_brightness

    def _brightness_variation(self) -> float:
        """The standard deviation of the background's brightness trace over the window."""
        trace = np.cumsum([s for _, s, _ in self.background if s is not None])
        return float(np.std(trace)) if len(trace) else 0.0

    def _background_detail(self) -> str:
        changes = [c for _, _, c in self.background if c is not None]
        if not changes:
            return ""
        window = self.thresholds.background_window_s
        return (f"the background does not move: mean change {np.mean(changes):.2f}, brightness varies by "
                f"{self._brightness_variation():.2f} over {window:.0f} s (ask for the pan check)")  # fmt: skip

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
