"""The side camera's evaluation set's pure parts (benchmarks/side_camera.py): its labels and its make-up.

Nothing here composes video or fetches media."""

from __future__ import annotations

from benchmarks.evalset import COVER_S, COVERED, EXTRA_PERSON, FROZEN, LEFT_AREA, Raised, score, score_all
from benchmarks.side_camera import (
    APPROVE_AT,
    CAMERA_MOVED,
    MOVE_RAMP,
    SIDE_CHECKS,
    SIDE_WITHIN,
    Move,
    SideSpec,
    side_labels,
    side_set,
)
from video.checks import Check, Thresholds
from video.devices import DEVICE_CHECKS, Device


def spec(**extra: object) -> SideSpec:
    return SideSpec("clip", "moved", 60.0, "home", "building", "obama", **extra)  # type: ignore[arg-type]


def test_the_set_scores_what_the_service_raises_on_a_side_camera() -> None:
    raised = {Check[name] for name in SIDE_CHECKS}
    assert raised == DEVICE_CHECKS[Device.SIDE] - {Check.LOST}  # lost is the stream's, not the picture's


def test_a_moved_camera_is_one_episode_from_the_move_to_its_return() -> None:
    labels = side_labels(spec(moves=(Move("slide", 30.0, None, dx=0.1),)))
    assert [(e.check, e.onset, e.end, e.within) for e in labels.episodes] == [
        (CAMERA_MOVED, 30.0, 60.0, SIDE_WITHIN[CAMERA_MOVED])
    ]
    back = side_labels(spec(moves=(Move("tilt", 20.0, 45.0, angle=8.0),)))
    assert back.episodes[0].end == 45.0 + MOVE_RAMP["tilt"]
    # Moved, the camera may no longer show the player: the person checks are not scored, until the view is back
    # and the findings had time to clear.
    scored_then = score(LEFT_AREA, [(back, [Raised(LEFT_AREA, 40.0)])])
    assert scored_then.false_alarms == 0
    later = score(LEFT_AREA, [(back, [Raised(LEFT_AREA, 45.0 + MOVE_RAMP["tilt"] + Thresholds().clear_s + 2)])])
    assert later.false_alarms == 1
    # Before the arbiter approves the view there is nothing to compare with.
    early = score(CAMERA_MOVED, [(labels, [Raised(CAMERA_MOVED, APPROVE_AT - 1)])])
    assert early.false_alarms == 0 and early.detected == 0


def test_covered_and_frozen_are_episodes_and_leave_the_rest_unscored() -> None:
    labels = side_labels(spec(covers=((20.0, 10.0, "black"),), freezes=((40.0, 12.0),)))
    assert [(e.check, e.onset, e.end) for e in labels.episodes] == [
        (COVERED, 20.0 + COVER_S, 30.0),
        (FROZEN, 40.0, 52.0),
    ]
    during = [Raised(CAMERA_MOVED, 25.0), Raised(EXTRA_PERSON, 45.0), Raised(COVERED, 22.0), Raised(FROZEN, 46.0)]
    together = score_all(SIDE_CHECKS, [(labels, during)])
    assert together.detected == 2 and together.false_alarms == 0


def test_the_set() -> None:
    specs = side_set()
    assert side_set() == specs  # seeded: every run composes the same clips
    moves = [m for s in specs for m in s.moves]
    assert len(moves) == 24
    assert {m.kind for m in moves} == {"slide", "down", "tilt", "closer", "away"}
    assert sum(m.back is not None for m in moves) == 4
    assert sum(bool(s.covers) for s in specs) == 3 and sum(bool(s.freezes) for s in specs) == 3
    negatives = score_all(SIDE_CHECKS, [(side_labels(s), []) for s in specs])
    assert negatives.negative_hours >= 1.2
    present = [s for s in specs if s.scenario == "present"]
    assert all(s.leans and s.reaches for s in present)  # hard negatives in every stream
    assert any(s.gain < 1 for s in present) and any(s.lights for s in present)
    assert len({s.name for s in specs}) == len(specs)


def test_the_quick_set_has_one_of_each() -> None:
    specs = side_set(quick=True)
    assert {m.kind for s in specs for m in s.moves} == {"slide", "down", "tilt", "closer", "away"}
    assert any(s.covers for s in specs) and any(s.freezes for s in specs)
    assert len(specs) <= 10
