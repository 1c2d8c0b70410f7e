"""The microphone check (36.4, 36.4.2, 36.4.3): pure rules over a stream of voice-activity probabilities, sound
levels and mouth observations, with times passed in (seconds), so that the same sound always gives the same findings.

Players think aloud (many are children), so speech alone is no finding.  What is flagged is speech that is not the
player's own: speech heard while the player's mouth, seen by the front camera, stays still, or while no face is in
view (:class:`SoundCheck.VOICE`).  It is a review flag with the sound around it as evidence, never a penalty.  A
microphone that sends only digital silence (muted in the browser or the system) or nothing at all (lost) is a case
when the section requires the microphone.

The model that says "speech" (:mod:`video.vad`) and the adapter that decodes the WebRTC track (:mod:`video.audio`)
are elsewhere; this module takes their numbers:
- :class:`SpeechTracker` turns one probability per 32 ms chunk into speech segments (a segment opens once 0.4 s of a
  1 s window was voiced, backdated to its first voiced chunk, and closes after 0.8 s below the lower threshold:
  keyboard clicks, a mouse, a chair are too short to open one);
- :func:`mouth_openness` (the inner lips' gap over the mouth's width, from face landmarks) or :func:`mouth_motion`
  (the mouth region's change against the upper face's, without landmarks) say whether the mouth moves;
- :class:`VoiceMonitor` judges each stretch of speech, ``judge_s`` at a time, against the mouth seen meanwhile.
"""

from __future__ import annotations

import enum
import math
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field

import cv2
import numpy as np
from numpy.typing import NDArray

from video.checks import Box

SAMPLE_RATE = 16_000
"""What the voice-activity models take (the 48 kHz Opus of WebRTC is resampled, :mod:`video.audio`)."""
CHUNK = 512
"""Samples per decision (32 ms at 16 kHz): Silero VAD's window."""
CHUNK_S = CHUNK / SAMPLE_RATE

Samples = NDArray[np.float32]
"""Mono sound at :data:`SAMPLE_RATE`, in -1..1."""


class SoundCheck(enum.Enum):
    """What the microphone check raises, with the article each applies."""

    VOICE = "voice"
    """Speech that is not the player's own: someone else in the area (36.4.2) or advice from a device (36.4.3)."""
    MUTED = "microphone-muted"
    LOST = "microphone-lost"

    @property
    def article(self) -> str:
        return {"voice": "36.4.2, 36.4.3", "microphone-muted": "36.4", "microphone-lost": "36.4"}[self.value]


class MouthState(enum.Enum):
    MOVING = "moving"
    """The player's mouth moved while the speech was heard: their own voice (thinking aloud)."""
    STILL = "still"
    UNSEEN = "unseen"
    """No face was in view (or too few views of it) while the speech was heard."""


@dataclass(frozen=True, slots=True)
class SoundFinding:
    check: SoundCheck
    started: float
    ended: float | None
    detail: str


@dataclass(frozen=True, slots=True)
class SpeechSettings:
    """The voice check's thresholds (``[sections.policy.thresholds]`` may set them, like the camera's)."""

    speech_probability: float = 0.5
    """A chunk is voiced at this probability or more..."""
    speech_off_probability: float = 0.35
    """...and a segment goes on while its chunks stay at this or more (with :attr:`speech_hangover_s` of grace)."""
    speech_window_s: float = 1.0
    speech_min_s: float = 0.4
    """A segment opens once this much of the last :attr:`speech_window_s` was voiced."""
    speech_hangover_s: float = 0.8
    judge_s: float = 1.5
    """Speech is judged against the mouth this long at a time (the first judgement comes at most this long after
    the segment's first voiced chunk, well within the 3 s asked for)."""
    mouth_min_views: int = 3
    """Fewer views of the mouth than this in a judged stretch: the mouth is unseen."""
    mouth_opening: float = 0.06
    """With landmarks: the mouth moves when its opening (inner lips' gap over its width) ranges over this much."""
    mouth_motion: float = 0.25
    """Without landmarks: the mouth moves when the median of its region's change, less the upper face's, is this
    much or more (in units of the region's own contrast)."""
    voice_clear_s: float = 5.0
    """A voice finding ends after this long without speech that is not the player's."""
    silence_dbfs: float = -70.0
    """Below this level (RMS) the sound is digital silence: a muted track (a real microphone's room is at -65 to
    -45 dBFS)..."""
    muted_s: float = 5.0
    """...for this long: the microphone is muted."""
    microphone_lost_s: float = 5.0
    """No sound at all for this long: the microphone is lost."""


@dataclass(frozen=True, slots=True)
class Segment:
    start: float
    end: float | None
    voiced_s: float


@dataclass
class SpeechTracker:
    """One probability per chunk in, speech segments out (see the module's text)."""

    settings: SpeechSettings = field(default_factory=SpeechSettings)
    window: deque[tuple[float, bool]] = field(default_factory=deque)
    """(chunk's end, voiced) over the last ``speech_window_s``."""
    open: Segment | None = None
    last_voiced: float = float("-inf")

    def feed(self, at: float, probability: float) -> tuple[Segment | None, Segment | None]:
        """``at``: the chunk's end.  (the segment that opened, the segment that closed) with this chunk."""
        s = self.settings
        voiced = probability >= s.speech_probability
        self.window.append((at, voiced))
        while self.window and self.window[0][0] <= at - s.speech_window_s:
            self.window.popleft()
        if self.open is None:
            voiced_s = sum(CHUNK_S for _, v in self.window if v)
            if voiced_s < s.speech_min_s - 1e-9:
                return None, None
            first = next(when for when, v in self.window if v)
            self.open = Segment(first - CHUNK_S, None, voiced_s)
            self.last_voiced = at
            return self.open, None
        if probability >= s.speech_off_probability:
            self.last_voiced = at
            self.open = Segment(self.open.start, None, self.open.voiced_s + (CHUNK_S if voiced else 0.0))
            return None, None
        if at - self.last_voiced >= s.speech_hangover_s - 1e-9:
            closed = Segment(self.open.start, self.last_voiced, self.open.voiced_s)
            self.open = None
            self.window.clear()
            return None, closed
        return None, None

    def hearing(self, at: float, within_s: float = 0.3) -> bool:
        """Whether a voiced chunk came in the last ``within_s``: the moment to look at the mouth."""
        return any(v and when > at - within_s for when, v in self.window) or self.open is not None


# --- The mouth ---------------------------------------------------------------------------------------------------

MESH_UPPER_LIP, MESH_LOWER_LIP, MESH_LEFT_CORNER, MESH_RIGHT_CORNER = 13, 14, 61, 291
"""The face mesh's (468 points) inner lips and mouth corners."""


def mouth_openness(points: NDArray[np.float32]) -> float:
    """The inner lips' gap over the mouth's width, from face-mesh points (x, y[, z]): about 0 closed, 0.2-0.5 open."""
    upper, lower = points[MESH_UPPER_LIP, :2], points[MESH_LOWER_LIP, :2]
    left, right = points[MESH_LEFT_CORNER, :2], points[MESH_RIGHT_CORNER, :2]
    width = float(np.linalg.norm(right - left))
    return float(np.linalg.norm(lower - upper)) / width if width > 0 else 0.0


def mouth_box(face: Box) -> Box:
    """The mouth's region in the face's box: from the mouth's corners where the detector gives them (CenterFace's
    fourth and fifth landmarks), else the lower middle of the box."""
    if len(face.landmarks) >= 5:
        (lx, ly), (rx, ry) = face.landmarks[3], face.landmarks[4]
        width = max(abs(rx - lx), face.width // 4)
        cx, cy = (lx + rx) // 2, (ly + ry) // 2
        return Box(cx - width * 4 // 5, cy - width * 2 // 5, width * 8 // 5, width)
    return Box(face.x + face.width // 4, face.y + face.height * 3 // 5, face.width // 2, face.height // 3)


def upper_face_box(face: Box) -> Box:
    """The eyes' band, as the reference for the head's own movement."""
    return Box(face.x + face.width // 6, face.y + face.height // 5, face.width * 2 // 3, face.height // 4)


PATCH = (24, 16)


def region_patch(grey: NDArray[np.uint8], box: Box) -> NDArray[np.float32] | None:
    """The region at a small fixed size, its mean removed and divided by its contrast; None when it falls outside the
    frame or is flat."""
    height, width = grey.shape[:2]
    x0, y0 = max(0, box.x), max(0, box.y)
    x1, y1 = min(width, box.x + box.width), min(height, box.y + box.height)
    if x1 - x0 < 6 or y1 - y0 < 4:
        return None
    patch = cv2.resize(grey[y0:y1, x0:x1], PATCH, interpolation=cv2.INTER_AREA).astype(np.float32)
    spread = float(patch.std())
    if spread < 2.0:
        return None
    return (patch - float(patch.mean())) / spread


@dataclass(frozen=True, slots=True)
class FacePatches:
    mouth: NDArray[np.float32]
    upper: NDArray[np.float32]


def face_patches(grey: NDArray[np.uint8], face: Box) -> FacePatches | None:
    mouth, upper = region_patch(grey, mouth_box(face)), region_patch(grey, upper_face_box(face))
    return None if mouth is None or upper is None else FacePatches(mouth, upper)


def mouth_motion(previous: FacePatches, current: FacePatches) -> float:
    """How much the mouth's region changed between two views, less how much the upper face's did (the head's own
    movement and the camera's noise change both)."""
    mouth = float(np.abs(current.mouth - previous.mouth).mean())
    upper = float(np.abs(current.upper - previous.upper).mean())
    return mouth - upper


@dataclass(frozen=True, slots=True)
class MouthView:
    """One look at the player's mouth: its opening (with landmarks) or its motion since the previous look (without);
    both None when no face was in view."""

    at: float
    openness: float | None = None
    motion: float | None = None

    @property
    def seen(self) -> bool:
        return self.openness is not None or self.motion is not None


def judge_mouth(views: Sequence[MouthView], settings: SpeechSettings) -> MouthState:
    """Whether the mouth moved over these views (those of one judged stretch of speech)."""
    openings = [v.openness for v in views if v.openness is not None]
    motions = [v.motion for v in views if v.motion is not None]
    if len(openings) >= settings.mouth_min_views:
        return MouthState.MOVING if max(openings) - min(openings) >= settings.mouth_opening else MouthState.STILL
    if len(motions) >= settings.mouth_min_views - 1:
        return MouthState.MOVING if float(np.median(motions)) >= settings.mouth_motion else MouthState.STILL
    return MouthState.UNSEEN


# --- The monitor ----------------------------------------------------------------------------------------------------


def level_dbfs(samples: Samples) -> float:
    """The RMS level in dB below full scale (-inf for digital silence)."""
    power = float(np.mean(np.square(samples, dtype=np.float64))) if samples.size else 0.0
    return 10 * math.log10(power) if power > 0 else float("-inf")


@dataclass
class _State:
    since: float | None = None
    active: SoundFinding | None = None


@dataclass
class VoiceMonitor:
    """The microphone's rules for one stream: feed each chunk's probability and level (:meth:`hear`), each look at
    the mouth (:meth:`see`), and "time passes" ticks (:meth:`tick`), in time order."""

    settings: SpeechSettings = field(default_factory=SpeechSettings)
    tracker: SpeechTracker = field(init=False)
    views: deque[MouthView] = field(default_factory=deque)
    judged_until: float | None = None
    """The end of the last judged stretch of the open segment."""
    voice: _State = field(default_factory=_State)
    voice_last: float = float("-inf")
    """When speech that is not the player's was last heard."""
    muted: _State = field(default_factory=_State)
    lost: _State = field(default_factory=_State)
    last_heard: float | None = None
    judgements: list[tuple[float, float, MouthState]] = field(default_factory=list)
    """Every judged stretch (start, end, the mouth): for the benchmark and the finding's detail."""

    def __post_init__(self) -> None:
        self.tracker = SpeechTracker(self.settings)

    def wants_mouth(self, at: float) -> bool:
        """Whether speech is being heard: the moment to look at the mouth (the landmarks cost ~20 ms a look)."""
        return self.tracker.hearing(at)

    def see(self, view: MouthView) -> None:
        self.views.append(view)
        while self.views and self.views[0].at < view.at - 30.0:
            self.views.popleft()

    def hear(self, at: float, probability: float, level: float) -> list[SoundFinding]:
        """One chunk: ``at`` its end, ``probability`` of speech, ``level`` its RMS in dBFS."""
        s = self.settings
        findings: list[SoundFinding] = []
        self.last_heard = at
        if self.lost.active is not None and at > self.lost.active.started:  # sound that came after the loss
            findings.append(self._end(self.lost, at))
        silent = level < s.silence_dbfs
        findings += self._hold(self.muted, SoundCheck.MUTED, silent, at, s.muted_s, at - CHUNK_S,
                               "the microphone sends only silence (muted)")  # fmt: skip
        opened, closed = self.tracker.feed(at, 0.0 if silent else probability)
        if opened is not None:
            self.judged_until = opened.start
        segment = self.tracker.open
        if segment is not None and self.judged_until is not None and at - self.judged_until >= s.judge_s:
            findings += self._judge(self.judged_until, at)
            self.judged_until = at
        elif closed is not None and self.judged_until is not None:
            if closed.end is not None and closed.end - self.judged_until >= s.speech_min_s:
                findings += self._judge(self.judged_until, closed.end)
            self.judged_until = None
        if self.voice.active is not None and at - self.voice_last >= s.voice_clear_s:
            findings.append(self._end(self.voice, at))
        return findings

    def _judge(self, start: float, end: float) -> list[SoundFinding]:
        views = [v for v in self.views if start - 0.3 <= v.at <= end + 0.3]
        state = judge_mouth(views, self.settings)
        self.judgements.append((start, end, state))
        if state is MouthState.MOVING:
            return []
        self.voice_last = end
        if self.voice.active is not None:
            return []
        why = "while the player's mouth was still" if state is MouthState.STILL else "while no face was in view"
        self.voice.active = SoundFinding(SoundCheck.VOICE, start, None, f"speech heard {why}: not the player's own "
                                         "voice? (a review flag: listen to the clip)")  # fmt: skip
        return [self.voice.active]

    def _hold(self, state: _State, check: SoundCheck, present: bool, at: float, hold: float, since: float,
              detail: str) -> list[SoundFinding]:  # fmt: skip
        if not present:
            state.since = None
            return [self._end(state, at)] if state.active is not None else []
        if state.since is None:
            state.since = since
        if state.active is None and at - state.since >= hold - 1e-9:
            state.active = SoundFinding(check, state.since, None, detail)
            return [state.active]
        return []

    @staticmethod
    def _end(state: _State, at: float) -> SoundFinding:
        assert state.active is not None
        ended = SoundFinding(state.active.check, state.active.started, at, state.active.detail)
        state.active, state.since = None, None
        return ended

    def tick(self, at: float, last_sound: float) -> list[SoundFinding]:
        """Time passes: the microphone is lost once no sound has come for ``microphone_lost_s`` since
        ``last_sound`` (when the last sound arrived, or the stream opened; the chunks may be judged later than that
        on a busy machine)."""
        if self.lost.active is None and at - last_sound >= self.settings.microphone_lost_s:
            self.lost.active = SoundFinding(SoundCheck.LOST, last_sound, None, "no sound from the microphone")
            return [self.lost.active]
        return []

    def active(self) -> list[SoundFinding]:
        return [s.active for s in (self.voice, self.muted, self.lost) if s.active is not None]
