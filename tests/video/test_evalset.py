"""The camera-check evaluation set's pure parts (benchmarks/detectors.py): scoring, labels, analysed frames.

Nothing here composes video or fetches media."""

from __future__ import annotations

import itertools
import math

import pytest

from benchmarks.detectors import (
    COVER_S,
    EXTRA_PERSON,
    LEFT_AREA,
    TARGETS,
    VIRTUAL_BACKGROUND,
    WALK_IN_S,
    WALK_OUT_S,
    ClipLabels,
    ClipSpec,
    Episode,
    Person,
    Raised,
    Unscored,
    analysed_indices,
    labels_for,
    score,
    union_seconds,
)


def test_recall_latency_and_false_alarms_per_player_hour() -> None:
    clips = [
        # Left at 10 s, raised 2 s after the 20 s threshold; a finding at 5 s (before the onset, 2 s tolerance) is
        # a false alarm.
        (ClipLabels("a", 60, (Episode(LEFT_AREA, 10, 60),)), [Raised(LEFT_AREA, 5), Raised(LEFT_AREA, 32)]),
        # Raised 7 s late: detected, but not within 5 s.
        (ClipLabels("b", 60, (Episode(LEFT_AREA, 10, 60),)), [Raised(LEFT_AREA, 37)]),
        # Missed; a finding of another check is not this check's business.
        (ClipLabels("c", 60, (Episode(LEFT_AREA, 10, 60),)), [Raised(EXTRA_PERSON, 20)]),
        # An hour-long negative clip: one false alarm, and one while the check is not scored there.
        (
            ClipLabels("d", 3600, unscored=(Unscored(frozenset({LEFT_AREA}), 200, 300),)),
            [Raised(LEFT_AREA, 100), Raised(LEFT_AREA, 250)],
        ),
    ]
    result = score(LEFT_AREA, 20.0, clips)
    assert (result.episodes, result.detected, result.within) == (3, 2, 1)
    assert result.recall == pytest.approx(2 / 3)
    assert result.recall_within == pytest.approx(1 / 3)
    assert result.latencies == pytest.approx([2.0, 7.0])
    assert (result.median_latency, result.max_latency) == pytest.approx((4.5, 7.0))
    assert result.missed == ["c"] and result.late == ["b"] and result.false_in == ["a", "d"]
    # Negative time: each 60 s clip outside [onset - 2 s, end + 1 s] = 8 s; the hour less its 100 s unscored.
    assert result.false_alarms == 2
    assert result.negative_s == pytest.approx(3 * 8 + 3500)
    assert result.false_per_hour == pytest.approx(2 / ((24 + 3500) / 3600))


def test_one_finding_detects_one_episode_and_a_repeat_is_not_a_false_alarm() -> None:
    labels = ClipLabels("e", 100, (Episode(EXTRA_PERSON, 10, 20), Episode(EXTRA_PERSON, 50, 60)))
    result = score(EXTRA_PERSON, 3.0, [(labels, [Raised(EXTRA_PERSON, 14), Raised(EXTRA_PERSON, 18)])])
    assert (result.detected, result.false_alarms, result.missed) == (1, 0, ["e"])
    assert result.latencies == pytest.approx([1.0])


def test_no_episodes_and_no_negatives_give_no_figures() -> None:
    result = score(VIRTUAL_BACKGROUND, 30.0, [(ClipLabels("f", 60, (Episode(VIRTUAL_BACKGROUND, 0, 60),)), [])])
    assert result.recall == 0 and result.negative_s == 0
    assert math.isnan(result.false_per_hour) and math.isnan(result.median_latency)
    assert not TARGETS[VIRTUAL_BACKGROUND].met(result)
    empty = score(LEFT_AREA, 20.0, [])
    assert math.isnan(empty.recall) and not TARGETS[LEFT_AREA].met(empty)


def test_targets() -> None:
    clips = [(ClipLabels(str(i), 3600, (Episode(LEFT_AREA, 10, 100),)), [Raised(LEFT_AREA, 33)]) for i in range(50)]
    assert TARGETS[LEFT_AREA].met(score(LEFT_AREA, 20.0, clips))
    clips[0] = (clips[0][0], [Raised(LEFT_AREA, 33), Raised(LEFT_AREA, 1000)])  # 1 false alarm in ~50 hours
    assert TARGETS[LEFT_AREA].met(score(LEFT_AREA, 20.0, clips))
    clips[1] = (clips[1][0], [Raised(LEFT_AREA, 36)])  # 6 s late: 49/50 within 5 s, 0.98
    assert TARGETS[LEFT_AREA].met(score(LEFT_AREA, 20.0, clips))
    clips[2] = (clips[2][0], [])  # and one missed: 48/50
    assert not TARGETS[LEFT_AREA].met(score(LEFT_AREA, 20.0, clips))
    clips[0] = (clips[0][0], [Raised(LEFT_AREA, 33)] + [Raised(LEFT_AREA, 1000 + i) for i in range(25)])
    assert score(LEFT_AREA, 20.0, clips[3:] + clips[:1]).false_per_hour > 0.5


def test_union_seconds() -> None:
    assert union_seconds([(5, 10), (8, 12), (20, 30), (-5, 1)], 0, 25) == pytest.approx(1 + 7 + 5)
    assert union_seconds([], 0, 10) == 0


def test_labels_follow_the_people_and_the_camera() -> None:
    player = Person("obama", 150, 320, 100, side=-1, away=((10.0, 40.0),), sway=0)
    labels = labels_for(ClipSpec("g", "leaves", 60, "home", player))
    (episode,) = labels.episodes
    assert episode.check == LEFT_AREA
    assert 10 < episode.onset < 10 + WALK_OUT_S  # the face's centre leaves the frame on the way out
    assert 40 < episode.end < 40 + WALK_IN_S

    second = Person("biden", 100, 540, 80, side=1, away=((-1e9, 15.0), (35.0, 1e9)), sway=0)
    covered = ClipSpec("h", "covered", 60, "home", Person("obama", 150, 320, 100, -1), second, cover=(45.0, 55.0))
    labels = labels_for(covered)
    assert [e.check for e in labels.episodes] == [EXTRA_PERSON, "COVERED"]
    assert 15 < labels.episodes[0].onset < 15 + WALK_IN_S
    assert labels.episodes[1].onset == pytest.approx(45 + COVER_S)
    assert labels.unscored[0].start == 45 and LEFT_AREA in labels.unscored[0].checks

    virtual = labels_for(ClipSpec("i", "virtual", 75, "coffee", player, virtual=True))
    assert Episode(VIRTUAL_BACKGROUND, 0.0, 75) in virtual.episodes


def test_two_analysed_frames_a_second_from_a_15_fps_stream() -> None:
    frames = sorted(analysed_indices(60, 15))
    assert len(frames) == 120 and frames[0] == 0
    assert {b - a for a, b in itertools.pairwise(frames)} == {7, 8}
