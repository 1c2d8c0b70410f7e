"""Team events: match and game points, team tie-breaks and places (rules 26, 28, 29.1.2, 29.2.2, 24.4.4; FIDE C.07
Arts 11–14 and 16) and the youth team score of the regulations.

The Grandmommy's Cup (tests/data/tiebreak/fide-tec-grandmommyscup-team.trf, 50 teams, 14 rounds, 4 boards)
----------------------------------------------------------------------------------------------------------
Every team's match points and game points in its 310 record are reproduced.  Its 801 records (informative in TRF-26)
disagree with the player records in six places, pinned below: four are two boards swapped within a match (teams 1/26
and 5/18 in round 5), one is a wrong board (team 11's board 4 in round 7: the player records and the 802 record give
2.5 game points, the 801 record 1.5) and one is a forfeited match written as four draws (team 15 v 30 in round 7,
which record 330 and the 802 records give as a forfeit).  The tournament is therefore built from the normative records
(001, 300, 240, 320, 330).

Under the declared tie-break list (header 202: ``EDET/P,EMGSB/C1/P,BH:MP/C1/P,MPvGP``) 19 of the 50 ranks in the 310
records are reproduced and 31 are not.  The 310 ranks were not made with that list.  They are exactly (all 50)
match points, then a median-1 Buchholz of match points under the pre-2023 FIDE rules, then the top-board results
(TBR), as ``test_grandmommy_310_ranks_are_mp_pre_2023_median_buchholz_and_tbr`` shows.  The pre-2023 rules count a
round a team did not play against a virtual opponent (score before the round + what the team did not score that round
+ a draw for each later round) and every unplayed round of an opponent as a draw.  The declared list orders each
tied group differently:

- MP 20, teams 16 and 22: they never met, so EDET cannot separate them.  Every later criterion favours 16 (EMGSB/C1/P
  528 v 504.5, BH:MP/C1/P 225 v 224, GP 33.5 v 32).  The file has 22 first.
- MP 19, teams 3 6 8 11 13 18 19: each of the seven met all the others.  On the mutual matches 19 has 8 MP, 6 and 13
  have 7, 8 has 6, 3 and 11 have 5 and 18 has 4.  Article 6 ranks 19, 6, 13, 8, 3, 11, 18 (3 beat 11; 6 and 13, who
  drew, are split by their match's top boards, 13.3.2).  The file has 19, 18, 3, 6, 13, 8, 11, with 18, who scored
  least against the group, second; no reading of direct encounter gives that.
- MP 15, teams 30 and 35: EDET separates nobody (only 5 and 35 met).  EMGSB/C1/P puts 35 (359) ahead of 30 (349.5);
  the file has 30 first.
- MP 14, teams 28 and 39: EMGSB/C1/P 339.5 v 324 puts 28 first; the file has 39 first.
- MP 13, teams 31 32 34 47: not all met, so EDET separates nobody; EMGSB/C1/P orders 32 (311.5), 47 (292), 34
  (287.5), 31 (249.5); the file has 47, 31, 32, 34.
- MP 11, teams 17 and 24: EMGSB/C1/P 306 (24) v 292 (17); the file has 17 first.
- MP 9, teams 7 23 26 27 33 40 43: EMGSB/C1/P orders 23, 27, 40, 43, 7, 26, 33.  The file has 7 first: team 7 withdrew
  after round 8; its six zero-point byes add nothing to EMGSB (no game points scored in them), while the pre-2023
  Buchholz counts each of them against a virtual opponent.
- MP 8, teams 25 37 42: 25 beat 37 but 42 met neither, so EDET separates nobody (6.3); EMGSB/C1/P orders 42, 25, 37;
  the file has 25, 37, 42.
- MP 7, teams 44 and 48: EMGSB/C1/P 208.5 (48) v 183.5 (44); the file has 44 first.
- MP 4, teams 41 and 49: they drew 2–2, so primary and secondary scores are level.  EDET's top-board step (13.3.2)
  puts 49 first, who won board 1 of that match; the file has 41 first.
"""

from __future__ import annotations

import json
from fractions import Fraction

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
)
from engine.teams import (
    ROUND_ROBIN_TIEBREAKS,
    SWISS_TIEBREAKS,
    Board,
    MatchResult,
    Team,
    TeamRound,
    TeamScoring,
    TeamStanding,
    TeamTieBreak,
    TeamTournament,
    TieBreakValue,
    build_team_tournament,
    match_results,
    parse_team_tiebreaks,
    read_team_trf,
    team_standings,
    withdraw_team,
    youth_team_standings,
)
from engine.trf import TrfError, write_trf
from tests.conftest import DATA

GRANDMOMMY = DATA / "tiebreak" / "fide-tec-grandmommyscup-team.trf"
HELD = DATA / "teams" / "held-team-exercise.json"
Q = Fraction
H = Q(1, 2)
K = ResultKind
CODES = {"1": K.WIN, "=": K.DRAW, "0": K.LOSS, "+": K.FORFEIT_WIN, "-": K.FORFEIT_LOSS}
OPPOSITE = {"1": "0", "0": "1", "=": "=", "+": "-", "-": "+"}


def load_grandmommy() -> tuple[TeamTournament, str]:
    trf = read_team_trf(GRANDMOMMY.read_text(encoding="utf-8"))
    assert trf.tiebreaks is not None
    return trf.tournament, trf.tiebreaks


def make(
    rounds: list[list[tuple[int, int, str]]],
    teams: int,
    boards: int = 2,
    byes: dict[tuple[int, int], ResultKind] | None = None,
    system: System = System.SWISS,
) -> TeamTournament:
    """A team tournament from matches ``(team, opponent, board results from the team's side)`` per round, e.g.
    ``(1, 2, "1=")`` (``"--|--"`` gives both sides: a double forfeit); a team with no match is given
    ``byes[(round, team)]`` or a zero-point bye."""
    rows: dict[int, list[TeamRound]] = {no: [] for no in range(1, teams + 1)}
    for round_no, matches in enumerate(rounds, start=1):
        met = {}
        for home, away, results in matches:
            own, theirs = results.split("|") if "|" in results else (results, "".join(OPPOSITE[c] for c in results))
            met[home] = TeamRound(away, "w", _boards(own))
            met[away] = TeamRound(home, "b", _boards(theirs))
        for no, row in rows.items():
            row.append(met.get(no) or TeamRound(bye=(byes or {}).get((round_no, no), K.ZPB)))
    built = tuple(Team(no, f"Team {no}", rounds=tuple(row)) for no, row in rows.items())
    return TeamTournament("hand-built", built, len(rounds), boards, system)


def scored(result: MatchResult) -> tuple[ResultKind, Fraction, Fraction]:
    return result.kind, result.match_points, result.game_points


def _boards(results: str) -> tuple[Board, ...]:
    return tuple(Board(number, CODES[code]) for number, code in enumerate(results, start=1))


def ranks(table: list[TeamStanding]) -> dict[int, int]:
    return {row.team.number: row.rank for row in table}


def values(table: list[TeamStanding], label: str) -> dict[int, TieBreakValue]:
    return {row.team.number: row.tiebreaks[label] for row in table}


# --- The Grandmommy's Cup (TRF-26) ------------------------------------------------------------------------------------

GRANDMOMMY_801_DISCREPANCIES = (
    "line 548: team 1, round 5: 801 shows =1== against team 26, the player records 1=== against team 26",
    "line 552: team 5, round 5: 801 shows -01- against team 18, the player records -10- against team 18",
    "line 558: team 11, round 7: 801 shows 10=0 against team 1, the player records 10=1 against team 1",
    "line 562: team 15, round 7: 801 shows ==== against team 30, the player records ++++ against team 30",
    "line 565: team 18, round 5: 801 shows +10+ against team 5, the player records +01+ against team 5",
    "line 573: team 26, round 5: 801 shows =0== against team 1, the player records 0=== against team 1",
)

# Team: (our rank under header 202, the rank in its 310 record); see the module docstring for each group.
GRANDMOMMY_RANKS_THAT_DIFFER = {
    16: (1, 2), 22: (2, 1),
    6: (4, 6), 13: (5, 7), 8: (6, 8), 3: (7, 5), 11: (8, 9), 18: (9, 4),
    35: (12, 13), 30: (13, 12),
    28: (18, 19), 39: (19, 18),
    32: (22, 24), 47: (23, 22), 34: (24, 25), 31: (25, 23),
    24: (29, 30), 17: (30, 29),
    23: (33, 34), 27: (34, 37), 40: (35, 39), 7: (37, 33), 26: (38, 35), 33: (39, 38),
    42: (40, 42), 25: (41, 40), 37: (42, 41),
    48: (43, 44), 44: (44, 43),
    49: (48, 49), 41: (49, 48),
}  # fmt: skip


def test_trf26_310_match_points_and_game_points_reproduced_28_1_c07_11() -> None:
    """Rule 28.1 (games 1 / ½ / 0, header 162) and TRF-26 header 362 (matches 2 / 1 / 0), C.07 Art. 11: every
    team's MP and GP as its 310 record states them, byes (240, 320) and forfeited matches (330) included."""
    tournament, _ = load_grandmommy()
    assert len(tournament.teams) == 50
    assert (tournament.rounds, tournament.boards, tournament.system) == (14, 4, System.SWISS)
    table = team_standings(tournament, "MP")
    assert {row.team.number: (row.match_points, row.game_points) for row in table} == {
        team.number: (team.declared_match_points, team.declared_game_points) for team in tournament.teams
    }


def test_trf26_801_records_checked_against_the_player_records() -> None:
    """TRF-26: 801 records are informative; where they differ from the player records each difference names its
    line."""
    trf = read_team_trf(GRANDMOMMY.read_text(encoding="utf-8"))
    assert trf.discrepancies == GRANDMOMMY_801_DISCREPANCIES
    assert trf.team_lines[1] == 295 and trf.round_lines[1] == 548


def test_trf26_801_records_alone_must_agree_on_both_sides_of_a_match() -> None:
    """Without player records the 801 records are the matches, so the first board the two teams see differently is
    an error naming its line (team 1 v 11 in round 7: board 4 lost by both; lines 548 and 558 of the file, 299 and
    309 once its 249 player records are taken out)."""
    text = "\n".join(line for line in GRANDMOMMY.read_text(encoding="utf-8").splitlines() if not line.startswith("001"))
    with pytest.raises(TrfError, match=r"^line 299: round 7, board 4: '0' against '0' on line 309"):
        read_team_trf(text)


def test_c07_grandmommy_ranks_under_its_declared_tiebreaks() -> None:
    """C.07 Arts 4.2, 6, 13.2, 13.3, 14.1.2, 16 with header 202 (EDET/P, EMGSB/C1/P, BH:MP/C1/P, MPvGP): 19 ranks of the
    310 records are reproduced; the 31 that are not are pinned (the module docstring explains each group)."""
    tournament, declared = load_grandmommy()
    table = team_standings(tournament, declared)
    assert list(table[0].tiebreaks) == ["MP", "EDET/P", "EMGSB/C1/P", "BH:MP/C1/P", "MPvGP"]
    differ = {
        row.team.number: (row.rank, row.team.declared_rank) for row in table if row.rank != row.team.declared_rank
    }
    assert differ == GRANDMOMMY_RANKS_THAT_DIFFER
    assert len(table) - len(differ) == 19
    # The values behind the MP-20 pair: they never met, and every criterion of the list favours team 16.
    rows = {row.team.number: row for row in table}
    assert [rows[16].tiebreaks[label] for label in ("EDET/P", "EMGSB/C1/P", "BH:MP/C1/P", "MPvGP")] == [
        1, Fraction(528), Fraction(225), Fraction(67, 2)
    ]  # fmt: skip
    assert [rows[22].tiebreaks[label] for label in ("EDET/P", "EMGSB/C1/P", "BH:MP/C1/P", "MPvGP")] == [
        1, Fraction(1009, 2), Fraction(224), Fraction(32)
    ]  # fmt: skip


def test_c07_6_2_grandmommy_nineteen_point_group_is_a_complete_mini_round_robin() -> None:
    """C.07 6.2: the seven teams on 19 MP all met each other, so direct encounter decides on their mutual matches:
    19 first and 18 (fewest mutual MP) last, which the 310 ranks contradict (they have 18 fourth overall)."""
    tournament, declared = load_grandmommy()
    group = {3, 6, 8, 11, 13, 18, 19}
    results = match_results(tournament)
    opponents = {no: {r.opponent for r in results[no]} & group for no in group}
    assert all(opponents[no] == group - {no} for no in group)
    mutual = {no: sum(r.match_points for r in results[no] if r.opponent in group) for no in group}
    assert mutual == {19: 8, 6: 7, 13: 7, 8: 6, 3: 5, 11: 5, 18: 4}
    table = team_standings(tournament, declared)
    assert [row.team.number for row in table if row.team.number in group] == [19, 6, 13, 8, 3, 11, 18]
    assert sorted(group, key=lambda no: tournament.team(no).declared_rank or 0) == [19, 18, 3, 6, 13, 8, 11]


def pre_2023_median_buchholz(tournament: TeamTournament) -> dict[int, Fraction]:
    """Median-1 Buchholz of match points under the FIDE rules before 2023: a round the team did not play counts
    against a virtual opponent (the team's score before the round + what it did not score in it + a draw for each
    later round), and every unplayed round of an opponent counts as a drawn match."""
    results = match_results(tournament)
    win, draw = tournament.scoring.match.win, tournament.scoring.match.draw
    adjusted = {
        no: sum((r.match_points if r.kind.played else draw for r in rows), Q(0)) for no, rows in results.items()
    }
    medians = {}
    for no, rows in results.items():
        scores = []
        for index, result in enumerate(rows):
            if result.kind.played and result.opponent is not None:
                scores.append(adjusted[result.opponent])
            else:
                before = sum(r.match_points for r in rows[:index])
                scores.append(before + (win - result.match_points) + draw * (tournament.rounds - index - 1))
        scores.sort()
        medians[no] = sum(scores[1:-1], Fraction(0))
    return medians


def test_grandmommy_310_ranks_are_mp_pre_2023_median_buchholz_and_tbr() -> None:
    """Why the ranks differ: the 310 ranks are match points, then the pre-2023 median Buchholz, then the top-board
    results (C.07 12.2) — all 50 of them."""
    tournament, _ = load_grandmommy()
    medians = pre_2023_median_buchholz(tournament)
    table = team_standings(tournament, "TBR")
    keys = {row.team.number: (row.match_points, medians[row.team.number], row.tiebreaks["TBR"]) for row in table}
    ranked = {no: 1 + sum(1 for other in keys.values() if other > keys[no]) for no in keys}
    assert ranked == {team.number: team.declared_rank for team in tournament.teams}


# --- Mario Held's team exercises (C.07 2023/2024) --------------------------------------------------------------------


def load_held() -> tuple[TeamTournament, dict[str, dict[str, dict[str, str]]]]:
    data = json.loads(HELD.read_text(encoding="utf-8"))
    boards = data["boards"]
    teams = []
    for number, cells in data["rows"].items():
        rounds = []
        for cell in cells:
            if cell in ("PAB", "HPB", "ZPB"):
                rounds.append(TeamRound(bye=ResultKind[cell]))
            elif cell[0] in "+-":
                rounds.append(TeamRound(int(cell[1:]), None, _boards(cell[0] * boards)))
            else:
                color = "w" if "w" in cell else "b"
                opponent, points = (int(cell.split(color)[0]), Fraction(cell.split(color)[1]))
                rounds.append(
                    TeamRound(opponent, color, _boards(_held_boards(data, int(number), opponent, color, points)))
                )
        teams.append(Team(int(number), f"Team {number}", rounds=tuple(rounds)))
    tournament = TeamTournament("Held's exercise", tuple(teams), data["rounds"], boards)
    return tournament, {"fide-2024": data["expected"], "fide-2026": data["expected_2026"]}


def _held_boards(data: dict[str, object], team: int, opponent: int, color: str, points: Fraction) -> str:
    """The boards as the source has them: from the White team's side won from board 1 down, then a draw, then lost."""
    given = data["boards_of"]
    assert isinstance(given, dict)
    if f"{team}-{opponent}" in given:
        return str(given[f"{team}-{opponent}"])
    if f"{opponent}-{team}" in given:
        return "".join(OPPOSITE[c] for c in given[f"{opponent}-{team}"])
    boards = int(str(data["boards"]))
    white_points = points if color == "w" else boards - points
    won = int(white_points)
    white = ("1" * won + ("=" if white_points - won else "") + "0" * boards)[:boards]
    return white if color == "w" else "".join(OPPOSITE[c] for c in white)


HELD_TOURNAMENT, HELD_EXPECTED = load_held()


@pytest.mark.parametrize(
    ("rules", "descriptor"),
    [(rules, descriptor) for rules in Rules for descriptor in HELD_EXPECTED[rules.value]],
    ids=lambda value: value.value if isinstance(value, Rules) else value,
)
def test_c07_8_1_13_2_14_1_held_team_exercises_34_to_41(rules: Rules, descriptor: str) -> None:
    """C.07 8.1 (Buchholz on MP or GP), 13.2 (EMMSB EGMSB EMGSB EGGSB), 14.1 and 14.1.2 (Cut-1), 16.4 and 16.5 (a
    dummy on the team's own score for its bye, zero-point bye and forfeit, cut first): Held's published answers, and
    under the 2026 caps the reference implementation's."""
    expected = HELD_EXPECTED[rules.value][descriptor]
    label = parse_team_tiebreaks(descriptor)[0].label
    table = team_standings(HELD_TOURNAMENT, descriptor, rules)
    got = values(table, label)
    assert {team: got[int(team)] for team in expected} == {team: Fraction(value) for team, value in expected.items()}


def test_c07_13_3_1_held_exercise_45_extended_direct_encounter_orders_the_leaders() -> None:
    """C.07 13.3.1 and 6.2 (exercise 45): teams 1–5 have 4 MP each against one another; game points put 4 first and
    5 last; among 1, 2, 3 still tied the secondary score is applied again: 2 (5.5), 1 (5), 3 (1.5)."""
    table = team_standings(HELD_TOURNAMENT, "EDE")
    leaders = [row.team.number for row in table if row.match_points == 10]
    assert leaders == [4, 2, 1, 3, 5]
    assert [row.tiebreaks["EDE"] for row in table[:5]] == [1, 2, 3, 4, 5]


def test_c07_6_3_held_exercises_42_to_44_incomplete_encounters() -> None:
    """C.07 6.3 (exercises 42–44): where the tied teams have not all met, a team is separated only if it is first
    whatever the missing results: 6 and 8 (7 MP) are split, 7, 9 and 13 (6 MP) are not; 11 and 14 (4 MP), who drew
    2–2, stay level on both scores."""
    got = ranks(team_standings(HELD_TOURNAMENT, "EDE"))
    assert got[6] < got[8]
    assert got[7] == got[9] == got[13]
    assert got[11] == got[14]


@pytest.mark.parametrize("descriptor", ["EDET", "EDEB", "EDEBT", "EDEC"])
def test_c07_13_3_2_held_exercises_46_to_48_board_stages_split_two_teams(descriptor: str) -> None:
    """C.07 13.3.2 (exercises 46–48): 11 and 14 drew 2–2 (boards won, drawn, drawn, lost by 11); the top-board
    (T), bottom-board elimination (B) and board-count (C, lower is better, 12.1) steps all put 11 first."""
    got = ranks(team_standings(HELD_TOURNAMENT, descriptor))
    assert got[11] < got[14]
    assert got[7] == got[9] == got[13]  # three teams: the board steps are for exactly two (13.3.2)


# --- Scoring and building (26.2, 28) ---------------------------------------------------------------------------------


def test_28_1_28_2_match_and_game_points_with_byes_and_forfeits() -> None:
    """28.1/28.2: a match is won on game points; 28.3: a match with no board played is a forfeit; team byes score
    as TRF-26 has them (PAB a drawn match by default, FPB won, HPB drawn, ZPB nothing)."""
    tournament = make(
        [[(1, 2, "1="), (3, 4, "1-")], [(1, 3, "=="), (2, 4, "--|--")]],
        teams=5,
        byes={(1, 5): K.PAB, (2, 5): K.FPB},
    )
    results = {no: [scored(result) for result in row] for no, row in match_results(tournament).items()}
    assert results[1] == [(K.WIN, Q(2), Q(3, 2)), (K.DRAW, Q(1), Q(1))]
    assert results[3] == [(K.DRAW, Q(1), Q(1)), (K.DRAW, Q(1), Q(1))]  # round 1: one board played, so played
    assert results[2][1] == results[4][1] == (K.FORFEIT_LOSS, Q(0), Q(0))  # a double forfeit
    assert results[5] == [(K.PAB, Q(1), Q(1)), (K.FPB, Q(2), Q(2))]


def test_28_2_other_scales_and_a_forfeited_match() -> None:
    """28.2: other scales (here 3 / 1 / 0 for matches); a match forfeited on every board is a forfeit win for the
    other team (28.3, C.07 Art. 16)."""
    base = make([[(1, 2, "++")]], teams=2)
    tournament = TeamTournament(base.name, base.teams, 1, 2, scoring=TeamScoring(match=Scoring(Q(3), Q(1), Q(0))))
    results = match_results(tournament)
    assert scored(results[1][0]) == (K.FORFEIT_WIN, Q(3), Q(2))
    assert scored(results[2][0]) == (K.FORFEIT_LOSS, Q(0), Q(0))


def individual(rows: dict[int, list[tuple[int | None, str | None, ResultKind]]]) -> Tournament:
    entrants = tuple(
        Entrant(no, f"Player {no}", tuple(RoundEntry(opponent, color, kind) for opponent, color, kind in row))
        for no, row in rows.items()
    )
    return Tournament("individual games", entrants, max(len(row) for row in rows.values()))


TEAMS = [Team(1, "Alpha", (1, 2, 3)), Team(2, "Beta", (4, 5)), Team(3, "Gamma", (6, 7))]


def test_26_2_build_from_individual_games_fixed_boards_substitute_and_team_byes() -> None:
    """26.2: a team match is all the games between two teams' members in a round; boards follow the registration
    order of the members who played (26.2.1), a reserve takes a board when a member sits out (26.2.2); a round with
    no games is the team bye the members were given, otherwise a zero-point bye."""
    games = individual({
        1: [(4, "w", K.WIN), (6, "b", K.DRAW), (None, None, K.ZPB)],
        2: [(5, "b", K.DRAW), (None, None, K.ZPB), (None, None, K.ZPB)],
        3: [(None, None, K.ZPB), (7, "w", K.WIN), (None, None, K.ZPB)],
        4: [(1, "b", K.LOSS), (None, None, K.FPB), (6, "w", K.FORFEIT_WIN)],
        5: [(2, "w", K.DRAW), (None, None, K.FPB), (7, "b", K.DRAW)],
        6: [(None, None, K.PAB), (1, "w", K.DRAW), (4, "b", K.FORFEIT_LOSS)],
        7: [(None, None, K.PAB), (3, "b", K.LOSS), (5, "w", K.DRAW)],
    })  # fmt: skip
    tournament = build_team_tournament(games, TEAMS)
    alpha, beta, gamma = (tournament.team(no) for no in (1, 2, 3))
    assert tournament.boards == 2
    assert alpha.rounds[0] == TeamRound(2, "w", (Board(1, K.WIN, 1, 4), Board(2, K.DRAW, 2, 5)))
    assert alpha.rounds[1] == TeamRound(3, "b", (Board(1, K.DRAW, 1, 6), Board(2, K.WIN, 3, 7)))
    assert alpha.rounds[2] == TeamRound(bye=K.ZPB)
    assert beta.rounds[1] == TeamRound(bye=K.FPB) and gamma.rounds[0] == TeamRound(bye=K.PAB)
    assert beta.rounds[2].boards == (Board(1, K.FORFEIT_WIN, 4, 6), Board(2, K.DRAW, 5, 7))
    table = {row.team.number: (row.match_points, row.game_points) for row in team_standings(tournament, "MP")}
    assert table == {1: (Q(4), Q(3)), 2: (Q(0 + 2 + 2), H + 2 + Q(3, 2)), 3: (Q(1 + 0 + 0), 1 + H + H)}


def test_26_2_3_lineups_and_empty_boards() -> None:
    """26.2.3: a team that sets its own board order needs its lineup; an empty board is a forfeit (28.3), the
    opposing player's forfeit win with no opponent named."""
    games = individual({
        1: [(5, "w", K.WIN)], 2: [(4, "b", K.LOSS)], 3: [(None, None, K.ZPB)],
        4: [(2, "w", K.WIN)], 5: [(1, "b", K.LOSS)], 6: [(None, None, K.PAB)], 7: [(None, None, K.PAB)],
    })  # fmt: skip
    with pytest.raises(
        StandingsError, match=r"round 1, team 1 against team 2, board 1: player 1 met 5, not 4.*lineups"
    ):
        build_team_tournament(games, TEAMS)
    tournament = build_team_tournament(games, TEAMS, lineups={(1, 1): [2, 1]})
    assert tournament.team(1).rounds[0].boards == (Board(1, K.LOSS, 2, 4), Board(2, K.WIN, 1, 5))
    short = individual({
        1: [(4, "w", K.DRAW)], 2: [(None, None, K.ZPB)], 3: [(None, None, K.ZPB)],
        4: [(1, "b", K.DRAW)], 5: [(None, None, K.FORFEIT_WIN)], 6: [(None, None, K.PAB)], 7: [(None, None, K.PAB)],
    })  # fmt: skip
    tournament = build_team_tournament(short, TEAMS, lineups={(1, 1): [1, None]})
    assert tournament.team(1).rounds[0].boards == (Board(1, K.DRAW, 1, 4), Board(2, K.FORFEIT_LOSS, None, 5))
    assert match_results(tournament)[2][0].match_points == 2  # 1½–½, one board played: a match won


def test_26_2_build_a_forfeited_match_and_bad_teams() -> None:
    """A match not played at all (TRF-26 record 330) is a forfeit on every board; a player in two teams, or a team
    with games against two teams in one round, is an error."""
    games = individual({
        1: [(None, None, K.FORFEIT_LOSS)], 2: [(None, None, K.FORFEIT_LOSS)], 3: [(None, None, K.ZPB)],
        4: [(None, None, K.FORFEIT_WIN)], 5: [(None, None, K.FORFEIT_WIN)], 6: [(7, "w", K.WIN)],
        7: [(6, "b", K.LOSS)],
    })  # fmt: skip
    forfeits = {(1, 1): (2, K.FORFEIT_LOSS), (1, 2): (1, K.FORFEIT_WIN)}
    with pytest.raises(StandingsError, match=r"round 1: player 6 \(team 3\) met player 7, who is not in another team"):
        build_team_tournament(games, TEAMS, boards=2, forfeited_matches=forfeits)
    games = individual({no: [(None, None, K.FORFEIT_WIN if no in (4, 5) else K.FORFEIT_LOSS)] for no in range(1, 8)})
    tournament = build_team_tournament(games, TEAMS, boards=2, forfeited_matches=forfeits)
    assert tournament.team(2).rounds[0].boards == (Board(1, K.FORFEIT_WIN, 4), Board(2, K.FORFEIT_WIN, 5))
    assert tournament.team(1).rounds[0].boards == (Board(1, K.FORFEIT_LOSS, None, 4), Board(2, K.FORFEIT_LOSS, None, 5))
    with pytest.raises(StandingsError, match="player 2 is in team 1 and in team 2"):
        build_team_tournament(games, [Team(1, "A", (1, 2)), Team(2, "B", (2, 3))])
    three = individual({
        1: [(4, "w", K.WIN)], 2: [(6, "b", K.DRAW)], 3: [(None, None, K.ZPB)],
        4: [(1, "b", K.LOSS)], 5: [(None, None, K.ZPB)], 6: [(2, "w", K.DRAW)], 7: [(None, None, K.ZPB)],
    })  # fmt: skip
    with pytest.raises(StandingsError, match="team 1 has games against teams 2 and 3; a team plays one match a round"):
        build_team_tournament(three, TEAMS)


# --- Team tie-breaks (C.07 Arts 12, 13, 14, 16) --------------------------------------------------------------------

# Five teams, two boards, two rounds: 1 beats 2 and 5; 3 beats 4 and draws 2; 5 has a pairing-allocated bye, 4 a
# zero-point bye in the last round (it withdrew).
SWISS = make(
    [[(1, 2, "11"), (3, 4, "1=")], [(5, 1, "0="), (2, 3, "==")]],
    teams=5,
    byes={(1, 5): K.PAB, (2, 4): K.ZPB},
)


def test_c07_8_1_16_3_16_4_team_buchholz_with_byes() -> None:
    """C.07 8.1 on match points; 16.4: a team's own bye counts as a dummy opponent on its own score; 16.3: a
    trailing zero-point bye (a withdrawal) counts as a drawn match in the opponents' Buchholz."""
    table = team_standings(SWISS, "BH:MP,BH:GP")
    # MP: 1: 4, 2: 1, 3: 3, 4: 0 (adjusted 1), 5: 1.
    assert values(table, "BH:MP") == {1: 1 + 1, 2: 4 + 3, 3: 1 + 1, 4: 3 + 0, 5: 1 + 4}
    # GP: 1: 3.5, 2: 1, 3: 2.5, 4: ½ (adjusted ½ + 1), 5: 1 + ½.
    assert values(table, "BH:GP") == {1: 1 + Q(3, 2), 2: Q(7, 2) + Q(5, 2), 3: Q(3, 2) + 1, 4: Q(5, 2) + H,
                                     5: Q(3, 2) + Q(7, 2)}  # fmt: skip


def test_c07_16_4_2026_caps_the_dummy() -> None:
    """C.07 16.4 (2026): the dummy for an unplayed round is at most a draw in every round (16.4.2) and, for a
    forfeit, at most the scheduled opponent's score (16.4.1)."""
    tournament = make([[(1, 2, "11")], [(1, 3, "++")], [(1, 2, "11")]], teams=3, byes={(1, 3): K.FPB})
    # Team 1: MP 6; round 2 is a forfeit win against 3, whose score counts as 3 (an FPB, the forfeit, then a
    # trailing zero-point bye counted as a draw, 16.3).
    assert values(team_standings(tournament, "BH:MP"), "BH:MP")[1] == 0 + 6 + 0
    assert values(team_standings(tournament, "BH:MP", Rules.FIDE_2026), "BH:MP")[1] == 0 + 3 + 0
    assert values(team_standings(tournament, "BH:MP/P"), "BH:MP/P")[1] == 0 + 3 + 0  # /P: the opponent's score


def test_c07_16_5_forfeited_match_is_cut_first_and_p_counts_it_as_played() -> None:
    """C.07 16.5: a match lost by forfeit is a voluntary unplayed round (16.1), cut before the least significant
    value; with /P it counts as played against the scheduled opponent."""
    tournament = make(
        [[(1, 2, "11"), (3, 4, "11")], [(1, 3, "--|++"), (2, 4, "1=")], [(1, 4, "11"), (2, 3, "==")]],
        teams=4,
    )
    # MP: 1: 4, 2: 3, 3: 5, 4: 0.  Team 1 met 2 (3), forfeited to 3 (a dummy on its own 4), met 4 (0).
    table = team_standings(tournament, "BH:MP,BH:MP/C1,BH:MP/P,BH:MP/C1/P")
    assert values(table, "BH:MP")[1] == 3 + 4 + 0
    assert values(table, "BH:MP/C1")[1] == 3 + 0  # the forfeit goes, not the 0
    assert values(table, "BH:MP/P")[1] == 3 + 5 + 0
    assert values(table, "BH:MP/C1/P")[1] == 3 + 5


def test_c07_13_1_mpvgp_and_game_points_as_primary() -> None:
    """C.07 13.1: MPvGP is the score that is not the primary one: game points after match points, match points
    after game points."""
    tournament = make([[(1, 2, "1="), (3, 4, "10")], [(1, 3, "0="), (2, 4, "11")]], teams=4)
    by_mp = team_standings(tournament, "MPvGP")
    assert values(by_mp, "MPvGP") == {1: 2, 2: Fraction(5, 2), 3: Fraction(5, 2), 4: 1}
    by_gp = team_standings(tournament, "GP,MPvGP")
    assert list(by_gp[0].tiebreaks) == ["GP", "MPvGP"]
    assert values(by_gp, "MPvGP") == {1: 2, 2: 2, 3: 3, 4: 1}
    assert ranks(by_gp) == {3: 1, 2: 2, 1: 3, 4: 4}


def test_c07_12_board_count_top_board_and_bottom_board_elimination() -> None:
    """C.07 12.1 BC: Σ board number × game points on that board, lower is better; 12.2 TBR: board 1's points, then
    board 2's …; 12.3 BBE: all boards but the bottom one, then all but the bottom two …"""
    # Three boards; teams 1 and 2 both beat team 3 and 4 by 2–1, on different boards.
    tournament = make([[(1, 3, "110"), (2, 4, "011")], [(1, 4, "101"), (2, 3, "101")]], teams=4, boards=3)
    table = team_standings(tournament, "BC")
    assert values(table, "BC")[1] == 1 * 2 + 2 * 1 + 3 * 1 and values(table, "BC")[2] == 1 * 1 + 2 * 1 + 3 * 2
    assert ranks(table)[1] < ranks(table)[2]
    assert values(team_standings(tournament, "TBR"), "TBR")[1] == (2, 1, 1)
    assert ranks(team_standings(tournament, "TBR"))[1] < ranks(team_standings(tournament, "TBR"))[2]
    assert values(team_standings(tournament, "BBE"), "BBE")[2] == (2, 1)
    # 12 intro: a pairing-allocated bye counts as a win on every board.
    bye = make([[(1, 2, "1=")]], teams=3, byes={(1, 3): K.PAB})
    assert values(team_standings(bye, "TBR"), "TBR")[3] == (1, 1)


def test_c07_6_13_3_direct_encounter_complete_and_board_steps() -> None:
    """C.07 6.2 and 13.3: teams tied on match points who all met are ranked on their mutual matches; teams level on
    both scores of those matches stay tied under EDE, and two of them are split by the top boards of their match
    (EDET, 13.3.2)."""
    ranked = make(
        [
            [(1, 2, "11"), (3, 4, "11")],
            [(1, 3, "11"), (2, 5, "11")],
            [(2, 3, "11"), (4, 1, "11")],
            [(3, 5, "11")],
        ],
        teams=5,
    )
    # 1, 2, 3: 4 MP each; mutually 1 beat 2 and 3, 2 beat 3.
    table = team_standings(ranked, "EDE")
    assert [row.team.number for row in table] == [1, 2, 3, 4, 5]
    assert values(table, "EDE") == {1: 1, 2: 2, 3: 3, 4: None, 5: None}
    level = make([[(1, 2, "1="), (3, 4, "11")], [(2, 3, "1="), (1, 4, "11")], [(3, 1, "1="), (2, 4, "11")]], teams=4)
    # 1, 2, 3: 4 MP each; each won one mutual match 1½–½, so they are level on both scores.
    assert ranks(team_standings(level, "EDE")) == {1: 1, 2: 1, 3: 1, 4: 4}
    pair = make([[(1, 2, "10"), (3, 4, "11")], [(1, 4, "11"), (2, 3, "11")]], teams=4)
    assert ranks(team_standings(pair, "EDE"))[1] == ranks(team_standings(pair, "EDE"))[2]
    assert ranks(team_standings(pair, "EDET")) == {1: 1, 2: 2, 3: 3, 4: 4}
    assert values(team_standings(pair, "EDET"), "EDET") == {1: 1, 2: 2, 3: None, 4: None}


# --- The rules' own orders (29.1.2, 29.2.2) ---------------------------------------------------------------------------


def test_29_1_2_round_robin_order() -> None:
    """29.1.2: match points, game points (A), team Berger score (B, here EMGSB), direct encounter (C), board by board
    from board 1 (D), shared places (E)."""
    assert [tb.label for tb in parse_team_tiebreaks(ROUND_ROBIN_TIEBREAKS)] == ["MP", "GP", "EMGSB", "EDE", "TBR"]
    tournament = make(
        [[(1, 2, "1="), (3, 4, "==")], [(1, 3, "=0"), (2, 4, "11")], [(1, 4, "11"), (2, 3, "1=")]],
        teams=4,
        system=System.ROUND_ROBIN,
    )
    table = team_standings(tournament)
    assert list(table[0].tiebreaks) == ["MP", "GP", "EMGSB", "EDE", "TBR"]
    # 1 and 2: 4 MP and 4 GP each; EMGSB 4×1½ + 3×½ + 1×2 = 9½ against 4×½ + 1×2 + 3×1½ = 8½.
    assert values(table, "EMGSB")[1] == Fraction(19, 2) and values(table, "EMGSB")[2] == Fraction(17, 2)
    assert ranks(table) == {1: 1, 2: 2, 3: 3, 4: 4}


def test_29_1_2_c07_15_2_round_robin_counts_forfeits_as_played() -> None:
    """C.07 15.2 (pre-determined pairings): a forfeited match counts with the opponent's score, and there is no
    dummy opponent."""
    tournament = make([[(1, 2, "++"), (3, 4, "==")], [(1, 3, "1=")]], teams=4, system=System.ROUND_ROBIN)
    # MP: 1: 4, 2: 0 but 1 as an opponent (it took part in no round: its trailing bye counts as a draw, 16.3), 3: 1,
    # 4: 1.  Team 1: the forfeit against 2 counts with 2's score: 1 × 2 + 1 × 1½.
    assert values(team_standings(tournament, "EMGSB"), "EMGSB")[1] == 1 * 2 + 1 * Q(3, 2)
    assert values(team_standings(tournament, "EMGSB", system=System.SWISS), "EMGSB")[1] == 4 * 2 + 1 * Q(3, 2)
    # Team 4's bye in round 2 adds nothing, where a Swiss counts a dummy on its own score (16.4).
    assert values(team_standings(tournament, "BH:MP"), "BH:MP")[4] == 1
    assert values(team_standings(tournament, "BH:MP", system=System.SWISS), "BH:MP")[4] == 1 + 1


def test_29_2_2_swiss_order() -> None:
    """29.2.2: match points, opponents' match points (A, Buchholz), their median (B), game points (C), board by board
    (D), shared places (E)."""
    assert [tb.label for tb in parse_team_tiebreaks(SWISS_TIEBREAKS)] == ["MP", "BH:MP", "BH:MP/M1", "GP", "TBR"]
    table = team_standings(SWISS)
    assert list(table[0].tiebreaks) == ["MP", "BH:MP", "BH:MP/M1", "GP", "TBR"]
    # MP: 1: 4, 3: 3, then 2, 5 on 1 (BH 7 and 5), 4 on 0.
    assert [row.team.number for row in table] == [1, 3, 2, 5, 4]


def test_c07_4_2_still_tied_teams_share_the_place() -> None:
    """29.1.2 E / 29.2.2 E: teams tied on every criterion share the place."""
    tournament = make([[(1, 2, "=="), (3, 4, "==")]], teams=4)
    assert ranks(team_standings(tournament, "GP,TBR")) == {1: 1, 2: 1, 3: 1, 4: 1}


# --- Withdrawals (24.4.4) --------------------------------------------------------------------------------------------


def test_24_4_4_withdrawn_team_results_stand_and_the_rest_are_forfeits() -> None:
    """24.4.4: the results played stand; every later match is a forfeit, won on every board by the opponent."""
    tournament = make(
        [[(1, 2, "1="), (3, 4, "==")], [(1, 3, "=0")], [(2, 3, "1=")]],
        teams=4,
        system=System.ROUND_ROBIN,
    )
    after = withdraw_team(tournament, 4, after_round=1, schedule={2: 2, 3: 1})
    results = match_results(after)
    assert [r.opponent for r in results[4]] == [3, 2, 1]
    assert [scored(r) for r in results[4]] == [
        (K.DRAW, Q(1), Q(1)),
        (K.FORFEIT_LOSS, Q(0), Q(0)),
        (K.FORFEIT_LOSS, Q(0), Q(0)),
    ]
    assert scored(results[2][1]) == scored(results[1][2]) == (K.FORFEIT_WIN, Q(2), Q(2))
    assert results[1][:2] == match_results(tournament)[1][:2]


def test_24_4_4_swiss_withdrawal_and_bad_schedules() -> None:
    """24.4.4 with 24.4.3: in a Swiss, a match already paired becomes a forfeit, later rounds are not paired."""
    tournament = make([[(1, 2, "1="), (3, 4, "==")], [(1, 3, "=0"), (2, 4, "00")], [(1, 2, "11")]], teams=4)
    after = withdraw_team(tournament, 4, after_round=1)
    results = match_results(after)
    assert [r.kind for r in results[4]] == [K.DRAW, K.FORFEIT_LOSS, K.ZPB]
    assert results[2][1].kind is K.FORFEIT_WIN
    with pytest.raises(StandingsError, match="round 2: team 4 met team 2, not 1"):
        withdraw_team(tournament, 4, after_round=1, schedule={2: 1})
    with pytest.raises(StandingsError, match="round 3: team 1 played team 2, not 4"):
        withdraw_team(tournament, 4, after_round=1, schedule={3: 1})
    with pytest.raises(StandingsError, match="no team with number 9"):
        withdraw_team(tournament, 9, after_round=1)
    with pytest.raises(StandingsError, match="after round 5"):
        withdraw_team(tournament, 4, after_round=5)


# --- The youth team score (regulations, doc 003 VIII(6)2) -----------------------------------------------------------


def section(players: dict[int, tuple[str, str, list[ResultKind]]]) -> Tournament:
    """An individual section where each player's points come from byes (F 1, H ½, Z 0)."""
    entrants = tuple(
        Entrant(no, f"Player {no}", tuple(RoundEntry(None, None, kind) for kind in kinds), sex=sex, team=unit)
        for no, (unit, sex, kinds) in players.items()
    )
    return Tournament("section", entrants, 2)


F, HB, Z = K.FPB, K.HPB, K.ZPB
MALE = section({1: ("A", "m", [F, F]), 2: ("B", "m", [F, HB]), 3: ("C", "m", [HB, HB]), 4: ("A", "m", [Z, Z]),
                5: ("D", "m", [HB, HB]), 6: ("", "m", [F, Z])})  # fmt: skip
FEMALE = section({11: ("B", "w", [F, F]), 12: ("A", "f", [F, HB]), 13: ("C", "w", [F, HB]), 14: ("D", "w", [F, HB])})


def test_regulations_youth_team_score_best_male_plus_best_female() -> None:
    """Doc 003 VIII(6)2: a unit's points are its best male and best female player's; ties go to the lower sum of
    their places, then the better place of the male player; units still tied share."""
    table = youth_team_standings([MALE, FEMALE])
    rows = {row.unit: row for row in table}
    # Male places: 1 (A), 2 (B), 3 shared by C and D (1 each) and by the unattached player 6; A's second male (0) is
    # not counted.  Female places: 1 (B), 2 shared by A, C and D (1½ each).
    assert {unit: (row.points, row.place_sum, row.male.entrant.start_no) for unit, row in rows.items()} == {
        "A": (Fraction(7, 2), 1 + 2, 1), "B": (Fraction(7, 2), 2 + 1, 2),
        "C": (Fraction(5, 2), 3 + 2, 3), "D": (Fraction(5, 2), 3 + 2, 5),
    }  # fmt: skip
    assert [(row.rank, row.unit) for row in table] == [(1, "A"), (2, "B"), (3, "C"), (3, "D")]


def test_regulations_youth_team_score_in_one_mixed_section_and_errors() -> None:
    """Doc 003 VI(2): a team is one male and one female player; a unit without one, or a player whose sex is not
    'm', 'w' or 'f', is an error."""
    mixed = section({1: ("A", "m", [F, F]), 2: ("A", "w", [F, Z]), 3: ("B", "m", [HB, Z]), 4: ("B", "f", [HB, HB])})
    table = youth_team_standings(mixed)
    assert [(row.rank, row.unit, row.points, row.place_sum) for row in table] == [
        (1, "A", Fraction(3), 1 + 2), (2, "B", Fraction(3, 2), 4 + 2)
    ]  # fmt: skip
    with pytest.raises(StandingsError, match="unit 'A' has no female player"):
        youth_team_standings(MALE)
    odd = section({1: ("A", "x", [F, F])})
    with pytest.raises(StandingsError, match=r"player 1 .* has sex 'x': expected 'm', 'w' or 'f'"):
        youth_team_standings(odd)


# --- Bad input -------------------------------------------------------------------------------------------------------


def test_team_tiebreak_descriptors_and_their_errors() -> None:
    """TRF-26 descriptors: names, ':MP'/':GP' for Buchholz, /C /M /P where C.07 14 allows them."""
    assert parse_team_tiebreaks("EDET/P, EMGSB/C1/P ,BH:MP/C1/P,MPvGP,BH:GP/M1,PTS") == [
        TeamTieBreak("EDET", forfeits_played=True),
        TeamTieBreak("EMGSB", cut=1, forfeits_played=True),
        TeamTieBreak("BH", "MP", 1, 0, True),
        TeamTieBreak("MPVGP"),
        TeamTieBreak("BH", "GP", 1, 1),
        TeamTieBreak("MP"),
    ]
    assert TeamTieBreak("BH", "GP", 1, 1).label == "BH:GP/M1"
    for bad, message in [
        ("SSSC", "unknown team tie-break 'SSSC'"),
        ("EDE/C1", "modifier /C1 does not apply to EDE"),
        ("GP/P", "modifier /P does not apply to GP"),
        ("EMGSB:MP", "':MP' and ':GP' choose the score of a Buchholz only"),
        ("BH,,GP", "'' is not a descriptor"),
        ("BH/C3", "modifier /C3 does not apply to BH"),
    ]:
        with pytest.raises(StandingsError, match=message):
            parse_team_tiebreaks(bad)


def test_inconsistent_hand_built_tournament_is_rejected() -> None:
    """Both sides of a match must agree: the opponent, and each board's result."""
    one_sided = TeamTournament(
        "bad", (Team(1, "A", rounds=(TeamRound(2, "w", _boards("1=")),)), Team(2, "B", rounds=(TeamRound(bye=K.PAB),))),
        1, 2,
    )  # fmt: skip
    with pytest.raises(StandingsError, match="team 1, round 1: team 2 does not show the match against 1"):
        team_standings(one_sided)
    mismatch = TeamTournament(
        "bad",
        (Team(1, "A", rounds=(TeamRound(2, "w", _boards("1=")),)),
         Team(2, "B", rounds=(TeamRound(1, "b", _boards("1=")),))),
        1, 2,
    )  # fmt: skip
    with pytest.raises(StandingsError, match="team 1, round 1, board 1: '1' does not match team 2's '1'"):
        team_standings(mismatch)
    with pytest.raises(StandingsError, match=r"boards \[1, 2, 3\] are not distinct boards 1–2"):
        match_results(make([[(1, 2, "1=0")]], teams=2))
    with pytest.raises(StandingsError, match="no team with number 3"):
        make([[(1, 2, "11")]], teams=2).team(3)


def team_line(no: int, name: str, mp: str, gp: str, rank: int, members: list[int]) -> str:
    return f"310 {no:>3} {name:<32} {name[:3].upper():<5} {'':>6} {mp:>6} {gp:>6} {rank:>3}  " + " ".join(
        f"{m:>4}" for m in members
    )


def round_line(no: int, blocks: list[str]) -> str:
    return f"801 {no:>2} {'T' + str(no):<5}{'':>5}{'':>5}" + "".join(blocks)


TINY = [
    "012 Tiny team event",
    "142 2",
    "352 WB",
    "362 TW 3     TD 1     TL 0",
    team_line(1, "Alpha", "6", "3.0", 1, [1, 2, 3]),
    team_line(2, "Beta", "0", "1.0", 2, [4, 5]),
    round_line(1, ["   2 w 1= 12", "   2 b += 32"]),
    round_line(2, ["   1 b 0= 12", "   1 w -= 02"]),
]


def test_trf26_team_records_read_from_801_alone() -> None:
    """Records 310 and 801 (no player records): match scoring from header 362, lineups from the 310 members."""
    trf = read_team_trf("\n".join(TINY))
    alpha = trf.tournament.team(1)
    assert alpha.members == (1, 2, 3) and alpha.declared_rank == 1 and alpha.declared_match_points == 6
    assert alpha.rounds[1] == TeamRound(2, "b", (Board(1, K.FORFEIT_WIN, 3, None), Board(2, K.DRAW, 2, 5)))
    table = team_standings(trf.tournament, "GP")
    assert [(row.team.number, row.match_points, row.game_points) for row in table] == [(1, Q(6), Q(3)), (2, Q(0), Q(1))]


@pytest.mark.parametrize(
    ("line_no", "replacement", "message"),
    [
        (5, team_line(1, "Alpha", "6", "3.0", 1, [1, 2, 3]).replace("310   1", "310  1x"), "line 5: team number '1x'"),
        (6, team_line(2, "", "0", "1.0", 2, [4, 5]), "line 6: team 2 has no name"),
        (6, team_line(2, "Beta", "x", "1.0", 2, [4, 5]), "line 6: match points 'x' is not a score"),
        (6, team_line(2, "Beta", "0", "1.0", 2, [4, 1]), "line 6: player 1 is also in team 1"),
        (7, round_line(1, ["   2 w 1? 12"]), r"line 7: round 1, board 2: unknown result code '\?'"),
        (7, round_line(1, ["   3 w 1= 12"]), "line 7: round 1: team 1 meets team 3, whose 801 record"),
        (7, round_line(1, ["   2 x 1= 12"]), "line 7: round 1: colour 'x' is not w or b"),
        (7, round_line(1, ["   2 w 1= 19"]), "line 7: round 1, board 2: team 1 has no member '9'"),
        (
            7,
            round_line(1, ["   2 w 1= 10"]),
            r"line 7: round 1, board 2: a played result '=' on a board with no player",
        ),
        (7, round_line(1, ["   2 b 1= 12"]), "line 7: round 1: teams 1 and 2 both have colour 'b'"),
        (7, round_line(1, ["       XX   "]), "line 7: round 1: 'XX' is not a team bye"),
        (8, round_line(9, ["   1 b 0= 12"]), "line 8: team 9 has no team record"),
    ],
)
def test_trf26_bad_team_lines_name_their_line(line_no: int, replacement: str, message: str) -> None:
    """A bad 310 or 801 line raises TrfError naming its line number."""
    lines = list(TINY)
    lines[line_no - 1] = replacement
    with pytest.raises(TrfError, match=message):
        read_team_trf("\n".join(lines))


def test_trf26_bad_records_with_player_records_name_their_line() -> None:
    """Records 300, 330 and 240 are checked too, each error naming its line; a file without 310 records is not a
    team file."""
    text = GRANDMOMMY.read_text(encoding="utf-8").splitlines()
    line_no = next(i for i, line in enumerate(text) if line.startswith("300   1  16"))
    for replacement, message in [
        ("300   1  16   4  242  246  243    1", f"line {line_no + 1}: player 1 is not a member of team 16"),
        ("300  99  16   4  242  246  243  244", f"line {line_no + 1}: round 99 is not one of the event's rounds 1–14"),
        ("300   1  77   4  242  246  243  244", f"line {line_no + 1}: team 77 has no team record"),
    ]:
        with pytest.raises(TrfError, match=message):
            read_team_trf("\n".join([*text[:line_no], replacement, *text[line_no + 1 :]]))
    forfeit = next(i for i, line in enumerate(text) if line.startswith("330"))
    with pytest.raises(TrfError, match=f"line {forfeit + 1}: forfeit type '\\+\\+' is not"):
        read_team_trf("\n".join([*text[:forfeit], "330 ++   4  23  33", *text[forfeit + 1 :]]))
    bye = next(i for i, line in enumerate(text) if line.startswith("240"))
    with pytest.raises(TrfError, match=f"line {bye + 1}: bye type 'Q' is not F, H or Z"):
        read_team_trf("\n".join([*text[:bye], "240 Q   1    3", *text[bye + 1 :]]))
    with pytest.raises(TrfError, match=r"no team records \(310\)"):
        read_team_trf("012 Not a team event\n")


def test_trf26_team_file_with_player_records_and_no_801() -> None:
    """TRF-26: with player records (001) the matches are built from them; 310 gives the teams, 240 a team bye."""
    games = individual({
        1: [(4, "w", K.WIN), (6, "b", K.DRAW), (None, None, K.ZPB)],
        2: [(5, "b", K.DRAW), (None, None, K.ZPB), (None, None, K.ZPB)],
        3: [(None, None, K.ZPB), (7, "w", K.WIN), (None, None, K.ZPB)],
        4: [(1, "b", K.LOSS), (None, None, K.FPB), (6, "w", K.WIN)],
        5: [(2, "w", K.DRAW), (None, None, K.FPB), (7, "b", K.DRAW)],
        6: [(None, None, K.PAB), (1, "w", K.DRAW), (4, "b", K.LOSS)],
        7: [(None, None, K.PAB), (3, "b", K.LOSS), (5, "w", K.DRAW)],
    })  # fmt: skip
    text = write_trf(games) + "\n".join(
        [
            team_line(1, "Alpha", "5", "4.0", 1, [1, 2, 3]),
            team_line(2, "Beta", "4", "4.0", 2, [4, 5]),
            team_line(3, "Gamma", "1", "2.0", 3, [6, 7]),
            "240 H   3    1",
        ]
    )
    trf = read_team_trf(text)
    assert trf.tournament.boards == 2 and trf.discrepancies == () and trf.round_lines == {}
    assert trf.tournament.team(1).rounds[2] == TeamRound(bye=K.HPB)
    table = team_standings(trf.tournament, "MP")
    assert {row.team.number: (row.match_points, row.game_points) for row in table} == {
        team.number: (team.declared_match_points, team.declared_game_points) for team in trf.tournament.teams
    }
