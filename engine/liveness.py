"""Liveness timelines: when a source (the platform's game feed, a player's camera) was up or down.

The game feed and the camera are two separate timelines, each with its own gaps: a player can be on camera while the
platform has dropped them, and the reverse (disputes at online events turned on exactly this).  A timeline is
immutable and takes its times as arguments.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace


class Source(enum.Enum):
    FEED = "feed"
    """The player's connection to the playing platform, as its webhooks report it (34.3, 37)."""
    CAMERA = "camera"
    """The player's webcam stream (32.2, 36)."""


@dataclass(frozen=True, slots=True)
class Gap:
    start: int
    end: int | None
    """None while the source is still down."""

    def duration(self, now: int) -> int:
        return (self.end if self.end is not None else now) - self.start


@dataclass(frozen=True, slots=True)
class Timeline:
    source: Source
    gaps: tuple[Gap, ...] = ()

    @property
    def is_down(self) -> bool:
        return bool(self.gaps) and self.gaps[-1].end is None

    @property
    def down_since(self) -> int | None:
        return self.gaps[-1].start if self.is_down else None

    def down(self, at: int) -> Timeline:
        """The source went down at ``at`` (a second report while down changes nothing)."""
        if self.is_down:
            return self
        return replace(self, gaps=(*self.gaps, Gap(at, None)))

    def up(self, at: int) -> Timeline:
        """The source came back at ``at`` (nothing to close when it was up)."""
        if not self.is_down:
            return self
        last = self.gaps[-1]
        return replace(self, gaps=(*self.gaps[:-1], Gap(last.start, max(at, last.start))))

    def downtime(self, now: int) -> int:
        return sum(gap.duration(now) for gap in self.gaps)
