"""A player's microphone as the player's page, the desk and the camera roster show it (issue 15: "the roster shows
each device's state per player"), beside the cameras' states: ``connected``, ``muted`` (only digital silence),
``lost`` (no sound, or the front camera's stream that carries it ended) or ``not-connected``, and since when.

What the microphone check holds of it (:class:`Heard`) comes from the service's own microphones (proctor.microphone)
or, in the distributed mode, from the report of the worker holding the front camera (proctor.stream_views)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Heard:
    """A player's microphone as its check holds it now (times in ms)."""

    opened_ms: int
    lost_ms: int | None = None
    """Since when no sound arrived (``microphone-lost``), if none does now."""
    muted_ms: int | None = None
    """Since when only digital silence arrived (``microphone-muted``), if so now."""

    def to_json(self) -> dict[str, Any]:
        return {"opened_ms": self.opened_ms, "lost_ms": self.lost_ms, "muted_ms": self.muted_ms}

    @classmethod
    def of(cls, data: Mapping[str, Any] | None) -> Heard | None:
        if not data:
            return None
        return cls(int(data["opened_ms"]), data.get("lost_ms"), data.get("muted_ms"))


def microphone_state(front_live: bool, front_since_ms: int | None, heard: Heard | None) -> dict[str, Any]:
    """The microphone's state in the words the page, the desk and the roster share.  ``front_live``: the front
    camera's stream, which carries the sound, is up (since ``front_since_ms``: when it opened, or when it ended)."""
    if front_since_ms is None:
        return {"state": "not-connected", "since": None}
    if not front_live:
        return {"state": "lost", "since": front_since_ms}
    if heard is None:
        return {"state": "not-connected", "since": None}
    if heard.lost_ms is not None:
        return {"state": "lost", "since": heard.lost_ms}
    if heard.muted_ms is not None:
        return {"state": "muted", "since": heard.muted_ms}
    return {"state": "connected", "since": heard.opened_ms}
