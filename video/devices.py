"""A player's devices (issue 15): each player may stream several video tracks, each with a role: the ``front``
camera (the webcam on the face and surroundings, as before, which also carries the microphone's audio), a ``side``
camera (usually a phone, from behind or beside the player, showing the player, the desk and the playing device's
screen) and the ``screen`` (the playing device's whole screen, shared).  Streams are keyed by player and device
(:class:`StreamKey`): a second offer for the same device follows the one-connection rule, another device does not
touch it.

Which checks each device runs (:data:`DEVICE_CHECKS`), what a shared surface must be (:func:`surface_problem`) and
which devices a section requires (:func:`devices_for_policy`) are decided here, without I/O.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields, replace
from typing import Any, Final, NamedTuple

from video.checks import Check, Monitor, Thresholds


class Device(enum.Enum):
    """The role of one of a player's streams."""

    FRONT = "front"
    """The webcam facing the player (the stream every camera check began with; the microphone rides on it)."""
    SIDE = "side"
    """A second camera from behind or beside the player: the player, the desk and the playing device's screen."""
    SCREEN = "screen"
    """The playing device's whole screen, shared (36.4.4)."""

    @property
    def is_camera(self) -> bool:
        return self is not Device.SCREEN

    @property
    def title(self) -> str:
        """As a summary names it ("side camera: nobody in view")."""
        return {"front": "front camera", "side": "side camera", "screen": "screen share"}[self.value]


DEFAULT_DEVICES: Final = (Device.FRONT,)
"""A section that says nothing requires the front camera alone (as every event did before issue 15)."""


class StreamKey(NamedTuple):
    """One stream of one player: the ingest's sessions and connections, the live views and the open incidents are
    keyed by it."""

    player: str
    device: Device = Device.FRONT

    def __str__(self) -> str:
        return self.player if self.device is Device.FRONT else f"{self.player} ({self.device.value})"


def stream_key(stream: str | StreamKey) -> StreamKey:
    """A bare player id is their front camera."""
    return stream if isinstance(stream, StreamKey) else StreamKey(stream)


DEVICE_CHECKS: Final[dict[Device, frozenset[Check]]] = {
    Device.FRONT: frozenset(Check) - {Check.CAMERA_MOVED, Check.SCREEN_CHANGED},
    Device.SIDE: frozenset(
        {Check.LEFT_AREA, Check.EXTRA_PERSON, Check.COVERED, Check.FROZEN, Check.LOST, Check.CAMERA_MOVED}
    ),
    Device.SCREEN: frozenset({Check.LOST, Check.SCREEN_CHANGED}),
}
"""The checks each device may raise (within those the section's policy enables).  The side camera is checked for
presence and another person as the front one is, and for being covered, frozen, lost or moved from its approved view
(:mod:`video.reference_view`); a background effect is the front camera's matter (a phone's camera app has none in a
browser).  The screen is checked for its stream, stopped or lost (36.4.4), raised as ``screen-share-stopped``, and,
once an arbiter approved what it shows (the platform's board), for showing something else (``screen-changed``, a
review flag: 36.4.3, 36.4.5)."""


FACELESS_BODIES: Final = frozenset({Device.FRONT})
"""The devices on which a new body with no face of its own counts as another person (36.4.2).  Not the side camera:
it shows the player from the side, leaning over and reaching for the playing device, and what the player's body
does there looks like a body of its own (``benchmarks/detectors.py --side``: 8 false alarms in 1.5 player-hours of
a composed side view, every one a player leaning towards the device for 3-8 s).  A second face on the side camera
still counts; a person seen from behind only is the front camera's to find."""


def device_monitor(thresholds: Thresholds, enabled: frozenset[Check], device: Device) -> Monitor:
    """The temporal rules of one of a player's devices: the checks ``enabled`` within the device's own
    (:data:`DEVICE_CHECKS`), and bodies without faces counted where :data:`FACELESS_BODIES` says."""
    return Monitor(thresholds, enabled=enabled & DEVICE_CHECKS[device], bodies_without_faces=device in FACELESS_BODIES)


def device_of(name: object) -> Device:
    """The device named (``front``, ``side``, ``screen``); ValueError for anything else."""
    try:
        return Device(name)
    except ValueError:
        raise ValueError(f"unknown device {name!r}; expected one of {', '.join(d.value for d in Device)}") from None


def devices_for_policy(names: Iterable[object]) -> tuple[Device, ...]:
    """The devices a section's ``devices`` list requires, in their order (:class:`Device`); ValueError for an unknown
    name, or a list without the front camera (every camera check and the microphone start from it)."""
    named = {device_of(name) for name in names}
    if Device.FRONT not in named:
        raise ValueError('the devices must include "front" (the webcam on the player)')
    return tuple(device for device in Device if device in named)


WHOLE_SCREEN: Final = "monitor"
"""What the browser reports as the shared surface (``MediaTrackSettings.displaySurface``) for a whole screen."""


def surface_problem(surface: object) -> str | None:
    """Why a screen share cannot be accepted (None when it can): the whole screen is required (36.4: the monitored
    area includes the playing device), so a window or a browser tab is refused, and so is a share whose surface the
    browser did not report."""
    if surface == WHOLE_SCREEN:
        return None
    if surface == "window":
        return "a single window is shared: share the entire screen"
    if surface == "browser":
        return "a browser tab is shared: share the entire screen"
    return "the browser did not say what is shared: share the entire screen"


@dataclass(frozen=True, slots=True)
class DeviceThresholds:
    """The second camera's and the screen's own thresholds (a section's ``[sections.policy.thresholds]`` may set each
    by name, beside the camera checks' own)."""

    camera_moved_s: float = 6.0
    """The approved view not seen for this long: ``camera-moved`` (36.4)."""
    view_interval_s: float = 2.0
    """The side camera's picture is compared with its approved view this often (about 40 ms of CPU each)."""
    screen_lost_s: float = 2.5
    """No frame of the shared screen for this long: ``screen-share-stopped`` (36.4.4).  A browser sends a still
    screen's last frame again at least once a second (WebRTC's screen-share cadence), so a longer silence is a share
    that stopped or a connection that broke; the page reports a share the player stopped at once."""
    screen_changed_s: float = 10.0
    """The shared screen not showing its approved view (the platform's board) for this long: ``screen-changed``, a
    review flag (36.4.3, 36.4.5); compared every ``view_interval_s`` like the side camera."""
    screen_still_s: float = 30.0
    """A still of the shared screen is kept as evidence this often (0: none), under the section's ``screen`` folder
    with its own retention (``screen_retention_days``)."""

    @classmethod
    def from_policy(cls, values: Mapping[str, Any], base: DeviceThresholds | None = None) -> DeviceThresholds:
        """``base`` with the values a section's ``thresholds`` sets for these names (others are the camera checks')."""
        known = {f.name for f in fields(cls)}
        return replace(base or cls(), **{k: float(v) for k, v in values.items() if k in known})
