"""A second opinion: PyPI ``tiebreak-core`` (FIDE C.07, 2024 and 2026 rulesets) agrees on Buchholz and
Sonneborn-Berger, with their cuts and medians, over randomly generated Swiss and round-robin tournaments."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st
from tiebreak_core import fide2024, fide2026
from tiebreak_core.models import (
    FORFEIT_LOSS,
    FORFEIT_WIN,
    PAIRING_BYE,
    PLAYED,
    REQUESTED_BYE,
    GameRecord,
    PlayerTiebreakData,
)

from engine.standings import Entrant, ResultKind, RoundEntry, Rules, Scoring, System, Tournament, points_of, standings

WIN_LOSS = {
    "1": (ResultKind.WIN, ResultKind.LOSS),
    "=": (ResultKind.DRAW, ResultKind.DRAW),
    "0": (ResultKind.LOSS, ResultKind.WIN),
    "+": (ResultKind.FORFEIT_WIN, ResultKind.FORFEIT_LOSS),
    "-": (ResultKind.FORFEIT_LOSS, ResultKind.FORFEIT_WIN),
}


@st.composite
def swiss_tournaments(draw: st.DrawFn) -> Tournament:
    """Random pairings (no repeats needed for the arithmetic), byes of every kind, forfeits and withdrawals."""
    players = draw(st.integers(4, 24))
    rounds = draw(st.integers(1, 9))
    rows: dict[int, list[RoundEntry]] = {p: [] for p in range(1, players + 1)}
    withdrawn: dict[int, int] = {}
    for p in range(1, players + 1):
        if draw(st.integers(0, 9)) == 0:
            withdrawn[p] = draw(st.integers(1, rounds))
    for round_no in range(1, rounds + 1):
        available = [p for p in rows if withdrawn.get(p, rounds + 1) > round_no]
        order = draw(st.permutations(available))
        requested = [p for p in order if draw(st.integers(0, 12)) == 0]
        for p, row in rows.items():
            if p not in available:
                row.append(RoundEntry(None, None, ResultKind.ZPB))
        for p in requested:
            rows[p].append(RoundEntry(None, None, draw(st.sampled_from([ResultKind.HPB, ResultKind.ZPB]))))
        pairable = [p for p in order if p not in requested]
        if len(pairable) % 2:
            rows[pairable.pop()].append(RoundEntry(None, None, ResultKind.PAB))
        for a, b in zip(pairable[::2], pairable[1::2], strict=True):
            result = draw(st.sampled_from(["1", "1", "=", "0", "0", "+", "-"]))
            first, second = WIN_LOSS[result]
            rows[a].append(RoundEntry(b, "w", first))
            rows[b].append(RoundEntry(a, "b", second))
    entrants = tuple(Entrant(p, f"P{p}", tuple(rows[p])) for p in rows)
    return Tournament("random Swiss", entrants, rounds, System.SWISS)


@st.composite
def round_robins(draw: st.DrawFn) -> Tournament:
    """A complete single round robin (circle method), every game played."""
    players = draw(st.integers(3, 14))
    slots = list(range(1, players + 1)) + ([0] if players % 2 else [])
    rows: dict[int, list[RoundEntry]] = {p: [] for p in range(1, players + 1)}
    for _ in range(len(slots) - 1):
        half = len(slots) // 2
        for a, b in zip(slots[:half], reversed(slots[half:]), strict=True):
            if 0 in (a, b):
                rows[a or b].append(RoundEntry(None, None, ResultKind.ANNULLED))
                continue
            first, second = WIN_LOSS[draw(st.sampled_from(["1", "=", "0"]))]
            rows[a].append(RoundEntry(b, "w", first))
            rows[b].append(RoundEntry(a, "b", second))
        slots = [slots[0], slots[-1], *slots[1:-1]]
    entrants = tuple(Entrant(p, f"P{p}", tuple(rows[p])) for p in rows)
    return Tournament("random round robin", entrants, len(slots) - 1, System.ROUND_ROBIN)


def as_tiebreak_core(tournament: Tournament) -> dict[int, PlayerTiebreakData]:
    points = points_of(tournament)
    scoring = Scoring()
    players = {}
    for entrant in tournament.entrants:
        games = []
        for round_no in range(1, tournament.rounds + 1):
            entry = entrant.round(round_no)
            kind = entry.kind
            score = float(scoring.points(kind))
            color = "white" if entry.color == "w" else "black"
            if kind is ResultKind.ANNULLED:
                continue
            if kind.played:
                games.append(GameRecord(entry.opponent or -1, 0, score, color, round_no, PLAYED))
            elif kind is ResultKind.FORFEIT_WIN:
                games.append(GameRecord(entry.opponent or -1, 0, score, color, round_no, FORFEIT_WIN))
            elif kind is ResultKind.FORFEIT_LOSS:
                games.append(GameRecord(entry.opponent or -1, 0, score, color, round_no, FORFEIT_LOSS))
            elif kind in (ResultKind.PAB, ResultKind.FPB):
                games.append(GameRecord(-1, 0, score, color, round_no, PAIRING_BYE))
            else:
                games.append(GameRecord(-1, 0, score, color, round_no, REQUESTED_BYE))
        players[entrant.start_no] = PlayerTiebreakData(entrant.start_no, 0, float(points[entrant.start_no]), games)
    return players


#: Our descriptor → tiebreak-core's calculator of the same name.
CALCULATORS = {
    "BH": "buchholz",
    "SB": "sonneborn_berger",
    "BH/C1": "buchholz_cut1",
    "BH/C2": "buchholz_cut2",
    "BH/M1": "median_buchholz",
    "BH/M2": "median_buchholz_2",
    "SB/C1": "sonneborn_berger_cut1",
}


def agree(tournament: Tournament, labels: tuple[str, ...] = tuple(CALCULATORS)) -> None:
    theirs_data = as_tiebreak_core(tournament)
    for rules, module in ((Rules.FIDE_2024, fide2024), (Rules.FIDE_2026, fide2026)):
        ours = {s.entrant.start_no: s for s in standings(tournament, "PTS," + ",".join(labels), rules)}
        for no, data in theirs_data.items():
            for label in labels:
                expected = getattr(module, CALCULATORS[label])(data, theirs_data, tournament.rounds)
                got = ours[no].tiebreaks[label]
                assert got == Fraction(expected).limit_denominator(1000), (rules.value, label, no, got, expected)


@settings(max_examples=150, deadline=None)
@given(swiss_tournaments())
def test_buchholz_and_sonneborn_berger_agree_with_tiebreak_core_on_swiss_events(tournament: Tournament) -> None:
    agree(tournament)


@settings(max_examples=80, deadline=None)
@given(round_robins())
def test_buchholz_and_sonneborn_berger_agree_with_tiebreak_core_on_round_robins(tournament: Tournament) -> None:
    agree(tournament)
