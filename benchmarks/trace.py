"""Trace the camera checks frame by frame on clips of the evaluation set: what each analysed frame showed the
analyser and what it raised, beside the clip's truth.  A tool for finding why a check misses or raises falsely.

Usage: python benchmarks/trace.py NAME [NAME ...] [--from S] [--to S] [--save DIR]

NAME is a part of a clip's name in ``benchmarks/evalset.py`` (as ``benchmarks/detectors.py --only`` takes it; the
first clip that matches each part is traced).  The clip is composed, encoded and decoded offline through aiortc's VP8
as in the benchmark's offline part and analysed by :func:`benchmarks.detectors.make_analyser`.  A line per analysed
frame: time, truth (P: the player in view, 2: the second person in view, E: the effect on), faces found, the share
marked as a person, the new body's share, player_seen, moving, the background's change, sharpness and structure,
and the findings raised or ended.  ``--save DIR`` writes every analysed frame as a JPEG for a look.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.composition import Composer, Cutout, make_cutouts
from benchmarks.detectors import ROOT, load_models, make_analyser
from benchmarks.evalset import analysed_indices, browser_scenarios, gone, in_view, scenarios, sender_bitrate
from benchmarks.media import ensure_media
from benchmarks.vp8 import CLOCK, Vp8Link
from video.checks import FaceDetector


def _num(value: float | None, spec: str = ".2f") -> str:
    return "-" if value is None else format(value, spec)


def _box(box: Any) -> str:
    return "-" if box is None else f"{box.x},{box.y} {box.width}x{box.height}"


def _state(analyser: Any, o: Any) -> str:
    """The analyser's memory after the frame: the faces found, the scene's age, the player's face at the scene and
    when last seen, and whether the player counts as bent down."""
    scene = analyser.scene
    age = "-" if scene is None else f"{o.at - scene.at:.1f}"
    faces = " ".join(_box(f) for f in o.faces) or "-"
    return (
        f"  | faces {faces} scene-age {age} rest {_box(analyser.rest_face)} last {_box(analyser.last_face)}"
        f"{' BENT' if o.bent_down else ''}"
    )


def trace(name: str, cutouts: dict[str, Cutout], paths: dict[str, Path], faces: FaceDetector | None, people: Any,
          start: float, end: float, save: Path | None, state: bool = False) -> None:  # fmt: skip
    specs = [s for s in [*scenarios(), *browser_scenarios()] if name in s.name]
    if not specs:
        print(f"{name}: no such clip")
        return
    spec = specs[0]
    print(f"\n== {spec.name} ({spec.scenario}, {spec.seconds:g} s, {spec.fps:g} fps, {spec.bitrate // 1000} kbit/s, "
          f"room {spec.background})")  # fmt: skip
    analyser = make_analyser(faces, people)
    composer = Composer(spec, cutouts, paths)
    link = Vp8Link(spec.bitrate)
    wanted = set(analysed_indices(spec.seconds, spec.fps))
    print("    t truth faces people  body seen moving bgchg bgsharp psharp struct  findings")
    for t, image, _truth in composer.frames():
        for decoded in link.send(image, t, sender_bitrate(t, spec.bitrate, spec.fps)):
            at = decoded.pts / CLOCK if decoded.pts is not None else t
            if round(at * spec.fps) not in wanted:
                continue
            frame = decoded.to_ndarray(format="bgr24").astype(np.uint8, copy=False)
            o = analyser.observe(frame, at)
            findings = analyser.judge(o)
            if not start <= at <= end:
                continue
            truth = ("P" if not gone(spec.player, at) else "-") + (
                "2" if spec.second is not None and in_view(spec.second, at) else " ") + (
                "E" if spec.effect is not None and at >= spec.effect_from else " ")  # fmt: skip
            raised = " ".join(("+" if f.ended is None else "-") + f.check.value for f in findings)
            print(f"{at:6.1f} {truth:>5} {len(o.faces):>5} {_num(o.people):>6} {o.new_body:5.2f} "
                  f"{'-' if o.player_seen is None else 'yn'[not o.player_seen]:>4} {_num(o.moving):>6} "
                  f"{_num(o.background_change):>5} {_num(o.background_sharpness):>7} {_num(o.person_sharpness):>6} "
                  f"{_num(o.background_structure, '.1f'):>6}  {raised}"
                  f"{_state(analyser, o) if state else ''}")  # fmt: skip
            if save is not None:
                save.mkdir(parents=True, exist_ok=True)
                cv2.imwrite(str(save / f"{spec.name}-{at:07.2f}.jpg"), frame)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="+")
    parser.add_argument("--from", dest="start", type=float, default=0.0)
    parser.add_argument("--to", dest="end", type=float, default=1e9)
    parser.add_argument("--save", type=Path, default=None)
    parser.add_argument("--state", action="store_true", help="the analyser's memory after each frame")
    parser.add_argument("--models", type=Path, default=ROOT / "models")
    args = parser.parse_args()
    cv2.setNumThreads(1)
    paths = ensure_media(None)
    cutouts = make_cutouts(paths)
    faces, people, note = load_models("auto", args.models)
    print(note)
    for name in args.names:
        trace(name, cutouts, paths, faces, people, args.start, args.end, args.save, args.state)


if __name__ == "__main__":
    main()
