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
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

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

    @property
    def article(self) -> str:
        return {
            "left-area": "36.4.1",
            "extra-person": "36.4.2",
            "camera-covered": "36.4",
            "camera-frozen": "36.4",
            "camera-lost": "36.4",
        }[self.value]


@dataclass(frozen=True, slots=True)
class Box:
    x: int
    y: int
    width: int
    height: int

    def touches_edge(self, frame_width: int, frame_height: int, margin: int = 4) -> bool:
        return (
            self.x <= margin
            or self.y <= margin
            or self.x + self.width >= frame_width - margin
            or self.y + self.height >= frame_height - margin
        )


class FaceDetector(Protocol):
    name: str

    def detect(self, grey: Frame) -> list[Box]: ...


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


def to_grey(frame: Frame) -> Frame:
    if frame.ndim == 2:
        return frame
    # ITU-R 601 luma, as OpenCV's BGR2GRAY, without needing cv2 here.
    weights = np.array([0.114, 0.587, 0.299], dtype=np.float32)
    grey: Frame = (frame[..., :3].astype(np.float32) @ weights).clip(0, 255).astype(np.uint8)
    return grey


def observe(
    frame: Frame, at: float, previous: Frame | None, detector: FaceDetector | None
) -> tuple[Observation, Frame]:
    """What one analysed frame shows; returns the observation and the small grey frame to compare the next with."""
    grey = to_grey(frame)
    small = grey[::4, ::4]
    change = None if previous is None or previous.shape != small.shape else float(
        np.abs(small.astype(np.int16) - previous.astype(np.int16)).mean()
    )  # fmt: skip
    faces = tuple(detector.detect(grey)) if detector is not None else ()
    height, width = grey.shape
    return Observation(at, float(grey.mean()), float(grey.std()), change, faces, width, height), small


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

    @classmethod
    def from_policy(cls, values: dict[str, Any]) -> Thresholds:
        known = {name for name in cls.__dataclass_fields__}
        return cls(**{k: float(v) for k, v in values.items() if k in known})


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
    conditions: dict[Check, _Condition] = field(default_factory=lambda: {check: _Condition() for check in Check})
    last_frame_at: float | None = None
    recent_changes: deque[tuple[float, float]] = field(default_factory=lambda: deque(maxlen=FROZEN_WINDOW))
    """(time, change) of the last analysed frames."""

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
        crowded = usable and faces >= 2
        edge = sum(1 for box in observation.faces if box.touches_edge(observation.width, observation.height))
        findings += self._update(
            Check.EXTRA_PERSON, crowded, at, t.extra_person_s,
            f"{faces} faces in view" + (f" ({edge} at the frame's edge)" if edge else ""),
        )  # fmt: skip
        return findings

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
            return [state.active]
        return []

    def active(self) -> list[Finding]:
        return [c.active for c in self.conditions.values() if c.active is not None]


def boxes_from(rects: Sequence[Sequence[int]]) -> list[Box]:
    return [Box(int(x), int(y), int(w), int(h)) for x, y, w, h in rects]
