"""Evaluate the camera checks (36.4) on labelled clips made to look like real play: composed from registry media,
streamed live over WebRTC into the service's ingest, and encoded offline through the same VP8 encoder.

Usage: python benchmarks/detectors.py [--quick] [--live | --no-live] [--cpu-hog N] [--streams N] [--jobs N]
       [--detector auto|haar] [--models DIR] [--cache DIR] [--drift 0.15] [--verbose]
       python benchmarks/detectors.py --side [--quick] [--verbose]   (the side camera's set instead)

The media (public-domain portraits from the face_recognition sdist, scikit-image's sample images, real indoor videos
and photos from Debian's opencv-doc) are fetched and hash-checked by ``benchmarks/media.py`` into its cache; the
clips are composed from them by ``benchmarks/composition.py`` following ``benchmarks/evalset.py`` (every random choice
seeded: each run composes the same frames).  Every clip is 640x480 and starts at its stream's start (encoder
warm-up included), at the player page's 5 fps (caps of 120-300 kbit/s) or at 15 fps (300-800 kbit/s).

* live (``benchmarks/live.py``, 16 clips, 18 minutes; ``--no-live`` skips it): streamed in real time, 4 at a time,
  by an aiortc sender process into ``video.ingest.Ingest`` built as ``proctor/camera.py`` builds it; half of them
  while ``--cpu-hog`` busy processes run (2 by default; 0: none);
* offline (100 clips, 4.3 hours, of which 3 hours are hard negatives in 6-minute streams): aiortc's VP8 encoder
  (capped, its target following an aiortc receiver's estimates as live) and decoder, faster than real time in a
  process pool (one OpenCV thread per worker); the frames the ingest would analyse (picked as it picks them: 2 a
  second) go through ``video.analysis.FrameAnalyser`` (:func:`make_analyser`).

Scenarios: hard negatives (head turned 45-70° for 3-8 s, looking down at the board for 10-25 s with only the top of
the head in the picture, leaning half out of the frame for under 3 s, drinking, a hand over the mouth; dim light,
a saturated window behind, the room light dropping by 30 % over 1 s); the player leaving (absences of 8.5-60 s,
among them 12 of 10-14 s); a second person (standing behind, far behind, passing behind the player's head in
3-5 s, half a face at the frame's edge, a body without a visible face); the lens covered; the camera frozen (the
source frame repeated bit-identical, then encoded); a static virtual background and an app-style blurred background
(sigma 8-16 px), each from the stream's start or switched on mid-stream, with a soft, wandering edge and the person
following the camera's exposure while the replacement picture does not.

Scoring (``benchmarks/evalset.py``): recall, recall within the latency target and latency, all counted from the
event's start (the player gone, the second person in view, the freeze, the lens covered, the effect on); false
alarms per negative player-hour with the exact 95 % Poisson upper bound; a line for every check together.  Targets:
left area 1.00 within 8 s; another person 0.95 within 5 s; virtual and blurred background 0.9 within 15 s (20 s
when on from the stream's start) and at most 0.1 false alarms an hour each; frozen 1.00 within 10 s; covered 1.00
within 5 s; at most 0.5 false alarms an hour over every check together.  A check missing from ``video.checks.Check``
is reported as not scored.

The side camera (``--side``, issue 15): ``benchmarks/side_camera.py``'s composed clips of a phone beside the player
(moved, turned away, covered, frozen, and hard negatives), offline through the same encoder, analysed as the ingest
analyses a side camera (:func:`run_side`); 10 minutes on 2 cores.

Run time on 2 cores: the full run about 30 minutes (measured 28: live 5-6, offline 23, while other tests shared the
machine), ``--quick`` (11 short clips, 2 of them live) about 3 minutes.  Nothing here is a test;
``tests/video/test_evalset.py`` tests the scoring and the labels.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import inspect
import logging
import math
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import aiortc
import av
import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run by hand from anywhere, without installing

from benchmarks.composition import Composer, Cutout, make_cutouts
from benchmarks.evalset import (
    ALL,
    ANALYSIS_RATE,
    CHECKS,
    DRIFT,
    DRIFT_PERIOD_S,
    LATENCY_TARGETS,
    TARGETS,
    CheckScore,
    ClipLabels,
    ClipSpec,
    Raised,
    Target,
    analysed_indices,
    labels_for,
    scenarios,
    score,
    score_all,
    sender_bitrate,
)
from benchmarks.live import LiveOutcome, exit_with_parent, run_live
from benchmarks.media import MediaError, default_cache, ensure_media
from benchmarks.observations import save_observations
from benchmarks.side_camera import (
    APPROVE_AT,
    SIDE_CHECKS,
    SIDE_TARGETS,
    SIDE_WITHIN,
    SideComposer,
    SideSpec,
    side_labels,
    side_set,
)
from benchmarks.vp8 import CLOCK, Vp8Link
from video.analysis import FrameAnalyser
from video.checks import Box, Check, FaceDetector, Frame, Monitor, Observation, Thresholds
from video.conversion import at_analysis_size, camera_picture, picture
from video.detectors import HaarFaces, available_detector
from video.devices import DEVICE_CHECKS, Device, DeviceThresholds, device_monitor
from video.errors import VideoError
from video.reference_view import ReferenceView, ViewWatch, compare_view

ROOT = Path(__file__).resolve().parent.parent
WARM_UP_S = 15.0
"""A live VP8 stream's encoder warm-up lasts about this long."""

# --------------------------------------------------------------------------------------------------------------------
# The models and the analyser


class TimedDetector:
    """Wraps the face detector to measure it (process CPU time and wall time per call)."""

    def __init__(self, inner: FaceDetector) -> None:
        self.inner = inner
        self.name = inner.name
        self.cpu = self.wall = 0.0
        self.calls = 0

    def detect(self, frame: Frame) -> list[Box]:
        cpu, wall = time.process_time(), time.perf_counter()
        boxes = self.inner.detect(frame)
        self.cpu += time.process_time() - cpu
        self.wall += time.perf_counter() - wall
        self.calls += 1
        return boxes


class TimedSegmenter:
    """Wraps the person segmenter likewise."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = str(inner.name)
        self.wall = 0.0
        self.calls = 0

    def segment(self, frame: Frame) -> Any:
        wall = time.perf_counter()
        mask = self.inner.segment(frame)
        self.wall += time.perf_counter() - wall
        self.calls += 1
        return mask


def load_models(choice: str, models: Path) -> tuple[FaceDetector | None, Any, str]:
    """The face detector and the person segmenter the service would use (or the Haar cascade on request), and a
    note saying which."""
    if choice == "haar":
        try:
            faces: FaceDetector | None = HaarFaces()
            faces_note = "faces: OpenCV Haar cascade, frontal only (--detector haar)"
        except (VideoError, cv2.error) as error:
            faces, faces_note = None, f"faces: off ({error})"
    else:
        faces, faces_note = available_detector(models)
    try:
        from video.segmentation import available_segmenter  # noqa: PLC0415 (newer checkouts only)
    except ImportError:
        return faces, None, f"{faces_note}; people: none (no video.segmentation in this checkout)"
    people, people_note = available_segmenter(models)
    return faces, people, f"{faces_note}; {people_note}"


def make_analyser(faces: FaceDetector | None, people: Any = None, monitor: Monitor | None = None) -> FrameAnalyser:
    """The one place the benchmark builds the service's analyser: a fresh monitor with the default thresholds (or
    ``monitor``: a device's, as the ingest makes it), the face detector, and the person segmenter where this
    checkout's ``FrameAnalyser`` takes one."""
    extra: dict[str, Any] = {}
    if people is not None and "people" in inspect.signature(FrameAnalyser).parameters:
        extra["people"] = people
    return FrameAnalyser(monitor or Monitor(Thresholds()), faces, **extra)


# --------------------------------------------------------------------------------------------------------------------
# The offline part (in worker processes)


@dataclass
class ClipResult:
    spec: ClipSpec
    raised: list[Raised]
    analysed: int
    kbit_s: float
    wall: float = 0.0
    detector_cpu: float = 0.0
    detector_calls: int = 0
    segmenter_wall: float = 0.0
    segmenter_calls: int = 0
    analyse_wall: float = 0.0
    """Wall time in ``FrameAnalyser`` (all analysed frames)."""
    resets: int = 0
    warm_up: tuple[float, int, float, int] = (0.0, 0, 0.0, 0)
    """The background's change per analysed frame (grey levels) summed, and counted, in the first WARM_UP_S of the
    stream and after it."""
    counts: list[tuple[int, int]] = field(default_factory=list)
    """(true faces, faces found) on the analysed frames the detector ran on, where the truth is clear."""
    live: LiveOutcome | None = None


_WORKER: dict[str, Any] = {}
"""A worker process's models and media, set once by :func:`_start_worker`."""


def _start_worker(choice: str, models: Path, cutouts: dict[str, Cutout], paths: dict[str, Path],
                  observations: Path | None = None, low: bool = False) -> None:  # fmt: skip
    exit_with_parent()
    cv2.setNumThreads(1)
    faces, people, note = load_models(choice, models)
    _WORKER.update(faces=faces, people=people, note=note, cutouts=cutouts, paths=paths, observations=observations,
                   low=low)  # fmt: skip


LOW_SIZE = (320, 240)
LOW_SHARE = 3
"""``--low``: the distributed mode's low simulcast layer, as the player's page sends it (dashboard/js/publish.js):
half the size, a third of the bitrate."""


def run_offline(spec: ClipSpec) -> ClipResult:
    """Compose, encode, decode and analyse one clip, as fast as it goes."""
    started = time.perf_counter()
    faces = TimedDetector(_WORKER["faces"]) if _WORKER["faces"] is not None else None
    people = TimedSegmenter(_WORKER["people"]) if _WORKER["people"] is not None else None
    analyser = make_analyser(faces, people)
    composer = Composer(spec, _WORKER["cutouts"], _WORKER["paths"])
    low = bool(_WORKER.get("low"))
    share = LOW_SHARE if low else 1
    link = Vp8Link(spec.bitrate // share)
    wanted = set(analysed_indices(spec.seconds, spec.fps))
    truths: dict[int, int | None] = {}
    raised: list[Raised] = []
    counts: list[tuple[int, int]] = []
    analyse_wall = 0.0
    warm_up = [0.0, 0, 0.0, 0]
    kept: list[Observation] = []
    for index, (t, composed, truth) in enumerate(composer.frames()):
        truths[index] = truth
        image = np.asarray(cv2.resize(composed, LOW_SIZE, interpolation=cv2.INTER_AREA), np.uint8) if low else composed
        for decoded in link.send(image, t, sender_bitrate(t, spec.bitrate, spec.fps) // share):
            at = decoded.pts / CLOCK if decoded.pts is not None else t
            number = round(at * spec.fps)
            if number not in wanted:
                continue
            calls = faces.calls if faces is not None else 0
            begun = time.perf_counter()
            observation = analyser.observe(at_analysis_size(picture(decoded)), at)
            findings = analyser.judge(observation)
            analyse_wall += time.perf_counter() - begun
            kept.append(observation)
            raised += [Raised(f.check.name, at) for f in findings if f.ended is None]
            change = getattr(observation, "background_change", None)  # a diagnostic: absent in other checkouts
            if change is not None:
                slot = 0 if at < WARM_UP_S else 2
                warm_up[slot] += change
                warm_up[slot + 1] += 1
            known = truths.pop(number, None)
            if faces is not None and faces.calls > calls and known is not None:
                counts.append((known, len(observation.faces)))
    folder = _WORKER.get("observations")
    if folder is not None:  # for benchmarks/replay.py: the temporal rules replayed without the pictures
        save_observations(folder, spec, kept)
    return ClipResult(spec, raised, len(wanted), link.bytes * 8 / spec.seconds / 1000, time.perf_counter() - started,
                      faces.cpu if faces else 0.0, faces.calls if faces else 0, people.wall if people else 0.0,
                      people.calls if people else 0, analyse_wall, link.resets,
                      (warm_up[0], int(warm_up[1]), warm_up[2], int(warm_up[3])), counts)  # fmt: skip


def run_side(spec: SideSpec) -> SideResult:
    """Compose, encode, decode and analyse one side-camera clip as the service analyses a side camera
    (``video.ingest.StreamSession._analyse``): every analysed frame through the camera checks the side camera raises
    (``video.devices.DEVICE_CHECKS``), and, once the arbiter approved its view (the decoded picture at
    :data:`benchmarks.side_camera.APPROVE_AT`), compared with that view every ``view_interval_s``
    (``StreamSession._due_view`` and ``_judge_view``) under the ``camera-moved`` rule
    (``video.reference_view.ViewWatch``)."""
    started = time.perf_counter()
    enabled = DEVICE_CHECKS[Device.SIDE]
    analyser = make_analyser(_WORKER["faces"], _WORKER["people"], device_monitor(Thresholds(), enabled, Device.SIDE))
    limits = DeviceThresholds()
    watch = ViewWatch(limits.camera_moved_s, Thresholds().clear_s)
    reference: ReferenceView | None = None
    viewed_at = -math.inf
    compare_cpu, compared = 0.0, 0
    link = Vp8Link(spec.bitrate)
    wanted = set(analysed_indices(spec.seconds, spec.fps))
    raised: list[Raised] = []
    for t, composed in SideComposer(spec, _WORKER["cutouts"], _WORKER["paths"]).frames():
        for decoded in link.send(composed, t, sender_bitrate(t, spec.bitrate, spec.fps)):
            at = decoded.pts / CLOCK if decoded.pts is not None else t
            if round(at * spec.fps) not in wanted:
                continue
            image = camera_picture(decoded)
            findings = analyser.judge(analyser.observe(image, at))
            if reference is None and at >= APPROVE_AT:
                reference = ReferenceView.of(image)
            elif reference is not None and at - viewed_at >= limits.view_interval_s:
                viewed_at = at
                begun = time.process_time()
                comparison = compare_view(reference, image)
                compare_cpu += time.process_time() - begun
                compared += 1
                findings += [f for f in watch.feed(at, comparison) if f.check in enabled]
            raised += [Raised(f.check.name, at) for f in findings if f.ended is None]
    return SideResult(spec, raised, link.bytes * 8 / spec.seconds / 1000, time.perf_counter() - started,
                      compare_cpu, compared)  # fmt: skip


@dataclass
class SideResult:
    spec: SideSpec
    raised: list[Raised]
    kbit_s: float
    wall: float
    compare_cpu: float
    compared: int


def _run_in_worker(spec: ClipSpec) -> tuple[ClipResult, str]:
    return run_offline(spec), str(_WORKER["note"])


def _side_in_worker(spec: SideSpec) -> tuple[SideResult, str]:
    return run_side(spec), str(_WORKER["note"])


# --------------------------------------------------------------------------------------------------------------------
# Report


def fmt(value: float, spec: str) -> str:
    return "-" if math.isnan(value) else format(value, spec)


def scored_checks() -> list[str]:
    """The set's checks that ``video.checks.Check`` has (the others are not scored)."""
    return [name for name in CHECKS if name in Check.__members__]


def latency_target(name: str) -> str:
    mid, from_start = LATENCY_TARGETS[name]
    return f"{mid:g} s" if mid == from_start else f"{mid:g}/{from_start:g} s"


def row(label: str, result: CheckScore, target: Target, latency: str) -> tuple[str, bool]:
    met = target.met(result)
    verdict = "met" if met else "NOT MET"
    if met and not target.shown(result):
        verdict += "*"
    fa = f"{fmt(result.false_per_hour, '.2f')} (≤{fmt(result.false_upper, '.2f')})"
    line = (f"{label:<20} {result.episodes:>4} {fmt(result.recall, '.2f'):>6} {fmt(result.recall_within, '.2f'):>6} "
            f"{latency:>7} {fmt(result.median_latency, '.1f'):>5} {fmt(result.max_latency, '.1f'):>5} "
            f"{result.false_alarms:>4} {result.negative_hours:>5.2f} {fa:>14}  {target.describe():<22} "
            f"{verdict}")  # fmt: skip
    return line, met


def table(title: str, labelled: Sequence[tuple[ClipLabels, Sequence[Raised]]], notes: list[str] | None = None,
          names: Sequence[str] = CHECKS, targets: dict[str, Target] = TARGETS,
          latency: Callable[[str], str] = latency_target) -> tuple[int, int]:  # fmt: skip
    """Print one table of the checks ``names`` (each against its target in ``targets``, the line for all of them
    against ``targets[ALL]``); (targets met, targets judged)."""
    checks = [name for name in names if name in Check.__members__]
    print(f"\n{title}")
    print(f"{'check':<20} {'eps':>4} {'recall':>6} {'in tgt':>6} {'target':>7} {'lat50':>5} {'lat max':>5} "
          f"{'FA':>4} {'neg h':>5} {'FA/h (95% ≤)':>14}  {'target':<22} result")  # fmt: skip
    met = judged = 0
    for name in names:
        member = Check.__members__.get(name)
        label = member.value if member is not None else name.lower().replace("_", "-")
        if member is None:
            print(f"{label:<20} not scored: no Check.{name} in video.checks")
            continue
        result = score(name, labelled)
        line, ok = row(label, result, targets[name], latency(name))
        print(line)
        met, judged = met + ok, judged + 1
        if notes is not None:
            if result.missed:
                notes.append(f"{label}: missed in {', '.join(result.missed)}")
            if result.late:
                notes.append(f"{label}: beyond its latency target in {', '.join(result.late)}")
            if result.false_in:
                notes.append(f"{label}: false alarms in {', '.join(result.false_in)}")
    together = score_all(checks, labelled)
    line, ok = row("all checks", together, targets[ALL], "")
    print(line)
    return met + ok, judged + 1


def report(results: list[ClipResult], quick: bool) -> tuple[int, int]:
    labelled = [(labels_for(r.spec), r.raised) for r in results]
    print("\n(eps = labelled episodes; in tgt = recall within the latency target; latencies in seconds from the "
          "event's start;\n neg h = hours scored as negatives; FA/h with its exact 95 % Poisson upper bound; "
          "met* = the point estimate meets\n the false-alarm target but the set has too few negative hours to show "
          "it at the upper bound)")  # fmt: skip
    notes: list[str] = []
    met, judged = table("All clips", labelled, notes)
    pairs = list(zip(labelled, results, strict=True))
    parts = [("Offline", [x for x, r in pairs if r.live is None]),
             ("Live, no CPU hog", [x for x, r in pairs if r.live and not r.spec.hog]),
             ("Live, with the CPU hog", [x for x, r in pairs if r.live and r.spec.hog])]  # fmt: skip
    for title, part in parts:
        if part:
            table(title, part)
    if notes:
        print()
        for note in notes:
            print("  " + note)
    counts = [(r.spec.scenario, c) for r in results for c in r.counts]
    if counts:
        print("\nFace detector on the offline frames it ran on, where the truth is clear (exact / too few / too many):")
        by_scenario: dict[str, list[tuple[int, int]]] = {}
        for scenario, count in counts:
            by_scenario.setdefault(scenario, []).append(count)
        for scenario, items in sorted(by_scenario.items()):
            total = len(items)
            exact = sum(t == f for t, f in items) / total
            few = sum(f < t for t, f in items) / total
            print(f"  {scenario:<16} {total:>6} frames  {exact:6.1%} {few:6.1%} {1 - exact - few:6.1%}")
    if quick:
        print("\n(--quick: one clip per scenario, minutes of negatives: the figures say little)")
    return met, judged


def describe_set(specs: Sequence[ClipSpec], live: bool, hog: int, streams: int) -> None:
    offline = [s for s in specs if not s.live]
    online = [s for s in specs if s.live] if live else []
    hours = sum(s.seconds for s in offline) / 3600
    by_fps = {fps: sum(s.seconds for s in offline if s.fps == fps) / 3600 for fps in sorted({s.fps for s in specs})}
    caps = sorted({s.bitrate // 1000 for s in specs})
    negatives = score_all(scored_checks(), [(labels_for(s), []) for s in offline + online]).negative_hours
    print(f"The set: {len(offline) + len(online)} clips; offline {len(offline)} clips, {hours:.2f} h "
          f"({', '.join(f'{fps:g} fps {h:.2f} h' for fps, h in by_fps.items())}); "
          + (f"live {len(online)} clips, {sum(s.seconds for s in online) / 60:.1f} min, {streams} at a time, "
             + (f"{sum(s.hog for s in online)} of them with a CPU hog of {hog} busy processes; " if hog else
                "no CPU hog; ")
             if online else "live: skipped; ")
          + f"{negatives:.2f} player-hours negative for every check")  # fmt: skip
    print(f"Streams: 640x480, 5 or 15 fps, caps {'/'.join(str(c) for c in caps)} kbit/s; lighting drift "
          f"±{specs[0].drift:.0%} over {DRIFT_PERIOD_S:g} s; sensor noise 2-4 grey levels (6-10 when dim)")  # fmt: skip


def describe_rates(results: list[ClipResult], notes: set[str]) -> None:
    print(f"models: {'; '.join(sorted(notes))}")
    offline = [r for r in results if r.live is None]
    if offline:
        analysed = sum(r.analysed for r in offline)
        rates = []
        for fps in sorted({r.spec.fps for r in offline}):
            frames = sum(r.analysed for r in offline if r.spec.fps == fps)
            rates.append(f"{frames / sum(r.spec.seconds for r in offline if r.spec.fps == fps):.2f}/s at {fps:g} fps")
        analysis_ms = sum(r.analyse_wall for r in offline) / analysed * 1000
        line = (f"offline: analysed {', '.join(rates)} (as the ingest picks them at {ANALYSIS_RATE:g}/s); "
                f"{analysis_ms:.1f} ms per analysed frame in FrameAnalyser")  # fmt: skip
        calls = sum(r.detector_calls for r in offline)
        if calls:
            cpu_ms = sum(r.detector_cpu for r in offline) / calls * 1000
            line += f"; faces on {calls / analysed:.0%} of them ({cpu_ms:.1f} ms CPU each)"
        segments = sum(r.segmenter_calls for r in offline)
        if segments:
            wall_ms = sum(r.segmenter_wall for r in offline) / segments * 1000
            line += f", people on {segments / analysed:.0%} ({wall_ms:.1f} ms each)"
        print(line)
        caps = sorted({r.spec.bitrate for r in offline})
        sent = ", ".join(f"{cap // 1000}: {statistics.fmean(r.kbit_s for r in offline if r.spec.bitrate == cap):.0f}"
                         for cap in caps)  # fmt: skip
        resets = statistics.fmean(r.resets for r in offline)
        print(f"offline VP8: kbit/s sent by cap {sent}; the encoder made anew {resets:.1f} times per stream on "
              f"average (aiortc's reaction to a >10 % target change)")  # fmt: skip
    live = [r.live for r in results if r.live is not None]
    for hogged in (False, True):
        part = [o for o in live if o.spec.hog == hogged]
        if not part:
            continue
        rates_live = [o.analysed / o.spec.seconds for o in part]
        received = sum(o.received for o in part) / max(1, sum(o.frames_sent for o in part))
        late_ms = max(o.late_max for o in part) * 1000
        print(f"live{', CPU hog' if hogged else ''}: analysed {statistics.fmean(rates_live):.2f}/s per stream "
              f"(lowest {min(rates_live):.2f}); frames received {received:.0%} of sent; sender at most "
              f"{late_ms:.0f} ms late; camera-lost findings {sum(o.lost for o in part)}")  # fmt: skip
    warm = []
    for title, part_results in (("offline", offline), ("live", [r for r in results if r.live is not None])):
        still = [(r.live.warm_up if r.live else r.warm_up) for r in part_results if r.spec.scenario == "present"]
        if still and sum(w[1] for w in still) and sum(w[3] for w in still):
            early = sum(w[0] for w in still) / sum(w[1] for w in still)
            late = sum(w[2] for w in still) / sum(w[3] for w in still)
            warm.append(f"{title} {early:.2f} then {late:.2f}")
    if warm:
        print(f"encoder warm-up, the background's change per analysed frame in the first {WARM_UP_S:g} s of a "
              f"negative stream then after (grey levels): {'; '.join(warm)}")  # fmt: skip
    ratios = [bitrate / sender_bitrate(at, o.spec.bitrate, o.spec.fps) for o in live for at, bitrate in o.bitrates]
    if ratios:
        low, middle, high = np.percentile(ratios, [10, 50, 90])
        print(f"live senders' targets against the offline model of them: median {middle:.2f} (10-90 %: "
              f"{low:.2f}-{high:.2f})")  # fmt: skip


def live_part(args: argparse.Namespace, specs: list[ClipSpec], hog: int, cutouts: dict[str, Cutout],
              paths: dict[str, Path], notes: set[str]) -> list[ClipResult]:  # fmt: skip
    faces, people, note = load_models(args.detector, args.models)
    notes.add(note)
    print(f"\nlive: {len(specs)} clips, {sum(s.seconds for s in specs) / 60:.1f} min, {args.streams} at a time ...",
          flush=True)  # fmt: skip
    begun = time.monotonic()
    log = print if args.verbose else (lambda line: None)
    outcomes, live_notes = asyncio.run(run_live(specs, faces, people, cutouts, paths, args.streams, hog, log))
    print(f"live: done in {time.monotonic() - begun:.0f} s; {'; '.join(live_notes)}", flush=True)
    if len(outcomes) < len(specs):
        print(f"live: {len(specs) - len(outcomes)} clip(s) failed to stream (not scored)")
    return [ClipResult(o.spec, o.raised, o.analysed, o.bytes_sent * 8 / o.spec.seconds / 1000, live=o)
            for o in outcomes]  # fmt: skip


def offline_part(args: argparse.Namespace, specs: list[ClipSpec], cutouts: dict[str, Cutout], paths: dict[str, Path],
                 notes: set[str]) -> list[ClipResult]:  # fmt: skip
    print(f"\noffline: {len(specs)} clips, {sum(s.seconds for s in specs) / 3600:.2f} h ...", flush=True)
    begun = time.monotonic()
    setup = (args.detector, args.models, cutouts, paths, args.observations, args.low)
    results: list[ClipResult] = pooled(args, setup, _run_in_worker, specs, notes)
    print(f"offline: done in {time.monotonic() - begun:.0f} s")
    return results


def pooled(args: argparse.Namespace, setup: tuple[Any, ...], work: Callable[[Any], tuple[Any, str]],
           specs: Sequence[Any], notes: set[str]) -> list[Any]:  # fmt: skip
    """Each clip through ``work`` in a pool of worker processes (set up with ``setup``), the dearest first so that
    the pool ends together: a line per clip with ``--verbose``, else the progress every tenth."""
    ordered = sorted(specs, key=lambda s: -s.seconds * s.fps)
    begun = time.monotonic()
    results: list[Any] = []
    with ProcessPoolExecutor(args.jobs, mp_context=get_context("spawn"), initializer=_start_worker,
                             initargs=setup) as pool:  # fmt: skip
        futures = [pool.submit(work, spec) for spec in ordered]
        for done, future in enumerate(as_completed(futures), 1):
            result, note = future.result()
            results.append(result)
            notes.add(note)
            if args.verbose:
                found = ", ".join(f"{r.check.lower()}@{r.at:.1f}" for r in result.raised) or "nothing"
                print(f"  {result.spec.name:<34} {result.spec.stream:<17} {result.wall:5.1f} s  raised: {found}",
                      flush=True)  # fmt: skip
            elif done % max(1, len(ordered) // 10) == 0:
                print(f"  {done}/{len(ordered)} clips, {time.monotonic() - begun:.0f} s", flush=True)
    return results


def side_part(args: argparse.Namespace, cutouts: dict[str, Cutout], paths: dict[str, Path], notes: set[str]
              ) -> tuple[int, int]:  # fmt: skip
    """The side camera's set (``--side``): composed, encoded and analysed offline; its table."""
    specs = side_set(args.quick)
    if args.only:
        specs = [s for s in specs if any(part in s.name for part in args.only.split(",") if part)]
    hours = sum(s.seconds for s in specs) / 3600
    negatives = score_all(SIDE_CHECKS, [(side_labels(s), []) for s in specs]).negative_hours
    print(
        f"\nside camera: {len(specs)} clips, {hours:.2f} h ({negatives:.2f} player-hours negative for every check); "
        f"caps {'/'.join(sorted({str(s.bitrate // 1000) for s in specs}, key=int))} kbit/s ...",
        flush=True,
    )
    begun = time.monotonic()
    setup = (args.detector, args.models, cutouts, paths, None, False)
    results: list[SideResult] = pooled(args, setup, _side_in_worker, specs, notes)
    results.sort(key=lambda r: r.spec.name)
    compared = sum(r.compared for r in results)
    print(f"side camera: done in {time.monotonic() - begun:.0f} s; {compared} comparisons with the approved view, "
          f"{sum(r.compare_cpu for r in results) / max(1, compared) * 1000:.1f} ms of CPU each")  # fmt: skip
    labelled = [(side_labels(r.spec), r.raised) for r in results]
    side_notes: list[str] = []
    targets = {**SIDE_TARGETS, ALL: TARGETS[ALL]}
    met, judged = table("Side camera", labelled, side_notes, SIDE_CHECKS, targets,
                        lambda name: f"{SIDE_WITHIN[name]:g} s" if name in SIDE_WITHIN else "-")  # fmt: skip
    kinds = sorted({m.kind for r in results for m in r.spec.moves})
    by_kind = []
    for kind in kinds:
        part = [x for x, r in zip(labelled, results, strict=True) if any(m.kind == kind for m in r.spec.moves)]
        moved = score(SIDE_CHECKS[0], part)
        by_kind.append(f"{kind} {moved.within}/{moved.episodes}")
    print(f"camera-moved within target by move: {', '.join(by_kind)}")
    for note in side_notes:
        print("  " + note)
    return met, judged


def side_only(args: argparse.Namespace, cutouts: dict[str, Cutout], paths: dict[str, Path], started: float) -> None:
    print(f"Python {platform.python_version()}, {os.cpu_count()} CPUs, OpenCV {cv2.__version__}, "
          f"PyAV {av.__version__}; {args.jobs} worker(s)")  # fmt: skip
    notes: set[str] = set()
    met, judged = side_part(args, cutouts, paths, notes)
    print(f"models: {'; '.join(sorted(notes))}")
    print(f"\ntargets met: {met} of {judged}; elapsed {time.monotonic() - started:.0f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="one short clip per scenario (about 2 minutes)")
    parser.add_argument("--live", action=argparse.BooleanOptionalAction, default=True,
                        help="stream the live part over WebRTC into the ingest (real time)")  # fmt: skip
    parser.add_argument("--cpu-hog", type=int, default=None,
                        help="busy processes while half the live clips stream (default 2; --quick 0)")  # fmt: skip
    parser.add_argument("--streams", type=int, default=4, help="live clips streamed at once")
    parser.add_argument("--detector", choices=("auto", "haar"), default="auto",
                        help="auto: as the service (video.detectors.available_detector); haar: Haar")  # fmt: skip
    parser.add_argument("--models", type=Path, default=ROOT / "models", help="the models folder")
    parser.add_argument("--cache", type=Path, default=None, help=f"media cache (default {default_cache()})")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="offline clips analysed at once")
    parser.add_argument("--drift", type=float, default=DRIFT,
                        help=f"the camera gain's swing either way over {DRIFT_PERIOD_S:g} s (0: locked)")  # fmt: skip
    parser.add_argument("--verbose", action="store_true", help="a line per clip")
    parser.add_argument("--observations", type=Path, default=None,
                        help="save each offline clip's observations here, for benchmarks/replay.py")  # fmt: skip
    parser.add_argument("--only", default="",
                        help="only the clips whose names contain one of these comma-separated parts")  # fmt: skip
    parser.add_argument(
        "--low", action="store_true", help="offline clips at the low simulcast layer (320x240, a third of the bitrate)"
    )
    parser.add_argument("--side", action="store_true",
                        help="the side camera's set instead (benchmarks/side_camera.py; offline)")  # fmt: skip
    parser.add_argument("--live-only", action="store_true",
                        help="only the live part (what the analysis's pace changes; the offline part is analysed at "
                             "the ingest's rate)")  # fmt: skip
    args = parser.parse_args()
    hog = args.cpu_hog if args.cpu_hog is not None else (0 if args.quick else 2)
    started = time.monotonic()
    logging.basicConfig(format="  [%(name)s] %(message)s", level=logging.WARNING)  # the service's own warnings
    try:
        paths = ensure_media(args.cache)
    except MediaError as error:
        sys.exit(f"media: {error}")
    cv2.setNumThreads(1)
    cutouts = make_cutouts(paths)
    if args.side:
        side_only(args, cutouts, paths, started)
        return
    specs = scenarios(args.quick, args.drift)
    if args.only:
        parts = [part for part in args.only.split(",") if part]
        specs = [s for s in specs if any(part in s.name for part in parts)]
    if args.live_only:
        specs = [s for s in specs if s.live]
    if not hog:  # every live clip streams without the hog
        specs = [dataclasses.replace(s, hog=False) for s in specs]
    print(f"Python {platform.python_version()}, {os.cpu_count()} CPUs, OpenCV {cv2.__version__}, "
          f"PyAV {av.__version__}, aiortc {aiortc.__version__}; {args.jobs} offline worker(s)")  # fmt: skip
    describe_set(specs, args.live, hog, args.streams)
    print(Thresholds())
    notes: set[str] = set()
    live = [s for s in specs if s.live]
    results = live_part(args, live, hog, cutouts, paths, notes) if args.live and live else []
    results += offline_part(args, [s for s in specs if not s.live], cutouts, paths, notes)
    results.sort(key=lambda r: r.spec.name)
    describe_rates(results, notes)
    met, judged = report(results, args.quick)
    print(f"\ntargets met: {met} of {judged}; elapsed {time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
