"""The camera checks' evaluation set, its pure parts: who is where and when in every clip, the labels that follow, and
the scoring (``benchmarks/detectors.py`` composes, streams and analyses the clips; ``tests/video/test_evalset.py``
tests this module).  Nothing here reads media, composes pixels or touches the network: every clip is a
:class:`ClipSpec` drawn from its own seed, and the compositor and the labels use the same placement functions.

Scoring (:func:`score`): a raised finding detects a labelled episode of its check when it is raised between
``EARLY_S`` before the episode's start and ``LATE_S`` after its end; its latency is counted from the episode's
**start** (the player gone, the second person in view, the freeze, the lens covered, the background replaced); an
episode is detected "in target" when that latency is at most the episode's own target (:data:`LATENCY_TARGETS`).  A
finding raised outside every episode of its check (and the tolerances) is a false alarm, except while the camera is
covered or frozen (the other checks are not scored then) or while the other background effect is on; false alarms
are counted per player-hour of the check's negative video, with the exact Poisson upper bound
(:func:`poisson_upper`).  :func:`score_all` is the line for every check together: all the episodes, and the false
alarms raised in the video that is negative for every check.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final

import numpy as np

from video.checks import Thresholds

WIDTH, HEIGHT = 640, 480
WALK_OUT_S = 1.5
WALK_IN_S = 2.0
COVER_S = 0.4
"""A hand or cap takes this long to cover the lens (and to uncover it)."""
DRIFT = 0.15
"""Lighting drift: the camera's gain swings by this much either way..."""
DRIFT_PERIOD_S = 60.0
"""...over this period (a sine, each clip at its own phase)."""
LIGHT_RAMP_S = 1.0
"""A room light switched off (or on) changes the gain over this long."""
TURN_RAMP_S = 0.4
DOWN_RAMP_S = 1.0
LEAN_RAMP_S = 0.5
OCCLUDER_RAMP_S = 0.6
EARLY_S = 2.0
LATE_S = 1.0
ANALYSIS_RATE = 2.0
"""Analysed frames a second at most (the service's ``analysis_rate``)."""

LEFT_AREA, EXTRA_PERSON, COVERED, FROZEN = "LEFT_AREA", "EXTRA_PERSON", "COVERED", "FROZEN"
VIRTUAL_BACKGROUND, BLURRED_BACKGROUND = "VIRTUAL_BACKGROUND", "BLURRED_BACKGROUND"
CHECKS = (LEFT_AREA, EXTRA_PERSON, COVERED, FROZEN, VIRTUAL_BACKGROUND, BLURRED_BACKGROUND)
"""Named as ``video.checks.Check`` members (looked up by name: a check the service lacks is not scored)."""
BACKGROUND_CHECKS = (VIRTUAL_BACKGROUND, BLURRED_BACKGROUND)
ALL = "ALL"
"""The line for every check together."""

LATENCY_TARGETS: dict[str, tuple[float, float]] = {
    LEFT_AREA: (8.0, 8.0),
    EXTRA_PERSON: (5.0, 5.0),
    COVERED: (5.0, 5.0),
    FROZEN: (10.0, 10.0),
    VIRTUAL_BACKGROUND: (15.0, 20.0),
    BLURRED_BACKGROUND: (15.0, 20.0),
}
"""Seconds from an episode's start to its finding: (mid-stream, from the stream's start)."""

# --------------------------------------------------------------------------------------------------------------------
# Scoring


@dataclass(frozen=True, slots=True)
class Episode:
    """A check's condition truly holds from ``onset`` to ``end`` (seconds into the clip); it should be raised at most
    ``within`` seconds after ``onset``."""

    check: str
    onset: float
    end: float
    within: float


@dataclass(frozen=True, slots=True)
class Unscored:
    """While this lasts, findings of these checks count neither as detections nor as false alarms."""

    checks: frozenset[str]
    start: float
    end: float


@dataclass(frozen=True, slots=True)
class ClipLabels:
    name: str
    seconds: float
    episodes: tuple[Episode, ...] = ()
    unscored: tuple[Unscored, ...] = ()


@dataclass(frozen=True, slots=True)
class Raised:
    """A finding raised ``at`` seconds into the clip (offline: the analysed frame's time; live: when the service
    called ``on_finding``, from the stream's first frame)."""

    check: str
    at: float


@dataclass
class CheckScore:
    check: str
    episodes: int = 0
    detected: int = 0
    within: int = 0
    latencies: list[float] = field(default_factory=list)
    false_alarms: int = 0
    negative_s: float = 0.0
    missed: list[str] = field(default_factory=list)
    late: list[str] = field(default_factory=list)
    false_in: list[str] = field(default_factory=list)

    @property
    def recall(self) -> float:
        return self.detected / self.episodes if self.episodes else math.nan

    @property
    def recall_within(self) -> float:
        return self.within / self.episodes if self.episodes else math.nan

    @property
    def negative_hours(self) -> float:
        return self.negative_s / 3600

    @property
    def false_per_hour(self) -> float:
        return self.false_alarms / self.negative_hours if self.negative_s > 0 else math.nan

    @property
    def false_upper(self) -> float:
        """The exact 95 % (two-sided) Poisson upper bound of the false alarms per player-hour."""
        return poisson_upper(self.false_alarms, self.negative_hours)

    @property
    def median_latency(self) -> float:
        return statistics.median(self.latencies) if self.latencies else math.nan

    @property
    def max_latency(self) -> float:
        return max(self.latencies) if self.latencies else math.nan


def poisson_cdf(k: int, mean: float) -> float:
    """P(X <= k) for X ~ Poisson(mean), summed exactly term by term (in logs, so large means do not overflow)."""
    if mean <= 0:
        return 1.0
    log_mean = math.log(mean)
    return math.fsum(math.exp(i * log_mean - mean - math.lgamma(i + 1)) for i in range(k + 1))


def poisson_upper(k: int, hours: float, confidence: float = 0.95) -> float:
    """The exact (Garwood) upper confidence bound of a Poisson rate, k events in ``hours``: the mean at which seeing
    k or fewer has probability (1 - confidence) / 2, i.e. chi2.ppf(0.975, 2k + 2) / 2 / hours, by bisection on the
    Poisson CDF (k = 0 in 1 h: 3.689; k = 1: 5.572; k = 3: 8.767).  NaN without hours."""
    if hours <= 0:
        return math.nan
    tail = (1 - confidence) / 2
    low, high = 0.0, max(8.0, 2.0 * k + 8.0)
    while poisson_cdf(k, high) > tail:
        high *= 2
    for _ in range(200):
        middle = (low + high) / 2
        if poisson_cdf(k, middle) > tail:
            low = middle
        else:
            high = middle
        if high - low < 1e-12 * max(1.0, high):
            break
    return (low + high) / 2 / hours


def union_seconds(intervals: Iterable[tuple[float, float]], low: float, high: float) -> float:
    """How much of [low, high] the intervals cover together."""
    total, reach = 0.0, low
    for start, end in sorted((max(s, low), min(e, high)) for s, e in intervals):
        if end <= reach:
            continue
        total += end - max(start, reach)
        reach = end
    return total


def _windows(labels: ClipLabels, check: str, early_s: float, late_s: float) -> list[tuple[float, float]]:
    return [(e.onset - early_s, e.end + late_s) for e in labels.episodes if e.check == check]


def _match(labels: ClipLabels, raised: Sequence[Raised], check: str, result: CheckScore, early_s: float,
           late_s: float) -> list[Raised]:  # fmt: skip
    """Score the check's episodes in one clip into ``result``; the check's findings that detected none."""
    mine = sorted((r for r in raised if r.check == check), key=lambda r: r.at)
    used: set[int] = set()
    for episode in (e for e in labels.episodes if e.check == check):
        result.episodes += 1
        start, end = episode.onset - early_s, episode.end + late_s
        match = next((i for i, r in enumerate(mine) if i not in used and start <= r.at <= end), None)
        if match is None:
            result.missed.append(labels.name)
            continue
        used.add(match)
        latency = mine[match].at - episode.onset
        result.detected += 1
        result.latencies.append(latency)
        if latency <= episode.within:
            result.within += 1
        else:
            result.late.append(labels.name)
    return [r for i, r in enumerate(mine) if i not in used]


def score(check: str, clips: Iterable[tuple[ClipLabels, Sequence[Raised]]], early_s: float = EARLY_S,
          late_s: float = LATE_S) -> CheckScore:  # fmt: skip
    """Recall, recall in target, latency from the episode's start, and false alarms of one check."""
    result = CheckScore(check)
    for labels, raised in clips:
        windows = _windows(labels, check, early_s, late_s)
        ignored = [(u.start, u.end) for u in labels.unscored if check in u.checks]
        for r in _match(labels, raised, check, result, early_s, late_s):
            if not any(start <= r.at <= end for start, end in windows + ignored):
                result.false_alarms += 1
                result.false_in.append(labels.name)
        result.negative_s += labels.seconds - union_seconds(windows + ignored, 0.0, labels.seconds)
    return result


def score_all(checks: Sequence[str], clips: Iterable[tuple[ClipLabels, Sequence[Raised]]], early_s: float = EARLY_S,
              late_s: float = LATE_S) -> CheckScore:  # fmt: skip
    """Every check together: all their episodes, and the false alarms (of any of them) raised in the video that is
    negative for every one of them (outside every episode, tolerance and unscored stretch of any check)."""
    result = CheckScore(ALL)
    for labels, raised in clips:
        busy = [w for check in checks for w in _windows(labels, check, early_s, late_s)]
        busy += [(u.start, u.end) for u in labels.unscored if u.checks & set(checks)]
        for check in checks:
            for r in _match(labels, raised, check, result, early_s, late_s):
                if not any(start <= r.at <= end for start, end in busy):
                    result.false_alarms += 1
                    result.false_in.append(labels.name)
        result.negative_s += labels.seconds - union_seconds(busy, 0.0, labels.seconds)
    return result


@dataclass(frozen=True, slots=True)
class Target:
    recall: float | None = None
    """Recall in target (each episode within its own latency target) at least this."""
    false_per_hour: float | None = None
    """False alarms per negative player-hour (the point estimate) at most this."""

    def describe(self) -> str:
        parts = []
        if self.recall is not None:
            parts.append(f"recall ≥ {self.recall:g}")
        if self.false_per_hour is not None:
            parts.append(f"FA/h ≤ {self.false_per_hour:g}")
        return ", ".join(parts) or "-"

    def met(self, result: CheckScore) -> bool:
        if self.recall is not None and not result.recall_within >= self.recall:  # nan (no episodes) fails
            return False
        return self.false_per_hour is None or result.false_per_hour <= self.false_per_hour

    def shown(self, result: CheckScore) -> bool:
        """The false-alarm target holds even at the 95 % upper bound (enough negative hours to show it)."""
        return self.false_per_hour is None or result.false_upper <= self.false_per_hour


TARGETS = {
    LEFT_AREA: Target(1.0),
    EXTRA_PERSON: Target(0.95),
    COVERED: Target(1.0),
    FROZEN: Target(1.0),
    VIRTUAL_BACKGROUND: Target(0.9, 0.1),
    BLURRED_BACKGROUND: Target(0.9, 0.1),
    ALL: Target(None, 0.5),
}

# --------------------------------------------------------------------------------------------------------------------
# People: where they are, how they hold their head, what is in front of their face


@dataclass(frozen=True, slots=True)
class Person:
    photo: str
    face_w: float
    cx: float
    """Face centre x at rest."""
    top: float
    """Face top y at rest (negative and ``headless``: the face is above the frame, the body below it)."""
    side: int
    """-1: walks out (or in), leans, crosses from the left; +1: the right."""
    away: tuple[tuple[float, float], ...] = ()
    """(start, end): walks out at ``start`` (in WALK_OUT_S), walks back in at ``end`` (in WALK_IN_S).  A person who
    comes in later is away from -inf."""
    sway: float = 8.0
    period: float = 6.0
    phase: float = 0.0
    front: bool = False
    """Composited over the player (a person leaning in at the edge), else behind."""
    crossings: tuple[tuple[float, float], ...] = ()
    """(enter, leave): walks across the frame behind the player, the face's centre entering at ``enter`` (by
    ``side``'s edge the first time, then from alternate sides) and leaving by the other edge at ``leave``; out of the
    picture otherwise."""
    headless: bool = False
    """A body without a visible face (standing close beside the player, the head above the frame)."""
    turns: tuple[tuple[float, float, float], ...] = ()
    """(start, end, degrees): the head turned (+: towards the picture's right), TURN_RAMP_S to turn and back."""
    downs: tuple[tuple[float, float], ...] = ()
    """(start, end): looking down at the board: the head pitched down and lowered until only the top of the head and
    the forehead are in the frame, DOWN_RAMP_S down and back up."""
    down_visible: float = 0.35
    """...the face's top this many face widths above the frame's bottom edge."""
    leans: tuple[tuple[float, float], ...] = ()
    """(start, end): leaning out of the frame on ``side`` until half the face is out (LEAN_RAMP_S out and back)."""
    occluders: tuple[tuple[float, float, str], ...] = ()
    """(start, end, "mug" | "hand"): drinking, or a hand over the mouth; slides up in OCCLUDER_RAMP_S."""


def smooth(u: float) -> float:
    u = min(1.0, max(0.0, u))
    return u * u * (3 - 2 * u)


def ramp(t: float, start: float, end: float, rise: float) -> float:
    """0 before ``start``, rising to 1 over ``rise``, 1 until ``end - rise``, back to 0 at ``end``."""
    if not start <= t < end:
        return 0.0
    return min(smooth((t - start) / rise), smooth((end - t) / rise))


def walk_distance(person: Person) -> float:
    """How far the face centre moves to take the whole person out of the frame."""
    if person.side < 0:
        return person.cx + 2 * person.face_w + 40
    return WIDTH - person.cx + 2 * person.face_w + 40


def out_fraction(person: Person, t: float) -> float:
    """0 at rest in the picture, 1 fully walked out."""
    fraction = 0.0
    for start, end in person.away:
        if start <= t < end:
            fraction = max(fraction, smooth((t - start) / WALK_OUT_S))
        elif end <= t < end + WALK_IN_S:
            fraction = max(fraction, 1 - smooth((t - end) / WALK_IN_S))
    return fraction


def down_fraction(person: Person, t: float) -> float:
    return max((ramp(t, a, b, DOWN_RAMP_S) for a, b in person.downs), default=0.0)


def lean_fraction(person: Person, t: float) -> float:
    return max((ramp(t, a, b, LEAN_RAMP_S) for a, b in person.leans), default=0.0)


def yaw_at(person: Person, t: float) -> float:
    """Degrees the head is turned (+: towards the picture's right)."""
    return sum(degrees * ramp(t, a, b, TURN_RAMP_S) for a, b, degrees in person.turns)


DOWN_PITCH = 40.0
"""Degrees the head pitches when looking down."""


def pitch_at(person: Person, t: float) -> float:
    return DOWN_PITCH * down_fraction(person, t)


def occluder_at(person: Person, t: float) -> tuple[str, float] | None:
    """What is in front of the lower face and how far it has come up (0..1)."""
    for start, end, kind in person.occluders:
        amount = ramp(t, start, end, OCCLUDER_RAMP_S)
        if amount > 0:
            return kind, amount
    return None


def face_at(person: Person, t: float) -> tuple[float, float, float]:
    """(face centre x, face top y, face width) at time t, before jitter."""
    out = out_fraction(person, t)
    sway = person.sway * math.sin(2 * math.pi * t / person.period + person.phase)
    bob = 0.35 * person.sway * math.sin(2 * math.pi * t / (0.7 * person.period) + 2 * person.phase)
    scale = 1 + 0.025 * math.sin(2 * math.pi * t / (1.3 * person.period) + 3 * person.phase)
    cx = person.cx + sway + person.side * walk_distance(person) * out
    top = person.top + bob - 0.3 * person.face_w * out
    if person.crossings:
        cx = -10.0 * WIDTH  # between crossings: out of the picture
        for i, (enter, leave) in enumerate(person.crossings):
            if enter - 2 <= t <= leave + 2:
                start, stop = (0.0, float(WIDTH)) if person.side * (-1) ** i < 0 else (float(WIDTH), 0.0)
                cx = start + (t - enter) / (leave - enter) * (stop - start) + 0.3 * sway
    lean = lean_fraction(person, t)
    if lean:
        edge = -0.05 * person.face_w if person.side < 0 else WIDTH + 0.05 * person.face_w
        cx += lean * (edge - cx)
    down = down_fraction(person, t)
    if down:
        top += down * (HEIGHT - person.down_visible * person.face_w - top)
    return cx, top, person.face_w * scale


def in_view(person: Person, t: float) -> bool:
    """The person counts as in the picture: the face's centre inside the frame (a headless person: the body's
    centre line inside the frame's width)."""
    cx, top, width = face_at(person, t)
    if not 0 <= cx <= WIDTH:
        return False
    return person.headless or 0 <= top + width / 2 <= HEIGHT


def gone(person: Person, t: float) -> bool:
    """The player walked out of the frame (away, and the face's centre out of the frame)."""
    if out_fraction(person, t) <= 0:
        return False
    cx, _, _ = face_at(person, t)
    return not 0 <= cx <= WIDTH


# --------------------------------------------------------------------------------------------------------------------
# Clips


@dataclass(frozen=True, slots=True)
class ClipSpec:
    name: str
    scenario: str
    seconds: float
    background: str
    player: Person
    second: Person | None = None
    fps: float = 5.0
    bitrate: int = 300_000
    """The sender's cap (the player page's ``maxBitrate``), bits a second."""
    live: bool = False
    """Streamed in real time over WebRTC into the service's ingest (else encoded and analysed offline)."""
    hog: bool = False
    """A live clip streamed while the CPU hog runs."""
    cover: tuple[float, float] | None = None
    cover_kind: str = "black"
    freeze: tuple[float, float] | None = None
    """The camera repeats one frame, bit-identical (the encoder still refines it)."""
    effect: str | None = None
    """"virtual": the background replaced by ``effect_image``; "blurred": the real background blurred."""
    effect_from: float = 0.0
    """When the effect is switched on (0: from the stream's start)."""
    effect_image: str = ""
    blur_sigma: float = 12.0
    """Gaussian sigma (pixels) of an app-style blurred background."""
    halo: float = 4.0
    """The effect's mask reaches this many pixels beyond the person (wandering by about half of it)..."""
    feather: float = 2.5
    """...and its edge is blurred by about this sigma (pixels), varying frame to frame."""
    gain: float = 1.0
    """The camera's exposure: 0.3-0.4 in a dim room, 0.55-0.75 against a bright window."""
    noise: float = 3.0
    """Sensor noise, standard deviation in grey levels."""
    drift: float = DRIFT
    drift_phase: float = 0.0
    lights: tuple[tuple[float, float], ...] = ()
    """(at, level): the room light changes the gain to ``level`` times the clip's own over LIGHT_RAMP_S."""
    window: tuple[int, int, int, int] | None = None
    """x0, y0, x1, y1: a bright window behind the player, saturated in the picture."""
    seed: int = 0

    @property
    def stream(self) -> str:
        return f"{self.fps:g} fps {self.bitrate // 1000} kbit/s"


def light_level(spec: ClipSpec, t: float) -> float:
    level = 1.0
    for at, to in spec.lights:
        if t >= at:
            level += (to - level) * smooth((t - at) / LIGHT_RAMP_S)
    return level


def camera_gain(spec: ClipSpec, t: float) -> float:
    """The camera's gain on the room and the people at time t (a replacement picture does not follow it)."""
    drift = 1 + spec.drift * math.sin(2 * math.pi * t / DRIFT_PERIOD_S + spec.drift_phase)
    return spec.gain * drift * light_level(spec, t)


def frame_times(seconds: float, fps: float) -> list[float]:
    return [i / fps for i in range(round(seconds * fps))]


def _runs(times: Sequence[float], flags: Sequence[bool], end: float) -> list[tuple[float, float]]:
    runs, start = [], None
    for t, flag in zip(times, flags, strict=True):
        if flag and start is None:
            start = t
        elif not flag and start is not None:
            runs.append((start, t))
            start = None
    if start is not None:
        runs.append((start, end))
    return runs


def _within(check: str, onset: float) -> float:
    mid, from_start = LATENCY_TARGETS[check]
    return from_start if onset <= 0 else mid


def labels_for(spec: ClipSpec) -> ClipLabels:
    """The episodes of every check in the clip, from the same placement functions the compositor uses."""
    times = frame_times(spec.seconds, spec.fps)
    episodes = [Episode(LEFT_AREA, a, b, _within(LEFT_AREA, a))
                for a, b in _runs(times, [gone(spec.player, t) for t in times], spec.seconds)]  # fmt: skip
    if spec.second is not None:
        second = spec.second
        runs = _runs(times, [in_view(second, t) for t in times], spec.seconds)
        episodes += [Episode(EXTRA_PERSON, a, b, _within(EXTRA_PERSON, a)) for a, b in runs]
    unscored = []
    clear = Thresholds().clear_s
    if spec.cover is not None:
        start, end = spec.cover
        episodes.append(Episode(COVERED, start + COVER_S, end, _within(COVERED, start + COVER_S)))
        others = frozenset(CHECKS) - {COVERED}
        unscored.append(Unscored(others, start, end + COVER_S + clear + 1))
    if spec.freeze is not None:
        start, end = spec.freeze
        episodes.append(Episode(FROZEN, start, end, _within(FROZEN, start)))
        others = frozenset(CHECKS) - {FROZEN, COVERED}
        unscored.append(Unscored(others, start, end + clear + 1))
    if spec.effect is not None:
        check, other = ((VIRTUAL_BACKGROUND, BLURRED_BACKGROUND) if spec.effect == "virtual" else
                        (BLURRED_BACKGROUND, VIRTUAL_BACKGROUND))  # fmt: skip
        episodes.append(Episode(check, spec.effect_from, spec.seconds, _within(check, spec.effect_from)))
        # A background effect is on: the other background check's finding names the wrong effect, not a false alarm.
        unscored.append(Unscored(frozenset({other}), spec.effect_from, spec.seconds))
    return ClipLabels(spec.name, spec.seconds, tuple(sorted(episodes, key=lambda e: e.onset)), tuple(unscored))


def faces_truth(spec: ClipSpec, t: float) -> int | None:
    """How many faces a detector should find at time t, where that is clear (None while the camera is covered or
    frozen, a head is turned, lowered, leaning out or covered, a person is walking or headless)."""
    if spec.cover is not None and spec.cover[0] <= t < spec.cover[1] + COVER_S:
        return None
    if spec.freeze is not None and spec.freeze[0] <= t < spec.freeze[1]:
        return None
    count = 0
    for person in (spec.player, spec.second):
        if person is None:
            continue
        busy = (abs(yaw_at(person, t)) > 15 or down_fraction(person, t) > 0 or lean_fraction(person, t) > 0
                or occluder_at(person, t) is not None or 0 < out_fraction(person, t) < 1)  # fmt: skip
        if busy or (person.headless and in_view(person, t)) or person.crossings:
            return None
        count += in_view(person, t)
    return count


def analysed_indices(seconds: float, fps: float, rate: float = ANALYSIS_RATE) -> list[int]:
    """The frames the service analyses, as ``video.ingest.StreamSession.consume`` picks them from a stream that
    keeps time: a frame is analysed when it arrives at or after the due time, and the next one is due a period
    after this one was due, or half a period after it arrived if the stream fell behind (5 and 15 fps: 2 a second,
    unevenly spaced at 5 fps)."""
    chosen, due = [], -math.inf
    for index in range(round(seconds * fps)):
        at = index / fps
        if at + 1e-9 >= due:
            chosen.append(index)
            due = max(due + 1 / rate, at + 0.5 / rate)
    return chosen


# --------------------------------------------------------------------------------------------------------------------
# The sender's bitrate


REMB_START = 500_000
"""aiortc's VP8 encoder starts at 500 kbit/s (or the cap); the receiver's estimates (REMB) then move it, as measured
here (aiortc to aiortc on loopback, 640x480 composed clips):"""
REMB_FAST_GROWTH = 0.05
"""at 15 fps it grows by about 5 % a second from the first second (500 to 800 kbit/s in about 10 s);"""
REMB_SLOW_FIRST_S, REMB_SLOW_DROP, REMB_SLOW_GROWTH = 3.5, 0.65, 0.03
"""at 5 fps the first estimate, after 3.5 s, is about 0.65 of the start (the stream sends less than its target),
and it then grows by about 3 % a second.  The encoder is made anew, a keyframe and a fresh rate control, whenever
the target moves by more than 10 %."""


def sender_bitrate(t: float, cap: int, fps: float) -> int:
    """The target of an aiortc sender capped at ``cap`` (the page's ``maxBitrate``), ``t`` seconds into a stream at
    ``fps``: what the offline part gives the encoder, frame by frame, for the live part's warm-up."""
    start = min(cap, REMB_START)
    if fps >= 10:
        estimate = start * math.exp(REMB_FAST_GROWTH * max(0.0, t - 1))
    elif t < REMB_SLOW_FIRST_S:
        estimate = start
    else:
        estimate = REMB_SLOW_DROP * start * math.exp(REMB_SLOW_GROWTH * (t - REMB_SLOW_FIRST_S))
    return int(min(cap, estimate))


# --------------------------------------------------------------------------------------------------------------------
# The set


PLAYERS = ("obama", "biden", "obama2", "astronaut")
ROOMS = ("home", "building", "box", "cup", "vtest")
"""Real backgrounds: photos and videos through a camera."""
STILLS = ("coffee", "chelsea", "home", "building", "camera")
"""Replacement pictures."""
PROFILES = ((5.0, 300_000), (15.0, 800_000), (5.0, 120_000), (15.0, 500_000), (5.0, 300_000), (5.0, 200_000),
            (15.0, 300_000), (5.0, 250_000))  # fmt: skip
"""(fps, bitrate cap) of the clips of a scenario, in turn: the player page's 5 fps at 300 kbit/s, lower on poor
links, and 15 fps up to 800 kbit/s."""
PARTIAL = ("obama_partial_face", "obama_partial_face2")
PARTIAL_FACES = {"obama_partial_face": (-66.0, 279.0, 491.0, -1), "obama_partial_face2": (353.0, 279.0, 551.0, 1)}
"""Face x and width in the photo, the crop's width, and the side whose edge cuts the face (for placing them)."""
HARD_NEGATIVES = ("turn", "down", "lean", "mug", "hand")


def _player(rng: np.random.Generator, photo: str, **extra: Any) -> Person:
    cx = 320 + rng.uniform(-50, 50)
    side = -1 if cx < 320 else 1
    return Person(photo, rng.uniform(130, 170), cx, rng.uniform(85, 125), side, sway=rng.uniform(4, 12),
                  period=rng.uniform(4, 9), phase=rng.uniform(0, 2 * math.pi), down_visible=rng.uniform(0.25, 0.45),
                  **extra)  # fmt: skip


def hard_negatives(rng: np.random.Generator, seconds: float, first: float, gap: tuple[float, float] = (12, 40),
                   kinds: Sequence[str] = HARD_NEGATIVES) -> dict[str, tuple[Any, ...]]:  # fmt: skip
    """The player's hard negatives, one after another from ``first``: head turned 45-70° for 3-8 s, looking down for
    10-25 s, leaning half out for under 3 s, drinking (3-7 s), a hand over the mouth (4-12 s)."""
    events: dict[str, list[Any]] = {"turns": [], "downs": [], "leans": [], "occluders": []}
    order = list(kinds)
    rng.shuffle(order)
    t, i = first, 0
    while True:
        kind = order[i % len(order)]
        i += 1
        if kind == "turn":
            length = rng.uniform(3, 8) + 2 * TURN_RAMP_S
            item: Any = (t, t + length, float(rng.choice([-1, 1]) * rng.uniform(45, 70)))
            key = "turns"
        elif kind == "down":
            length = rng.uniform(10, 25)
            item, key = (t, t + length), "downs"
        elif kind == "lean":
            length = rng.uniform(1.5, 2.8)
            item, key = (t, t + length), "leans"
        else:
            length = rng.uniform(3, 7) if kind == "mug" else rng.uniform(4, 12)
            item, key = (t, t + length, kind), "occluders"
        if t + length > seconds - 2:
            break
        events[key].append(item)
        t += length + rng.uniform(*gap)
    return {key: tuple(value) for key, value in events.items()}


@dataclass
class SetBuilder:
    """Appends clips, each from its own seed (1000 + its number), the (fps, bitrate) in turn per scenario."""

    drift: float = DRIFT
    specs: list[ClipSpec] = field(default_factory=list)
    turns: dict[str, int] = field(default_factory=dict)
    first_seed: int = 1000
    prefix: str = ""
    """Before every clip's name (the browser part's clips: ``browser-``)."""

    def add(self, scenario: str, seconds: float, background: str, make: Callable[[np.random.Generator], dict[str, Any]],
            live: bool = False, **extra: Any) -> None:  # fmt: skip
        seed = self.first_seed + len(self.specs)
        rng = np.random.default_rng(seed)
        turn = self.turns.get(scenario, 0)
        self.turns[scenario] = turn + 1
        fps, bitrate = PROFILES[(turn + len(scenario)) % len(PROFILES)]
        noise, drift_phase = rng.uniform(2.0, 4.0), rng.uniform(0, 2 * math.pi)
        values: dict[str, Any] = {"fps": fps, "bitrate": bitrate, "noise": noise, "drift": self.drift,
                                  "drift_phase": drift_phase, "seed": seed, "live": live}  # fmt: skip
        values.update(make(rng), **extra)
        if live:
            values["hog"] = sum(s.live for s in self.specs) % 2 == 1
        name = f"{self.prefix}{'live-' if live else ''}{scenario}-{len(self.specs) + 1:03d}-{background}"
        self.specs.append(ClipSpec(name, scenario, seconds, background, **values))


def _camera(rng: np.random.Generator, condition: str, seconds: float) -> dict[str, Any]:
    """A room's light: "dim" (gain 0.3-0.4, noise 6-10), "window" (a saturated window, the camera's exposure down
    to 0.55-0.75), "lights" (the light drops by 30 % over 1 s, back up later, again), or "normal"."""
    if condition == "dim":
        return {"gain": rng.uniform(0.3, 0.4), "noise": rng.uniform(6, 10)}
    if condition == "window":
        width, height = rng.uniform(150, 230), rng.uniform(160, 240)
        x0 = rng.uniform(10, 60) if rng.uniform() < 0.5 else WIDTH - width - rng.uniform(10, 60)
        y0 = rng.uniform(15, 60)
        return {"gain": rng.uniform(0.55, 0.75), "window": (int(x0), int(y0), int(x0 + width), int(y0 + height))}
    if condition == "lights":
        lights: list[tuple[float, float]] = []
        t = rng.uniform(10, 40)
        while t < seconds - 5:
            level = 0.7 if not lights or lights[-1][1] > 0.85 else 1.0
            lights.append((t, level))
            t += rng.uniform(20, 90)
        return {"lights": tuple(lights)}
    return {}


def _second(rng: np.random.Generator, photo: str, kind: str, player: Person, enter: float, leave: float) -> Person:
    """The other person: "behind" (standing behind beside the player), "far" (small, far behind), "partial" (half
    a face at the frame's edge), "body" (standing close beside the player, the head above the frame), "passing"
    (walking across behind the player's head in ``leave - enter`` seconds)."""
    side = -player.side
    away = ((-1e9, enter), (leave, 1e9))
    sway, period, phase = rng.uniform(3, 10), rng.uniform(4, 9), rng.uniform(0, 2 * math.pi)
    if kind == "partial":  # the photo's cut edge on the frame's edge: the face is cut by the frame
        face_x, face_w_photo, crop_w, cut = PARTIAL_FACES[photo]
        face_w = rng.uniform(140, 165)
        scale = face_w / face_w_photo
        centre = (face_x + face_w_photo / 2) * scale
        cx = centre if cut < 0 else WIDTH - crop_w * scale + centre
        return Person(photo, face_w, cx, rng.uniform(80, 120), int(cut), away, min(sway, 4), period, phase, True)
    if kind == "passing":
        return Person(photo, player.face_w * rng.uniform(0.8, 1.0), 0.0, player.top + rng.uniform(-0.25, 0.15) *
                      player.face_w, side, (), sway, period, phase, crossings=((enter, leave),))  # fmt: skip
    if kind == "body":
        face_w = rng.uniform(150, 190)
        cx = rng.uniform(40, 110) if side < 0 else rng.uniform(530, 600)
        return Person(photo, face_w, cx, -rng.uniform(1.2, 1.45) * face_w, side, away, sway, period, phase, True,
                      headless=True)  # fmt: skip
    face_w = rng.uniform(95, 115) if kind == "behind" else rng.uniform(60, 75)
    cx = rng.uniform(90, 130) if side < 0 else rng.uniform(510, 550)
    top = rng.uniform(60, 100) if kind == "behind" else rng.uniform(50, 90)
    return Person(photo, face_w, cx, top, side, away, sway, period, phase)


ABSENCES = (8.5, 9.0, 10.0, 10.5, 11.0, 12.0, 13.0, 14.0, 16.0, 20.0, 28.0, 36.0, 45.0, 60.0)
"""How long the player is gone (face out of the frame) in the leaving clips (s); 10-14 s: the short absences."""


def _leaving(rng: np.random.Generator, photo: str, first: float, absences: Sequence[float]) -> dict[str, Any]:
    away, t = [], first
    for gone_s in absences:
        # The face's centre leaves the frame ~0.7 s into the walk out and is back ~1 s into the walk in.
        away.append((t, t + gone_s - 0.3))
        t += gone_s + rng.uniform(15, 25)
    extra = hard_negatives(rng, first - 3, 4, (6, 12), ("turn", "lean")) if first > 20 else {}
    return {"player": _player(rng, photo, away=tuple(away), **extra)}


def leaving_seconds(first: float, absences: Sequence[float]) -> float:
    return first + sum(absences) + 22 * len(absences)


Maker = Callable[[np.random.Generator], dict[str, Any]]
"""Draws a clip's people and camera from its seeded generator."""
CONDITIONS = ("normal", "lights", "dim", "window", "normal")


def present(condition: str, seconds: float, photo: str) -> Maker:
    def make(rng: np.random.Generator) -> dict[str, Any]:
        return {"player": _player(rng, photo, **hard_negatives(rng, seconds, rng.uniform(4, 20))),
                **_camera(rng, condition, seconds)}  # fmt: skip

    return make


def leaves(first: float, absences: Sequence[float], photo: str) -> Maker:
    return lambda rng: _leaving(rng, photo, first, absences)


def second(kind: str, photo: str, other: str, enters: Sequence[float], stay: float) -> Maker:
    def make(rng: np.random.Generator) -> dict[str, Any]:
        player = _player(rng, photo)
        if kind == "passing":  # one or more passes, each 3-5 s in view
            passer = _second(rng, other, kind, player, enters[0], enters[0] + rng.uniform(3, 5))
            crossings = tuple((t, t + rng.uniform(3, 5)) for t in enters)
            return {"player": player, "second": replace(passer, crossings=crossings)}
        enter = enters[0]
        return {"player": player, "second": _second(rng, other, kind, player, enter, enter + stay)}

    return make


def covered(photo: str, start: float, length: float) -> Maker:
    return lambda rng: {"player": _player(rng, photo), "cover": (start + rng.uniform(0, 5), start + length)}


def frozen(photo: str, start: float, length: float) -> Maker:
    return lambda rng: {"player": _player(rng, photo), "freeze": (start + rng.uniform(0, 5), start + length)}


def effect(kind: str, photo: str, still: str, start: float, seconds: float, lights: bool) -> Maker:
    def make(rng: np.random.Generator) -> dict[str, Any]:
        events = hard_negatives(rng, seconds, rng.uniform(8, 30), (15, 30), ("turn", "lean", "mug"))
        values: dict[str, Any] = {
            "player": _player(rng, photo, **events), "effect": kind,
            "effect_from": start + (rng.uniform(0, 8) if start else 0.0), "effect_image": still,
            "blur_sigma": rng.uniform(8, 16), "halo": rng.uniform(2, 6), "feather": rng.uniform(1.5, 4),
        }  # fmt: skip
        if lights:
            values.update(_camera(rng, "lights", seconds))
        return values

    return make


def _quick_set(add: Callable[..., None]) -> None:
    add("present", 60, "home", present("lights", 60, "biden"))
    add("present", 60, "box", present("dim", 60, "obama"))
    add("leaves", 45, "building", leaves(14, (12.0,), "obama2"))
    add("second-passing", 40, "cup", second("passing", "astronaut", "biden", (16.0,), 0))
    add("second-body", 40, "home", second("body", "obama", "obama3", (15.0,), 1e9))
    add("covered", 35, "vtest", covered("biden", 15, 12))
    add("frozen", 40, "building", frozen("obama2", 12, 20))
    add("virtual-mid", 50, "box", effect("virtual", "astronaut", "coffee", 20, 50, False))
    add("blurred-start", 40, "home", effect("blurred", "obama", "", 0, 40, False))
    add("virtual-start", 45, "home", effect("virtual", "obama", "chelsea", 0, 45, False), live=True)
    add("leaves", 45, "box", leaves(12, (12.0,), "biden"), live=True)


def _live_set(add: Callable[..., None]) -> None:
    """18 minutes of clips, streamed in real time, half of them while the CPU hog runs."""
    for i in range(4):
        add("present", 100, ROOMS[i], present(CONDITIONS[i], 100, PLAYERS[i]), live=True)
    add("leaves", 60, "cup", leaves(12, (12.0,), "astronaut"), live=True)
    add("leaves", 60, "vtest", leaves(16, (25.0,), "obama"), live=True)
    add("second-behind", 50, "home", second("behind", "biden", "obama2", (15.0,), 1e9), live=True)
    add("second-passing", 50, "building", second("passing", "obama2", "biden", (14.0, 34.0), 0), live=True)
    add("second-body", 50, "box", second("body", "astronaut", "obama3", (16.0,), 20), live=True)
    add("covered", 45, "cup", covered("obama", 15, 14), live=True)
    add("frozen", 50, "home", frozen("biden", 6, 22), live=True)
    add("frozen", 50, "vtest", frozen("obama2", 20, 22), live=True)
    add("virtual-start", 70, "home", effect("virtual", "astronaut", "coffee", 0, 70, False), live=True)
    add("virtual-mid", 70, "box", effect("virtual", "obama", "building", 25, 70, True), live=True)
    add("blurred-start", 70, "building", effect("blurred", "biden", "", 0, 70, True), live=True)
    add("blurred-mid", 70, "cup", effect("blurred", "obama2", "", 25, 70, False), live=True)


def _offline_set(add: Callable[..., None]) -> None:
    """3 hours of hard negatives in 6-minute streams, then the positives."""
    for i in range(30):
        add("present", 360, ROOMS[i % 5], present(CONDITIONS[(i + i // 5) % 5], 360, PLAYERS[i % 4]))
    for i, gone_s in enumerate(ABSENCES):
        absences = (gone_s, float(10 + i % 5)) if i % 3 == 0 else (gone_s,)
        first = (12.0, 18.0, 26.0)[i % 3]
        add("leaves", leaving_seconds(first, absences), ROOMS[(i + 2) % 5],
            leaves(first, absences, PLAYERS[(i + 1) % 4]))  # fmt: skip
    kinds = ("behind",) * 5 + ("far",) * 3 + ("partial",) * 4 + ("body",) * 4 + ("passing",) * 6
    for i, kind in enumerate(kinds):
        photo, room = PLAYERS[i % 4], ROOMS[(i + 1) % 5]
        others = {"far": "obama3", "partial": PARTIAL[i % 2], "body": ("obama3", "biden", "obama2")[i % 3]}
        other = others.get(kind, PLAYERS[(i + 1) % 4])
        if kind == "partial":
            photo = ("biden", "obama2", "astronaut")[i % 3]
        enters = (14.0 + i % 5, 40.0 + i % 3) if kind == "passing" else (12.0 + 2 * (i % 4),)
        seconds = 60.0 if kind == "passing" else 50.0
        stay = 20.0 if i % 2 else 1e9
        add(f"second-{kind}", seconds, room, second(kind, photo, other, enters, stay))
    for i in range(6):
        add("covered", 50, ROOMS[(i + 1) % 5], covered(PLAYERS[(i + 2) % 4], 12 + 2 * i, 16),
            cover_kind=("black", "hand")[i % 2])  # fmt: skip
    for i in range(6):
        add("frozen", 55, ROOMS[(i + 3) % 5], frozen(PLAYERS[(i + 3) % 4], (6, 14, 22)[i % 3], 25))
    for i in range(6):
        add("virtual-start", 80, ROOMS[i % 5], effect("virtual", PLAYERS[i % 4], STILLS[i % 5], 0, 80, i % 2 == 1))
        still = STILLS[(i + 2) % 5]
        add("virtual-mid", 100, ROOMS[(i + 2) % 5],
            effect("virtual", PLAYERS[(i + 1) % 4], still, 30 + 5 * (i % 3), 100, i % 2 == 0))  # fmt: skip
    for i in range(5):
        add("blurred-start", 80, ROOMS[(i + 1) % 5], effect("blurred", PLAYERS[(i + 2) % 4], "", 0, 80, i % 2 == 0))
        add("blurred-mid", 100, ROOMS[(i + 3) % 5],
            effect("blurred", PLAYERS[(i + 3) % 4], "", 30 + 5 * (i % 3), 100, i % 2 == 1))  # fmt: skip


BROWSER_FPS: Final = 5.0
BROWSER_BITRATE: Final = 300_000
"""What the player's page sends (dashboard/player.html: 5 frames a second, maxBitrate 300 kbit/s)."""


def browser_scenarios() -> list[ClipSpec]:
    """The browser part (``benchmarks/browser.py``): 12 minutes of clips that Debian's Chromium plays through a fake
    camera on the player's own page into the service, at what the page sends; their own seeds (from 2000)."""
    build = SetBuilder(first_seed=2000, prefix="browser-")

    def add(scenario: str, seconds: float, background: str, make: Maker) -> None:
        build.add(scenario, seconds, background, make, fps=BROWSER_FPS, bitrate=BROWSER_BITRATE)

    add("present", 120, "home", present("lights", 120, "biden"))
    add("present", 120, "vtest", present("dim", 120, "obama"))
    add("leaves", 50, "building", leaves(14, (12.0,), "obama2"))
    add("second-passing", 45, "box", second("passing", "astronaut", "biden", (16.0,), 0))
    add("second-behind", 40, "home", second("behind", "obama", "obama2", (15.0,), 1e9))
    add("covered", 40, "cup", covered("biden", 15, 12))
    add("frozen", 40, "building", frozen("obama2", 12, 20))
    add("virtual-start", 50, "home", effect("virtual", "astronaut", "coffee", 0, 50, True))
    add("virtual-mid", 70, "box", effect("virtual", "obama", "building", 25, 70, False))
    add("blurred-start", 45, "building", effect("blurred", "biden", "", 0, 45, False))
    add("blurred-mid", 60, "vtest", effect("blurred", "obama2", "", 25, 60, True))
    return build.specs


def scenarios(quick: bool = False, drift: float = DRIFT) -> list[ClipSpec]:
    """The evaluation set (live and offline clips).  Every clip's random choices come from its own seed."""
    build = SetBuilder(drift)
    if quick:
        _quick_set(build.add)
    else:
        _live_set(build.add)
        _offline_set(build.add)
    return build.specs
