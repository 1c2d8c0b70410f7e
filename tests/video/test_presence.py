"""Presence by the person, not the face (36.4.1), another body (36.4.2), and the background checks (36.4): replaced
and blurred backgrounds."""

from __future__ import annotations

import os
from pathlib import Path

import cv2
import numpy as np
import pytest
import skimage.data
from numpy.typing import NDArray

from tests.video.frames import background, composed, room_photo, scene
from video.analysis import FrameAnalyser
from video.checks import (
    Box,
    Check,
    Monitor,
    Observation,
    Scene,
    Thresholds,
    compare_scene,
    face_in_place,
    observe,
    room_gain,
)
from video.detectors import CenterFaces
from video.errors import ModelUnavailableError
from video.models import CENTERFACE, SELFIE_SEGMENTATION, model_path
from video.segmentation import MASK_SIZE, SelfieSegmentation, available_segmenter

MODELS_DIR = Path(os.environ.get("PROCTOR_MODELS_DIR", "models"))
GRID = (MASK_SIZE[1], MASK_SIZE[0])


def _room(seed: int = 1) -> NDArray[np.float32]:
    rng = np.random.default_rng(seed)
    return np.asarray(cv2.resize(rng.uniform(40, 200, (12, 16)).astype(np.float32), MASK_SIZE), dtype=np.float32)


def _player(x0: int = 60, x1: int = 100) -> NDArray[np.bool_]:
    mask = np.zeros(GRID, bool)
    mask[40:, x0:x1] = True
    return mask


def test_a_player_looking_down_is_still_there_and_one_who_left_is_not() -> None:
    room, player = _room(), _player()
    with_player = room.copy()
    with_player[player] = 30.0  # a dark jumper
    remembered = Scene(with_player, player, 0.0)
    # Looking down: the head (the top rows of the region) changes, the body does not; the light dropped by 20 %.
    looking_down = with_player.copy() * 0.8
    looking_down[40:55, 60:100] = room[40:55, 60:100] * 0.8
    seen, body = compare_scene(looking_down, player, [], remembered)
    assert seen and body == 0.0
    # Gone: the room shows where the player was, though the segmentation still marks something there.
    seen, _ = compare_scene(room.copy(), player, [], remembered)
    assert not seen


def test_a_new_body_beside_the_player_is_counted_but_the_player_moving_is_not() -> None:
    room, player = _room(), _player()
    with_player = room.copy()
    with_player[player] = 30.0
    remembered = Scene(with_player, player, 0.0)
    # Someone walks in on the right, no face visible (turned away).
    other = _player(120, 150)
    crowded = with_player.copy()
    crowded[other] = 235.0
    _, body = compare_scene(crowded, player | other, [Box(4 * 75, 4 * 45, 40, 40)], remembered)
    assert body == pytest.approx(other.mean())
    # The player shifted to the right: the new region holds the player's face, so it is the player.
    moved = room.copy()
    shifted = _player(90, 130)
    moved[shifted] = 30.0
    _, body = compare_scene(moved, shifted, [Box(4 * 105, 4 * 45, 40, 40)], remembered)
    assert body == 0.0


def _observed(at: float, **fields: object) -> Observation:
    base: dict[str, object] = {"moving": 0.05, "player_seen": None, "new_body": 0.0}
    base.update(fields)
    return Observation(at, 120.0, 40.0, 2.0, tuple(base.pop("faces", ())), 640, 480, **base)  # type: ignore[arg-type]


def test_36_4_1_presence_rests_on_the_person_when_the_face_is_not_found() -> None:
    monitor = Monitor(Thresholds(absence_s=5))
    face = (Box(260, 100, 80, 90),)
    looking_down = [_observed(t * 0.5, faces=face if t < 2 else (), player_seen=True) for t in range(60)]
    assert [f.check for o in looking_down for f in monitor.feed(o)] == []
    gone = [_observed(30 + t * 0.5, player_seen=False) for t in range(12)]
    found = [(f.check, f.started, o.at) for o in gone for f in monitor.feed(o)]
    assert found == [(Check.LEFT_AREA, 30.0, 35.0)]  # raised 5 s after the player was gone (absence_s)
    assert Thresholds().absence_s == 5.0


def test_36_4_2_a_body_without_a_face_beside_the_player_is_another_person() -> None:
    monitor = Monitor(Thresholds(extra_person_s=2))
    face = (Box(260, 100, 80, 90),)
    walking_by = [_observed(t * 0.5, faces=face, new_body=0.08 if 4 <= t < 12 else 0.0) for t in range(20)]
    found = [(f.check, f.started, f.detail) for o in walking_by for f in monitor.feed(o)]
    assert found[0][:2] == (Check.EXTRA_PERSON, 2.0) and "no face" in found[0][2]
    # With nobody else in view, a body where the player was is no second person (the player is away: left-area).
    empty = Monitor(Thresholds(extra_person_s=2, absence_s=60))
    assert [f for t in range(20) for f in empty.feed(_observed(t * 0.5, new_body=0.2, player_seen=False))] == []


def test_a_replaced_background_is_found_while_the_encoder_warms_up() -> None:
    """The first seconds of a live stream: the encoder refines the picture and restarts as the bitrate ramps up (the
    background changes by 1.5 grey levels in those frames), but the refinements have no bias: a replacement
    picture's brightness trace stays flat while the person follows the camera's exposure; a real room follows it
    too, a second late."""
    monitor = Monitor()
    rng = np.random.default_rng(4)
    found = []
    face = (Box(260, 100, 80, 90),)
    for step in range(40):
        at = step / 2
        refining = step % 3 == 0
        o = _observed(at, faces=face, background_change=1.5 if refining else 0.0, background_brightness=100.0,
                      background_gain=float(rng.normal(0, 0.0002)), person_gain=0.01 * np.cos(at / 10))  # fmt: skip
        found += [(f.check, f.started, at) for f in monitor.feed(o)]
    assert found == [(Check.VIRTUAL_BACKGROUND, 7.5, 10.5)]
    detail = monitor.conditions[Check.VIRTUAL_BACKGROUND].active.detail  # type: ignore[union-attr]
    assert detail.startswith("the background does not follow the camera: its brightness stayed within 0.")
    assert "ask for the pan check" in detail
    # A real room: it follows the camera's exposure a second (two analysed frames) late.
    exposure = [0.01 * np.cos(step / 8) for step in range(80)]
    real = Monitor()
    for step in range(80):
        at = step / 2
        o = _observed(at, faces=face, background_change=float(rng.uniform(0.0, 0.4)), background_brightness=100.0,
                      background_gain=0.0 if step < 2 else exposure[step - 2], person_gain=exposure[step])  # fmt: skip
        assert real.feed(o) == []
    # A real room in steady light: neither moves; the person's own movement (a mug before the face for a frame,
    # a turn) makes their trace jump and come back, which the running median leaves out.
    steady = Monitor()
    jumps = {0: 0.03, 1: -0.03}
    for step in range(80):
        o = _observed(step / 2, faces=face, background_change=0.0, background_brightness=100.0,
                      background_gain=float(rng.normal(0, 0.0002)), person_gain=jumps.get(step % 4, 0.0))  # fmt: skip
        assert steady.feed(o) == []
    # Through Chromium (benchmarks/browser.py, browser-virtual-mid-009-box, recorded): the app's replacement comes
    # on at 25.4 s; the player follows the camera up 6 % and down 3 % within 8 s. Found within 15 s of the switch
    # (judging the person's trace by its first and last quarters, it was found after 21 s).
    recorded = [
        (24.3, +0.36, +1.04),
        (24.7, +1.10, +0.66),
        (25.3, +2.38, +0.76),
        (25.7, +1.07, +0.54),
        (26.3, +1.91, +0.33),
        (26.7, -0.04, +0.28),
        (27.3, -0.02, +0.52),
        (27.7, -0.04, -0.04),
        (28.3, +0.12, +0.76),
        (28.7, -0.01, +0.11),
        (29.3, -0.00, +0.93),
        (29.7, -0.05, +0.38),
        (30.3, +0.01, +0.97),
        (30.7, -0.01, +0.29),
        (31.3, +0.05, +0.22),
        (31.7, -0.01, +0.29),
        (32.3, +0.00, +0.36),
        (32.7, +0.00, -0.36),
        (33.3, +0.01, -0.76),
        (33.7, -0.00, -0.57),
        (34.3, -0.01, -0.93),
        (34.7, +0.01, +0.14),
        (35.3, -0.03, -0.54),
        (35.7, -0.01, +0.21),
        (36.3, +0.02, +0.35),
        (36.7, -0.00, +0.18),
        (37.3, -0.04, +0.07),
        (37.7, +0.03, +0.49),
        (38.3, +0.02, +0.10),
        (38.7, +0.03, +0.63),
        (39.3, -0.01, +0.11),
        (39.7, -0.01, -0.18),
        (40.3, -0.05, -0.03),
        (40.7, +0.03, +0.25),
        (41.3, -0.01, -0.71),
    ]  # (time, the background's and the person's exposure change since the last analysed frame, %)
    swinging = Monitor()
    raised = []
    for at, room, person in recorded:
        o = _observed(at, faces=face, background_change=0.0, background_brightness=100.0,
                      background_gain=room / 100, person_gain=person / 100)  # fmt: skip
        raised += [(f.check, at) for f in swinging.feed(o) if f.ended is None]
    ((check, at),) = raised
    assert check == Check.VIRTUAL_BACKGROUND and at - 25.4 <= 15.0


def _blurred_scene(sigma: float, wall: bool = False) -> tuple[NDArray[np.uint8], NDArray[np.float32]]:
    """The astronaut (sharp) in front of a room (a real photo) blurred by ``sigma`` pixels (0: sharp), or a plain
    wall; and a person mask on the grid."""
    coffee = skimage.data.coffee()[..., ::-1]  # type: ignore[no-untyped-call]  # a real photo (CC0, scikit-image)
    room = np.full((480, 640, 3), 150, np.uint8) if wall else cv2.resize(coffee, (640, 480))
    if sigma:
        room = cv2.GaussianBlur(room, (0, 0), sigma)
    frame = room.copy()
    person = scene(1, np.random.default_rng(7))
    frame[60:, 140:500] = person[60:, 140:500]
    mask = np.zeros(GRID, np.float32)
    mask[15:, 35:125] = 1.0
    return frame, mask


@pytest.mark.parametrize(("sigma", "wall", "blurred"), [(12, False, True), (8, False, True), (0, False, False),
                                                         (0, True, False), (12, True, False)])  # fmt: skip
def test_a_blurred_background_behind_a_sharp_player_but_not_a_plain_wall(
    sigma: float, wall: bool, blurred: bool
) -> None:
    frame, mask = _blurred_scene(sigma, wall)
    face = (Box(268, 106, 64, 79),)
    monitor, previous, found = Monitor(), None, []
    rng = np.random.default_rng(5)
    for step in range(30):
        alive = frame.copy()
        alive[100:300, 200:440] = np.roll(frame[100:300, 200:440], step % 3, axis=1)  # the player moves a little
        alive = np.clip(alive.astype(np.int16) + rng.integers(-2, 3, frame.shape), 0, 255).astype(np.uint8)
        observation, previous = observe(alive, step / 2, previous, None, face, mask)
        found += [f.check for f in monitor.feed(observation)]
    assert (Check.BLURRED_BACKGROUND in found) is blurred, observation
    assert Check.BLURRED_BACKGROUND.article == "36.4"


@pytest.fixture(scope="module")
def models() -> tuple[CenterFaces, SelfieSegmentation]:
    try:
        return CenterFaces(model_path(MODELS_DIR, CENTERFACE)), SelfieSegmentation(
            model_path(MODELS_DIR, SELFIE_SEGMENTATION)
        )
    except ModelUnavailableError as error:
        if os.environ.get("CI"):
            raise  # CI fetches the models (scripts/test): a missing model there is a failure
        pytest.skip(f"{error}")


def test_the_segmentation_marks_the_player(models: tuple[CenterFaces, SelfieSegmentation]) -> None:
    _, people = models
    mask = people.segment(scene(1, np.random.default_rng(1)))
    assert mask.shape == GRID and mask.dtype == np.float32
    assert mask[60, 80] > 0.5  # the astronaut's chest, in the middle of the frame
    assert available_segmenter(Path("/nonexistent"))[0] is None


def test_a_player_whose_face_is_lost_stays_present_through_the_models(
    models: tuple[CenterFaces, SelfieSegmentation],
) -> None:
    faces, people = models
    analyser = FrameAnalyser(Monitor(Thresholds(absence_s=3)), faces, people)
    rng = np.random.default_rng(3)
    frame = scene(1, np.random.default_rng(1))
    findings = []
    for step in range(6):
        noisy = np.clip(frame.astype(np.int16) + rng.integers(-2, 3, frame.shape), 0, 255).astype(np.uint8)
        findings += analyser.analyse(noisy, step / 2)
    assert analyser.scene is not None
    # The head bowed over the board: the face is covered by the top of the head (hair-dark), the body unchanged.
    bowed = frame.copy()
    bowed[60:200, 220:420] = (40, 45, 50)
    observations = []
    for step in range(16):
        breathing = bowed.copy()
        breathing[200:420, 140:500] = np.roll(bowed[200:420, 140:500], step % 3, axis=0)  # the shoulders move
        observations.append(analyser.observe(breathing, 3 + step / 2))
    findings += [f for o in observations for f in analyser.judge(o)]
    assert all(not o.faces for o in observations[1:]) and all(o.player_seen for o in observations)
    assert [f.check for f in findings] == []
    # Gone: the room (the frame's own background) where the player sat.
    room = background(np.random.default_rng(1))
    gone = [analyser.observe(room, 11 + step / 2) for step in range(10)]
    left = [f for o in gone for f in analyser.judge(o)]
    assert not any(o.player_seen for o in gone) and [f.check for f in left] == [Check.LEFT_AREA]


def test_a_player_bent_over_the_board_is_still_there() -> None:
    """Only the top of the head is left, at the frame's bottom edge below where the player sat; it bobs."""
    room, player = _room(), _player()
    with_player = room.copy()
    with_player[player] = 30.0
    remembered = Scene(with_player, player, 0.0)
    bowed = room.copy()
    head = np.zeros(GRID, bool)
    head[108:, 70:92] = True
    bowed[head] = 25.0
    moved = np.zeros(GRID, bool)
    moved[110:, 72:90] = True  # the head bobbing, down to the frame's edge
    seen, body = compare_scene(bowed, head, [], remembered, moved=moved)
    assert seen and body == 0.0
    # The same hair-dark patch that does not move (a cushion on the chair): nobody there.
    assert not compare_scene(bowed, head, [], remembered, moved=np.zeros(GRID, bool))[0]
    # Moving, but off to the side of where the player sat (a pet): nobody there.
    aside = np.zeros(GRID, bool)
    aside[108:, 130:152] = True
    assert not compare_scene(bowed, aside, [], remembered, moved=np.roll(moved, 60, axis=1))[0]
    # The head bobs against the room by 12-20 grey levels; where a player walked away from a bare wall, the encoder
    # refreshing their ghost moves the same cells by 4-5 (live-leaves-005-cup): nobody there.
    change = np.where(moved, np.linspace(12, 20, moved.size).reshape(GRID), 0.0).astype(np.float32)
    assert compare_scene(bowed, head, [], remembered, moved=moved, change=change)[0]
    ghost = np.where(moved, 4.5, 0.0).astype(np.float32)
    empty = np.zeros(GRID, bool)
    assert not compare_scene(room, empty, [], remembered, moved=moved, change=ghost)[0]


def _placed(room: NDArray[np.uint8], dx: int, dy: int, rng: np.random.Generator) -> NDArray[np.uint8]:
    """The astronaut as scene() places her, moved by (dx, dy) pixels over ``room``, with the camera's noise."""
    person = scene(1, np.random.default_rng(1))[60:420, 140:500]
    frame = room.copy()
    top, left = 60 + dy, 140 + dx
    rows, cols = slice(max(0, top), min(480, top + 360)), slice(max(0, left), min(640, left + 360))
    if rows.start < rows.stop and cols.start < cols.stop:
        frame[rows, cols] = person[rows.start - top : rows.stop - top, cols.start - left : cols.stop - left]
    return np.clip(frame.astype(np.int16) + rng.integers(-2, 3, frame.shape), 0, 255).astype(np.uint8)


@pytest.mark.parametrize(
    ("dx", "dy", "bobbing", "bent"),
    [(0, 110, True, True), (0, 0, True, True), (260, -20, False, False), (0, 0, False, False)],
)
def test_a_player_who_went_out_through_the_bottom_edge_is_bent_down_not_gone(
    models: tuple[CenterFaces, SelfieSegmentation], dx: int, dy: int, bobbing: bool, bent: bool
) -> None:
    """Bending down to pick something up, or over the board: the face was last seen lower than at rest, or it
    vanished from where it sat between two analysed frames, and the player still moves something where they sat
    (the chair).  Getting up and walking out by a side (seen on the way) is leaving; and so is a face
    that vanished where it sat when nothing moves there afterwards (a quick walk-out between two analysed frames):
    the absence then counts from when the player went out."""
    faces, people = models
    analyser = FrameAnalyser(Monitor(Thresholds(absence_s=3, bent_down_s=10)), faces, people)
    rng = np.random.default_rng(3)
    room = background(np.random.default_rng(1))
    raised = []
    for step in range(8):  # at rest: the scene is taken
        raised += [(f.check, step / 2) for f in analyser.analyse(_placed(room, 0, 0, rng), step / 2)]
    assert analyser.scene is not None and analyser.rest_face is not None
    for step in range(2):  # on the way (down, or up and aside): the face is still found
        raised += [(f.check, 4 + step / 2) for f in analyser.analyse(_placed(room, dx, dy, rng), 4 + step / 2)]
    for step in range(40):  # out of the picture for 20 s
        at = 5 + step / 2
        frame = _placed(room, 700, -20, rng)
        if bobbing:  # below the picture, the player still moves what is in it where they sat (the chair)
            frame[300:340, 300:340] = 60 + 50 * (step % 2)
        raised += [(f.check, at) for f in analyser.analyse(frame, at) if f.ended is None]
    # Present for bent_down_s (10 s) from when the face was missed (5-5.5 s), then absent for absence_s (3 s); the
    # bent-down player is not someone in view, so the still room raises no frozen camera.
    (check, at), *others = raised
    assert check == Check.LEFT_AREA and (18.0 <= at <= 18.5 if bent else 8.0 <= at <= 8.5) and others == []


def test_a_bare_wall_the_player_walked_away_from_is_no_covered_lens() -> None:
    """A flat picture is a covered lens unless it is the room the player sat in: a bare wall left behind is as
    flat as a hand over the lens, but it is the room, so the absence counts (36.4.1)."""
    wall = np.full(GRID, 185.0, np.float32)
    player = _player()
    with_player = wall.copy()
    with_player[player] = 60.0
    remembered = Scene(with_player, player, 0.0)
    rng = np.random.default_rng(2)
    frame = np.clip(185 * 1.05 + rng.normal(0, 1, (480, 640, 3)), 0, 255).astype(np.uint8)  # the exposure rose 5 %
    hand = np.full((480, 640, 3), (80, 110, 150), np.uint8)  # a hand over the lens: flat, darker, skin-toned
    empty = np.zeros(GRID, np.float32)
    (room, _), (covered, _) = (observe(f, 0.0, None, None, (), empty, remembered) for f in (frame, hand))
    assert room.shows_room and not covered.shows_room
    for picture, expected in ((frame, Check.LEFT_AREA), (hand, Check.COVERED)):
        monitor, previous, found = Monitor(Thresholds(absence_s=5, covered_s=3)), None, []
        for step in range(14):
            observation, previous = observe(picture, step / 2, previous, None, (), empty, remembered)
            found += [f.check for f in monitor.feed(observation) if f.ended is None]
        assert found == [expected]


def test_36_4_2_a_person_passing_behind_the_head_is_found_through_a_short_gap() -> None:
    """Passing behind the player, the other face is hidden by the player's head for a moment: a gap of a second
    does not end the episode; after a longer one the episode goes on only when the face is seen again (below: seen
    again after 1.5 s, it is one person; after more than PASS_GAP_S, two glimpses)."""
    face, other = Box(260, 100, 80, 90), Box(40, 90, 70, 80)
    counts = [1, 1, 2, 2, 2, 1, 1, 2, 2, 1, 1, 1, 1, 1]  # one analysed frame every 0.5 s
    monitor = Monitor(Thresholds(extra_person_s=2))
    found = []
    for i, n in enumerate(counts):
        found += [(f.check, f.started, i / 2) for f in monitor.feed(_observed(i / 2, faces=(face, other)[:n]))]
    assert found == [(Check.EXTRA_PERSON, 1.0, 3.0)]
    apart = [1, 2, 2, 1, 1, 1, 2, 2, 1, 1, 1]  # 1.5 s between two glimpses of 1 s each: one person passing
    monitor = Monitor(Thresholds(extra_person_s=2))
    found = [(f.check, f.started, i / 2) for i, n in enumerate(apart)
             for f in monitor.feed(_observed(i / 2, faces=(face, other)[:n]))]  # fmt: skip
    assert found == [(Check.EXTRA_PERSON, 0.5, 3.0)]
    apart = [1, 2, 2, 1, 1, 1, 1, 1, 1, 1, 2, 2, 1, 1, 1]  # 3.5 s between them: two glimpses, no finding
    monitor = Monitor(Thresholds(extra_person_s=2))
    assert [f for i, n in enumerate(apart) for f in monitor.feed(_observed(i / 2, faces=(face, other)[:n]))] == []


def test_the_players_own_body_leaning_out_is_no_new_body_but_a_still_body_at_the_edge_is() -> None:
    room, player = _room(), _player()
    with_player = room.copy()
    with_player[player] = 30.0
    remembered = Scene(with_player, player, 0.0)
    # Leaning out to the left: the player's region shows the room again, the body is now where the room was.
    leaning = room.copy()
    leaning[40:, 0:40] = 30.0
    seen, body = compare_scene(leaning, _player(0, 40), [Box(0, 170, 60, 70)], remembered)
    assert body == 0.0
    # Someone standing close beside the seated player, the head above the frame: the segmentation does not mark a
    # headless body, but a large still region unlike the room stands from the frame's top to its bottom.
    beside = with_player.copy()
    beside[:, 120:150] = 240.0
    unmarked = player.copy()
    still = np.zeros(GRID, bool)
    seen, body = compare_scene(beside, unmarked, [Box(4 * 75, 4 * 45, 40, 40)], remembered, moved=still)
    assert seen and body == pytest.approx(GRID[0] * 30 / beside.size, rel=0.05)
    # The same region changing all over (a moving background: a screen, a swinging door) is no body at rest.
    changing = still.copy()
    changing[:, 120:150] = True
    assert compare_scene(beside, unmarked, [Box(4 * 75, 4 * 45, 40, 40)], remembered, moved=changing)[1] == 0.0
    # A thing that moved in the room and came to rest, from the top edge but not down to the bottom (a box on a
    # shelf, an opened door's upper part), or from the bottom but not up to the top (a chair pushed in): no body.
    for rows in (slice(0, 90), slice(40, None)):
        thing = with_player.copy()
        thing[rows, 120:170] = 240.0
        assert compare_scene(thing, unmarked, [Box(4 * 75, 4 * 45, 40, 40)], remembered, moved=still)[1] == 0.0


def test_the_models_wait_while_nothing_moves_but_look_at_once_when_something_does(
    models: tuple[CenterFaces, SelfieSegmentation],
) -> None:
    """The dear part of the analysis runs every few seconds for a player at the board in a still room, about once a
    second while something moves outside the player, and at the next frame when the player's face moves fast."""
    faces, people = models
    analyser = FrameAnalyser(Monitor(Thresholds()), faces, people)
    rng = np.random.default_rng(3)
    room = room_photo()

    def runs(frames: list[NDArray[np.uint8]], start: float) -> list[bool]:
        ran = []
        for step, frame in enumerate(frames):
            before = analyser.searches
            analyser.analyse(frame, start + step / 2)
            ran.append(analyser.searches > before)
        return ran

    # 12 s at the board, swaying a little: after the first look, the models run about every 2.4 s.
    still = runs([composed(room, rng, step % 3, 1.0, replaced=False) for step in range(24)], 0.0)
    assert 4 <= sum(still[4:]) <= 6, still
    # Someone walks across the back of the room, on the left (outside the player): about once a second.
    walking = []
    for step in range(12):
        frame = composed(room, rng, 0, 1.0, replaced=False)
        frame[40:200, 10 + 9 * step : 70 + 9 * step] = 230
        walking.append(frame)
    assert sum(runs(walking, 12.0)) >= 5
    # Still again until the models have just run; then the player gets up (the face moves far): the models do not
    # wait for their interval but look at that very frame (where the face went), and wait again once it is found.
    at = 18.0
    while not runs([composed(room, rng, 0, 1.0, replaced=False)], at)[0] or at < 20:
        at += 0.5
    up = np.roll(composed(room, rng, 0, 1.0, replaced=False), -150, axis=0)
    assert runs([up, up], at + 0.5) == [True, False]


def test_someone_standing_close_behind_the_player_is_counted_while_the_players_face_is_where_it_sat() -> None:
    """The set's second-body-076-building: a body without a face stands close behind the seated player, covering
    more than half of the region the player filled.  With the player's face where it sat, the rest is another body
    (36.4.2); with the face gone aside (the player leaning out), it is the player's own body."""
    room, player = _room(), _player()
    with_player = room.copy()
    with_player[player] = 30.0
    face = Box(4 * 72, 4 * 45, 40, 40)  # where the player's face sat
    remembered = Scene(with_player, player, 0.0, face)
    behind = np.zeros(GRID, bool)
    behind[:, 64:140] = True  # from the top of the picture to its bottom, over most of the player's region
    crowded = with_player.copy()
    crowded[behind] = 235.0
    crowded[60:80, 68:85] = 30.0  # the player's head, in front of them
    marked = player | behind
    still = np.zeros(GRID, bool)
    _, body = compare_scene(crowded, marked, [face], remembered, moved=still)
    assert body > 0.2
    leaned = Box(face.x - 120, face.y, 40, 40)
    assert compare_scene(crowded, marked, [leaned], remembered, moved=still)[1] == 0.0
    assert face_in_place([face], face) and not face_in_place([leaned], face) and not face_in_place([face], None)


def test_a_person_passing_behind_the_player_and_hidden_by_their_head_is_one_person() -> None:
    """The set's second-passing-078-cup at 5 fps: the passer's face is found at 42.4 and 42.8 s, hidden behind the
    player's head for 2.6 s, found again at 45.4 on the other side: one person, raised when seen again, from their
    first sighting (36.4.2).  Sightings further apart are not joined."""
    one, two = (Box(200, 110, 130, 130),), (Box(200, 110, 130, 130), Box(470, 120, 120, 120))
    times = [41.8, 42.4, 42.8, 43.4, 43.8, 44.4, 44.8, 45.4, 45.8, 46.4]
    shown = [one, two, two, one, one, one, one, two, two, one]
    monitor = Monitor(Thresholds(extra_person_s=2))
    found = [(f.check, f.started, o.at) for o in (_observed(t, faces=f) for t, f in zip(times, shown, strict=True))
             for f in monitor.feed(o)]  # fmt: skip
    assert found == [(Check.EXTRA_PERSON, 42.4, 45.4)]
    # Hidden for 3.5 s: two glimpses, no finding.
    later = Monitor(Thresholds(extra_person_s=2))
    times = [42.4, 42.8, 43.4, 44.4, 45.4, 46.4, 46.8, 47.4]
    shown = [two, two, one, one, one, one, two, one]
    assert [f for t, f_ in zip(times, shown, strict=True) for f in later.feed(_observed(t, faces=f_))] == []


def test_a_room_that_changed_as_a_whole_holds_no_new_body_but_a_large_body_beside_the_player_does() -> None:
    """A background effect switched on (or the camera moved) after the scene was taken: everything behind the player
    differs from the scene, which is stale; what differs is no second person (36.4.2) until a new scene is taken.
    Someone large standing beside the player changes a part of the room only, and is counted, whatever their shirt
    does to the room's mean brightness."""
    room, player = _room(), _player()
    with_player = room.copy()
    with_player[player] = 30.0
    remembered = Scene(with_player, player, 0.0)
    still = np.zeros(GRID, bool)
    face = [Box(4 * 75, 4 * 45, 40, 40)]
    other = _player(120, 150)
    replaced = _room(seed=7)  # another picture behind the player
    replaced[player] = 30.0
    assert compare_scene(replaced, player | other, face, remembered, moved=still) == (True, 0.0)
    # The same marked region in the room as it was is a new body.
    crowded = with_player.copy()
    crowded[other] = 235.0
    assert compare_scene(crowded, player | other, face, remembered, moved=still)[1] > 0.0
    # A body covering a third of the room in a white shirt, the camera's exposure down by 10 % for it.
    large = _player(105, 215)
    crowded = with_player * 0.9
    crowded[large] = 250.0
    _, body = compare_scene(crowded, player | large, face, remembered, moved=still)
    assert body == pytest.approx(large.mean())
    # Someone standing close beside the player, filling half of the room from the frame's top to its bottom (the
    # evaluation set's second-body clips: 0.49 of the room still looked as it did, and a rule of 0.5 missed them).
    # A player at the left of the picture, someone standing to their right covering 59 % of the room.
    left = _player(5, 35)
    at_left = room.copy()
    at_left[left] = 30.0
    close = np.zeros(GRID, bool)
    close[:, 80:] = True
    crowded = at_left.copy()
    crowded[close] = 235.0
    _, body = compare_scene(crowded, left | close, [Box(4 * 12, 4 * 45, 40, 40)], Scene(at_left, left, 0.0),
                            moved=still)  # fmt: skip
    assert body == pytest.approx(close.mean())


def test_the_rooms_gain_is_the_cameras_not_the_mean_of_whatever_stands_in_front_of_it() -> None:
    room = _room()
    assert room_gain(room * 0.8, room) == pytest.approx(0.8, abs=0.02)
    covered = room * 1.2
    covered[:, :110] = 250.0  # 40 % of it behind someone's shirt
    assert room_gain(covered, room) == pytest.approx(1.2, abs=0.02)
    median = float(np.median(covered)) / float(np.median(room))
    assert abs(median - 1.2) > 0.1  # what the medians would have said


def test_in_a_dim_room_the_models_look_at_the_frame_the_face_went_down_in(
    models: tuple[CenterFaces, SelfieSegmentation],
) -> None:
    """In dim light a face differs from the wall behind it by less than a face moving in a lit room does; the models
    must still look at the very frame the player bent down in, or the way the player went (down, not out by a side)
    is not known (36.4.1)."""
    faces, people = models
    analyser = FrameAnalyser(Monitor(Thresholds()), faces, people)
    rng = np.random.default_rng(5)
    room = (room_photo().astype(np.float32) * 0.75).astype(np.uint8)
    gain = 0.45

    def look(frame: NDArray[np.uint8], at: float) -> bool:
        before = analyser.searches
        analyser.analyse(frame, at)
        return analyser.searches > before

    at = 0.0
    while not look(composed(room, rng, at % 3 > 1, gain, replaced=False), at) or at < 6:
        at += 0.5
    assert len(analyser.last_faces) == 1
    seated = composed(room, rng, 0, gain, replaced=False)
    down = np.clip(room.astype(np.float32) * gain + rng.normal(0, 2.5, room.shape), 0, 255).astype(np.uint8)
    down[330:] = seated[120:270]  # only the top of the head is left, at the bottom edge
    assert look(down, at + 0.5)


def test_the_players_own_arm_widening_their_mask_is_no_new_body_but_a_body_apart_is() -> None:
    """A region the segmentation joins to the player whose face is in view, a few per cent of the frame, is the
    player's own shoulder or arm (turning back from a turn, reaching out); the same region standing apart is somebody
    else (36.4.2)."""
    room, player = _room(), _player()
    with_player = room.copy()
    with_player[player] = 30.0
    remembered = Scene(with_player, player, 0.0)
    face = [Box(4 * 75, 4 * 45, 40, 40)]
    still = np.zeros(GRID, bool)
    for left, attached in ((100, True), (140, False)):
        arm = np.zeros(GRID, bool)
        arm[60:110, left : left + 22] = True
        frame = with_player.copy()
        frame[arm] = 240.0
        _, body = compare_scene(frame, player | arm, face, remembered, moved=still)
        assert body == (0.0 if attached else pytest.approx(arm.mean())), (left, body)


def test_a_background_blurred_between_the_models_runs_is_found_within_the_blur_window(
    models: tuple[CenterFaces, SelfieSegmentation],
) -> None:
    """The blur check's detail bands are measured on the frames the models run on and reused between them: a blur
    switched on meanwhile stirs the models (the whole room changed) and is found within its window."""
    faces, people = models
    analyser = FrameAnalyser(Monitor(), faces, people)
    room, rng = room_photo(), np.random.default_rng(11)
    raised: list[float] = []
    for step in range(60):
        at = step / 2
        sway = round(3 * np.sin(step / 3))
        frame = composed(room, rng, sway, 1.0, replaced=False, blur=12.0 if at >= 10 else 0.0)
        raised += [f.started for f in analyser.analyse(frame, at) if f.check is Check.BLURRED_BACKGROUND]
    assert analyser.searches < analyser.frames  # the models waited between runs
    assert raised and 10 <= raised[0] <= 10 + 8, raised


def test_when_the_analysis_falls_behind_the_models_run_on_at_most_every_other_frame(
    models: tuple[CenterFaces, SelfieSegmentation],
) -> None:
    """An overloaded machine analyses fewer frames than the ingest's 2 a second; the models, scheduled in seconds and
    on a face's movement between two analysed frames, would then run on every one of them, and cost the more, the
    further behind the analysis is.  A player swaying 6 px from one analysed frame to the next: half a second apart
    (on time) the models look at every frame, as before; a second apart at the rate of 2 (behind), at every other
    one; a second apart at a rate of 1 a second set by the operator (on time), at every one.  Nobody in view, at
    every frame even when behind: the player's return is looked for at once."""
    faces, people = models
    rng = np.random.default_rng(9)
    room = room_photo()
    swaying = [composed(room, rng, 6 * (step % 2), 1.0, replaced=False) for step in range(10)]
    empty = [(room + rng.normal(0, 2.5, room.shape)).clip(0, 255).astype(np.uint8) for _ in range(6)]

    def runs(gap: float, rate: float, frames: list[NDArray[np.uint8]]) -> list[int]:
        analyser = FrameAnalyser(Monitor(Thresholds()), faces, people, rate=rate)
        ran = []
        for step, frame in enumerate(frames):
            before = analyser.searches
            analyser.observe(frame, step * gap)
            ran.append(int(analyser.searches > before))
        return ran

    assert runs(0.5, 2.0, swaying) == [1] * 10
    assert runs(1.0, 2.0, swaying) == [1, 0] * 5
    assert runs(1.0, 1.0, swaying) == [1] * 10
    assert runs(1.0, 2.0, empty) == [1] * 6
