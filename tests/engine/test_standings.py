"""Scoring, tie-breaks and ranking of individual events (28, 29; FIDE C.07)."""

from __future__ import annotations

import csv
from fractions import Fraction
from pathlib import Path

import pytest

from engine.standings import (
    Entrant,
    ResultKind,
    RoundEntry,
    Rules,
    Scoring,
    StandingsError,
    System,
    Tournament,
    parse_tiebreaks,
    points_of,
    results_table,
    standings,
    withdraw,
)
from engine.trf import TrfError, read_trf, write_trf
from tests.conftest import DATA

TIEBREAK_DATA = DATA / "tiebreak"
H = Fraction(1, 2)


def load_exercise(path: Path) -> Tournament:
    """The FIDE TEC exercise CSV: ``+W9`` won with White v 9, ``=BYE`` half-point bye, ``-F11`` forfeit loss …"""
    rows = list(csv.reader(path.read_text(encoding="utf-8").splitlines()))
    entrants = []
    for row in rows[1:]:
        entries = []
        for cell in row[1:]:
            if cell == "--":
                entries.append(RoundEntry(None, None, ResultKind.ZPB))
            elif cell[1:] == "BYE":
                entries.append(RoundEntry(None, None, ResultKind.PAB if cell[0] == "+" else ResultKind.HPB))
            elif cell[1] == "F":
                kind = ResultKind.FORFEIT_WIN if cell[0] == "+" else ResultKind.FORFEIT_LOSS
                entries.append(RoundEntry(int(cell[2:]), None, kind))
            else:
                kind = {"+": ResultKind.WIN, "=": ResultKind.DRAW, "-": ResultKind.LOSS}[cell[0]]
                entries.append(RoundEntry(int(cell[2:]), cell[1].lower(), kind))
        entrants.append(Entrant(int(row[0]), f"Player {row[0]}", tuple(entries)))
    return Tournament("FIDE TEC tie-break exercise", tuple(entrants), len(rows[0]) - 1)


EXERCISE = load_exercise(TIEBREAK_DATA / "fide-tec-tiebreak-exercise-2024-03-18.csv")

# Published answers (C.07 2023/2024) and the 2026 values (tests/data/tiebreak/README.md).
PUBLISHED_BH = {1: "12.5", 2: "13", 3: "15.5", 4: "15", 5: "8.5", 8: "13.5", 11: "13.5", 16: "12.5"}
PUBLISHED_BH_C1 = {4: "11.5", 5: "7.5", 8: "12", 11: "12"}
CHANGED_2026 = {"BH": {4: "14", 11: "12.5"}, "BH/C1": {11: "11"}}


def table_values(rules: Rules, label: str) -> dict[int, Fraction]:
    table = standings(EXERCISE, "PTS,BH,BH/C1", rules)
    return {s.entrant.start_no: s.tiebreaks[label] for s in table}  # type: ignore[misc]


def test_the_12_published_answers_of_the_fide_tec_exercise() -> None:
    bh, cut = table_values(Rules.FIDE_2024, "BH"), table_values(Rules.FIDE_2024, "BH/C1")
    assert {no: bh[no] for no in PUBLISHED_BH} == {no: Fraction(v) for no, v in PUBLISHED_BH.items()}
    assert {no: cut[no] for no in PUBLISHED_BH_C1} == {no: Fraction(v) for no, v in PUBLISHED_BH_C1.items()}


def test_the_2026_variants_of_the_exercise() -> None:
    for label, published in (("BH", PUBLISHED_BH), ("BH/C1", PUBLISHED_BH_C1)):
        old, new = table_values(Rules.FIDE_2024, label), table_values(Rules.FIDE_2026, label)
        changed = {no: new[no] for no in published if new[no] != old[no]}
        assert changed == {no: Fraction(v) for no, v in CHANGED_2026[label].items()}
    # Player 6's pairing-allocated bye meets the 2026 cap too (draw points x rounds = 2.5 < 3): not published.
    assert table_values(Rules.FIDE_2026, "BH")[6] == table_values(Rules.FIDE_2024, "BH")[6] - H


def test_16_5_voluntary_unplayed_rounds_are_cut_first() -> None:
    # Player 4's half-point bye is scored against a dummy on 3.5; BH/C1 cuts it, not the lower 1.5 (C.07 16.5).
    assert table_values(Rules.FIDE_2024, "BH")[4] - table_values(Rules.FIDE_2024, "BH/C1")[4] == Fraction(7, 2)


def test_karl_mala_points_and_published_order_where_points_differ() -> None:
    trf = read_trf((TIEBREAK_DATA / "karl-mala-gedenkturnier-2005.trf").read_text(encoding="utf-8"))
    tournament = trf.tournament
    assert (len(tournament.entrants), tournament.rounds) == (284, 7)
    points = points_of(tournament)
    assert all(points[e.start_no] == e.declared_points for e in tournament.entrants)
    table = standings(tournament, "PTS,BH/C1,BH,SB,WIN,DE")
    # Eight players (withdrawn, and the "spielfrei" bye slot) have no published rank (0 in columns 86-89).
    published = {e.start_no: e.declared_rank for e in tournament.entrants if e.declared_rank}
    assert len(published) == 276
    ranked = [s for s in table if s.entrant.start_no in published]
    for a in ranked:
        for b in ranked:
            if a.points > b.points:
                assert a.rank < b.rank
                assert published[a.entrant.start_no] < published[b.entrant.start_no]


@pytest.mark.parametrize("name", ["lichess-swiss-2020_06.trf", "lichess-swiss-2021_03.trf"])
def test_lichess_exports_points_are_reproduced(name: str) -> None:
    tournament = read_trf((TIEBREAK_DATA / name).read_text(encoding="utf-8")).tournament
    points = points_of(tournament)
    assert all(points[e.start_no] == e.declared_points for e in tournament.entrants)
    assert any(r.kind is ResultKind.PAB for e in tournament.entrants for r in e.rounds)  # 'U' read as a PAB


def test_trf_round_trip_keeps_every_result() -> None:
    original = read_trf((TIEBREAK_DATA / "karl-mala-gedenkturnier-2005.trf").read_text(encoding="utf-8")).tournament
    table = standings(original, "PTS,BH")
    again = read_trf(write_trf(original, table)).tournament

    def rows(t: Tournament) -> list[list[RoundEntry]]:
        return [[e.round(r) for r in range(1, t.rounds + 1)] for e in t.entrants]

    assert rows(again) == rows(original)
    assert {e.start_no: e.declared_rank for e in again.entrants} == {s.entrant.start_no: s.rank for s in table}
    exercise = read_trf(write_trf(EXERCISE)).tournament
    assert rows(exercise) == rows(EXERCISE)


# --- Hand-built scenarios -----------------------------------------------------------------------------------------


def game(a: int, b: int, result: str) -> tuple[RoundEntry, RoundEntry]:
    kinds = {
        "1": (ResultKind.WIN, ResultKind.LOSS),
        "=": (ResultKind.DRAW, ResultKind.DRAW),
        "0": (ResultKind.LOSS, ResultKind.WIN),
        "+": (ResultKind.FORFEIT_WIN, ResultKind.FORFEIT_LOSS),
    }
    first, second = kinds[result]
    return RoundEntry(b, "w", first), RoundEntry(a, "b", second)


def round_robin(results: dict[tuple[int, int], str], players: int, name: str = "RR") -> Tournament:
    """A single round robin from {(a, b): result for a}; round numbers follow the dict order."""
    rows: dict[int, list[RoundEntry]] = {p: [] for p in range(1, players + 1)}
    for (a, b), result in results.items():
        first, second = game(a, b, result)
        rows[a].append(first)
        rows[b].append(second)
        for other, row in rows.items():
            if other not in (a, b):
                row.append(RoundEntry(None, None, ResultKind.ANNULLED))
    entrants = tuple(Entrant(p, f"P{p}", tuple(rows[p])) for p in rows)
    return Tournament(name, entrants, len(results), System.ROUND_ROBIN)


def test_29_1_1_round_robin_sb_then_wins_then_direct_encounter() -> None:
    # 1 beat 2, 2 beat 3, 3 beat 1 (a cycle), all beat 4: 1, 2, 3 tie on points and SB and wins.
    t = round_robin({(1, 2): "1", (2, 3): "1", (3, 1): "1", (1, 4): "1", (2, 4): "1", (3, 4): "1"}, 4)
    table = standings(t, "PTS,SB,WIN,DE")
    assert [(s.entrant.start_no, s.rank) for s in table] == [(1, 1), (2, 1), (3, 1), (4, 4)]
    assert table[0].tiebreaks["SB"] == 2  # beat 2 (2 points) and 4 (0 points): the beaten opponents' scores
    t2 = round_robin({(1, 2): "1", (2, 3): "=", (3, 1): "=", (1, 4): "0", (2, 4): "1", (3, 4): "1"}, 4)
    assert [s.rank for s in standings(t2, "PTS,SB,WIN,DE")] == sorted(s.rank for s in standings(t2, "PTS,SB"))


def test_de_is_a_stage_applied_again_to_still_tied_subgroups() -> None:
    # 1-4 tie on 3 points. Among them 1 beat 2 and every other game was drawn: the mini-table puts 1 first (2),
    # 3 and 4 next (1.5) and 2 last (1); applied again to 3 and 4, who drew, it leaves them sharing (C.07 6.2).
    results = {(1, 2): "1", (3, 4): "=", (1, 3): "=", (2, 4): "=", (1, 4): "=", (2, 3): "=",
               (1, 5): "0", (1, 6): "1", (2, 5): "1", (2, 6): "1", (3, 5): "1", (3, 6): "=",
               (4, 5): "=", (4, 6): "1", (5, 6): "1"}  # fmt: skip
    t = round_robin(results, 6)
    assert [points_of(t)[p] for p in (1, 2, 3, 4)] == [3, 3, 3, 3]
    table = standings(t, "PTS,DE")
    ranks = {s.entrant.start_no: s.rank for s in table}
    assert (ranks[1], ranks[3], ranks[4], ranks[2]) == (1, 2, 2, 4)
    assert {s.entrant.start_no: s.tiebreaks["DE"] for s in table if s.rank <= 4} == {1: 2, 3: H * 3, 4: H * 3, 2: 1}


def test_6_3_incomplete_direct_encounter_separates_only_a_sure_first() -> None:
    swiss = Tournament(
        "Swiss",
        (
            Entrant(1, "A", (RoundEntry(2, "w", ResultKind.WIN), RoundEntry(4, "b", ResultKind.LOSS))),
            Entrant(2, "B", (RoundEntry(1, "b", ResultKind.LOSS), RoundEntry(3, "w", ResultKind.WIN))),
            Entrant(3, "C", (RoundEntry(4, "w", ResultKind.WIN), RoundEntry(2, "b", ResultKind.LOSS))),
            Entrant(4, "D", (RoundEntry(3, "b", ResultKind.LOSS), RoundEntry(1, "w", ResultKind.WIN))),
        ),
        2,
    )
    table = standings(swiss, "PTS,DE")
    # All on 1 point; 1 beat 2 but 1 and 3 never met: nobody is first whatever the missing games: all share.
    assert {s.rank for s in table} == {1}


def test_win_counts_forfeit_wins_and_byes_won_counts_only_games() -> None:
    table = {s.entrant.start_no: s for s in standings(EXERCISE, "PTS,WIN,WON")}
    assert (table[12].tiebreaks["WIN"], table[12].tiebreaks["WON"]) == (2, 0)  # a PAB and a forfeit win
    assert (table[2].tiebreaks["WIN"], table[2].tiebreaks["WON"]) == (3, 3)


def test_28_2_scoring_is_configurable() -> None:
    t = round_robin({(1, 2): "1", (1, 3): "=", (2, 3): "1"}, 3)
    three = Tournament(t.name, t.entrants, t.rounds, t.system, Scoring(Fraction(3), Fraction(1), Fraction(0)))
    assert points_of(three) == {1: 4, 2: 3, 3: 1}


def test_28_3_results_table_shows_forfeits_and_byes() -> None:
    table = standings(EXERCISE, "PTS")
    rows = {int(row[1]): row for row in results_table(EXERCISE, table)}
    assert rows[9][3:8] == ["1b0", "10w0", "½", "-11", "+"]
    assert rows[11][6] == "+9"


def test_24_4_3_a_swiss_withdrawal_keeps_results_and_adds_zero_point_byes() -> None:
    after = withdraw(EXERCISE, 2, after_round=3)
    assert [e.kind for e in after.entrant(2).rounds[3:]] == [ResultKind.ZPB, ResultKind.ZPB]
    assert after.entrant(2).rounds[:3] == EXERCISE.entrant(2).rounds[:3]


def test_24_4_2_round_robin_withdrawal_before_half_annuls_after_half_forfeits() -> None:
    schedule = {(1, 2): "1", (3, 4): "1", (1, 3): "1", (2, 4): "=", (1, 4): "1", (2, 3): "0"}
    t = round_robin(schedule, 4)
    early = withdraw(t, 4, after_round=2)  # played one of three opponents: annulled
    assert 4 not in {e.start_no for e in early.entrants}
    assert points_of(early) == {1: 2, 2: 0, 3: 1}
    late = withdraw(t, 2, after_round=4, schedule={6: 3})  # played two of three: the rest are forfeits
    assert late.entrant(2).round(6).kind is ResultKind.FORFEIT_LOSS
    assert late.entrant(3).round(6).kind is ResultKind.FORFEIT_WIN
    with pytest.raises(StandingsError, match="schedule"):
        withdraw(t, 2, after_round=4)


@pytest.mark.parametrize(
    ("text", "message"),
    [("PTS,XYZ", "unknown tie-break 'XYZ'"), ("BH/Q3", "unknown modifier /Q3"), ("WIN/C1", "BH and SB only"),
     ("", "not a descriptor")],
)  # fmt: skip
def test_bad_tiebreak_lists(text: str, message: str) -> None:
    with pytest.raises(StandingsError, match=message):
        parse_tiebreaks(text)


def test_tiebreak_labels_round_trip() -> None:
    labels = "PTS,BH,BH/C1,BH/C2,BH/M1,BH/M2,SB/C1,WIN,WON,DE,DE/P"
    assert ",".join(t.label for t in parse_tiebreaks(labels)) == labels


def trf_line(start_no: str, name: str, *rounds: tuple[str, str, str]) -> str:
    """A 001 line with each field in its TRF columns."""
    cells = [" "] * (91 + 10 * len(rounds))

    def put(column: int, text: str) -> None:
        cells[column - 1 : column - 1 + len(text)] = list(text)

    put(1, "001")
    put(5, start_no.rjust(4))
    put(15, name)
    put(49, "1500")
    put(81, " 1.0")
    for index, (opponent, color, result) in enumerate(rounds):
        put(92 + 10 * index, opponent.rjust(4))
        put(97 + 10 * index, color)
        put(99 + 10 * index, result)
    return "".join(cells)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (trf_line("1", "Alpha", ("2", "w", "1")), "line 1: round 1: opponent 2 is not a player"),
        (trf_line("x", "Alpha"), "line 1: start number 'x'"),
        (trf_line("1", "Alpha", ("0", "w", "1")), "played result needs an opponent"),
        (trf_line("1", "Alpha", ("0000", "-", "Q")), "unknown result code 'Q'"),
        (trf_line("1", "Alpha", ("0000", "x", "U")), "colour 'x'"),
        (trf_line("1", "Alpha", ("3", "-", "U")), "a bye .* cannot have an opponent"),
        (trf_line("1", ""), "has no name"),
        ("hello", "not a TRF record code"),
    ],
)
def test_malformed_trf_lines_are_reported_with_their_number(line: str, message: str) -> None:
    with pytest.raises(TrfError, match=message):
        read_trf(line + "\n")


def test_mismatched_results_between_two_lines_are_refused() -> None:
    text = trf_line("1", "Alpha", ("2", "w", "1")) + "\n" + trf_line("2", "Beta", ("1", "b", "1")) + "\n"
    with pytest.raises(TrfError, match=r"line 1: round 1: .* line 2 does not show the matching result"):
        read_trf(text)
