"""Game records: plain lists, RIF XML and PSQ; reading, writing and replaying them."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.actions import Action, Choose, Declare, Offer, Stone, Swap, format_action, parse_action
from engine.board import POINTS, column_of, format_point, parse_point, row_of
from engine.errors import NotationError, RecordError
from engine.game import Game, Termination
from engine.records import (
    GameRecord,
    read_plain,
    read_psq,
    read_rif,
    record_from_game,
    replay_record,
    write_plain,
    write_psq,
    write_rif,
)


def soosorv_game() -> Game:
    game = Game.new(opening="soosorv")
    for token in ("h8", "h9", "h10", "declare:2", "swap", "i9", "offer:g10,j10", "choose:j10", "k11"):
        game = game.play(token)
    return game


def test_plain_lists_round_trip_with_opening_decisions() -> None:
    record = record_from_game(soosorv_game())
    text = write_plain(record)
    assert text == "h8 h9 h10 declare:2 swap i9 offer:g10,j10 choose:j10 k11"
    again = read_plain(text, rule="renju", opening="soosorv")
    assert again.actions == record.actions


def test_plain_list_errors_name_the_move() -> None:
    with pytest.raises(RecordError, match="move 3: 'q5'"):
        read_plain("h8 h9 q5")


def test_rif_keeps_swaps_and_candidates() -> None:
    record = record_from_game(soosorv_game(), black="Li", white="Wang", tournament="National", round="3")
    xml = write_rif([record])
    assert "<move>h8 h9 h10 i9 j10 k11</move>" in xml
    assert 'alt="g10 j10"' in xml and 'swap="3"' in xml and 'protocol="soosorv"' in xml
    (again,) = read_rif(xml)
    assert again.actions == record.actions
    assert (again.black, again.white, again.info["tournament"], again.info["round"]) == ("Li", "Wang", "National", "3")
    assert replay_record(again).game.position == soosorv_game().position


def test_rif_without_the_actions_attribute_rebuilds_the_decisions() -> None:
    xml = (
        '<database><games><game id="7" rule="renju" protocol="soosorv-2" black="A" white="B" bresult="0.5" '
        'alt="g10 j10" swap="3"><move>h8 h9 h10 i9 j10 k11</move></game></games></database>'
    )
    (record,) = read_rif(xml)
    assert record.result == "draw"
    assert record.actions[3] == Swap()
    assert Offer((parse_point("g10"), parse_point("j10"))) in record.actions
    assert Choose(parse_point("j10")) in record.actions
    played = replay_record(record)
    assert played.illegal is None and played.game.position.stones == 6


@pytest.mark.parametrize(
    ("xml", "message"),
    [
        ("<game><move>h8 h9", "not well-formed"),
        ("<database/>", "no <game>"),
        ('<game id="2" bresult="2"><move>h8</move></game>', "bresult='2'"),
        ('<game id="3"><move>h8 z99</move></game>', "game 3: 'z99'"),
    ],
)
def test_bad_rif_is_refused_with_a_reason(xml: str, message: str) -> None:
    with pytest.raises(RecordError, match=message):
        read_rif(xml)


def test_rif_results() -> None:
    game = Game.new()
    for token in ("h8", "a1", "i8", "a3", "j8", "a5", "k8", "a7", "l8"):
        game = game.play(token)
    xml = write_rif([record_from_game(game)])
    assert 'bresult="1"' in xml
    assert read_rif(xml)[0].result == "black"


def test_psq_round_trip_and_orientation() -> None:
    record = GameRecord(rule="freestyle", actions=(Stone(parse_point("h8")), Stone(parse_point("a1"))), black="X")
    text = write_psq(record, times_ms=[1200, 800])
    assert text.splitlines()[:3] == ["Piskvorky 15x15, 11:11, 0", "8,8,1200", "1,15,800"]
    again = read_psq(text)
    assert again.actions == record.actions and again.black == "X"


def five_move_two_game() -> Game:
    game = Game.new(opening="five-move-two")
    for token in ("h8", "h9", "h10", "swap", "i9", "offer:g10,j10", "choose:j10", "k11", "l12"):
        game = game.play(token)
    return game


def swap2_game() -> Game:
    """Swap2 option c (11.2.2 B c): three stones, two added, then the first player swaps to White."""
    game = Game.new(rule="swap2")
    for token in ("h8", "a1", "i9", "add2", "j10", "k11", "swap", "l12", "m13"):
        game = game.play(token)
    return game


def piskvork_reads(text: str) -> tuple[list[tuple[int, int]], list[str]]:
    """What Piskvork's openPsq takes from a PSQ file (plastovicka/Piskvork): the header ``Piskvorky WxH, a:b, h``
    with h 0 or 1, then ``x,y[,t]`` lines while they parse, then one line per player's name; the rest is ignored."""
    lines = text.splitlines()
    header = re.fullmatch(r"Piskvorky (\d+)x(\d+), (\d+):(\d+), (\d+)", lines[0])
    assert header is not None and header.group(5) in ("0", "1")
    moves, index = [], 1
    while index < len(lines) and (move := re.fullmatch(r"(\d+),(\d+)(?:,(\d+))?", lines[index])):
        moves.append((int(move.group(1)), int(move.group(2))))
        index += 1
    return moves, lines[index : index + 2]


@pytest.mark.parametrize(("game", "opening"), [(five_move_two_game, "five-move-two"), (swap2_game, "swap2")])
def test_psq_keeps_an_opening_protocols_decisions_after_the_stones(game: Callable[[], Game], opening: str) -> None:
    played = game()
    record = record_from_game(played, black="Li Wei", white="王小明")
    text = write_psq(record, times_ms=list(range(1000, 1000 * (len(record.stones()) + 1), 1000)))
    # The stones as played, each with its time, then both names and the code line; the decisions after it.
    moves, names = piskvork_reads(text)
    assert moves == [(column_of(p) + 1, 15 - row_of(p)) for p in record.stones()] and names == ["Li Wei", "王小明"]
    tail = text.splitlines()[len(moves) + 3 :]
    assert tail[0] == "-1" and f"opening: {opening}" in tail and f"actions: {write_plain(record)}" in tail
    again = read_psq(text)
    assert again.actions == record.actions and (again.rule, again.opening) == (played.rules.name, opening)
    assert (again.black, again.white) == ("Li Wei", "王小明")
    replayed = replay_record(again)
    assert replayed.illegal is None and replayed.game.position == played.position
    assert replayed.game.black_player is played.black_player


def test_psq_without_the_actions_line_rebuilds_swaps_and_candidates() -> None:
    record = record_from_game(five_move_two_game())
    text = "\n".join(line for line in write_psq(record).splitlines() if not line.startswith("actions:"))
    assert "swap: 3" in text and "alt: g10 j10" in text
    again = read_psq(text)
    assert again.actions == record.actions


def test_a_psq_of_stones_only_has_no_info_lines() -> None:
    game = Game.new()
    for token in ("h8", "i9", "h9"):
        game = game.play(token)
    text = write_psq(record_from_game(game, black="A", white="B"))
    assert text.splitlines()[-3:] == ["A", "B", "-1"]


def test_psq_refuses_what_it_cannot_hold() -> None:
    with pytest.raises(RecordError, match=r"alternation.*pass"):
        write_psq(read_plain("h8 pass h9"))
    with pytest.raises(RecordError, match="other stones"):
        read_psq("Piskvorky 15x15, 11:11, 0\n8,8,0\nA\nB\n-1\nactions: h9\n")
    with pytest.raises(RecordError, match="starts with"):
        read_psq("8,8,0\n")
    with pytest.raises(RecordError, match="20x20"):
        read_psq("Piskvorky 20x20, 11:11, 0\n10,10,0\n")
    with pytest.raises(RecordError, match="off the 15x15"):
        read_psq("Piskvorky 15x15, 11:11, 0\n16,1,0\n")


def test_a_replayed_record_reports_the_first_illegal_move() -> None:
    record = read_plain("h8 h9 h8 a1")
    played = replay_record(record)
    assert played.illegal is not None
    assert (played.illegal.ply, played.illegal.move, played.illegal.article) == (3, "h8", "6.1")
    assert played.game.ply == 2


def test_terminations_round_trip_through_results() -> None:
    assert {t.value for t in Termination} >= {"five", "forbidden-33", "forbidden-44", "forbidden-overline"}


@given(st.integers(0, POINTS - 1))
def test_points_round_trip(point: int) -> None:
    assert parse_point(format_point(point)) == point
    assert parse_point(format_point(point).upper()) == point


@pytest.mark.parametrize("text", ["", "h", "h0", "h16", "p8", "88", "h08", "h8x", "hh8"])
def test_bad_points_say_what_is_wrong(text: str) -> None:
    with pytest.raises(NotationError, match=r"point|board"):
        parse_point(text)


@pytest.mark.parametrize(
    "token", ["h8", "pass", "swap", "keep", "add2", "claim", "draw", "declare:3", "offer:a1,o15", "choose:j10",
              "resign:white"]
)  # fmt: skip
def test_action_tokens_round_trip(token: str) -> None:
    assert format_action(parse_action(token)) == token


actions = st.one_of(
    st.builds(Stone, st.integers(0, POINTS - 1)),
    st.sampled_from([parse_action(t) for t in ("pass", "swap", "keep", "add2", "claim", "draw", "resign:black")]),
    st.builds(Declare, st.integers(1, 99)),
    st.builds(Offer, st.lists(st.integers(0, POINTS - 1), min_size=1, max_size=10).map(tuple)),
    st.builds(Choose, st.integers(0, POINTS - 1)),
)


@given(st.lists(actions, max_size=30))
def test_action_lists_round_trip_through_plain_text(listed: list[Action]) -> None:
    record = GameRecord(actions=tuple(listed))
    assert read_plain(write_plain(record)).actions == record.actions


@pytest.mark.parametrize("token", ["declare:x", "offer:", "resign:red", "undo:1", "jump"])
def test_bad_action_tokens(token: str) -> None:
    with pytest.raises(NotationError):
        parse_action(token)
