"""Forbidden-move detection against labelled data, symmetries and a second implementation."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from renju.check_forbid import get_foul_type

from engine.board import SYMMETRIES, Color, Position, column_of, format_point, parse_point, row_of
from engine.forbidden import (
    FiveEye,
    ForbiddenKind,
    LineShape,
    forbidden_kind,
    forbidden_points,
    line_shape,
    makes_five,
)
from tests.conftest import DATA, load_jsonl

VECTORS = load_jsonl(DATA / "forbidden" / "vectors_subset.jsonl")
HAND_CASES = load_jsonl(DATA / "forbidden" / "hand_cases.jsonl")


def labels(found: dict[int, ForbiddenKind]) -> dict[str, str]:
    return {format_point(point): kind.value for point, kind in found.items()}


def expected(case: dict[str, Any], mode: FiveEye, key: str = "forbidden") -> Any:
    if mode is FiveEye.STRICT and f"{key}_rif_strict" in case:
        return case[f"{key}_rif_strict"]
    return case[key]


@pytest.mark.parametrize("mode", list(FiveEye))
def test_every_labelled_position_agrees_point_for_point(mode: FiveEye) -> None:
    mismatches = []
    for case in VECTORS:
        position = Position.from_notation(case["black"], case["white"])
        got = labels(forbidden_points(position, mode))
        if got != expected(case, mode):
            mismatches.append((case["source"], got, expected(case, mode)))
    assert mismatches == []
    assert len(VECTORS) == 2000


def test_the_subset_covers_every_kind_and_the_disputed_cases() -> None:
    tags = {tag for case in VECTORS for tag in case["tags"]}
    assert {"33", "44", "overline", "line44", "fake33", "nested", "multi_kind", "disputed_five_eye"} <= tags
    disputed = [case for case in VECTORS if "forbidden_rif_strict" in case]
    assert len(disputed) > 100  # the five-eye setting really changes answers


@pytest.mark.parametrize("mode", list(FiveEye))
@pytest.mark.parametrize("case", HAND_CASES, ids=lambda case: case["source"].split(" @")[0][-40:])
def test_hand_checked_cases(case: dict[str, Any], mode: FiveEye) -> None:
    position = Position.from_notation(case["black"], case["white"])
    if "forbidden" in case:
        assert labels(forbidden_points(position, mode)) == expected(case, mode)
    else:
        for point, label in expected(case, mode, "checks").items():
            kind = forbidden_kind(position, parse_point(point), mode)
            assert (kind.value if kind else None) == label, point


def test_five_takes_precedence_over_a_double_four() -> None:
    # h8 completes f8-j8 as an exact five and also makes a four on the h column (19.1.2 C).
    position = Position.from_notation(["f8", "g8", "i8", "j8", "h9", "h10", "h11"], ["a1"])
    assert makes_five(position, parse_point("h8"))
    assert forbidden_kind(position, parse_point("h8")) is None


def test_overline_and_the_five_beside_it() -> None:
    position = Position.from_notation(["e8", "f8", "g8", "i8", "j8"], [])
    assert forbidden_kind(position, parse_point("h8")) is ForbiddenKind.OVERLINE
    blocked = Position.from_notation(["f8", "g8", "i8", "j8"], ["e8"])
    assert forbidden_kind(blocked, parse_point("h8")) is None  # exact five f8–j8


def shape(left: str, right: str) -> LineShape:
    """The shape of a black stone played between ``left`` and ``right`` (5 cells each)."""
    assert len(left) == len(right) == 5
    return line_shape(left + "." + right)


def test_two_fours_on_one_line_are_a_double_four() -> None:
    # X.XXX.X: the stone at h8 makes two fours on the same row (8.2; counted per stone set).
    position = Position.from_notation(["e8", "g8", "i8", "k8"], [])
    assert forbidden_kind(position, parse_point("h8")) is ForbiddenKind.DOUBLE_FOUR
    assert shape("..X.X", "X.X..").fours == 2
    assert shape(".XX.X", "X.XX.").fours == 0  # XX.XX on the left makes a four only without the centre


def test_a_straight_four_is_one_four_and_threes_name_their_four_points() -> None:
    assert shape("..XXX", ".....") == LineShape(False, False, 1, ())
    assert shape("...XX", ".....").three_offsets == (-3, 1)
    assert shape("..X.X", ".....").three_offsets == (-2,)
    assert shape("X..XX", "..X..").three_offsets == ()  # X..XXX..X: each four point would make six, not five
    assert shape("O.XXX", ".....").fours == 1  # a blocked four is still a four
    assert shape("OXX..", ".....").three_offsets == ()  # two stones and the centre: not even a three


def test_a_three_whose_four_point_is_forbidden_is_not_live() -> None:
    # The classic "fake 3-3": one of the two threes can only become a straight four on a point that is itself
    # forbidden once h8 is played, so h8 is legal.
    for case in VECTORS:
        if "fake33" in case["tags"]:
            position = Position.from_notation(case["black"], case["white"])
            for point in case["fake33_points"]:
                kind = forbidden_kind(position, parse_point(point))
                assert kind is None or kind.value == case["forbidden"].get(point)
            break
    else:  # pragma: no cover - the data always holds fake 3-3 cases
        pytest.fail("no fake 3-3 case in the data")


def transform(case: dict[str, Any], table: tuple[int, ...]) -> Position:
    return Position.from_points(
        [table[parse_point(p)] for p in case["black"]], [table[parse_point(p)] for p in case["white"]]
    )


@settings(max_examples=60, deadline=None)
@given(index=st.integers(0, len(VECTORS) - 1), symmetry=st.integers(0, 7), mode=st.sampled_from(list(FiveEye)))
def test_forbidden_sets_commute_with_the_board_symmetries(index: int, symmetry: int, mode: FiveEye) -> None:
    case = VECTORS[index]
    table = SYMMETRIES[symmetry]
    original = forbidden_points(Position.from_notation(case["black"], case["white"]), mode)
    moved = forbidden_points(transform(case, table), mode)
    assert moved == {table[point]: kind for point, kind in original.items()}


def renju_board(position: Position) -> list[list[int]]:
    board = [[0] * 15 for _ in range(15)]
    for point in range(225):
        color = position.color_at(point)
        if color is not None:
            board[column_of(point)][row_of(point)] = 1 if color is Color.BLACK else 2
    return board


RENJU_KIND = {1: ForbiddenKind.DOUBLE_THREE, 2: ForbiddenKind.DOUBLE_FOUR, 3: ForbiddenKind.OVERLINE}


def dense_position(seed: int, stones: int) -> Position:
    """A random position with stones packed round the centre, where forbidden shapes are frequent."""
    rng = random.Random(seed)
    near = [p for p in range(225) if abs(column_of(p) - 7) <= 4 and abs(row_of(p) - 7) <= 4]
    chosen = rng.sample(near, stones)
    black = chosen[: (stones + 1) // 2 + rng.randint(0, 3)]
    white = [p for p in chosen if p not in black]
    return Position.from_points(black, white)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), stones=st.integers(8, 40))
def test_agrees_with_the_gomocup_judge_port_on_random_positions(seed: int, stones: int) -> None:
    position = dense_position(seed, stones)
    board = renju_board(position)
    for point in position.empty_points():
        if abs(column_of(point) - 7) > 5 or abs(row_of(point) - 7) > 5:
            continue
        theirs = RENJU_KIND.get(get_foul_type(board, column_of(point), row_of(point)))
        ours = forbidden_kind(position, point)
        assert ours == theirs, (format_point(point), position)


def test_white_stones_and_walls_block_alike() -> None:
    assert line_shape("OXXX.X.....") == line_shape("#XXX.X.....")
