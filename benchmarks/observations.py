"""Recorded observations: what the frame analyser saw in each analysed frame of an offline clip, kept so that the
temporal rules (``video.checks.Monitor``) can be replayed over the whole set in seconds (``benchmarks/replay.py``)
instead of composing, encoding and analysing it again (half an hour).  A tool for tuning; the benchmark's figures
always come from a full run."""

from __future__ import annotations

import pickle
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from benchmarks.evalset import ClipSpec
from video.checks import Observation

SUFFIX = ".observations.pickle"


@dataclass(frozen=True)
class Recording:
    spec: ClipSpec
    observations: tuple[Observation, ...]


def save_observations(folder: Path, spec: ClipSpec, observations: Sequence[Observation]) -> Path:
    """Write one clip's observations (atomically: a replay never reads half a file)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{spec.name}{SUFFIX}"
    partial = path.with_suffix(".partial")
    partial.write_bytes(pickle.dumps(Recording(spec, tuple(observations)), protocol=pickle.HIGHEST_PROTOCOL))
    partial.replace(path)
    return path


def load_observations(folder: Path, only: Sequence[str] = ()) -> Iterator[Recording]:
    """The recordings in a folder (written by this checkout: pickles of its own classes, never from elsewhere),
    those whose clip names contain one of ``only`` if given."""
    for path in sorted(folder.glob(f"*{SUFFIX}")):
        name = path.name.removesuffix(SUFFIX)
        if only and not any(part in name for part in only):
            continue
        recording = pickle.loads(path.read_bytes())
        if isinstance(recording, Recording):
            yield recording
