"""The pure video checks and their temporal rules (36.4, 36.4.1, 36.4.2)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tests.video.frames import room_photo, scene
from video import checks
from video.checks import (
    POLICY_CHECKS,
    Box,
    Check,
    Frame,
    Monitor,
    Observation,
    PanOutcome,
    Thresholds,
    checks_for_policy,
    detail_bands,
    exposure_change,
    grid_shape,
    judge_pan,
    observe,
    person_mask,
    to_grey,
)
from video.checks import _grid as grid
from video.detectors import HaarFaces
from video.devices import DEVICE_CHECKS, Device, device_monitor

FACE = Box(200, 100, 120, 120)


def seen(
    at: float, faces: int = 1, brightness: float = 120, contrast: float = 40, change: float = 2.0, **extra: Any
) -> Observation:
    boxes = tuple(Box(100 + 200 * i, 100, 120, 120) for i in range(faces))
    extra.setdefault("moving", min(1.0, change / 20))
    return Observation(at, brightness, contrast, change, boxes, 640, 480, **extra)


def run(monitor: Monitor, observations: list[Observation]) -> list[tuple[Check, float, float | None]]:
    found = []
    for observation in observations:
        found += [(f.check, f.started, f.ended) for f in monitor.feed(observation)]
    return found


def test_a_real_face_is_found_and_counted() -> None:
    rng = np.random.default_rng(1)
    detector = HaarFaces()
    counts = [len(observe(scene(n, rng), 0.0, None, detector)[0].faces) for n in (0, 1, 2)]
    assert counts == [0, 1, 2]


def test_36_4_1_left_the_area_after_the_threshold_with_hysteresis() -> None:
    monitor = Monitor(Thresholds(absence_s=5, clear_s=2))
    frames = [seen(t * 0.5, faces=1 if t < 4 else 0) for t in range(30)]
    assert run(monitor, frames) == [(Check.LEFT_AREA, 2.0, None)]  # absent from 2.0, raised at 7.0
    # Faces again from 15.0: the finding ends once they have been back for clear_s (2 s).
    more = [seen(15 + t * 0.5, faces=1) for t in range(6)]
    assert run(monitor, more) == [(Check.LEFT_AREA, 2.0, 17.0)]


def test_a_single_missed_detection_raises_nothing() -> None:
    monitor = Monitor(Thresholds(absence_s=5))
    frames = [seen(t * 0.5, faces=0 if t % 7 == 3 else 1) for t in range(40)]
    assert run(monitor, frames) == []


def test_leave_granted_by_the_arbiter_is_not_a_finding() -> None:
    monitor = Monitor(Thresholds(absence_s=3), leave_granted_until=100)
    assert run(monitor, [seen(t, faces=0) for t in range(20)]) == []


def test_36_4_2_another_person_and_the_edge() -> None:
    monitor = Monitor(Thresholds(extra_person_s=2))
    observations = [Observation(t * 0.5, 120, 40, 2.0, (FACE, Box(0, 120, 80, 100)), 640, 480) for t in range(8)]
    found = []
    for observation in observations:
        found += monitor.feed(observation)
    assert [f.check for f in found] == [Check.EXTRA_PERSON]
    assert "at the frame's edge" in found[0].detail


def test_covered_dark_and_frozen_cameras() -> None:
    covered = run(
        Monitor(Thresholds(covered_s=2)), [seen(t * 0.5, faces=0, brightness=5, contrast=1) for t in range(8)]
    )
    assert covered == [(Check.COVERED, 0.0, None)]
    frozen = run(Monitor(Thresholds(frozen_s=3)), [seen(t * 0.5, change=0.3, moving=0.0) for t in range(10)])
    assert frozen == [(Check.FROZEN, 0.0, None)]  # the encoder's refinements (change 0.3) move nothing
    # Under load the analysis rate falls: the window is in seconds, so the same picture is found the same way.
    slow = run(Monitor(Thresholds(frozen_s=3)), [seen(t * 0.8, change=0.3, moving=0.0) for t in range(8)])
    assert slow == [(Check.FROZEN, 0.0, None)]
    # A still room with nobody in view looks the same through the encoder's denoiser: left-area speaks instead.
    empty = run(Monitor(Thresholds(frozen_s=3, absence_s=3)), [seen(t * 0.5, faces=0, moving=0.0) for t in range(10)])
    assert empty == [(Check.LEFT_AREA, 0.0, None)]
    # A player sitting still still moves somewhere in the picture.
    assert run(Monitor(Thresholds(frozen_s=3)), [seen(t * 0.5, change=0.4, moving=0.01) for t in range(20)]) == []


def test_a_frozen_source_is_found_through_the_key_frames_of_a_restarted_encoder() -> None:
    # aiortc's sender makes its encoder anew every few seconds early in a stream: each key frame re-quantises the
    # frozen picture (a tenth of the cells move by 4 grey levels or more) and it settles over two frames.
    refresh = [0.10, 0.06, 0.02, 0.0, 0.0, 0.0]
    frames = [seen(t * 0.5, change=0.3, moving=refresh[t % 6]) for t in range(24)]
    # Frozen since the first frame that moved nothing (1.5 s): never placed before the picture stopped.
    assert run(Monitor(Thresholds(frozen_s=5)), frames) == [(Check.FROZEN, 1.5, None)]
    # A player in view moves a little in every frame, however still they sit.
    moving = [0.02, 0.01, 0.005, 0.01, 0.003, 0.02]
    assert run(Monitor(Thresholds(frozen_s=5)), [seen(t * 0.5, moving=moving[t % 6]) for t in range(40)]) == []


def test_a_regions_exposure_change_follows_the_refreshed_cells_not_the_moving_ones() -> None:
    # The encoder left 60 % of the region's blocks as they were and refreshed 30 % at the new exposure (3 % brighter);
    # 10 % changed by the person's movement (an arm, a turned head): far from the median, left out.
    ratios = np.array([0.0] * 60 + [np.log(1.03)] * 30 + [0.6, -0.5] * 5, np.float32)
    assert exposure_change(ratios) == pytest.approx(30 * np.log(1.03) / 90, rel=1e-4)
    assert exposure_change(np.full(19, 0.1, np.float32)) is None  # too few cells to say anything
    assert exposure_change(np.full(40, -0.02, np.float32)) == pytest.approx(-0.02)


@pytest.mark.parametrize("counted", [False, True])
def test_no_faceless_body_is_another_person_while_the_background_is_found_replaced(
    monkeypatch: pytest.MonkeyPatch, counted: bool
) -> None:
    # A still background while the person's exposure moves: the replaced-background signal; from 15 s a new region
    # beside the player without a face (what the effect's wandering mask edge makes).
    monkeypatch.setattr(checks, "BODIES_NOT_BEHIND_EFFECTS", not counted)
    frames = [
        seen(t * 0.5, background_change=0.0, background_gain=0.0, person_gain=0.004 if t % 40 < 20 else -0.004,
             new_body=0.1 if t >= 30 else 0.0, player_seen=True)
        for t in range(60)
    ]  # fmt: skip
    raised = {check for check, _, ended in run(Monitor(), frames) if ended is None}
    assert Check.VIRTUAL_BACKGROUND in raised
    assert (Check.EXTRA_PERSON in raised) is counted
    if not counted:  # two faces are another person all the same
        monitor = Monitor()
        run(monitor, frames)
        two = [seen(30 + t * 0.5, faces=2, background_change=0.0, background_gain=0.0, person_gain=0.0)
               for t in range(8)]  # fmt: skip
        assert Check.EXTRA_PERSON in {check for check, _, ended in run(monitor, two) if ended is None}


def test_the_side_camera_counts_faces_not_bodies() -> None:
    # The player leaning towards the playing device on the side camera: a new region marked as a person beside the
    # face the scene knows, for 6 s.  On the front camera that is another body; on the side camera it is not, and a
    # second face there still is another person.
    leaning = [seen(t * 0.5, new_body=0.12 if 10 <= t < 22 else 0.0, player_seen=True) for t in range(30)]
    front = device_monitor(Thresholds(), frozenset(Check), Device.FRONT)
    assert [(c, s) for c, s, ended in run(front, leaning) if ended is None] == [(Check.EXTRA_PERSON, 5.0)]
    side = device_monitor(Thresholds(), frozenset(Check), Device.SIDE)
    assert run(side, leaning) == []
    two = [seen(15 + t * 0.5, faces=2) for t in range(8)]
    assert [(c, s) for c, s, ended in run(side, two) if ended is None] == [(Check.EXTRA_PERSON, 15.0)]
    assert side.enabled == DEVICE_CHECKS[Device.SIDE]


def test_a_lost_camera_is_found_by_the_clock() -> None:
    monitor = Monitor(Thresholds(lost_s=5))
    monitor.feed(seen(0.0))
    assert monitor.tick(4.0) == []
    (lost,) = monitor.tick(5.5)
    assert (lost.check, lost.started, lost.check.article) == (Check.LOST, 0.0, "36.4")
    assert monitor.tick(6.0) == []


PORTRAIT = scene(1, np.random.default_rng(7))[60:420, 140:500]
"""The astronaut's portrait as scene() places it: her face at x 128-192, y 46-125 of it."""


def _person_over(
    backdrop: Frame, shift: int, at: float, rng: np.random.Generator, room_noise: float
) -> tuple[Frame, tuple[Box]]:
    """The astronaut swaying in front of a backdrop (only her head and shoulders: the portrait's own background
    cut away); sensor noise on the whole picture for a real room, or only on her for a replaced background (the
    replacement image itself is clean and still)."""
    face = Box(268 + shift, 106, 64, 79)
    person = person_mask([face], 640, 480, margin=0)
    person[:60] = False
    frame = backdrop.astype(np.float32)
    placed = np.zeros_like(frame)
    placed[60:420, max(0, 140 + shift) : 500 + shift] = PORTRAIT[:, max(0, -140 - shift) :]
    frame[person] = placed[person]
    if room_noise:
        frame += rng.normal(0, room_noise, frame.shape) + 8 * np.sin(at / 5)  # noise, and the exposure drifting
    else:  # the app's picture behind; the camera's noise and exposure on the player alone
        frame[person] += rng.normal(0, 3, (int(person.sum()), 3)) + 8 * np.sin(at / 5)
    return frame.clip(0, 255).astype(np.uint8), (face,)


def _background_findings(room_noise: float, seconds: float = 40.0) -> list[tuple[Check, float, float]]:
    """(check, started, raised at) of the findings over a clip of a player in front of a backdrop."""
    rng = np.random.default_rng(3)
    backdrop = room_photo()  # a real photo: a smooth synthetic room is what a blurred one looks like
    monitor, previous, found = Monitor(), None, []
    for step in range(int(seconds * 2)):
        at = step / 2
        frame, faces = _person_over(backdrop, int(12 * np.sin(at * 1.3)), at, rng, room_noise)
        observation, previous = observe(frame, at, previous, None, faces)
        found += [(f.check, f.started, at) for f in monitor.feed(observation)]
    return found


def test_a_still_replacement_background_behind_a_moving_player_is_flagged() -> None:
    # The exposure changes are measured from the second frame (0.5 s); nearly a full 8 s window of them (7.5 s), then
    # the signal held for 3 s before it is raised, as a reason for the arbiter to ask for the pan check.
    assert _background_findings(room_noise=0.0) == [(Check.VIRTUAL_BACKGROUND, 8.0, 11.0)]
    assert Check.VIRTUAL_BACKGROUND.article == "36.4"


def test_a_real_room_with_sensor_noise_and_exposure_drift_is_not_flagged() -> None:
    assert _background_findings(room_noise=2.0) == []


def test_the_background_is_the_frame_outside_the_people() -> None:
    mask = person_mask([Box(100, 100, 40, 50)], 640, 480, margin=0)  # 2.5 face-widths: x 70-170, from y 75 down
    assert mask[200, 120] and mask[479, 71] and mask[75, 100]
    assert not mask[10, 120] and not mask[200, 69] and not mask[200, 171]
    wider = person_mask([Box(100, 100, 40, 50)], 640, 480)  # a quarter face-width more on every side, for movement
    assert wider[200, 61] and wider[200, 179] and wider[66, 120] and not wider[200, 59] and not wider[200, 181]
    assert person_mask([Box(100, 100, 40, 50)], 640, 480, step=4).shape == (120, 160)


def test_a_hand_reaching_into_a_still_replaced_background_does_not_make_it_look_alive() -> None:
    rng = np.random.default_rng(2)
    backdrop = scene(0, np.random.default_rng(5))
    face = (Box(268, 106, 64, 79),)
    _, previous = observe(backdrop, 0.0, None, None, face)
    hand = backdrop.copy()
    hand[300:420, 40:150] = rng.integers(0, 255, (120, 110, 3), dtype=np.uint8)  # beside the player, outside the mask
    second, _ = observe(hand, 0.5, previous, None, face)
    assert second.background_change is not None and second.background_gain is not None
    assert second.background_change < 0.05 and abs(second.background_gain) < 0.001
    # The camera's exposure 3 % up: the background's gain says so (log 1.03 = 0.0296), the hand or not.
    brighter, _ = observe(np.clip(backdrop * 1.03, 0, 255).astype(np.uint8), 0.5, previous, None, face)
    assert brighter.background_gain is not None and 0.025 < brighter.background_gain < 0.032


def _panned(virtual: bool) -> list[Observation]:
    """A pan check: the camera turns up to 120 pixels to the right and back over 8 s, so the player slides left in
    the picture; the room slides with the camera, unless it is a replacement image, which stays put."""
    room = scene(0, np.random.default_rng(9))
    wide = np.concatenate([room, room[:, ::-1]], axis=1)  # a room wider than the view
    rng, previous, seen_ = np.random.default_rng(4), None, []
    for step in range(16):
        at = step / 2
        pan = int(120 * np.sin(at / 8 * np.pi))
        view = wide[:, 100:740] if virtual else wide[:, 100 + pan : 740 + pan]
        frame, faces = _person_over(view, -pan, 0.0, rng, room_noise=0.0)
        observation, previous = observe(frame, at, previous, None, faces)
        seen_.append(observation)
    return seen_


def test_the_pan_check_tells_a_real_room_from_a_replaced_background() -> None:
    real, virtual = judge_pan(_panned(virtual=False)), judge_pan(_panned(virtual=True))
    assert real.outcome is PanOutcome.BACKGROUND_MOVED, real.detail
    assert virtual.outcome is PanOutcome.BACKGROUND_STILL, virtual.detail
    assert real.face_travel == virtual.face_travel > 0.1
    assert "virtual background" in virtual.detail


def test_a_pan_check_in_which_the_camera_did_not_move_decides_nothing() -> None:
    rng, previous, seen_ = np.random.default_rng(4), None, []
    backdrop = scene(0, np.random.default_rng(9))
    for step in range(16):
        frame, faces = _person_over(backdrop, 0, 0.0, rng, room_noise=2.0)
        observation, previous = observe(frame, step / 2, previous, None, faces)
        seen_.append(observation)
    assert judge_pan(seen_).outcome is PanOutcome.CAMERA_STILL


def test_a_sections_check_names_map_to_the_checks_they_enable() -> None:
    assert checks_for_policy(["absence"]) == {Check.LEFT_AREA}
    assert checks_for_policy(["extra-person"]) == {Check.EXTRA_PERSON}
    assert checks_for_policy(["camera"]) == {Check.COVERED, Check.FROZEN, Check.LOST, Check.CAMERA_MOVED}
    assert checks_for_policy(["virtual-background"]) == {Check.VIRTUAL_BACKGROUND, Check.BLURRED_BACKGROUND}
    assert checks_for_policy(["earphones"]) == set()  # the ear check is prompted
    assert checks_for_policy(["devices"]) == {Check.SCREEN_CHANGED}  # what the shared screen shows (36.4.3)
    assert checks_for_policy(POLICY_CHECKS) == set(Check) and checks_for_policy([]) == set()
    with pytest.raises(ValueError, match="unknown check 'nose'"):
        checks_for_policy(["absence", "nose"])


def test_a_sections_thresholds_override_the_base_field_by_field() -> None:
    base = Thresholds(absence_s=60, extra_person_s=40)
    section = Thresholds.from_policy({"absence_s": 1.5, "clear_s": 1, "not_a_threshold": 7}, base)
    assert (section.absence_s, section.clear_s, section.extra_person_s) == (1.5, 1.0, 40)
    assert Thresholds.from_policy({"frozen_s": 2}) == Thresholds(frozen_s=2)  # over the defaults without a base
    assert Thresholds.from_policy({}, base) == base


def test_a_disabled_check_raises_nothing_but_still_counts() -> None:
    empty_room = [seen(t * 0.5, faces=0) for t in range(20)]
    no_presence = Monitor(Thresholds(absence_s=3), enabled=frozenset(Check) - {Check.LEFT_AREA})
    assert run(no_presence, empty_room) == [] and no_presence.active() == []
    assert no_presence.conditions[Check.LEFT_AREA].active is not None  # followed, only not given out
    # With "camera" off, a frozen picture of the player raises nothing (and the player in it is not absent).
    presence_only = Monitor(Thresholds(absence_s=3, frozen_s=2), enabled=frozenset({Check.LEFT_AREA}))
    frozen_player = [seen(t * 0.5, change=0.2, moving=0.0) for t in range(20)]
    assert run(presence_only, frozen_player) == []
    assert presence_only.conditions[Check.FROZEN].active is not None
    presence_only.feed(seen(10.0))
    assert presence_only.tick(20.0) == []  # the lost camera too
    assert run(Monitor(Thresholds(absence_s=3)), empty_room)[0][0] is Check.LEFT_AREA  # all checks by default


@pytest.mark.parametrize("size", [(480, 640), (482, 643), (240, 320)])
def test_the_grid_is_the_frames_4x4_block_means(size: tuple[int, int]) -> None:
    rng = np.random.default_rng(3)
    grey = rng.integers(0, 256, size, dtype=np.uint8)
    height, width = size[0] // 4 * 4, size[1] // 4 * 4
    blocks = grey[:height, :width].astype(np.float32).reshape(height // 4, 4, width // 4, 4)
    expected = blocks.mean(axis=(1, 3))
    found = grid(grey)
    assert found.dtype == np.float32 and found.shape == grid_shape(grey)
    assert np.array_equal(found, expected)


def test_observe_given_the_frames_own_detail_bands_sees_the_same() -> None:
    rng = np.random.default_rng(4)
    first, frame = scene(1, rng), scene(1, rng, sway=3)
    _, previous = observe(first, 0.0, None, None, (FACE,))
    computed, _ = observe(frame, 0.5, previous, None, (FACE,))
    grey = to_grey(frame)
    given, _ = observe(frame, 0.5, previous, None, (FACE,), bands=detail_bands(grey, grid_shape(frame)))
    assert given == computed
    assert computed.background_sharpness is not None and computed.edges is not None
    assert computed.brightness == pytest.approx(float(grey.mean()), abs=1e-9)
    assert computed.contrast == pytest.approx(float(grey.std()), abs=1e-9)
