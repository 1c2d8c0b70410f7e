"""Replay the temporal rules over recorded observations and print the benchmark's tables: a quick way to try a
threshold on the whole offline set.

Usage: python benchmarks/replay.py DIR [--only PART,...] [--set NAME=VALUE ...] [--verbose]

DIR holds the recordings that ``benchmarks/detectors.py --no-live --observations DIR`` wrote.  Each clip's
observations are fed to a fresh ``video.checks.Monitor`` with the default ``Thresholds()`` (changed by ``--set``),
and what it raises is scored as the benchmark scores it.  What the frame analyser decided (faces, the person mask,
bent down) is fixed in the recordings: a change there needs a full run.  The figures flatter whatever was tuned on
them; report a full run.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.detectors import table
from benchmarks.evalset import ClipLabels, Raised, labels_for
from benchmarks.observations import Recording, load_observations
from video.checks import Monitor, Thresholds


def replay(recording: Recording, thresholds: Thresholds) -> list[Raised]:
    monitor = Monitor(thresholds)
    raised: list[Raised] = []
    for observation in recording.observations:
        raised += [Raised(f.check.name, observation.at) for f in monitor.feed(observation) if f.ended is None]
    return raised


def parse_settings(items: list[str]) -> Thresholds:
    base = Thresholds()
    changes: dict[str, float] = {}
    names = {f.name for f in dataclasses.fields(Thresholds)}
    for item in items:
        name, _, value = item.partition("=")
        if name not in names:
            sys.exit(f"--set {item}: no threshold {name!r} (one of {', '.join(sorted(names))})")
        try:
            changes[name] = float(value)
        except ValueError:
            sys.exit(f"--set {item}: {value!r} is not a number")
    return dataclasses.replace(base, **changes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--only", default="", help="comma-separated parts of clip names")
    parser.add_argument("--set", dest="settings", action="append", default=[], help="NAME=VALUE of Thresholds")
    parser.add_argument("--verbose", action="store_true", help="a line per clip")
    args = parser.parse_args()
    thresholds = parse_settings(args.settings)
    only = [part for part in args.only.split(",") if part]
    labelled: list[tuple[ClipLabels, list[Raised]]] = []
    for recording in load_observations(args.folder, only):
        raised = replay(recording, thresholds)
        labelled.append((labels_for(recording.spec), raised))
        if args.verbose:
            found = ", ".join(f"{r.check.lower()}@{r.at:.1f}" for r in raised) or "nothing"
            print(f"  {recording.spec.name:<34} raised: {found}")
    if not labelled:
        sys.exit(f"{args.folder}: no recordings (benchmarks/detectors.py --no-live --observations {args.folder})")
    print(thresholds)
    table(f"Replayed: {len(labelled)} offline clips", labelled)


if __name__ == "__main__":
    main()
