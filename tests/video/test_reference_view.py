"""The side camera's approved view (video.reference_view): a picture still showing it is kept through the light
changing, the player moving and the encoder's blur; a camera pushed aside, turned, zoomed or pointed elsewhere is
not; a picture without detail is not judged; and the temporal rule holds and clears as the other checks do."""

from __future__ import annotations

import cv2
import numpy as np

from tests.video.frames import composed, other_screens, platform_screen, room_photo, scene
from video.checks import Check, Frame
from video.devices import Device, StreamKey, devices_for_policy, stream_key, surface_problem
from video.reference_view import (
    SCREEN_COVERAGE,
    ReferenceView,
    ViewComparison,
    ViewWatch,
    compare_view,
    compare_views,
    followed,
)


def _warp(picture: Frame, dx: float, dy: float, degrees: float, scale: float = 1.0) -> Frame:
    motion = cv2.getRotationMatrix2D((320, 240), degrees, scale)
    motion[0, 2] += dx
    motion[1, 2] += dy
    return cv2.warpAffine(picture, motion, (640, 480), borderMode=cv2.BORDER_REFLECT).astype(np.uint8)


def test_the_view_is_kept_through_light_movement_and_blur_and_lost_when_the_camera_moves() -> None:
    rng, room = np.random.default_rng(1), room_photo()
    reference = ReferenceView.of(composed(room, rng, 0, 1.0, False))
    assert reference.judgeable
    kept: dict[str, Frame] = {
        "the same": composed(room, rng, 0, 1.0, False),
        "darker, the player leaning": composed(room, rng, 40, 0.6, False),
        "brighter, the player the other way": composed(room, rng, -30, 1.4, False),
        "the player far aside": composed(room, rng, 130, 1.0, False),
        "the encoder's blur": cv2.GaussianBlur(composed(room, rng, 10, 0.9, False), (0, 0), 1.2).astype(np.uint8),
        "nudged by a hand": _warp(composed(room, rng, 0, 0.8, False), 15, 5, 1),
    }
    for name, picture in kept.items():
        comparison = compare_view(reference, picture)
        assert comparison.judged and comparison.kept, (name, comparison)
    moved: dict[str, Frame] = {
        "pushed aside": _warp(composed(room, rng, 0, 1.0, False), 80, 10, 0),
        "turned": _warp(composed(room, rng, 0, 1.0, False), 0, 0, 6),
        "zoomed": _warp(composed(room, rng, 0, 1.0, False), 0, 0, 0, 1.15),
        "another room, the player where she sat": scene(1, rng),
        "turned around": cv2.flip(composed(room, rng, 0, 1.0, False), 1).astype(np.uint8),
    }
    for name, picture in moved.items():
        comparison = compare_view(reference, picture)
        assert comparison.judged and not comparison.kept, (name, comparison)
        assert "camera" in comparison.describe()


def test_a_picture_without_detail_is_not_judged() -> None:
    reference = ReferenceView.of(composed(room_photo(), np.random.default_rng(2), 0, 1.0, False))
    flat = np.full((480, 640, 3), 90, np.uint8)
    assert compare_view(reference, flat) == ViewComparison(judged=False, kept=True)
    assert not ReferenceView.of(flat).judgeable


def test_the_watch_holds_before_raising_and_clears_after_clear_s() -> None:
    watch = ViewWatch(moved_s=4.0, clear_s=2.0)
    moved, kept = ViewComparison(True, False, 10, 0), ViewComparison(True, True, 300, 200)
    unjudged = ViewComparison(False, True)
    assert watch.feed(0.0, moved) == [] and watch.feed(2.0, unjudged) == [] and watch.feed(3.9, moved) == []
    (raised,) = watch.feed(4.0, moved)
    assert (raised.check, raised.started, raised.ended) == (Check.CAMERA_MOVED, 0.0, None)
    assert watch.feed(5.0, kept) == [] and watch.feed(6.0, moved) == []  # seen again too briefly: still moved
    assert watch.feed(7.0, kept) == [] and watch.feed(8.0, unjudged) == []
    (ended,) = watch.feed(9.0, kept)
    assert (ended.started, ended.ended) == (0.0, 9.0)


def test_devices_streams_and_surfaces() -> None:
    assert devices_for_policy(["screen", "front", "side"]) == (Device.FRONT, Device.SIDE, Device.SCREEN)
    for bad in (["side"], ["front", "phone"], []):
        try:
            devices_for_policy(bad)
        except ValueError:
            continue
        raise AssertionError(bad)
    assert stream_key("p-1") == StreamKey("p-1", Device.FRONT) and str(StreamKey("p-1", Device.SIDE)) == "p-1 (side)"
    assert surface_problem("monitor") is None
    assert "window" in (surface_problem("window") or "") and "tab" in (surface_problem("browser") or "")
    assert "did not say" in (surface_problem(None) or "")


def test_a_screen_keeps_its_approved_view_as_the_game_goes_on_and_loses_it_to_another_program() -> None:
    """The shared screen's approved view is the platform's page: more stones, the clocks running, the pointer moving,
    a chat line and the encoder's blur keep it; another program in its place (an editor, an analysis tool's board,
    the desktop) does not, and is said as the screen's, not a camera's."""
    reference = ReferenceView.of(platform_screen(10))
    assert reference.judgeable
    kept: dict[str, Frame] = {
        "twenty more stones": platform_screen(30, 540),
        "the pointer elsewhere": platform_screen(11, 590, cursor=(300, 400)),
        "a chat line": platform_screen(12, 580, chat=2),
        "the encoder's blur": cv2.GaussianBlur(platform_screen(14, 560), (0, 0), 1.0).astype(np.uint8),
        "sent at 960x540": cv2.resize(platform_screen(16, 550), (960, 540), interpolation=cv2.INTER_AREA).astype(
            np.uint8
        ),
    }
    for name, picture in kept.items():
        comparison = compare_view(reference, picture, SCREEN_COVERAGE)
        assert comparison.judged and comparison.kept, (name, comparison)
    for name, picture in other_screens().items():
        comparison = compare_view(reference, picture, SCREEN_COVERAGE)
        assert comparison.judged and not comparison.kept, (name, comparison)
        assert "shared screen" in comparison.describe(screen=True)
    watch = ViewWatch(moved_s=4.0, clear_s=2.0, check=Check.SCREEN_CHANGED)
    changed = compare_view(reference, other_screens()["an analysis program's board"])
    assert watch.feed(0.0, changed) == [] and [f.check for f in watch.feed(4.0, changed)] == [Check.SCREEN_CHANGED]


def test_the_screens_view_follows_a_long_game_but_not_a_program_opened_over_it() -> None:
    reference = ReferenceView.of(platform_screen(10))
    for stones in range(12, 224, 4):  # compared every 2 s, a stone every few seconds: the page changes little each time
        seen = ReferenceView.of(platform_screen(stones, 600 - stones))
        comparison = compare_views(reference, seen, SCREEN_COVERAGE)
        assert comparison.kept, (stones, comparison)
        reference = followed(reference, comparison, seen)
    covered = platform_screen(224)
    covered[:, :384] = other_screens()["a text editor"][:, :384]  # an editor over half the board
    seen = ReferenceView.of(covered)
    comparison = compare_views(reference, seen, SCREEN_COVERAGE)
    assert comparison.judged and not comparison.kept, comparison
    assert followed(reference, comparison, seen) is reference
